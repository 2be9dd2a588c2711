"""The page of thesis Fig. 5.4: tune and test score per tuning iteration of the targeted runs
without the self-paraphrase bias, from :func:`circle.experiments.iterations.score_iterations`'s
tables; :func:`curves_table` and :func:`write_curves_report` set the runs side by side.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from circle.core.pages import csv_text, write_page, write_text_atomically
from circle.core.schemas import ITERATION_SCORES
from circle.core.tables import atomic_path, read_table


def curves_table(scores: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """One row per iteration, per run the columns ``<run>_tune``, ``<run>_test_bleu`` (NaN past
    a run's last iteration)."""
    table = pd.DataFrame({"iteration": sorted({int(i) for s in scores for i in s["iteration"]})})
    for frame in scores:
        run = str(frame["run"].iloc[0])
        by_iteration = frame.set_index("iteration")
        table[f"{run}_tune"] = table["iteration"].map(by_iteration["tune_score"])
        table[f"{run}_test_bleu"] = table["iteration"].map(by_iteration["test_bleu"])
    return table


def curves_markdown(scores: Sequence[pd.DataFrame], labels: Mapping[str, str]) -> str:
    """The Fig. 5.4 page: per iteration the tune score and test BLEU of each run (``labels``
    names the runs), the returned iteration in bold, and each run's change from iteration 1."""
    runs = [str(frame["run"].iloc[0]) for frame in scores]
    table = curves_table(scores)
    returned = {str(f["run"].iloc[0]): int(f.loc[f["returned"], "iteration"].iloc[0])
                for f in scores}
    metric = str(scores[0]["metric"].iloc[0]).upper()
    header = ["iteration"] + [f"{labels[r]} {c}" for r in runs
                              for c in (f"tune {metric}", "test BLEU")]
    lines = ["# Targeted tuning without the self-paraphrase bias (thesis Fig. 5.4)", "",
             f"Tune {metric} (against the references each run tuned with: the original and "
             "its 1-best targeted paraphrase per hypothesis) and test BLEU (all test "
             "references) of the weights of every MERT iteration; iteration 1 is the start "
             "(the 1H-tuned weights); bold: the iteration whose weights the run returned.", "",
             "| " + " | ".join(header) + " |", "|" + "|".join(["---:"] * len(header)) + "|"]
    for row in table.to_dict("records"):
        cells = [str(int(row["iteration"]))]
        for run in runs:
            for column in (f"{run}_tune", f"{run}_test_bleu"):
                value = row[column]
                text = "–" if np.isnan(value) else f"{value:.2f}"
                cells.append(f"**{text}**" if returned[run] == row["iteration"]
                             and not np.isnan(value) else text)
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for frame, run in zip(scores, runs, strict=True):
        first, last = frame.iloc[0], frame.iloc[-1]
        test = frame["test_bleu"].to_numpy()
        falls = int(np.sum(np.diff(test) < 0))
        lines.append(f"- {labels[run]}: tune {first['tune_score']:.2f} → {last['tune_score']:.2f}, "
                     f"test BLEU {first['test_bleu']:.2f} → {last['test_bleu']:.2f} over "
                     f"{len(frame)} iterations (test BLEU fell in {falls} of {len(frame) - 1} "
                     f"steps); returned iteration {returned[run]} at test BLEU "
                     f"{frame.loc[frame['returned'], 'test_bleu'].iloc[0]:.2f}.")
    return "\n".join(lines) + "\n"


def plot_curves(scores: Sequence[pd.DataFrame], labels: Mapping[str, str],
                path: str | os.PathLike) -> None:
    """PNG of Fig. 5.4: per run, tune score (solid) and test BLEU (dashed) per iteration."""
    from matplotlib.figure import Figure  # Agg canvas; no pyplot state
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(6.0, 4.0), dpi=100)
    axes = figure.add_subplot()
    for number, frame in enumerate(scores):
        run, colour = str(frame["run"].iloc[0]), f"C{number % 10}"
        axes.plot(frame["iteration"], frame["tune_score"], color=colour, marker="o",
                  label=f"{labels[run]}: tune")
        axes.plot(frame["iteration"], frame["test_bleu"], color=colour, marker="s",
                  linestyle="--", label=f"{labels[run]}: test")
    axes.set_xlabel("MERT iteration")
    axes.set_ylabel("BLEU (%)")
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_title("Targeted tuning without self-paraphrase bias (thesis Fig. 5.4)", fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", metadata={"Software": None})


def write_curves_report(score_paths: Sequence[str | os.PathLike], labels: Mapping[str, str],
                        markdown_path: str | os.PathLike, html_path: str | os.PathLike,
                        csv_path: str | os.PathLike, png_path: str | os.PathLike) -> str:
    """The Fig. 5.4 page (Markdown, HTML), its table as CSV and its plot, from the
    :data:`~circle.core.schemas.ITERATION_SCORES` tables of the runs."""
    scores = [read_table(path, ITERATION_SCORES) for path in score_paths]
    text = curves_markdown(scores, labels)
    write_page(text, markdown_path, html_path, "Targeted tuning per iteration (thesis Fig. 5.4)")
    write_text_atomically(csv_text(curves_table(scores)), csv_path)
    plot_curves(scores, labels, png_path)
    return text
