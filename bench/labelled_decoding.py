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

import yaml

from circle.core.schemas import EVALSET
from circle.core.tables import read_table
from circle.corpus.references import single_references
from circle.decoder import Decoder, DecoderSettings, LanguageModel, load_grammar, read_weights
from circle.paraphrase.config import bias_name


def paraphraser(experiment: str) -> tuple[str, str, str, DecoderSettings]:
    """The grammar, LM and tuned weights of an experiment's paraphraser, and its settings."""
    config = yaml.safe_load(open(f"results/{experiment}/config.yaml", encoding="utf-8"))
    name = "bias" + bias_name(config["tuning"]["paraphraser_bias"])
    settings = DecoderSettings.from_config(config["decoder"])
    return (f"results/{experiment}/paraphrase/{name}.parquet",
            f"results/{experiment}/lm/{config['lm']['decoding_order']}gram.binary",
            f"results/{experiment}/weights/paraphraser-{name}.txt", settings)


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
        grammar_path, lm_path, weights_path, settings = paraphraser(experiment)
        tune = read_table(f"results/{experiment}/sets/tune.parquet", EVALSET)
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
