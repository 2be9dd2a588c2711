"""The thesis's other figures: their run sets (circle.experiments.paper_runs), tables and readings
(circle.figures.paper, circle.figures.focus)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest

from circle.experiments.conditions import Condition
from circle.experiments.paper_runs import figure_runs, paper_figures
from circle.figures.focus import focus_rows, focus_table
from circle.figures.paper import (
    FigurePage,
    metric_table,
    paper_tables_page,
    translator_markdown,
    translator_table,
    tuning_set_reading,
    tuning_set_table,
)

CONDITIONS = ["1H", "2H", "1H+1P", "1H+2P", "1H+1T"]


def names(figure):
    return [c.name for c in figure.conditions]


def test_each_figure_names_the_runs_it_shows():
    figures = {f.key: f for f in paper_figures(CONDITIONS, 3, "bleu", "terbleu", [0.25])}
    assert names(figures["fig4_8"]) == ["1H", "1H+1P", "1H_terbleu", "1H+1P_terbleu"]
    assert names(figures["fig4_10"]) == ["1H_ref1", "1H+1P_ref1", "1H_ref2", "1H+1P_ref2",
                                         "1H_ref3", "1H+1P_ref3"]
    assert names(figures["fig5_14"]) == ["1H", "1H+1P", "1H+2P", "1H+1P_b0.25",
                                         "1H+2P_b0.25", "1H+1T"]
    runs = figure_runs(list(figures.values()), 2)
    assert len(runs) == 2 * 14  # 1H and 1H+1P are shared by two figures, run once
    assert len({run.name for run in runs}) == len(runs)


def test_figures_without_their_variants_are_left_out():
    figures = paper_figures(["1H", "2H"], 2, "terbleu", "terbleu", [0.5])
    assert [f.key for f in figures] == ["fig4_8", "fig4_10"]  # no 1H+kP to bias
    assert names(figures[0]) == ["1H", "1H+1P"]  # one metric: nothing to compare


def summary_rows(cells: dict[str, tuple[float, float, bool | None]],
                 close: Sequence[str] = ()) -> pd.DataFrame:
    """A CONDITION_SUMMARY cut to what the tables read: per condition (BLEU mean, difference
    to its baseline, significant); the conditions ``close`` have replicates that scored alike."""
    rows = []
    for condition, (bleu, difference, significant) in cells.items():
        rows.append({"condition": condition, "replicates": 3, "bleu_mean": bleu,
                     "close_replicates": condition in close,
                     "bleu_sd": 0.5, "bleu_difference": difference,
                     "bleu_significant": significant,
                     "bleu_p_value": None if significant is None else 0.01,
                     "ter_mean": 100 - bleu, "ter_sd": 0.4, "ter_difference": -difference,
                     "ter_significant": significant,
                     "ter_p_value": None if significant is None else 0.01})
    return pd.DataFrame(rows)


def test_the_metric_table_puts_bleu_factors_and_the_thesis_beside_each_run():
    figure = paper_figures(CONDITIONS, 2, "bleu", "terbleu", [])[0]
    evaluation = pd.DataFrame({
        "condition": ["1H", "1H", "1H+1P", "1H_terbleu", "1H+1P_terbleu"],
        "tune_metric": ["bleu", "bleu", "bleu", "terbleu", "terbleu"],
        "bleu_precision": [40.0, 42.0, 43.0, 39.0, 39.5],
        "brevity_penalty": [0.9, 1.0, 0.95, 0.8, 0.85]})
    summary = summary_rows({"1H": (37.0, np.nan, None), "1H+1P": (38.0, 1.0, True),
                            "1H_terbleu": (35.0, np.nan, None),
                            "1H+1P_terbleu": (34.5, -0.5, False)})
    table = metric_table(evaluation, summary, figure)
    assert table["tuning_metric"].tolist() == ["bleu", "bleu", "terbleu", "terbleu"]
    assert table["bleu_precision_mean"].tolist() == [41.0, 43.0, 39.0, 39.5]
    assert table["brevity_penalty_mean"].tolist() == pytest.approx([0.95, 0.95, 0.8, 0.85])
    assert table["bleu_mark"].tolist() == ["", "*", "", ""]
    assert table["ter_mark"].tolist() == ["", "*", "", ""]  # TER fell: better
    assert table["bleu_precision_thesis"].tolist() == [17.05, 18.30, 16.85, 17.25]  # 4.9, 4.8
    assert table["ter_thesis"].tolist() == [70.32, 69.94, 68.35, 68.00]


def test_the_translator_table_pairs_each_reference_set_with_its_paraphrase():
    figure = paper_figures(CONDITIONS, 2, "bleu", "bleu", [])[1]
    summary = summary_rows({"1H_ref1": (36.0, np.nan, None), "1H+1P_ref1": (37.5, 1.5, True),
                            "1H_ref2": (38.0, np.nan, None), "1H+1P_ref2": (37.0, -1.0, True)},
                           close=["1H+1P_ref2"])
    table = translator_table(summary, figure, ["web", "dar"])
    assert table["1H+1P_bleu_close"].tolist() == [False, True]
    text = translator_markdown(table, figure, "note")
    assert "| 37.00 ± 0.50†≡ |" in text and "| 37.50 ± 0.50* |" in text
    assert table["reference_name"].tolist() == ["web", "dar"]
    assert table["bleu_gain"].tolist() == [1.5, -1.0]
    assert table["1H+1P_bleu_mark"].tolist() == ["*", "†"]
    assert table["1H_bleu_thesis"].tolist() == [37.56, 35.86]
    assert table["bleu_gain_thesis"].tolist() == pytest.approx([1.63, 2.08])


def test_the_tuning_set_table_marks_1h_against_base_and_1h_1p_against_its_set():
    figure = next(f for f in paper_figures(CONDITIONS, 1, "bleu", "bleu", [], [0.5, 0.5])
                  if f.key == "fig4_12")
    assert [c.baseline.name for c in figure.conditions] == [
        "1H_t0", "1H_t0", "1H_t0", "1H_t1", "1H_t0", "1H_t2"]
    summary = summary_rows({"1H_t0": (36.0, np.nan, None), "1H+1P_t0": (35.0, -1.0, True),
                            "1H_t1": (36.3, 0.3, False), "1H+1P_t1": (35.9, -0.4, False),
                            "1H_t2": (37.5, 1.5, True), "1H+1P_t2": (36.0, -1.5, True)})
    table = tuning_set_table(summary, figure, [40, 60, 80])
    assert table["tuning_set"].tolist() == ["Base", "T1", "T2"]
    assert table["segments"].tolist() == [40, 60, 80]
    assert table["1H_bleu_mark"].tolist() == ["", "", "*"]
    assert table["1H+1P_bleu_mark"].tolist() == ["†", "", "†"]
    assert table["bleu_gain"].tolist() == pytest.approx([-1.0, -0.4, -1.5])
    reading = tuning_set_reading(table)
    assert "1H goes 36.00 → 37.50 BLEU (sd 0.50 / 0.50 over replicates, significantly " \
           "better than on Base)" in reading
    assert "Base -1.00†, T1 -0.40, T2 -1.50†" in reading
    summary.loc[summary["condition"] == "1H_t2", "bleu_significant"] = False
    assert "not significantly different from Base" in tuning_set_reading(
        tuning_set_table(summary, figure, [40, 60, 80]))


def test_the_page_lists_figures_in_thesis_order_and_what_is_not_regenerated():
    pages = [FigurePage("5.10", "b", "fig5_10.md", "r2"), FigurePage("4.10", "c", "x.md", "r3"),
             FigurePage("4.3", "a", "fig4_3.md", "r1"), FigurePage("5.3–5.8", "d", "g.md", "r4")]
    text = paper_tables_page("default", pages)
    rows = [line.split(" | ")[0] for line in text.splitlines() if line.startswith("| ")]
    assert rows[1:] == ["| 4.3", "| 4.10", "| 5.3–5.8", "| 5.10"]
    assert "Mechanical Turk" in text and "4.11" not in text


def test_a_condition_set_of_the_figures_parses_back():
    for figure in paper_figures(CONDITIONS, 4, "bleu", "terbleu", [0.25, 0.5]):
        for condition in figure.conditions:
            assert Condition.parse(condition.name) == condition


def test_focus_numbers_of_a_run():
    first = ["the house is small", "the dog runs fast"]
    second = ["the home is little", "a dog is running quickly"]
    before = ["the house is little", "the dog is running"]
    after = ["the home is little", "a dog is running quickly"]  # tuned onto the second
    row = focus_rows(first, second, before, after)
    assert row["post_tune_second"] == pytest.approx(100.0)
    assert row["gain_second"] == pytest.approx(100.0 - row["pre_tune_second"])
    assert 0 < row["pre_tune_second"] < 100
    assert row["gain_total"] == pytest.approx(row["gain_second"] + row["gain_first"])
    assert row["gain_first"] < 0  # moving onto the second reference left the first behind
    table = focus_table(pd.DataFrame([{"reference_type": "human", "replicate": r, **row}
                                      for r in range(2)]))
    assert table["gain_second_sd"].iloc[0] == 0 and table["pre_tune_second_thesis"][0] == 20.4
