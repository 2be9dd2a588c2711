"""SCFG decoding: CKY+ chart, cube pruning with an integrated n-gram LM, unique k-best.

The search of Chiang (2007) §5: chart cells X(i, j) for spans up to the span limit and S(0, j)
for the glue rules S → ⟨S X, S X⟩, S → ⟨X, X⟩. Each cell is filled by cube pruning (§5.2),
the inner loop of the search, in one of two engines with identical results: the compiled
:mod:`circle.decoder._cube` (the default) or the pure-Python reference
:mod:`circle.decoder.cube`. Each engine also brings its CKY+ matcher
(:mod:`circle.decoder.chart`) and k-best extractor. Items with the same LM summary
(:mod:`circle.decoder.lm`) recombine; all their incoming edges are kept, so the cells form a
hypergraph from which :mod:`circle.decoder.kbest` reads the unique k-best list.

Before the search, each matched source side's rules are ranked by their score plus the weighted
LM estimate of their target words, as arrays over the grammar's rows (:class:`RankedRules`), and
only the ``options_limit`` best become :class:`~circle.decoder.cube.Option` objects: a side has
up to thousands of rules, a sentence about a thousand sides.

Targeting (thesis eq. 5.1) is rule-local: an application's value is the number of its target
words missing from T. :meth:`Decoder.prepare` does the target-independent work once per input
(rule matching, scoring, ranking); :meth:`Decoder.decode` then only re-ranks each side's rules
with the targeting term, so many targets per input are cheap. Cheaper still,
:meth:`Decoder.forest` keeps one search's hypergraph and :meth:`Decoder.decode_forest` re-weights
its edges towards each target and reads the k-best again, without a new search (exact within
the forest, whose pruning was not guided by that target). :meth:`Decoder.decode_hypergraph`
returns an untargeted k-best list with its search's hypergraph as arrays, each edge with its
feature vector, for forest MERT (:mod:`circle.tune.forest`).

A labelled (SAMT) grammar's chart has a cell per (span, left-hand side label), matched by
:func:`circle.decoder.chart.match` (the compiled matcher reads only X), and glue rules
S → ⟨S L, S L⟩, S → ⟨L, L⟩ for every label L (Zollmann & Venugopal 2006 §3); cube pruning
and the k-best are the same.

The chart is acyclic, so reference counting frees it; Python's cyclic garbage collector is
paused while a sentence is matched or decoded, because its passes over the ~10⁵ chart objects
of a sentence otherwise take half the decoding time.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import numpy as np

from circle.decoder.chart import Cell, Matches, Span, match
from circle.decoder.cube import Cube, CubePruning, Edge, Item, Option
from circle.decoder.grammar import UNLABELLED, Grammar, Rule, concatenated_ranges
from circle.decoder.hypergraph import Hypergraph
from circle.decoder.kbest import Derivation, KBest
from circle.decoder.lm import LN10, LanguageModel
from circle.decoder.model import DecoderSettings, Model
from circle.decoder.nbest import Hypothesis

if TYPE_CHECKING:
    from circle.decoder._cube import FlatForest

_P = ParamSpec("_P")
_R = TypeVar("_R")


def without_gc(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run ``method`` with the cyclic garbage collector paused (see the module docstring)."""
    @functools.wraps(method)
    def paused(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        enabled = gc.isenabled()
        gc.disable()
        try:
            return method(*args, **kwargs)
        finally:
            if enabled:
                gc.enable()
    return paused


def _best_per_side(values: np.ndarray, counts: np.ndarray, limit: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For ``values`` given side by side, ``counts[s]`` for side s: the positions sorted best
    first within each side (ties keep the given order), the positions of each side's ``limit``
    best (a prefix of that order per side, side by side), and how many each side keeps."""
    order = np.lexsort((-values, np.repeat(np.arange(len(counts)), counts)))
    kept = np.minimum(counts, limit)
    return order, order[concatenated_ranges(np.cumsum(counts) - counts, kept)], kept


class RankedRules:
    """One source side's rules under one weight vector, best priority first.

    Arrays over the side's grammar rows: ``rows``, their ``scores`` (features · weights, no LM)
    and ``priorities`` (score + weighted LM estimate of the target words); ``best`` holds the
    ``options_limit`` first as options.
    """

    __slots__ = ("rows", "scores", "priorities", "best")

    def __init__(self, rows: np.ndarray, scores: np.ndarray, priorities: np.ndarray,
                 best: list[Option]):
        self.rows = rows
        self.scores = scores
        self.priorities = priorities
        self.best = best


class RankedSides:
    """Several sides' :class:`RankedRules` as single arrays, so that one set of array
    operations re-ranks all of them towards a target.

    Only rows that some target could bring into their side's ``options_limit`` best are kept:
    a row's targeting term lies between 0 and ``target_weight`` × its number of words, so a
    row whose best case is below the ``options_limit``-th best worst case of its side never is.

    ``rows``, ``scores``, ``priorities`` and ``terminal_counts`` of the kept rows are
    concatenated side by side, in ranked order (``keys`` and ``counts`` give the sides and
    their kept sizes); ``word_positions`` and ``word_ids`` give, per target word of those rows,
    the index of its row and its grammar vocabulary id.
    """

    def __init__(self, grammar: Grammar, sides: Mapping[int, RankedRules], target_weight: float,
                 options_limit: int):
        self.keys = list(sides)
        ranked = list(sides.values())
        counts = np.array([len(side.rows) for side in ranked], dtype=np.int64)
        segments = np.repeat(np.arange(len(ranked)), counts)
        rows = np.concatenate([side.rows for side in ranked] or [np.zeros(0, np.int64)])
        priorities = np.concatenate([side.priorities for side in ranked] or [np.zeros(0)])
        swing = target_weight * grammar.terminal_counts[rows]
        worst, best = priorities + np.minimum(swing, 0.0), priorities + np.maximum(swing, 0.0)
        _, best_worst, sizes = _best_per_side(worst, counts, options_limit)
        bar = np.full(len(ranked), -np.inf)  # per side, the options_limit-th best worst case
        full = counts > options_limit
        bar[full] = worst[best_worst[np.cumsum(sizes) - 1]][full]
        kept = best >= bar[segments]
        self.counts = np.bincount(segments[kept], minlength=len(ranked))
        self.rows = rows[kept]
        self.scores = np.concatenate([side.scores for side in ranked] or [np.zeros(0)])[kept]
        self.priorities = priorities[kept]
        self.terminal_counts = grammar.terminal_counts[self.rows]
        symbols, lengths = grammar.target_symbols(self.rows)
        positions = np.repeat(np.arange(len(self.rows)), lengths)
        is_word = symbols >= 0
        self.word_positions, self.word_ids = positions[is_word], symbols[is_word]


@dataclass(frozen=True)
class SentencePlan:
    """The target-independent part of decoding one input (see :meth:`Decoder.prepare`).

    ``rule_sets`` maps each matched source side's key to its ranked rules, and −1 − p to the
    one option of the pass-through word at position p; ``spans`` maps each span, by increasing
    length, to its applications ``(key into rule_sets, nonterminal spans)``.
    """

    words: tuple[str, ...]
    rule_sets: dict[int, RankedRules | list[Option]]
    spans: dict[Span, list[tuple[int, tuple[Span, ...]]]]
    model: Model
    """The model whose weights scored ``rule_sets``."""
    grammar: Grammar
    options_limit: int

    @functools.cached_property
    def ranked_sides(self) -> RankedSides:
        """The matched sides' ranked rules as arrays, made when the plan is first targeted."""
        return RankedSides(self.grammar, {key: rule_set for key, rule_set in self.rule_sets.items()
                                          if isinstance(rule_set, RankedRules)},
                           self.model.target_weight, self.options_limit)


@dataclass(frozen=True)
class Forest:
    """The +LM hypergraph of one input's search (:meth:`Decoder.forest`): each edge's score
    without its targeting term (``base``: the engine's ``edge_scores``) and, for the reference
    engine, which re-weights the chart's objects, every item antecedents first (chart items,
    then the goal) in ``items``. The compiled engine's ``base`` is a ``FlatForest`` that holds
    the whole hypergraph as arrays and stands for its goal; its ``items`` is empty, so a forest
    kept for later targets (targeted tuning keeps one per reference) holds no chart objects.
    :meth:`Decoder.decode_forest` re-weights it towards one target at a time."""

    items: list[Item]
    base: np.ndarray | FlatForest
    model: Model

    @property
    def goal(self) -> Item | FlatForest:
        """The node the k-best lists are read at."""
        return self.items[-1] if self.items else self.base

    @property
    def edges(self) -> int:
        """The number of hyperedges."""
        return len(self.base) if self.items else self.base.edges


class Decoder:
    """A Hiero (or labelled SCFG) decoder for one grammar, language model, weight vector and
    settings."""

    def __init__(self, grammar: Grammar, lm: LanguageModel, weights: Mapping[str, float],
                 settings: DecoderSettings | None = None):
        self.grammar = grammar
        self.lm = lm
        self.model = Model(grammar.feature_names, weights)
        self.settings = settings or DecoderSettings()
        self._lm_weight = self.model.lm_weight * LN10
        search, self._kbest, self._match = _engine(self.settings.engine)
        if grammar.labelled:
            self._match = match  # the compiled matcher reads only X
        self._search = search(lm, self.model.lm_weight, self.settings.pop_limit)
        self._ranked: dict[int, RankedRules] = {}
        index = self.model.index
        self._grammar_weights = np.array(self.model.weights[:len(grammar.feature_names)])
        self._word_penalty_weight = self.model.weights[index["word_penalty"]]
        self._phrase_penalty_weight = self.model.weights[index["phrase_penalty"]]
        self._glue = self._fixed_option(Rule((0, 1), self.model.vector(glue=1.0)))
        self._glue_top = self._fixed_option(Rule((0,), self.model.vector()))
        self._goal = self._fixed_option(Rule((0,), self.model.vector()))
        self._empty = self._fixed_option(Rule((), self.model.vector()))

    @property
    def feature_names(self) -> tuple[str, ...]:
        """The model's feature names: the grammar's, then the decoder's."""
        return self.model.names

    @without_gc
    def prepare(self, sentence: str | Sequence[str]) -> SentencePlan:
        """Match the grammar against a tokenised input and score the matched rules."""
        words = tuple(sentence.split() if isinstance(sentence, str) else sentence)
        matches = self._match(self.grammar, words, self.settings.span_limit)
        keys = dict.fromkeys(key for applications in matches.spans.values()
                             for key, _ in applications)
        self._rank([key for key in keys if key not in self._ranked])
        rule_sets: dict[int, RankedRules | list[Option]] = {key: self._ranked[key]
                                                             for key in keys}
        for position in matches.oov:
            rule = Rule((words[position],), self.model.vector(word_penalty=-1.0, oov=1.0))
            matches.spans[(position, position + 1)].append((-1 - position, ()))
            rule_sets[-1 - position] = [self._fixed_option(rule)]
        return SentencePlan(words, rule_sets, matches.spans, self.model, self.grammar,
                            self.settings.options_limit)

    @without_gc
    def decode(self, sentence: str | Sequence[str] | SentencePlan,
               target: str | Sequence[str] | None = None, k: int | None = None
               ) -> list[Hypothesis]:
        """The unique k-best outputs for an input, optionally targeted to the string ``target``.

        ``k`` defaults to the settings' k. An input may be given as a :class:`SentencePlan`
        from :meth:`prepare` to decode it towards many targets.
        """
        plan = self._plan(sentence)
        target_words = None if target is None else self._target(
            target.split() if isinstance(target, str) else target)
        goal, _ = self._chart(plan, self._select(plan, target_words))
        return self._kbest_list(goal, k)

    @without_gc
    def decode_hypergraph(self, sentence: str | Sequence[str] | SentencePlan,
                          k: int | None = None) -> tuple[list[Hypothesis], Hypergraph]:
        """The untargeted unique k-best list of an input (as :meth:`decode`) and the
        hypergraph its search built, each edge with its feature vector, for forest MERT
        (:mod:`circle.tune.forest`)."""
        plan = self._plan(sentence)
        goal, items = self._chart(plan, self._select(plan, None))
        index = self.model.index
        return self._kbest_list(goal, k), Hypergraph.from_chart(
            goal, items, len(self.model.names), index["lm"], index["target"])

    @without_gc
    def forest(self, sentence: str | Sequence[str] | SentencePlan,
               target: str | Sequence[str] | None = None) -> Forest:
        """The hypergraph of an input, to be decoded towards many targets with
        :meth:`decode_forest` (the forest mode of targeted paraphrasing).

        The search that builds it is targeted to ``target`` if given (None: untargeted), so
        that rule selection and pruning keep what targets drawn from its words need: for the
        hypotheses of one n-best list, the union of their words. The forest keeps each edge's
        score without the targeting term."""
        plan = self._plan(sentence)
        target_words = None if target is None else self._target(
            target.split() if isinstance(target, str) else target)
        goal, items = self._chart(plan, self._select(plan, target_words))
        items.append(goal)
        base = self._search.edge_scores(items, self.model.target_weight)
        return Forest(items if isinstance(base, np.ndarray) else [], base, self.model)

    @without_gc
    def decode_forest(self, forest: Forest, target: str | Sequence[str], k: int | None = None,
                      features: bool = True) -> list[Hypothesis]:
        """The unique k-best outputs of ``forest`` with its edges re-weighted towards the string
        ``target``: the targeting feature (thesis eq. 5.1) is rule-local, so the hypergraph of
        the untargeted search holds every derivation's targeted score without a new search.
        Exact within the forest; the targeted search (:meth:`decode`) may find derivations the
        untargeted pruning dropped, hence a wider beam for forests. With ``features`` False
        the hypotheses' feature values are not summed (left empty), for callers that read only
        texts and scores."""
        if forest.model is not self.model:
            raise ValueError("the forest was built by another decoder")
        words = target.split() if isinstance(target, str) else target
        kbest = self._search.retarget(forest.items, forest.base, frozenset(words),
                                      self.model.target_weight)
        return self._kbest_list(forest.goal, k, kbest, features)

    def _plan(self, sentence: str | Sequence[str] | SentencePlan) -> SentencePlan:
        plan = sentence if isinstance(sentence, SentencePlan) else self.prepare(sentence)
        if plan.model is not self.model:
            raise ValueError("the sentence plan was prepared by another decoder")
        return plan

    def _chart(self, plan: SentencePlan, options: Mapping[int, list[Option]]
               ) -> tuple[Item, list[Item]]:
        """Fill the chart of ``plan`` with ``options``: the goal item and every chart item,
        antecedents first (the hypergraph)."""
        if self.grammar.labelled:
            return self._labelled_chart(plan, options)
        n = len(plan.words)
        x_cells: dict[Span, list[Item]] = {}
        s_cells: dict[int, list[Item]] = {}
        items: list[Item] = []
        for j, spans in _spans_by_length(plan):
            for span, applications in spans:
                x_cells[span] = self._search.fill_span(applications, options, x_cells)
                items += x_cells[span]
            s_cells[j] = self._search.fill(self._glue_cubes(j, x_cells, s_cells))
            items += s_cells[j]
        return self._goal_item(s_cells[n] if n else [None]), items

    def _labelled_chart(self, plan: SentencePlan, options: Mapping[int, list[Option]]
                        ) -> tuple[Item, list[Item]]:
        """:meth:`_chart` for a labelled grammar: each span's applications fill one cell per
        left-hand side label (a pass-through word's is X), each nonterminal reads the cell of
        its label, and S(0, j) glues every label's cells."""
        n = len(plan.words)
        key_labels = self.grammar.key_labels
        cells: dict[Cell, list[Item]] = {}
        ending: dict[int, list[Cell]] = {}  # j → the filled cells (i, j, L)
        s_cells: dict[int, list[Item]] = {}
        items: list[Item] = []
        for j, spans in _spans_by_length(plan):
            for (i, end), applications in spans:
                cubes: dict[str, list[Cube]] = {}
                for key, tails in applications:
                    label = key_labels[key] if key >= 0 else UNLABELLED
                    cubes.setdefault(label, []).append(
                        (options[key], tuple(cells.get(cell, []) for cell in tails)))
                for label, label_cubes in cubes.items():
                    filled = self._search.fill(label_cubes)
                    if filled:
                        cells[(i, end, label)] = filled
                        ending.setdefault(end, []).append((i, end, label))
                        items += filled
            glue: list[Cube] = []
            for cell in sorted(ending.get(j, ()), key=lambda cell: cell[0]):
                if cell[0] == 0:
                    glue.append(([self._glue_top], (cells[cell],)))
                else:
                    glue.append(([self._glue], (s_cells[cell[0]], cells[cell])))
            s_cells[j] = self._search.fill(glue)
            items += s_cells[j]
        return self._goal_item(s_cells[n] if n else [None]), items

    def _kbest_list(self, goal: Item | FlatForest, k: int | None, kbest: KBest | None = None,
                    features: bool = True) -> list[Hypothesis]:
        kbest = self._kbest() if kbest is None else kbest
        best = kbest.best(goal, self.settings.k if k is None else k)
        if not features:
            return [Hypothesis(" ".join(d.words), d.score, {}) for d in best]
        return [self._hypothesis(kbest, d) for d in best]

    def _target(self, target: Sequence[str]) -> tuple[frozenset[str], np.ndarray]:
        """The words of a target string T, and per grammar vocabulary id 1.0 if in T."""
        words = frozenset(target)
        flags = np.zeros(len(self.grammar.vocabulary), dtype=np.float64)
        index = self.grammar.word_index
        flags[[index[word] for word in words if word in index]] = 1.0
        return words, flags

    def _glue_cubes(self, j: int, x_cells: Mapping[Span, list[Item]],
                    s_cells: Mapping[int, list[Item]]) -> list[Cube]:
        """Cubes of S(0, j): S → ⟨X, X⟩ over X(0, j), S → ⟨S X, S X⟩ over S(0, i) X(i, j)."""
        cubes: list[Cube] = []
        if (0, j) in x_cells:
            cubes.append(([self._glue_top], (x_cells[(0, j)],)))
        for i in range(1, j):
            if (i, j) in x_cells:
                cubes.append(([self._glue], (s_cells[i], x_cells[(i, j)])))
        return cubes

    def _goal_item(self, tops: list[Item] | list[None]) -> Item:
        """The goal item over the full-sentence items ``tops`` ([None]: the empty input)."""
        return Item(0.0, 0.0, (), None, 0, [self._goal_edge(item) for item in tops])

    def _goal_edge(self, item: Item | None) -> Edge:
        """The edge from a full-sentence item (None: the empty input) to the goal, ⟨s⟩ … ⟨/s⟩."""
        if item is None:
            return self._search.sentence_edge(self._empty, ())
        return self._search.sentence_edge(self._goal, (item,))

    def _hypothesis(self, kbest: KBest, derivation: Derivation) -> Hypothesis:
        names, index = self.model.names, self.model.index
        values = kbest.features(derivation, len(names), index["lm"], index["target"])
        return Hypothesis(" ".join(derivation.words), derivation.score,
                          dict(zip(names, values, strict=True)))

    def _fixed_option(self, rule: Rule) -> Option:
        score = self.model.dot(rule.values)
        return self._search.option(rule, 0, score,
                                   score + self._lm_weight * self.lm.estimate(rule.target))

    def _rank(self, keys: list[int]) -> None:
        """Rank the rules of source-side ``keys`` by priority, ties in table order (cached).

        All keys of a sentence at once, as arrays: per-key array operations would cost more
        than the arithmetic.
        """
        grammar = self.grammar
        rows, counts = grammar.rows(np.array(keys, dtype=np.int64))
        scores = (grammar.features(rows) @ self._grammar_weights
                  - self._word_penalty_weight * grammar.terminal_counts[rows]
                  + self._phrase_penalty_weight)
        priorities = scores + self._lm_weight * self._search.estimates(grammar, rows)
        rank, best, kept = _best_per_side(priorities, counts, self.settings.options_limit)
        options = self._options(rows[best], scores[best], priorities[best])
        rows, scores, priorities = rows[rank], scores[rank], priorities[rank]
        ends = np.cumsum(counts)
        firsts = np.cumsum(kept) - kept
        for key, end, count, first, size in zip(keys, ends.tolist(), counts.tolist(),
                                                 firsts.tolist(), kept.tolist(), strict=True):
            self._ranked[key] = RankedRules(rows[end - count:end], scores[end - count:end],
                                            priorities[end - count:end],
                                            options[first:first + size])

    def _options(self, rows: np.ndarray, scores: np.ndarray, priorities: np.ndarray,
                 misses: np.ndarray | None = None) -> list[Option]:
        """Options for grammar ``rows``, with their targeting values (``misses``)."""
        if misses is not None:
            weight = self.model.target_weight
            scores, priorities = scores + weight * misses, priorities + weight * misses
        return self._search.options(self.grammar, rows, scores, priorities, misses)

    def _select(self, plan: SentencePlan, target: tuple[frozenset[str], np.ndarray] | None
                ) -> dict[int, list[Option]]:
        """The options of each of the plan's rule sets: its ``options_limit`` best, once the
        targeting term is added to each if there is a target (thesis eq. 5.1).

        ``target`` holds the words of T and their flags per grammar vocabulary id (None:
        untargeted); ties keep the untargeted order. All matched sides are re-ranked at once.
        """
        if target is None:
            return {key: rule_set.best if isinstance(rule_set, RankedRules) else rule_set
                    for key, rule_set in plan.rule_sets.items()}
        words, flags = target
        sides = plan.ranked_sides
        hits = np.bincount(sides.word_positions, weights=flags[sides.word_ids],
                           minlength=len(sides.rows))
        misses = sides.terminal_counts - hits.astype(np.int64)
        adjusted = sides.priorities + self.model.target_weight * misses
        _, chosen, kept = _best_per_side(adjusted, sides.counts, self.settings.options_limit)
        options = self._options(sides.rows[chosen], sides.scores[chosen],
                                sides.priorities[chosen], misses[chosen])
        ends = np.cumsum(kept).tolist()
        selected = {key: options[end - size:end]
                    for key, end, size in zip(sides.keys, ends, kept.tolist(), strict=True)}
        for key, rule_set in plan.rule_sets.items():
            if not isinstance(rule_set, RankedRules):  # a pass-through word
                selected[key] = [self._targeted(option, words) for option in rule_set]
        return selected

    def _targeted(self, option: Option, target: frozenset[str]) -> Option:
        """A pass-through option with its targeting value."""
        miss = sum(1 for word in option.rule.words if word not in target)
        weight = self.model.target_weight
        return self._search.option(option.rule, miss, option.score + weight * miss,
                                   option.priority + weight * miss)


Matcher = Callable[[Grammar, tuple[str, ...], int], Matches]


def _spans_by_length(plan: SentencePlan
                     ) -> Iterator[tuple[int, list[tuple[Span, list[tuple[int, tuple]]]]]]:
    """For j = 1 … n: j and the plan's spans of length j with their applications, in the
    plan's order. The chart fills them before S(0, j), which needs every span ending at j."""
    by_length: dict[int, list[tuple[Span, list[tuple[int, tuple]]]]] = {}
    for span, applications in plan.spans.items():
        by_length.setdefault(span[1] - span[0], []).append((span, applications))
    for j in range(1, len(plan.words) + 1):
        yield j, by_length.get(j, [])


def _engine(name: str) -> tuple[type[CubePruning], type[KBest], Matcher]:
    """The cube-pruning and k-best classes and the rule matcher of a search engine (see
    :class:`DecoderSettings`).

    The compiled ones must be built from the current ``_cube.pyx``: an editable install does
    not rebuild them when the source changes.
    """
    if name == "python":
        return CubePruning, KBest, match
    rebuild = ("run `pip install -e .` in the repository (or decode with "
               "DecoderSettings(engine='python'))")
    try:
        from circle.decoder import _cube
    except ImportError as error:
        raise ImportError(f"the compiled search loop circle.decoder._cube is not built: "
                          f"{rebuild}") from error
    source = Path(__file__).with_name("_cube.pyx")
    if source.exists() and source.stat().st_mtime > Path(_cube.__file__).stat().st_mtime:
        raise ImportError(f"{_cube.__file__} is older than {source.name}: {rebuild}")
    return _cube.CubePruning, _cube.KBest, _cube.match
