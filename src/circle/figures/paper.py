"""The thesis's remaining figures as tables and pages (target ``paper_tables``; their tuning runs:
:mod:`circle.experiments.paper_runs`).

Fig. 4.3, 5.3–5.8, 5.4 and 5.10 have their own rules; this module adds the figures that need
tuning runs of their own, each with the thesis's published numbers beside ours:

* Fig. 4.8/4.9: 1H and 1H+1P tuned with TERBLEU (Matsoukas et al. 2009; thesis §4.4) and
  with BLEU, scored by BLEU, its two factors (precision, brevity penalty) and TER;
* Fig. 4.10: each reference set in turn as every segment's single reference (1H, 1H+1P;
  thesis §4.5, "per-translator" sets, unlike the seeded per-document choice of §4.3.1);
* Fig. 4.11/4.12: 1H and 1H+1P of the held-out system (:mod:`circle.experiments.heldout`) tuned on
its base
  single-reference tune set and on the sets enlarged by held-out training blocks (thesis §4.6);
* Fig. 5.14: the 1H+kP conditions with the untargeted paraphraser on self-paraphrase-biased
  grammars (thesis §5.5), beside the unbiased untargeted and the targeted curves;
* Fig. 6.2 (from the 2H, 1H+1P and 1H+1T runs of the config): focus and reachability of a
  human, an untargeted and a targeted second reference (thesis §6.3; :mod:`circle.figures.focus`).

Every condition is compared with its own baseline (:attr:`Condition.baseline`: 1H with the
same single reference and tuning metric) by the evaluation's approximate randomisation test.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from circle.core.pages import csv_text, write_page, write_text_atomically
from circle.core.schemas import CONDITION_SUMMARY, EVALUATION, GRID_CHOICE
from circle.core.tables import atomic_path, read_metadata, read_table
from circle.experiments.conditions import Condition, TuningRun
from circle.experiments.evaluate import BETTER, WORSE, summary_test
from circle.experiments.heldout import TUNING_SETS
from circle.experiments.paper_runs import PaperFigure
from circle.figures.reference_table import (
    CLOSE_NOTE,
    METRIC_LABELS,
    THESIS,
    THESIS_TABLES,
    Significance,
    ThesisTable,
    cell_text,
    figure_table,
    markdown_table,
    number_text,
    plot_references,
    reference_table,
    replicate_flag,
    series_label,
    series_names,
)

THESIS_METRICS: dict[str, dict[str, tuple[float, float, float]]] = {
    "terbleu": {"1H": (16.85, 0.90, 68.35), "1H+1P": (17.25, 0.88, 68.00)},
    "bleu": {"1H": (17.05, 0.89, 70.32), "1H+1P": (18.30, 0.87, 69.94)},
}
"""Thesis Fig. 4.8 (tuned with TERBLEU) and 4.9 (with BLEU): BLEU's precision, its brevity
penalty and TER on the single-reference weblog validation set, per condition."""

THESIS_TRANSLATORS: dict[str, dict[str, tuple[float, ...]]] = {
    "bleu": {"1H": (37.56, 35.86, 38.39, 38.41), "1H+1P": (39.19, 37.94, 38.85, 38.90)},
    "ter": {"1H": (57.23, 60.55, 54.50, 54.12), "1H+1P": (54.21, 56.42, 53.40, 53.51)},
}
"""Thesis Fig. 4.10: BLEU and TER on MT04+05 with reference set #1–#4 of MT03 as the single
tuning reference, without and with its 1-best paraphrase."""

THESIS_LARGER: dict[str, dict[str, tuple[float, ...]]] = {
    "bleu": {"1H": (36.40, 36.85, 36.95, 37.00), "1H+1P": (38.25, 38.59, 38.60, 38.55)},
    "ter": {"1H": (56.17, 58.23, 58.60, 59.03), "1H+1P": (54.20, 55.43, 55.59, 55.77)},
}
"""Thesis Fig. 4.12: BLEU and TER on MT04+05 tuned on the single-reference MT03 set (Base) and
on T1–T3, enlarged by held-out blocks of training sentences, without and with the 1-best
paraphrase of the single reference."""

THESIS_TUNING_SETS: tuple[int, ...] = (919, 1519, 2019, 2519)
"""Thesis Fig. 4.11: sentences of Base (MT03), T1 (+600), T2 (+500) and T3 (+500)."""

THESIS_BIASED = ThesisTable(
    "5.14", "Untargeted paraphrases with self-paraphrase bias (thesis Fig. 5.14)",
    {name: THESIS_TABLES["5.10"].series[name] for name in ("paraphrase", "targeted")})
"""Fig. 5.14 is a graph whose unbiased untargeted and targeted curves are the runs of Fig. 5.10;
the thesis prints no numbers for its biased curves (25 %: a smaller 1-best gain than unbiased,
the same trend with softer losses; 50 %: no significant gain)."""

NOT_REPRODUCED: tuple[tuple[str, str], ...] = (
    ("3.2, 4.5, 4.7, 5.11, 5.13, 6.1", "human judgements on Amazon Mechanical Turk: not "
     "reproducible by a program"),
    ("4.2", "the NIST Chinese-English experiment's 1-best results (§4.3.1): its tune and "
     "test sets (MT03-05) are licensed; Fig. 4.3 gives the same conditions on the Bible"),
    ("4.6, 5.12", "the WMT French/German/Spanish-English experiments (§4.3.2, §5.4.2): their "
     "bitexts (Europarl, News Commentary) and tune and test sets (newstest2008/2009) are "
     "public and corpus.kind files can read them, but circle does not ship them and its runs "
     "have no network access to fetch them (the thesis's LMs for them, trained on the NIST "
     "setting's LDC Gigaword, web and CNN text, are not public); the default experiment is "
     "Spanish-English Bible text (Fig. 4.3 and 5.10 are the ones reproduced)"),
)
"""Thesis figures with results that ``paper_tables`` does not regenerate, and why."""


READING = "Reading: "
"""How a figure page's one-line reading starts (:func:`page_reading` finds it)."""


