"""Time BLEU sufficient statistics: the pre-vectorisation algorithm against ``bleu_stats``.

A realistic MERT scoring call: ``--segments`` segments with ``--hyps`` hypotheses each (a
sentence's n-best list), every segment with its own list of 1-4 references of about 30 tokens.
The first reference of a segment is a verse of ``tests/data/tiny/train.en.txt`` (lowercased,
whitespace tokens), the others are paraphrase-like perturbations of it, and the hypotheses are
heavier perturbations of one of the references; replacement and inserted words are drawn from
the corpus's own word frequencies (a Zipf-like distribution), all from one seeded generator.

Both implementations run on the same input in alternation (A, B, A, B, ...) for ``--rounds``
rounds; the script prints microseconds per hypothesis (min / median / max over the rounds) and
checks that both give identical statistics (same dtype, same values).  Runs from any directory:

    python bench/metrics.py [--segments 200] [--hyps 100] [--rounds 5] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from circle.tune.metrics import BLEU_STATS, MAX_ORDER, bleu_stats, closest_ref_length

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "tiny" / "train.en.txt"


# --- the pre-vectorisation algorithm (per-hypothesis Counters), kept here for comparison ---

def _ngrams(tokens: list[str]) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for n in range(1, MAX_ORDER + 1)
                   for i in range(len(tokens) - n + 1))


def _reference_info(refs: tuple[str, ...]) -> tuple[Counter, list[int]]:
    max_counts: Counter = Counter()
    lengths = []
    for ref in refs:
        tokens = ref.split()
        lengths.append(len(tokens))
        max_counts |= _ngrams(tokens)  # | keeps the maximum count per n-gram
    return max_counts, lengths


def counter_bleu_stats(hypotheses: Sequence[str],
                       references: Sequence[Sequence[str]]) -> np.ndarray:
    """``bleu_stats`` as it was before vectorisation: one Counter of n-grams per hypothesis."""
    out = np.zeros((len(hypotheses), BLEU_STATS), dtype=np.int64)
    cache: dict[tuple[str, ...], tuple[Counter, list[int]]] = {}
    for i, (hyp, refs) in enumerate(zip(hypotheses, references, strict=True)):
        key = tuple(refs)
        if key not in cache:
            cache[key] = _reference_info(key)
        max_counts, ref_lens = cache[key]
        tokens = hyp.split()
        for gram, count in _ngrams(tokens).items():
            out[i, len(gram) - 1] += min(count, max_counts.get(gram, 0))
        for n in range(1, MAX_ORDER + 1):
            out[i, MAX_ORDER + n - 1] = max(0, len(tokens) - n + 1)
        out[i, 8] = len(tokens)
        out[i, 9] = closest_ref_length(len(tokens), ref_lens)
    return out


# --- input ---

def perturb(tokens: list[str], rate: float, rng: np.random.Generator, words: list[str],
            cdf: np.ndarray) -> list[str]:
    """Substitute, delete, insert (rate each) and swap neighbours (rate / 2) of a token list;
    new words are drawn with the cumulative distribution ``cdf`` over ``words``."""
    out: list[str] = []
    for token in tokens:
        r = rng.random()
        if r < rate:
            out.append(words[np.searchsorted(cdf, rng.random(), side="right")])
        elif r < 2 * rate:
            continue
        elif r < 3 * rate:
            out += [token, words[np.searchsorted(cdf, rng.random(), side="right")]]
        else:
            out.append(token)
        if len(out) > 1 and rng.random() < rate / 2:
            out[-2], out[-1] = out[-1], out[-2]
    return out


def make_input(segments: int, hyps: int, seed: int) -> tuple[list[str], list[list[str]]]:
    """``segments * hyps`` hypotheses and their reference lists (one list per segment)."""
    rng = np.random.default_rng(seed)
    verses = [line.lower().split() for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    counts = Counter(token for verse in verses for token in verse)
    words = list(counts)
    cdf = np.cumsum(list(counts.values())) / counts.total()
    cdf[-1] = 1.0
    hypotheses, references = [], []
    for s in range(segments):
        base = verses[s % len(verses)]
        refs = [base] + [perturb(base, 0.1, rng, words, cdf)
                         for _ in range(rng.integers(0, 4))]
        ref_strings = [" ".join(ref) for ref in refs]
        for _ in range(hyps):
            source = refs[rng.integers(len(refs))]
            hypotheses.append(" ".join(perturb(source, 0.12, rng, words, cdf)))
            references.append(ref_strings)
    return hypotheses, references


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=200)
    parser.add_argument("--hyps", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    hypotheses, references = make_input(args.segments, args.hyps, args.seed)
    n = len(hypotheses)
    tokens = sum(len(h.split()) for h in hypotheses) / n
    refs = sum(len(r) for r in references) / n
    print(f"{args.segments} segments x {args.hyps} hypotheses = {n} hypotheses, "
          f"{tokens:.1f} tokens and {refs:.2f} references per hypothesis on average")

    implementations = {"pre-vectorisation (Counters)": counter_bleu_stats,
                       "bleu_stats (vectorised)": bleu_stats}
    times: dict[str, list[float]] = {name: [] for name in implementations}
    results: dict[str, np.ndarray] = {}
    for _ in range(args.rounds):
        for name, function in implementations.items():
            started = time.perf_counter()
            results[name] = function(hypotheses, references)
            times[name].append((time.perf_counter() - started) / n * 1e6)
    old, new = results.values()
    assert old.dtype == new.dtype == np.int64 and np.array_equal(old, new), "outputs differ"

    for name, values in times.items():
        print(f"{name:30s} us per hypothesis: min {min(values):6.1f}  "
              f"median {np.median(values):6.1f}  max {max(values):6.1f}")
    before, after = (np.median(values) for values in times.values())
    print(f"median speed-up {before / after:.1f}x; outputs identical ({old.shape} int64)")


if __name__ == "__main__":
    main()
