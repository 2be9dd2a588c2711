"""Minimum error rate training (Och 2003) over n-best lists accumulated across iterations.

The paraphraser (thesis §3.2.3) and the MT system (thesis §4) are tuned "exactly as" a bilingual
SMT system: decode the tune set to n-best lists, add them to a pool, and choose weights that
maximise the tuning metric of the pool's 1-best hypotheses; repeat until the pool stops growing.

* :class:`NBestPool` keeps, per segment, each distinct hypothesis string once (the first time it
  is seen: its features and its statistics against *its own* references are frozen then).
* :func:`line_search` is Och's exact line search: along ``w + gamma * u`` each hypothesis' model
  score is a line ``a + gamma * b``; the 1-best of a segment is its upper envelope, so the corpus
  metric is piecewise constant in gamma and is evaluated on every interval between the envelopes'
  breakpoints (all segments at once, with incremental statistics).
* :func:`optimise` runs coordinate ascent (each coordinate direction, then ``random_directions``
  random unit directions, moving after every line search) from the start point and from
  ``restarts`` random points drawn uniformly from [-1, 1]^d, until a sweep improves the score by
  less than ``epsilon``.
* :func:`mert_iteration` is the pipeline's entry point; :func:`stopping_reason` decides when the
  outer decode/optimise loop ends.

Ties are broken deterministically: within a segment the 1-best among equal model scores is the
hypothesis added to the pool first; among equally good intervals of a line search the one
nearest gamma = 0 wins (and gamma = 0, no move, when the current interval is among the best).
Weights are returned L1-normalised (as Moses does); positive rescaling never changes a 1-best.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from circle.metrics import Metric, get_metric

TIE_TOLERANCE = 1e-12  # interval scores closer than this count as equal


@dataclass(frozen=True)
class MertSettings:
    """MERT options (defaults follow Moses: 20 restarts, at most 25 iterations)."""

    metric: str = "bleu"
    restarts: int = 20
    random_directions: int = 0
    max_iterations: int = 25
    epsilon: float = 1e-5
    max_sweeps: int = 100  # guard on coordinate-ascent sweeps per start point
    seed: int = 0


@dataclass(frozen=True)
class FlatPool:
    """A pool as arrays, rows grouped by segment: segment k owns rows ``starts[k]:starts[k+1]``."""

    features: np.ndarray  # (N, d) float64
    stats: np.ndarray  # (N, s) float64
    starts: np.ndarray  # (n_segments,) int64, first row of each segment
    segment: np.ndarray  # (N,) int64, segment number of each row
    segment_ids: list


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

    def save(self, path: str | Path) -> None:
        """Write the pool to a ``.npz`` file (no pickles)."""
        np.savez_compressed(path, segment_ids=np.array(self.segment_ids),
                            hypotheses=np.array(self.hypotheses, dtype=str),
                            features=np.vstack(self._features or [np.zeros((0, self.n_features))]),
                            stats=np.vstack(self._stats or [np.zeros((0, self.n_stats))]))

    @classmethod
    def load(cls, path: str | Path) -> NBestPool:
        with np.load(path) as data:
            pool = cls(data["features"].shape[1], data["stats"].shape[1])
            pool.add(data["segment_ids"].tolist(), data["hypotheses"].tolist(),
                     data["features"], data["stats"])
        return pool


def _best_rows(group: np.ndarray, starts: np.ndarray, keys: Sequence[np.ndarray]) -> np.ndarray:
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
    return _best_rows(pool.segment, pool.starts, [pool.features @ weights])


def score_weights(pool: FlatPool, metric: Metric, weights: np.ndarray) -> float:
    """The metric's (higher-is-better) score of the 1-best hypotheses under ``weights``."""
    return float(metric.score(pool.stats[one_best(pool, weights)].sum(axis=0)))


def upper_envelopes(pool: FlatPool, a: np.ndarray, b: np.ndarray):
    """Upper envelopes of the lines ``a + gamma * b``, all segments at once.

    Returns ``(first, x, before, after)``: ``first`` is each segment's top row as gamma -> -inf;
    each event ``i`` says that at ``gamma = x[i]`` the segment's top row changes from
    ``before[i]`` to ``after[i]``.  Events of a segment are in increasing ``x`` order.
    """
    cur = _best_rows(pool.segment, pool.starts, [-b, a])  # flattest, then highest line
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
        nxt = _best_rows(group, starts, [-x, b[rows]])
        x_seg = np.maximum(x[nxt], last_x[segs])  # keep each segment's order despite rounding
        last_x[segs] = x_seg
        xs.append(x_seg)
        before.append(cur[segs])
        after.append(rows[nxt])
        cur[segs] = rows[nxt]
    if not xs:
        return first, np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return first, np.concatenate(xs), np.concatenate(before), np.concatenate(after)


