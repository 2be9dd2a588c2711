"""The thesis's reference-count table and plot (Fig. 4.3, and Fig. 5.10 with targeted rows).

From an :data:`~circle.schemas.EVALUATION` table: one row per number of tuning references
k = 1..4; per reference series (``human`` first, then each paraphrase kind, e.g. ``paraphrase``
= untargeted, ``targeted``) the test BLEU and TER. The human row k is kH; a paraphrase row k is
1H+(k-1)P, and its row 1 is the shared 1H baseline (as in the thesis table). A cell is the mean
over tuning replicates, with the sample standard deviation when there are several (MERT is
unstable; Clark et al. 2011). Outputs are Markdown, CSV and a PNG plot of BLEU against k.
"""

from __future__ import annotations

import io
import logging
import math
import os
from collections.abc import Mapping

import numpy as np
import pandas as pd

from circle.schemas import EVALUATION
from circle.tables import atomic_path, read_table

logger = logging.getLogger(__name__)

HUMAN = "human"
SERIES_LABELS: dict[str, str] = {"human": "Human", "paraphrase": "Paraphrased",
                                 "targeted": "Targeted"}
METRIC_LABELS: dict[str, str] = {"bleu": "BLEU", "ter": "TER"}
DECIMALS = 2


def _label(series: str, labels: Mapping[str, str] | None = None) -> str:
    return {**SERIES_LABELS, **(labels or {})}.get(series, series)


def reference_table(evaluation: pd.DataFrame, experiment: str | None = None) -> pd.DataFrame:
    """The Fig. 4.3 table: ``references``, ``label`` and, per series and metric (``bleu``,
    ``ter``), columns ``<series>_<metric>_mean``, ``_sd`` (ddof 1; NaN for one replicate)
    and ``_n`` (replicates). Missing conditions are NaN."""
    frame = evaluation
    experiments = sorted(frame["experiment"].unique())
    if experiment is not None:
        frame = frame[frame["experiment"] == experiment]
        if frame.empty:
            raise ValueError(f"no rows for experiment {experiment!r}; found {experiments}")
    elif len(experiments) > 1:
        raise ValueError(f"the table holds several experiments {experiments}; choose one")
    bad = frame[frame["references_used"]
                != frame["human_references"] + frame["paraphrase_references"]]
    if not bad.empty:
        raise ValueError(f"references_used is not human + paraphrase references in conditions "
                         f"{sorted(bad['condition'].unique())}")
    human = frame[(frame["reference_type"] == HUMAN) & (frame["paraphrase_references"] == 0)]
    others = frame[frame["reference_type"] != HUMAN]
    off_figure = others[others["human_references"] != 1]
    if not off_figure.empty:
        logger.warning("ignoring conditions outside the 1H+kP series: %s",
                       sorted(off_figure["condition"].unique()))
    others = others[others["human_references"] == 1]
    baseline = human[human["references_used"] == 1]
    series = {HUMAN: human}
    for name in sorted(others["reference_type"].unique()):
        series[name] = pd.concat([baseline, others[others["reference_type"] == name]])
    for name, rows in series.items():
        duplicated = rows.duplicated(["references_used", "replicate"])
        if duplicated.any():
            raise ValueError(f"series {name!r}: replicate numbers repeat in conditions "
                             f"{sorted(rows[duplicated]['condition'].unique())}")
    top = int(frame["references_used"].max()) if not frame.empty else 0
    table = pd.DataFrame({"references": np.arange(1, top + 1, dtype=np.int64)})
    table["label"] = [f"{k} (1H+{k - 1})" for k in table["references"]]
    for name, rows in series.items():
        for metric in METRIC_LABELS:
            grouped = rows.groupby("references_used")[metric]
            table[f"{name}_{metric}_mean"] = table["references"].map(grouped.mean())
            table[f"{name}_{metric}_sd"] = table["references"].map(grouped.std(ddof=1))
            table[f"{name}_{metric}_n"] = table["references"].map(grouped.count()) \
                .fillna(0).astype(np.int64)
    return table


