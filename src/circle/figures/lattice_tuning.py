"""The page of the lattice run set (target ``lattice_tuning``,
:mod:`circle.experiments.lattice_tuning`): test scores per number of tuning references, 1H .. nH
and each kH+mL series, and how many tune segments got how many lattice sentences."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import pandas as pd

from circle.core.schemas import CONDITION_SUMMARY, EVALUATION, LATTICE_REFERENCES
from circle.core.tables import read_metadata, read_table
from circle.experiments.conditions import UNTUNED
from circle.figures.reference_table import (
    Significance,
    plot_references,
    reference_table,
    score_signatures,
    write_table_files,
)

PAGE_TITLE = "Tuning with sentences drawn from word lattices (Pang, Knight & Marcu 2003)"


def coverage(frame: pd.DataFrame, segments: int, count: int) -> list[int]:
    """How many of ``segments`` tune segments have 0, 1, ..., ``count`` rows in a
    :data:`~circle.core.schemas.LATTICE_REFERENCES` frame."""
    rows = frame.groupby("segment_id").size()
    return [segments - len(rows), *(int((rows == n).sum()) for n in range(1, count + 1))]


def coverage_notes(tables: Mapping[int, tuple[pd.DataFrame, Mapping[str, str]]]) -> str:
    """The page's lines under the table: per k, how many tune segments got how many lattice
    sentences, and what the setting asks."""
    lines = ["", "kH+mL tunes with the first k references of each tune segment (those of kH) "
             "and the m best sentences by the reranking LM of the squeezed word lattice merged "
             "from their parse trees (the seed's Fig. 4) that none of the k is: "
             "circle.lattice.references. A lattice needs two references, so this is not the "
             "thesis's 1H question; it asks what more can be drawn from the k references one "
             "has. Each kH+mL cell is marked against kH (same replicates) and sits on the row of "
             "k + m references, beside (k+m)H where the tune set has it.", ""]
    for human, (frame, metadata) in sorted(tables.items()):
        count, segments = int(metadata["count"]), int(metadata["segments"])
        shares = coverage(frame, segments, count)
        counted = ", ".join(f"{number:,} with {n}" for n, number in enumerate(shares))
        lines.append(f"- lattices of {human}H: of {segments:,} tune segments, {counted} new "
                     f"sentences (a segment with fewer than m has fewer references under "
                     f"{human}H+mL); {int(metadata['dropped']):,} paths were skipped as "
                     "spelling a reference or a better path.")
    return "\n".join([*lines, ""])


def write_lattice_tuning_report(evaluation_path: str | os.PathLike,
                                conditions_path: str | os.PathLike,
                                lattice_paths: Sequence[str | os.PathLike],
                                markdown_path: str | os.PathLike, html_path: str | os.PathLike,
                                csv_path: str | os.PathLike, png_path: str | os.PathLike,
                                experiment: str | None = None) -> pd.DataFrame:
    """The lattice run set's reference table (:func:`circle.figures.reference_table.
    reference_table`: rows by tuning references, a ``lattice_<k>H`` series per k; marks against
    each row's baseline) as Markdown, HTML, CSV and plot, with the lattice tables' coverage
    under it."""
    evaluation = read_table(evaluation_path, EVALUATION)
    summary = read_table(conditions_path, CONDITION_SUMMARY)
    table = reference_table(evaluation, experiment, summary)
    table["label"] = [UNTUNED if k == 0 else str(k) for k in table["references"]]
    tables = {}
    for path in lattice_paths:
        metadata = read_metadata(path)
        tables[int(metadata["human"])] = (read_table(path, LATTICE_REFERENCES), metadata)
    labels = {f"lattice_{k}H": f"{k}H + lattice" for k in tables}
    significance = Significance("its baseline (kH for kH+mL, 1H for kH)",
                                float(summary["significance_level"].iloc[0]),
                                int(summary["shuffles"].iloc[0]))
    write_table_files(table, markdown_path, html_path, csv_path, labels, significance,
                      PAGE_TITLE, score_signatures(evaluation), coverage_notes(tables))
    plot_references(table, png_path, title="BLEU vs. tuning references, lattice sentences",
                    labels=labels)
    return table
