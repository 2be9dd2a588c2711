"""A dry run changes nothing: the start-up sweep of unreadable tables only says what a run
would remove, and never touches a file that no rule makes."""

from __future__ import annotations

import pytest
from test_workflow import snakemake, tiny_config

pytestmark = pytest.mark.workflow


def test_a_dry_run_removes_no_unreadable_table_and_the_sweep_skips_the_users_own(tmp_path):
    results = tmp_path / "results" / "tiny"
    grammar, own = results / "grammar" / "bilingual.parquet", results / "mine.parquet"
    for path in (grammar, own):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"not Parquet")
    config = tiny_config(tmp_path)
    result = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path),
                       "results/tiny/grammar/bilingual.parquet")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert grammar.read_bytes() == own.read_bytes() == b"not Parquet"
    [line] = [line for line in output.splitlines() if "not a readable Parquet file" in line]
    assert line.startswith("results/tiny/grammar/bilingual.parquet: not a readable Parquet file")
    assert line.endswith("; a run would remove it (a dry run removes nothing), so that a run "
                         "would rebuild it and what was made from it")
    assert "mine.parquet" not in output and "rule extract_grammar:" in output