def _summary_cell(summary: pd.DataFrame, condition: str, metric: str) -> dict:
    """Mean, sd, replicates, p-value, significance mark and whether two replicates scored alike
    (``close``) of a condition from a CONDITION_SUMMARY indexed by condition."""
    if condition not in summary.index:
        return {"mean": np.nan, "sd": np.nan, "n": 0, "mark": "", "p_value": np.nan, "close": False}
    row = summary.loc[condition]
    p_value, mark = summary_test(row, metric)
    return {"mean": float(row[f"{metric}_mean"]),
            "sd": np.nan if pd.isna(row[f"{metric}_sd"]) else float(row[f"{metric}_sd"]),
            "n": int(row["replicates"]), "mark": mark, "p_value": p_value,
            "close": bool(row["close_replicates"])}


def metric_table(evaluation: pd.DataFrame, summary: pd.DataFrame, figure: PaperFigure
                 ) -> pd.DataFrame:
    """Fig. 4.8/4.9: per tuning metric and condition (1H, 1H+1P), test BLEU (mean, sd, mark
    against 1H tuned with the same metric), its precision and brevity penalty (means over
    replicates), TER, and the thesis's precision, brevity penalty and TER."""
    summary = summary.set_index("condition")
    rows = []
    for condition in figure.conditions:
        runs = evaluation[evaluation["condition"] == condition.name]
        metric = str(runs["tune_metric"].iloc[0]) if len(runs) else condition.metric
        base = "1H+1P" if condition.paraphrases else "1H"
        precision, penalty = runs["bleu_precision"].mean(), runs["brevity_penalty"].mean()
        published = THESIS_METRICS.get(metric, {}).get(base, (np.nan,) * 3)
        row = {"tuning_metric": metric, "condition": condition.name, "label": base}
        for name in ("bleu", "ter"):
            cell = _summary_cell(summary, condition.name, name)
            row.update({f"{name}_{key}": value for key, value in cell.items()})
        row.update(bleu_precision_mean=precision, brevity_penalty_mean=penalty,
                   bleu_precision_thesis=published[0], brevity_penalty_thesis=published[1],
                   ter_thesis=published[2])
        rows.append(row)
    return pd.DataFrame(rows)


