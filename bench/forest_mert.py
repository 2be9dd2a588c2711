"""n-best MERT against forest MERT (``tuning.line_search: forest``, Kumar et al. 2009) on the same
tuning runs: what each costs in decodes and line searches, and what it returns.

    python bench/forest_mert.py --config results/tiny/config.yaml --max-iterations 10 \\
        --restarts 10 --replicates 0 1 2

Run it in the directory of an experiment whose tune and test grammars, LM and untuned weights
exist (``--config`` its effective config), e.g. the tests' tiny corpus built with
``snakemake --configfile <tiny config with absolute paths>
results/tiny/grammar/filtered/tune.parquet results/tiny/grammar/filtered/test.parquet
results/tiny/lm/3gram.binary
results/tiny/weights/untuned-translation.txt results/tiny/sets/tune.parquet
results/tiny/sets/test.parquet results/tiny/config.yaml`` (tests/workflow/test_workflow.py's
``tiny_config`` writes that config). Each replicate of ``--condition`` is tuned as the pipeline's
job tunes it (:func:`tuning_threads.tune_run`: the pipeline's seeds and settings), once with
each line search, from the same seed. Decoding and the optimiser run in this one process, so
that the line searches can be counted; the untuned start is decoded here, where the pipeline
reads its lists from the decode stage.

With ``--envelopes`` it instead decodes the tune set once with the untuned weights and prints
the forests' size and the seconds one search direction takes over all of them (envelopes,
outputs and features), compiled and in the Python twin, best of ``--repeat`` runs of each.

Per run it prints: iterations (decodes of the tune set), sentence decodes, line searches,
optimisation seconds (the loop's optimisations, wall), the returned weights' tune BLEU (the
run's own score) and their test BLEU (sacrebleu, all test references, tokenize none), and a
total per line search. Seconds compare only within one run of the bench (the machine's speed
drifts); the counts do not depend on the machine.
"""

import argparse
import os
import tempfile
import time

import numpy as np
import yaml
from tuning_threads import tune_run

from circle.core.layout import EVALSET_TABLE, FILTERED_GRAMMAR, Results
from circle.core.schemas import EVALSET
from circle.core.tables import read_table
from circle.corpus.references import ordered_references
from circle.decoder import DecoderSettings, decode_corpus, read_weights
from circle.decoder.corpus import decode_corpus_hypergraphs
from circle.experiments.conditions import UNTUNED_TRANSLATION, TuningRun
from circle.experiments.evaluate import corpus_bleu
from circle.tune import loop, mert
from circle.tune.forest import envelope

COUNTS = {"line searches": 0, "optimisation seconds": 0.0}


def counted_line_search(original):
    def line_search(*args, **kwargs):
        COUNTS["line searches"] += 1
        return original(*args, **kwargs)
    return line_search


def timed_optimise(original):
    def optimise(*args, **kwargs):
        began = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            COUNTS["optimisation seconds"] += time.perf_counter() - began
    return optimise


def test_bleu(config: dict, weights: dict[str, float]) -> float:
    """BLEU (percent) of the 1-best test translations under ``weights``."""
    results = Results.of(".", config["experiment"])
    test_set = read_table(results.path(EVALSET_TABLE, evalset="test"), EVALSET)
    settings = DecoderSettings.from_config(config.get("decoder", {}), k=1)
    lists = decode_corpus(list(test_set["source"]),
                          results.path(FILTERED_GRAMMAR, evalset="test"),
                          results.lm(config["lm"]["decoding_order"]), weights, settings)
    return corpus_bleu([hypotheses[0].text for hypotheses in lists],
                       ordered_references(test_set)).value


def envelope_seconds(config: dict, repeat: int) -> None:
    """Seconds per direction over the tune set's forests, compiled and in the Python twin."""
    results = Results.of(".", config["experiment"])
    tune_set = read_table(results.path(EVALSET_TABLE, evalset="tune"), EVALSET)
    weights = read_weights(results.weights(UNTUNED_TRANSLATION))
    lists, forests = decode_corpus_hypergraphs(
        list(tune_set["source"]), results.path(FILTERED_GRAMMAR, evalset="tune"),
        results.lm(config["lm"]["decoding_order"]), weights,
        DecoderSettings.from_config(config.get("decoder", {})))
    names = list(lists[0][0].features)
    start = np.array([weights.get(name, 0.0) for name in names])
    directions = np.random.default_rng(0).normal(size=(repeat, len(names)))
    size = sum(array.nbytes for forest in forests for array in
               (forest.node_end, forest.tails, forest.features, forest.edge_target,
                forest.target_end, forest.symbols))
    print(f"{len(forests)} forests, {sum(f.edges for f in forests)} edges, "
          f"{sum(f.nodes for f in forests)} nodes, {size / 2**20:.1f} MiB of arrays")
    for compiled in (True, False):
        seconds = []
        for direction in directions:
            began = time.perf_counter()
            intervals = sum(len(envelope(forest, start, direction, compiled).outputs)
                            for forest in forests)
            seconds.append(time.perf_counter() - began)
        print(f"{'compiled' if compiled else 'python twin'}: {min(seconds):.4f} s per direction "
              f"(best of {repeat}), last direction {intervals} goal intervals")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--condition", default="1H")
    parser.add_argument("--replicates", type=int, nargs="+", default=[0])
    parser.add_argument("--max-iterations", type=int, help="default: the config's")
    parser.add_argument("--restarts", type=int, help="default: the config's")
    parser.add_argument("--envelopes", action="store_true",
                        help="time one direction's envelopes instead of tuning")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with open(args.config, encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    if args.envelopes:
        envelope_seconds(config, args.repeat)
        return
    for key, value in (("max_iterations", args.max_iterations), ("restarts", args.restarts)):
        if value is not None:
            config["tuning"][key] = value
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as adjusted:
        yaml.safe_dump(config, adjusted)
    mert.line_search = counted_line_search(mert.line_search)
    loop._optimise = timed_optimise(loop._optimise)
    totals: dict[str, np.ndarray] = {}
    print("line search | run | iterations | sentence decodes | line searches | optimisation s "
          "| tune BLEU | test BLEU")
    for replicate in args.replicates:
        for line_search in (None, "forest"):
            COUNTS.update({"line searches": 0, "optimisation seconds": 0.0})
            result = tune_run(adjusted.name, args.condition, replicate, 1,
                              line_search=line_search)
            row = np.array([len(result.log), sum(e.decoded_sentences for e in result.log),
                            COUNTS["line searches"], COUNTS["optimisation seconds"],
                            100 * result.returned.decode_score,
                            test_bleu(config, result.weights)])
            name = line_search or "n-best"
            totals[name] = totals.get(name, 0) + row
            run = TuningRun.of(args.condition, replicate).name
            print(f"{name} | {run} | {row[0]:.0f} | {row[1]:.0f} | "
                  f"{row[2]:.0f} | {row[3]:.1f} | {row[4]:.2f} | {row[5]:.2f}", flush=True)
    os.unlink(adjusted.name)
    for name, total in totals.items():
        mean = total / len(args.replicates)
        print(f"{name} | total of {len(args.replicates)} | {total[0]:.0f} | {total[1]:.0f} | "
              f"{total[2]:.0f} | {total[3]:.1f} | mean {mean[4]:.2f} | mean {mean[5]:.2f}")


if __name__ == "__main__":
    main()
