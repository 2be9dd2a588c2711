"""MERT over the decoder's hypergraph (Kumar, Macherey, Dyer & Och 2009, §3; Macherey et al.
2008 for lattices), besides the n-best pool of :mod:`circle.tune.mert`.

Along ``w + gamma * d`` every derivation's model score is a line whose intercept and slope are
the sums over its edges of ``w · f_e`` and ``d · f_e`` (``f_e`` the edge's feature vector,
:class:`~circle.decoder.hypergraph.Hypergraph`). :func:`envelope` computes the upper envelope of
all derivations of the goal bottom-up, without enumerating them: a hyperedge's envelope is the
Minkowski sum of its antecedents' envelopes plus its own line (merge their breakpoints, add the
lines), and a node's envelope is the upper envelope of the union of its incoming hyperedges'
(a sweep over their lines by slope). Each interval of the goal's envelope is the 1-best
derivation of the forest for the gammas it covers, and its output string is spelled from
back-pointers.

The envelope is over derivations, as the decoder's 1-best is: a string may appear on it through
a derivation that is not its best at ``w`` (an n-best list keeps one derivation per string,
the best at ``w``). The hypergraph is the one cube pruning kept at the weights it was searched
with, so forest MERT optimises over those pruned derivations, as Kumar et al. do.

:class:`ForestPool` makes the candidates of one segment in a line search the union of its
current forest's envelope and its pooled n-best rows (the lists of every iteration); the output
strings on the envelopes are scored on demand against their own references (few distinct ones
per segment and direction) and kept. It has the interface :func:`circle.tune.mert.line_search`,
:func:`~circle.tune.mert.coordinate_ascent` and :func:`~circle.tune.mert.optimise` read, so
the exact line search and its interval logic are the n-best MERT's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, MutableMapping, Sequence
from dataclasses import dataclass

import numpy as np

from circle.decoder.hypergraph import Hypergraph
from circle.tune.mert import FlatPool, Lines, best_rows

Statistics = Callable[[list[tuple[Hashable, str]]], np.ndarray]
"""``statistics([(segment_id, text), ...])``: each output's metric statistics against the
references of its segment (and of itself, for references that depend on the hypothesis)."""


@dataclass(frozen=True)
class Envelope:
    """The upper envelope of a forest's derivations along a line: interval ``i`` starts at
    ``x[i]`` (``x[0]`` = −inf) and ends where the next starts; on it the derivation with model
    score ``a[i] + gamma * b[i]``, output ``outputs[i]`` and feature vector ``features[i]`` is
    the 1-best."""

    x: np.ndarray
    a: np.ndarray
    b: np.ndarray
    outputs: list[str]
    features: np.ndarray


def _upper_hull(lines: list[tuple[float, float, tuple[int, ...]]]
                ) -> tuple[list[float], list[float], list[float], list[tuple[int, ...]]]:
    """The upper envelope of the lines ``(a, b, back-pointer)``: its intervals' left ends,
    lines and back-pointers, by increasing gamma. Among parallel lines the highest, then the
    first given, is kept; where lines cross at one point the steepest wins."""
    lines.sort(key=lambda line: (line[1], -line[0]))  # stable: the first given among equals
    xs: list[float] = []
    intercepts: list[float] = []
    slopes: list[float] = []
    pointers: list[tuple[int, ...]] = []
    for a, b, pointer in lines:
        if slopes and b == slopes[-1]:
            continue  # parallel to the top, and not above it
        x = -math.inf
        while slopes:
            x = (intercepts[-1] - a) / (b - slopes[-1])
            if x > xs[-1]:
                break
            xs.pop(), intercepts.pop(), slopes.pop(), pointers.pop()
            x = -math.inf
        xs.append(x)
        intercepts.append(a)
        slopes.append(b)
        pointers.append(pointer)
    return xs, intercepts, slopes, pointers


def envelope(graph: Hypergraph, weights: np.ndarray, direction: np.ndarray) -> Envelope:
    """The upper envelope of the goal's derivations along ``weights + gamma * direction``
    (Kumar et al. 2009, Algorithm 1 with the sweep of their §3.1 for a node's union)."""
    a_edge = (graph.features @ weights).tolist()
    b_edge = (graph.features @ direction).tolist()
    tails = graph.tails.tolist()
    node_x: list[list[float]] = []
    node_a: list[list[float]] = []
    node_b: list[list[float]] = []
    node_p: list[list[tuple[int, ...]]] = []
    start = 0
    for end in graph.node_end.tolist():
        lines: list[tuple[float, float, tuple[int, ...]]] = []
        for e in range(start, end):
            a, b = a_edge[e], b_edge[e]
            antecedents = [t for t in tails[e] if t >= 0]
            if not antecedents:
                lines.append((a, b, (e,)))
            elif len(antecedents) == 1:
                t = antecedents[0]
                lines.extend((a + ta, b + tb, (e, i))
                             for i, (ta, tb) in enumerate(zip(node_a[t], node_b[t], strict=True)))
            else:
                lines.extend(_minkowski(e, a, b, antecedents, node_x, node_a, node_b))
        x, a_node, b_node, pointers = _upper_hull(lines)
        node_x.append(x)
        node_a.append(a_node)
        node_b.append(b_node)
        node_p.append(pointers)
        start = end
    goal = len(node_x) - 1
    intervals = range(len(node_p[goal]))
    return Envelope(np.array(node_x[goal]), np.array(node_a[goal]), np.array(node_b[goal]),
                    [" ".join(_words(graph, node_p, goal, i)) for i in intervals],
                    np.array([_features(graph, node_p, goal, i) for i in intervals]))


def score_range(graph: Hypergraph, scores: np.ndarray) -> tuple[float, float]:
    """The lowest and highest sum of the edges' ``scores`` over the goal's derivations."""
    scores = scores.tolist()
    low: list[float] = []
    high: list[float] = []
    start = 0
    for end in graph.node_end.tolist():
        lows, highs = [], []
        for e in range(start, end):
            tails = [t for t in graph.tails[e].tolist() if t >= 0]
            lows.append(scores[e] + sum(low[t] for t in tails))
            highs.append(scores[e] + sum(high[t] for t in tails))
        low.append(min(lows))
        high.append(max(highs))
        start = end
    return low[-1], high[-1]


def _minkowski(edge: int, a: float, b: float, antecedents: list[int], node_x, node_a, node_b
               ) -> list[tuple[float, float, tuple[int, ...]]]:
    """The lines of an edge's envelope: its own line plus, on each interval of the merged
    breakpoints of its antecedents' envelopes, the sum of their lines there."""
    ranks = [0] * len(antecedents)
    lines = []
    while True:
        total_a, total_b = a, b
        for t, i in zip(antecedents, ranks, strict=True):
            total_a += node_a[t][i]
            total_b += node_b[t][i]
        lines.append((total_a, total_b, (edge, *ranks)))
        nexts = [node_x[t][i + 1] if i + 1 < len(node_x[t]) else math.inf
                 for t, i in zip(antecedents, ranks, strict=True)]
        step = min(nexts)
        if step == math.inf:
            return lines
        ranks = [i + 1 if x == step else i for i, x in zip(ranks, nexts, strict=True)]


def _features(graph: Hypergraph, pointers: list[list[tuple[int, ...]]], node: int,
              interval: int) -> np.ndarray:
    """The feature vector of the derivation on ``interval`` of ``node``'s envelope, its edges'
    summed in the order :meth:`KBest.features <circle.decoder.kbest.KBest.features>` sums them
    (so that a derivation in both a k-best list and a forest gets the same bits)."""
    values = np.zeros(graph.features.shape[1])
    stack = [(node, interval)]
    while stack:
        node, interval = stack.pop()
        edge, *ranks = pointers[node][interval]
        values += graph.features[edge]
        stack.extend(zip(graph.tails[edge].tolist()[:len(ranks)], ranks, strict=True))
    return values


def _words(graph: Hypergraph, pointers: list[list[tuple[int, ...]]], node: int,
           interval: int) -> list[str]:
    """The output words of the derivation on ``interval`` of ``node``'s envelope."""
    edge, *ranks = pointers[node][interval]
    children = [_words(graph, pointers, tail, rank)
                for tail, rank in zip(graph.tails[edge].tolist()[:len(ranks)], ranks,
                                      strict=True)]
    words: list[str] = []
    for symbol in graph.targets[graph.edge_target[edge]]:
        if isinstance(symbol, str):
            words.append(symbol)
        else:
            words.extend(children[symbol])
    return words


class ForestPool:
    """An n-best pool and one forest per segment: a line search's candidates of a segment are
    its pooled rows and the intervals of its forest's envelope (module doc).

    ``pool`` holds the tuned features' columns (fixed ones in its ``offset``); the forests hold
    every feature, ``weights`` gives the fixed ones' values and ``free`` marks the tuned ones.
    ``forests[k]`` is the forest of the pool's segment ``k`` (None: rows only). Outputs of the
    envelopes are scored with ``statistics`` and kept in ``known``, keyed (segment id, text),
    which may be shared with the pool's builder.
    """

    def __init__(self, pool: FlatPool, forests: Sequence[Hypergraph | None],
                 weights: np.ndarray, free: np.ndarray, statistics: Statistics,
                 known: MutableMapping[tuple[Hashable, str], np.ndarray] | None = None):
        if len(forests) != len(pool.segment_ids):
            raise ValueError(f"{len(forests)} forests for {len(pool.segment_ids)} segments")
        self.pool, self.forests = pool, list(forests)
        self.weights, self.free = np.asarray(weights, dtype=np.float64), np.asarray(free, bool)
        self.statistics = statistics
        self.known = {} if known is None else known

    @property
    def n_features(self) -> int:
        return self.pool.features.shape[1]

    def lines(self, weights: np.ndarray, direction: np.ndarray) -> Lines:
        """The pooled rows' lines, then per segment its forest envelope's, grouped by
        segment (pooled rows first: they win ties)."""
        full_w, full_d = self.weights.copy(), np.zeros_like(self.weights)
        full_w[self.free], full_d[self.free] = weights, direction
        segments, features, keys = [], [], []
        for k, graph in enumerate(self.forests):
            if graph is not None:
                found = envelope(graph, full_w, full_d)
                segments.append(np.full(len(found.outputs), k))
                features.append(found.features)
                keys.extend((self.pool.segment_ids[k], text) for text in found.outputs)
        if not keys:
            return self.pool.lines(weights, direction)
        missing = list(dict.fromkeys(key for key in keys if key not in self.known))
        if missing:
            self.known.update(zip(missing, np.asarray(self.statistics(missing),
                                                      dtype=np.float64), strict=True))
        # The envelopes' derivations are scored exactly as the pool's rows, in one product:
        # one that is also a pooled row gets the same line, not one that crosses it near 0.
        derived = np.vstack(features)
        pool = self.pool
        fixed = np.zeros(len(derived)) if pool.offset is None \
            else derived[:, ~self.free] @ self.weights[~self.free]
        every = FlatPool(np.vstack([pool.features, derived[:, self.free]]),
                         np.vstack([pool.stats, [self.known[key] for key in keys]]),
                         pool.starts, np.concatenate([pool.segment, *segments]),
                         pool.segment_ids,
                         None if pool.offset is None else np.concatenate([pool.offset, fixed]))
        lines = every.lines(weights, direction)
        order = np.argsort(every.segment, kind="stable")
        segment = every.segment[order]
        return Lines(np.searchsorted(segment, np.arange(len(self.forests))), segment,
                     lines.a[order], lines.b[order], lines.stats[order])

    def fixed_term_constant(self) -> bool:
        """Whether the fixed features' weighted sum is one value per segment, over its pooled
        rows and every derivation of its forest: then rescaling the tuned weights changes no
        1-best (the tuning loop normalises them only then)."""
        fixed, pool = ~self.free, self.pool
        offset = np.zeros(len(pool.segment)) if pool.offset is None else pool.offset
        ends = np.append(pool.starts[1:], len(offset))
        for graph, start, end in zip(self.forests, pool.starts, ends, strict=True):
            if graph is not None:
                low, high = score_range(graph, graph.features[:, fixed] @ self.weights[fixed])
                if low != high or np.any(offset[start:end] != low):
                    return False
        return True

    def one_best_stats(self, weights: np.ndarray) -> np.ndarray:
        """The statistics of each segment's 1-best at ``weights``: the highest of its rows and
        its forest's Viterbi derivation (a row first on ties)."""
        lines = self.lines(weights, np.zeros_like(weights))
        return lines.stats[best_rows(lines.segment, lines.starts, [lines.a])]
