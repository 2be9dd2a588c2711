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

from circle.core.schemas import EVALSET, EVALUATION
from circle.core.tables import read_table
from circle.decoder import DecoderSettings, decode_corpus, load_grammar, read_weights
from circle.experiments.evaluate import corpus_bleu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--runs", nargs="+", default=["1H.rep0", "4H.rep0", "1H+1P.rep0"])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    with open(args.config, encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    results = f"results/{config['experiment']}"
    lowercased = config.get("preprocess", {}).get("lowercase", True)
    decoder = DecoderSettings.from_config(config.get("decoder", {}))
    test = read_table(f"{results}/sets/test.parquet", EVALSET)
    references = [list(refs) for refs in test["references"]]
    evaluation = read_table(f"{results}/evaluation/results.parquet", EVALUATION)
    lm = f"{results}/lm/{config.get('lm', {}).get('decoding_order', 3)}gram.binary"
    grammar = load_grammar(f"{results}/grammar/filtered/test.parquet")
    print("| run | shift | BLEU | estimate at common length | real decode at the shift | "
          "length (estimate) | length (real) |")
    print("|:---|---:|---:|---:|---:|---:|---:|")
    for name in args.runs:
        condition, _, replicate = name.rpartition(".rep")
        row = evaluation[(evaluation["condition"] == condition)
                         & (evaluation["replicate"] == int(replicate))].iloc[0]
        weights = read_weights(f"{results}/weights/{name}.txt")
        weights["word_penalty"] += float(row["matched_shift"])
        lists = decode_corpus(list(test["source"]), grammar, lm, weights, decoder, args.workers)
        real = corpus_bleu([hypotheses[0].text for hypotheses in lists], references, lowercased)
        print(f"| {name} | {row['matched_shift']:+.4f} | {row['bleu']:.2f} | "
              f"{row['matched_bleu']:.2f} | {real.value:.2f} | "
              f"{row['matched_length_ratio']:.3f} | {real.length_ratio:.3f} |")


if __name__ == "__main__":
    main()
