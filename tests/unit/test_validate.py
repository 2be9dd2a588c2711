"""The corpus validator on each kind of bad input: every problem names file and line."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from circle.corpus.validate import CorpusError, read_lines, read_parallel


def write(path, data: bytes):
    path.write_bytes(data)
    return path


def test_good_files_are_read(tmp_path):
    src = write(tmp_path / "a.es", "uno\ndos ñ\n".encode())
    tgt = tmp_path / "a.parquet"
    pq.write_table(pa.table({"text": ["one", "two"]}), tgt)
    assert read_parallel([src, tgt], 100) == [["uno", "dos ñ"], ["one", "two"]]


@pytest.mark.parametrize("data, problem", [
    (b"good\n\xff\xfe bad\n", r":2: invalid UTF-8 at byte 0"),
    (b"good\n\nthird\n", r":2: empty or whitespace-only line"),
    (b"good\n \t \nthird\n", r":2: empty or whitespace-only line"),
    (b"good\n" + b"x" * 31 + b"\n", r":2: line has 31 characters, more than the limit of 30"),
])
def test_each_bad_line_kind_is_reported_with_file_and_line(tmp_path, data, problem):
    path = write(tmp_path / "bad.txt", data)
    with pytest.raises(CorpusError, match=str(path).replace(".", r"\.") + problem):
        read_parallel([path], 30)


def test_missing_file(tmp_path):
    with pytest.raises(CorpusError, match=r"nope\.txt: file does not exist"):
        read_parallel([tmp_path / "nope.txt"], 30)


def test_line_count_mismatch_names_both_files(tmp_path):
    src = write(tmp_path / "s.txt", b"a\nb\nc\n")
    ref = write(tmp_path / "r.txt", b"a\nb\n")
    with pytest.raises(CorpusError, match=r"r\.txt: has 2 lines but .*s\.txt has 3"):
        read_parallel([src, ref], 30)


def test_all_problems_of_all_files_are_collected(tmp_path):
    src = write(tmp_path / "s.txt", b"a\n\n")
    ref = write(tmp_path / "r.txt", b"a\nb\xff\n")
    with pytest.raises(CorpusError) as caught:
        read_parallel([src, ref], 30)
    assert len(caught.value.problems) == 2


def test_parquet_without_text_column(tmp_path):
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"sentence": ["a"]}), path)
    lines, problems = read_lines(path, 30)
    assert problems == [f"{path}: Parquet file has no 'text' column (columns: ['sentence'])"]


def test_parquet_null_is_an_empty_line(tmp_path):
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"text": ["a", None]}), path)
    assert read_lines(path, 30)[1] == [f"{path}:2: empty or whitespace-only line"]
