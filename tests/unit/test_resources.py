"""Memory requests that follow a job's threads and its training data (circle.pipeline.resources)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from circle.core.tables import parquet_rows
from circle.pipeline.resources import (
    DEFAULT_RUNTIME,
    HEADROOM,
    MEMORY,
    RUNTIME,
    RUNTIME_FLOOR_MIN,
    RUNTIME_HEADROOM,
    MemoryModel,
    RuntimeModel,
    duckdb_limit,
    input_mb,
    runtime_model,
)

RULES = Path(__file__).resolve().parents[2] / "workflow" / "rules"


def rule_blocks() -> dict[str, str]:
    """Every rule (checkpoints included) of the workflow and its text."""
    blocks = {}
    for path in RULES.glob("*.smk"):
        for match in re.finditer(r"^(?:rule|checkpoint) (\w+):\n(.*?)(?=^(?:rule|checkpoint) |\Z)",
                                 path.read_text(), flags=re.M | re.S):
            blocks[match.group(1)] = match.group(2)
    return blocks


def test_the_request_is_the_model_with_headroom_rounded_up_to_100_mb():
    model = MemoryModel(base_mb=400, per_thread_mb=1600)
    assert model.request_mb(1) == 2500  # 1.25 * 2000
    assert model.request_mb(2) == 4500  # 1.25 * 3600
    assert model.request_mb(8) == 16500  # 1.25 * 13200
    assert MemoryModel(base_mb=1001).request_mb() == 1300  # 1251.25 rounded up
    assert HEADROOM == 1.25


def test_only_the_split_of_extraction_grows_with_the_training_pairs():
    """Counting holds one batch and the merge spills beyond its request: neither grows with the
    corpus. The split holds the bitext (measured: 204/212/232 MiB at 25/50/100 % of it)."""
    split = MEMORY["split_for_counting"]
    assert split.request_mb(1, 27_574) > split.request_mb(1, 6_900)
    assert split.request_mb(1, 1_700_000) > 3 * split.request_mb(1, 27_574)  # Europarl size
    for rule in ("count_rules", "extract_grammar"):
        assert MEMORY[rule].per_pair_mb == 0
        assert MEMORY[rule].request_mb(1, 1_700_000) == MEMORY[rule].request_mb(1, 0)


def test_the_extraction_merge_asks_for_more_as_its_counts_grow():
    """The default experiment's merge (650 MB of counts) keeps its request; the es-english
    rung's (3,067 MB) gets the DuckDB limit at which it was measured to finish, where the
    default request's limit ran out of memory."""
    merge = MEMORY["extract_grammar"]
    assert merge.request_mb(2, input_mb=650) == 3000
    assert int(duckdb_limit(merge.request_mb(2, input_mb=3067)).removesuffix("MB")) >= 2880
    assert merge.request_mb(2, input_mb=6134) > merge.request_mb(2, input_mb=3067)
    assert merge.request_mb(2, input_mb=0) <= 3000  # a tiny grammar asks for no more


@pytest.mark.parametrize("rule", ["extract_grammar", "filter_grammar", "prepare_pivot",
                                  "pivot_part", "bias_grammar"])
def test_out_of_core_jobs_leave_duckdb_room_within_their_request(rule):
    request = MEMORY[rule].request_mb(2)
    limit_mb = int(duckdb_limit(request).removesuffix("MB"))
    # DuckDB's resident memory exceeded its limit by up to 25 % in the merge (README)
    assert 1.25 * limit_mb < request


def test_the_default_pivot_is_prepared_at_the_duckdb_limit_where_it_does_not_spill():
    """At 6,000 MB the default pivot's preparation does not spill, so its last bits do not
    depend on the limit (circle.grammar.pivot); at 4,000 MB they did."""
    assert duckdb_limit(MEMORY["prepare_pivot"].request_mb(1)) == "6000MB"


@pytest.mark.parametrize("threads, pairs, rules", [(0, 0, 0), (1, -1, 0), (1, 0, -1)])
def test_impossible_jobs_are_refused(threads, pairs, rules):
    with pytest.raises(ValueError, match="threads must be >= 1"):
        MemoryModel(base_mb=100).request_mb(threads, pairs, rules)


