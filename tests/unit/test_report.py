"""circle.figures.report and its toolkit circle.figures.reference_table: the Fig. 4.3 table
(Markdown, CSV) and plot from an EVALUATION table, its significance marks from a
CONDITION_SUMMARY, and the tuning curves from the tuning logs."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from circle.core.pages import finished_line, heading_id, markdown_html, write_page
from circle.core.schemas import TUNING_LOG
from circle.core.tables import write_table
from circle.corpus.preprocess import normalize
from circle.experiments.evaluate import significance_mark, write_evaluation
from circle.figures.reference_table import (
    THESIS_TABLES,
    Significance,
    figure_table,
    markdown_table,
    reference_table,
)
from circle.figures.report import plot_tuning_curves, write_report

CONDITIONS = [  # condition, reference type, human, paraphrase, replicates
    ("1H", "human", 1, 0, 3), ("2H", "human", 2, 0, 3), ("3H", "human", 3, 0, 1),
    ("4H", "human", 4, 0, 2), ("1H+1P", "paraphrase", 1, 1, 3),
    ("1H+2P", "paraphrase", 1, 2, 1), ("1H+3P", "paraphrase", 1, 3, 2),
    ("1H+1P'", "targeted", 1, 1, 2), ("1H+2P'", "targeted", 1, 2, 2)]


def evaluation(seed: int = 0, experiment: str = "default") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for condition, kind, human, paraphrase, replicates in CONDITIONS:
        for replicate in range(replicates):
            rows.append({
                "experiment": experiment, "condition": condition, "reference_type": kind,
                "human_references": human, "paraphrase_references": paraphrase,
                "references_used": human + paraphrase, "replicate": replicate,
                "seed": 100 + replicate, "tune_metric": "bleu", "tune_iterations": 6,
                "eval_set": "test", "eval_references": 4, "segments": 1500,
                "bleu": rng.uniform(20, 40), "ter": rng.uniform(40, 60),
                "chrf": rng.uniform(45, 60),
                "chrf_signature": "nrefs:4|case:lc|eff:yes|nc:6|nw:0|space:no|version:2.6.0",
                "bleu_precision": rng.uniform(40, 42), "brevity_penalty": rng.uniform(0.9, 1),
                "length_ratio": rng.uniform(0.9, 1.1), "matched_bleu": rng.uniform(20, 40),
                "matched_length_ratio": rng.uniform(0.99, 1.01),
                "matched_shift": rng.uniform(-0.5, 0.5),
                "bleu_signature": "nrefs:4|case:mixed|eff:no|tok:none|smooth:exp|version:2.6.0",
                "ter_signature": "nrefs:4|case:lc|tok:tercom|norm:no|punct:yes|asian:no",
                "baseline_condition": None if condition == "1H" else "1H",
                "p_value_vs_baseline": None if condition == "1H" else rng.uniform(),
                "bootstrap_samples": None if condition == "1H" else 1000})
    return pd.DataFrame(rows)


def cell_values(frame, condition, metric):
    return frame.loc[frame["condition"] == condition, metric].to_numpy()


def test_cells_are_means_and_sample_deviations_of_the_replicates():
    frame = evaluation()
    table = reference_table(frame)
    assert table["references"].tolist() == [1, 2, 3, 4]
    assert table["label"].tolist() == ["1 (1H+0)", "2 (1H+1)", "3 (1H+2)", "4 (1H+3)"]
    expected = {"human": ["1H", "2H", "3H", "4H"], "paraphrase": ["1H", "1H+1P", "1H+2P", "1H+3P"],
                "targeted": ["1H", "1H+1P'", "1H+2P'", None]}
    for series, conditions in expected.items():
        for k, condition in enumerate(conditions):
            row = table.iloc[k]
            for metric in ("bleu", "ter"):
                if condition is None:
                    assert np.isnan(row[f"{series}_{metric}_mean"])
                    assert row[f"{series}_{metric}_n"] == 0
                    continue
                values = cell_values(frame, condition, metric)
                assert row[f"{series}_{metric}_mean"] == pytest.approx(values.mean(), abs=1e-12)
                assert row[f"{series}_{metric}_n"] == len(values)
                if len(values) > 1:
                    assert row[f"{series}_{metric}_sd"] == pytest.approx(values.std(ddof=1))
                else:
                    assert np.isnan(row[f"{series}_{metric}_sd"])
    # the 1-reference row is the shared 1H baseline
    assert table.loc[0, "paraphrase_bleu_mean"] == table.loc[0, "human_bleu_mean"]


def parse_markdown(text: str, table: int = 0) -> list[list[str]]:
    """The rows of the page's ``table``-th Markdown table."""
    tables = re.findall(r"(?:^\|.*\n)+", text, flags=re.M)
    return [[c.strip() for c in line.strip("|").split("|")] for line in tables[table].splitlines()]


