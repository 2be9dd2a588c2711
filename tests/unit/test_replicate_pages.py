"""The replicate-level tests and the power line where users read them: the reference-table pages
(circle.figures.reference_table, circle.figures.report), the findings of the summary page
(circle.figures.summary) and the `circle power` command."""

from __future__ import annotations

import pandas as pd
import pytest
from test_evaluate import summary_inputs
from test_report import evaluation, summary

from circle.cli import main
from circle.experiments.evaluate import condition_summary, write_condition_summary
from circle.experiments.replicates import (
    detectable_difference,
    pooled_sd,
    replicates_needed,
    welch_test,
)
from circle.figures.reference_table import replicate_tests
from circle.figures.report import write_report
from circle.figures.summary import findings, page_order, table_findings

WELCH = {  # condition: (BLEU difference, p; at a common length difference, p)
    "2H": (1.5, 0.001, 0.8, 0.004),
    "3H": (0.4, 0.3, 0.1, 0.6),
    "4H": (-0.8, 0.02, -0.5, 0.2),
    "1H+1P": (0.3, 0.04, 0.2, 0.01),
    "1H+2P": (-0.2, 0.5, 0.1, 0.9),
}
"""Ten tests; Holm over them: 0.001 x 10 = 0.01 and 0.004 x 9 = 0.036 stay below 0.05, the
next, 0.01 x 8 = 0.08, does not."""


def conditions_with_welch(frame: pd.DataFrame) -> pd.DataFrame:
    conditions = summary(frame)
    for metric, offset in (("bleu", 0), ("matched_bleu", 2)):
        conditions[f"{metric}_mean_difference"] = conditions["condition"].map(
            {c: values[offset] for c, values in WELCH.items()})
        conditions[f"{metric}_welch_p_value"] = conditions["condition"].map(
            {c: values[offset + 1] for c, values in WELCH.items()})
    return conditions


def page(tmp_path):
    frame = evaluation()
    table = write_report(frame, tmp_path / "fig4_3.md", tmp_path / "fig4_3.html",
                         tmp_path / "fig4_3.csv", tmp_path / "fig4_3.png",
                         conditions=conditions_with_welch(frame))
    return frame, table, (tmp_path / "fig4_3.md").read_text(encoding="utf-8")


def test_the_page_corrects_its_replicate_level_tests_by_holm(tmp_path):
    _, table, text = page(tmp_path)
    tests = replicate_tests(table, 0.05).set_index(["series", "label", "metric"])
    assert len(tests) == 10
    assert tests.loc[("human", "2 (1H+1)", "bleu"), "holm_p_value"] == pytest.approx(0.01)
    assert tests.loc[("human", "2 (1H+1)", "matched_bleu"), "holm_p_value"] == pytest.approx(
        0.036)
    assert tests.loc[("paraphrase", "2 (1H+1)", "matched_bleu"), "holm_p_value"] == \
        pytest.approx(0.08)
    assert list(tests["mark"]).count("*") == 2 and "†" not in list(tests["mark"])
    assert ("The page makes 10 such tests (BLEU and BLEU at a common length), Holm-corrected "
            "over all 10 (Holm 1979)") in text
    # 5 conditions tested in BLEU, TER and BLEU at a common length by the uncorrected marks
    assert "The 15 approximate randomisation tests of the marks above are not corrected" in text
    rows = {(cells[0], cells[1]): cells[2:] for cells in
            (line.strip("| ").split(" | ") for line in text.splitlines()
             if line.startswith("| ") and len(line.split(" | ")) == 8)}
    assert rows["2 (1H+1)", "Human"] == ["+1.50", "0.001", "0.01*", "+0.80", "0.004", "0.036*"]
    assert rows["4 (1H+3)", "Human"] == ["-0.80", "0.02", "0.14", "-0.50", "0.2", "1"]
    assert rows["2 (1H+1)", "Paraphrased"][3:] == ["+0.20", "0.01", "0.08"]
    csv = pd.read_csv(tmp_path / "fig4_3.csv")
    assert csv["human_bleu_welch_p_value"].tolist()[1:] == [0.001, 0.3, 0.02]