def test_a_paraphraser_asks_for_its_grammar_once_whatever_its_workers():
    """Measured peak RSS of loading a paraphrase grammar (bench/grammar_load.py): 607 MiB
    for 2.17 M rules (the default pruned pivot), 2,145 MiB for 12.0 M and 4,096 MiB for 25.1 M
    (exact pivots of a quarter and half of the Bible). The request covers each with headroom,
    and grows with the rules: the exact pivot of the whole Bible (64.6 M rules) asks for
    15 GB and more, where every grammar got 2,000 MB before."""
    paraphrasing = MEMORY["paraphrase_references"]
    assert paraphrasing.rules_input == "grammar"
    for rules, peak_mib in ((2_166_144, 607), (12_000_511, 2_145), (25_068_317, 4_096)):
        assert paraphrasing.request_mb(1, 0, rules) > 1.1 * peak_mib * 2**20 / 1e6
    assert paraphrasing.request_mb(2, 0, 64_590_020) > 15_000
    # the workers share the grammar: one more costs the same whatever its size
    for rules in (2_166_144, 64_590_020):
        assert (paraphrasing.request_mb(3, 0, rules) - paraphrasing.request_mb(2, 0, rules)
                <= 300)
    # the targeted runs load every bias's grammar's largest; untargeted runs load none
    assert MEMORY["tune_translation"].rules_input == "paraphrase_grammars"
    assert (MEMORY["tune_translation"].request_mb(2, 0, 2_166_144)
            > MEMORY["tune_translation"].request_mb(2))


def test_a_model_per_paraphrase_rule_names_the_grammar_it_loads():
    with pytest.raises(ValueError, match="rules_input"):
        MemoryModel(base_mb=100, per_rule_mb=0.001)
    with pytest.raises(ValueError, match="rules_input"):
        MemoryModel(base_mb=100, rules_input="grammar")


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


def test_a_time_limit_is_the_measured_maximum_with_headroom_scaled_by_input_and_threads():
    model = RuntimeModel(minutes=4.42, reference_mb=57.0, reference_threads=2)
    assert model.request_min(2, 57.0) == 14  # 3 x 4.42 = 13.26, rounded up
    assert model.request_min(2, 10.0) == 14  # a smaller input never asks for less
    assert model.request_min(2, 570.0) == 133  # ten times the input, ten times the time
    assert model.request_min(1, 57.0) == 27  # one worker where two were measured
    assert model.request_min(8, 57.0) == 14  # more workers: no less (not all of it scales)
    assert RuntimeModel(0.1, 5.0).request_min(1, 5.0) == RUNTIME_FLOOR_MIN == 10
    assert RUNTIME_HEADROOM == 3.0
    with pytest.raises(ValueError, match="threads must be >= 1"):
        model.request_min(0, 1.0)
    with pytest.raises(ValueError, match="positive minutes"):
        RuntimeModel(0.0, 1.0)


def test_the_default_runs_jobs_fit_in_their_time_limits_and_paper_scale_asks_for_hours():
    """The longest job of each measured rule in the default run's benchmarks (minutes) fits
    with headroom at its own input; a tuning run on the paper's exact paraphrase grammar
    (30 times the default's) and the extraction of a Europarl-size bitext ask for hours."""
    measured = {"count_rules": 3.40, "extract_grammar": 3.18, "filter_grammar": 2.03,
                "decode_shard": 1.00, "tune_translation": 4.42, "tune_paraphraser": 1.14}
    for rule, minutes in measured.items():
        model = RUNTIME[rule]
        assert model.minutes == minutes
        limit = model.request_min(model.reference_threads, model.reference_mb)
        assert limit >= RUNTIME_HEADROOM * minutes and limit >= RUNTIME_FLOOR_MIN
    targeted = RUNTIME["tune_translation"].request_min(2, 57.0 + 30 * 81.0)
    assert targeted > 8 * 60  # the paper's targeted runs were extrapolated at 4-5 h
    assert RUNTIME["split_for_counting"].request_min(1, 5.0 * 60) >= 18  # 60 x the pairs


def test_every_rule_that_runs_a_job_declares_its_time_limit():
    blocks = rule_blocks()
    jobs = {rule for rule, text in blocks.items()
            if re.search(r"^    (script|shell|run|wrapper|notebook):", text, flags=re.M)}
    timed = {rule for rule, text in blocks.items()
             if re.search(r"^\s+runtime=runtime_minutes,$", text, flags=re.M)}
    assert jobs and timed == jobs
    assert set(RUNTIME) <= jobs
    assert set(MEMORY) <= set(RUNTIME)  # every rule with a memory model has a measured time
    constant = {rule for rule, text in blocks.items() if re.search(r"runtime=\d", text)}
    assert not constant, f"constant time limits: {sorted(constant)}"
    assert runtime_model("report_references") == DEFAULT_RUNTIME


def test_input_size_counts_files_and_directories_and_waits_for_missing_ones(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 1_000_000)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "b").write_bytes(b"x" * 500_000)
    assert input_mb([tmp_path / "a", tmp_path / "d"]) == pytest.approx(1.5)
    assert input_mb([tmp_path / "a", tmp_path / "missing"]) is None