def translator_table(summary: pd.DataFrame, figure: PaperFigure,
                     reference_names: Sequence[str]) -> pd.DataFrame:
    """Fig. 4.10: per reference set n (named), 1H_ref<n> and 1H+1P_ref<n> test BLEU and TER
    (mean, sd, the 1H+1P mark against 1H_ref<n>), the gain, and the thesis's numbers for set
    #n."""
    summary = summary.set_index("condition")
    return pd.DataFrame([
        {"reference_set": c.reference, "reference_name": reference_names[c.reference - 1],
         **_paired_cells(summary, c, THESIS_TRANSLATORS, c.reference - 1)}
        for c in figure.conditions if not c.paraphrases])


def _paired_cells(summary: pd.DataFrame, single: Condition,
                  published: Mapping[str, Mapping[str, Sequence[float]]], index: int) -> dict:
    """Test BLEU and TER cells (mean, sd, replicates, mark, p-value) of a single-reference
    condition (``1H``) and of it with the 1-best paraphrase (``1H+1P``), the thesis's
    ``index``-th numbers beside them, and the BLEU gain of the paraphrase, ours and the
    thesis's (``summary``: CONDITION_SUMMARY indexed by condition)."""
    row = {}
    for label, condition in (("1H", single), ("1H+1P", replace(single, paraphrases=1))):
        for metric in ("bleu", "ter"):
            cell = _summary_cell(summary, condition.name, metric)
            row.update({f"{label}_{metric}_{key}": value for key, value in cell.items()})
            values = published[metric][label]
            row[f"{label}_{metric}_thesis"] = values[index] if index < len(values) else np.nan
    row["bleu_gain"] = row["1H+1P_bleu_mean"] - row["1H_bleu_mean"]
    row["bleu_gain_thesis"] = row["1H+1P_bleu_thesis"] - row["1H_bleu_thesis"]
    return row


PAIRED_HEADER = ("1H BLEU", "1H+1P BLEU", "gain", "1H (thesis)", "1H+1P (thesis)", "1H TER",
                 "1H+1P TER", "1H TER (thesis)", "1H+1P TER (thesis)")
"""The columns of :func:`_paired_cells` in a figure page (:func:`_paired_texts`)."""


def _paired_texts(row: Mapping) -> list[str]:
    """:data:`PAIRED_HEADER`'s cells of a :func:`_paired_cells` row."""
    return [_scored(row, "1H_bleu"), _scored(row, "1H+1P_bleu"), f"{row['bleu_gain']:+.2f}",
            number_text(row["1H_bleu_thesis"]), number_text(row["1H+1P_bleu_thesis"]),
            _scored(row, "1H_ter"), _scored(row, "1H+1P_ter"), number_text(row["1H_ter_thesis"]),
            number_text(row["1H+1P_ter_thesis"])]


def tuning_set_table(summary: pd.DataFrame, figure: PaperFigure,
                     sizes: Sequence[int]) -> pd.DataFrame:
    """Fig. 4.11/4.12: per tuning set T<n> (Base = T0) of the held-out system, its segments
    (``sizes``) and the thesis's sentences, 1H_t<n> and 1H+1P_t<n> test BLEU and TER (mean, sd,
    the mark of 1H_t<n> against 1H_t0 and of 1H+1P_t<n> against 1H_t<n>), the gain, and the
    thesis's numbers."""
    summary = summary.set_index("condition")
    return pd.DataFrame([
        {"tuning_set": "Base" if c.tuning_set == 0 else f"T{c.tuning_set}",
         "segments": sizes[c.tuning_set],
         "sentences_thesis": (THESIS_TUNING_SETS[c.tuning_set]
                              if c.tuning_set < len(THESIS_TUNING_SETS) else np.nan),
         **_paired_cells(summary, c, THESIS_LARGER, c.tuning_set)}
        for c in figure.conditions if not c.paraphrases])


