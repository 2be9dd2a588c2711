"""Thesis Fig. 6.2 (§6.3): focus and reachability of a human, an untargeted and a targeted second
tuning reference, from the 2H, 1H+1P and 1H+1T runs of the config (target ``paper_tables``; the
runs: :func:`circle.experiments.paper_runs.focus_runs`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from circle.core.pages import csv_text, write_page, write_text_atomically
from circle.core.schemas import EVALSET
from circle.core.tables import read_table
from circle.corpus.references import ordered_references, single_references
from circle.decoder.nbest import NBEST, best_of
from circle.experiments.conditions import Condition
from circle.experiments.evaluate import corpus_bleu
from circle.figures.paper import figure_page, plot_bars
from circle.figures.reference_table import cell_text, number_text
from circle.paraphrase.targeted import TargetedSetup

THESIS_FOCUS: dict[str, tuple[float, float, float, float, float]] = {
    "human": (20.4, 22.3, 2.1, 2.3, 4.4),
    "paraphrase": (19.6, 22.5, 2.9, 2.0, 4.9),
    "targeted": (21.7, 24.0, 1.8, 2.1, 3.9),
}
"""Thesis Fig. 6.2 per type of second reference: BLEU against it before tuning (A, focus),
after tuning (B), the gain C (reachability), the gain on the first reference, the total gain.
(The thesis's C for the human row, 2.1, is not its B − A, 1.9; printed as published.)"""

FOCUS_COLUMNS = ("pre_tune_second", "post_tune_second", "gain_second", "gain_first", "gain_total")


def focus_rows(first: Sequence[str], second: Sequence[str], before: Sequence[str],
               after: Sequence[str], lowercased: bool = False) -> dict[str, float]:
    """Fig. 6.2's numbers for one tuning run (§6.3): BLEU of the output ``before`` tuning (the
    run's start weights) and ``after`` it against the ``second`` reference alone, their
    difference (reachability), the gain against the ``first`` reference alone, and the total."""
    def bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
        return corpus_bleu(list(hypotheses), [[r] for r in references], lowercased).value

    pre, post = bleu(before, second), bleu(after, second)
    gain_first = bleu(after, first) - bleu(before, first)
    return dict(zip(FOCUS_COLUMNS, (pre, post, post - pre, gain_first, post - pre + gain_first),
                    strict=True))


def focus_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean and sample sd over replicates of :func:`focus_rows` per second-reference type
    (``rows``: one per run, with ``reference_type`` and ``replicate``), the thesis's beside."""
    table = []
    for kind, runs in rows.groupby("reference_type", sort=False):
        row = {"reference_type": kind, "replicates": len(runs)}
        for number, column in enumerate(FOCUS_COLUMNS):
            row[f"{column}_mean"] = float(runs[column].mean())
            row[f"{column}_sd"] = float(runs[column].std(ddof=1)) if len(runs) > 1 else np.nan
            row[f"{column}_thesis"] = THESIS_FOCUS[kind][number]
        table.append(row)
    return pd.DataFrame(table)


def focus_reading(table: pd.DataFrame) -> str:
    """Fig. 6.2's line: which second reference has the most focus (A) and reachability (C),
    ours and the thesis's."""
    indexed = table.set_index("reference_type")
    labels = {"human": "human", "paraphrase": "untargeted", "targeted": "targeted"}

    def top(column: str) -> str:
        return labels[str(indexed[column].idxmax())]

    thesis = {column: max(THESIS_FOCUS, key=lambda k: THESIS_FOCUS[k][number])
              for number, column in enumerate(FOCUS_COLUMNS)}
    return (f"focus (BLEU of the start output against the second reference) is highest for the "
            f"{top('pre_tune_second_mean')} reference, reachability (its gain after tuning) for "
            f"the {top('gain_second_mean')} one (thesis: {labels[thesis['pre_tune_second']]} "
            f"and {labels[thesis['gain_second']]}); gain on the first reference "
            + ", ".join(f"{labels[k]} {v:+.2f}" for k, v in
                        indexed["gain_first_mean"].items()) + ".")


def focus_markdown(table: pd.DataFrame, replicates: Sequence[int]) -> str:
    labels = {"human": "Human", "paraphrase": "Untargeted", "targeted": "Targeted"}
    header = ["second reference", "pre-tune (A)", "post-tune (B)", "gain (C)",
              "gain on first", "total gain", "A (thesis)", "B (thesis)", "C (thesis)",
              "first (thesis)", "total (thesis)"]
    rows = [[labels[row["reference_type"]],
             *(cell_text(row[f"{c}_mean"], row[f"{c}_sd"], int(row["replicates"]))
               for c in FOCUS_COLUMNS),
             *(number_text(row[f"{c}_thesis"], 1) for c in FOCUS_COLUMNS)]
            for row in table.to_dict("records")]
    return figure_page(
        "Focus and reachability of the second tuning reference (thesis Fig. 6.2)", header, rows,
        "Tune-set BLEU in percent against one reference at a time, mean over tuning replicates "
        f"{', '.join(map(str, replicates))} ± sample standard deviation (no significance test). "
        "The runs are 2H (second reference: the second human reference of the seeded order), "
        "1H+1P (the 1-best untargeted paraphrase of the first) and 1H+1T (targeted). Before "
        "tuning = the output of the run's start weights (untuned for 2H and 1H+1P; the 1H-tuned "
        "weights of the same replicate for 1H+1T, which starts from them, thesis §5.3); the "
        "targeted second reference is the 1-best reranked targeted paraphrase of the first "
        "towards that output, by the runs' targeted paraphraser. A: focus; C = B − A: "
        "reachability; total = C + the gain on the first reference. The thesis's numbers are "
        "for its Chinese-English NIST runs (MT03).", None, focus_reading(table))


def write_focus_figure(tune_path: str | os.PathLike,
                       outputs: Mapping[tuple[str, int], tuple[str | os.PathLike,
                                                               str | os.PathLike]],
                       untargeted_path: str | os.PathLike, targeted: TargetedSetup,
                       workers: int, markdown_path: str | os.PathLike,
                       html_path: str | os.PathLike, csv_path: str | os.PathLike,
                       png_path: str | os.PathLike, lowercased: bool = False) -> pd.DataFrame:
    """Fig. 6.2 from the tune set, each run's (start, tuned) tune-set n-best tables
    (``outputs[(condition, replicate)]`` for 2H, 1H+1P and 1H+1T), the 1H+1P runs' untargeted
    paraphrases and the 1H+kT runs' ``targeted`` set-up."""
    tune = read_table(tune_path, EVALSET)
    first = single_references(tune)
    human = [refs[1] for refs in ordered_references(tune, 2)]
    segments = tune["segment_id"].tolist()
    seconds = {"human": human, "paraphrase": one_best(untargeted_path, segments)}
    texts = {run: (one_best(start_path, segments), one_best(tuned_path, segments))
             for run, (start_path, tuned_path) in outputs.items()}
    kinds = {run: Condition.parse(run[0]).reference_type for run in outputs}
    targeted_seconds = {}
    if "targeted" in kinds.values():  # one paraphraser (grammar loaded once) for every run
        with targeted.references(first, 1, "fig6_2", workers) as hook:
            for run in (run for run, kind in kinds.items() if kind == "targeted"):
                before = texts[run][0]
                hook.prepare(list(enumerate(before)))
                targeted_seconds[run] = [targeted_second(hook(i, hypothesis), tune_path,
                                                         segments[i])
                                         for i, hypothesis in enumerate(before)]
    rows = []
    for run, (before, after) in texts.items():
        second = targeted_seconds[run] if kinds[run] == "targeted" else seconds[kinds[run]]
        rows.append({"reference_type": kinds[run], "replicate": run[1],
                     **focus_rows(first, second, before, after, lowercased)})
    table = focus_table(pd.DataFrame(rows))
    replicates = sorted({replicate for _, replicate in outputs})
    write_page(focus_markdown(table, replicates), markdown_path, html_path,
               "Focus and reachability (thesis Fig. 6.2)")
    write_text_atomically(csv_text(table), csv_path)
    labels = {"human": "Human", "paraphrase": "Untargeted", "targeted": "Targeted"}
    plot_bars(["pre-tune (A)", "post-tune (B)", "gain (C)", "gain on first"],
               {labels[row["reference_type"]]:
                ([row[f"{c}_mean"] for c in FOCUS_COLUMNS[:4]],
                 [row[f"{c}_sd"] for c in FOCUS_COLUMNS[:4]])
                for row in table.to_dict("records")},
               png_path, "Focus and reachability of the second reference (thesis Fig. 6.2)",
               "tune BLEU against one reference (%)", zero_based=True)
    return table


def targeted_second(references: Sequence[str], tune_path: str | os.PathLike,
                    segment: int) -> str:
    """The targeted second reference from a hook's references (the original first)."""
    if len(references) < 2:
        raise ValueError(f"{tune_path}: segment {segment}: the targeted paraphraser gave no "
                         "paraphrase")
    return references[1]


def one_best(nbest_path: str | os.PathLike, segments: Sequence[int]) -> list[str]:
    """The 1-best hypothesis of each segment of an n-best table, in ``segments`` order."""
    return best_of(read_table(nbest_path, NBEST), segments, nbest_path)
