"""One MERT optimisation on a real n-best pool: the start points one after the other against
side by side in two processes, with the same weights.

    python bench/mert_pool.py --condition 4H --iterations 6     # build the pool once (cached)
    python bench/mert_pool.py --condition 4H --workers 1        # then time one optimisation
    python bench/mert_pool.py --condition 4H --workers 2

The pool is that of a tuning run of ``--condition`` (replicate 0, the experiment of
``--config``, whose tune grammar must exist) stopped after ``--iterations`` decodes, saved beside
the experiment's results (``bench-pools/``) so that the timed runs do not decode. Each timed run
prints the pool's size, the optimisation's wall seconds, its line searches and a digest of the
weights it returns; time whole processes interleaved (the machine's speed drifts).
"""

import argparse
import hashlib
import os
import time

import numpy as np
import yaml
from tuning_threads import tune_run

from circle.core.layout import FILTERED_GRAMMAR, Results
from circle.decoder import grammar_features, read_weights
from circle.experiments.conditions import UNTUNED_TRANSLATION
from circle.tune import mert
from circle.tune.loop import TUNING_FIXED, FlatPool, TuningProblem, TuningSettings
from circle.tune.mert import NBestPool


def build_pool(config_path: str, condition: str, iterations: int, path: str) -> None:
    result = tune_run(config_path, condition, 0, 2, max_iterations=iterations - 1)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    result.pool.save(path)
    np.save(path + ".weights.npy", np.array(result.log[-1].weights))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--condition", default="4H")
    parser.add_argument("--iterations", type=int, default=6)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    with open(args.config, encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    results = Results.of(".", config["experiment"])
    path = str(results.directory / "bench-pools" / f"{args.condition}.it{args.iterations}.npz")
    if not os.path.exists(path):
        build_pool(args.config, args.condition, args.iterations, path)
    pool = NBestPool.load(path).flat()
    weights = np.load(path + ".weights.npy")
    settings = TuningSettings.from_config(config.get("tuning", {}), 0)
    problem = TuningProblem(grammar_features(results.path(FILTERED_GRAMMAR, evalset="tune")),
                            read_weights(results.weights(UNTUNED_TRANSLATION)), settings,
                            TUNING_FIXED)
    free = problem.free
    offset = pool.features[:, ~free] @ weights[~free]
    sub = FlatPool(pool.features[:, free], pool.stats, pool.starts, pool.segment,
                   pool.segment_ids, offset)
    searches = 0
    line_search = mert.line_search

    def counted(*arguments, **keywords):
        nonlocal searches
        searches += 1
        return line_search(*arguments, **keywords)

    mert.line_search = counted  # counts the serial run's searches (workers fork after this)
    began = time.perf_counter()
    found, score = mert.optimise(sub, problem.metric, weights[free], settings.mert,
                                 settings.iteration_rng(2), problem.box, args.workers)
    wall = time.perf_counter() - began
    digest = hashlib.sha256(found.tobytes()).hexdigest()[:12]
    print(f"{args.condition} pool of {len(pool.features)} hypotheses, {len(pool.starts)} "
          f"segments; {args.workers} worker(s): {wall:.2f} s, "
          f"{searches if args.workers == 1 else 'n/a'} line searches, BLEU {score:.4f}, "
          f"weights {digest}")


if __name__ == "__main__":
    main()