def test_markdown_and_csv_agree(tmp_path):
    table = write_report(evaluation(), tmp_path / "t.md", tmp_path / "t.html", tmp_path / "t.csv",
                         tmp_path / "t.png")
    rows = parse_markdown((tmp_path / "t.md").read_text(encoding="utf-8"))
    assert rows[0] == ["# tuning refs", "Human BLEU", "Human TER", "Human chrF",
                       "Paraphrased BLEU", "Paraphrased TER", "Paraphrased chrF",
                       "Targeted BLEU", "Targeted TER", "Targeted chrF"]
    listed = [c for c in table.columns if c.endswith("_replicates")]
    csv = pd.read_csv(tmp_path / "t.csv", dtype={c: str for c in listed})
    csv[listed] = csv[listed].fillna("")
    pd.testing.assert_frame_equal(csv, table, check_dtype=False, rtol=1e-12)
    series = ["human", "paraphrase", "targeted"]
    runs = evaluation()
    for name, kind in [("human", "human"), ("targeted", "targeted")]:
        # each replicate's score, in replicate order: 2 references
        two = runs[(runs["reference_type"] == kind) & (runs["references_used"] == 2)]
        assert csv.loc[1, f"{name}_bleu_replicates"] == " ".join(
            f"{v:.2f}" for v in two.sort_values("replicate")["bleu"])
    for body, (_, row) in zip(rows[2:], csv.iterrows(), strict=True):
        assert body[0] == row["label"]
        cells = iter(body[1:])
        for name in series:
            for metric in ("bleu", "ter", "chrf"):
                cell, mean = next(cells), row[f"{name}_{metric}_mean"]
                sd, n = row[f"{name}_{metric}_sd"], row[f"{name}_{metric}_n"]
                if n == 0:
                    assert cell == "–"
                elif n == 1:
                    assert cell == f"{mean:.2f}"
                else:
                    assert cell == f"{mean:.2f} ± {sd:.2f}"
    assert len(rows) == 2 + len(csv)


def test_outputs_are_deterministic_png_and_read_from_a_table(tmp_path):
    path = tmp_path / "evaluation.parquet"
    write_evaluation(evaluation(), path)
    first = [tmp_path / f"a.{ext}" for ext in ("md", "html", "csv", "png")]
    second = [tmp_path / f"b.{ext}" for ext in ("md", "html", "csv", "png")]
    write_report(path, *first)
    write_report(evaluation(), *second)
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes()
    png = first[3].read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000


def test_experiments_must_be_chosen_and_replicates_unique():
    both = pd.concat([evaluation(0, "a"), evaluation(1, "b")], ignore_index=True)
    with pytest.raises(ValueError, match="several experiments"):
        reference_table(both)
    only_b = reference_table(both, experiment="b")
    pd.testing.assert_frame_equal(only_b, reference_table(evaluation(1, "b")))
    with pytest.raises(ValueError, match="no rows"):
        reference_table(both, experiment="c")
    frame = evaluation()
    with pytest.raises(ValueError, match="replicate numbers repeat"):
        reference_table(pd.concat([frame, frame.iloc[:1]]))


