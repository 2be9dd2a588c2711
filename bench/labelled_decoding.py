"""What decoding with labels costs against decoding the same grammar collapsed to X
(Ganitkevitch & Callison-Burch, draft; issue item "decoding with labels").

Paraphrases the first N of the tune set's single references R with two experiments'
paraphrasers, each with its own grammar and tuned weights: the labelled grammar decoded with
labelled chart cells (``samt.decoding: labelled``, config/samt-labelled.yaml) and the grammar
collapsed to X (config/samt-identity.yaml). Prints per paraphraser: grammar rules and source
sides, load seconds, inputs per second (one process, the n-best size of the config),
hyperedges per input (the chart's size), and the share of 1-bests equal to the input. Run from
the repository root after both experiments' reference_sparsity:

    python bench/labelled_decoding.py [--sentences 60] [--labelled samt-labelled]
        [--collapsed samt-identity]
"""

import argparse
import statistics
import time
from pathlib import Path

import yaml

from circle.core.layout import EVALSET_TABLE, Results
from circle.core.schemas import EVALSET
from circle.core.tables import read_table
from circle.corpus.references import single_references
from circle.decoder import Decoder, DecoderSettings, LanguageModel, load_grammar, read_weights
from circle.paraphrase.config import bias_name


def paraphraser(results: Results) -> tuple[Path, Path, Path, DecoderSettings]:
    """The grammar, LM and tuned weights of an experiment's paraphraser, and its settings."""
    config = yaml.safe_load(results.config.read_text(encoding="utf-8"))
    bias = bias_name(config["tuning"]["paraphraser_bias"])
    settings = DecoderSettings.from_config(config["decoder"])
    return (results.paraphrase_grammar(bias), results.lm(config["lm"]["decoding_order"]),
            results.paraphraser_weights(bias), settings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=60)
    parser.add_argument("--labelled", default="samt-labelled")
    parser.add_argument("--collapsed", default="samt-identity")
    args = parser.parse_args()
    print("| paraphraser | rules | source sides | load s | inputs/s | hyperedges/input "
          "| 1-best = input |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for experiment in (args.collapsed, args.labelled):
        results = Results.of(".", experiment)
        grammar_path, lm_path, weights_path, settings = paraphraser(results)
        tune = read_table(results.path(EVALSET_TABLE, evalset="tune"), EVALSET)
        inputs = single_references(tune)[:args.sentences]
        began = time.perf_counter()
        grammar = load_grammar(grammar_path)
        loaded = time.perf_counter() - began
        decoder = Decoder(grammar, LanguageModel(lm_path), read_weights(weights_path), settings)
        began = time.perf_counter()
        best = [decoder.decode(sentence)[0].text for sentence in inputs]
        rate = len(inputs) / (time.perf_counter() - began)
        edges = statistics.mean(decoder.forest(sentence).edges for sentence in inputs)
        same = sum(output == sentence for output, sentence in zip(best, inputs, strict=True))
        kind = "labelled" if grammar.labelled else "collapsed to X"
        print(f"| {experiment} ({kind}) | {len(grammar):,} | {grammar.num_sources:,} | "
              f"{loaded:.1f} | {rate:.1f} | {edges:,.0f} | {same}/{len(inputs)} |")


if __name__ == "__main__":
    main()
