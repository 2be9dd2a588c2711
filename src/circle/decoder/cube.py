"""Cube pruning of one chart cell (Chiang 2007 §5.2): the pure-Python reference search loop.

A cell is filled from cubes: each rule application (a source side with its nonterminal spans)
is a cube whose axes are the side's options, best first, and each antecedent cell's items,
best first. A heap of candidates, scored exactly with the LM as they are pushed
(:meth:`LanguageModel.combine <circle.decoder.lm.LanguageModel.combine>`), is popped at most
``pop_limit`` times, each pop pushing its unseen neighbours; ties go to the candidate pushed
first. Popped candidates with the same LM summary recombine into one :class:`Item` that keeps
all their incoming edges, so the cells form a hypergraph for :mod:`circle.decoder.kbest`.

:mod:`circle.decoder._cube` is the compiled twin of :class:`CubePruning` (``engine="cython"``
in :class:`~circle.decoder.model.DecoderSettings`). It performs the same floating-point
operations in the same order, so both give identical n-best lists; the tests check this. The
decoder makes options, fills cells and builds goal edges only through a :class:`CubePruning`'s
methods, so each engine keeps its own representation of options (the compiled one reads target
words from the grammar's arrays); items and edges of both have the attributes read outside the
loop (``edges``; ``rule``, ``miss``, ``tails``, ``score``, ``lm``).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Mapping

import kenlm
import numpy as np

from circle.decoder.chart import Span
from circle.decoder.grammar import Grammar, Rule
from circle.decoder.kbest import KBest
from circle.decoder.lm import LN10, LanguageModel


class Option:
    """A rule ready for one decoding: its targeting value and score, and its sort priority.

    ``score`` is the rule's exact local score without the LM (features · weights, targeting
    included); ``priority`` adds the weighted LM estimate of its target words.
    """

    __slots__ = ("rule", "miss", "score", "priority")

    def __init__(self, rule: Rule, miss: int, score: float, priority: float):
        self.rule = rule
        self.miss = miss
        self.score = score
        self.priority = priority


class Item:
    """A +LM chart item: a cell's derivations that share one LM summary (left words, right state).

    ``inside`` is the exact score of its best derivation, ``heuristic`` adds the weighted LM
    estimate of its left words; ``edges`` are all its incoming hyperedges.
    """

    __slots__ = ("inside", "heuristic", "left", "right", "length", "edges")

    def __init__(self, inside: float, heuristic: float, left: tuple[str, ...],
                 right: kenlm.State | None, length: int, edges: list[Edge]):
        self.inside = inside
        self.heuristic = heuristic
        self.left = left
        self.right = right
        self.length = length
        self.edges = edges


class Edge:
    """A hyperedge: a rule applied to antecedent items; ``score`` is its exact local score."""

    __slots__ = ("rule", "miss", "tails", "score", "lm")

    def __init__(self, rule: Rule, miss: int, tails: tuple[Item, ...], score: float, lm: float):
        self.rule = rule
        self.miss = miss
        self.tails = tails
        self.score = score
        self.lm = lm


Cube = tuple[list[Option], tuple[list[Item], ...]]
"""A cube: its options, best first, and per nonterminal the items of its cell, best first."""


class CubePruning:
    """The search loop of one decoder: fills chart cells, scores goal edges.

    ``lm_weight`` is the model's weight of the (natural-log) ``lm`` feature.
    """

    def __init__(self, lm: LanguageModel, lm_weight: float, pop_limit: int):
        self.lm = lm
        self.lm_weight = lm_weight
        self.pop_limit = pop_limit
        self._estimate_weight = lm_weight * LN10

    def fill(self, cubes: list[Cube]) -> list[Item]:
        """The items of one chart cell, best heuristic first."""
        heap: list[tuple] = []
        seen: set[tuple[int, tuple[int, ...]]] = set()
        tiebreak = itertools.count()
        for c, cube in enumerate(cubes):
            if cube[0] and all(cube[1]):
                corner = (0,) * (len(cube[1]) + 1)
                seen.add((c, corner))
                heap.append(self._candidate(cube, c, corner, next(tiebreak)))
        heapq.heapify(heap)
        items: dict[tuple, Item] = {}
        for _ in range(self.pop_limit):
            if not heap:
                break
            _, _, c, position, inside, heuristic, edge, left, right, length = heapq.heappop(heap)
            signature = (left, right)
            item = items.get(signature)
            if item is None:
                items[signature] = Item(inside, heuristic, left, right, length, [edge])
            else:
                item.edges.append(edge)
                if inside > item.inside:
                    item.heuristic += inside - item.inside
                    item.inside = inside
            rules, tails = cubes[c]
            for axis in range(len(position)):
                successor = position[:axis] + (position[axis] + 1,) + position[axis + 1:]
                size = len(rules) if axis == 0 else len(tails[axis - 1])
                if successor[axis] < size and (c, successor) not in seen:
                    seen.add((c, successor))
                    heapq.heappush(heap, self._candidate(cubes[c], c, successor,
                                                         next(tiebreak)))
        return sorted(items.values(), key=lambda item: -item.heuristic)

    def fill_span(self, applications: list[tuple[int, tuple[Span, ...]]],
                  options: Mapping[int, list[Option]], cells: Mapping[Span, list[Item]]
                  ) -> list[Item]:
        """The items of an X cell: one cube per application ``(key into options, spans of
        its nonterminals)``, whose antecedent items are those of ``cells``."""
        return self.fill([(options[index], tuple(map(cells.__getitem__, spans)))
                          for index, spans in applications])

    def sentence_edge(self, option: Option, tails: tuple[Item, ...]) -> Edge:
        """The edge of ``option`` over ``tails`` whose target is read after ⟨s⟩ and before
        ⟨/s⟩, every word scored exactly (the edge to the goal)."""
        lm = self.lm.combine(option.rule.target + ("</s>",), tails, sentence=True)[0] * LN10
        return Edge(option.rule, option.miss, tails, option.score + self.lm_weight * lm, lm)

    def options(self, grammar: Grammar, rows: np.ndarray, scores: np.ndarray,
                priorities: np.ndarray, misses: np.ndarray | None = None) -> list[Option]:
        """Options for grammar ``rows`` with their scores, priorities and targeting values
        (``misses``; None: untargeted)."""
        misses = [0] * len(rows) if misses is None else misses.tolist()
        return [Option(rule, miss, score, priority) for rule, score, priority, miss
                in zip(grammar.rules_at(rows.tolist()), scores.tolist(), priorities.tolist(),
                       misses, strict=True)]

    def option(self, rule: Rule, miss: int, score: float, priority: float) -> Option:
        """An option for a rule outside the grammar (glue, pass-through, goal)."""
        return Option(rule, miss, score, priority)

    def edge_scores(self, items: list[Item], weight: float) -> np.ndarray:
        """The scores of the edges of ``items`` without their targeting term (``weight`` ×
        ``miss``), item by item, edge by edge: what :meth:`retarget` adds a new one to."""
        return np.array([edge.score - weight * edge.miss for item in items for edge in item.edges],
                        dtype=np.float64)

    def retarget(self, items: list[Item], base: np.ndarray, target: frozenset[str],
                 weight: float) -> KBest:
        """Re-weight a hypergraph towards the words ``target`` (thesis eq. 5.1, rule-local):
        each edge's ``miss`` becomes the number of its rule's target words not in ``target``
        and its ``score`` its entry of ``base`` (:meth:`edge_scores` of the untargeted
        hypergraph) + ``weight`` × ``miss``; each item's ``inside`` becomes the best score of
        its edges plus their antecedents' ``inside``. ``items`` must come antecedents first.
        Returns the k-best extraction that reads the re-weighted hypergraph."""
        edges = sum(len(item.edges) for item in items)
        if edges != len(base):
            raise ValueError(f"{len(base)} edge scores for a hypergraph of {edges} edges")
        scores = iter(base.tolist())
        for item in items:
            best = -math.inf
            for edge in item.edges:
                edge.miss = sum(1 for symbol in edge.rule.target
                                if symbol.__class__ is str and symbol not in target)
                edge.score = next(scores) + weight * edge.miss
                total = edge.score
                for tail in edge.tails:
                    total += tail.inside
                best = max(best, total)
            item.inside = best
        return KBest()

    def estimates(self, grammar: Grammar, rows: np.ndarray) -> np.ndarray:
        """:meth:`LanguageModel.estimate <circle.decoder.lm.LanguageModel.estimate>` (log10)
        of the target side of each grammar row in ``rows``."""
        ids, offsets, vocabulary = grammar.target_ids, grammar.target_offsets, grammar.vocabulary
        return np.array([
            self.lm.estimate(tuple(vocabulary[i] if i >= 0 else i
                                   for i in ids[offsets[row]:offsets[row + 1]].tolist()))
            for row in rows.tolist()], dtype=np.float64)

    def _candidate(self, cube: Cube, c: int, position: tuple[int, ...], tiebreak: int) -> tuple:
        """Build the edge at ``position`` of cube ``c``, as a heap entry keyed by its heuristic."""
        rules, tails = cube
        option = rules[position[0]]
        antecedents = tuple(cell[rank] for cell, rank in zip(tails, position[1:], strict=True))
        exact, estimate, left, right, length = self.lm.combine(option.rule.target, antecedents)
        lm = exact * LN10
        score = option.score + self.lm_weight * lm
        inside = score
        for antecedent in antecedents:
            inside += antecedent.inside
        heuristic = inside + self._estimate_weight * estimate
        edge = Edge(option.rule, option.miss, antecedents, score, lm)
        return (-heuristic, tiebreak, c, position, inside, heuristic, edge, left, right, length)
