"""The reference table, the toolkit of every page that sets test scores against the number of
tuning references (the Fig. 4.3/5.10 page, :mod:`circle.figures.report`; the paper's figures, the
lattice and focus pages, the ladder, the summary).

From an :data:`~circle.core.schemas.EVALUATION` table, :func:`reference_table` makes one row per
number of tuning references k = 1..4; per reference series (``human`` first, then each
paraphrase kind, e.g. ``paraphrase`` = untargeted, ``targeted``) the test BLEU and TER. The human
row k is kH; a paraphrase row k is 1H+(k-1)P, and its row 1 is the shared 1H baseline (as in the
thesis table). References added to h > 1 human ones (the lattice sentences of hH+mL) make a
series ``<kind>_<h>H`` whose row h is hH. A cell is the mean
over tuning replicates, with the sample standard deviation when there are several (MERT is
unstable; Clark et al. 2011). Given the :data:`~circle.core.schemas.CONDITION_SUMMARY` of the same
runs, a cell also carries the approximate randomisation test over all replicates against the
baseline: ``*`` significantly better, ``†`` significantly worse; ``≡`` flags a cell two of whose
replicates scored alike (:func:`circle.experiments.evaluate.close_replicates`). Under the table,
the test whose unit is the tuning run (Welch's t over the replicates' scores, Holm-corrected over
the page: :func:`replicate_tests`) and what the table's replicates can detect
(:func:`power_line`). :func:`markdown_table`, :func:`write_table_files` and
:func:`plot_references` render it as Markdown, CSV and a PNG plot of BLEU against k. Each figure
(:data:`THESIS_TABLES`) keeps its series and puts the thesis's published numbers beside ours
(:func:`figure_table`); the thesis prints different numbers for the same conditions in Fig. 4.3
and Fig. 5.10, so each figure has its own.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from circle.core.pages import csv_text, write_page, write_text_atomically
from circle.core.tables import atomic_path
from circle.experiments.evaluate import (
    BETTER,
    CLOSE_METRICS,
    CLOSE_REPLICATES,
    MATCHED_BLEU,
    TESTED_METRICS,
    WORSE,
    close_replicates,
    significance_mark,
    summary_test,
)
from circle.experiments.replicates import (
    ALPHA,
    POWER,
    detectable_difference,
    holm,
    pooled_sd,
)

HUMAN = "human"
SERIES_LABELS: dict[str, str] = {"human": "Human", "paraphrase": "Paraphrased",
                                 "targeted": "Targeted"}
METRIC_LABELS: dict[str, str] = {"bleu": "BLEU", "ter": "TER", "chrf": "chrF"}
DETOK_LABELS: dict[str, str] = {"detok_bleu": "BLEU", "detok_chrf": "chrF"}
"""The columns of a reference table's detokenised part (:func:`detokenised_markdown`)."""
SIGNATURE_LABELS: dict[str, str] = {"bleu": "BLEU", "ter": "TER", "chrf": "chrF",
                                    "detok_bleu": "BLEU (detokenised)",
                                    "detok_chrf": "chrF (detokenised)"}
"""The scores whose sacrebleu signature (EVALUATION ``<metric>_signature``) a page prints."""
UNTUNED = "untuned"
"""The evaluation rows of the untuned system (circle.experiments.conditions.UNTUNED): the
table's row 0."""
LENGTH_LABELS: dict[str, str] = {"length_ratio": "length", MATCHED_BLEU: "BLEU at common length"}
"""The columns of a reference table's length part (:func:`length_markdown`)."""
DECIMALS = 2
CLOSE = "≡"
CLOSE_NOTE = (f"{CLOSE} two of the cell's tuning replicates scored within {CLOSE_REPLICATES:g} "
              "BLEU and TER of each other (the same output, or as good as): its sd understates "
              "the optimiser's spread and its test is over-confident.")
"""The line under a table with a :data:`CLOSE` cell."""
THESIS = "thesis"
TABLE_TITLE = "Test-set scores per number of tuning references"
REPLICATE_DIFFERENCE, REPLICATE_P_VALUE = "mean_difference", "welch_p_value"
"""A reference table's columns of the test whose unit is the tuning run (per series and metric):
mean over replicates minus the baseline's, Welch's p-value."""
REPLICATE_METRICS: tuple[str, ...] = ("bleu", MATCHED_BLEU)
"""The scores a page tests at the replicate level, raw and at a common length: one family, over
which :func:`replicate_tests` corrects."""