def test_the_power_line_gives_what_the_table_can_detect_and_the_human_gain(tmp_path):
    frame, _, text = page(tmp_path)
    # every condition is one cell of the table; the fewest replicates of a cell with two: 2
    cells = frame.groupby("condition")
    sd = pooled_sd(cells["bleu"].std(), cells["bleu"].count())
    matched = pooled_sd(cells["matched_bleu"].std(), cells["matched_bleu"].count())
    gain = cells["bleu"].mean()["2H"] - cells["bleu"].mean()["1H"]
    matched_gain = cells["matched_bleu"].mean()["2H"] - cells["matched_bleu"].mean()["1H"]
    assert (f"Power: with 2 replicates per condition, the two-sided t-test at α = 0.05 detects a "
            f"difference of {detectable_difference(sd, 2):.2f} BLEU (replicate sd {sd:.2f}) and "
            f"{detectable_difference(matched, 2):.2f} at a common length (replicate sd "
            f"{matched:.2f}) with power 0.8") in text
    assert (f"The human control's gain, 2H − 1H, is {gain:+.2f} BLEU and {matched_gain:+.2f} at "
            "a common length.") in text


def test_a_page_without_replicate_level_tests_has_no_such_section(tmp_path):
    frame = evaluation()
    write_report(frame, tmp_path / "t.md", tmp_path / "t.html", tmp_path / "t.csv",
                 tmp_path / "t.png", conditions=summary(frame))
    assert "Replicate-level tests" not in (tmp_path / "t.md").read_text(encoding="utf-8")


def test_the_findings_count_the_replicate_level_marks(tmp_path):
    page(tmp_path)
    lines = table_findings(pd.read_csv(tmp_path / "fig4_3.csv"), "1H")
    assert ("replicate-level BLEU (Welch, Holm over the table's 10 tests): better in 1 of 3 rows "
            "(2 (1H+1)), worse in 0") in lines[0]
    assert "replicate-level BLEU at a common length (Welch, Holm over the table's 10 tests): " \
        "better in 0 of 2 rows, worse in 0" in lines[1]
    # the summary page reads the level of the marks from the page
    text = (tmp_path / "fig4_3.md").read_text(encoding="utf-8")
    strict = text.replace("at adjusted p < 0.05", "at adjusted p < 0.01")
    assert "better in 0 of 3 rows, worse in 0" in findings(
        tmp_path, page_order(["fig4_3"]), {"fig4_3": strict})[0].split("replicate-level")[1]


def test_circle_power_reads_an_experiments_condition_summary(tmp_path, capsys):
    evaluation_rows, stats, _, _ = summary_inputs(
        {"1H": [0.5, 0.55, 0.45, 0.5], "2H": [0.3, 0.35, 0.25, 0.32]})
    conditions = condition_summary(evaluation_rows, stats, "1H", shuffles=100)
    results = tmp_path / "results" / "x"
    (results / "evaluation").mkdir(parents=True)
    write_condition_summary(conditions, results / "evaluation" / "conditions.parquet")
    assert main(["power", "--results", str(results), "--difference", "0.5"]) == 0
    out = capsys.readouterr().out
    sd = pooled_sd(conditions["bleu_sd"], conditions["replicates"])
    assert (f"BLEU: replicate sd {sd:.3f} (pooled over 2 conditions); with 4 replicates per "
            f"condition the table detects {detectable_difference(sd, 4):.2f} BLEU; 0.5 BLEU "
            f"needs {replicates_needed(0.5, sd)} replicates per condition") in out
    runs = evaluation_rows.set_index(["condition", "replicate"])["matched_bleu"]
    p_value = welch_test(runs["1H"], runs["2H"]).p_value
    assert "replicate-level tests (Welch's t; Holm over the table's 2 tests):" in out
    assert f"{p_value:.3g}" in out.splitlines()[-1]


def test_circle_power_names_the_table_without_spread(tmp_path, capsys):
    evaluation_rows, stats, _, _ = summary_inputs({"1H": [0.5], "2H": [0.3]})
    results = tmp_path / "results" / "x"
    (results / "evaluation" / "dose").mkdir(parents=True)
    path = results / "evaluation" / "dose" / "conditions.parquet"
    write_condition_summary(condition_summary(evaluation_rows, stats, "1H", shuffles=10), path)
    assert main(["power", "--results", str(results), "--run-set", "dose/"]) == 2
    assert f"{path}: no condition has two replicates that differ in bleu" in \
        capsys.readouterr().err
