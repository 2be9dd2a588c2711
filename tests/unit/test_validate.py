"""The corpus validator on each kind of bad input: every problem names file and line."""

import codecs
import unicodedata
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from circle.corpus.preprocess import normalize
from circle.corpus.validate import MAX_PROBLEMS_PER_FILE, CorpusError, read_lines, read_parallel

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


def tiny_with_line(tmp_path: Path, name: str, number: int, line: str) -> Path:
    """The tiny corpus file ``name`` with line ``number`` (1-based) replaced by ``line``."""
    lines = (TINY / name).read_text(encoding="utf-8").splitlines()
    lines[number - 1] = line
    return write(tmp_path / name, ("\n".join(lines) + "\n").encode())


@pytest.mark.parametrize("line, problem", [
    ("el\x00principio", ":3: NUL byte at byte 2 of the line; is the file UTF-16"),
    ("\u200b\u200e", ":3: only invisible characters (format, control or space characters)"),
    ("\u2066\u2069\u00a0", ":3: only invisible characters"),
    ("en el\u2028principio", ":3: line break inside the line (a segment is one line)"),
], ids=["nul", "zero-width", "bidi", "line-separator"])
def test_a_line_that_would_be_read_wrong_is_refused(tmp_path, line, problem):
    path = tiny_with_line(tmp_path, "tune.es.txt", 3, line)
    with pytest.raises(CorpusError) as caught:
        read_parallel([path, TINY / "tune.ref0.txt"], 2000)
    [found] = caught.value.problems
    assert found.startswith(f"{path}{problem}")


def test_a_utf16_file_without_byte_order_mark_is_named_as_such(tmp_path):
    text = (TINY / "tune.ref0.txt").read_text(encoding="utf-8")
    path = write(tmp_path / "utf16.txt", text.encode("utf-16-le"))
    lines, problems = read_lines(path, 2000)
    assert len(problems) == MAX_PROBLEMS_PER_FILE + 1
    assert all("is the file UTF-16 (it must be UTF-8)?" in p for p in problems[:-1])
    assert problems[0].startswith(f"{path}:1: NUL byte at byte 1 of the line")


def parquet_text(tmp_path: Path, values) -> Path:
    path = tmp_path / "text.parquet"
    pq.write_table(pa.table({"text": values}), path)
    return path


def test_a_parquet_cell_with_a_line_break_is_refused(tmp_path):
    lines = (TINY / "tune.ref0.txt").read_text(encoding="utf-8").splitlines()
    path = parquet_text(tmp_path, [lines[0] + "\n" + lines[1], *lines[2:]])
    assert read_lines(path, 2000)[1] == [
        f"{path}:1: line break inside the line (a segment is one line)"]


def test_a_parquet_text_column_of_integers_is_refused(tmp_path):
    path = parquet_text(tmp_path, list(range(5)))
    assert read_lines(path, 2000) == ([], [
        f"{path}: Parquet column 'text' holds int64, not strings"])


def test_empty_files_are_named_instead_of_failing_later(tmp_path):
    source = write(tmp_path / "tune.es.txt", b"")
    with pytest.raises(CorpusError) as caught:
        read_parallel([source, TINY / "tune.ref0.txt", TINY / "tune.ref1.txt"], 2000)
    assert caught.value.problems == [
        f"{source}: file is empty; every corpus file needs at least one line"]
    references = [write(tmp_path / f"ref{i}.txt", b"") for i in range(2)]
    with pytest.raises(CorpusError) as caught:
        read_parallel([source, *references], 2000)
    assert len(caught.value.problems) == 3


def test_decomposed_accents_tokenise_as_their_composed_letters():
    line = (TINY / "tune.es.txt").read_text(encoding="utf-8").splitlines()[0]
    decomposed = unicodedata.normalize("NFD", line)
    assert decomposed != line
    assert normalize(decomposed, "es") == normalize(line, "es")
