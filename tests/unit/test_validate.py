"""The corpus validator on each kind of bad input: every problem names file and line."""

import codecs
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from circle.corpus.validate import MAX_PROBLEMS_PER_FILE, CorpusError, read_lines, read_parallel
from circle.preprocess import normalize

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny"


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


@pytest.mark.parametrize("bad_line", ["\x1a", "\x07", " \x1a\t\x07 "])
def test_a_line_that_tokenises_to_nothing_is_reported(tmp_path, bad_line):
    lines = (TINY / "tune.ref1.txt").read_text(encoding="utf-8").splitlines()
    lines[4] = bad_line
    path = write(tmp_path / "tune.ref1.txt", ("\n".join(lines) + "\n").encode())
    assert normalize(bad_line, "en") == ""
    with pytest.raises(CorpusError) as caught:
        read_parallel([TINY / "tune.es.txt", path], 2000)
    assert caught.value.problems == [f"{path}:5: no token left after tokenisation (the line "
                                     "holds only control characters)"]


def test_a_byte_order_mark_at_the_start_is_dropped(tmp_path):
    text = (TINY / "tune.ref0.txt").read_text(encoding="utf-8")
    path = write(tmp_path / "bom.txt", codecs.BOM_UTF8 + text.encode())
    lines, problems = read_lines(path, 2000)
    assert problems == [] and lines == text.splitlines()
    assert normalize(lines[0], "en").split()[0] == normalize(text, "en").split()[0]


def test_problems_are_capped_per_file_with_a_count_of_the_rest(tmp_path):
    text = (TINY / "train.es.txt").read_text(encoding="utf-8")
    path = write(tmp_path / "latin1.es", text.encode("latin-1"))
    expected = [f"{path}:{number}: invalid UTF-8 at byte "
                f"{next(i for i, char in enumerate(line) if not char.isascii())} of the line"
                for number, line in enumerate(text.splitlines(), 1) if not line.isascii()]
    assert len(expected) > MAX_PROBLEMS_PER_FILE
    lines, problems = read_lines(path, 2000)
    assert problems == [*expected[:MAX_PROBLEMS_PER_FILE],
                        f"{path}: {len(expected) - MAX_PROBLEMS_PER_FILE} more problem(s) "
                        "not shown"]
