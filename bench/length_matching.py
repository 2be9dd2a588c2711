"""Check BLEU at a common length (circle.experiments.length_matching) against real decodes.

The evaluation estimates each run's test BLEU at the references' mean length by re-ranking its
stored test n-best list with a shifted word-penalty weight. The decoder at the shifted weights
searches anew and may find hypotheses the list lacks; this decodes the test set with each named
run's weights, its word-penalty weight shifted by the evaluation's ``matched_shift``, and prints
the estimate beside the real decode (BLEU, length ratio), one row per run.

Usage: python bench/length_matching.py [--config config/config.yaml]
       [--runs 1H.rep0 4H.rep0 1H+1P.rep0] [--workers 2]
"""

import argparse

import yaml

from circle.core.layout import EVALSET_TABLE, EVALUATION_TABLE, FILTERED_GRAMMAR, Results
from circle.core.schemas import EVALSET, EVALUATION
from circle.core.tables import read_table
from circle.decoder import DecoderSettings, decode_corpus, load_grammar, read_weights
from circle.experiments.conditions import TuningRun
from circle.experiments.evaluate import corpus_bleu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--runs", nargs="+", default=["1H.rep0", "4H.rep0", "1H+1P.rep0"])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    with open(args.config, encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    results = Results.of(".", config["experiment"])
    lowercased = config.get("preprocess", {}).get("lowercase", True)
    decoder = DecoderSettings.from_config(config.get("decoder", {}))
    test = read_table(results.path(EVALSET_TABLE, evalset="test"), EVALSET)
    references = [list(refs) for refs in test["references"]]
    evaluation = read_table(results.path(EVALUATION_TABLE, run_set=""), EVALUATION)
    lm = results.lm(config.get("lm", {}).get("decoding_order", 3))
    grammar = load_grammar(results.path(FILTERED_GRAMMAR, evalset="test"))
    print("| run | shift | BLEU | estimate at common length | real decode at the shift | "
          "length (estimate) | length (real) |")
    print("|:---|---:|---:|---:|---:|---:|---:|")
    for name in args.runs:
        run = TuningRun.parse(name)
        row = evaluation[(evaluation["condition"] == run.condition.name)
                         & (evaluation["replicate"] == run.replicate)].iloc[0]
        weights = read_weights(results.weights(name))
        weights["word_penalty"] += float(row["matched_shift"])
        lists = decode_corpus(list(test["source"]), grammar, lm, weights, decoder, args.workers)
        real = corpus_bleu([hypotheses[0].text for hypotheses in lists], references, lowercased)
        print(f"| {name} | {row['matched_shift']:+.4f} | {row['bleu']:.2f} | "
              f"{row['matched_bleu']:.2f} | {real.value:.2f} | "
              f"{row['matched_length_ratio']:.3f} | {real.length_ratio:.3f} |")


if __name__ == "__main__":
    main()
