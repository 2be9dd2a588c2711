"""Export of a grammar table to the Joshua/Thrax text format.

One rule per line, ``[X] ||| source ||| target ||| name=value ...``, with the labelled features
of the table's schema (``schema.features``). Values are the stored natural logs, not Thrax's
negated logs; a ``.gz`` output path is gzip-compressed.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pyarrow.parquet as pq

from circle.core.tables import atomic_path
from circle.grammar.filter import GRAMMAR_SCHEMAS
from circle.grammar.io import grammar_schema


def export_thrax(grammar_path: str | os.PathLike, out_path: str | os.PathLike,
                 batch_size: int = 65536) -> int:
    """Write the grammar table at ``grammar_path`` as Joshua/Thrax text; returns lines written."""
    schema = grammar_schema(grammar_path, GRAMMAR_SCHEMAS)
    columns = ["lhs", "source", "target", *schema.features]
    lines = 0
    with atomic_path(out_path) as tmp:
        opener = gzip.open if Path(out_path).suffix == ".gz" else open
        with opener(tmp, "wt", encoding="utf-8") as out:
            grammar = pq.ParquetFile(grammar_path, page_checksum_verification=True)
            for batch in grammar.iter_batches(batch_size, columns=columns):
                rows = batch.to_pydict()
                for k, (lhs, source, target) in enumerate(
                        zip(rows["lhs"], rows["source"], rows["target"], strict=True)):
                    features = " ".join(f"{name}={rows[name][k]:.6g}" for name in schema.features)
                    out.write(f"[{lhs}] ||| {source} ||| {target} ||| {features}\n")
                lines += batch.num_rows
    return lines