def series_names(table: pd.DataFrame) -> list[str]:
    """The series of a :func:`reference_table`, in column order."""
    return [c[:-len("_bleu_mean")] for c in table.columns if c.endswith("_bleu_mean")]


def _cell(mean: float, sd: float, n: int) -> str:
    if n == 0 or math.isnan(mean):
        return "–"
    if n > 1 and not math.isnan(sd):
        return f"{mean:.{DECIMALS}f} ± {sd:.{DECIMALS}f}"
    return f"{mean:.{DECIMALS}f}"


def markdown_table(table: pd.DataFrame, labels: Mapping[str, str] | None = None) -> str:
    """The table as GitHub Markdown, values rounded to two decimals as in the thesis."""
    names = series_names(table)
    header = ["# tuning refs"] + [f"{_label(s, labels)} {METRIC_LABELS[m]}" for s in names
                                  for m in METRIC_LABELS]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join([":---"] + ["---:"] * (len(header) - 1)) + "|"]
    for row in table.itertuples(index=False):
        values = row._asdict()
        cells = [values["label"]] + [
            _cell(values[f"{s}_{m}_mean"], values[f"{s}_{m}_sd"], values[f"{s}_{m}_n"])
            for s in names for m in METRIC_LABELS]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "BLEU and TER (lower is better) in percent on the test set; mean over tuning "
              "replicates ± sample standard deviation where a cell has more than one."]
    return "\n".join(lines) + "\n"


def _write_text(text: str, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_table_files(table: pd.DataFrame, markdown_path: str | os.PathLike,
                      csv_path: str | os.PathLike, labels: Mapping[str, str] | None = None
                      ) -> None:
    """Write the table as Markdown and as CSV (full precision)."""
    _write_text(markdown_table(table, labels), markdown_path)
    buffer = io.StringIO()
    table.to_csv(buffer, index=False, lineterminator="\n")
    _write_text(buffer.getvalue(), csv_path)


def plot_references(table: pd.DataFrame, path: str | os.PathLike, metric: str = "bleu",
                    title: str | None = None, labels: Mapping[str, str] | None = None
                    ) -> None:
    """PNG plot of ``metric`` against the number of tuning references, one line per series,
    error bars = standard deviation over replicates (thesis Fig. 4.3)."""
    from matplotlib.figure import Figure  # Agg canvas; no pyplot state

    figure = Figure(figsize=(5.5, 4.0), dpi=100)
    axes = figure.add_subplot()
    markers = "osd^v<>"
    for number, name in enumerate(series_names(table)):
        mean = table[f"{name}_{metric}_mean"].to_numpy(dtype=float)
        sd = np.nan_to_num(table[f"{name}_{metric}_sd"].to_numpy(dtype=float))
        keep = ~np.isnan(mean)
        axes.errorbar(table["references"].to_numpy()[keep], mean[keep], yerr=sd[keep],
                      marker=markers[number % len(markers)], capsize=3, label=_label(name, labels))
    axes.set_xticks(table["references"].to_numpy())
    axes.set_xlabel("number of tuning references")
    axes.set_ylabel(f"test {METRIC_LABELS.get(metric, metric)} (%)")
    axes.set_title(title or f"{METRIC_LABELS.get(metric, metric)} vs. tuning references")
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", metadata={"Software": None})


def write_report(evaluation: pd.DataFrame | str | os.PathLike,
                 markdown_path: str | os.PathLike, csv_path: str | os.PathLike,
                 png_path: str | os.PathLike, experiment: str | None = None,
                 labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Table (Markdown, CSV) and BLEU plot from an EVALUATION frame or table path."""
    if not isinstance(evaluation, pd.DataFrame):
        evaluation = read_table(evaluation, EVALUATION)
    table = reference_table(evaluation, experiment)
    write_table_files(table, markdown_path, csv_path, labels)
    plot_references(table, png_path, labels=labels)
    return table
