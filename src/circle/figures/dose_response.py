"""The dose-response page: each condition's extra reference of known quality, its adequacy
against the held-out human references and its test gain over 1H with the test
(:func:`circle.experiments.dose_response.dose_response` computes them), the reading of how the
gain follows adequacy (Pearson's r, raw and at a common length) and the figure. Beyond the thesis,
which never varies the quality of an added reference (§4.3.2, §6.3, §6.6).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
import pandas as pd

from circle.core.correlation import pearson
from circle.core.pages import csv_text, split_table, write_page, write_text_atomically
from circle.experiments.evaluate import summary_test

NOT_A_DOSE = ("copy", "mt")
"""Extra references that are controls, not doses: R again leaves 1H's objective as it is (the
noise of MERT's draw), and the untuned MT 1-best makes the untuned start a reference with tune
BLEU 100, so tuning keeps it (the untuned system). The page shows them and leaves them out of
the gain's correlation with adequacy."""

PARAPHRASE = "P1"
"""The paraphrase among the doses: the one extra reference whose quality the experiment does
not set, and whose errors the system can produce; the reading gives the correlation with and
without it."""

PAGE_TITLE = "Tuning on one extra reference of known quality (dose-response)"

LABELS = {"H2": "second human reference (2H)", "P1": "1-best untargeted paraphrase (1H+1P)",
          "kjv": "KJV verse", "mt": "untuned MT 1-best", "copy": "R again (1H, other seeds)",
          "shuffle": "H2 shuffled"}


def extra_label(extra: str) -> str:
    """How the page names an extra reference."""
    if extra.startswith("noise"):
        return f"H2, {extra[len('noise'):]} % of words replaced"
    return LABELS.get(extra, extra)


def _number(value: float, decimals: int = 1) -> str:
    return "–" if value is None or pd.isna(value) else f"{value:.{decimals}f}"


def _with_sd(mean: float, sd: float, decimals: int = 2, signed: bool = False) -> str:
    text = f"{mean:+.{decimals}f}" if signed else f"{mean:.{decimals}f}"
    return text if pd.isna(sd) else f"{text} ± {sd:.{decimals}f}"


def adequacy_correlations(doses: pd.DataFrame) -> str:
    """Pearson's r of the doses' gain over 1H with their adequacy BLEU, raw and at a common
    length, each with n and its two-sided p (:func:`circle.core.correlation.pearson`); empty
    with fewer than three doses."""
    if len(doses) < 3:
        return ""
    raw, matched = (pearson(doses["adequacy_bleu"], doses[column])
                    for column in ("gain_mean", "matched_gain_mean"))
    return f"raw {raw}, at a common length {matched}"


def dose_reading(table: pd.DataFrame, single: Mapping[str, float] | None = None) -> str:
    """One line: which extra references help or hurt significantly, and how the gain follows
    adequacy, raw and at a common length, over the references that are doses (not
    :data:`NOT_A_DOSE`) and over those doses but the paraphrase (:data:`PARAPHRASE`)."""
    def named(metric: str, sign: int) -> str:
        chosen = (table[f"{metric}_significant"].astype("boolean").fillna(False).astype(bool)
                  & (sign * table[f"{metric}_difference"] > 0))
        return ", ".join(table.loc[chosen, "extra"]) or "none"

    parts = [f"significantly better than 1H: {named('bleu', 1)}",
             f"significantly worse: {named('bleu', -1)}",
             f"at a common length better: {named('matched_bleu', 1)}, worse: "
             f"{named('matched_bleu', -1)}"]
    scored = table[~table["extra"].isin(NOT_A_DOSE)].dropna(subset=["adequacy_bleu"])
    every = adequacy_correlations(scored)
    if every:
        parts.append("Pearson's r of the gain over 1H with the extra reference's adequacy "
                     f"BLEU (p: t-test on r), {every}")
        known = adequacy_correlations(scored[scored["extra"] != PARAPHRASE])
        if known and (scored["extra"] == PARAPHRASE).any():
            parts.append(f"without the paraphrase {PARAPHRASE}: {known}")
    elif scored.empty:
        parts.append("no adequacy: the tune set has no third human reference to hold out")
    if single and not pd.isna(single.get("adequacy_bleu", np.nan)):
        parts.append(f"R itself scores {single['adequacy_bleu']:.1f} BLEU / "
                     f"{single['adequacy_chrf']:.1f} chrF against the same references")
    return "; ".join(parts) + "."


DOSE_PARTS: tuple[tuple[str, ...], ...] = (
    ("condition", "adequacy BLEU", "test BLEU", "gain over 1H", "p", "gain at common length",
     "p (common length)"),
    ("adequacy chrF", "length / R", "LM (decoder)", "output length"))
"""The page's two tables, each led by the extra reference: the reading's numbers (the condition
it names, adequacy against the gain and its test, raw and at a common length), then the
rest."""