@dataclass(frozen=True)
class ThesisTable:
    """A reference-count figure as the thesis prints it (NIST MT04+05 scored against four
    references, Chinese-English): per series, per metric, the values for k = 1..4 tuning
    references."""

    figure: str
    title: str
    series: Mapping[str, Mapping[str, tuple[float, ...]]]

    @property
    def own_title(self) -> str:
        """The title without the thesis's figure number, for a table of the user's own data
        (no thesis numbers)."""
        return re.sub(r" \(thesis Fig\. [0-9.]+\)$", "", self.title)


THESIS_TABLES: dict[str, ThesisTable] = {
    "4.3": ThesisTable(
        "4.3", "Test-set scores per number of human or paraphrased tuning references "
        "(thesis Fig. 4.3)",
        {"human": {"bleu": (37.65, 39.20, 40.01, 40.56), "ter": (56.39, 54.48, 53.50, 53.31)},
         "paraphrase": {"bleu": (37.65, 39.32, 39.79, 39.21),
                        "ter": (56.39, 54.39, 53.71, 53.46)}}),
    "5.10": ThesisTable(
        "5.10", "Test-set scores per number of human, untargeted or targeted tuning references "
        "(thesis Fig. 5.10)",
        {"human": {"bleu": (37.65, 39.20, 40.21, 40.69), "ter": (56.39, 54.48, 53.50, 53.31)},
         "paraphrase": {"bleu": (37.65, 39.32, 39.58, 39.21),
                        "ter": (56.39, 54.39, 53.87, 54.19)},
         "targeted": {"bleu": (37.65, 39.01, 39.93, 40.22),
                      "ter": (56.39, 54.88, 53.71, 53.43)}}),
}
"""The thesis's published reference-count tables, keyed by figure (they disagree on the same
conditions, so neither is "the" thesis number)."""


@dataclass(frozen=True)
class Significance:
    """How the marks of a table were decided: the test against ``baseline`` over all tuning
    replicates (approximate randomisation, ``shuffles`` shuffles), significant at p < ``level``.
    """

    baseline: str
    level: float
    shuffles: int

    @classmethod
    def of(cls, conditions: pd.DataFrame) -> Significance:
        """The test of a :data:`~circle.core.schemas.CONDITION_SUMMARY` (one setting throughout;
        a summary of the baseline alone, such as a pilot's 1H, is its own baseline)."""
        baselines = conditions["baseline_condition"].dropna().unique()
        if len(baselines) == 0 and conditions["condition"].nunique() == 1:
            baselines = conditions["condition"].unique()
        levels, shuffles = conditions["significance_level"].unique(), \
            conditions["shuffles"].unique()
        if len(baselines) != 1 or len(levels) != 1 or len(shuffles) != 1:
            raise ValueError(f"the condition summary mixes baselines {sorted(baselines)}, "
                             f"levels {sorted(levels)} or shuffle counts {sorted(shuffles)}")
        return cls(str(baselines[0]), float(levels[0]), int(shuffles[0]))

    def note(self, replicates: list[int]) -> str:
        """The line under the table: replicates per cell and the test."""
        low, high = min(replicates, default=0), max(replicates, default=0)
        count = f"{low}" if low == high else f"{low}–{high}"
        return (f"n = {count} tuning replicate{'s' if high != 1 else ''} per cell; "
                f"{BETTER} / {WORSE} significantly better / worse than {self.baseline}, "
                "approximate randomisation over replicates (Clark et al. 2011), "
                f"{self.shuffles:,} shuffles, p < {self.level:g}. The test treats the replicates "
                "as independent runs of the optimiser.")


def replicate_flag(close) -> str:
    """:data:`CLOSE` for a cell whose replicates scored alike, else nothing (also for a
    missing value)."""
    return CLOSE if close is not None and close is not pd.NA and bool(close) else ""


def number_text(value: float | None, decimals: int = DECIMALS) -> str:
    """A published or derived number in a table: rounded, or "–" when there is none."""
    return "–" if value is None or math.isnan(value) else f"{value:.{decimals}f}"


def series_label(series: str, labels: Mapping[str, str] | None = None) -> str:
    """A series' name in tables and legends (``labels`` override :data:`SERIES_LABELS`)."""
    return {**SERIES_LABELS, **(labels or {})}.get(series, series)


