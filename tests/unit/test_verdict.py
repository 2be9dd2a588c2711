"""The powered experiment's verdict (circle.experiments.verdict): the decision rules of
docs/results.md on constructed comparisons whose verdict is known, and the page read from
condition summaries as evaluate_runs writes them."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
import yaml

from circle.cli import main
from circle.core.schemas import CONDITION_SUMMARY
from circle.core.tables import write_table
from circle.experiments import verdict
from circle.experiments.replicates import welch_test
from circle.figures.verdict import verdict_table
from circle.pipeline.verdict import powered_verdict, write_verdict_page


def compared(condition: str, difference: float, p_value: float,
             experiment: str = "powered") -> verdict.Comparison:
    return verdict.Comparison(experiment, condition, 8, 8, difference, p_value,
                              difference + 1.0, p_value, p_value)


HUMAN = compared("2H", 0.60, 0.001)


@pytest.mark.parametrize("human, paraphrasers, rule", [
    # 2H not resolved: not significant, or significant but worse than 1H
    (compared("2H", 0.60, 0.2), [compared("1H+1P", 0.9, 0.001)], "a"),
    (compared("2H", -0.60, 0.001), [compared("1H+1P", 0.1, 0.5)], "a"),
    # the best paraphraser reaches half the human gain (0.30), significant or not
    (HUMAN, [compared("1H+1P", 0.30, 0.4), compared("1H+1P", -0.5, 0.01, "b")], "b"),
    (HUMAN, [compared("1H+1P", 0.29, 0.0001)], "d"),
    # every paraphraser at or below 1H: worse, or better but not significant
    (HUMAN, [compared("1H+1P", -0.4, 0.001), compared("1H+1P", 0.2, 0.2, "b")], "c"),
])
def test_the_first_rule_that_holds_is_the_verdict(human, paraphrasers, rule):
    assert verdict.decide(human, paraphrasers).rule == rule


def test_a_paraphraser_is_above_1h_only_after_holm_over_the_paraphrasers():
    # 0.02 alone is below 0.05; Holm over three tests makes it 0.06
    tests = [compared("1H+1P", 0.2, 0.02), compared("1H+1P", 0.1, 0.5, "b"),
             compared("1H+1P", 0.1, 0.6, "c")]
    read = verdict.decide(HUMAN, tests)
    assert [p.holm_p_value for p in read.paraphrasers] == pytest.approx([0.06, 1.0, 1.0])
    assert not any(p.above for p in read.paraphrasers) and read.rule == "c"
    alone = verdict.decide(HUMAN, tests[:1])
    assert alone.paraphrasers[0].above and alone.rule == "d"


def test_the_copy_control_resolved_either_way_fails_the_check():
    for difference in (0.4, -0.4):
        failed = verdict.decide(HUMAN, [compared("1H+1P", 0.1, 0.5)],
                                [compared("1H+1X_copy", difference, 0.01)])
        assert failed.copy_failed
    held = verdict.decide(HUMAN, [compared("1H+1P", 0.1, 0.5)],
                          [compared("1H+1X_copy", 0.3, 0.2), compared("1H+1X_kjv", 0.5, 0.001)])
    assert not held.copy_failed  # the KJV verse is reported, and checks nothing


def summary_frame(replicate_scores: dict[str, tuple[list[float], list[float]]]) -> pd.DataFrame:
    """A CONDITION_SUMMARY from replicates' (raw, common-length) test BLEU: means and Welch
    tests against 1H as evaluate_runs computes them, other columns filled in."""
    base_raw, base_matched = replicate_scores["1H"]
    rows = []
    for condition, (raw, matched) in replicate_scores.items():
        row = {}
        for field in CONDITION_SUMMARY.arrow:
            if pa.types.is_floating(field.type):
                row[field.name] = 0.0
            elif pa.types.is_integer(field.type):
                row[field.name] = 0
            elif pa.types.is_boolean(field.type):
                row[field.name] = False
            else:
                row[field.name] = ""
        row.update(condition=condition, replicates=len(raw), bleu_mean=sum(raw) / len(raw),
                   matched_bleu_mean=sum(matched) / len(matched), matched_bleu_p_value=0.5,
                   baseline_condition=None if condition == "1H" else "1H")
        for metric, scores, base in (("bleu", raw, base_raw),
                                     ("matched_bleu", matched, base_matched)):
            test = None if condition == "1H" else welch_test(base, scores)
            row[f"{metric}_mean_difference"] = None if test is None else test.difference
            row[f"{metric}_welch_p_value"] = None if test is None else test.p_value
        rows.append(row)
    return pd.DataFrame(rows)


def experiment(root: Path, name: str, run_set: str, scores, replicates: int = 4) -> Path:
    results = root / "results" / name
    (results / "evaluation" / run_set).mkdir(parents=True)
    (results / "config.yaml").write_text(yaml.safe_dump({"tuning": {"replicates": replicates}}))
    write_table(summary_frame(scores), results / "evaluation" / run_set / "conditions.parquet",
                CONDITION_SUMMARY)
    return results


ONE_H = ([40.0, 40.2, 39.8, 40.1], [41.0, 41.1, 40.9, 41.0])


def test_the_verdict_page_reads_the_experiments_summaries(tmp_path):
    main = experiment(tmp_path, "powered", "dose/", {
        "1H": ONE_H, "2H": ([42.0, 42.3, 41.9, 42.1], [41.6, 41.8, 41.7, 41.5]),
        "1H+1P": ([40.0, 39.9, 40.1, 40.3], [40.5, 40.6, 40.4, 40.7]),
        "1H+1X_copy": ([40.1, 40.0, 39.9, 40.2], [41.0, 40.9, 41.1, 41.0])})
    rung = experiment(tmp_path, "powered-rung", "", {
        "1H": ONE_H, "1H+1P": ([40.2, 40.4, 40.0, 40.1], [41.2, 41.3, 41.1, 41.2])})
    page = write_verdict_page(main, [rung], tmp_path / "verdict", "abc1234")
    read = powered_verdict(main, [rung])
    # 2H gains 0.65 (resolved); the rung's +0.2 is below half of it but above 1H after Holm
    assert read.human.difference == pytest.approx(0.65)
    assert read.human_resolved and read.rule == "d"
    rung_test = welch_test(ONE_H[1], [41.2, 41.3, 41.1, 41.2])
    assert read.paraphrasers[1].comparison.p_value == pytest.approx(rung_test.p_value)
    # Holm over two: the default paraphraser's smaller p doubled, the rung's kept (it is larger)
    smaller = read.paraphrasers[0].comparison.p_value
    assert smaller < rung_test.p_value and read.paraphrasers[0].comparison.difference < 0
    assert [p.holm_p_value for p in read.paraphrasers] == pytest.approx(
        [2 * smaller, max(2 * smaller, rung_test.p_value)])
    assert not read.copy_failed
    text = page.read_text()
    assert "**Verdict: rule (d).**" in text and "made at abc1234" in text
    assert "| powered-rung | 1H+1P | 4 vs 4 | +0.20 |" in text
    table = pd.read_csv(tmp_path / "verdict" / "verdict.csv")
    assert table["condition"].tolist() == ["2H", "1H+1P", "1H+1P", "1H+1X_copy"]
    assert verdict_table(read)["role"].tolist() == ["human control", "paraphraser",
                                                    "paraphraser", "control"]
    assert not math.isnan(table.loc[1, "holm_p_value"])


def test_the_verdict_refuses_incomplete_conditions_and_other_mt_systems(tmp_path):
    short = ([40.0, 40.2, 39.8], [41.0, 41.1, 40.9])
    main = experiment(tmp_path, "powered", "dose/", {
        "1H": ONE_H, "2H": short, "1H+1P": ONE_H})
    with pytest.raises(ValueError, match="powered: 2H has 3 of 4 replicates"):
        powered_verdict(main)
    main = experiment(tmp_path / "b", "powered", "dose/", {
        "1H": ONE_H, "2H": ONE_H, "1H+1P": ONE_H})
    other = experiment(tmp_path / "b", "other", "", {
        "1H": ([40.5, 40.2, 39.8, 40.1], ONE_H[1]), "1H+1P": ONE_H})
    with pytest.raises(ValueError, match="other's 1H .* is not powered's"):
        powered_verdict(main, [other])
    missing = experiment(tmp_path / "c", "powered", "dose/", {"1H": ONE_H, "2H": ONE_H})
    with pytest.raises(ValueError, match="powered: no 1H\\+1P in its condition summary"):
        powered_verdict(missing)


def test_circle_verdict_writes_the_page_of_the_experiments_named(tmp_path, capsys):
    experiment(tmp_path, "powered", "dose/", {
        "1H": ONE_H, "2H": ([42.0, 42.3, 41.9, 42.1], [41.6, 41.8, 41.7, 41.5]),
        "1H+1P": ([40.0, 39.9, 40.1, 40.3], [40.5, 40.6, 40.4, 40.7])})
    assert main(["verdict", "results/powered", "--project", str(tmp_path),
                 "--made-at", "abc1234"]) == 0
    page = tmp_path / "results/verdict/verdict.md"
    assert capsys.readouterr().out.strip() == str(page)
    # 2H resolved, the paraphraser worse than 1H
    assert "**Verdict: rule (c).**" in page.read_text()
    assert (tmp_path / "results/verdict/verdict.html").exists()
