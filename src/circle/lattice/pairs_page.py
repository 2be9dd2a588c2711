"""The page of the paraphrase pairs read off the lattices (Pang, Knight & Marcu 2003, §4.1): how
many pairs the groups give, of what length, the seed's Table 2 (recall of WordNet-consistent
synonyms by average sentence length, :func:`circle.lattice.pairs.synonym_recall`) and examples,
beside the seed's figures."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from circle.grammar.tree import Tree
from circle.lattice.pairs import RecallRow, present_synonyms, synonym_recall
from circle.lattice.wordnet import WordNet

SEED_TABLE2 = {"1-10": "30.7 %", "10-20": "16.3 %", "20-30": "7.8 %", "30-45": "3.8 %"}
"""The seed's Table 2: recall of WordNet-consistent synonyms per range of average sentence
length (11 translations of news sentences)."""
LENGTHS = ((1, 1), (2, 3), (4, 10), (11, None))
"""Ranges of a pair's length (its longer side, words) that the page counts."""
LISTED = 15
"""The most examples a list of the page shows."""


@dataclass(frozen=True)
class PairCounts:
    """A set's pairs: groups, groups with a pair, pairs (a group's once), distinct pairs, those
    from more than one group, pairs from BEGIN to END, distinct lexical pairs and how many of
    those WordNet calls synonyms."""

    groups: int
    with_pairs: int
    pairs: int
    distinct: int
    repeated: int
    whole: int
    lexical: int
    lexical_synonyms: int