def _one_experiment(frame: pd.DataFrame, experiment: str | None) -> pd.DataFrame:
    experiments = sorted(frame["experiment"].unique())
    if experiment is not None:
        frame = frame[frame["experiment"] == experiment]
        if frame.empty:
            raise ValueError(f"no rows for experiment {experiment!r}; found {experiments}")
    elif len(experiments) > 1:
        raise ValueError(f"the table holds several experiments {experiments}; choose one")
    return frame


def reference_table(evaluation: pd.DataFrame, experiment: str | None = None,
                    conditions: pd.DataFrame | None = None) -> pd.DataFrame:
    """The Fig. 4.3 table: ``references``, ``label`` and, per series and metric (``bleu``,
    ``ter``, ``chrf`` and, where the evaluation has them, the :data:`LENGTH_LABELS` and
    :data:`DETOK_LABELS`), columns ``<series>_<metric>_mean``, ``_sd`` (ddof 1; NaN for one
    replicate) and ``_n`` (replicates), for BLEU, TER and chrF also ``_replicates`` (each
    replicate's score in replicate order, space-separated, two decimals), and per series
    ``<series>_close`` (whether two of the cell's replicates
    scored alike, :func:`~circle.experiments.evaluate.close_replicates`). Missing conditions are NaN
    (``_close`` False).

    With ``conditions`` (the :data:`~circle.core.schemas.CONDITION_SUMMARY` of the same runs), also
    ``_p_value`` (approximate randomisation over replicates against the baseline; NaN for the
    baseline and for conditions the summary lacks), ``_mark`` (``*``, ``†`` or empty, see
    :func:`significance_mark`) and the test whose unit is the run: ``_mean_difference`` (mean
    over replicates minus the baseline's) and ``_welch_p_value`` (Welch's t over the
    replicates' scores, uncorrected; :func:`replicate_tests` corrects a page's).

    Where the evaluation has the untuned system's row (condition :data:`UNTUNED`), the table
    starts with row 0, labelled ``untuned``, whose cells in every series are that system's
    scores (no test, no replicates)."""
    frame = _one_experiment(evaluation, experiment)
    if conditions is not None:
        conditions = _one_experiment(conditions, experiment).set_index("condition")
    bad = frame[frame["references_used"]
                != frame["human_references"] + frame["paraphrase_references"]]
    if not bad.empty:
        raise ValueError(f"references_used is not human + paraphrase references in conditions "
                         f"{sorted(bad['condition'].unique())}")
    untuned = frame[frame["reference_type"] == UNTUNED]
    human = frame[(frame["reference_type"] == HUMAN) & (frame["paraphrase_references"] == 0)]
    others = frame[~frame["reference_type"].isin([HUMAN, UNTUNED])]
    series = {HUMAN: pd.concat([untuned, human])}
    for (kind, count), rows in others.groupby(["reference_type", "human_references"]):
        name = kind if count == 1 else f"{kind}_{count}H"
        series[name] = pd.concat([untuned, human[human["references_used"] == count], rows])
    for name, rows in series.items():
        duplicated = rows.duplicated(["references_used", "replicate"])
        if duplicated.any():
            raise ValueError(f"series {name!r}: replicate numbers repeat in conditions "
                             f"{sorted(rows[duplicated]['condition'].unique())}")
    top = int(frame["references_used"].max()) if not frame.empty else 0
    first = 0 if not untuned.empty else 1
    table = pd.DataFrame({"references": np.arange(first, top + 1, dtype=np.int64)})
    table["label"] = [f"{k} (1H+{k - 1})" if k else UNTUNED for k in table["references"]]
    metrics = [m for m in (*METRIC_LABELS, *LENGTH_LABELS, *DETOK_LABELS)
               if m in frame.columns and frame[m].notna().any()]
    for name, rows in series.items():
        names = rows.groupby("references_used")["condition"].unique()
        close = {k: close_replicates(cell[list(CLOSE_METRICS)].to_numpy(dtype=float))
                 for k, cell in rows.groupby("references_used")}
        table[f"{name}_close"] = [close.get(k, False) for k in table["references"]]
        for metric in metrics:
            grouped = rows.groupby("references_used")[metric]
            table[f"{name}_{metric}_mean"] = table["references"].map(grouped.mean())
            table[f"{name}_{metric}_sd"] = table["references"].map(grouped.std(ddof=1))
            table[f"{name}_{metric}_n"] = table["references"].map(grouped.count()) \
                .fillna(0).astype(np.int64)
            if metric in METRIC_LABELS:
                per_replicate = {k: " ".join(f"{v:.{DECIMALS}f}"
                                             for v in cell.sort_values("replicate")[metric])
                                 for k, cell in rows.groupby("references_used")}
                table[f"{name}_{metric}_replicates"] = [per_replicate.get(k, "")
                                                        for k in table["references"]]
            if conditions is None or metric not in TESTED_METRICS:
                continue
            p_values, marks = [], []
            replicate_columns: dict[str, list[float]] = {REPLICATE_DIFFERENCE: [],
                                                         REPLICATE_P_VALUE: []}
            for k in table["references"]:
                found = [c for c in names.get(k, []) if c in conditions.index]
                if len(found) > 1:
                    raise ValueError(f"series {name!r}, {k} references: several conditions "
                                     f"{found}")
                found_row = conditions.loc[found[0]] if found else None
                p_value, mark = summary_test(found_row, metric)
                p_values.append(p_value)
                marks.append(mark)
                for column in (REPLICATE_DIFFERENCE, REPLICATE_P_VALUE):
                    replicate_columns[column].append(
                        np.nan if found_row is None or pd.isna(found_row[f"{metric}_{column}"])
                        else float(found_row[f"{metric}_{column}"]))
            table[f"{name}_{metric}_p_value"] = p_values
            table[f"{name}_{metric}_mark"] = marks
            for column, values in replicate_columns.items():
                table[f"{name}_{metric}_{column}"] = values
    return table


