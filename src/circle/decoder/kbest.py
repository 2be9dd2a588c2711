"""Lazy unique k-best extraction over the +LM hypergraph (Huang & Chiang 2005, Algorithm 3).

Every node keeps its derivations found so far (best first) and a heap of candidates; the j-th
best derivation of a node is computed only when a parent asks for it. Edge scores are exact
(LM included), so derivation scores are exact and the lists are exactly sorted.

As in Algorithm 3, the 1-best of every node comes from the search: an antecedent's best
derivation scores exactly its item's ``inside`` score, so a candidate built on 1-best antecedents
is scored without visiting them, and its antecedents' derivations are looked up only when it is
popped. The extraction therefore visits the nodes of the derivations it pops, not the whole
hypergraph.

Uniqueness by output string is enforced at every node, not only at the root: two derivations
of one node with the same yield share the node's LM boundary summary, so every extension of
the worse one is matched by an equal-string, better-scoring extension of the better one.
Dropping it therefore keeps, for each distinct output string, its best derivation.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Protocol


class Node(Protocol):
    """A hypergraph node: its incoming hyperedges and the score of its best derivation."""

    edges: list
    inside: float


class Derivation:
    """A derivation of a node: its top edge, the ranks of its antecedents' derivations.

    ``children`` and ``words`` are filled when the derivation is popped at its node (every
    derivation handed out has been).
    """

    __slots__ = ("score", "edge", "ranks", "children", "words")

    def __init__(self, score: float, edge, ranks: tuple[int, ...]):
        self.score = score
        self.edge = edge
        self.ranks = ranks
        self.children: tuple[Derivation, ...] = ()
        self.words: tuple[str, ...] = ()


class _NodeState:
    __slots__ = ("derivations", "candidates", "seen", "yields", "pending")

    def __init__(self) -> None:
        self.derivations: list[Derivation] = []
        self.candidates: list[tuple[float, int, Derivation]] = []
        self.seen: set[tuple[object, tuple[int, ...]]] = set()
        self.yields: set[tuple[str, ...]] = set()
        self.pending: Derivation | None = None


class KBest:
    """Unique k-best derivations of the nodes of one hypergraph, computed lazily."""

    def __init__(self) -> None:
        self._states: dict[int, _NodeState] = {}
        self._tiebreak = itertools.count()

    def best(self, node: Node, k: int) -> list[Derivation]:
        """Up to ``k`` best derivations of ``node`` with distinct yields, best first."""
        self.get(node, k - 1)
        return self._states[id(node)].derivations[:k]

    def get(self, node: Node, rank: int) -> Derivation | None:
        """The ``rank``-th best (0-based) unique derivation of ``node``, None if none."""
        state = self._states.get(id(node))
        if state is None:
            state = self._states[id(node)] = _NodeState()
            for edge in node.edges:
                self._push(state, edge, (0,) * len(edge.tails))
        while len(state.derivations) <= rank:
            if state.pending is not None:
                self._push_successors(state, state.pending)
                state.pending = None
            if not state.candidates:
                return None
            derivation = heapq.heappop(state.candidates)[2]
            state.pending = derivation
            self._complete(derivation)
            if derivation.words not in state.yields:
                state.yields.add(derivation.words)
                state.derivations.append(derivation)
        return state.derivations[rank]

    def features(self, derivation: Derivation, size: int, lm_index: int,
                 target_index: int) -> list[float]:
        """A derivation's feature vector of ``size`` values: the sum over its edges of their
        rules' values, with their LM scores at ``lm_index`` and their targeting values at
        ``target_index``."""
        values = [0.0] * size
        stack = [derivation]
        while stack:
            d = stack.pop()
            edge = d.edge
            for i, value in enumerate(edge.rule.values):
                values[i] += value
            values[lm_index] += edge.lm
            values[target_index] += edge.miss
            stack.extend(d.children)
        return values

    def _push_successors(self, state: _NodeState, derivation: Derivation) -> None:
        ranks = derivation.ranks
        for i in range(len(ranks)):
            self._push(state, derivation.edge, ranks[:i] + (ranks[i] + 1,) + ranks[i + 1:])

    def _push(self, state: _NodeState, edge, ranks: tuple[int, ...]) -> None:
        key = (edge, ranks)
        if key in state.seen:
            return
        state.seen.add(key)
        score = edge.score
        for tail, rank in zip(edge.tails, ranks, strict=True):
            if rank == 0:
                score += tail.inside  # the score of its best derivation, bit for bit
            else:
                child = self.get(tail, rank)
                if child is None:
                    return
                score += child.score
        heapq.heappush(state.candidates,
                       (-score, next(self._tiebreak), Derivation(score, edge, ranks)))

    def _complete(self, derivation: Derivation) -> None:
        """Look up a popped derivation's antecedent derivations and spell out its words."""
        children = tuple(self.get(tail, rank)
                         for tail, rank in zip(derivation.edge.tails, derivation.ranks,
                                               strict=True))
        words: list[str] = []
        for symbol in derivation.edge.rule.target:
            if symbol.__class__ is str:
                words.append(symbol)
            else:
                words.extend(children[symbol].words)
        derivation.children = children
        derivation.words = tuple(words)
