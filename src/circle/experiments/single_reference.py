"""Which translations make up the single reference of 1H, and how long they are.

The thesis simulates a single reference by choosing, per document, one of the human references
at random (§4.3.1); every 1H, 1H+kP and 1H+kT run is tuned with that choice. When the
translations differ in length, the luck of the draw sets the length the system is tuned to (a
long single reference stretches the output; BLEU's brevity penalty only punishes the opposite),
so this page shows the choice: per translation, the documents and segments whose single
reference it is, and the single reference's length against the mean of the segment's other
references. The rule itself is the corpus's ``single_reference`` key
(:data:`circle.corpus.prepare.CHOICE_RULES`). The page goes beyond the thesis, which does not
report the draw.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd

from circle.core.pages import csv_text, write_page, write_text_atomically
from circle.core.schemas import EVALSET
from circle.core.tables import read_metadata, read_table

PAGE_TITLE = "The single reference of 1H: which translations, how long"
ALL = "all"


def single_reference_table(tune: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """One row per reference set (``names``, the set's reference names) and a last row
    ``all``: the ``documents`` and ``segments`` whose single reference (first of ``ref_order``)
    it is, their ``share`` of the segments, the single reference's mean ``words`` and its
    ``length_ratio``, its words over the mean words of the segment's other references (summed
    over the segments; NaN where a segment has no other reference)."""
    rows = []
    firsts = np.array([int(order[0]) for order in tune["ref_order"]])
    lengths = [[len(ref.split()) for ref in refs] for refs in tune["references"]]
    single = np.array([lens[first] for lens, first in zip(lengths, firsts, strict=True)],
                      dtype=float)
    others = np.array([np.mean([n for k, n in enumerate(lens) if k != first])
                       if len(lens) > 1 else np.nan
                       for lens, first in zip(lengths, firsts, strict=True)])
    for index, name in [*enumerate(names), (None, ALL)]:
        chosen = np.ones(len(tune), bool) if index is None else firsts == index
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = (single[chosen].sum() / others[chosen].sum()) if chosen.any() else np.nan
        rows.append({"reference": name,
                     "documents": int(tune.loc[chosen, "document"].nunique()),
                     "segments": int(chosen.sum()),
                     "share": float(chosen.mean()) if len(tune) else np.nan,
                     "words": float(single[chosen].mean()) if chosen.any() else np.nan,
                     "length_ratio": float(ratio)})
    return pd.DataFrame(rows)


def single_reference_markdown(table: pd.DataFrame, rule: str) -> str:
    """The page of a :func:`single_reference_table`."""
    lines = ["| single reference | documents | segments | share % | words (mean) | "
             "length / others |", "|:---|---:|---:|---:|---:|---:|"]
    for row in table.to_dict("records"):
        words = "–" if np.isnan(row["words"]) else f"{row['words']:.1f}"
        ratio = "–" if np.isnan(row["length_ratio"]) else f"{row['length_ratio']:.3f}"
        name = f"**{row['reference']}**" if row["reference"] == ALL else row["reference"]
        lines.append(f"| {name} | {row['documents']} | {row['segments']} | "
                     f"{100 * row['share']:.1f} | {words} | {ratio} |")
    described = ("at random per document (the thesis's simulation, §4.3.1)"
                 if rule == "per_document" else
                 "in turn across the translations, balanced over documents")
    caption = (f"The tune set's single reference R (1H, and the R that 1H+kP, 1H+kT and 1H+1X "
               f"add to) is chosen {described}: corpus.single_reference = {rule}. Length / "
               "others: R's words over the mean words of the segment's other references, "
               "summed over the segments it is R of; above 1, tuning against R asks for "
               "longer output than the other translations would.")
    return "\n".join([f"# {PAGE_TITLE}", "", *lines, "", caption, ""])


def single_reference_report(tune_path: str | os.PathLike, rule: str,
                            out_markdown: str | os.PathLike, out_html: str | os.PathLike,
                            out_csv: str | os.PathLike) -> pd.DataFrame:
    """The page (Markdown, HTML) and CSV of the tune set's single references."""
    tune = read_table(tune_path, EVALSET)
    width = max(len(refs) for refs in tune["references"])
    names = json.loads(read_metadata(tune_path).get("reference_names", "null")) \
        or [f"reference {k + 1}" for k in range(width)]
    table = single_reference_table(tune, names)
    write_page(single_reference_markdown(table, rule), out_markdown, out_html, PAGE_TITLE)
    write_text_atomically(csv_text(table), out_csv)
    return table