def figure_table(table: pd.DataFrame, thesis: ThesisTable,
                 extra_series: Sequence[str] = (), thesis_numbers: bool = True
                 ) -> pd.DataFrame:
    """A :func:`reference_table` cut to the series of a thesis figure and ``extra_series``
    (series it draws without published numbers), with the thesis's numbers in columns
    ``<series>_<metric>_thesis`` (NaN beyond its four rows, and for the untuned row 0). A series
    of the figure that the runs lack keeps its column, empty (n = 0), beside the thesis's.
    Without ``thesis_numbers`` (an experiment on the user's own data: config
    ``report.thesis_numbers``) the cut has no thesis columns, and a series the runs lack is
    left out."""
    wanted = {*thesis.series, *extra_series}
    kept = ["references", "label"]
    for name in series_names(table):  # in the table's order
        if name in wanted:
            kept += [c for c in table.columns
                     if any(c.startswith(f"{name}_{metric}_")
                            for metric in (*METRIC_LABELS, *LENGTH_LABELS, *DETOK_LABELS))
                     or c == f"{name}_close"]
    cut = table[kept].copy()
    if not thesis_numbers:
        return cut
    for name, metrics in thesis.series.items():
        if f"{name}_bleu_mean" not in cut.columns:
            for metric in [m for m in (*METRIC_LABELS, *LENGTH_LABELS)
                           if m in METRIC_LABELS or any(c.endswith(f"_{m}_mean") for c in kept)]:
                cut[f"{name}_{metric}_mean"] = np.nan
                cut[f"{name}_{metric}_sd"] = np.nan
                cut[f"{name}_{metric}_n"] = np.int64(0)
            cut[f"{name}_close"] = False
        for metric, values in metrics.items():
            published = dict(enumerate(values, start=1))
            cut[f"{name}_{metric}_{THESIS}"] = cut["references"].map(published).astype(float)
    return cut


def series_names(table: pd.DataFrame) -> list[str]:
    """The series of a :func:`reference_table`, in column order."""
    return [c[:-len("_bleu_mean")] for c in table.columns
            if c.endswith("_bleu_mean") and not c.endswith(f"_{MATCHED_BLEU}_mean")
            and not c.endswith("_detok_bleu_mean")]


def cell_text(mean: float, sd: float, n: int, mark: str = "") -> str:
    """A table cell: mean ± sd over ``n`` replicates (the mean alone for one) and its mark."""
    if n == 0 or math.isnan(mean):
        return "–"
    if n > 1 and not math.isnan(sd):
        return f"{mean:.{DECIMALS}f} ± {sd:.{DECIMALS}f}{mark}"
    return f"{mean:.{DECIMALS}f}{mark}"


