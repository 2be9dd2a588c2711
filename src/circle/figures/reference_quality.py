"""The reference-quality page: every candidate extra tuning reference's adequacy against the
held-out human references, its added n-grams, diversity, closeness to R and fluency
(:func:`circle.experiments.reference_quality.reference_quality` computes them), mean ± sd over
the replicates a candidate depends on, and the reading of how the paraphrases compare with the
system's own output. A diagnostic beyond the thesis (§6.3, §6.6).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from circle.core.pages import split_table

PAGE_TITLE = "Quality of the extra tuning references"
QUALITY_COLUMNS: tuple[tuple[str, str, float, int], ...] = (
    # (column, header, scale, decimals)
    ("bleu", "BLEU", 1, 1), ("chrf", "chrF", 1, 1), ("ter", "TER", 1, 1),
    ("length_ratio", "length / R", 1, 3), ("valid_share", "added valid %", 100, 1),
    ("reachable_wrong_share", "added wrong, reachable %", 100, 1),
    ("new_share", "new 4-grams %", 100, 1), ("first_bleu", "BLEU vs rank 1", 1, 1),
    ("input_bleu", "BLEU vs R", 1, 1), ("pp_bleu", "ppBLEU", 1, 1),
    ("lm_decoding", "LM (decoder)", 1, 2), ("lm_reranking", "LM (reranker)", 1, 2))


def _summarised(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and sd over replicates per candidate (candidates keep their table order)."""
    rows = []
    for name, runs in table.groupby("candidate", sort=False):
        row = {"candidate": name, "kind": runs["kind"].iloc[0], "replicates": len(runs),
               "segments": int(runs["segments"].min()),
               "heldout_references": float(runs["heldout_references"].mean())}
        for column, *_ in QUALITY_COLUMNS:
            values = runs[column].to_numpy(dtype=float)
            row[column] = float(np.mean(values))
            row[f"{column}_sd"] = float(np.std(values, ddof=1)) if len(values) > 1 else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def quality_reading(table: pd.DataFrame) -> str:
    """One line: how the first paraphrases compare with the system's own output and with R."""
    summary = _summarised(table).set_index("candidate")

    def bleu(name: str) -> str:
        return f"{summary.loc[name, 'bleu']:.1f}" if name in summary.index else "–"

    parts = [f"against the held-out human references, R scores {bleu('R')} BLEU"]
    for name, label in (("H2", "a second human reference"), ("P1", "the 1-best untargeted "
                        "paraphrase"), ("T1", "the 1-best targeted paraphrase"),
                        ("MT untuned", "the untuned MT output"), ("MT 1H", "the 1H output")):
        if name in summary.index:
            parts.append(f"{label} {bleu(name)}")
    line = ", ".join(parts)
    if {"P1", "MT untuned"} <= set(summary.index):
        worse = summary.loc["P1", "bleu"] < summary.loc["MT untuned", "bleu"]
        line += (f"; the untargeted paraphrase is {'a worse' if worse else 'a better'} "
                 "translation than the system's own output")
    return line + "."


QUALITY_PARTS: tuple[tuple[str, ...], ...] = (
    ("BLEU", "chrF", "TER", "length / R", "added valid %", "added wrong, reachable %"),
    ("segments", "held-out refs", "new 4-grams %", "BLEU vs rank 1"),
    ("BLEU vs R", "ppBLEU", "LM (decoder)", "LM (reranker)"))
"""The page's tables, each led by the candidate: adequacy and what the added n-grams are (the
reading's numbers), then the counts and the diversity, then closeness to R and fluency."""


def quality_markdown(table: pd.DataFrame) -> str:
    """The report page of a :func:`reference_quality` table."""
    summary = _summarised(table)
    header = ["candidate", "segments", "held-out refs", *(h for _, h, _, _ in QUALITY_COLUMNS)]
    rows = []
    for row in summary.to_dict("records"):
        cells = [row["candidate"] + (f" (n = {row['replicates']})" if row["replicates"] > 1
                                     else ""),
                 str(row["segments"]), f"{row['heldout_references']:.2f}"]
        for column, _, scale, decimals in QUALITY_COLUMNS:
            value, sd = row[column] * scale, row[f"{column}_sd"] * scale
            if np.isnan(value):
                cells.append("–")
            elif np.isnan(sd):
                cells.append(f"{value:.{decimals}f}")
            else:
                cells.append(f"{value:.{decimals}f} ± {sd:.{decimals}f}")
        rows.append(cells)
    lines = split_table(header, rows, QUALITY_PARTS, left={"candidate"})
    caption = (
        "Each candidate extra reference of the tune set scored against the segment's held-out "
        "human references (all but the single reference R and, for a human candidate, itself; "
        "segments with at least two references): BLEU, chrF and TER in percent (sacrebleu, "
        "tokenised text). R = the single reference of 1H; H<k> = the k-th human reference of "
        "the seeded order (2H..); P<k> = the k-th untargeted paraphrase of R (1H+kP); T<k> = "
        "the k-th targeted paraphrase of R towards a 1H run's 1-best, as its 1H+kT runs "
        "paraphrased it (mean ± sd over the 1H replicates, n); MT = the system's 1-best. Of "
        "the distinct 4-grams a candidate adds to R: the share found in a held-out reference "
        "(valid) and the share found in none but in the untuned system's n-best list (wrong, "
        "reachable: what tuning against it can reward, thesis §6.3); the untuned MT output's "
        "own 4-grams are all in that list, so its two shares add up to 100 % by construction. "
        "New 4-grams: the share "
        "in neither R nor a lower rank of its kind. LM: log10 probability per word under the "
        "decoder's and the reranker's language models (higher = more like their training "
        "English). Human candidates are scored against one reference fewer than the others, "
        "which lowers their BLEU. A diagnostic beyond the thesis, which does not measure its "
        "references as translations. The first table has the adequacy and the added "
        "n-grams; the two under it the same candidates' counts, diversity, closeness to R and "
        "fluency.")
    return "\n".join([f"# {PAGE_TITLE}", "", *lines, "", caption, "",
                      f"Reading: {quality_reading(table)}", ""])
