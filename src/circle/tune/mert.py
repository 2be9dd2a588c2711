"""Minimum error rate training (Och 2003) over n-best lists accumulated across iterations.

The paraphraser (thesis §3.2.3) and the MT system (thesis §4) are tuned "exactly as" a bilingual
SMT system: decode the tune set to n-best lists, add them to a pool, and choose weights that
maximise the tuning metric of the pool's 1-best hypotheses; repeat until the pool stops growing.

* :class:`NBestPool` keeps, per segment, each distinct hypothesis string once (the first time it
  is seen: its features and its statistics against *its own* references are frozen then).
* :func:`line_search` is Och's exact line search: along ``w + gamma * u`` each hypothesis' model
  score is a line ``a + gamma * b``; the 1-best of a segment is its upper envelope, so the corpus
  metric is piecewise constant in gamma and is evaluated on every interval between the envelopes'
  breakpoints (all segments at once, with incremental statistics). The envelopes, nearly all of
  MERT's time, are compiled (:mod:`circle.tune._envelope`); :func:`reference_upper_envelopes` is
  their NumPy twin.
* :func:`optimise` runs coordinate ascent (each coordinate direction, then ``random_directions``
  random unit directions, moving after every line search) from the start point and from
  ``restarts`` random points, until a sweep improves the score by less than ``epsilon``. The
  search stays in a :class:`Box`: per-feature bounds (sign constraints, Z-MERT's per-parameter
  ranges) cut every line search, and restart points are drawn from per-feature ranges
  (Moses ``mert --range``) scaled to the L1 norm of the start point, so they are on the scale of
  the weights being tuned rather than of the unit cube. The start points' ascents are
  independent and run side by side in ``workers`` processes, with the same result whatever
  their number.

Line searches and the optimiser read their candidates through :class:`Candidates`: a
:class:`FlatPool`, or a pool with the decode's forests (:class:`circle.tune.forest.ForestPool`,
forest MERT), whose envelopes add candidates to every line search.

Ties are broken deterministically: within a segment the 1-best among equal model scores is the
hypothesis added to the pool first; among equally good intervals of a line search the one
nearest gamma = 0 wins (and gamma = 0, no move, when the current interval is among the best).
The outer loop (:mod:`circle.tune.loop`) L1-normalises the result where that cannot change a
1-best (as Moses does).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from threadpoolctl import threadpool_limits

from circle.tune import _envelope
from circle.tune.metrics import Metric

TIE_TOLERANCE = 1e-12  # interval scores closer than this count as equal


@dataclass(frozen=True)
class MertSettings:
    """Options of one MERT optimisation (defaults follow Moses ``mert``: 20 restarts)."""

    restarts: int = 20
    random_directions: int = 0
    epsilon: float = 1e-5  # a sweep of line searches gaining less ends a coordinate ascent
    max_sweeps: int = 100  # guard on coordinate-ascent sweeps per start point
    restart_min_gain: float = 0.0  # a restart must beat the continuing point by more than this


@dataclass(frozen=True)
class FlatPool:
    """A pool as arrays, rows grouped by segment: segment k owns rows ``starts[k]:starts[k+1]``.

    ``offset`` (optional) is a per-row model-score term that the weights being searched do not
    touch: the contribution of features whose weights are fixed.
    """

    features: np.ndarray  # (N, d) float64
    stats: np.ndarray  # (N, s) float64
    starts: np.ndarray  # (n_segments,) int64, first row of each segment
    segment: np.ndarray  # (N,) int64, segment number of each row
    segment_ids: list
    offset: np.ndarray | None = None  # (N,) float64

    def model_scores(self, weights: np.ndarray) -> np.ndarray:
        """Each row's model score ``features @ weights (+ offset)``."""
        scores = self.features @ weights
        return scores if self.offset is None else scores + self.offset

    @property
    def n_features(self) -> int:
        return self.features.shape[1]

    def lines(self, weights: np.ndarray, direction: np.ndarray) -> Lines:
        """Each row's model score along ``weights + gamma * direction``."""
        return Lines(self.starts, self.segment, self.model_scores(weights),
                     self.features @ direction, self.stats)

    def one_best_stats(self, weights: np.ndarray) -> np.ndarray:
        """The statistics of each segment's 1-best under ``weights``."""
        return self.stats[one_best(self, weights)]