def tuning_set_reading(table: pd.DataFrame) -> str:
    """One line: 1H and 1H+1P BLEU from the base set to the largest, the paraphrase's gains,
    ours and the thesis's."""
    first, last = table.iloc[0], table.iloc[-1]
    gains = ", ".join(f"{row['tuning_set']} {row['bleu_gain']:+.2f}{row['1H+1P_bleu_mark']}"
                      for row in table.to_dict("records"))
    spread = ("" if math.isnan(first["1H_bleu_sd"]) else
              f"sd {first['1H_bleu_sd']:.2f} / {last['1H_bleu_sd']:.2f} over replicates, ")
    versus_base = {BETTER: "significantly better than on Base",
                   WORSE: "significantly worse than on Base"}.get(
        last["1H_bleu_mark"], "not significantly different from Base")
    return (f"from Base ({first['segments']} segments) to {last['tuning_set']} "
            f"({last['segments']}), 1H goes {first['1H_bleu_mean']:.2f} → "
            f"{last['1H_bleu_mean']:.2f} BLEU ({spread}{versus_base}) and 1H+1P "
            f"{first['1H+1P_bleu_mean']:.2f} "
            f"→ {last['1H+1P_bleu_mean']:.2f}; 1H+1P − 1H per set: {gains} (thesis: 1H "
            f"{first['1H_bleu_thesis']:.2f} → {last['1H_bleu_thesis']:.2f}, not significant; "
            f"1H+1P gains {table['bleu_gain_thesis'].min():+.2f} to "
            f"{table['bleu_gain_thesis'].max():+.2f}, significant at every size).")


def tuning_set_markdown(table: pd.DataFrame, figure: PaperFigure, note: str) -> str:
    header = ["tuning set", "segments", "sentences (thesis)", *PAIRED_HEADER]
    rows = [[row["tuning_set"], str(row["segments"]), number_text(row["sentences_thesis"], 0),
             *_paired_texts(row)] for row in table.to_dict("records")]
    return figure_page(
        figure.title, header, rows,
        "Test-set BLEU and TER in percent, mean over tuning replicates ± sample standard "
        "deviation, of the held-out system: trained without a seeded contiguous block of "
        "training segments (and without other training segments with a block's English), and "
        "tuned on Base, the tune set with each segment's single reference (the seeded "
        "per-document choice of Fig. 4.3), or on T<n>, Base followed by the first n parts of the "
        "block with their training English as the single reference (Fig. 4.11: the parts are "
        "the thesis's 600/919, 500/919 and 500/919 of Base by default, "
        "`figures.heldout_blocks`). 1H+1P adds the 1-best untargeted paraphrase of the single "
        "reference by the held-out system's own paraphraser. The thesis's numbers are for "
        "NIST MT03 enlarged from the Chinese-English training data, tested on MT04+05: a shape "
        "to compare with. The marks of 1H on T1–T3 are against 1H on Base, those of 1H+1P "
        "against 1H on the same set.", note, tuning_set_reading(table))


def _scored(row: Mapping, prefix: str) -> str:
    return cell_text(row[f"{prefix}_mean"], row[f"{prefix}_sd"], int(row[f"{prefix}_n"]),
                     row[f"{prefix}_mark"] + replicate_flag(row[f"{prefix}_close"]))


def _markdown_rows(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |",
            "|" + "|".join([":---"] * 2 + ["---:"] * (len(header) - 2)) + "|",
            *("| " + " | ".join(cells) + " |" for cells in rows)]


def figure_page(title: str, header: Sequence[str], rows: Sequence[Sequence[str]], caption: str,
                note: str | None, reading: str) -> str:
    """A figure page: title, table, caption, the significance note, the reading line."""
    return "\n".join([f"# {title}", "", *_markdown_rows(header, rows), "", caption, "",
                      *([note, ""] if note else []), f"{READING}{reading}", ""])


def _p(value) -> str:
    return "–" if value is None or pd.isna(value) else f"{value:.3g}"


def metric_reading(table: pd.DataFrame) -> str:
    """One line: the 1H+1P gain over 1H per tuning metric, ours and the thesis's."""
    parts = []
    for metric, rows in table.groupby("tuning_metric", sort=False):
        single = rows[rows["label"] == "1H"].iloc[0]
        paraphrased = rows[rows["label"] == "1H+1P"].iloc[0]
        parts.append(
            f"tuned with {metric.upper()}, 1H+1P − 1H = "
            f"{paraphrased['bleu_mean'] - single['bleu_mean']:+.2f} BLEU "
            f"(p = {_p(paraphrased['bleu_p_value'])}), precision "
            f"{paraphrased['bleu_precision_mean'] - single['bleu_precision_mean']:+.2f}, "
            f"TER {paraphrased['ter_mean'] - single['ter_mean']:+.2f} "
            f"(thesis: precision "
            f"{paraphrased['bleu_precision_thesis'] - single['bleu_precision_thesis']:+.2f}, "
            f"TER {paraphrased['ter_thesis'] - single['ter_thesis']:+.2f})")
    return "; ".join(parts) + "."