def markdown_table(table: pd.DataFrame, labels: Mapping[str, str] | None = None,
                   significance: Significance | None = None,
                   signatures: Mapping[str, str] | None = None) -> str:
    """The table as GitHub Markdown, values rounded to two decimals as in the thesis; with
    ``significance``, each cell's mark (from its ``_mark`` column) and a line on the test; with
    ``signatures`` (:func:`score_signatures`), sacrebleu's signature of each score under it."""
    names = series_names(table)
    columns = [(s, m, published) for s in names for m in METRIC_LABELS
               for published in (False, True)
               if f"{s}_{m}_mean" in table.columns
               and (not published or f"{s}_{m}_{THESIS}" in table.columns)]
    header = ["# tuning refs"] + [
        f"{series_label(s, labels)} {METRIC_LABELS[m]}{' (thesis)' if published else ''}"
        for s, m, published in columns]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join([":---"] + ["---:"] * (len(header) - 1)) + "|"]
    for row in table.to_dict("records"):
        cells = [row["label"]]
        for s, m, published in columns:
            if published:
                cells.append(number_text(row[f"{s}_{m}_{THESIS}"]))
            else:
                mark = row.get(f"{s}_{m}_mark", "") if significance is not None else ""
                cells.append(cell_text(row[f"{s}_{m}_mean"], row[f"{s}_{m}_sd"],
                                       row[f"{s}_{m}_n"],
                                       mark + replicate_flag(row.get(f"{s}_close"))))
        lines.append("| " + " | ".join(cells) + " |")
    shown = [METRIC_LABELS[m] for m in METRIC_LABELS if any(c[1] == m for c in columns)]
    named = ", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else "".join(shown)
    lines += ["", f"{named} (TER: lower is better) in percent on the test set, sacrebleu on the "
              "pipeline's tokenised text; mean over tuning replicates ± sample standard "
              "deviation where a cell has more than one."]
    if (table["references"] == 0).any():
        lines += ["", "untuned: the system with the config's untuned weights, before any "
                  "tuning (one decode, no test)."]
    if any(published for _, _, published in columns):
        lines += ["", "(thesis): the thesis's published numbers for its Chinese-English NIST "
                  "experiment (tuned on MT03, tested on MT04+05 against four references): a "
                  "shape to compare with, not a number to match."]
    if significance is not None:
        counts = sorted({int(n) for s in names for m in CLOSE_METRICS
                         for n in table.loc[table["references"] > 0, f"{s}_{m}_n"] if n > 0})
        lines += ["", significance.note(counts)
                  + (" chrF is not tested." if any(m == "chrf" for _, m, _ in columns) else "")]
    if any(table[f"{s}_close"].any() for s in names if f"{s}_close" in table):
        lines += ["", CLOSE_NOTE]
    lines += replicates_markdown(table, labels)
    if all(f"{s}_{MATCHED_BLEU}_mean" in table.columns for s in names):
        lines += ["", *length_markdown(table, labels, significance is not None)]
    if significance is not None:
        lines += replicate_tests_markdown(table, significance, labels)
    if any(f"{s}_detok_bleu_mean" in table.columns for s in names):
        lines += ["", *detokenised_markdown(table, labels)]
    if signatures:
        lines += ["", "sacrebleu signatures:", "",
                  *(f"- {SIGNATURE_LABELS.get(m, m)}: `{sig}`" for m, sig in signatures.items())]
    return "\n".join(lines) + "\n"


def replicates_markdown(table: pd.DataFrame, labels: Mapping[str, str] | None = None,
                        metric: str = "bleu") -> list[str]:
    """Under a reference table with several replicates per cell: one line per series and row
    with each replicate's ``metric`` (the CSV's ``_replicates`` columns)."""
    names = [s for s in series_names(table) if f"{s}_{metric}_replicates" in table.columns]
    rows = table[table["references"] > 0]
    if not names or not any((rows[f"{s}_{metric}_n"] > 1).any() for s in names):
        return []
    lines = ["", f"Test {METRIC_LABELS[metric]} per tuning replicate (replicate 0, 1, …):", ""]
    for row in rows.to_dict("records"):
        parts = [f"{series_label(s, labels)} {row[f'{s}_{metric}_replicates']}" for s in names
                 if row.get(f"{s}_{metric}_replicates")]
        if parts:
            lines.append(f"- {row['label']}: " + "; ".join(parts))
    return lines


