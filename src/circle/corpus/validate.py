"""Validation of user-supplied corpus files before any work is done.

Every problem is reported as ``path:line: problem`` so that a user can open the file at the right
place; all problems of all files are collected and raised together as one :class:`CorpusError`,
at most :data:`MAX_PROBLEMS_PER_FILE` per file.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from circle.core.tables import SchemaError, parquet_errors
from circle.corpus.preprocess import has_tokens

MAX_PROBLEMS_PER_FILE = 10
PARQUET_TEXT_COLUMN = "text"
BYTE_ORDER_MARK = "\ufeff"
UTF16_HINT = "; is the file UTF-16 (it must be UTF-8)?"


class CorpusError(ValueError):
    """One or more corpus files are unusable; the message lists every problem found."""

    def __init__(self, problems: Sequence[str]):
        self.problems = list(problems)
        super().__init__("invalid corpus input:\n  " + "\n  ".join(self.problems))


def read_lines(path: str | Path, max_chars: int) -> tuple[list[str], list[str]]:
    """Read one sentence per line from a text or Parquet file; return (lines, problems).

    Text files must be UTF-8 (a byte-order mark at the start is dropped); Parquet files must have
    a string column named ``text`` and no other (a ``segment_id`` or ``document`` column would
    be ignored, the rows paired by their order), a row per line. Lines are stripped of the
    trailing newline only; the tokeniser brings them to Unicode NFC
    (:func:`circle.corpus.preprocess.normalize`).
    Problems: missing or empty file, invalid UTF-8, a NUL byte (UTF-16 read as UTF-8), empty or
    whitespace-only line, line longer than ``max_chars`` characters, a line break inside a line
    (a Parquet cell holds one segment), line that tokenises to nothing (only control
    characters) or holds only invisible characters (format characters such as zero-width
    spaces and bidi marks, controls, spaces).
    """
    path = Path(path)
    if not path.is_file():
        return [], [f"{path}: file does not exist"]
    if path.suffix == ".parquet":
        lines, problems = _read_parquet_lines(path)
    else:
        with path.open("rb") as handle:
            lines, problems = decode_lines(handle, path)
    if not lines and not problems:
        problems.append(f"{path}: file is empty; every corpus file needs at least one line")
    for number, line in enumerate(lines, start=1):
        if line is None or not line.strip():
            problems.append(f"{path}:{number}: empty or whitespace-only line")
        elif len(line) > max_chars:
            problems.append(f"{path}:{number}: line has {len(line)} characters, more than the "
                            f"limit of {max_chars} (validation.max_line_chars)")
        elif "\0" in line:
            problems.append(f"{path}:{number}: NUL character at character "
                            f"{line.index(chr(0)) + 1} of the line")
        elif len(line.splitlines()) > 1:
            problems.append(f"{path}:{number}: line break inside the line (a segment is one "
                            "line)")
        elif not has_tokens(line):
            problems.append(f"{path}:{number}: no token left after tokenisation (the line holds "
                            "only control characters)")
        elif all(unicodedata.category(char)[0] in "CZ" for char in line):
            problems.append(f"{path}:{number}: only invisible characters (format, control or "
                            "space characters)")
    return lines, limit_problems(path, problems)


def decode_lines(raw_lines: Iterable[bytes], path: str | Path) -> tuple[list[str], list[str]]:
    """UTF-8 lines of ``path`` without their line ends (and without a byte-order mark at the
    start); return (lines, problems), a problem per line that is not UTF-8 or holds a NUL byte
    (:func:`decoded_lines`)."""
    lines, problems = [], []
    for line, problem in decoded_lines(raw_lines, path):
        lines.append(line)
        if problem is not None:
            problems.append(problem)
    return lines, problems


def decoded_lines(raw_lines: Iterable[bytes], path: str | Path
                  ) -> Iterator[tuple[str, str | None]]:
    """Each line of ``path`` as it is read, UTF-8 decoded without its line end (and without a
    byte-order mark at the start), with its problem or None: invalid UTF-8, or a NUL byte
    (which the tokeniser would delete, gluing two words: a UTF-16 file has one per ASCII
    character), as ``path:line: problem``; the line is then '<invalid>'."""
    for number, raw in enumerate(raw_lines, start=1):
        try:
            line = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as error:
            yield "<invalid>", (f"{path}:{number}: invalid UTF-8 at byte {error.start} of the "
                                f"line{UTF16_HINT if 0 in raw else ''}")
            continue
        if 0 in raw:
            yield "<invalid>", (f"{path}:{number}: NUL byte at byte {raw.index(0)} of the line"
                                f"{UTF16_HINT}")
            continue
        yield (line.removeprefix(BYTE_ORDER_MARK) if number == 1 else line), None


def limit_problems(path: str | Path, problems: list[str]) -> list[str]:
    """The first :data:`MAX_PROBLEMS_PER_FILE` problems of a file and a count of the others."""
    if len(problems) <= MAX_PROBLEMS_PER_FILE:
        return problems
    hidden = len(problems) - MAX_PROBLEMS_PER_FILE
    return [*problems[:MAX_PROBLEMS_PER_FILE], f"{path}: {hidden} more problem(s) not shown"]


def _read_parquet_lines(path: Path) -> tuple[list[str], list[str]]:
    try:
        with parquet_errors(path):
            table = pq.read_table(path)
    except SchemaError as error:
        return [], [str(error)]
    if PARQUET_TEXT_COLUMN not in table.column_names:
        return [], [f"{path}: Parquet file has no '{PARQUET_TEXT_COLUMN}' column "
                    f"(columns: {table.column_names})"]
    if others := [name for name in table.column_names if name != PARQUET_TEXT_COLUMN]:
        return [], [f"{path}: Parquet file has columns {others} besides "
                    f"'{PARQUET_TEXT_COLUMN}'; circle reads only '{PARQUET_TEXT_COLUMN}' and "
                    "pairs a set's files by row order, so write the file with the "
                    f"'{PARQUET_TEXT_COLUMN}' column alone, its rows in the order of the other "
                    "files (document ids go in the set's documents file)"]
    column = table.column(PARQUET_TEXT_COLUMN)
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        return [], [f"{path}: Parquet column '{PARQUET_TEXT_COLUMN}' holds {column.type}, not "
                    "strings"]
    return column.to_pylist(), []


def read_parallel(paths: Sequence[str | Path], max_chars: int) -> list[list[str]]:
    """Read line-parallel files (a source and its targets or references) and validate them.

    Raises :class:`CorpusError` listing every problem, including a line-count mismatch against
    the first file.
    """
    columns, problems = [], []
    for path in paths:
        lines, file_problems = read_lines(path, max_chars)
        columns.append(lines)
        problems.extend(file_problems)
    first = columns[0]
    for path, lines in zip(paths[1:], columns[1:], strict=True):
        if lines and first and len(lines) != len(first):
            problems.append(f"{path}: has {len(lines)} lines but {paths[0]} has {len(first)}; "
                            "the files must be line-parallel")
    if problems:
        raise CorpusError(problems)
    return columns