def lexical(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of a :data:`~circle.core.schemas.LATTICE_PARAPHRASES` frame with one word a side."""
    return frame[~frame["phrase1"].str.contains(" ") & ~frame["phrase2"].str.contains(" ")]


def pair_counts(frame: pd.DataFrame, groups: int, wordnet: WordNet) -> PairCounts:
    """:class:`PairCounts` of a pairs frame read from ``groups`` groups."""
    by_pair = frame.groupby(["phrase1", "phrase2"])["segment_id"].nunique()
    words = set(zip(*(lexical(frame)[column] for column in ("phrase1", "phrase2")), strict=True))
    return PairCounts(groups, frame["segment_id"].nunique(), len(frame), len(by_pair),
                      int((by_pair > 1).sum()), int(frame["whole"].sum()), len(words),
                      sum(wordnet.synonyms(*pair) for pair in words))


def sentences(trees: Sequence[Tree]) -> list[list[str]]:
    """A group's sentences as its lattice spells them: the trees' words, lowercased."""
    return [[word.lower() for word in tree.words()] for tree in trees]


def lexical_by_segment(frame: pd.DataFrame) -> dict[int, list[tuple[str, str]]]:
    """The lexical pairs of each segment of a pairs frame."""
    return {int(segment): list(zip(rows["phrase1"], rows["phrase2"], strict=True))
            for segment, rows in lexical(frame).groupby("segment_id")}


def group_inputs(frames: Mapping[str, pd.DataFrame],
                 groups: Mapping[str, Mapping[int, Sequence[Tree]]]
                 ) -> list[tuple[list[list[str]], list[tuple[str, str]]]]:
    """Every group of every set as :func:`~circle.lattice.pairs.synonym_recall` reads it: its
    sentences and its lattice's lexical pairs."""
    inputs = []
    for name, frame in frames.items():
        pairs = lexical_by_segment(frame)
        inputs += [(sentences(trees), pairs.get(segment, []))
                   for segment, trees in sorted(groups[name].items())]
    return inputs


def _longest(frame: pd.DataFrame) -> pd.Series:
    return pd.concat([frame[column].str.count(" ") + 1 for column in ("phrase1", "phrase2")],
                     axis=1).max(axis=1)


def lattice_pairs_page(frames: Mapping[str, pd.DataFrame],
                       groups: Mapping[str, Mapping[int, Sequence[Tree]]],
                       names: Sequence[str], wordnet: WordNet) -> str:
    """The page's Markdown for the pairs of every set (``frames``, by set name) read off the
    lattices of its groups (``groups``, the same sets; ``names`` the references merged)."""
    everything = pd.concat([frame.assign(set=name) for name, frame in frames.items()])
    counts = {name: pair_counts(frames[name], len(groups[name]), wordnet) for name in frames}
    lines = ["# Paraphrase pairs of the word lattices (Pang, Knight & Marcu 2003, §4.1)", "",
             f"Each verse's translations ({', '.join(names)}) parsed, merged top down, turned into "
             "a lattice and squeezed (the seed's Fig. 4). \"Different paths between any two nodes "
             "are assumed to be paraphrases of each other\" (§3): a pair is two different word "
             "sequences on paths between the same two states that meet nowhere in between, "
             "listed once a verse; *lexical* pairs have one word a side, *whole* pairs run from "
             "BEGIN to END (two sentences of the lattice).", "",
             "| | " + " | ".join(frames) + " | seed (899 groups of 11) |",
             "|---|" + "---:|" * len(frames) + "---:|"]
    rows = [("verses", "groups", ""), ("verses with a pair", "with_pairs", ""),
            ("pairs", "pairs", "8,666"), ("distinct pairs", "distinct", ""),
            ("distinct pairs from more than one verse", "repeated", "1,051"),
            ("whole pairs", "whole", ""), ("distinct lexical pairs", "lexical", "3,217"),
            ("of them WordNet synonyms", "lexical_synonyms", "493 (15.3 %)")]
    for label, field, seed in rows:
        lines.append(f"| {label} | " + " | ".join(f"{getattr(c, field):,}"
                                                 for c in counts.values()) + f" | {seed} |")
    longest = _longest(everything)
    lines += ["", "Pairs by the length of their longer side (words, all sets):", "",
              "| words | pairs | share |", "|---|---:|---:|"]
    for low, high in LENGTHS:
        inside = (longest >= low) & (longest <= high if high is not None else True)
        label = f"{low}" if low == high else f"{low}–{high}" if high else f"{low}+"
        lines.append(f"| {label} | {int(inside.sum()):,} | "
                     f"{100 * inside.mean() if len(longest) else 0:.1f} % |")
    inputs = group_inputs(frames, groups)
    lines += _table2(synonym_recall(inputs, wordnet.synonyms))
    lines += _examples(everything, longest, inputs, wordnet)
    return "\n".join([*lines, ""])


def _table2(rows: Sequence[RecallRow]) -> list[str]:
    lines = ["", "## Recall of WordNet-consistent synonyms (Table 2, §4.1.2)", "",
             "A WordNet-consistent pair of a verse: two different words, each in a different "
             "translation, that share a WordNet 3.0 synset after morphy's reduction to lemmas "
             "(\"follow/be\" is one, as in the seed); recovered when the verse's lattice has "
             "them as a lexical pair. By the average length of the verse's translations "
             "(tokens; the seed dropped groups over 45):", "",
             "| average length | verses | pairs present | recovered | recall | seed |",
             "|---|---:|---:|---:|---:|---:|"]
    for row in rows:
        lines.append(f"| {row.asl} | {row.groups:,} | {row.present:,} | {row.recovered:,} | "
                     f"{100 * row.recall:.1f} % | {SEED_TABLE2.get(row.asl, '')} |")
    present = sum(row.present for row in rows)
    recovered = sum(row.recovered for row in rows)
    lines.append(f"| all | {sum(row.groups for row in rows):,} | {present:,} | {recovered:,} | "
                 f"{100 * recovered / present if present else 0:.1f} % | |")
    return lines


def _examples(everything: pd.DataFrame, longest: pd.Series,
              inputs: Sequence[tuple[list[list[str]], list[tuple[str, str]]]],
              wordnet: WordNet) -> list[str]:
    short = everything[longest <= 3]
    by_pair = (short.groupby(["phrase1", "phrase2"])["segment_id"].size()
               .sort_values(ascending=False, kind="stable"))
    lines = ["", "## Examples", "", f"The {LISTED} pairs of at most three words a side found in "
             "the most verses:", "", "| pair | verses |", "|---|---:|"]
    lines += [f"| {one} / {other} | {count} |"
              for (one, other), count in by_pair.head(LISTED).items()]
    present: Counter[tuple[str, str]] = Counter()
    recovered: Counter[tuple[str, str]] = Counter()
    for group, pairs in inputs:
        synonyms = present_synonyms(group, wordnet.synonyms)
        present.update(synonyms)
        recovered.update(synonyms & set(pairs))
    lines += ["", f"The {LISTED} WordNet-consistent pairs present in the most verses, and in how "
              "many the lattice recovered them:", "", "| pair | present | recovered |",
              "|---|---:|---:|"]
    lines += [f"| {one} / {other} | {count} | {recovered[(one, other)]} |"
              for (one, other), count in sorted(present.items(),
                                                key=lambda item: (-item[1], item[0]))[:LISTED]]
    return lines
