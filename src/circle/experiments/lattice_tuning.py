"""Tuning with new references drawn from word lattices (Pang, Knight & Marcu 2003; target
``lattice_tuning``, beyond the thesis).

Conditions ``kH+mL`` tune with each segment's first k human references in the seeded order (those
of kH) plus the m best sentences by the LM of the word lattice merged from those k, sentences none
of the k translators wrote (:mod:`circle.lattice.references`). A segment whose lattice has fewer
new sentences gets fewer; the page counts them. Each condition is tested against kH with the same
replicates (:attr:`~circle.experiments.conditions.Condition.baseline`) and sits in the table beside
(k+m)H where the tune set has that many references.

A lattice needs at least two references, so this is not the thesis's question (what can be added
to ONE reference, §4.3): it asks what more can be squeezed out of the k references one has, as
Zheng et al. (2018) did with pseudo-references for neural MT.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import pandas as pd

from circle.core.schemas import CONDITION_SUMMARY, EVALUATION, LATTICE_REFERENCES
from circle.core.tables import read_metadata, read_table
from circle.corpus.prepare import reference_names
from circle.experiments.conditions import UNTUNED, Condition, TuningRun
from circle.figures.report import (
    Significance,
    plot_references,
    reference_table,
    score_signatures,
    write_table_files,
)

DEFAULT_CONDITIONS: tuple[str, ...] = ("2H+1L", "2H+2L")
"""The conditions of ``lattice.tuning_conditions: null`` where the corpus allows them."""

PAGE_TITLE = "Tuning with sentences drawn from word lattices (Pang, Knight & Marcu 2003)"


def _chosen(config: Mapping) -> Sequence[str] | None:
    """``lattice.tuning_conditions`` as the config gives it (None: the default)."""
    return (config.get("lattice") or {}).get("tuning_conditions")


def _parsed_text(config: Mapping) -> bool:
    """Whether the lattice stage can parse the config's references: English (spaCy's model),
    lowercased (the lattice's words are)."""
    preprocess = config["preprocess"]
    return preprocess["target_lang"] == "en" and bool(preprocess["lowercase"])


def lattice_conditions(config: Mapping) -> list[Condition]:
    """The kH+mL conditions of the config: ``lattice.tuning_conditions``, or when it is null
    :data:`DEFAULT_CONDITIONS` if the tune set has two references and the lattice stage can run
    on the target language (English, lowercased), else none."""
    chosen = _chosen(config)
    if chosen is None:
        usable = len(reference_names(config["corpus"])["tune"]) >= 2 and _parsed_text(config)
        chosen = DEFAULT_CONDITIONS if usable else ()
    return [Condition.parse(name) for name in chosen]


def lattice_problems(config: Mapping) -> list[str]:
    """What stops the config's lattice tuning: a name in ``lattice.tuning_conditions`` (the
    schema's pattern lets only kH+mL through) that the condition grammar refuses or that asks
    for more references than the tune set has, and a parser language other than English or
    references that are not lowercased (the lattice's words are)."""
    problems = []
    chosen = _chosen(config) or []
    tune = len(reference_names(config["corpus"])["tune"])
    for name in chosen:
        try:
            condition = Condition.parse(name)
        except ValueError as error:
            problems.append(f"lattice.tuning_conditions: {error}")
            continue
        if condition.human > tune:
            problems.append(f"lattice.tuning_conditions: {name} needs {condition.human} "
                            f"references but the tune set has {tune}")
    if chosen and not _parsed_text(config):
        problems.append("lattice.tuning_conditions: the lattice stage parses English (spaCy) "
                        "and lowercases its words; kH+mL needs preprocess.target_lang en and "
                        "preprocess.lowercase true")
    return problems


def lattice_counts(conditions: Sequence[Condition]) -> dict[int, int]:
    """Per k, the most lattice sentences a kH+mL condition of ``conditions`` takes: the rows
    per segment of the k references' lattice table."""
    counts: dict[int, int] = {}
    for condition in conditions:
        if condition.lattice:
            counts[condition.human] = max(counts.get(condition.human, 0), condition.lattice)
    return counts


def lattice_runs(conditions: Sequence[Condition], tune_references: int,
                 replicates: int) -> list[TuningRun]:
    """The runs of the lattice page: 1H .. nH for the tune set's n references (kH is each
    kH+mL's baseline, 1H kH's) and the kH+mL ``conditions``, each replicate."""
    every = [*(Condition(k) for k in range(1, tune_references + 1)), *conditions]
    return [TuningRun(c, r) for c in every for r in range(replicates)]


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
    """The lattice run set's reference table (:func:`circle.figures.report.reference_table`:
    rows by tuning references, a ``lattice_<k>H`` series per k; marks against each row's
    baseline) as Markdown, HTML, CSV and plot, with the lattice tables' coverage under it."""
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
