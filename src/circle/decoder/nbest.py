"""Decoder output: hypotheses, the Moses n-best text format, and n-best table rows.

Text lines are Moses' (``OutputNBestList``, read by Moses' ``mert`` tools):
``line ||| hypothesis ||| name= value name= value ... ||| total``, where ``line`` is the 0-based
position of the sentence in the decoder's input and every feature name carries a trailing ``=``
and is followed by its value. Numbers are written with Python's shortest round-trip
representation, so a reader recovers the exact values. Table rows follow :data:`NBEST`, whose
``features`` list is in the order of the table metadata ``circle.feature_names`` (a JSON list).
A list's 1-best is its first hypothesis, the table row of rank 0 (:func:`best_text`,
:func:`best_hypotheses`, :func:`best_of`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from circle.core.schemas import TableSchema

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Hypothesis:
    """One output string with its feature values and model score (= features · weights)."""

    text: str
    score: float
    features: dict[str, float]


NBEST = TableSchema(
    "nbest",
    1,
    pa.schema([
        pa.field("segment_id", pa.int64(), nullable=False),
        pa.field("target", pa.string()),
        pa.field("rank", pa.int32(), nullable=False),
        pa.field("hypothesis", pa.string(), nullable=False),
        pa.field("score", pa.float64(), nullable=False),
        pa.field("features", pa.list_(pa.float64()), nullable=False),
    ]),
    "Unique n-best lists of the SCFG decoder: one row per (segment, targeting string, rank). "
    "`target` is the targeting string T of thesis eq. 5.1 (null when untargeted); `features` "
    "holds the feature values in the order of the metadata `circle.feature_names` (JSON list); "
    "`score` is their dot product with the decoding weights.",
)


def format_nbest(line: int, hypotheses: Sequence[Hypothesis]) -> list[str]:
    """Moses n-best lines (without newlines) for the sentence at 0-based input position
    ``line``."""
    return [f"{line} ||| {h.text} ||| "
            + " ".join(f"{name}= {value!r}" for name, value in h.features.items())
            + f" ||| {h.score!r}" for h in hypotheses]


def nbest_rows(segment_id: int, hypotheses: Sequence[Hypothesis],
               target: str | None = None) -> list[dict]:
    """Rows of :data:`NBEST` for one segment (features in each hypothesis' feature order)."""
    return [{"segment_id": segment_id, "target": target, "rank": rank, "hypothesis": h.text,
             "score": h.score, "features": list(h.features.values())}
            for rank, h in enumerate(hypotheses)]


def best_text(hypotheses: Sequence[Hypothesis]) -> str:
    """The text of an n-best list's 1-best; ``""`` for an empty list (no derivation)."""
    return hypotheses[0].text if hypotheses else ""


def best_hypotheses(nbest: pd.DataFrame) -> dict[int, str]:
    """The 1-best of each list of an n-best table (rows of :data:`NBEST`, or of a table with
    its ``segment_id``, ``rank`` and ``hypothesis``): segment id -> the text of its rank-0
    hypothesis, in table order. A segment whose list is empty has none."""
    best = nbest[nbest["rank"] == 0]
    return dict(zip(best["segment_id"], best["hypothesis"], strict=True))


def best_of(nbest: pd.DataFrame, segments: Sequence[int],
            where: str | os.PathLike = "the n-best table") -> list[str]:
    """The 1-best of each of ``segments`` (:func:`best_hypotheses`), in that order; a
    ValueError naming ``where`` (the table's file) if a segment has none."""
    best = best_hypotheses(nbest)
    if missing := [segment for segment in segments if segment not in best]:
        raise ValueError(f"{where}: no 1-best for segments {missing[:5]}")
    return [best[segment] for segment in segments]
