"""Schema round trips, provenance and the checks of the table module."""

import errno
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from circle.core.schemas import ALL_SCHEMAS, BITEXT, EVALSET, GRAMMAR, TableSchema
from circle.core.tables import (
    SchemaError,
    atomic_path,
    provenance,
    read_metadata,
    read_table,
    remove_unreadable_tables,
    scratch_directory,
    write_table,
)
from circle.decoder.nbest import NBEST
from circle.grammar.filter import filter_grammar

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny"


def bitext():
    return pd.DataFrame({"segment_id": [1, 2], "document": ["d1", "d1"],
                         "source": ["hola", "adiós"], "target": ["hello", "goodbye"]})


def test_round_trip_keeps_rows_types_and_provenance(tmp_path):
    path = tmp_path / "t.parquet"
    prov = provenance("some_rule", {"seed": 13}, wildcards={"experiment": "x"})
    write_table(bitext(), path, BITEXT, prov, metadata={"note": "n"})
    back = read_table(path, BITEXT)
    pd.testing.assert_frame_equal(back, bitext(), check_dtype=False)
    assert str(back["segment_id"].dtype) == "int64"
    meta = read_metadata(path)
    assert meta["schema"] == "bitext" and meta["schema_version"] == "1"
    assert meta["rule"] == "some_rule" and meta["note"] == "n"
    assert meta["config_hash"] == provenance("r", {"seed": 13})["config_hash"]
    assert meta["config_hash"] != provenance("r", {"seed": 14})["config_hash"]
    assert "pandas" in meta["versions"]


def test_rewrite_is_byte_identical(tmp_path):
    one, two = tmp_path / "1.parquet", tmp_path / "2.parquet"
    for path in (one, two):
        write_table(bitext(), path, BITEXT, provenance("r", {"a": 1}))
    assert one.read_bytes() == two.read_bytes()


def test_list_columns_round_trip(tmp_path):
    frame = pd.DataFrame({"segment_id": [5], "document": ["d"], "source": ["s"],
                          "references": [["r1", "r2"]], "ref_order": [[1, 0]]})
    write_table(frame, tmp_path / "e.parquet", EVALSET)
    back = read_table(tmp_path / "e.parquet", EVALSET)
    assert list(back["references"][0]) == ["r1", "r2"] and list(back["ref_order"][0]) == [1, 0]


def test_reader_refuses_another_schema(tmp_path):
    write_table(bitext(), tmp_path / "t.parquet", BITEXT)
    with pytest.raises(SchemaError, match="expected schema 'evalset' version 1, found 'bitext'"):
        read_table(tmp_path / "t.parquet", EVALSET)


def test_reader_refuses_a_plain_parquet_file(tmp_path):
    bitext().to_parquet(tmp_path / "p.parquet")
    with pytest.raises(SchemaError, match="found 'None' version None"):
        read_table(tmp_path / "p.parquet", BITEXT)


def test_writer_rejects_wrong_columns_and_types(tmp_path):
    with pytest.raises(SchemaError, match=r"missing columns \['target'\] and unexpected .*'tgt'"):
        write_table(bitext().rename(columns={"target": "tgt"}), tmp_path / "x.parquet", BITEXT)
    wrong = bitext().assign(segment_id=["a", "b"])
    with pytest.raises(SchemaError, match="cannot store rows as schema 'bitext'"):
        write_table(wrong, tmp_path / "x.parquet", BITEXT)
    nulls = bitext().assign(target=[None, "x"])
    with pytest.raises(SchemaError):
        write_table(nulls, tmp_path / "x.parquet", BITEXT)
    assert list(tmp_path.iterdir()) == []  # nothing half-written is left behind


def test_every_schema_is_registered_under_its_name():
    assert all(name == schema.name for name, schema in ALL_SCHEMAS.items())


def tiny_bitext() -> pd.DataFrame:
    source = (TINY / "train.es.txt").read_text(encoding="utf-8").splitlines()
    target = (TINY / "train.en.txt").read_text(encoding="utf-8").splitlines()
    return pd.DataFrame({"segment_id": range(len(source)), "document": "train",
                         "source": source, "target": target})


