"""Which references of an evaluation set a segment uses: the first k in the seeded per-document
order that corpus preparation records as ``ref_order`` (:mod:`circle.corpus.prepare`), so that
condition kH takes the first k (thesis §4.3.1), or one reference set for every segment
(Fig. 4.10). Tuning, paraphrasing, lattices, the experiments and their pages all choose
references here."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd


def select_references(references: Sequence[str], ref_order: Sequence[int],
                      count: int) -> list[str]:
    """The first ``count`` references in the seeded order (1H, 2H, ...; thesis §4.3.1)."""
    if not 1 <= count <= len(ref_order):
        raise ValueError(f"cannot take {count} of {len(ref_order)} references")
    return [references[int(k)] for k in ref_order[:count]]


def ordered_references(table: pd.DataFrame, count: int | None = None) -> list[list[str]]:
    """:func:`select_references` for every segment of an evaluation-set table: the first
    ``count`` references in each segment's seeded order (None: all of them)."""
    return [select_references(refs, order, len(order) if count is None else count)
            for refs, order in zip(table["references"], table["ref_order"], strict=True)]


def single_references(table: pd.DataFrame, reference: int | None = None) -> list[str]:
    """Each segment's single reference: the first in the seeded per-document order (§4.3.1),
    or with ``reference`` (1-based) the segment's ``reference``-th reference set (Fig. 4.10)."""
    if reference is None:
        return [refs[0] for refs in ordered_references(table, 1)]
    if (fewest := min(len(refs) for refs in table["references"])) < reference:
        raise ValueError(f"cannot take reference set {reference}: a segment has {fewest}")
    return [refs[reference - 1] for refs in table["references"]]
