"""Word lattices from parse forests, squeezing, path counts and LM-ranked paths (Pang, Knight &
Marcu 2003, §3 "Mapping Parse Forests into Finite State Automata" and "Squeezing", Fig. 4 lines
6-7, Fig. 5-6).

A :class:`Lattice` is an acyclic automaton with one word per edge, one BEGIN state (0) and one END
state (the last); states are numbered in a topological order and edges sorted, so equal lattices
compare equal. Every BEGIN-END path is an input sentence or a new one; two paths between the same
states are paraphrases. Words are lowercased, as every token string of the pipeline is.
"""

from __future__ import annotations

import heapq
import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from circle.lattice.merge import ForestNode

Edge = tuple[int, int, str]


@dataclass(frozen=True)
class Lattice:
    """States ``0 .. states-1``; BEGIN is 0, END is ``states - 1``; edges ``(from, to, word)``."""

    states: int
    edges: tuple[Edge, ...]

    @property
    def begin(self) -> int:
        return 0

    @property
    def end(self) -> int:
        return self.states - 1

    def outgoing(self) -> list[list[tuple[int, str]]]:
        """Per state, its ``(to, word)`` edges in edge order."""
        out: list[list[tuple[int, str]]] = [[] for _ in range(self.states)]
        for source, target, word in self.edges:
            out[source].append((target, word))
        return out


def forest_to_lattice(forest: ForestNode) -> Lattice:
    """Traverse the forest top-down, creating alternative paths for every merged node (§3): a
    slot spans two states; each of its expansions is a word edge between them, or a chain of
    new states, one child slot between each pair."""
    edges: set[Edge] = set()
    states = [2]  # 0 is BEGIN, 1 END until renumbered

    def visit(slot: ForestNode, start: int, end: int) -> None:
        for expansion in slot.expansions:
            if expansion.word is not None:
                edges.add((start, end, expansion.word.lower()))
                continue
            inner = list(range(states[0], states[0] + len(expansion.children) - 1))
            states[0] += len(inner)
            chain = [start, *inner, end]
            for i, child in enumerate(expansion.children):
                visit(child, chain[i], chain[i + 1])

    visit(forest, 0, 1)
    return _canonical(edges)


def squeeze(lattice: Lattice) -> Lattice:
    """Squeeze (§3, Fig. 6): "If two different edges that go into (or out of) the same node in
    an FSA are labeled with the same word, the nodes on the other end of the edges are merged",
    exhaustively. The seed does not say what to do when such a merge would close a cycle (one of
    the two nodes reaches the other); this implementation skips that merge so that the lattice
    stays acyclic and its paths finite. Candidates are tried in state and word order, so the
    result is deterministic."""
    parent = list(range(lattice.states))

    def find(state: int) -> int:
        while parent[state] != state:
            parent[state] = parent[parent[state]]
            state = parent[state]
        return state

    edges = set(lattice.edges)
    while True:
        edges = {(find(a), find(b), word) for a, b, word in edges}
        pair = _squeezable_pair(edges)
        if pair is None:
            return _canonical(edges)
        keep, drop = pair
        parent[drop] = keep


def _squeezable_pair(edges: set[Edge]) -> tuple[int, int] | None:
    """The first pair of states that squeezing merges, as (kept, dropped), or None."""
    successors: dict[int, set[int]] = defaultdict(set)
    ends: dict[tuple[int, int, str], set[int]] = defaultdict(set)
    for source, target, word in edges:
        successors[source].add(target)
        ends[(target, 0, word)].add(source)  # edges into `target` labelled `word`
        ends[(source, 1, word)].add(target)  # edges out of `source` labelled `word`
    for key in sorted(ends):
        others = sorted(ends[key])
        for i, first in enumerate(others):
            for second in others[i + 1:]:
                if not (_reaches(successors, first, second)
                        or _reaches(successors, second, first)):
                    return first, second
    return None


def _reaches(successors: dict[int, set[int]], start: int, goal: int) -> bool:
    stack, seen = [start], {start}
    while stack:
        for nxt in successors.get(stack.pop(), ()):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False