def replicate_tests(table: pd.DataFrame, level: float) -> pd.DataFrame:
    """Every replicate-level test of a reference table (its ``_welch_p_value`` columns of
    :data:`REPLICATE_METRICS`), one row per series, table row and metric in the table's order:
    ``series``, ``references``, ``label``, ``metric``, ``difference`` (mean over replicates
    minus the baseline's), ``p_value`` (Welch), ``holm_p_value`` (Holm 1979 over all of them,
    the page's family) and ``mark`` (``*`` / ``†`` where the adjusted p-value is below
    ``level``)."""
    rows = []
    for name in series_names(table):
        for metric in REPLICATE_METRICS:
            column = f"{name}_{metric}_{REPLICATE_P_VALUE}"
            if column not in table.columns:
                continue
            for record in table[table[column].notna()].to_dict("records"):
                rows.append({"series": name, "references": int(record["references"]),
                             "label": record["label"], "metric": metric,
                             "difference": float(record[f"{name}_{metric}_"
                                                        f"{REPLICATE_DIFFERENCE}"]),
                             "p_value": float(record[column])})
    tests = pd.DataFrame(rows, columns=["series", "references", "label", "metric",
                                        "difference", "p_value"])
    tests["holm_p_value"] = holm(tests["p_value"].to_numpy(dtype=float))
    tests["mark"] = [significance_mark(metric, adjusted < level, difference)
                     for metric, adjusted, difference
                     in zip(tests["metric"], tests["holm_p_value"], tests["difference"],
                            strict=True)]
    return tests


def p_text(p_value: float) -> str:
    """A p-value in a table: two significant digits, "–" for none."""
    return "–" if math.isnan(p_value) else f"{p_value:.2g}"


def replicate_tests_markdown(table: pd.DataFrame, significance: Significance,
                             labels: Mapping[str, str] | None = None) -> list[str]:
    """The replicate-level part of a reference table with marks: the Holm-corrected Welch tests
    of :func:`replicate_tests`, one line per series and row, how many tests the page makes,
    and :func:`power_line`; nothing where the table has no replicate-level test."""
    tests = replicate_tests(table, significance.level)
    if tests.empty:
        return []
    marked = sum(int(table[f"{s}_{m}_p_value"].notna().sum()) for s in series_names(table)
                 for m in TESTED_METRICS if f"{s}_{m}_p_value" in table.columns)
    header = ["# tuning refs", "series", "BLEU Δ", "p", "Holm p", "at common length Δ", "p",
              "Holm p"]
    lines = ["| " + " | ".join(header) + " |", "|:---|:---|" + "---:|" * (len(header) - 2)]
    for (name, _), cell in tests.groupby(["series", "references"], sort=False):
        cells = [str(cell["label"].iloc[0]), series_label(name, labels)]
        for metric in REPLICATE_METRICS:
            found = cell[cell["metric"] == metric]
            if found.empty:
                cells += ["–"] * 3
                continue
            test = found.iloc[0]
            cells += [f"{test['difference']:+.2f}", p_text(test["p_value"]),
                      p_text(test["holm_p_value"]) + test["mark"]]
        lines.append("| " + " | ".join(cells) + " |")
    power = power_line(table)
    return ["", f"Replicate-level tests: Welch's t-test over the replicates' test scores, each "
            "tuning run one observation (Clark et al. 2011), two-sided, against the baseline of "
            f"the marks above; Δ = mean over replicates minus the baseline's. The page makes "
            f"{len(tests)} such tests (BLEU and BLEU at a common length), Holm-corrected over "
            f"all {len(tests)} (Holm 1979): {BETTER} / {WORSE} significantly better / worse at "
            f"adjusted p < {significance.level:g}. The {marked} approximate randomisation "
            "tests of the marks above are not corrected for their number.", "", *lines,
            *(["", power] if power else [])]


def _own_rows(table: pd.DataFrame, name: str) -> pd.DataFrame:
    """The rows of a series that are its own conditions: every tuned row of the human series;
    of another series the rows beyond its human references (its first rows are kH, the human
    series' cells)."""
    match = re.search(r"_(\d+)H$", name)
    humans = 0 if name == HUMAN else int(match.group(1)) if match else 1
    return table[table["references"] > humans]


