"""Time TER statistics (Snover et al. 2006): sacrebleu one segment at a time against the
compiled exact TER of ``ter_stats`` (``circle.tune._ter``).

Real pairs from the shipped Bible table ``resources/bible/bible.parquet``: ``--pairs`` verses
drawn with one seeded generator, each scored as one English version (hypothesis) against
another (reference), both tokenised and lowercased as the pipeline does
(:func:`circle.corpus.preprocess.normalize`).  sacrebleu (``ter_stats_reference``) runs once; the
compiled ``ter_stats`` runs ``--rounds`` times.  The script prints milliseconds per pair
(min / median / max over the rounds for the compiled TER) and checks that both give identical
statistics.  Runs from any directory:

    python bench/ter.py [--pairs 3000] [--rounds 5] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from circle.corpus.preprocess import normalize
from circle.tune.metrics import ter_stats, ter_stats_reference

ROOT = Path(__file__).resolve().parents[1]
BIBLE = ROOT / "resources" / "bible" / "bible.parquet"
VERSIONS = ["kjv", "web", "dar", "ylt", "bbe"]


def make_pairs(pairs: int, seed: int) -> tuple[list[str], list[list[str]]]:
    """``pairs`` hypotheses (one version of a verse) with their reference (another version)."""
    rng = np.random.default_rng(seed)
    table = pd.read_parquet(BIBLE, columns=VERSIONS).dropna()
    hypotheses, references = [], []
    for row in rng.choice(len(table), size=pairs, replace=False):
        hyp_version, ref_version = rng.choice(VERSIONS, size=2, replace=False)
        hypotheses.append(normalize(table[hyp_version].iloc[row], "en"))
        references.append([normalize(table[ref_version].iloc[row], "en")])
    return hypotheses, references


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    hypotheses, references = make_pairs(args.pairs, args.seed)
    n = len(hypotheses)
    started = time.perf_counter()
    expected = ter_stats_reference(hypotheses, references)
    reference_ms = (time.perf_counter() - started) / n * 1e3
    print(f"{n} Bible verse pairs: {np.mean([len(h.split()) for h in hypotheses]):.1f} "
          f"hypothesis tokens, {expected[:, 1].mean():.1f} reference tokens and "
          f"{expected[:, 0].mean():.1f} edits per pair on average")

    compiled_ms = []
    for _ in range(args.rounds):
        started = time.perf_counter()
        stats = ter_stats(hypotheses, references)
        compiled_ms.append((time.perf_counter() - started) / n * 1e3)
        assert stats.dtype == np.float64 and np.array_equal(stats, expected), "outputs differ"

    print(f"{'sacrebleu TER (one segment at a time)':40s} ms per pair: {reference_ms:8.3f}")
    print(f"{'ter_stats (compiled, circle.tune._ter)':40s} ms per pair: "
          f"min {min(compiled_ms):.3f}  median {np.median(compiled_ms):.3f}  "
          f"max {max(compiled_ms):.3f}")
    print(f"speed-up {reference_ms / np.median(compiled_ms):.0f}x (median); "
          f"outputs identical ({stats.shape} float64)")


if __name__ == "__main__":
    main()