def _canonical(edges: set[Edge]) -> Lattice:
    """Renumber the states that edges use in a deterministic topological order (Kahn's
    algorithm, smallest old number first), BEGIN first and END last."""
    used = sorted({state for edge in edges for state in edge[:2]})
    indegree = dict.fromkeys(used, 0)
    successors: dict[int, list[int]] = defaultdict(list)
    for source, target, _word in edges:
        indegree[target] += 1
        successors[source].append(target)
    ready = [state for state in used if indegree[state] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        state = heapq.heappop(ready)
        order.append(state)
        for nxt in successors[state]:
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                heapq.heappush(ready, nxt)
    if len(order) != len(used):
        raise ValueError("the lattice has a cycle")
    number = {state: i for i, state in enumerate(order)}
    return Lattice(len(order), tuple(sorted((number[a], number[b], w) for a, b, w in edges)))


def to_dot(lattice: Lattice, name: str = "lattice") -> str:
    """The lattice as a Graphviz digraph, left to right, drawn like the seed's Fig. 2 and 6:
    one node per state (BEGIN and END named), one labelled arrow per edge."""
    names = {lattice.begin: "BEGIN", lattice.end: "END"}
    lines = [f"digraph {json.dumps(name)} {{", "  rankdir=LR;",
             "  node [shape=circle, label=\"\", width=0.2];"]
    for state in (lattice.begin, lattice.end):
        lines.append(f"  {state} [shape=box, label={json.dumps(names[state])}];")
    lines += [f"  {source} -> {target} [label={json.dumps(word, ensure_ascii=False)}];"
              for source, target, word in lattice.edges]
    return "\n".join([*lines, "}"]) + "\n"


def count_paths(lattice: Lattice) -> int:
    """The number of BEGIN-END paths, by dynamic programming over the topological order (a
    group's lattice can have millions; the seed's §4.2.1 reports their logarithm)."""
    counts = [0] * lattice.states
    counts[lattice.begin] = 1
    for source, target, _word in lattice.edges:  # sorted by source, a topological order
        counts[target] += counts[source]
    return counts[lattice.end]


def count_sentences(lattice: Lattice) -> int:
    """The number of distinct word sequences on BEGIN-END paths (the seed's "49 distinct
    renderings" of Fig. 2): paths of the determinised lattice (subset construction; acyclic
    because the lattice is), counted by dynamic programming."""
    out = lattice.outgoing()
    memo: dict[frozenset[int], int] = {}

    def sentences_from(subset: frozenset[int]) -> int:
        if subset not in memo:
            by_word: dict[str, set[int]] = defaultdict(set)
            for state in subset:
                for target, word in out[state]:
                    by_word[word].add(target)
            memo[subset] = (lattice.end in subset) + sum(
                sentences_from(frozenset(targets)) for targets in by_word.values())
        return memo[subset]

    return sentences_from(frozenset([lattice.begin]))


def paths(lattice: Lattice) -> Iterator[tuple[str, ...]]:
    """Every BEGIN-END path's words, depth first in edge order (brute force: small lattices)."""
    out = lattice.outgoing()
    stack: list[tuple[int, tuple[str, ...]]] = [(lattice.begin, ())]
    while stack:
        state, words = stack.pop()
        if state == lattice.end:
            yield words
        for target, word in reversed(out[state]):
            stack.append((target, (*words, word)))


class LanguageModel(Protocol):
    """A left-to-right n-gram model: log10 probabilities, as KenLM gives them."""

    def begin(self) -> object:
        """The state after ``<s>``."""

    def advance(self, state: object, word: str) -> tuple[object, float]:
        """The state after ``word`` and log10 p(word | state)."""

    def finish(self, state: object) -> float:
        """log10 p(</s> | state)."""


class KenLMModel:
    """:class:`LanguageModel` over a KenLM binary (the pipeline's 5-gram model)."""

    def __init__(self, path: str) -> None:
        import kenlm

        from circle.decoder.lm import LanguageModel  # a model that does not load says why

        self._kenlm = kenlm
        self.model = LanguageModel(path).model

    def begin(self) -> object:
        state = self._kenlm.State()
        self.model.BeginSentenceWrite(state)
        return state

    def advance(self, state: object, word: str) -> tuple[object, float]:
        after = self._kenlm.State()
        return after, self.model.BaseScore(state, word, after)

    def finish(self, state: object) -> float:
        return self.model.BaseScore(state, "</s>", self._kenlm.State())


def best_paths(lattice: Lattice, lm: LanguageModel, k: int,
               beam: int) -> list[tuple[tuple[str, ...], float]]:
    """The ``k`` distinct sentences of the lattice with the highest LM log10 probability (with
    ``</s>``), best first, ties by the words. The seed generates sentences from the lattice but
    does not rank them; ranking by the LM is the issue's use for new references. A beam search
    in topological order keeps ``beam`` hypotheses per state; it is exact when ``beam`` is at
    least the number of paths into every state."""
    out = lattice.outgoing()
    hypotheses: list[list[tuple[float, tuple[str, ...], object]]] = [
        [] for _ in range(lattice.states)]
    hypotheses[lattice.begin].append((0.0, (), lm.begin()))
    finished: dict[tuple[str, ...], float] = {}
    for state in range(lattice.states):
        unique: dict[tuple[str, ...], tuple[float, tuple[str, ...], object]] = {}
        for hypothesis in hypotheses[state]:  # paths with the same words: keep the best
            if hypothesis[1] not in unique or hypothesis[0] > unique[hypothesis[1]][0]:
                unique[hypothesis[1]] = hypothesis
        kept = heapq.nsmallest(beam, unique.values(), key=lambda h: (-h[0], h[1]))
        hypotheses[state] = []
        for score, words, lm_state in kept:
            if state == lattice.end:
                finished[words] = score + lm.finish(lm_state)
            for target, word in out[state]:
                after, logprob = lm.advance(lm_state, word)
                hypotheses[target].append((score + logprob, (*words, word), after))
    ranked = sorted(finished.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:k]


def ranked_sentences(sentences: Sequence[Sequence[str]],
                     lm: LanguageModel) -> list[tuple[tuple[str, ...], float]]:
    """Distinct ``sentences`` scored as :func:`best_paths` scores them, best first (the brute
    force it is checked against)."""
    scores = {}
    for sentence in sentences:
        state, total = lm.begin(), 0.0
        for word in sentence:
            state, logprob = lm.advance(state, word)
            total += logprob
        scores[tuple(sentence)] = total + lm.finish(state)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
