"""The page of the tune set's single references: which translations make up the single reference
of 1H, and how long they are (:func:`circle.experiments.single_reference.single_reference_table`),
with the rule that chose them. Beyond the thesis, which does not report the draw (§4.3.1).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd

from circle.core.pages import csv_text, write_page, write_text_atomically
from circle.core.schemas import EVALSET
from circle.core.tables import read_metadata, read_table
from circle.experiments.single_reference import ALL, single_reference_table

PAGE_TITLE = "The single reference of 1H: which translations, how long"


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