def line_search(pool: FlatPool, metric: Metric, weights: np.ndarray,
                direction: np.ndarray) -> tuple[float, float]:
    """Exact line search (Och 2003): the best ``gamma`` along ``weights + gamma * direction``.

    Returns ``(gamma, score)``.  ``gamma`` is 0 when the interval holding the current point is
    among the best, else the midpoint of the best interval nearest 0; for an unbounded interval
    it lies ``0.5 * |x| + 1`` beyond its finite breakpoint ``x``.
    """
    a, b = pool.features @ weights, pool.features @ direction
    first, x, before, after = upper_envelopes(pool, a, b)
    order = np.argsort(x, kind="stable")
    x = x[order]
    stats = pool.stats[first].sum(axis=0)
    running = stats + np.cumsum(pool.stats[after[order]] - pool.stats[before[order]], axis=0)
    ends = np.flatnonzero(np.append(x[1:] != x[:-1], True)) if len(x) else np.array([], int)
    breaks = x[ends]
    scores = np.atleast_1d(metric.score(np.vstack([stats, running[ends]])))
    lo = np.concatenate([[-np.inf], breaks])
    hi = np.concatenate([breaks, [np.inf]])
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


def coordinate_ascent(pool: FlatPool, metric: Metric, start: np.ndarray, settings: MertSettings,
                      rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Line searches along each coordinate then random unit directions, moving after each,
    until a sweep gains less than ``settings.epsilon``."""
    d = pool.features.shape[1]
    w = np.asarray(start, dtype=np.float64).copy()
    score = score_weights(pool, metric, w)
    for _ in range(settings.max_sweeps):
        randoms = rng.standard_normal((settings.random_directions, d))
        randoms /= np.linalg.norm(randoms, axis=1, keepdims=True)
        before = score
        for u in np.vstack([np.eye(d), randoms]):
            gamma, new = line_search(pool, metric, w, u)
            if new > score:
                w, score = w + gamma * u, new
        if score - before < settings.epsilon:
            break
    return w, score


def optimise(pool: FlatPool, metric: Metric, start: np.ndarray, settings: MertSettings,
             rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Best of coordinate ascent from ``start`` and ``settings.restarts`` random points."""
    d = pool.features.shape[1]
    starts = [np.asarray(start, dtype=np.float64)]
    starts += list(rng.uniform(-1.0, 1.0, size=(settings.restarts, d)))
    best_w, best_score = None, -np.inf
    for point in starts:
        w, score = coordinate_ascent(pool, metric, point, settings, rng)
        if score > best_score:  # first start point wins ties
            best_w, best_score = w, score
    best_w = normalise(best_w)  # rescoring guards against a sliver interval lost to rounding
    return best_w, score_weights(pool, metric, best_w)


def mert_iteration(pool: NBestPool, start_weights: np.ndarray, settings: MertSettings,
                   rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """One MERT optimisation over the whole pool: ``(L1-normalised weights, score)``.

    ``score`` is the metric's higher-is-better score (BLEU, -TER or -TERBLEU as fractions).
    """
    metric = get_metric(settings.metric)
    if pool.n_stats != metric.n_stats:
        raise ValueError(f"pool has {pool.n_stats} statistics per hypothesis; "
                         f"{metric.name} needs {metric.n_stats}")
    if len(start_weights) != pool.n_features:
        raise ValueError(f"{len(start_weights)} start weights for {pool.n_features} features")
    return optimise(pool.flat(), metric, start_weights, settings, rng)


def iteration_rng(settings: MertSettings, iteration: int) -> np.random.Generator:
    """The generator for outer iteration ``iteration``, from ``settings.seed`` alone."""
    return np.random.default_rng([settings.seed, iteration])


def stopping_reason(iteration: int, n_new: int, previous_weights: np.ndarray | None,
                    weights: np.ndarray, settings: MertSettings) -> str | None:
    """Why the outer loop stops after completed iteration ``iteration`` (1-based), or None.

    Stops when the latest n-best lists added no new hypothesis to the pool, when no
    (L1-normalised) weight moved by ``epsilon`` or more, or after ``max_iterations``.
    """
    if n_new == 0:
        return "no new hypotheses in the n-best lists"
    if previous_weights is not None and np.max(
            np.abs(normalise(weights) - normalise(previous_weights))) < settings.epsilon:
        return f"weights moved less than {settings.epsilon}"
    if iteration >= settings.max_iterations:
        return f"reached {settings.max_iterations} iterations"
    return None
