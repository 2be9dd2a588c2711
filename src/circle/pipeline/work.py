"""What a run's decoding cost, in counts no machine changes: sentence decodes.

Wall and CPU seconds of one machine compare only within one interleaved measurement; how many
sentences the decoder translated does not drift. Tuning runs log theirs per iteration
(``decoded_sentences`` of :data:`~circle.core.schemas.TUNING_LOG`: lists recorded by the decode
stage are not counted), and every decoded evaluation set is an n-best table of its segments.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pyarrow.parquet as pq

from circle.core import schemas
from circle.core.layout import DECODE_NBEST, TUNING_LOG, Results
from circle.core.tables import read_table


@dataclass(frozen=True)
class DecodingWork:
    """Sentence decodes of an experiment's results: those of its tuning runs (the MT system's
    and the paraphraser's) and those of its decoded sets (each set's segments once per
    weight vector)."""

    tuning_runs: int
    tuning_decodes: int
    decoded_sets: int
    set_decodes: int

    @classmethod
    def of(cls, results: str | os.PathLike) -> DecodingWork:
        """The counts of the results folder ``results`` (``results/<experiment>``)."""
        layout = Results.at(results)
        logs = layout.files(TUNING_LOG)
        tuning = sum(int(read_table(path, schemas.TUNING_LOG, columns=["decoded_sentences"])
                         ["decoded_sentences"].sum()) for path in logs)
        sets = layout.files(DECODE_NBEST)
        segments = sum(len(pq.read_table(path, columns=["segment_id"]).column(0).unique())
                       for path in sets)
        return cls(len(logs), tuning, len(sets), segments)

    def line(self) -> str:
        """The counts as the line that ends a run."""
        return (f"Decoding: {self.tuning_decodes + self.set_decodes:,} sentence decodes, "
                f"{self.tuning_decodes:,} in {self.tuning_runs} tuning runs and "
                f"{self.set_decodes:,} in {self.decoded_sets} decoded sets.")
