"""Paraphrase pairs read off word lattices and their recall of WordNet synonyms (Pang, Knight &
Marcu 2003, §3 "Different paths between any two nodes are assumed to be paraphrases of each
other", §4.1, Table 2).

A pair is two different word sequences on paths of a group's squeezed lattice
(:func:`~circle.lattice.evaluate.group_lattice`) between the same two states that meet at no
state in between (:func:`paraphrase_pairs`). The seed does not say how it lists its pairs; the
condition that the paths meet only at their ends keeps a pair from being listed again inside
every longer pair around it (two paths that meet in between are made of smaller pairs and shared
words). Pairs are unordered, and a group lists a pair once (at its first pair of states), so
that "extracted from more than one sentence group" (§4.1.1) counts groups. A *lexical* pair has
one word a side: two edges between the same two states.

Table 2 (§4.1.2) estimates the recall of lexical synonyms: "we use the synonymy relation in
WordNet to extract all the synonym pairs present in our corpus ... we can check how many of them
are recovered by our method", per range of the group's average sentence length. The seed does
not say how a pair is present; here (:func:`synonym_recall`) it is two different words of a
group, each in a different translation, that WordNet calls synonyms
(:meth:`~circle.lattice.wordnet.WordNet.synonyms`), recovered when the group's lattice has them
as a lexical pair.
"""

from __future__ import annotations

import json
import logging
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import pandas as pd

from circle.core.schemas import LATTICE_PARAPHRASES
from circle.core.tables import read_metadata, write_table
from circle.grammar.parse import read_groups
from circle.grammar.tree import Tree
from circle.lattice.evaluate import group_lattice
from circle.lattice.fsa import Lattice

logger = logging.getLogger(__name__)

ASL_RANGES = ((1, 10), (10, 20), (20, 30), (30, 45), (45, None))
"""Table 2's ranges of average sentence length (tokens), the last ours: the seed kept groups of
at most 45 words."""


@dataclass(frozen=True)
class ParaphrasePair:
    """Two word sequences on paths between states ``start`` and ``end`` (``first`` < ``second``)."""

    start: int
    end: int
    first: tuple[str, ...]
    second: tuple[str, ...]


def paraphrase_pairs(lattice: Lattice) -> list[ParaphrasePair]:
    """Every pair of different word sequences on two paths between the same two states that
    share no other state, each unordered pair of sequences once (the first by its states), in
    the order of their states. The paths are enumerated (brute force: the lattices of a few
    translations)."""
    out = lattice.outgoing()
    found: dict[tuple[tuple[str, ...], tuple[str, ...]], ParaphrasePair] = {}
    for start in range(lattice.states):
        reached: dict[int, list[tuple[tuple[str, ...], int]]] = defaultdict(list)
        stack: list[tuple[int, tuple[str, ...], int]] = [(start, (), 0)]
        while stack:  # every path from start: its words and its inner states as a bit mask
            state, words, inner = stack.pop()
            if words:
                reached[state].append((words, inner))
                inner |= 1 << state
            stack += [(target, (*words, word), inner) for target, word in out[state]]
        for end in sorted(reached):
            for (one, inner_one), (other, inner_other) in combinations(reached[end], 2):
                if one != other and not inner_one & inner_other:
                    key = (min(one, other), max(one, other))
                    found.setdefault(key, ParaphrasePair(start, end, *key))
    return sorted(found.values(), key=lambda pair: (pair.start, pair.end, pair.first,
                                                    pair.second))


def group_pairs(trees: Sequence[Tree]) -> tuple[Lattice, list[ParaphrasePair]]:
    """A group's squeezed lattice (the seed's Fig. 4) and its :func:`paraphrase_pairs`."""
    _, squeezed, _ = group_lattice(trees)
    return squeezed, paraphrase_pairs(squeezed)


def pairs_frame(groups: Mapping[int, Sequence[Tree]]) -> pd.DataFrame:
    """A :data:`~circle.core.schemas.LATTICE_PARAPHRASES` frame of every group's pairs."""
    rows = []
    for segment, trees in sorted(groups.items()):
        lattice, pairs = group_pairs(trees)
        rows += [{"segment_id": segment, "start": pair.start, "end": pair.end,
                  "phrase1": " ".join(pair.first), "phrase2": " ".join(pair.second),
                  "whole": pair.start == lattice.begin and pair.end == lattice.end}
                 for pair in pairs]
    frame = pd.DataFrame(rows, columns=LATTICE_PARAPHRASES.arrow.names)
    return frame.astype({"segment_id": "int64", "start": "int32", "end": "int32",
                         "whole": "bool"})


def write_paraphrase_pairs(parses_path: str | os.PathLike, out_path: str | os.PathLike,
                           provenance: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Write the paraphrase pairs of the lattice of every group of a
    :data:`~circle.core.schemas.PARSES` table (all its references)."""
    groups = read_groups(parses_path)
    frame = pairs_frame(groups)
    names = read_metadata(parses_path)["reference_names"]
    write_table(frame, out_path, LATTICE_PARAPHRASES, provenance,
                {"reference_names": names, "segments": str(len(groups))})
    logger.info("%d paraphrase pairs from the lattices of %d groups of %s", len(frame),
                len(groups), ", ".join(json.loads(names)))
    return frame


def asl_range(length: float) -> str:
    """The :data:`ASL_RANGES` name of an average sentence length, e.g. ``"20-30"``."""
    for low, high in ASL_RANGES:
        if high is None or length < high:
            return f"{low}-{high}" if high is not None else f"{low}+"
    raise AssertionError("the last range is open")


def present_synonyms(sentences: Sequence[Sequence[str]],
                     synonyms: Callable[[str, str], bool]) -> set[tuple[str, str]]:
    """The WordNet-consistent pairs present in a group (§4.1.2): two different words, each in a
    different one of ``sentences``, that ``synonyms`` relates; as (smaller, larger)."""
    found = set()
    for i, j in combinations(range(len(sentences)), 2):
        for one in set(sentences[i]):
            for other in set(sentences[j]):
                pair = (min(one, other), max(one, other))
                if one != other and pair not in found and synonyms(*pair):
                    found.add(pair)
    return found


@dataclass(frozen=True)
class RecallRow:
    """Table 2 for one range of average sentence length."""

    asl: str
    groups: int
    present: int
    recovered: int

    @property
    def recall(self) -> float:
        return self.recovered / self.present if self.present else 0.0


def synonym_recall(groups: Iterable[tuple[Sequence[Sequence[str]], Iterable[tuple[str, str]]]],
                   synonyms: Callable[[str, str], bool]) -> list[RecallRow]:
    """Table 2: per :data:`ASL_RANGES` range with groups, the WordNet-consistent pairs present
    in its groups (:func:`present_synonyms`; ``groups`` gives each group's lowercased sentences
    and its lexical pairs) and how many the group's lattice recovered."""
    counts: dict[str, list[int]] = {}
    for sentences, lexical in groups:
        length = sum(len(sentence) for sentence in sentences) / len(sentences)
        row = counts.setdefault(asl_range(length), [0, 0, 0])
        present = present_synonyms(sentences, synonyms)
        row[0] += 1
        row[1] += len(present)
        row[2] += len(present & {(min(pair), max(pair)) for pair in lexical})
    order = [asl_range(low) for low, _ in ASL_RANGES]
    return [RecallRow(name, *counts[name]) for name in order if name in counts]
