"""The seed's automatic evaluations of its lattices, on our sentence groups (Pang, Knight & Marcu
2003, §4.2.1 path counts and LM entropy, §4.2.2 repetition check, §4.2.3 and Table 6
leave-one-out edit distance).

The edit distance is word-level Levenshtein (the seed does not name the unit; its magnitudes fit
words). ``ed(FSA)`` is the least distance from a held-out sentence to any path of the lattice
built from the other sentences of its group, by dynamic programming over the lattice; ``ed(input)``
is the least distance to those sentences themselves; the seed reports the gain
``ed(input) - ed(FSA)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from circle.grammar.tree import Tree
from circle.lattice.fsa import (
    LanguageModel,
    Lattice,
    count_paths,
    count_sentences,
    forest_to_lattice,
    paths,
    ranked_sentences,
    squeeze,
)
from circle.lattice.merge import MergeStats, merge_trees

FIG1_GROUP = (
    "At least 12 people were killed in the battle last week.",
    "At least 12 people lost their lives in last week’s fighting.",
    "Last week’s fight took at least 12 lives.",
    "The fighting last week killed at least 12.",
    "The battle of last week killed at least 12 persons.",
    "At least 12 persons died in the fighting last week.",
    "At least 12 died in the battle last week.",
    "At least 12 people were killed in the fighting last week.",
    "During last week’s fighting, at least 12 people died.",
    "Last week at least twelve people died in the fighting.",
    "Last week’s fighting took the lives of twelve people.")
"""The seed's Fig. 1 group, 11 translations of one sentence, in their printed order (the OCR
prints 9 and 11 side by side; 9 is read as the "During ..." sentence). Its lattice "represents
compactly 49 distinct renderings" (§1)."""


def edit_distance(lattice: Lattice, words: Sequence[str]) -> int:
    """The least word edit distance (substitutions, insertions, deletions, each 1) between
    ``words`` and any BEGIN-END path of ``lattice``: ``cost[state][j]`` is the least distance
    between a path prefix ending at ``state`` and ``words[:j]``, relaxed along the edges in
    topological order."""
    n = len(words)
    infinity = len(lattice.edges) + n + 1
    cost = [[infinity] * (n + 1) for _ in range(lattice.states)]
    cost[lattice.begin][0] = 0
    done = -1  # states before this one have all their incoming edges relaxed
    for source, target, word in lattice.edges:  # sorted by source: a topological order
        while done < source:
            done += 1
            _skip_words(cost[done])
        row, into = cost[source], cost[target]
        into[0] = min(into[0], row[0] + 1)
        for j in range(1, n + 1):
            into[j] = min(into[j], row[j] + 1, row[j - 1] + (word != words[j - 1]))
    _skip_words(cost[lattice.end])
    return cost[lattice.end][n]


def _skip_words(row: list[int]) -> None:
    """Let a state's row delete sentence words without moving in the lattice."""
    for j in range(1, len(row)):
        row[j] = min(row[j], row[j - 1] + 1)


def repetitions(lattice: Lattice, word: str) -> tuple[int, int]:
    """For the seed's repetition check (§4.2.2): the number of BEGIN-END paths that contain
    ``word`` and of those that contain it at least twice, by dynamic programming over paths
    counted by how often they have seen it (0, 1, 2 or more)."""
    counts = [[0, 0, 0] for _ in range(lattice.states)]
    counts[lattice.begin][0] = 1
    for source, target, label in lattice.edges:
        for seen, number in enumerate(counts[source]):
            counts[target][min(seen + (label == word), 2)] += number
    _, once, twice = counts[lattice.end]
    return once + twice, twice


def repetition_ratios(lattice: Lattice, sentences: Sequence[Sequence[str]]) -> list[float]:
    """The seed's repetition ratios (§4.2.2): for every word that no sentence of the group has
    twice, the share of the lattice's paths containing it that contain it more than once (a
    path that repeats such a word is likely bad), in word order."""
    words = {word for sentence in sentences for word in sentence}
    listed = sorted(word for word in words if all(sentence.count(word) < 2
                                                   for sentence in sentences))
    ratios = []
    for word in listed:
        containing, repeating = repetitions(lattice, word)
        ratios.append(repeating / containing if containing else 0.0)
    return ratios


