"""A user's Parquet corpus file is read as one column of sentences in row order: columns that
would say otherwise are refused, not ignored."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from circle.corpus.prepare import file_tables
from circle.corpus.validate import CorpusError

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny"


def tiny_files(**test_references: str | Path) -> dict:
    """The tiny corpus's files, with the test set's references replaced by ``test_references``
    when given."""
    def evalset(name: str) -> dict:
        return {"source": str(TINY / f"{name}.es.txt"),
                "references": [str(TINY / f"{name}.ref{i}.txt") for i in range(2)]}

    files = {"train": {"source": str(TINY / "train.es.txt"), "target": str(TINY / "train.en.txt")},
             "tune": evalset("tune"), "test": evalset("test"), "paratune": evalset("paratune")}
    if test_references:
        files["test"]["references"] = [str(path) for path in test_references.values()]
    return files


def test_a_parquet_reference_of_text_alone_reads_as_its_text_file(tmp_path):
    lines = (TINY / "test.ref1.txt").read_text(encoding="utf-8").splitlines()
    parquet = tmp_path / "test.ref1.parquet"
    pq.write_table(pa.table({"text": lines}), parquet)
    tables = file_tables(tiny_files(ref0=TINY / "test.ref0.txt", ref1=parquet), 2000, 13)
    expected = file_tables(tiny_files(), 2000, 13)
    assert tables["test"].equals(expected["test"])


def test_a_parquet_reference_with_segment_ids_is_refused_naming_file_and_columns(tmp_path):
    """The reference's rows in another order with their segment ids: read by row order, each
    source would be paired with another sentence's reference."""
    lines = (TINY / "test.ref1.txt").read_text(encoding="utf-8").splitlines()
    order = list(reversed(range(len(lines))))
    parquet = tmp_path / "test.ref1.parquet"
    pq.write_table(pa.table({"segment_id": order, "document": ["gen"] * len(lines),
                             "text": [lines[i] for i in order]}), parquet)
    with pytest.raises(CorpusError) as error:
        file_tables(tiny_files(ref0=TINY / "test.ref0.txt", ref1=parquet), 2000, 13)
    assert error.value.problems == [
        f"{parquet}: Parquet file has columns ['segment_id', 'document'] besides 'text'; circle "
        "reads only 'text' and pairs a set's files by row order, so write the file with the "
        "'text' column alone, its rows in the order of the other files (document ids go in the "
        "set's documents file)"]