@pytest.mark.parametrize("damage", [
    lambda data: data[:len(data) // 2],  # truncated
    lambda data: b"",  # emptied
    lambda data: b"0-0 1-1 2-3\n1-0\n",  # a Pharaoh alignment text, not Parquet
], ids=["truncated", "empty", "text"])
def test_a_broken_table_is_reported_with_its_path(tmp_path, damage):
    path = tmp_path / "train.parquet"
    write_table(tiny_bitext(), path, BITEXT)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(SchemaError, match=re.escape(f"{path}: not a readable Parquet file (")):
        read_table(path, BITEXT)


def every_path(path: str) -> bool:
    return True


def test_unreadable_tables_are_removed_and_named_and_only_they(tmp_path):
    good = tmp_path / "tokenized" / "train.parquet"
    truncated = tmp_path / "grammar" / "bilingual.parquet"
    empty = tmp_path / "decode" / "shards" / "test.0.parquet"
    temporary = tmp_path / "grammar" / ".bilingual.parquet.k3_9zq0a"  # a running job's
    scratch = tmp_path / "grammar" / ".bilingual.parquet.scratch-k3_9zq0a" / "shard.parquet"
    for path in (good, truncated, empty, temporary, scratch):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_table(tiny_bitext(), path, BITEXT)
    for path in (truncated, temporary, scratch):
        path.write_bytes(path.read_bytes()[:-100])
    empty.write_bytes(b"")
    assert remove_unreadable_tables(tmp_path, every_path, dry_run=False) == {
        str(empty): f"{empty}: not a readable Parquet file (Parquet file size is 0 bytes); "
                    "removed it",
        str(truncated): f"{truncated}: not a readable Parquet file (Parquet magic bytes not "
                        "found in footer. Either the file is corrupted or this is not a parquet "
                        "file.); removed it"}
    assert not empty.exists() and not truncated.exists()
    assert good.exists() and temporary.exists() and scratch.exists()
    assert remove_unreadable_tables(tmp_path, every_path, dry_run=False) == {}


def test_an_unreadable_table_on_a_read_only_tree_is_named_not_fatal(tmp_path, monkeypatch):
    truncated = tmp_path / "grammar" / "bilingual.parquet"
    truncated.parent.mkdir()
    write_table(tiny_bitext(), truncated, BITEXT)
    truncated.write_bytes(truncated.read_bytes()[:-100])

    def read_only(path, missing_ok=False):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    monkeypatch.setattr(Path, "unlink", read_only)
    [problem] = remove_unreadable_tables(tmp_path, every_path, dry_run=False).values()
    assert problem.startswith(f"{truncated}: not a readable Parquet file (")
    assert problem.endswith("; could not remove it (Read-only file system)")


def test_a_flipped_bit_in_a_data_page_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "test.nbest.parquet"
    hypotheses = (TINY / "test.ref0.txt").read_text(encoding="utf-8").splitlines()
    scores = np.random.default_rng(0).normal(size=len(hypotheses))  # incompressible pages
    write_table(pd.DataFrame({"segment_id": range(len(hypotheses)), "target": None, "rank": 0,
                              "hypothesis": hypotheses, "score": scores,
                              "features": [[s] for s in scores]}), path, NBEST)
    flip_a_bit(path, NBEST, "score")
    damaged = pq.read_table(path)["score"].to_numpy()  # unchecked, the damage goes unseen
    assert (damaged != scores).sum() == 1
    with pytest.raises(SchemaError, match=checksum_error(path)):
        read_table(path, NBEST)


def flip_a_bit(path: Path, schema: TableSchema, column: str) -> None:
    """Flip one bit in the middle of ``column``'s pages of the table at ``path``."""
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(schema.arrow.names.index(column))
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    data = bytearray(path.read_bytes())
    data[start + chunk.total_compressed_size // 2] ^= 0x10
    path.write_bytes(bytes(data))


def checksum_error(path: Path) -> str:
    return (re.escape(f"{path}: not a readable Parquet file (")
            + ".*CRC checksum verification failed")


def test_duckdb_reads_no_table_whose_checksums_fail(tmp_path):
    """A grammar of the tiny bitext's sentence pairs as rules, with a flipped bit in a feature."""
    bitext = tiny_bitext()
    features = np.random.default_rng(0).normal(size=(len(bitext), 5))  # incompressible pages
    path = tmp_path / "bilingual.parquet"
    write_table(pd.DataFrame({"lhs": "[X]", "source": bitext["source"],
                              "target": bitext["target"],
                              **dict(zip(GRAMMAR.arrow.names[3:], features.T, strict=True))}),
                path, GRAMMAR)
    filter_grammar(path, list(bitext["source"][:3]), tmp_path / "filtered.parquet")
    flip_a_bit(path, GRAMMAR, "log_p_f_given_e")
    with pytest.raises(SchemaError, match=checksum_error(path)):
        filter_grammar(path, list(bitext["source"][:3]), tmp_path / "filtered.parquet")


def test_a_write_removes_the_temporaries_a_killed_write_of_its_output_left(tmp_path):
    stale = [tmp_path / ".t.parquet.k3_9zq0a", tmp_path / ".t.parquet.0123abcd"]
    stale[0].write_bytes(b"half a table")
    stale[1].mkdir()  # an older scratch directory named like a temporary file
    kept = [tmp_path / name for name in (".u.parquet.k3_9zq0a", ".t.parquet.k3_9zq0a.x",
                                         ".t.parquet.scratch-k3_9zq0a", "t.parquet.k3_9zq0a")]
    for path in kept:
        path.write_bytes(b"another output's")
    write_table(bitext(), tmp_path / "t.parquet", BITEXT)
    assert not any(path.exists() for path in stale)
    assert all(path.exists() for path in kept)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["t.parquet",
                                                                 *(p.name for p in kept)])
    with atomic_path(tmp_path / "u.parquet"):  # also for the other files written atomically
        assert not kept[0].exists()


def test_a_scratch_directory_replaces_the_ones_killed_runs_left(tmp_path):
    stale = tmp_path / ".g.parquet.scratch-ab_12cd3"
    (stale / "spill").mkdir(parents=True)
    (stale / "spill" / "shard-000001.parquet").write_bytes(b"shard")
    neighbour = tmp_path / ".h.parquet.scratch-ab_12cd3"  # a job running beside this one
    neighbour.mkdir()
    with scratch_directory(tmp_path / "g.parquet") as scratch:
        assert scratch.is_dir() and scratch.name.startswith(".g.parquet.scratch-")
        assert not stale.exists() and neighbour.is_dir()
    assert not scratch.exists()
