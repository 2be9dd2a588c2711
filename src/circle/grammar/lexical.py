"""Word translation tables and the lexical weights of Koehn, Och & Marcu (2003).

w(e|f) and w(f|e) are relative frequencies of alignment links over the training corpus, with an
unaligned word counted as linked to NULL (as Moses' ``train-model.perl`` does). The lexical weight
of a phrase pair with internal alignment a is

    lex(e|f, a) = prod_j 1/|{i : (i,j) in a}| * sum_{(i,j) in a} w(e_j|f_i),   or w(e_j|NULL)

over the target words j (nonterminals excluded), and lex(f|e) symmetrically. Inside a phrase pair
consistent with the alignment, every word keeps all of its sentence-level links, so the factor of
each word can be computed once per sentence (:func:`word_factors`) and a rule's weight is a sum of
log factors over the terminals it keeps.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

Link = tuple[int, int]


@dataclass(frozen=True)
class LexicalTable:
    """w(e|f) keyed ``(f, e)`` with ``f=None`` for NULL, and w(f|e) keyed ``(f, e)``, ``e=None``."""

    e_given_f: dict[tuple[str | None, str], float]
    f_given_e: dict[tuple[str, str | None], float]


def lexical_table(sentences: Iterable[tuple[Sequence[str], Sequence[str], Iterable[Link]]]
                  ) -> LexicalTable:
    """Estimate w(e|f) and w(f|e) from (source words, target words, links) triples."""
    pair_counts: Counter[tuple[str | None, str | None]] = Counter()
    for source, target, links in sentences:
        aligned_source, aligned_target = set(), set()
        for i, j in links:
            pair_counts[source[i], target[j]] += 1
            aligned_source.add(i)
            aligned_target.add(j)
        pair_counts.update((word, None) for i, word in enumerate(source)
                           if i not in aligned_source)
        pair_counts.update((None, word) for j, word in enumerate(target)
                           if j not in aligned_target)
    source_totals: Counter[str | None] = Counter()
    target_totals: Counter[str | None] = Counter()
    for (f, e), count in pair_counts.items():
        source_totals[f] += count
        target_totals[e] += count
    e_given_f = {(f, e): count / source_totals[f]
                 for (f, e), count in pair_counts.items() if e is not None}
    f_given_e = {(f, e): count / target_totals[e]
                 for (f, e), count in pair_counts.items() if f is not None}
    return LexicalTable(e_given_f, f_given_e)


def word_factors(source: Sequence[str], target: Sequence[str], links: Iterable[Link],
                 table: LexicalTable) -> tuple[list[float], list[float]]:
    """Per-word log factors of lex(e|f) (one per target word) and lex(f|e) (one per source word)."""
    source_links: list[list[int]] = [[] for _ in source]
    target_links: list[list[int]] = [[] for _ in target]
    for i, j in links:
        source_links[i].append(j)
        target_links[j].append(i)
    e_given_f = table.e_given_f
    f_given_e = table.f_given_e
    target_factors = [
        math.log(sum(e_given_f[source[i], word] for i in linked) / len(linked)) if linked
        else math.log(e_given_f[None, word])
        for word, linked in zip(target, target_links, strict=True)
    ]
    source_factors = [
        math.log(sum(f_given_e[word, target[j]] for j in linked) / len(linked)) if linked
        else math.log(f_given_e[word, None])
        for word, linked in zip(source, source_links, strict=True)
    ]
    return target_factors, source_factors


def lexical_frame(table: LexicalTable) -> pd.DataFrame:
    """``table`` as the rows of a ``LEXICAL`` table (one per word pair, NULL as null)."""
    pairs = sorted(set(table.e_given_f) | set(table.f_given_e),
                   key=lambda pair: (pair[0] or "", pair[1] or "", pair[0] is None))
    return pd.DataFrame({
        "f": [f for f, _ in pairs], "e": [e for _, e in pairs],
        "e_given_f": [table.e_given_f.get(pair) for pair in pairs],
        "f_given_e": [table.f_given_e.get(pair) for pair in pairs]})


def table_from_frame(frame: pd.DataFrame) -> LexicalTable:
    """The :class:`LexicalTable` of the rows of a ``LEXICAL`` table (:func:`lexical_frame`)."""
    e_given_f, f_given_e = {}, {}
    for f, e, p_e, p_f in zip(frame["f"], frame["e"], frame["e_given_f"], frame["f_given_e"],
                              strict=True):
        f = None if f is None or f != f else f
        e = None if e is None or e != e else e
        if e is not None:
            e_given_f[f, e] = float(p_e)
        if f is not None:
            f_given_e[f, e] = float(p_f)
    return LexicalTable(e_given_f, f_given_e)