def metric_markdown(table: pd.DataFrame, figure: PaperFigure, note: str) -> str:
    header = ["tuned with", "condition", "BLEU", "precision", "BP", "TER", "precision (thesis)",
              "BP (thesis)", "TER (thesis)"]
    rows = [[row["tuning_metric"].upper(), row["condition"], _scored(row, "bleu"),
             number_text(row["bleu_precision_mean"]), number_text(row["brevity_penalty_mean"], 3),
             _scored(row, "ter"), number_text(row["bleu_precision_thesis"]),
             number_text(row["brevity_penalty_thesis"], 2), number_text(row["ter_thesis"])]
            for row in table.to_dict("records")]
    return figure_page(
        figure.title, header, rows,
        "Test-set BLEU, its two factors (precision: geometric mean of the 1–4-gram precisions; "
        "BP: brevity penalty; BLEU = precision × BP) and TER in percent, mean over tuning "
        "replicates ± sample standard deviation; the factors are means over replicates. The "
        "thesis's numbers (Fig. 4.8: tuned with TERBLEU, 4.9: with BLEU) are for its weblog "
        "system (600,000 training sentences) on a single-reference validation set: a shape to "
        "compare with, not a number to match.", note, metric_reading(table))


def translator_reading(table: pd.DataFrame) -> str:
    """One line: the spread of 1H over the reference sets and where the paraphrase gains most,
    ours and the thesis's."""
    weakest = table.loc[table["1H_bleu_mean"].idxmin()]
    most = table.loc[table["bleu_gain"].idxmax()]
    gains = ", ".join(f"{name} {gain:+.2f}"
                      for name, gain in zip(table["reference_name"], table["bleu_gain"],
                                            strict=True))
    known = table.dropna(subset=["bleu_gain_thesis"])
    thesis = ""
    if len(known):
        top = known.loc[known["bleu_gain_thesis"].idxmax()]
        thesis = (f"; thesis: 1H {known['1H_bleu_thesis'].min():.2f}–"
                  f"{known['1H_bleu_thesis'].max():.2f}, the largest gain "
                  f"({top['bleu_gain_thesis']:+.2f}) for its weakest set #{top['reference_set']}")
    best = (f"the largest gain is for {most['reference_name']}" if most["bleu_gain"] > 0
            else f"no set gains, the smallest loss is for {most['reference_name']}")
    return (f"1H BLEU {table['1H_bleu_mean'].min():.2f}–{table['1H_bleu_mean'].max():.2f} over "
            f"the reference sets (weakest: {weakest['reference_name']}); 1H+1P − 1H per set: "
            f"{gains}; {best}{thesis}.")


def translator_markdown(table: pd.DataFrame, figure: PaperFigure, note: str) -> str:
    header = ["set", "reference", *PAIRED_HEADER]
    rows = [[f"#{row['reference_set']}", row["reference_name"], *_paired_texts(row)]
            for row in table.to_dict("records")]
    return figure_page(
        figure.title, header, rows,
        "Test-set BLEU and TER in percent, mean over tuning replicates ± sample standard "
        "deviation. 1H: the reference set is every tune segment's single reference (a "
        "per-translator set, unlike the seeded per-document 1H of Fig. 4.3); 1H+1P adds its "
        "1-best untargeted paraphrase. The thesis's numbers are for reference sets #1–#4 of "
        "NIST MT03 (Chinese-English, tested on MT04+05): a shape to compare with.", note,
        translator_reading(table))


def plot_bars(groups: Sequence[str], series: Mapping[str, tuple[Sequence[float],
                                                                 Sequence[float]]],
               path: str | os.PathLike, title: str, ylabel: str, zero_based: bool = False
               ) -> None:
    """Grouped bars (mean, sd error bars) of each series over ``groups``; the y axis starts
    near the smallest bar unless ``zero_based``."""
    from matplotlib.figure import Figure  # Agg canvas; no pyplot state

    figure = Figure(figsize=(1.4 * len(groups) + 2.5, 4.0), dpi=100)
    axes = figure.add_subplot()
    width = 0.8 / max(1, len(series))
    positions = np.arange(len(groups))
    for number, (name, (means, sds)) in enumerate(series.items()):
        axes.bar(positions + (number - (len(series) - 1) / 2) * width,
                 np.asarray(means, dtype=float), width,
                 yerr=np.nan_to_num(np.asarray(sds, dtype=float)), capsize=3, label=name,
                 color=f"C{number % 10}")
    values = [v for means, _ in series.values() for v in means if not math.isnan(v)]
    if values and not zero_based:
        axes.set_ylim(min(values) - 3, max(values) + 2)
    axes.set_xticks(positions, groups)
    axes.set_ylabel(ylabel)
    axes.set_title(title, fontsize=10)
    axes.grid(alpha=0.3, axis="y")
    axes.legend(fontsize="small")
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", metadata={"Software": None})


