"""The +LM hypergraph of one search as arrays, each edge with its feature vector.

What forest MERT (Kumar, Macherey, Dyer & Och 2009; :mod:`circle.tune.forest`) reads: the
search's chart items and edges (either engine's, :meth:`Decoder.decode_hypergraph
<circle.decoder.search.Decoder.decode_hypergraph>`) as picklable arrays, so that a worker process
can send them to the tuning loop. Only items that some derivation of the goal uses are kept.

An edge's feature vector is counted as :meth:`KBest.features <circle.decoder.kbest.KBest.features>`
counts it (and its compiled twin): its rule's values, its LM score at the ``lm`` feature and its
targeting value at the ``target`` feature; a derivation's feature vector is the sum over its
edges, so a k-best hypothesis' features are the sum over its derivation's edges.

The search pruned its cubes (Chiang 2007 §5.2), so the hypergraph holds the derivations that
cube pruning kept under the weights it was searched with, not every derivation of the grammar.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Target = tuple[str | int, ...]
"""A rule's target side: words, and for a nonterminal the index of its edge's antecedent."""


@dataclass(frozen=True)
class Hypergraph:
    """Nodes in topological order (antecedents first, the goal last); node ``v`` owns edges
    ``node_end[v - 1]:node_end[v]``. Per edge: its antecedent nodes (``tails``, −1 past its
    arity), its feature vector (``features``) and its rule's target side, number
    ``edge_target[e]`` of the distinct ones: target ``t`` is
    ``symbols[target_end[t - 1]:target_end[t]]``, a word ``words[s]`` for ``s`` ≥ 0 and the
    edge's antecedent ``-1 - s`` otherwise."""

    node_end: np.ndarray  # (nodes,) int64
    tails: np.ndarray  # (edges, max arity) int64
    features: np.ndarray  # (edges, features) float64
    edge_target: np.ndarray  # (edges,) int64
    target_end: np.ndarray  # (targets,) int64
    symbols: np.ndarray  # int64
    words: list[str]

    @property
    def nodes(self) -> int:
        return len(self.node_end)

    @property
    def edges(self) -> int:
        return len(self.edge_target)

    def target(self, edge: int) -> Target:
        """The target side of ``edge``'s rule."""
        t = int(self.edge_target[edge])
        return tuple(self.words[s] if s >= 0 else -1 - s for s in
                     self.symbols[self.target_end[t - 1] if t else 0:self.target_end[t]].tolist())

    @classmethod
    def from_chart(cls, goal, items: Sequence, size: int, lm_index: int,
                   target_index: int) -> Hypergraph:
        """The hypergraph of ``goal`` over chart ``items`` (antecedents first), feature vectors
        of ``size`` values with the LM score at ``lm_index`` and the targeting value at
        ``target_index`` (as :meth:`KBest.features
        <circle.decoder.kbest.KBest.features>`)."""
        nodes = [*items, goal]
        number = {id(node): i for i, node in enumerate(nodes)}
        used = [False] * len(nodes)
        used[-1] = True
        for i in range(len(nodes) - 1, -1, -1):
            if used[i]:
                for edge in nodes[i].edges:
                    for tail in edge.tails:
                        used[number[id(tail)]] = True
        kept = [i for i, flag in enumerate(used) if flag]
        renumber = {i: v for v, i in enumerate(kept)}
        rules: dict[int, int] = {}
        vocabulary: dict[str, int] = {}
        symbols: list[int] = []
        target_end: list[int] = []
        values: list[tuple[float, ...]] = []
        node_end, edge_target, tails, lm, miss = [], [], [], [], []
        for i in kept:
            for edge in nodes[i].edges:
                rule = edge.rule
                index = rules.get(id(rule))
                if index is None:
                    index = rules[id(rule)] = len(values)
                    symbols.extend(vocabulary.setdefault(symbol, len(vocabulary))
                                   if isinstance(symbol, str) else -1 - symbol
                                   for symbol in rule.target)
                    target_end.append(len(symbols))
                    values.append(tuple(rule.values))
                edge_target.append(index)
                tails.append([renumber[number[id(tail)]] for tail in edge.tails])
                lm.append(edge.lm)
                miss.append(edge.miss)
            node_end.append(len(edge_target))
        arity = max((len(t) for t in tails), default=0)
        tail_array = np.full((len(tails), arity), -1, dtype=np.int64)
        for e, antecedents in enumerate(tails):
            tail_array[e, :len(antecedents)] = antecedents
        edge_target_array = np.array(edge_target, dtype=np.int64)
        features = np.array(values, dtype=np.float64).reshape(len(values), size)[
            edge_target_array]
        features[:, lm_index] += np.array(lm, dtype=np.float64)
        features[:, target_index] += np.array(miss, dtype=np.float64)
        return cls(np.array(node_end, dtype=np.int64), tail_array, features,
                   edge_target_array, np.array(target_end, dtype=np.int64),
                   np.array(symbols, dtype=np.int64), list(vocabulary))