class Candidates(Protocol):
    """What a line search and the optimiser read: a :class:`FlatPool`, or a pool with forests
    (:class:`circle.tune.forest.ForestPool`)."""

    @property
    def n_features(self) -> int: ...

    def lines(self, weights: np.ndarray, direction: np.ndarray) -> Lines: ...

    def one_best_stats(self, weights: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class Lines:
    """The candidates of a line search: row ``i``'s model score is ``a[i] + gamma * b[i]``,
    rows grouped by segment as in :class:`FlatPool` (``starts``, ``segment``), each with its
    metric statistics. A :class:`FlatPool`'s rows (:meth:`FlatPool.lines`), or also the
    envelopes of forests (:class:`circle.tune.forest.ForestPool`)."""

    starts: np.ndarray
    segment: np.ndarray
    a: np.ndarray
    b: np.ndarray
    stats: np.ndarray


def flat_pool(features: Sequence[np.ndarray], stats: Sequence[np.ndarray],
              segment_ids: list | None = None) -> FlatPool:
    """A :class:`FlatPool` from per-segment feature ``(n_k, d)`` and stats ``(n_k, s)`` arrays."""
    sizes = np.array([len(f) for f in features], dtype=np.int64)
    if len(features) == 0 or np.any(sizes == 0):
        raise ValueError("every segment needs at least one hypothesis")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return FlatPool(np.vstack(features).astype(np.float64), np.vstack(stats).astype(np.float64),
                    starts, np.repeat(np.arange(len(sizes)), sizes),
                    list(range(len(sizes))) if segment_ids is None else segment_ids)


class NBestPool:
    """N-best hypotheses accumulated over MERT iterations, de-duplicated per segment by string."""

    def __init__(self, n_features: int, n_stats: int):
        self.n_features, self.n_stats = n_features, n_stats
        self._index: dict[tuple[Hashable, str], int] = {}
        self.segment_ids: list = []
        self.hypotheses: list[str] = []
        self._features: list[np.ndarray] = []
        self._stats: list[np.ndarray] = []
        self._flat: FlatPool | None = None

    def __len__(self) -> int:
        return len(self.hypotheses)

    @property
    def n_segments(self) -> int:
        return len(set(self.segment_ids))

    def add(self, segment_ids: Sequence[Hashable], hypotheses: Sequence[str],
            features: np.ndarray, stats: np.ndarray) -> int:
        """Add one iteration's n-best rows; returns how many (segment, hypothesis) pairs are new.

        ``features`` is ``(n, d)`` and ``stats`` ``(n, s)``, row i for ``hypotheses[i]`` of segment
        ``segment_ids[i]`` (stats against that hypothesis' own references).
        """
        features = np.asarray(features, dtype=np.float64)
        stats = np.asarray(stats, dtype=np.float64)
        n = len(hypotheses)
        if len(segment_ids) != n or features.shape != (n, self.n_features) \
                or stats.shape != (n, self.n_stats):
            raise ValueError(
                f"expected {n} segment ids, features ({n}, {self.n_features}) and stats "
                f"({n}, {self.n_stats}); got {len(segment_ids)}, {features.shape}, {stats.shape}")
        if not np.all(np.isfinite(features)):
            raise ValueError("features must be finite")
        new = []
        for i, key in enumerate(zip(segment_ids, hypotheses, strict=True)):
            if key not in self._index:
                self._index[key] = len(self.hypotheses)
                self.segment_ids.append(key[0])
                self.hypotheses.append(key[1])
                new.append(i)
        if new:
            self._features.append(features[new])
            self._stats.append(stats[new])
            self._flat = None
        return len(new)

    def flat(self) -> FlatPool:
        """The pool as a :class:`FlatPool` (segments sorted by id, rows in insertion order)."""
        if self._flat is None:
            if not self.hypotheses:
                raise ValueError("the n-best pool is empty")
            ids = sorted(set(self.segment_ids))
            rank = {s: k for k, s in enumerate(ids)}
            seg = np.array([rank[s] for s in self.segment_ids], dtype=np.int64)
            order = np.argsort(seg, kind="stable")
            features, stats = np.vstack(self._features), np.vstack(self._stats)
            starts = np.searchsorted(seg[order], np.arange(len(ids)))
            self._flat = FlatPool(features[order], stats[order], starts, seg[order], ids)
        return self._flat

    def rows(self, start: int = 0) -> tuple[list, list[str], np.ndarray, np.ndarray]:
        """Segment ids, hypotheses, features and stats of the rows from ``start`` on, in the
        order they joined the pool."""
        features = np.vstack(self._features or [np.zeros((0, self.n_features))])
        stats = np.vstack(self._stats or [np.zeros((0, self.n_stats))])
        return (self.segment_ids[start:], self.hypotheses[start:], features[start:],
                stats[start:])

    def save(self, path: str | Path) -> None:
        """Write the pool to a ``.npz`` file (no pickles)."""
        segment_ids, hypotheses, features, stats = self.rows()
        np.savez_compressed(path, segment_ids=np.array(segment_ids),
                            hypotheses=np.array(hypotheses, dtype=str), features=features,
                            stats=stats)

    @classmethod
    def load(cls, path: str | Path) -> NBestPool:
        with np.load(path) as data:
            pool = cls(data["features"].shape[1], data["stats"].shape[1])
            pool.add(data["segment_ids"].tolist(), data["hypotheses"].tolist(),
                     data["features"], data["stats"])
        return pool


def best_rows(group: np.ndarray, starts: np.ndarray, keys: Sequence[np.ndarray]) -> np.ndarray:
    """Per group of consecutive rows, the first row maximising ``keys`` lexicographically.

    ``group`` numbers each row's group 0, 1, ...; ``starts`` is each group's first row.
    """
    n = len(group)
    mask = np.ones(n, bool)
    for key in keys:
        value = np.where(mask, key, -np.inf)
        mask &= value == np.maximum.reduceat(value, starts)[group]
    return np.minimum.reduceat(np.where(mask, np.arange(n), n), starts)


def one_best(pool: FlatPool, weights: np.ndarray) -> np.ndarray:
    """Row of each segment's highest-scoring hypothesis (first added wins ties)."""
    return best_rows(pool.segment, pool.starts, [pool.model_scores(weights)])


def score_weights(pool: Candidates, metric: Metric, weights: np.ndarray) -> float:
    """The metric's (higher-is-better) score of the 1-best hypotheses under ``weights``."""
    return float(metric.score(pool.one_best_stats(weights).sum(axis=0)))


def upper_envelopes(pool: FlatPool | Lines, a: np.ndarray, b: np.ndarray):
    """Upper envelopes of the lines ``a + gamma * b``, every segment's (compiled).

    Returns ``(first, x, before, after)``: ``first`` is each segment's top row as gamma -> -inf;
    each event ``i`` says that at ``gamma = x[i]`` the segment's top row changes from
    ``before[i]`` to ``after[i]``.  Events of a segment are in increasing ``x`` order.
    """
    return _envelope.upper_envelopes(np.ascontiguousarray(pool.starts, dtype=np.int64),
                                     np.ascontiguousarray(a, dtype=np.float64),
                                     np.ascontiguousarray(b, dtype=np.float64))


def reference_upper_envelopes(pool: FlatPool | Lines, a: np.ndarray, b: np.ndarray):
    """:func:`upper_envelopes` in NumPy, all segments a step at a time: the compiled
    envelopes' twin (same events; here ordered by step, not by segment)."""
    cur = best_rows(pool.segment, pool.starts, [-b, a])  # flattest, then highest line
    first = cur.copy()
    last_x = np.full(len(cur), -np.inf)
    rows, seg = np.arange(len(a)), pool.segment  # candidates: steeper than their segment's top
    xs, before, after = [], [], []
    while True:
        keep = b[rows] > b[cur[seg]]
        rows, seg = rows[keep], seg[keep]
        if len(rows) == 0:
            break
        new_group = np.concatenate([[True], seg[1:] != seg[:-1]])
        starts, group = np.flatnonzero(new_group), np.cumsum(new_group) - 1
        segs, top = seg[starts], cur[seg]
        x = (a[top] - a[rows]) / (b[rows] - b[top])
        # The next top line crosses first; among lines crossing there the steepest wins.
        nxt = best_rows(group, starts, [-x, b[rows]])
        x_seg = np.maximum(x[nxt], last_x[segs])  # keep each segment's order despite rounding
        last_x[segs] = x_seg
        xs.append(x_seg)
        before.append(cur[segs])
        after.append(rows[nxt])
        cur[segs] = rows[nxt]
    if not xs:
        return first, np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return first, np.concatenate(xs), np.concatenate(before), np.concatenate(after)


def gamma_range(weights: np.ndarray, direction: np.ndarray, lower: np.ndarray | None,
                upper: np.ndarray | None) -> tuple[float, float]:
    """The steps ``gamma`` that keep ``weights + gamma * direction`` within [lower, upper]."""
    lo, hi = -np.inf, np.inf
    if lower is None and upper is None:
        return lo, hi
    d = len(weights)
    lower = np.full(d, -np.inf) if lower is None else lower
    upper = np.full(d, np.inf) if upper is None else upper
    with np.errstate(divide="ignore", invalid="ignore"):
        to_lower = np.where(direction != 0, (lower - weights) / direction, np.nan)
        to_upper = np.where(direction != 0, (upper - weights) / direction, np.nan)
    rising, falling = direction > 0, direction < 0
    if rising.any():
        lo = max(lo, float(np.max(to_lower[rising])))
        hi = min(hi, float(np.min(to_upper[rising])))
    if falling.any():
        lo = max(lo, float(np.max(to_upper[falling])))
        hi = min(hi, float(np.min(to_lower[falling])))
    return min(lo, 0.0), max(hi, 0.0)  # the current point stays feasible despite rounding


def line_search(pool: Candidates, metric: Metric, weights: np.ndarray, direction: np.ndarray,
                lower: np.ndarray | None = None, upper: np.ndarray | None = None
                ) -> tuple[float, float]:
    """Exact line search (Och 2003): the best ``gamma`` along ``weights + gamma * direction``.

    Returns ``(gamma, score)``.  With bounds, only steps that keep every weight within
    ``[lower, upper]`` are considered (Z-MERT's per-parameter ranges), and intervals are cut at
    the feasible range.  ``gamma`` is 0 when the interval holding the current point is among
    the best, else the midpoint of the best (cut) interval nearest 0; for an unbounded interval
    it lies ``0.5 * |x| + 1`` beyond its finite end ``x``.
    """
    lines = pool.lines(weights, direction)
    first, x, before, after = upper_envelopes(lines, lines.a, lines.b)
    order = np.argsort(x, kind="stable")
    x = x[order]
    stats = lines.stats[first].sum(axis=0)
    running = stats + np.cumsum(lines.stats[after[order]] - lines.stats[before[order]], axis=0)
    ends = np.flatnonzero(np.append(x[1:] != x[:-1], True)) if len(x) else np.array([], int)
    breaks = x[ends]
    scores = np.atleast_1d(metric.score(np.vstack([stats, running[ends]])))
    g_lo, g_hi = gamma_range(weights, direction, lower, upper)
    if g_lo == g_hi:  # blocked both ways by the bounds
        return 0.0, score_weights(pool, metric, weights)
    lo = np.maximum(np.concatenate([[-np.inf], breaks]), g_lo)
    hi = np.minimum(np.concatenate([breaks, [np.inf]]), g_hi)
    scores = np.where(lo < hi, scores, -np.inf)
    distance = np.maximum(np.maximum(lo, -hi), 0.0)  # from 0 to the interval
    tied = np.flatnonzero(scores >= scores.max() - TIE_TOLERANCE)
    best = tied[np.argmin(distance[tied])]
    if lo[best] < 0 < hi[best]:
        gamma = 0.0
    elif np.isinf(lo[best]):
        gamma = hi[best] - (0.5 * abs(hi[best]) + 1.0)
    elif np.isinf(hi[best]):
        gamma = lo[best] + (0.5 * abs(lo[best]) + 1.0)
    else:
        gamma = 0.5 * (lo[best] + hi[best])
    return float(gamma), float(scores[best])


def normalise(weights: np.ndarray) -> np.ndarray:
    """Weights scaled to L1 norm 1 (unchanged if all zero)."""
    weights = np.asarray(weights, dtype=np.float64)
    total = np.abs(weights).sum()
    return weights / total if total > 0 else weights.copy()


@dataclass(frozen=True)
class Box:
    """Per-feature constraints of the search, on the tuned features only.

    ``lower``/``upper`` bound the weights themselves (sign constraints: a bound of 0; they must
    contain 0, so rescaling never leaves the box); ``restart_low``/``restart_high`` is the range
    random restart points are drawn from before they are scaled to the L1 norm of the start
    point (Moses ``mert --range``, Z-MERT's ``minRandVal maxRandVal``).
    """

    lower: np.ndarray
    upper: np.ndarray
    restart_low: np.ndarray
    restart_high: np.ndarray

    @classmethod
    def free(cls, d: int) -> Box:
        """No bounds; restarts from [-1, 1]^d (Moses' and Z-MERT's default range)."""
        return cls(np.full(d, -np.inf), np.full(d, np.inf), -np.ones(d), np.ones(d))

    def __post_init__(self):
        if np.any(self.lower > 0) or np.any(self.upper < 0):
            raise ValueError("weight bounds must contain 0")
        if np.any(self.restart_low > self.restart_high):
            raise ValueError("a restart range is empty")

    def clip(self, weights: np.ndarray) -> np.ndarray:
        return np.clip(weights, self.lower, self.upper)

    def restart_points(self, count: int, scale: float, rng: np.random.Generator) -> np.ndarray:
        """``count`` random points in the restart ranges, scaled to L1 norm ``scale``."""
        points = rng.uniform(self.restart_low, self.restart_high,
                             size=(count, len(self.lower)))
        norms = np.abs(points).sum(axis=1, keepdims=True)
        points = np.where(norms > 0, points * (scale / np.where(norms > 0, norms, 1.0)), points)
        return self.clip(points)


def coordinate_ascent(pool: Candidates, metric: Metric, start: np.ndarray, settings: MertSettings,
                      rng: np.random.Generator, box: Box | None = None
                      ) -> tuple[np.ndarray, float]:
    """Line searches along each coordinate then random unit directions, moving after each,
    until a sweep gains less than ``settings.epsilon`` (Moses ``mert``'s Powell-style
    optimiser without its direction updates)."""
    d = pool.n_features
    box = box or Box.free(d)
    w = box.clip(np.asarray(start, dtype=np.float64))
    score = score_weights(pool, metric, w)
    for _ in range(settings.max_sweeps):
        randoms = rng.standard_normal((settings.random_directions, d))
        randoms /= np.linalg.norm(randoms, axis=1, keepdims=True)
        before = score
        for u in np.vstack([np.eye(d), randoms]):
            gamma, new = line_search(pool, metric, w, u, box.lower, box.upper)
            if new > score:
                w, score = box.clip(w + gamma * u), new
        if score - before < settings.epsilon:
            break
    return w, score_weights(pool, metric, w)


def optimise(pool: Candidates, metric: Metric, start: np.ndarray, settings: MertSettings,
             rng: np.random.Generator, box: Box | None = None, workers: int = 1
             ) -> tuple[np.ndarray, float]:
    """Coordinate ascent from ``start`` and from ``settings.restarts`` random points.

    Restart points are drawn in ``box``'s restart ranges and scaled to the L1 norm of ``start``
    (so they are on the scale of the weights being tuned). A restart replaces the result of
    the start point only if it beats it by more than ``settings.restart_min_gain``: on a pool
    from one or two weight vectors, far-away points often win by a hair on the pool and fail
    when decoded. Weights are returned as found (the caller normalises).

    The start points' ascents are independent, so ``workers`` > 1 runs them side by side in
    that many processes (Moses ``mert --threads``); each start point draws its random
    directions from a generator of its own, spawned from ``rng``, so the result is the same
    whatever the number of workers.
    """
    d = pool.n_features
    box = box or Box.free(d)
    start = box.clip(np.asarray(start, dtype=np.float64))
    scale = float(np.abs(start).sum()) or 1.0
    points = [start, *box.restart_points(settings.restarts, scale, rng)]
    # Without random directions an ascent draws nothing, and every start point may share rng.
    generators = rng.spawn(len(points)) if settings.random_directions else [rng] * len(points)
    ascents = _ascents(pool, metric, points, generators, settings, box, workers)
    best_w, best_score = ascents[0]
    for w, score in ascents[1:]:
        if score > best_score + settings.restart_min_gain:
            best_w, best_score = w, score
    return best_w, best_score


_SHARED_SEARCH: tuple | None = None
"""What :func:`_ascend` in a forked worker searches: (pool, metric, settings, box)."""


def _start_worker() -> None:
    """One BLAS thread per worker: the workers already fill the cores, and OpenBLAS's own
    threads in every forked worker spin against each other (an optimisation took 2.6 times
    as long on two workers as on one). Its matrix-vector products over a pool of 8-15
    features gain nothing from threads, and when other jobs hold the cores its threads cost
    a serial optimisation 3-4 times its time (bench/mert_pool.py)."""
    threadpool_limits(1)


def _ascend(point: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    assert _SHARED_SEARCH is not None, "set by _ascents before the workers fork"
    pool, metric, settings, box = _SHARED_SEARCH
    return coordinate_ascent(pool, metric, point, settings, rng, box)


def _ascents(pool: Candidates, metric: Metric, points: Sequence[np.ndarray],
             generators: Sequence[np.random.Generator], settings: MertSettings, box: Box,
             workers: int) -> list[tuple[np.ndarray, float]]:
    """:func:`coordinate_ascent` from each point, in order; with ``workers`` > 1 in forked
    processes that inherit the pool (copy-on-write) instead of receiving it."""
    workers = min(workers, len(points))
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        with threadpool_limits(1):  # see _start_worker: here too when other jobs fill the cores
            return [coordinate_ascent(pool, metric, point, settings, generator, box)
                    for point, generator in zip(points, generators, strict=True)]
    global _SHARED_SEARCH
    _SHARED_SEARCH = (pool, metric, settings, box)
    try:
        with multiprocessing.get_context("fork").Pool(workers, _start_worker) as processes:
            return processes.starmap(_ascend, zip(points, generators, strict=True), chunksize=1)
    finally:
        _SHARED_SEARCH = None
