"""The powered experiment's verdict read from its experiments' results directories
(``circle verdict``): the condition summaries evaluate_runs wrote, the decision rules of
:mod:`circle.experiments.verdict`, the page of :mod:`circle.figures.verdict`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import yaml

from circle.core.layout import Results
from circle.core.pages import csv_text, write_page, write_text_atomically
from circle.core.schemas import CONDITION_SUMMARY
from circle.core.tables import read_table
from circle.experiments.verdict import (
    CONTROLS,
    HUMAN,
    PARAPHRASER,
    Verdict,
    check_one_system,
    comparison,
    decide,
)
from circle.figures.verdict import TITLE, verdict_markdown, verdict_table


def experiment_summary(results: Path, run_set: str = "") -> pd.DataFrame:
    """The condition summary of a run set of the experiment in ``results``
    (``results/<experiment>``)."""
    return read_table(Results.at(results).evaluation_conditions(run_set), CONDITION_SUMMARY)


def replicates_of(results: Path) -> int:
    """The experiment's ``tuning.replicates`` (its effective config)."""
    config = yaml.safe_load(Results.at(results).config.read_text(encoding="utf-8"))
    return int(config["tuning"]["replicates"])


def powered_verdict(main: Path, others: Sequence[Path] = ()) -> Verdict:
    """The verdict of the powered experiment in ``main`` (its dose-response run set holds 1H,
    2H, 1H+1P and the controls) and the paraphraser experiments ``others`` (each 1H and its
    1H+1P)."""
    replicates = replicates_of(main)
    summaries = {main.name: experiment_summary(main, "dose/")}
    summaries.update({path.name: experiment_summary(path) for path in others})
    check_one_system(summaries)
    for path in others:
        if replicates_of(path) != replicates:
            raise ValueError(f"{path.name} tunes {replicates_of(path)} replicates, "
                             f"{main.name} {replicates}")
    dose = summaries[main.name]
    return decide(comparison(dose, main.name, HUMAN, replicates),
                  [comparison(summary, name, PARAPHRASER, replicates)
                   for name, summary in summaries.items()],
                  [comparison(dose, main.name, control, replicates) for control in CONTROLS
                   if control in set(dose["condition"])])


def write_verdict_page(main: Path, others: list[Path], out: Path, made_at: str) -> Path:
    """Write the verdict of the powered experiment ``main`` and the paraphraser experiments
    ``others`` into ``out``; returns the page."""
    verdict = powered_verdict(main, others)
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomically(csv_text(verdict_table(verdict)), out / "verdict.csv")
    page = out / "verdict.md"
    write_page(verdict_markdown(verdict, made_at), page, out / "verdict.html", TITLE)
    return page
