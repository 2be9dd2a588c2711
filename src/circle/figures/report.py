"""The thesis's reference-count page (Fig. 4.3; Fig. 5.10 with targeted rows): the test-set scores
of every condition's tuning replicates per number of tuning references, beside the thesis's
published numbers (:func:`write_report`, on :mod:`circle.figures.reference_table`), and every
tuning run's tune score per iteration (:func:`plot_tuning_curves`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import pandas as pd

from circle.core.schemas import CONDITION_SUMMARY, EVALUATION, TUNING_LOG
from circle.core.tables import atomic_path, read_table
from circle.figures.reference_table import (
    METRIC_LABELS,
    TABLE_TITLE,
    THESIS_TABLES,
    Significance,
    figure_table,
    plot_references,
    reference_table,
    score_signatures,
    write_table_files,
)
from circle.tune.metrics import get_metric


def _panel_grid(count: int, columns: int = 4) -> tuple[int, int]:
    columns = max(1, min(columns, count))
    return -(-count // columns), columns


def plot_tuning_curves(logs: Mapping[tuple[str, int], pd.DataFrame | str | os.PathLike],
                       path: str | os.PathLike, title: str | None = None) -> None:
    """PNG of every tuning run's tune score (``decode_score``, percent) per iteration: one
    panel per condition (in the order of ``logs``), one line per replicate, a dotted line at
    the run's untuned start (iteration 1) and a star on the iteration whose weights the run
    returned. ``logs`` maps (condition, replicate) to a :data:`~circle.core.schemas.TUNING_LOG`
    frame or table path."""
    from matplotlib.figure import Figure  # Agg canvas; no pyplot state
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    frames = {run: log if isinstance(log, pd.DataFrame) else read_table(log, TUNING_LOG)
              for run, log in logs.items()}
    if not frames:
        raise ValueError("no tuning logs to plot")
    conditions = list(dict.fromkeys(condition for condition, _ in frames))
    replicates = sorted({replicate for _, replicate in frames})
    colours = {r: f"C{i % 10}" for i, r in enumerate(replicates)}
    rows, columns = _panel_grid(len(conditions))
    figure = Figure(figsize=(3.1 * columns, 2.5 * rows + 0.7), dpi=100)
    grid = figure.subplots(rows, columns, squeeze=False)
    for axes in grid.flat[len(conditions):]:
        axes.set_visible(False)
    for axes, condition in zip(grid.flat, conditions, strict=False):
        metrics = set()
        for (name, replicate), log in frames.items():
            if name != condition:
                continue
            log = log.sort_values("iteration")
            metrics.update(log["metric"].unique())
            x = log["iteration"].to_numpy()
            y = 100.0 * log["decode_score"].to_numpy(dtype=float)
            colour = colours[replicate]
            axes.plot(x, y, marker="o", markersize=3, color=colour, linewidth=1.2)
            start = y[x == 1]
            if len(start):
                axes.axhline(start[0], color=colour, linestyle=":", linewidth=0.8)
            returned = log["returned"].to_numpy(dtype=bool)
            axes.plot(x[returned], y[returned], linestyle="none", marker="*", markersize=11,
                      color=colour, markeredgecolor="black", markeredgewidth=0.6)
        metric = metrics.pop() if len(metrics) == 1 else "score"
        label = METRIC_LABELS.get(metric, metric.upper())
        worse = "" if metric == "score" or get_metric(metric).higher_is_better \
            else ", lower is better"
        axes.set_title(condition, fontsize=10)
        axes.set_xlabel("iteration", fontsize=8)
        axes.set_ylabel(f"tune {label} (%{worse})", fontsize=8)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.tick_params(labelsize=7)
        axes.grid(alpha=0.3)
    handles = [Line2D([], [], color=colours[r], marker="o", markersize=3, label=f"replicate {r}")
               for r in replicates]
    handles += [Line2D([], [], color="grey", linestyle=":", label="untuned start"),
                Line2D([], [], color="grey", linestyle="none", marker="*", markersize=10,
                       markeredgecolor="black", label="returned weights")]
    figure.legend(handles=handles, loc="lower center", ncol=min(len(handles), 6), fontsize=8,
                  frameon=False)
    figure.suptitle(title or "Tune-set score per tuning iteration", fontsize=11)
    figure.tight_layout(rect=(0, 0.6 / (2.5 * rows + 0.7), 1, 1))
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", metadata={"Software": None})


def write_report(evaluation: pd.DataFrame | str | os.PathLike,
                 markdown_path: str | os.PathLike, html_path: str | os.PathLike,
                 csv_path: str | os.PathLike, png_path: str | os.PathLike,
                 experiment: str | None = None,
                 labels: Mapping[str, str] | None = None,
                 conditions: pd.DataFrame | str | os.PathLike | None = None,
                 figure: str | None = None, thesis_numbers: bool = True) -> pd.DataFrame:
    """Table (Markdown, HTML, CSV) and BLEU plot from an EVALUATION frame or table path; with the
    CONDITION_SUMMARY (frame or path) of the same runs, significance marks and p-values; with a
    thesis ``figure`` (a key of :data:`THESIS_TABLES`), that figure's series and, with
    ``thesis_numbers`` (config ``report.thesis_numbers``), the thesis's numbers beside ours and
    its figure number in the titles. Under the table, sacrebleu's signatures of the scores."""
    if not isinstance(evaluation, pd.DataFrame):
        evaluation = read_table(evaluation, EVALUATION)
    if conditions is not None and not isinstance(conditions, pd.DataFrame):
        conditions = read_table(conditions, CONDITION_SUMMARY)
    table = reference_table(evaluation, experiment, conditions)
    thesis = THESIS_TABLES[figure] if figure is not None else None
    if thesis is not None:
        table = figure_table(table, thesis, thesis_numbers=thesis_numbers)
    significance = None
    if conditions is not None:
        chosen = experiment if experiment is not None else evaluation["experiment"].iloc[0]
        significance = Significance.of(conditions[conditions["experiment"] == chosen])
    title = TABLE_TITLE if thesis is None else thesis.title if thesis_numbers \
        else thesis.own_title
    chosen = experiment if experiment is not None else evaluation["experiment"].iloc[0]
    signatures = score_signatures(evaluation[evaluation["experiment"] == chosen])
    write_table_files(table, markdown_path, html_path, csv_path, labels, significance, title,
                      signatures)
    plot_references(table, png_path, labels=labels,
                    title=f"BLEU vs. tuning references (thesis Fig. {figure})"
                    if figure and thesis_numbers else None)
    return table