def entropy_difference(lattice: Lattice, sentences: Sequence[Sequence[str]],
                       lm: LanguageModel, max_paths: int) -> float | None:
    """The seed's LM check (§4.2.1, Table 4): ent(FSA) - ent(SG), the mean entropy of the
    lattice's distinct sentences less that of the group's own sentences. The seed does not say
    how a sentence's entropy is normalised; this is bits a word, -log2 p(sentence) / (words + 1)
    with the end of the sentence counted as a word. The sentences are enumerated, so a lattice
    of more than ``max_paths`` paths gives None."""
    if count_paths(lattice) > max_paths:
        return None
    return _mean_entropy(set(paths(lattice)), lm) - _mean_entropy(sentences, lm)


def _mean_entropy(sentences: Iterable[Sequence[str]], lm: LanguageModel) -> float:
    scored = ranked_sentences(list(sentences), lm)  # log10 p, each distinct sentence once
    return sum(-log10 * math.log2(10) / (len(words) + 1) for words, log10 in scored) / len(scored)


def chain(words: Sequence[str]) -> Lattice:
    """The lattice of one sentence."""
    return Lattice(len(words) + 1, tuple((i, i + 1, word) for i, word in enumerate(words)))


def group_lattice(trees: Sequence[Tree]) -> tuple[Lattice, Lattice, MergeStats]:
    """A group's lattice before and after squeezing (Fig. 4), and its merge statistics."""
    forest, stats = merge_trees(trees)
    lattice = forest_to_lattice(forest)
    return lattice, squeeze(lattice), stats


def growing_references(trees: Sequence[Tree]) -> list[tuple[int, int]]:
    """The seed's Table 6 for one ordered group: the last sentence is the test sentence; for
    n = 1 .. len - 1, ``(ed(FSA_n), ed(input_n))``, its distance to the squeezed lattice of the
    first n sentences and its least distance to those sentences themselves."""
    *references, test = trees
    words = [word.lower() for word in test.words()]
    rows = []
    for n in range(1, len(references) + 1):
        ed_input = min(edit_distance(chain([w.lower() for w in tree.words()]), words)
                       for tree in references[:n])
        rows.append((edit_distance(group_lattice(references[:n])[1], words), ed_input))
    return rows


@dataclass(frozen=True)
class GroupFigures:
    """The seed's per-group figures for one sentence group."""

    sentences: int
    merge_rate: float
    states: int
    edges: int
    squeezed_states: int
    squeezed_edges: int
    paths: int
    distinct_sentences: int
    ed_input: float
    """Mean over held-out sentences of the least edit distance to the other sentences."""
    ed_fsa: float
    """Mean over held-out sentences of the edit distance to the others' squeezed lattice."""
    repetition_ratios: tuple[float, ...]
    """:func:`repetition_ratios` of the squeezed lattice."""


def group_figures(trees: Sequence[Tree]) -> GroupFigures:
    """Lattice size, path counts (§4.2.1), repetition ratios (§4.2.2) and the leave-one-out
    edit distances (§4.2.3)."""
    lattice, squeezed, stats = group_lattice(trees)
    sentences = [[word.lower() for word in tree.words()] for tree in trees]
    ed_input, ed_fsa = [], []
    for held, words in enumerate(sentences):
        others = [tree for i, tree in enumerate(trees) if i != held]
        ed_input.append(min(edit_distance(chain(other), words)
                            for i, other in enumerate(sentences) if i != held))
        ed_fsa.append(edit_distance(group_lattice(others)[1], words))
    return GroupFigures(
        sentences=len(trees), merge_rate=stats.merge_rate, states=lattice.states,
        edges=len(lattice.edges), squeezed_states=squeezed.states,
        squeezed_edges=len(squeezed.edges), paths=count_paths(squeezed),
        distinct_sentences=count_sentences(squeezed),
        ed_input=sum(ed_input) / len(ed_input), ed_fsa=sum(ed_fsa) / len(ed_fsa),
        repetition_ratios=tuple(repetition_ratios(squeezed, sentences)))
