"""circle.experiments.length_matching: the exact word-penalty shift against a brute-force search."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from circle.experiments.length_matching import match_length, reference_length


def brute_force(scores, lengths, target):
    """Every δ at which some segment's 1-best can change, each side of it, and 0: the length
    nearest the target that any δ gives."""
    points = {0.0}
    for s, n in zip(scores, lengths, strict=True):
        for a, b in itertools.combinations(range(len(s)), 2):
            if n[a] != n[b]:
                cross = (s[a] - s[b]) / (n[a] - n[b])
                points |= {cross - 1e-7, cross + 1e-7}
    points |= {min(points) - 1e3, max(points) + 1e3}
    best = None
    for delta in sorted(points):
        total = 0
        for s, n in zip(scores, lengths, strict=True):
            values = np.asarray(s) - delta * np.asarray(n)
            total += n[int(np.flatnonzero(values == values.max())[0])]
        gap = abs(total - target)
        if best is None or gap < best:
            best = gap
    return best


@pytest.mark.parametrize("seed", range(20))
def test_the_shift_reaches_the_nearest_length_any_shift_reaches(seed):
    rng = np.random.default_rng(seed)
    segments = int(rng.integers(1, 6))
    scores = [sorted(rng.normal(size=int(rng.integers(1, 7))), reverse=True)
              for _ in range(segments)]
    lengths = [list(rng.integers(3, 15, size=len(s))) for s in scores]
    target = float(rng.integers(3 * segments, 15 * segments))
    match = match_length(scores, lengths, target)
    assert abs(match.length - target) == pytest.approx(brute_force(scores, lengths, target))
    # the choices are the 1-best at the shift, and their lengths add up
    for s, n, choice in zip(scores, lengths, match.choices, strict=True):
        values = np.asarray(s) - match.delta * np.asarray(n)
        assert values[choice] == values.max()
    assert match.length == sum(n[c] for n, c in zip(lengths, match.choices, strict=True))


def test_no_shift_when_the_output_already_has_the_target_length():
    scores = [[-1.0, -2.0], [-3.0, -3.5]]
    lengths = [[5, 8], [6, 4]]
    match = match_length(scores, lengths, 11)
    assert match.delta == 0 and match.choices == (0, 0) and match.length == 11


def test_a_longer_target_lowers_the_word_penalty_weight():
    scores = [[-1.0, -2.0], [-3.0, -3.5]]
    lengths = [[5, 8], [6, 4]]
    longer = match_length(scores, lengths, 14)
    assert longer.delta < 0 and longer.choices == (1, 0) and longer.length == 14
    shorter = match_length(scores, lengths, 9)
    assert shorter.delta > 0 and shorter.choices == (0, 1) and shorter.length == 9


def test_the_target_is_the_mean_reference_length_summed():
    assert reference_length([["a b c", "a b c d e"], ["x y"]]) == 6.0
