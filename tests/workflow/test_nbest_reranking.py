"""lm.rerank_nbest: the reranking LM as an input of the jobs that decode n-best lists (dry
runs), and the tiny default target with it, whose tables, weights and logs carry the feature."""

from __future__ import annotations

import json
import re

import pytest
from test_workflow import snakemake, tiny_config

from circle.core.schemas import GRID_SAMPLE, ITERATION_SCORES, TUNING_LOG
from circle.core.tables import read_metadata, read_table
from circle.decoder import read_weights
from circle.decoder.model import DECODER_FEATURES, RERANK_FEATURE, Model
from circle.decoder.nbest import NBEST

pytestmark = pytest.mark.workflow

RERANKING_LM = "results/tiny/lm/5gram.binary"
TEST_DECODE = "results/tiny/decode/1H+1P.rep1/test.nbest.parquet"
NBEST_JOBS = ("decode_shard", "tune_paraphraser", "paraphrase_references", "tune_translation")


def planned_inputs(result) -> dict[str, list[str]]:
    """Each planned rule's input lines (one per job), from a dry run's output."""
    jobs: dict[str, list[str]] = {}
    for block in re.split(r"^(?=rule \w+:$)", result.stdout, flags=re.M)[1:]:
        name = block.split(":", 1)[0].removeprefix("rule ")
        inputs = re.search(r"^\s+input: (.*)$", block, flags=re.M)
        jobs.setdefault(name, []).append(inputs.group(1) if inputs else "")
    return jobs


def tiny_rerank_config(tmp_path, on: bool, **changes):
    return tiny_config(tmp_path, **{"lm.rerank_nbest": on,
                                    "tuning.conditions": ["1H", "1H+1P"], **changes})


@pytest.mark.parametrize("on", [True, False])
def test_the_option_makes_the_reranking_lm_an_input_of_every_nbest_job(tmp_path, on):
    result = snakemake("-n", "--forceall", "--configfile", str(tiny_rerank_config(tmp_path, on)),
                       "--directory", str(tmp_path), TEST_DECODE)
    assert result.returncode == 0, result.stdout + result.stderr
    jobs = planned_inputs(result)
    for rule in NBEST_JOBS:
        assert jobs[rule], rule
        assert all((RERANKING_LM in inputs) == on for inputs in jobs[rule]), (rule, jobs[rule])


def test_a_fanned_out_run_gives_its_shard_and_iteration_jobs_the_reranking_lm(tmp_path):
    config = tiny_rerank_config(tmp_path, True, **{"tuning.fan_out": 2})
    result = snakemake("-n", "--forceall", "--configfile", str(config), "--directory",
                       str(tmp_path), TEST_DECODE)
    assert result.returncode == 0, result.stdout + result.stderr
    jobs = planned_inputs(result)
    assert jobs["tune_shard"] and all(RERANKING_LM in inputs for inputs in jobs["tune_shard"])


def test_the_tiny_default_target_runs_with_the_option(tmp_path):
    """The tiny config's default target (1H+1T, the grid search, the report) and fig5_4 (the
    per-iteration test decodes) with the option: the MT and paraphraser tables, weights and
    tuning logs carry the feature; the grid sample's MT output is the reranked 1-best of 1H's
    tune decode; the test 1-best of the MT runs, 1H+1T's included, is the argmax of each
    n-best list under all the weights."""
    config = tiny_config(tmp_path, **{"lm.rerank_nbest": True})
    result = snakemake("--cores", "2", "--configfile", str(config), "--directory",
                       str(tmp_path), "all", "fig5_4")
    assert result.returncode == 0, result.stdout + result.stderr
    results = tmp_path / "results" / "tiny"
    for table in ("decode/untuned-translation/tune.nbest.parquet",
                  "paraphrase/untargeted-bias0/tune.nbest.parquet",
                  "decode/1H+1P.rep0/test.nbest.parquet", "decode/1H+1T.rep0/test.nbest.parquet"):
        assert json.loads(read_metadata(results / table)["feature_names"])[-1] == RERANK_FEATURE
    for run in ("paraphraser-bias0", "1H+1P.rep0", "1H+1T.rep0", "1H+1T_b0_w-1.rep0"):
        assert RERANK_FEATURE in read_weights(results / "weights" / f"{run}.txt")
        log = read_metadata(results / "tune" / f"{run}.parquet")
        assert json.loads(log["feature_names"])[-1] == RERANK_FEATURE
    scores = read_table(results / "iterations" / "1H+1T_b0_w-1.rep0.parquet", ITERATION_SCORES)
    assert len(scores) == len(read_table(results / "tune" / "1H+1T_b0_w-1.rep0.parquet",
                                         TUNING_LOG))
    tune_best = read_table(results / "decode" / "1H.rep0" / "tune.nbest.parquet", NBEST)
    tune_best = tune_best[tune_best["rank"] == 0].set_index("segment_id")["hypothesis"]
    sample = read_table(results / "grid" / "sample.parquet", GRID_SAMPLE)
    assert list(sample["mt_output"]) == [tune_best[s] for s in sample["segment_id"]]
    for run in ("1H+1P.rep0", "1H+1T.rep0"):
        weights = read_weights(results / "weights" / f"{run}.txt")
        table = results / "decode" / run / "test.nbest.parquet"
        names = json.loads(read_metadata(table)["feature_names"])
        model = Model([n for n in names if n not in (*DECODER_FEATURES, RERANK_FEATURE)],
                      weights, rerank=True)
        nbest = read_table(table, NBEST)
        best = [max(group.itertuples(), key=lambda row: model.dot(row.features)).hypothesis
                for _, group in nbest.groupby("segment_id", sort=False)]
        onebest = (results / "decode" / run / "test.1best.txt").read_text().splitlines()
        assert onebest == best
    assert (results / "report" / "index.html").is_file()