def power_line(table: pd.DataFrame, alpha: float = ALPHA, target: float = POWER) -> str:
    """The line on what a reference table can detect: the replicate scores' pooled standard
    deviation over its own cells (:func:`_own_rows`) with two or more replicates, raw and at
    a common length; the difference the two-sided t-test at ``alpha`` detects with ``target``
    power between two conditions of the fewest replicates such a cell has
    (:func:`circle.experiments.replicates.detectable_difference`); and the human control's
    gain, 2H − 1H (means over replicates), where the table has both. Empty where no cell has
    two replicates or none has any spread. The human series is every table's, so its columns say
    which scores the table has."""
    what = {"bleu": "BLEU", MATCHED_BLEU: "at a common length"}
    metrics = [m for m in REPLICATE_METRICS if f"{HUMAN}_{m}_sd" in table.columns]
    spreads, counts = {}, []
    for metric in metrics:
        cells = pd.concat([pd.DataFrame({"sd": own[f"{name}_{metric}_sd"],
                                         "n": own[f"{name}_{metric}_n"]})
                           for name in series_names(table)
                           if f"{name}_{metric}_sd" in table.columns
                           for own in [_own_rows(table, name)]])
        spreads[metric] = pooled_sd(cells["sd"], cells["n"])
        counts += cells.loc[(cells["n"] >= 2) & cells["sd"].notna(), "n"].astype(int).tolist()
    detectable = [f"{detectable_difference(sd, min(counts), alpha=alpha, target=target):.2f} "
                  f"{what[metric]} (replicate sd {sd:.2f})"
                  for metric, sd in spreads.items() if sd > 0]  # NaN > 0 is False
    if not detectable:
        return ""
    line = (f"Power: with {min(counts)} replicates per condition, the two-sided t-test at "
            f"α = {alpha:g} detects a difference of {' and '.join(detectable)} with power "
            f"{target:g} (`circle power`; the sd pooled over the table's tuned conditions).")
    rows = table.set_index("references")
    gains = [rows.loc[2, f"{HUMAN}_{metric}_mean"] - rows.loc[1, f"{HUMAN}_{metric}_mean"]
             if {1, 2} <= set(rows.index) else math.nan for metric in metrics]
    if not any(math.isnan(gain) for gain in gains):
        line += (" The human control's gain, 2H − 1H, is "
                 + " and ".join(f"{gain:+.2f} {what[metric]}"
                                for metric, gain in zip(metrics, gains, strict=True))
                 + ".")
    return line


def detokenised_markdown(table: pd.DataFrame, labels: Mapping[str, str] | None = None
                         ) -> list[str]:
    """The detokenised part of a reference table: per series, BLEU and chrF of the detokenised
    output against the detokenised references (sacrebleu's 13a tokeniser), as papers report."""
    names = series_names(table)
    metrics = [m for m in DETOK_LABELS if any(f"{s}_{m}_mean" in table.columns for s in names)]
    header = ["# tuning refs"] + [f"{series_label(s, labels)} {DETOK_LABELS[m]}" for s in names
                                  for m in metrics]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join([":---"] + ["---:"] * (len(header) - 1)) + "|"]
    for row in table.to_dict("records"):
        cells = [row["label"]]
        for s in names:
            for m in metrics:
                cells.append(cell_text(row.get(f"{s}_{m}_mean", np.nan),
                                       row.get(f"{s}_{m}_sd", np.nan),
                                       row.get(f"{s}_{m}_n", 0)))
        lines.append("| " + " | ".join(cells) + " |")
    return ["Detokenised: the same outputs and references detokenised and scored with "
            "sacrebleu's default 13a tokeniser, as MT papers report (lowercased where the "
            "pipeline lowercases: see the signatures); the table above stays on the tokenised "
            "text the system was tuned on.", "", *lines]


def score_signatures(evaluation: pd.DataFrame) -> dict[str, str]:
    """The sacrebleu signature of each score of an :data:`~circle.core.schemas.EVALUATION` frame
    (:data:`SIGNATURE_LABELS`, those it has), several joined by " / " if the rows differ."""
    found = {}
    for metric in SIGNATURE_LABELS:
        column = f"{metric}_signature"
        if column in evaluation.columns:
            values = list(dict.fromkeys(evaluation[column].dropna()))
            if values:
                found[metric] = " / ".join(values)
    return found


