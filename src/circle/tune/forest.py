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


NodeEnvelopes = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""Every node's upper envelope, ``(starts, x, a, b, edge, ranks)``: node ``v``'s intervals are
rows ``starts[v]:starts[v + 1]``; interval ``i`` begins at ``x[i]`` (−inf for a node's first),
its line is ``a[i] + gamma * b[i]``, its derivation's top edge ``edge[i]`` and the interval of
that edge's antecedent ``j`` it reads is ``ranks[i, j]`` (counted within the antecedent's; −1
past the edge's arity)."""


def _upper_hull(lines: list[tuple[float, float, int, list[int]]], xs: list[float],
                intercepts: list[float], slopes: list[float], pointers: list[tuple[int, list[int]]]
                ) -> None:
    """Append the upper envelope of the lines ``(a, b, edge, ranks)`` to the lists of every
    node's intervals (the twin of the compiled sweep, :mod:`circle.tune._forest`)."""
    lines.sort(key=lambda line: (line[1], -line[0]))  # stable: the first made among equals
    top = len(xs)
    for a, b, edge, ranks in lines:
        if len(slopes) > top and b == slopes[-1]:
            continue  # parallel to the top, and not above it
        x = -math.inf
        while len(slopes) > top:
            x = (intercepts[-1] - a) / (b - slopes[-1])
            if x > xs[-1]:
                break
            xs.pop(), intercepts.pop(), slopes.pop(), pointers.pop()
            x = -math.inf
        xs.append(x)
        intercepts.append(a)
        slopes.append(b)
        pointers.append((edge, ranks))


def reference_node_envelopes(node_end: np.ndarray, tails: np.ndarray, a_edge: np.ndarray,
                             b_edge: np.ndarray) -> NodeEnvelopes:
    """Every node's upper envelope (:data:`NodeEnvelopes`) in Python, antecedents first: the
    compiled :func:`circle.tune._forest.node_envelopes`' twin (same operations, same results).
    A node's lines are its edges', each edge's its own line plus, on each interval of its
    antecedents' merged breakpoints, the sum of their lines there (the Minkowski sum)."""
    a_list, b_list, tail_list = a_edge.tolist(), b_edge.tolist(), tails.tolist()
    arity = tails.shape[1]
    starts = [0]
    xs: list[float] = []
    intercepts: list[float] = []
    slopes: list[float] = []
    pointers: list[tuple[int, list[int]]] = []
    first = 0
    for end in node_end.tolist():
        lines: list[tuple[float, float, int, list[int]]] = []
        for e in range(first, end):
            antecedents = [t for t in tail_list[e] if t >= 0]
            index = [starts[t] for t in antecedents]
            while True:
                total_a, total_b = a_list[e], b_list[e]
                for i in index:
                    total_a += intercepts[i]
                    total_b += slopes[i]
                ranks = [i - starts[t] for i, t in zip(index, antecedents, strict=True)]
                lines.append((total_a, total_b, e, ranks + [-1] * (arity - len(ranks))))
                following = [xs[i + 1] if i + 1 < starts[t + 1] else math.inf
                             for i, t in zip(index, antecedents, strict=True)]
                step = min(following, default=math.inf)
                if step == math.inf:
                    break
                index = [i + 1 if x == step else i for i, x in zip(index, following, strict=True)]
        first = end
        _upper_hull(lines, xs, intercepts, slopes, pointers)
        starts.append(len(xs))
    return (np.array(starts, dtype=np.int64), np.array(xs), np.array(intercepts),
            np.array(slopes), np.array([e for e, _ in pointers], dtype=np.int64),
            np.array([r for _, r in pointers], dtype=np.int64).reshape(len(pointers), arity))


def reference_derivations(graph: Hypergraph, nodes: NodeEnvelopes, first: int, last: int
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The derivations on rows ``first:last`` of ``nodes`` in Python, the compiled
    :func:`circle.tune._forest.derivations`' twin: ``(sums, word_end, word_ids)``, row
    ``first + i``'s feature vector ``sums[i]``, its edges' added one after the other in the
    order :meth:`KBest.features <circle.decoder.kbest.KBest.features>` visits them (so that a
    derivation in both a k-best list and a forest gets the same bits), and its output, word ids
    ``word_ids[word_end[i - 1]:word_end[i]]`` (:attr:`Hypergraph.words`)."""
    starts, edges, ranks = nodes[0].tolist(), nodes[4].tolist(), nodes[5].tolist()
    tails, symbols = graph.tails.tolist(), graph.symbols.tolist()
    ends = [0, *graph.target_end.tolist()]
    edge_target = graph.edge_target.tolist()

    def children(row: int) -> list[int]:
        return [starts[t] + r for t, r in zip(tails[edges[row]], ranks[row], strict=True)
                if t >= 0]

    def spell(row: int) -> list[int]:
        parts = children(row)
        t = edge_target[edges[row]]
        words: list[int] = []
        for symbol in symbols[ends[t]:ends[t + 1]]:
            words.extend([symbol] if symbol >= 0 else spell(parts[-1 - symbol]))
        return words

    sums = np.zeros((last - first, graph.features.shape[1]))
    word_ids: list[int] = []
    word_end: list[int] = []
    for i, row in enumerate(range(first, last)):
        stack = [row]
        while stack:
            top = stack.pop()
            sums[i] += graph.features[edges[top]]
            stack.extend(children(top))
        word_ids += spell(row)
        word_end.append(len(word_ids))
    return sums, np.array(word_end, dtype=np.int64), np.array(word_ids, dtype=np.int64)


def _compiled():
    """:mod:`circle.tune._forest`, imported when first needed: runs without forests never
    need it."""
    try:
        from circle.tune import _forest
    except ImportError as error:
        raise ImportError("forest MERT's compiled envelopes circle.tune._forest are not built: "
                          "run `pip install -e .` in the repository") from error
    return _forest


def node_envelopes(graph: Hypergraph, weights: np.ndarray, direction: np.ndarray,
                   compiled: bool = True) -> NodeEnvelopes:
    """Every node's upper envelope along ``weights + gamma * direction`` (compiled, or its
    Python twin)."""
    a_edge, b_edge = graph.features @ weights, graph.features @ direction
    if not compiled:
        return reference_node_envelopes(graph.node_end, graph.tails, a_edge, b_edge)
    return _compiled().node_envelopes(graph.node_end, np.ascontiguousarray(graph.tails),
                                      np.ascontiguousarray(a_edge),
                                      np.ascontiguousarray(b_edge))


def envelope(graph: Hypergraph, weights: np.ndarray, direction: np.ndarray,
             compiled: bool = True) -> Envelope:
    """The upper envelope of the goal's derivations along ``weights + gamma * direction``
    (Kumar et al. 2009, Algorithm 1: bottom-up, a node's envelope the sweep over the lines of
    its incoming edges' envelopes), each interval with its derivation's output and features."""
    nodes = node_envelopes(graph, weights, direction, compiled)
    starts, x, a, b, edges, ranks = nodes
    first, last = int(starts[-2]), int(starts[-1])
    if compiled:
        sums, word_end, word_ids = _compiled().derivations(
            starts, edges, ranks, np.ascontiguousarray(graph.tails), graph.edge_target,
            graph.target_end, graph.symbols, np.ascontiguousarray(graph.features), first, last)
    else:
        sums, word_end, word_ids = reference_derivations(graph, nodes, first, last)
    words = [graph.words[w] for w in word_ids.tolist()]
    bounds = [0, *word_end.tolist()]
    return Envelope(x[first:last], a[first:last], b[first:last],
                    [" ".join(words[bounds[i]:bounds[i + 1]]) for i in range(last - first)],
                    sums)


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


def _scores(features: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``features @ weights`` row by row in one loop whatever a row's position (a BLAS product
    may round a row by the kernel its position picks): equal rows get equal bits."""
    return np.einsum("ij,j->i", features, weights)


class ForestPool:
    """An n-best pool and one forest per segment: a line search's candidates of a segment are
    its pooled rows and the intervals of its forest's envelope (module doc).

    ``pool`` and the forests hold every feature; ``free`` marks the tuned ones, which the
    search moves, and ``weights`` gives the others' values. ``forests[k]`` is the forest of the
    pool's segment ``k`` (None: rows only). Outputs of the envelopes are scored with
    ``statistics`` and kept in ``known``, keyed (segment id, text), which may be shared with the
    pool's builder.
    """

    def __init__(self, pool: FlatPool, forests: Sequence[Hypergraph | None],
                 weights: np.ndarray, free: np.ndarray, statistics: Statistics,
                 known: MutableMapping[tuple[Hashable, str], np.ndarray] | None = None):
        if len(forests) != len(pool.segment_ids):
            raise ValueError(f"{len(forests)} forests for {len(pool.segment_ids)} segments")
        if pool.offset is not None:
            raise ValueError("a forest pool holds every feature, fixed ones too: no offset")
        self.pool, self.forests = pool, list(forests)
        self.weights, self.free = np.asarray(weights, dtype=np.float64), np.asarray(free, bool)
        self.statistics = statistics
        self.known = {} if known is None else known

    @property
    def n_features(self) -> int:
        return int(self.free.sum())

    def lines(self, weights: np.ndarray, direction: np.ndarray) -> Lines:
        """The lines along ``weights + gamma * direction`` (tuned features) of the pooled rows,
        then per segment of its forest envelope's derivations, grouped by segment (pooled rows
        first: they win ties). A derivation that is also a pooled row gets the same bits, and
        so the same line, not one that crosses it near 0."""
        full_w, full_d = self.weights.copy(), np.zeros_like(self.weights)
        full_w[self.free], full_d[self.free] = weights, direction
        segments, features, keys = [self.pool.segment], [self.pool.features], []
        for k, graph in enumerate(self.forests):
            if graph is not None:
                found = envelope(graph, full_w, full_d)
                segments.append(np.full(len(found.outputs), k))
                features.append(found.features)
                keys.extend((self.pool.segment_ids[k], text) for text in found.outputs)
        missing = list(dict.fromkeys(key for key in keys if key not in self.known))
        if missing:
            self.known.update(zip(missing, np.asarray(self.statistics(missing),
                                                      dtype=np.float64), strict=True))
        every = np.vstack(features)
        stats = np.vstack([self.pool.stats, *([[self.known[key] for key in keys]] if keys
                                              else [])])
        segment = np.concatenate(segments)
        order = np.argsort(segment, kind="stable")
        segment = segment[order]
        return Lines(np.searchsorted(segment, np.arange(len(self.forests))), segment,
                     _scores(every, full_w)[order], _scores(every, full_d)[order],
                     stats[order])

    def fixed_term_constant(self) -> bool:
        """Whether the fixed features' weighted sum is one value per segment, over its pooled
        rows and every derivation of its forest: then rescaling the tuned weights changes no
        1-best (the tuning loop normalises them only then)."""
        fixed, pool = ~self.free, self.pool
        terms = _scores(pool.features[:, fixed], self.weights[fixed])
        ends = np.append(pool.starts[1:], len(terms))
        for k, (start, end) in enumerate(zip(pool.starts, ends, strict=True)):
            values = set(terms[start:end].tolist())
            if self.forests[k] is not None:
                graph = self.forests[k]
                values.update(score_range(graph, _scores(graph.features[:, fixed],
                                                         self.weights[fixed])))
            if len(values) > 1:
                return False
        return True

    def one_best_stats(self, weights: np.ndarray) -> np.ndarray:
        """The statistics of each segment's 1-best at ``weights``: the highest of its rows and
        its forest's Viterbi derivation (a row first on ties)."""
        lines = self.lines(weights, np.zeros_like(weights))
        return lines.stats[best_rows(lines.segment, lines.starts, [lines.a])]