def dose_markdown(table: pd.DataFrame, single: Mapping[str, float] | None = None) -> str:
    """The report page of a :func:`dose_table`."""
    header = ["extra reference", "condition", "adequacy BLEU", "adequacy chrF", "length / R",
              "LM (decoder)", "test BLEU", "gain over 1H", "p", "output length",
              "gain at common length", "p (common length)"]
    rows = []
    for row in table.to_dict("records"):
        p_value, mark = summary_test(pd.Series(row), "bleu")
        matched_p, matched_mark = summary_test(pd.Series(row), "matched_bleu")
        rows.append([
            extra_label(row["extra"]), row["condition"], _number(row["adequacy_bleu"]),
            _number(row["adequacy_chrf"]), _number(row["extra_length_ratio"], 3),
            _number(row["lm_decoding"], 2),
            _with_sd(row["bleu_mean"], row["bleu_sd"]) + mark,
            _with_sd(row["gain_mean"], row["gain_sd"], signed=True),
            _number(p_value, 3), _number(row["output_length_ratio"], 3),
            _with_sd(row["matched_gain_mean"], row["matched_gain_sd"], signed=True)
            + matched_mark, _number(matched_p, 3)])
    lines = split_table(header, rows, DOSE_PARTS, left={"extra reference", "condition"})
    replicates = sorted(set(table["replicates"]))
    caption = (
        "Each condition adds ONE fixed extra reference per tune segment to the single reference "
        "R of 1H. Adequacy: the extra reference scored against the human references held out "
        "from both R and H2 (the same for every row, none of them the reference a degraded one "
        "was made from; sacrebleu BLEU and chrF in percent, tokenised text). Test BLEU: mean ± "
        f"sd over {'/'.join(map(str, replicates))} tuning replicates; gain: mean ± sd over "
        "replicates of the run's test BLEU minus 1H's same replicate; p and the marks (* better, † "
        "worse than 1H): approximate randomisation over all replicates (Clark et al. 2011), as the "
        "Fig. 4.3 table. Output length: the test output's length over the effective reference "
        "length, mean over replicates. Gain at common length: the same gain in BLEU of each run's "
        "test n-best re-ranked to the references' mean length (circle.experiments.length_matching; "
        "a diagnostic, not the thesis's metric), with its own test. H2 noise<p>: p % of its words "
        "replaced by random tune-set words; shuffled: its words in a random order (seeded). "
        "Untuned MT 1-best: the untuned start's own output is then a reference, its tune BLEU 100, "
        "so tuning keeps the start (on the default experiment all three runs returned the untuned "
        "weights): the row is the untuned system, a control, not a dose (left out of the "
        "correlation). Beyond the thesis, which never varies the quality of an added reference "
        "(§4.3.2, §6.3, §6.6). The first table has the reading's numbers; the one under it "
        "the same references' chrF, length, fluency and output length.")
    if (table["extra"] == "copy").any():
        caption += (" R again (1H+1X_copy): R added to itself leaves every tuning statistic as "
                    "1H's, so the row is 1H tuned from other seeds, the spread of MERT's draw, "
                    "not a dose (left out of the correlation).")
    return "\n".join([f"# {PAGE_TITLE}", "", *lines, "", caption, "",
                      f"Reading: {dose_reading(table, single)}", ""])


def plot_dose(table: pd.DataFrame, path: str | os.PathLike) -> None:
    """PNG: test BLEU gain over 1H against the extra reference's adequacy BLEU and chrF (two
    panels), raw (circles) and at a common length (squares), error bars = sd over replicates,
    filled = significantly different from 1H."""
    from matplotlib.figure import Figure  # Agg canvas; no pyplot state

    figure = Figure(figsize=(9.0, 4.0), dpi=100)
    for number, (column, name) in enumerate((("adequacy_bleu", "BLEU"),
                                             ("adequacy_chrf", "chrF"))):
        axes = figure.add_subplot(1, 2, number + 1)
        axes.axhline(0.0, color="grey", linewidth=0.8)
        scored = table.dropna(subset=[column])
        for row in scored.to_dict("records"):
            for prefix, metric, marker, colour, label in (
                    ("", "bleu", "o", "C0", "raw"),
                    ("matched_", "matched_bleu", "s", "C1", "at a common length")):
                flag = row[f"{metric}_significant"]
                significant = False if pd.isna(flag) else bool(flag)
                sd = row[f"{prefix}gain_sd"]
                axes.errorbar(row[column], row[f"{prefix}gain_mean"],
                              yerr=0.0 if pd.isna(sd) else sd, fmt=marker, color=colour,
                              markerfacecolor=colour if significant else "white", capsize=3,
                              label=label)
            axes.annotate(row["extra"], (row[column], row["gain_mean"]),
                          textcoords="offset points", xytext=(4, 4), fontsize=8)
        if scored.empty:
            axes.text(0.5, 0.5, "no third reference: adequacy not measured",
                      transform=axes.transAxes, ha="center", fontsize=8)
        if not scored.empty and number == 0:
            handles, labels = axes.get_legend_handles_labels()
            axes.legend(handles[:2], labels[:2], fontsize=8)
        axes.set_xlabel(f"extra reference's adequacy ({name} vs held-out references)")
        axes.set_ylabel("test BLEU gain over 1H")
    figure.suptitle("Dose-response: one extra tuning reference of known quality",
                    fontsize=10)
    figure.tight_layout()
    figure.savefig(path)


def write_dose_page(table: pd.DataFrame, single: Mapping[str, float],
                    out_markdown: str | os.PathLike, out_html: str | os.PathLike,
                    out_csv: str | os.PathLike, out_plot: str | os.PathLike) -> None:
    """The dose-response page (Markdown, HTML), its table as CSV and its figure, from a
    :func:`~circle.experiments.dose_response.dose_table` and R's own adequacy (``single``)."""
    write_page(dose_markdown(table, single), out_markdown, out_html, PAGE_TITLE)
    write_text_atomically(csv_text(table), out_csv)
    plot_dose(table, out_plot)