def length_markdown(table: pd.DataFrame, labels: Mapping[str, str] | None = None,
                    marked: bool = False) -> list[str]:
    """The length part of a reference table: per series, the output's length over the
    effective reference length and BLEU at a common length (its marks with ``marked``)."""
    names = series_names(table)
    header = ["# tuning refs"] + [f"{series_label(s, labels)} {label}" for s in names
                                  for label in LENGTH_LABELS.values()]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join([":---"] + ["---:"] * (len(header) - 1)) + "|"]
    for row in table.to_dict("records"):
        cells = [row["label"]]
        for s in names:
            ratio = row[f"{s}_length_ratio_mean"]
            cells.append("–" if math.isnan(ratio) else f"{ratio:.3f}")
            cells.append(cell_text(row[f"{s}_{MATCHED_BLEU}_mean"], row[f"{s}_{MATCHED_BLEU}_sd"],
                                   row[f"{s}_{MATCHED_BLEU}_n"],
                                   row.get(f"{s}_{MATCHED_BLEU}_mark", "") if marked else ""))
        lines.append("| " + " | ".join(cells) + " |")
    return ["Length: the output's length over the effective reference length (sacrebleu's; "
            "below 1 the brevity penalty applies), mean over replicates. BLEU at common length: "
            "each run's test n-best re-ranked with its word-penalty weight shifted so that its "
            "output has the test references' mean length (circle.experiments.length_matching): a "
            "diagnostic that separates length from quality, not the thesis's metric"
            + (", marked against the condition's baseline at the same length (the run its raw "
               "score is marked against)." if marked else "."), "", *lines]


def write_table_files(table: pd.DataFrame, markdown_path: str | os.PathLike,
                      html_path: str | os.PathLike, csv_path: str | os.PathLike,
                      labels: Mapping[str, str] | None = None,
                      significance: Significance | None = None,
                      title: str = TABLE_TITLE,
                      signatures: Mapping[str, str] | None = None, notes: str = "") -> None:
    """Write the table as Markdown (``notes`` under it), as HTML and as CSV
    (:func:`csv_text`)."""
    write_page(f"# {title}\n\n" + markdown_table(table, labels, significance, signatures)
               + notes, markdown_path, html_path, title)
    write_text_atomically(csv_text(table), csv_path)


def plot_references(table: pd.DataFrame, path: str | os.PathLike, metric: str = "bleu",
                    title: str | None = None, labels: Mapping[str, str] | None = None
                    ) -> None:
    """PNG plot of ``metric`` against the number of tuning references, one line per series,
    error bars = standard deviation over replicates (thesis Fig. 4.3); the thesis's numbers
    dashed where the table has them; the untuned system (row 0) a dotted horizontal line."""
    from matplotlib.figure import Figure  # Agg canvas; no pyplot state

    figure = Figure(figsize=(7.5, 4.0), dpi=100)
    axes = figure.add_subplot()
    markers = "osd^v<>"
    untuned = table[table["references"] == 0]
    table = table[table["references"] > 0]
    references = table["references"].to_numpy()
    names = series_names(table)
    if not untuned.empty and names:
        level = untuned[f"{names[0]}_{metric}_mean"].to_numpy(dtype=float)
        if len(level) and not np.isnan(level[0]):
            axes.axhline(level[0], color="grey", linestyle=":", linewidth=1.2, label="untuned")
    for number, name in enumerate(names):
        mean = table[f"{name}_{metric}_mean"].to_numpy(dtype=float)
        sd = np.nan_to_num(table[f"{name}_{metric}_sd"].to_numpy(dtype=float))
        keep = ~np.isnan(mean)
        colour = f"C{number % 10}"
        axes.errorbar(references[keep], mean[keep], yerr=sd[keep], color=colour,
                      marker=markers[number % len(markers)], capsize=3,
                      label=series_label(name, labels))
        if f"{name}_{metric}_{THESIS}" in table.columns:
            published = table[f"{name}_{metric}_{THESIS}"].to_numpy(dtype=float)
            shown = ~np.isnan(published)
            axes.plot(references[shown], published[shown], color=colour, linestyle="--",
                      linewidth=1, marker=markers[number % len(markers)], fillstyle="none",
                      label=f"{series_label(name, labels)} (thesis)")
    axes.set_xticks(table["references"].to_numpy())
    axes.set_xlabel("number of tuning references")
    named = {**METRIC_LABELS, **LENGTH_LABELS}.get(metric, metric)
    axes.set_ylabel(f"test {named} (%)")
    axes.set_title(title or f"{named} vs. tuning references")
    axes.grid(alpha=0.3)
    axes.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small")  # off the data
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", metadata={"Software": None})
