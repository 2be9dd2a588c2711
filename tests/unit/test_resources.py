"""Memory requests that follow a job's threads and its training data (circle.resources)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from circle.resources import HEADROOM, MEMORY, MemoryModel, parquet_rows

RULES = Path(__file__).resolve().parents[2] / "workflow" / "rules"


def rule_blocks() -> dict[str, str]:
    """Every rule of the workflow and its text."""
    blocks = {}
    for path in RULES.glob("*.smk"):
        for match in re.finditer(r"^rule (\w+):\n(.*?)(?=^rule |\Z)", path.read_text(),
                                 flags=re.M | re.S):
            blocks[match.group(1)] = match.group(2)
    return blocks


def test_the_request_is_the_model_with_headroom_rounded_up_to_100_mb():
    model = MemoryModel(base_mb=400, per_thread_mb=1600)
    assert model.request_mb(1) == 2500  # 1.25 * 2000
    assert model.request_mb(2) == 4500  # 1.25 * 3600
    assert model.request_mb(8) == 16500  # 1.25 * 13200
    assert MemoryModel(base_mb=1001).request_mb() == 1300  # 1251.25 rounded up
    assert HEADROOM == 1.25


def test_extraction_grows_with_the_training_pairs():
    model = MEMORY["extract_grammar"]
    small, default = model.request_mb(2, 6_900), model.request_mb(2, 27_574)
    # measured peaks: 2.8 GB at a quarter of the default training set, 6.3 GB at all of it
    assert 2_800 < small < 2_800 * 1.5
    assert 6_300 < default < 6_300 * 1.5
    assert model.request_mb(2, 0) < small


@pytest.mark.parametrize("threads, pairs", [(0, 0), (1, -1)])
def test_impossible_jobs_are_refused(threads, pairs):
    with pytest.raises(ValueError, match="threads must be >= 1"):
        MemoryModel(base_mb=100).request_mb(threads, pairs)


def test_every_model_is_a_rule_that_uses_it_and_every_parallel_rule_has_one():
    blocks = rule_blocks()
    modelled = {rule for rule, text in blocks.items()
                if re.search(r"^\s+mem_mb=memory_mb,$", text, flags=re.M)}
    assert modelled == set(MEMORY)
    parallel = {rule for rule, text in blocks.items()
                if (m := re.search(r"^\s+threads: (\d+)", text, flags=re.M)) and int(m[1]) > 1}
    assert parallel and parallel <= modelled
    constant = {rule for rule, text in blocks.items() if re.search(r"mem_mb=\d", text)}
    assert not constant, f"constant memory requests: {sorted(constant)}"


def test_rows_are_read_from_the_parquet_footer(tmp_path):
    path = tmp_path / "pairs.parquet"
    pd.DataFrame({"segment_id": range(1234)}).to_parquet(path)
    assert parquet_rows(path) == 1234