def test_a_cell_whose_replicates_scored_alike_is_flagged(tmp_path):
    frame = evaluation()
    twins = frame["condition"] == "2H"
    frame.loc[twins & (frame["replicate"] == 1), ["bleu", "ter"]] = \
        frame.loc[twins & (frame["replicate"] == 0), ["bleu", "ter"]].to_numpy()
    table = write_report(frame, tmp_path / "t.md", tmp_path / "t.html", tmp_path / "t.csv",
                         tmp_path / "t.png")
    assert table["human_close"].tolist() == [False, True, False, False]  # 3H: one replicate
    assert not table["paraphrase_close"].any()
    text = (tmp_path / "t.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| 2 (1H+1) |"))
    flagged = [cell.strip().endswith("≡") for cell in row.strip("|").split("|")[1:]]
    assert flagged == [True, True, True] + [False] * 6  # the human cell: BLEU, TER, chrF
    assert "≡ two of the cell's tuning replicates scored within 0.01" in text
    write_report(evaluation(), tmp_path / "u.md", tmp_path / "u.html", tmp_path / "u.csv",
                 tmp_path / "u.png")
    assert "≡" not in (tmp_path / "u.md").read_text(encoding="utf-8")


def test_single_replicate_cells_have_no_deviation():
    frame = evaluation()
    frame = frame[frame["replicate"] == 0]
    rows = parse_markdown(markdown_table(reference_table(frame)))
    assert not any("±" in cell for row in rows for cell in row)
    assert rows[2][1] == f"{cell_values(frame, '1H', 'bleu')[0]:.2f}"


# --- significance marks from the condition summary --------------------------------------------

SIGNIFICANCE = {  # condition: (bleu p, bleu difference, ter p, ter difference)
    "2H": (0.001, 1.5, 0.002, -2.0),   # better in both: lower TER is better
    "3H": (0.30, 0.4, 0.70, 0.1),      # not significant
    "4H": (0.01, -0.8, 0.04, 1.2),     # worse in both
    "1H+1P": (0.049, 0.3, 0.051, -0.5),
    "1H+2P": (0.02, -0.2, 0.001, -0.9),
}


def summary(frame: pd.DataFrame, level: float = 0.05, shuffles: int = 10000) -> pd.DataFrame:
    """A CONDITION_SUMMARY for the conditions of ``frame`` (1H+3P and the targeted ones are
    left out, as if never tested)."""
    rows = []
    for condition, runs in frame.groupby("condition", sort=False):
        if condition not in SIGNIFICANCE and condition != "1H":
            continue
        first = runs.iloc[0]
        row = {key: first[key] for key in ("experiment", "condition", "reference_type",
                                           "human_references", "paraphrase_references",
                                           "references_used")}
        row.update(replicates=len(runs), significance_level=level, shuffles=shuffles,
                   shuffle_seed=13, baseline_condition=None if condition == "1H" else "1H")
        values = SIGNIFICANCE.get(condition, (None, None, None, None))
        row.update(close_replicates=False, length_ratio_mean=runs["length_ratio"].mean())
        for metric, p, difference in (("bleu", *values[:2]), ("ter", *values[2:]),
                                      ("matched_bleu", *values[:2])):
            row.update({f"{metric}_mean": runs[metric].mean(), f"{metric}_sd": None,
                        f"{metric}_pooled": runs[metric].mean(),
                        f"{metric}_difference": difference, f"{metric}_p_value": p,
                        f"{metric}_significant": None if p is None else p < level,
                        f"{metric}_mean_difference": None, f"{metric}_welch_p_value": None})
        rows.append(row)
    return pd.DataFrame(rows)