def _plot_paired(table: pd.DataFrame, groups: Sequence[str], path: str | os.PathLike,
                 title: str) -> None:
    """Test BLEU bars of 1H and 1H+1P per row of a :func:`_paired_cells` table."""
    plot_bars(groups, {label: (table[f"{label}_bleu_mean"].tolist(),
                                table[f"{label}_bleu_sd"].tolist()) for label in ("1H", "1H+1P")},
               path, title, "test BLEU (%)")


def write_figure(figure: PaperFigure, evaluation_path: str | os.PathLike,
                 summary_path: str | os.PathLike, tune_path: str | os.PathLike,
                 markdown_path: str | os.PathLike, html_path: str | os.PathLike,
                 csv_path: str | os.PathLike, png_path: str | os.PathLike,
                 thesis_numbers: bool = True) -> pd.DataFrame:
    """A figure's page (Markdown, HTML), CSV and plot from the paper runs' EVALUATION and
    CONDITION_SUMMARY tables; ``tune_path`` names the reference sets (Fig. 4.10) or, for the
    held-out system, its tuning sets (Fig. 4.11/4.12). Without ``thesis_numbers`` (own data:
    config ``report.thesis_numbers``) the page, the CSV and the Fig. 5.14 plot leave out the
    thesis's numbers (:func:`without_thesis`)."""
    names = {c.name for c in figure.conditions}
    evaluation = read_table(evaluation_path, EVALUATION)
    summary = read_table(summary_path, CONDITION_SUMMARY)
    evaluation = evaluation[evaluation["condition"].isin(names)]
    summary = summary[summary["condition"].isin(names)]
    missing = sorted(names - set(summary["condition"]))
    if missing:
        raise ValueError(f"{summary_path}: no evaluated runs of {missing} (Fig. {figure.figure})")
    replicates = sorted(set(summary["replicates"].astype(int)))
    significance = Significance("its baseline (1H with the same single reference, tuning set "
                                "and tuning metric)", float(summary["significance_level"].iloc[0]),
                                int(summary["shuffles"].iloc[0]))
    note = significance.note(replicates)
    if summary["close_replicates"].any():
        note += f" {CLOSE_NOTE}"
    if figure.key == "fig4_8":
        table = metric_table(evaluation, summary, figure)
        text = metric_markdown(table, figure, note)
        groups = [f"tuned with {m.upper()}" for m in table["tuning_metric"].unique()]
        series = {label: (rows["bleu_mean"].tolist(), rows["bleu_sd"].tolist())
                  for label, rows in table.groupby("label", sort=False)}
        plot_bars(groups, series, png_path, figure.title, "test BLEU (%)")
    elif figure.key == "fig4_10":
        reference_names = json.loads(read_metadata(tune_path)["reference_names"])
        table = translator_table(summary, figure, reference_names)
        text = translator_markdown(table, figure, note)
        _plot_paired(table, [f"#{n} {name}" for n, name in
                             zip(table["reference_set"], table["reference_name"], strict=True)],
                     png_path, figure.title)
    elif figure.key == "fig4_12":
        sizes = json.loads(read_metadata(tune_path)[TUNING_SETS])
        table = tuning_set_table(summary, figure, sizes)
        text = tuning_set_markdown(table, figure, note)
        _plot_paired(table, [f"{name} ({size})" for name, size in
                             zip(table["tuning_set"], table["segments"], strict=True)],
                     png_path, figure.title)
    elif figure.key == "fig5_14":
        labels = {c.reference_type: f"Untargeted, b = {c.bias:g}" for c in figure.conditions
                  if c.bias is not None}
        labels["paraphrase"] = "Untargeted"
        biased = [c.reference_type for c in figure.conditions if c.bias is not None]
        table = figure_table(reference_table(evaluation, conditions=summary), THESIS_BIASED,
                             extra_series=list(dict.fromkeys(biased)),
                             thesis_numbers=thesis_numbers)
        note = ("\n(thesis) columns: the unbiased untargeted and targeted runs of Fig. 5.10, "
                "which Fig. 5.14 draws again; the thesis prints no numbers for its biased "
                "curves.\n" if thesis_numbers else "")
        text = (f"# {figure.title}\n\n" + markdown_table(table, labels, Significance.of(summary))
                + f"{note}\n{READING}" + biased_reading(table, labels) + "\n")
        plot_references(table, png_path, labels=labels,
                        title="BLEU vs. tuning references"
                        + (" (thesis Fig. 5.14)" if thesis_numbers else ""))
    else:
        raise ValueError(f"no table for figure {figure.key}")
    if not thesis_numbers:
        text, table = without_thesis(text, table)
    write_page(text, markdown_path, html_path, figure.title)
    write_text_atomically(csv_text(table), csv_path)
    return table


