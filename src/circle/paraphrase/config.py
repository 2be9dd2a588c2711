"""A targeted paraphraser's configuration and a bias's name: what names them in a tuning
condition, a grid point and a grammar file, and the grid search's choice read back as one,
without the paraphraser (so that conditions can be parsed without loading the decoder)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

from circle.core.schemas import GRID_CHOICE
from circle.core.tables import read_table


def bias_name(bias: float) -> str:
    """The name of a self-paraphrase bias, as its grammar's file (``bias<name>.parquet``) and
    every lookup spell it: 0 -> '0', 0.05 -> '0.05' (shortest form, so a bias read back from a
    table names the same grammar as the config's)."""
    return f"{float(bias):g}"


@dataclass(frozen=True)
class ParaphraserConfig:
    """One configuration of the targeted paraphraser (thesis §5.2.3, the point [p, w] of
    Fig. 5.8): the self-paraphrase bias ``bias`` (p, eq. 5.3) of the grammar it decodes with,
    and the weight of the targeting feature (eq. 5.1), ≤ 0 (0: untargeted). The thesis writes
    the weight as −w."""

    bias: float
    targeting_weight: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.bias) and 0.0 <= self.bias < 1.0):
            raise ValueError(f"self-paraphrase bias must be in [0, 1), got {self.bias}")
        if not (math.isfinite(self.targeting_weight) and self.targeting_weight <= 0.0):
            raise ValueError("the targeting weight must be a finite number ≤ 0 (negative "
                             f"weights target), got {self.targeting_weight}")

    @property
    def targeted(self) -> bool:
        return self.targeting_weight != 0.0

    def to_point(self) -> dict[str, float]:
        """The configuration as ``grid_search.point`` spells it, ``{bias, weight}``: the form
        the workflow's ``targeted`` params carry (:meth:`from_point` reads it back)."""
        return {"bias": self.bias, "weight": self.targeting_weight}

    @classmethod
    def from_point(cls, point: Mapping[str, float]) -> ParaphraserConfig:
        """The configuration of a ``grid_search.point`` or of :meth:`to_point`."""
        return cls(float(point["bias"]), float(point["weight"]))


def read_grid_choice(path: str | os.PathLike | None) -> ParaphraserConfig:
    """The targeted paraphraser's configuration the grid search chose (thesis §5.2.3), from its
    :data:`~circle.core.schemas.GRID_CHOICE` table."""
    if path is None:
        raise ValueError("neither a grid choice table nor a configured point")
    row = read_table(path, GRID_CHOICE).iloc[0]
    return ParaphraserConfig(float(row["bias"]), float(row["targeting_weight"]))