def marks(cells: list[str]) -> list[str]:
    return ["*" if c.endswith("*") else "†" if c.endswith("†") else "" for c in cells]


def test_cells_carry_significance_marks_and_the_test_is_named(tmp_path):
    frame = evaluation()
    table = write_report(frame, tmp_path / "t.md", tmp_path / "t.html", tmp_path / "t.csv",
                         tmp_path / "t.png", conditions=summary(frame))
    text = (tmp_path / "t.md").read_text(encoding="utf-8")
    rows = parse_markdown(text)
    cells = {row[0]: row[1:] for row in rows[2:]}
    human_bleu, human_ter = [cells[k][0] for k in cells], [cells[k][1] for k in cells]
    paraphrase_bleu = [cells[k][3] for k in cells]
    paraphrase_ter = [cells[k][4] for k in cells]
    targeted = [cells[k][6] + cells[k][7] for k in cells]
    assert marks([cells[k][2] for k in cells]) == ["", "", "", ""]  # chrF is not tested
    assert marks(human_bleu) == ["", "*", "", "†"]
    assert marks(human_ter) == ["", "*", "", "†"]
    assert marks(paraphrase_bleu) == ["", "*", "†", ""]  # 1H+1P p = 0.049; 1H+3P untested
    assert marks(paraphrase_ter) == ["", "", "*", ""]  # 1H+1P TER p = 0.051
    assert marks(targeted) == ["", "", "", ""]
    assert human_bleu[1] == f"{table.loc[1, 'human_bleu_mean']:.2f} ± " \
        f"{table.loc[1, 'human_bleu_sd']:.2f}*"
    assert ("n = 1–3 tuning replicates per cell; * / † significantly better / worse than 1H, "
            "approximate randomisation over replicates (Clark et al. 2011), 10,000 shuffles, "
            "p < 0.05. The test treats the replicates as independent runs of the optimiser. "
            "chrF is not tested.") in text
    csv = pd.read_csv(tmp_path / "t.csv")
    assert csv["human_bleu_p_value"].tolist()[1:] == [0.001, 0.30, 0.01]
    assert np.isnan(csv["human_bleu_p_value"][0]) and csv["paraphrase_ter_p_value"][1] == 0.051
    assert csv["targeted_bleu_p_value"].isna().all()


def test_the_length_table_shows_ratios_and_bleu_at_a_common_length(tmp_path):
    frame = evaluation()
    table = write_report(frame, tmp_path / "t.md", tmp_path / "t.html", tmp_path / "t.csv",
                         tmp_path / "t.png", conditions=summary(frame))
    text = (tmp_path / "t.md").read_text(encoding="utf-8")
    rows = parse_markdown(text, 1)
    assert rows[0] == ["# tuning refs", "Human length", "Human BLEU at common length",
                       "Paraphrased length", "Paraphrased BLEU at common length",
                       "Targeted length", "Targeted BLEU at common length"]
    two = frame[frame["condition"] == "2H"]
    assert rows[3][1] == f"{two['length_ratio'].mean():.3f}"
    assert rows[3][2] == f"{two['matched_bleu'].mean():.2f} ± {two['matched_bleu'].std():.2f}*"
    assert marks([row[4] for row in rows[2:]]) == ["", "*", "†", ""]
    assert ("not the thesis's metric, marked against the condition's baseline at the same length"
            in text)
    assert table["human_matched_bleu_mean"][1] == pytest.approx(two["matched_bleu"].mean())


def test_level_and_replicate_count_come_from_the_summary(tmp_path):
    frame = evaluation()
    frame = frame[frame["replicate"] < 1]
    conditions = summary(frame, level=0.01, shuffles=500)
    text = markdown_table(reference_table(frame, conditions=conditions), None,
                          Significance.of(conditions))
    rows = parse_markdown(text)
    assert rows[3][1].endswith("*") and not rows[5][1].endswith("†")  # 4H: p = 0.01 is not < 0.01
    assert "n = 1 tuning replicate per cell;" in text and "500 shuffles, p < 0.01." in text
    plain = markdown_table(reference_table(frame, conditions=conditions))
    assert "*" not in plain and "†" not in plain and "shuffles" not in plain


