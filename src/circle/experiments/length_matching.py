"""Scores at a common output length: a diagnostic that separates length from quality.

BLEU rewards an output for its length through the brevity penalty, and with several test
references every word beyond the closest reference length only costs precision. Tuning against
a single, long reference stretches the output (the thesis simulates the single reference per
document, §4.3.1, and so inherits the translator's length); a condition can then score better or
worse because its output has another length, not because its references are better. This is
*not* the thesis's metric: the thesis compares systems at whatever length tuning gave them.

Each run's test n-best list is re-ranked with its word-penalty weight shifted by one amount δ
(the model score of a hypothesis with ``word_penalty`` = −|words| becomes ``score − δ·|words|``)
so that the 1-best output has the target length, as near as the lists allow: the human
references' mean length (summed over segments), the same for every run. The shift is found
exactly: each segment's 1-best as a function of δ is the upper envelope of its hypotheses'
lines, so the total length is a step function whose steps are the envelopes' breakpoints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LengthMatch:
    """The shift ``delta`` added to the word-penalty weight, the re-ranked 1-best ``choices``
    (an index into each segment's list) and their total ``length`` in words."""

    delta: float
    choices: tuple[int, ...]
    length: int


def _envelope(scores: np.ndarray, lengths: np.ndarray) -> tuple[list[float], list[int]]:
    """The 1-best of ``score − δ·length`` over δ: breakpoints b_1 < ... < b_m and the
    hypotheses h_0..h_m that win on (−inf, b_1), [b_1, b_2), ..., [b_m, inf). Among equal
    lines the earlier hypothesis (better rank) wins."""
    # as δ rises, shorter hypotheses win: order lines by length descending (slope ascending),
    # the best score first among equal lengths, then rank
    order = sorted(range(len(scores)), key=lambda h: (-lengths[h], -scores[h], h))
    hull: list[int] = []
    starts: list[float] = []
    for h in order:
        if hull and lengths[hull[-1]] == lengths[h]:
            continue  # same slope, lower (or equal, later) line
        while hull:
            top = hull[-1]
            # δ where h (shorter) overtakes top: s_h − δ l_h >= s_top − δ l_top
            cross = (scores[top] - scores[h]) / (lengths[top] - lengths[h])
            if starts and cross <= starts[-1]:
                hull.pop()
                starts.pop()
                continue
            break
        if hull:
            starts.append(cross)
        hull.append(h)
    return starts, hull


def _argmax(scores: np.ndarray, lengths: np.ndarray, delta: float) -> int:
    values = scores - delta * lengths
    return int(np.flatnonzero(values == values.max())[0])


def match_length(scores: Sequence[Sequence[float]], lengths: Sequence[Sequence[int]],
                 target: float) -> LengthMatch:
    """The word-penalty shift δ whose re-ranked 1-best outputs are nearest ``target`` words in
    total; among equally near lengths the smallest |δ|, and within the chosen step of the length
    function the δ nearest 0. ``scores[i]`` are the model scores of segment i's hypotheses
    (best first), ``lengths[i]`` their word counts."""
    segments = [(np.asarray(s, dtype=np.float64), np.asarray(n, dtype=np.float64))
                for s, n in zip(scores, lengths, strict=True)]
    if not segments or any(len(s) == 0 for s, _ in segments):
        raise ValueError("every segment needs at least one hypothesis")
    events: dict[float, float] = {}
    total = 0.0
    for s, n in segments:
        starts, hull = _envelope(s, n)
        total += n[hull[0]]
        for start, before, after in zip(starts, hull[:-1], hull[1:], strict=True):
            events[start] = events.get(start, 0.0) + n[after] - n[before]
    points = sorted(events)
    # steps: (low, high, length) with the length on [low, high)
    steps = []
    low = -math.inf
    for point in points:
        steps.append((low, point, total))
        total += events[point]
        low = point
    steps.append((low, math.inf, total))

    def inside(low: float, high: float) -> float:
        if low <= 0 < high:
            return 0.0
        if high <= 0:
            return high - 1.0 if low == -math.inf else (low + high) / 2
        return low + 1.0 if high == math.inf else (low + high) / 2

    best = min(steps, key=lambda step: (abs(step[2] - target), abs(inside(step[0], step[1]))))
    delta = inside(best[0], best[1])
    choices = tuple(_argmax(s, n, delta) for s, n in segments)
    length = int(sum(n[c] for (_, n), c in zip(segments, choices, strict=True)))
    return LengthMatch(delta, choices, length)


def reference_length(references: Sequence[Sequence[str]]) -> float:
    """The target of :func:`match_length`: each segment's mean reference length in words,
    summed over the segments."""
    return float(sum(np.mean([len(r.split()) for r in refs]) for refs in references))
