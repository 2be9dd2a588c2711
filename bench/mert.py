"""Time MERT's exact line search: 1000 segments x 100 hypotheses x 15 features (BLEU stats);
the compiled envelopes beside their NumPy twin.

Usage: python bench/mert.py [--segments N] [--hyps N] [--features N] [--repeats N]
"""

import argparse
import time

import numpy as np

from circle.tune.mert import (
    MertSettings,
    coordinate_ascent,
    flat_pool,
    line_search,
    reference_upper_envelopes,
    upper_envelopes,
)
from circle.tune.metrics import get_metric


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=1000)
    parser.add_argument("--hyps", type=int, default=100)
    parser.add_argument("--features", type=int, default=15)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    n, k, d = args.segments, args.hyps, args.features
    features = rng.normal(size=(n, k, d))
    totals = np.tile([20, 19, 18, 17], (n * k, 1))
    matches = rng.integers(0, totals + 1)
    stats = np.column_stack([matches, totals, np.full(n * k, 20), rng.integers(15, 25, n * k)])
    pool = flat_pool(list(features), list(stats.reshape(n, k, 10)))
    metric = get_metric("bleu")
    weights = rng.normal(size=d)

    for name, directions in [("coordinate", np.eye(d)),
                             ("random", rng.normal(size=(args.repeats, d)))]:
        env_times, twin_times, times, breaks = [], [], [], []
        for u in directions[:args.repeats]:
            a, b = pool.features @ weights, pool.features @ u
            t0 = time.perf_counter()
            _, x, _, _ = upper_envelopes(pool, a, b)
            env_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            reference_upper_envelopes(pool, a, b)
            twin_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            line_search(pool, metric, weights, u)
            times.append(time.perf_counter() - t0)
            breaks.append(len(x))
        print(f"{n} segments x {k} hypotheses x {d} features, {name} directions "
              f"({len(times)} searches): line search median {np.median(times) * 1e3:.1f} ms "
              f"(max {np.max(times) * 1e3:.1f} ms; envelopes {np.median(env_times) * 1e3:.2f} ms, "
              f"NumPy twin {np.median(twin_times) * 1e3:.1f} ms), "
              f"{np.mean(breaks):.0f} breakpoints on average")

    t0 = time.perf_counter()
    _, score = coordinate_ascent(pool, metric, weights, MertSettings(), rng)
    print(f"one coordinate ascent to convergence (one start point of 1 + restarts): "
          f"{time.perf_counter() - t0:.2f} s, BLEU {score:.4f}")


if __name__ == "__main__":
    main()