def test_significance_marks_follow_the_metric_direction():
    assert significance_mark("bleu", True, 0.5) == "*"
    assert significance_mark("bleu", True, -0.5) == "†"
    assert significance_mark("ter", True, -0.5) == "*"
    assert significance_mark("ter", True, 0.5) == "†"
    assert significance_mark("ter", False, -3.0) == ""
    assert significance_mark("bleu", None, float("nan")) == ""


# --- tuning curves -------------------------------------------------------------------------------

def tuning_log(scores: list[float], returned: int, metric: str = "bleu") -> pd.DataFrame:
    n = len(scores)
    return pd.DataFrame({
        "iteration": np.arange(1, n + 1, dtype=np.int32), "metric": metric,
        "weights": [[1.0, 0.5, -0.2]] * n, "decode_score": scores,
        "pool_score": [*scores[1:], None], "new_hypotheses": np.full(n, 20, dtype=np.int64),
        "pool_size": np.arange(1, n + 1, dtype=np.int64) * 20,
        "returned": [i + 1 == returned for i in range(n)],
        "stop_reason": [None] * (n - 1) + ["converged"],
        "decoded_sentences": np.full(n, 100, dtype=np.int64)})


def test_tuning_curves_plot_every_run_from_the_logs(tmp_path):
    logs = {("1H", 0): tuning_log([0.20, 0.24, 0.25, 0.23], 3),
            ("1H", 1): tuning_log([0.20, 0.22, 0.26], 3),
            ("2H", 0): tuning_log([0.30, 0.12, 0.15, 0.14], 1),  # collapsed after the start
            ("2H", 1): tuning_log([0.30, 0.33], 2),
            ("1H+1P", 0): tuning_log([0.25, 0.28], 2)}
    paths = {}
    for (condition, replicate), frame in logs.items():
        paths[condition, replicate] = tmp_path / f"{condition}.rep{replicate}.parquet"
        write_table(frame, paths[condition, replicate], TUNING_LOG)
    plot_tuning_curves(paths, tmp_path / "a.png")
    plot_tuning_curves(logs, tmp_path / "b.png")
    png = (tmp_path / "a.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png == (tmp_path / "b.png").read_bytes()
    moved = dict(logs)
    moved["2H", 0] = tuning_log([0.30, 0.12, 0.15, 0.14], 4)
    plot_tuning_curves(moved, tmp_path / "c.png")
    assert (tmp_path / "c.png").read_bytes() != png  # the returned mark is drawn
    with pytest.raises(ValueError, match="no tuning logs"):
        plot_tuning_curves({}, tmp_path / "d.png")


def test_a_page_becomes_html_with_its_tables_lists_and_headings():
    page = ("# Title & more\n\nOne paragraph\non two lines, **bold**.\n\n"
            "| k | BLEU |\n|:---|---:|\n| 1 (1H+0) | 40.38 ± 0.31* |\n| <2> | a &apos; b |\n\n"
            "- **Chosen**: bias 50 %\n- argmin\n")
    text = markdown_html(page, "Fig. 4.3")
    assert text.startswith("<!DOCTYPE html>") and "<title>Fig. 4.3</title>" in text
    assert '<h1 id="title--more">Title &amp; more</h1>' in text
    assert "<p>One paragraph on two lines, <strong>bold</strong>.</p>" in text
    assert ('<tr><th style="text-align:left">k</th><th style="text-align:right">BLEU</th></tr>'
            in text)
    assert ('<tr><td style="text-align:left">1 (1H+0)</td>'
            '<td style="text-align:right">40.38 ± 0.31*</td></tr>') in text
    assert "&lt;2&gt;" in text and "a ' b" in text  # a character reference is its character
    assert "<ul>\n<li><strong>Chosen</strong>: bias 50 %</li>\n<li>argmin</li>\n</ul>" in text


def test_tokenised_samples_with_quotes_and_apostrophes_are_escaped_once(tmp_path):
    """The pages' samples are tokenised text, which holds the Moses tokeniser's escapes
    (&apos; &quot; &amp; &lt; &#124;): the HTML shows the characters, escaped once, never
    the escapes themselves (paraphraser-bias0.html and targeted_samples.html showed &apos;)."""
    raw = 'He said "don\'t" to <Tom> & Ann | l\'homme'
    tokens = normalize(raw, "en")
    assert "&apos;" in tokens and "&quot;" in tokens and "&amp;" in tokens  # Moses escapes
    page = (f"# Samples\n\n| segment | reference |\n|---|---|\n| 1 | {tokens} |\n\n"
            f"1.\n- H: {tokens}\n- R: it &apos;s 5 < 6 & \"so\" [12.5]\n")
    write_page(page, tmp_path / "p.md", tmp_path / "p.html", "Samples")
    text = (tmp_path / "p.html").read_text()
    body = text.split("<body>", 1)[1]
    for shown in ("&amp;apos;", "&amp;quot;", "&amp;amp;", "&amp;lt;", "&amp;#"):
        assert shown not in text
    cell = body.split('<td style="text-align:left">')[2].split("</td>")[0]
    assert cell == "he said \" don 't \" to &lt; tom &gt; &amp; ann | l 'homme"
    assert "<li>R: it 's 5 &lt; 6 &amp; \"so\" [12.5]</li>" in body
    assert (tmp_path / "p.md").read_text() == page  # the Markdown keeps the tokenised text


def test_the_report_page_html_holds_the_table_of_the_markdown(tmp_path):
    paths = [tmp_path / f"t.{ext}" for ext in ("md", "html", "csv", "png")]
    write_report(evaluation(), *paths, figure="4.3")
    markdown, html = paths[0].read_text(), paths[1].read_text()
    rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    assert html.count("<tr>") == len(rows) > 2
    title = THESIS_TABLES["4.3"].title
    assert f"<title>{title}</title>" in html
    assert f'<h1 id="{heading_id(title)}">{title}</h1>' in html


def test_finished_line_names_the_tables(tmp_path):
    assert finished_line(tmp_path / "report") == f"No report tables in {tmp_path / 'report'} yet."
    (tmp_path / "report").mkdir()
    for name in ("grid_search.md", "fig4_3.md", "fig4_3.csv", "fig4_3.png"):
        (tmp_path / "report" / name).write_text("x")
    line = finished_line(tmp_path / "report")
    assert line.startswith(f"Tables: {tmp_path}/report/fig4_3.md, {tmp_path}/report/"
                           "grid_search.md; their HTML, CSV and plots are beside them in ")


def test_a_thesis_figure_keeps_its_series_with_the_published_numbers_beside_ours(tmp_path):
    frame = evaluation()
    paths = [tmp_path / f"f.{suffix}" for suffix in ("md", "html", "csv", "png")]
    table = write_report(frame, *paths, figure="4.3")
    assert series_of(table) == ["human", "paraphrase"]  # Fig. 4.3 has no targeted column
    assert table["human_bleu_thesis"].tolist() == [37.65, 39.20, 40.01, 40.56]
    assert table["paraphrase_ter_thesis"].tolist() == [56.39, 54.39, 53.71, 53.46]
    ours = reference_table(frame)
    pd.testing.assert_series_equal(table["paraphrase_bleu_mean"], ours["paraphrase_bleu_mean"])
    rows = parse_markdown(paths[0].read_text(encoding="utf-8"))
    assert rows[0] == ["# tuning refs", "Human BLEU", "Human BLEU (thesis)", "Human TER",
                       "Human TER (thesis)", "Human chrF", "Paraphrased BLEU",
                       "Paraphrased BLEU (thesis)", "Paraphrased TER", "Paraphrased TER (thesis)",
                       "Paraphrased chrF"]
    assert rows[5][2] == "40.56" and rows[5][9] == "53.46"
    assert paths[0].read_text().startswith("# Test-set scores per number of human or "
                                           "paraphrased tuning references (thesis Fig. 4.3)")

    fig5_10 = write_report(frame, *paths, figure="5.10")  # the thesis's other numbers for 2H..4H
    assert series_of(fig5_10) == ["human", "paraphrase", "targeted"]
    assert fig5_10["human_bleu_thesis"].tolist() == [37.65, 39.20, 40.21, 40.69]
    assert fig5_10["targeted_bleu_thesis"].tolist() == [37.65, 39.01, 39.93, 40.22]
    rows = parse_markdown(paths[0].read_text(encoding="utf-8"))
    assert rows[0][11:] == ["Targeted BLEU", "Targeted BLEU (thesis)", "Targeted TER",
                            "Targeted TER (thesis)", "Targeted chrF"]
    assert rows[5][11] == "–" and rows[5][12] == "40.22"  # no 1H+3P' run, the thesis's beside


def test_a_thesis_figure_shows_a_series_the_runs_lack_as_empty_cells():
    without_targeted = evaluation().query("reference_type != 'targeted'")
    table = figure_table(reference_table(without_targeted), THESIS_TABLES["5.10"])
    assert series_of(table) == ["human", "paraphrase", "targeted"]
    assert (table["targeted_bleu_n"] == 0).all() and table["targeted_bleu_mean"].isna().all()
    body = parse_markdown(markdown_table(table))[2]
    assert body[11:13] == ["–", "37.65"]


def series_of(table: pd.DataFrame) -> list[str]:
    return [c[:-len("_bleu_mean")] for c in table.columns
            if c.endswith("_bleu_mean") and not c.endswith("_matched_bleu_mean")]


def test_own_data_tables_and_plots_leave_out_the_thesis(tmp_path):
    frame = evaluation()
    paths = [tmp_path / f"f.{suffix}" for suffix in ("md", "html", "csv", "png")]
    table = write_report(frame, *paths, figure="5.10", thesis_numbers=False)
    assert not [c for c in table.columns if c.endswith("_thesis")]
    text = paths[0].read_text(encoding="utf-8")
    assert "(thesis)" not in text and "thesis Fig" not in text and "NIST" not in text
    assert text.startswith("# Test-set scores per number of human, untargeted or targeted "
                           "tuning references\n")
    assert "thesis" not in paths[2].read_text(encoding="utf-8")
    with_thesis = write_report(frame, *paths, figure="5.10")
    assert "human_bleu_thesis" in with_thesis.columns


def test_a_summary_of_the_baseline_alone_is_its_own_baseline(tmp_path):
    """A pilot tunes 1H alone: its page shows 1H's replicates with nothing to mark."""
    frame = evaluation()
    frame = frame[frame["condition"] == "1H"]
    conditions = summary(frame)
    assert conditions["baseline_condition"].isna().all()
    assert Significance.of(conditions).baseline == "1H"
    write_report(frame, tmp_path / "t.md", tmp_path / "t.html", tmp_path / "t.csv",
                 tmp_path / "t.png", conditions=conditions)
    rows = parse_markdown((tmp_path / "t.md").read_text(encoding="utf-8"))
    assert [row[0] for row in rows[2:]] == ["1 (1H+0)"]
    assert not marks([rows[2][1]])[0]
    mixed = summary(evaluation())
    mixed.loc[mixed["condition"] == "2H", "baseline_condition"] = "2H"
    with pytest.raises(ValueError, match="mixes baselines"):
        Significance.of(mixed)
