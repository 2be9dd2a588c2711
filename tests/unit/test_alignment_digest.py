"""Frozen alignments and the bitext they were made for: a table without the bitext's digest is
refused when it does not fit the bitext, and the digest can be added to a table without
changing its links."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_grammar_extract import TINY, tiny_aligned

from circle.align import (
    BITEXT_DIGEST,
    AlignmentError,
    bitext_digest,
    check_bitext_digest,
    main,
)
from circle.core.schemas import BITEXT
from circle.core.tables import read_metadata, write_table
from circle.grammar.extract import load_aligned_bitext

ROOT = Path(__file__).resolve().parents[2]


def test_an_alignment_without_digest_is_refused_on_a_shorter_sentence(tmp_path):
    bitext_path, alignment, bitext = tiny_aligned(tmp_path, digest=False)
    changed = bitext.copy()
    changed.loc[7, "target"] = " ".join(changed.loc[7, "target"].split()[:2])
    write_table(changed, bitext_path, BITEXT)
    with pytest.raises(AlignmentError, match=re.escape(f"{alignment}: segment 7: link ")
                       + r".* of .*train\.parquet; the table records no bitext digest and does "
                       r"not fit; rebuild it with `snakemake refreeze_alignment`"):
        load_aligned_bitext(bitext_path, alignment)


def test_an_alignment_without_digest_is_refused_on_another_sentence_count(tmp_path):
    bitext_path, alignment, bitext = tiny_aligned(tmp_path, digest=False)
    with pytest.raises(AlignmentError, match=re.escape(
            f"{alignment}: its {len(bitext)} segments are not the {len(bitext) - 1} of "
            f"{bitext_path} (first in one only: segment 0); the table records no bitext digest")):
        check_bitext_digest(alignment, bitext.iloc[1:], bitext_path)


def test_record_digest_keeps_the_links_and_then_refuses_a_grown_sentence(tmp_path, capsys):
    bitext_path, alignment, bitext = tiny_aligned(tmp_path, digest=False)
    before = pq.read_table(alignment)
    main(["record-digest", str(alignment), str(bitext_path)])
    assert capsys.readouterr().out == f"{alignment}: bitext digest {bitext_digest(bitext)}\n"
    after = pq.read_table(alignment)
    assert after.equals(before)
    assert {**before.schema.metadata, b"circle.bitext_digest": bitext_digest(bitext).encode()} \
        == after.schema.metadata
    grown = bitext.copy()
    grown.loc[7, "target"] += " and more words"  # every old link still fits
    with pytest.raises(AlignmentError, match="made for another training bitext"):
        check_bitext_digest(alignment, grown, bitext_path)


def test_record_digest_refuses_a_table_that_does_not_fit(tmp_path):
    bitext_path, alignment, bitext = tiny_aligned(tmp_path, digest=False)
    write_table(bitext.iloc[:-1], bitext_path, BITEXT)
    data = alignment.read_bytes()
    with pytest.raises(SystemExit, match="2"):
        main(["record-digest", str(alignment), str(bitext_path)])
    assert alignment.read_bytes() == data


def test_the_tiny_alignment_records_the_digest_of_the_tiny_bitext(tmp_path):
    _, _, bitext = tiny_aligned(tmp_path, digest=False)
    assert read_metadata(TINY / "alignment.parquet")[BITEXT_DIGEST] == bitext_digest(bitext)


def test_every_shipped_alignment_records_its_bitext_digest():
    tables = sorted((ROOT / "resources" / "alignment").glob("*.parquet"))
    assert tables
    assert [table.name for table in tables
            if not re.fullmatch("[0-9a-f]{64}", read_metadata(table).get(BITEXT_DIGEST, ""))] == []
