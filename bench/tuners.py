"""Compare tuning optimisers (MERT, PRO) on an experiment whose grammars exist already.

For each optimiser, condition and replicate: tune on the experiment's tune set exactly as the
pipeline's tune_translation rule does (same settings, references and derived seed), decode the
test set with the returned weights and score it with sacrebleu against all test references.
Prints one JSON line per run and a summary table (test BLEU mean ± sd, tuning wall seconds).

Usage: python bench/tuners.py [--config config/config.yaml] [--optimizers mert pro]
       [--conditions 1H] [--replicates 3] [--set key=value ...]
"""

import argparse
import json
import time

import numpy as np
import yaml

from circle.core.layout import EVALSET_TABLE, FILTERED_GRAMMAR, Results
from circle.core.schemas import EVALSET
from circle.core.tables import read_table
from circle.decoder import DecoderSettings, decode_corpus, load_grammar, read_weights
from circle.experiments.conditions import UNTUNED_TRANSLATION, Condition, TuningRun, run_seed
from circle.experiments.evaluate import corpus_bleu
from circle.experiments.mt_tuning import condition_references
from circle.tune.loop import TUNING_FIXED, TuningSettings, tune


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--optimizers", nargs="+", default=["mert", "pro"])
    parser.add_argument("--conditions", nargs="+", default=["1H"])
    parser.add_argument("--replicates", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="tuning settings to override (YAML values), e.g. first_pool=3")
    args = parser.parse_args()

    with open(args.config, encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    results = Results.of(".", config["experiment"])
    decoder = DecoderSettings.from_config(config.get("decoder", {}))
    tuning = {**config.get("tuning", {}),
              **{k: yaml.safe_load(v) for k, v in (item.split("=", 1) for item in args.set)}}
    tune_set = read_table(results.path(EVALSET_TABLE, evalset="tune"), EVALSET)
    test_set = read_table(results.path(EVALSET_TABLE, evalset="test"), EVALSET)
    test_references = [list(refs) for refs in test_set["references"]]
    lm = results.lm(config.get("lm", {}).get("decoding_order", 3))
    grammar = load_grammar(results.path(FILTERED_GRAMMAR, evalset="tune"))
    start = read_weights(results.weights(UNTUNED_TRANSLATION))
    rows = []
    for optimizer in args.optimizers:
        for name in args.conditions:
            references = condition_references(tune_set, Condition.parse(name), None)
            for replicate in range(args.replicates):
                seed = run_seed(config["seed"], TuningRun.of(name, replicate).name)
                settings = TuningSettings.from_config({**tuning, "optimizer": optimizer}, seed)
                began = time.perf_counter()
                result = tune(list(tune_set["source"]), references, grammar, lm, start,
                              decoder, settings, args.workers, fixed=TUNING_FIXED)
                seconds = time.perf_counter() - began
                outputs = decode_corpus(list(test_set["source"]),
                                        results.path(FILTERED_GRAMMAR, evalset="test"), lm,
                                        result.weights, decoder, workers=args.workers, k=1)
                bleu = corpus_bleu([hs[0].text for hs in outputs], test_references).value
                row = {"optimizer": optimizer, "condition": name, "replicate": replicate,
                       "test_bleu": round(bleu, 2), "tune_seconds": round(seconds, 1),
                       "tune_bleu_per_iteration": [round(100 * e.decode_score, 2)
                                                   for e in result.log],
                       "returned_iteration": result.returned.iteration}
                rows.append(row)
                print(json.dumps(row), flush=True)
    print("\n| optimizer | condition | test BLEU (mean ± sd) | runs | tuning s per run |")
    print("|---|---|---:|---:|---:|")
    for optimizer in args.optimizers:
        for name in args.conditions:
            mine = [r for r in rows if r["optimizer"] == optimizer and r["condition"] == name]
            bleu = np.array([r["test_bleu"] for r in mine])
            sd = f" ± {bleu.std(ddof=1):.2f}" if len(bleu) > 1 else ""
            seconds = np.array([r["tune_seconds"] for r in mine])
            print(f"| {optimizer} | {name} | {bleu.mean():.2f}{sd} | {len(mine)} | "
                  f"{np.median(seconds):.0f} (median) |")


if __name__ == "__main__":
    main()
