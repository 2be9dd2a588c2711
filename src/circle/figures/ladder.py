"""The ladder's page: finished experiments that share the MT system and differ in their
paraphraser, side by side (:mod:`circle.pipeline.ladder` reads their results directories). The
ladder table (:func:`ladder_markdown`: what the ladder reads first, P1's adequacy and the tuning
gains, then what each paraphraser is and cost, then the rest), the reading of adequacy against
gain (:func:`adequacy_reading`: Pearson's r over the rungs, raw and at a common length), and the
rungs' Fig. 4.3 and Fig. 5.10 series in one reference table each, with their plots
(:func:`write_ladder_files`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from circle.core.correlation import pearson
from circle.core.pages import csv_text, split_table, write_page, write_text_atomically
from circle.experiments.evaluate import MATCHED_BLEU
from circle.figures.reference_table import Significance, markdown_table, plot_references


def adequacy_reading(gains: pd.DataFrame) -> str:
    """Does the tuning gain follow adequacy? Pearson's r of the rungs' P1 adequacy with
    1H+1P − 1H (:func:`circle.pipeline.ladder.adequacy_gains`), raw and at a common length, each
    with n and its two-sided p (t-test on r), and why that p is optimistic; or why there is no
    r."""
    if len(gains) < 3:
        return (f"Adequacy against gain: {len(gains)} rung(s) with 1H+1P; a correlation needs "
                "three.\n")
    raw, matched = (pearson(gains["adequacy_bleu"], gains[metric])
                    for metric in ("bleu", MATCHED_BLEU))
    return (f"Adequacy against gain: Pearson's r of P1's adequacy BLEU with 1H+1P − 1H over "
            f"the rungs that tuned 1H+1P, raw {raw}, at a common length {matched} (p: t-test "
            "on r, n − 2 degrees of freedom). Every rung's gain is over the same 1H runs: an "
            "error of 1H shifts all gains alike and leaves r as it is, but the rungs are not "
            "independent draws (one MT system, one tune set, and some share a grammar or a "
            "paraphraser's design), so p is optimistic.\n")


TITLE = "The ladder of paraphrasers"
FIGURES = {"fig4_3": ("Fig. 4.3: untargeted paraphrased references (1H+kP)", "Fig. 4.3, 1H+kP"),
           "fig5_10": ("Fig. 5.10: targeted paraphrased references (1H+kT)", "Fig. 5.10, 1H+kT")}
"""Each figure's heading and its plots' title."""


LADDER_PARTS: tuple[tuple[str, ...], ...] = (
    ("P1 BLEU / chrF / TER", "MT untuned BLEU", "1H+1P − 1H BLEU", "at common length",
     "1H+3P − 1H BLEU", "1H+1T − 1H BLEU"),
    ("pivots", "paraphraser LMs", "tuned on bias, φ_ident weight", "bilingual rules (M)",
     "paraphrase rules (M)", "pivot cost (s, peak GB)"),
    ("P1 length / R", "P1 BLEU vs R, ppBLEU", "P1 added valid / wrong reachable %",
     "P2 BLEU vs P1, new 4-grams %", "1H+3P at common length",
     "grid choice: bias, weight: D [Δd_ref, Δd_mt]", "1H+3T − 1H BLEU"))
"""The ladder's tables, each led by the experiment: what the page reads (P1's adequacy beside
the MT system's, and the tuning gains), then what each paraphraser is and cost, then the rest
of P1, P2, the grid search and the gains it does not read."""


def ladder_markdown(table: pd.DataFrame) -> str:
    """The ladder table as GitHub Markdown: :data:`LADDER_PARTS`, one table under the other
    (text columns left, numbers right)."""
    return "\n".join(split_table(list(table.columns), table.astype(str).to_numpy().tolist(),
                                 LADDER_PARTS, left={"experiment", "pivots", "paraphraser LMs"})
                     ) + "\n"


def write_ladder_files(table: pd.DataFrame, gains: pd.DataFrame,
                       figures: Mapping[str, pd.DataFrame | None], significance: Significance,
                       experiments: Sequence[str], out: Path, made_at: str) -> Path:
    """Write into ``out`` the ladder's page (``ladder.md``, ``ladder.html``), its table
    (``ladder.csv``) and, per figure of :data:`FIGURES` that a rung ran (``figures``: its
    combined reference table, None where no rung did), the figure's CSV and its plots of test
    BLEU and BLEU at a common length; returns the page. ``table`` is the ladder table,
    ``gains`` the rungs' adequacy and gains, ``experiments`` the rungs' names."""
    out.mkdir(parents=True, exist_ok=True)
    labels = {"human": "Human (kH)"}
    parts = [f"# {TITLE}\n",
             f"Experiments {', '.join(experiments)}, made at {made_at}. Each rung "
             "is an experiment with the same MT system and its own paraphraser. P1: the 1-best "
             "untargeted paraphrase of the tune set's single reference R, scored against each "
             "verse's held-out human references (as the MT system's untuned output beside it). "
             "Gains: test BLEU over 1H on the pooled output of the tuning replicates, the "
             "experiment's own approximate randomisation test (* better, † worse). Pivot cost: "
             "wall seconds summed over the jobs only the paraphraser needs, from Snakemake's "
             "benchmark files (upper bounds where jobs shared the cores). The first table has "
             "what the ladder reads, P1's adequacy beside the MT system's output and the "
             "tuning gains; the two under it what each paraphraser is and cost, and the rest "
             "of P1, P2, the grid search and 1H+3T.\n",
             ladder_markdown(table), adequacy_reading(gains)]
    write_text_atomically(csv_text(table), out / "ladder.csv")
    for figure, (title, short) in FIGURES.items():
        combined = figures[figure]
        if combined is None:
            parts += [f"## {title}\n",
                      f"No experiment of the ladder ran the conditions of {short}.\n"]
            continue
        write_text_atomically(csv_text(combined), out / f"{figure}.csv")
        plot_references(combined, out / f"{figure}.png", title=short, labels=labels)
        plot_references(combined, out / f"{figure}_common_length.png", metric=MATCHED_BLEU,
                        title=f"{short}, at a common length", labels=labels)
        parts += [f"## {title}\n", markdown_table(combined, labels, significance),
                  f"![{title}]({figure}.png)\n",
                  f"![{title}, at a common length]({figure}_common_length.png)\n"]
    page = out / "ladder.md"
    write_page("\n".join(parts), page, out / "ladder.html", TITLE)
    return page
