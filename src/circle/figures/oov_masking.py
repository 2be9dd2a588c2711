"""The page of known words masked as OOV (target ``oov_masking``,
:mod:`circle.experiments.oov_masking`): per amount of monolingual text, the share of masked
words that borrow a rule, how often the best borrowed translation is one of the word's own
(accuracy@1 over all, precision@1 over those that borrow), recall@k and the random-word
baseline; the reading of precision@1 against the amount of text by the module's rule; and the
masked words' best borrowed translations on the largest text."""

from __future__ import annotations

import os
from collections.abc import Mapping

import pandas as pd

from circle.core.pages import (
    csv_text,
    pipe_table,
    split_table,
    write_page,
    write_text_atomically,
)
from circle.core.schemas import OOV_MASKING
from circle.core.tables import read_metadata, read_table
from circle.experiments.oov_masking import reading, scores

PAGE_TITLE = ("Known words masked as OOV: are the translations borrowed through distributional "
              "paraphrases better with more monolingual text? (Marton, Callison-Burch & Resnik "
              "2009)")

SAMPLES = 12
"""Masked words shown with what they borrow on the largest text: the first of them in
alphabetical order among those that borrow a rule."""

VERDICTS = {
    "rises": "precision@1 rises with the text: the explanation is supported",
    "rises unsteadily": "precision@1 is higher on the largest text but falls on the way: the "
                        "explanation is not clearly supported",
    "flat": "precision@1 is flat: the explanation is not supported",
    "falls": "precision@1 falls with more text: the explanation is contradicted",
    "no reading": "no reading: too few amounts of text, or no masked word borrows at one end",
}
"""What each outcome of :func:`circle.experiments.oov_masking.reading` says."""


def _percent(value: float) -> str:
    return "–" if pd.isna(value) else f"{100 * value:.1f}"


def scores_markdown(summary: pd.DataFrame, k: int) -> list[str]:
    """The per-amount table (percentages): first what the reading reads beside its baseline,
    then the counts under it (:func:`~circle.core.pages.split_table`, a forge's width)."""
    header = ["fraction", "text words", "coverage %", "accuracy@1 %", "precision@1 %",
              f"recall@{k} %", "baseline accuracy@1 %", f"baseline recall@{k} %",
              "masked words", "covered"]
    rows = [[f"{row.fraction:g}", f"{row.text_words:,}", _percent(row.coverage),
             _percent(row.accuracy_at_1), _percent(row.precision_at_1),
             _percent(row.recall_at_k), _percent(row.baseline_accuracy_at_1),
             _percent(row.baseline_recall_at_k), str(row.masked_words), str(row.covered)]
            for row in summary.itertuples()]
    return split_table(header, rows, [header[1:8], header[8:]])


def samples_markdown(table: pd.DataFrame) -> list[str]:
    """:data:`SAMPLES` masked words of the largest text that borrow a rule: the word, its
    true translations, its best borrowed one and the paraphrase it comes from."""
    largest = table[table["fraction"] == table["fraction"].max()]
    shown = largest[largest["borrowed_targets"] > 0].sort_values("word").head(SAMPLES)
    rows = [[row.word, ", ".join(row.true_targets), row.top_target, row.top_paraphrase,
             f"{row.top_asim:.2f}", "yes" if row.correct_at_1 else "no"]
            for row in shown.itertuples()]
    return pipe_table(["word", "true translations", "borrowed", "through", "asim", "correct"],
                      rows, left=("word", "true translations", "borrowed", "through"))


def write_oov_masking_report(table_path: str | os.PathLike, markdown_path: str | os.PathLike,
                             html_path: str | os.PathLike, csv_path: str | os.PathLike
                             ) -> pd.DataFrame:
    """The page of a :data:`~circle.core.schemas.OOV_MASKING` table; the per-amount scores
    (:func:`~circle.experiments.oov_masking.scores`) are also written as CSV and returned."""
    table = read_table(table_path, OOV_MASKING)
    metadata: Mapping[str, str] = read_metadata(table_path)
    k = int(metadata["recall_k"])
    summary = scores(table)
    found = reading(summary)
    words = int(summary["masked_words"].iloc[0])
    text = [
        f"# {PAGE_TITLE}", "",
        f"{words} words of the test split that the bilingual grammar translates (of "
        f"{metadata['candidates']} candidates: seen {metadata['band']} times in the "
        "bitext's source side, alphabetic, not stoplisted), each searched for as an OOV phrase "
        "in the monolingual text with the OOV augmentation's settings, its own rules out of "
        "reach, and given the rules it borrows through its distributional paraphrases "
        "(circle.experiments.oov_masking). A true translation is one of the word's own "
        f"one-word rules with p(e|f) ≥ {metadata['min_probability']}, or its most probable; "
        "accuracy@1 counts a word without borrowed rules as wrong, precision@1 is over the "
        "words that borrow (covered). The baseline borrows the rules of another masked word "
        "drawn at random. The text: the test split's sentences and the share `fraction` of "
        "the others (nested, seeded).", "",
        *scores_markdown(summary, k), "",
        f"**Reading** (the rule of circle.experiments.oov_masking: precision@1 on the largest "
        f"against the smallest text, margin two standard errors): "
        f"{VERDICTS[found.verdict]} (difference {_percent(found.difference)} points, margin "
        f"{_percent(found.margin)}).", "",
        "## Masked words on the largest text", "", *samples_markdown(table), ""]
    write_page("\n".join(text), markdown_path, html_path, PAGE_TITLE)
    write_text_atomically(csv_text(summary), csv_path)
    return summary