def without_thesis(text: str, table: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """A figure page and table without the thesis's numbers: every Markdown table column whose
    header says "thesis", every line of text about the thesis's columns, and the table's
    ``*_thesis`` columns."""
    lines, out = text.splitlines(), []
    dropped: list[int] = []
    for line in lines:
        if line.startswith("|"):
            cells = line.strip().strip("|").split("|")
            if not dropped or all(set(c.strip()) <= set(":-") for c in cells):
                if not set("".join(cells)) <= set(":- "):
                    dropped = [i for i, c in enumerate(cells) if "thesis" in c.lower()]
            out.append("| " + " | ".join(c.strip() for i, c in enumerate(cells)
                                         if i not in dropped) + " |")
            continue
        dropped = []
        if line.startswith("(thesis)"):
            continue
        out.append(line)
    return "\n".join(out) + "\n", table[[c for c in table.columns
                                          if not str(c).endswith(f"_{THESIS}")]]


def series_reading(table: pd.DataFrame, labels: Mapping[str, str] | None = None,
                   metric: str = "bleu") -> str:
    """One line over a reference-count table: each series' values for k = 1..4 references,
    with their significance marks and the thesis's numbers where the table has them."""
    parts = []
    for name in series_names(table):
        values = [f"{mean:.2f}{mark if isinstance(mark, str) else ''}"
                  for mean, mark in zip(table[f"{name}_{metric}_mean"],
                                        table.get(f"{name}_{metric}_mark",
                                                  [""] * len(table)), strict=True)
                  if not math.isnan(mean)]
        published = table.get(f"{name}_{metric}_{THESIS}")
        thesis = "" if published is None else \
            f" (thesis {', '.join(f'{v:.2f}' for v in published.dropna())})"
        parts.append(f"{series_label(name, labels)} {', '.join(values)}{thesis}")
    return f"test {METRIC_LABELS[metric]} for 1, 2, 3, 4 tuning references: " + "; ".join(parts) \
        + "."


def biased_reading(table: pd.DataFrame, labels: Mapping[str, str]) -> str:
    """Fig. 5.14's line: every series over k, then the thesis's reading to compare with."""
    return (series_reading(table, labels) + " Thesis: b = 0.25 gains less than the unbiased "
            "untargeted paraphraser at 1H+1 and follows its trend with softer losses; b = 0.5 "
            "gains nothing significant.")



def page_reading(markdown_path: str | os.PathLike) -> str:
    """The ``Reading:`` line of a figure page written by :func:`write_figure`."""
    for line in Path(markdown_path).read_text(encoding="utf-8").splitlines():
        if line.startswith(READING):
            return line[len(READING):]
    raise ValueError(f"{markdown_path}: the page has no '{READING}' line")


def curves_reading(csv_path: str | os.PathLike) -> str:
    """Fig. 5.4's line from its CSV: per run, tune BLEU at the first and the best iteration,
    test BLEU at the first and the last."""
    table = pd.read_csv(csv_path)
    parts = []
    for column in [c for c in table.columns if c.endswith("_tune")]:
        run = column[:-len("_tune")]
        tune, test = table[column].dropna(), table[f"{run}_test_bleu"].dropna()
        parts.append(f"{TuningRun.parse(run).condition.paraphraser.targeting_weight:g}: tune "
                     f"{tune.iloc[0]:.2f} → best {tune.max():.2f}, test {test.iloc[0]:.2f} → "
                     f"{test.iloc[-1]:.2f} (min {test.min():.2f}) over {len(test)} iterations")
    return "1H+1T per targeting weight " + "; ".join(parts) + \
        ". Thesis: tune BLEU rose while test BLEU fell every iteration."


def grid_reading(chosen_path: str | os.PathLike) -> str:
    """Fig. 5.3–5.8's line: the grid search's chosen configuration and its distances."""
    chosen = read_table(chosen_path, GRID_CHOICE).iloc[0]
    return (f"the grid chose bias {chosen['bias']:g}, targeting weight "
            f"{chosen['targeting_weight']:g}: 1-best targeted paraphrases move "
            f"Δd_ref = {chosen['delta_ref']:.1f} TER points from the reference and "
            f"Δd_mt = {chosen['delta_mt']:.1f} towards the MT output (D = "
            f"{chosen['balance']:.1f}).")


@dataclass(frozen=True)
class FigurePage:
    """A line of the paper-tables page: a thesis figure, what it shows, its page and its
    reading."""

    figure: str
    title: str
    page: str
    reading: str


def paper_tables_page(experiment: str, pages: Sequence[FigurePage]) -> str:
    """The page over every thesis figure regenerated, in figure order, and those that are
    not (:data:`NOT_REPRODUCED`)."""
    def order(page: FigurePage) -> tuple[int, ...]:
        return tuple(int(part) for part in re.findall(r"\d+", page.figure)[:2])

    lines = [f"# The thesis's figures on the {experiment} experiment", "",
             "Each figure's page has the table with the thesis's published numbers beside ours, "
             "the significance test, and its plot; `snakemake paper_tables` rebuilds them all.",
             "", "| Fig. | what | page | reading |", "|:---|:---|:---|:---|"]
    lines += [f"| {p.figure} | {p.title} | {p.page} | {p.reading} |"
              for p in sorted(pages, key=order)]
    lines += ["", "Not regenerated:", ""]
    lines += [f"- Fig. {figures}: {why}" for figures, why in NOT_REPRODUCED]
    return "\n".join(lines) + "\n"


def write_paper_tables(experiment: str, figures: Sequence[PaperFigure],
                       figure_pages: Sequence[str | os.PathLike], fig4_3: str | os.PathLike,
                       grid_page: str | os.PathLike, grid_choice: str | os.PathLike,
                       fig5_4: str | os.PathLike, fig5_10: str | os.PathLike | None,
                       fig6_2: str | os.PathLike | None, markdown_path: str | os.PathLike,
                       html_path: str | os.PathLike) -> str:
    """The page over every regenerated figure (:func:`paper_tables_page`) from the figures'
    own outputs: the pages of ``figures`` and Fig. 6.2 (their reading lines), the Fig. 4.3,
    5.4 and 5.10 CSVs, the grid search's page and choice (``fig5_10``, ``fig6_2`` None: the
    config lacks their conditions)."""
    def name(path: str | os.PathLike) -> str:
        return Path(path).with_suffix(".md").name

    pages = [FigurePage(f.figure, f.title, name(path), page_reading(Path(path).with_suffix(".md")))
             for f, path in zip(figures, figure_pages, strict=True)]
    pages += [
        FigurePage("4.3", "Human and untargeted paraphrased tuning references", name(fig4_3),
                   series_reading(pd.read_csv(fig4_3))),
        FigurePage("5.3–5.8", "Targeting sweep and grid search over bias × targeting weight",
                   name(grid_page), grid_reading(grid_choice)),
        FigurePage("5.4", "Targeted tuning without bias: tune and test BLEU per iteration",
                   name(fig5_4), curves_reading(fig5_4))]
    if fig5_10 is not None:
        pages.append(FigurePage("5.10", "Human, untargeted and targeted tuning references",
                                name(fig5_10), series_reading(pd.read_csv(fig5_10))))
    if fig6_2 is not None:
        pages.append(FigurePage("6.2", "Focus and reachability of the second reference",
                                name(fig6_2), page_reading(Path(fig6_2).with_suffix(".md"))))
    text = paper_tables_page(experiment, pages)
    write_page(text, markdown_path, html_path, "The thesis's figures")
    return text
