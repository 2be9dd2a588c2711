"""The start-up sweep of unreadable tables touches only the workflow's outputs, and a dry run
touches nothing."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from circle.core.schemas import BITEXT
from circle.core.tables import remove_unreadable_tables, write_table

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny"


def tiny_bitext() -> pd.DataFrame:
    """The first lines of the tiny corpus's training bitext."""
    def lines(name: str) -> list[str]:
        return (TINY / name).read_text(encoding="utf-8").splitlines()[:5]

    return pd.DataFrame({"segment_id": range(5), "document": "train",
                         "source": lines("train.es.txt"), "target": lines("train.en.txt")})


def truncated_tables(directory: Path) -> tuple[Path, Path]:
    """A truncated grammar (an output) and a truncated file of the user's (not one)."""
    grammar, own = directory / "grammar" / "bilingual.parquet", directory / "mine.parquet"
    for path in (grammar, own):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_table(tiny_bitext(), path, BITEXT)
        path.write_bytes(path.read_bytes()[:-100])
    return grammar, own


def test_only_an_unreadable_output_is_removed(tmp_path):
    grammar, own = truncated_tables(tmp_path)
    removed = remove_unreadable_tables(tmp_path, lambda path: path == str(grammar),
                                       dry_run=False)
    assert list(removed) == [str(grammar)] and removed[str(grammar)].endswith("; removed it")
    assert not grammar.exists() and own.exists()


def test_a_dry_run_names_the_unreadable_outputs_and_removes_nothing(tmp_path):
    grammar, own = truncated_tables(tmp_path)
    before = {path: path.read_bytes() for path in (grammar, own)}
    removed = remove_unreadable_tables(tmp_path, lambda path: path == str(grammar),
                                       dry_run=True)
    assert list(removed) == [str(grammar)]
    assert removed[str(grammar)].startswith(f"{grammar}: not a readable Parquet file (")
    assert removed[str(grammar)].endswith("; a run would remove it (a dry run removes nothing)")
    assert {path: path.read_bytes() for path in before} == before
