"""Table plumbing shared by the grammar stages: input errors, schema checks, DuckDB, writing.

Grammar tables can hold tens of millions of rules, so the stages compute on them with DuckDB over
the Parquet files (out of core, with a memory limit and a spill directory) instead of loading them
with :func:`circle.core.tables.read_table`; :func:`grammar_schema` performs the same name/version
check first, and DuckDB reads tables only through :func:`checked_parquet`, which verifies their page
checksums as ``read_table`` does. Results are streamed to Parquet by :func:`write_relation`,
which writes exactly what :func:`circle.core.tables.write_table` would.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from circle.core.schemas import TableSchema
from circle.core.tables import (
    META_PREFIX,
    PARQUET_WRITE_OPTIONS,
    SchemaError,
    atomic_path,
    read_metadata,
    schema_by_name,
    verify_checksums,
)

if TYPE_CHECKING:  # imported by connect(): the light users (schema checks, the plan) need it not
    import duckdb


class GrammarInputError(ValueError):
    """Input to a grammar stage that cannot be used; the message names the file and the place."""


def grammar_schema(path: str | os.PathLike, allowed: tuple[TableSchema, ...]) -> TableSchema:
    """The schema of the table at ``path``, which must be one of ``allowed`` (name and version)."""
    if not Path(path).exists():
        raise FileNotFoundError(f"{path}: grammar table does not exist")
    meta = read_metadata(path)
    name, version = meta.get("schema"), meta.get("schema_version")
    names = [s.name for s in allowed]
    if name not in names:
        raise SchemaError(f"{path}: expected one of the schemas {names}, found '{name}'")
    schema = schema_by_name(name)
    if version != str(schema.version):
        raise SchemaError(f"{path}: schema '{name}' version {version} is not the current "
                          f"version {schema.version}")
    return schema


_PROVENANCE_KEYS = {"schema", "schema_version", "rule", "versions", "config_hash"}


def carried_metadata(path: str | os.PathLike) -> dict[str, str]:
    """The table-specific ``circle.*`` metadata of ``path`` (method, limits, bias, ...), without
    schema and provenance entries, for a table derived from it."""
    return {key: value for key, value in read_metadata(path).items()
            if key not in _PROVENANCE_KEYS}


DEFAULT_MEMORY_LIMIT = "4GB"
"""DuckDB's memory limit when none is given (its own default, 80 % of the RAM, is too much on a
shared machine; beyond the limit DuckDB spills to disk)."""


def connect(threads: int, memory_limit: str | None, temp_directory: str | os.PathLike
            ) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection that spills to ``temp_directory`` beyond ``memory_limit``
    (e.g. ``"4GB"``, default :data:`DEFAULT_MEMORY_LIMIT`), with the macros below.

    With ``threads=1`` floating-point sums are added in a fixed order, so reruns give
    bit-identical tables.
    """
    import duckdb

    con = duckdb.connect(config={"threads": threads, "preserve_insertion_order": False})
    con.execute("SET enable_progress_bar = false")
    con.execute(f"SET memory_limit = {sql_string(memory_limit or DEFAULT_MEMORY_LIMIT)}")
    con.execute(f"SET temp_directory = {sql_string(temp_directory)}")
    con.execute(CANONICAL_MACROS)
    return con


CANONICAL_MACROS = """
CREATE OR REPLACE MACRO swap_nonterminals(s) AS
    replace(replace(replace(s, ',1]', ',0]'), ',2]', ',1]'), ',0]', ',2]');
CREATE OR REPLACE MACRO is_swapped(s) AS
    position(',2]' IN s) > 0 AND position(',2]' IN s) < position(',1]' IN s);
CREATE OR REPLACE MACRO canonical(s) AS
    CASE WHEN is_swapped(s) THEN swap_nonterminals(s) ELSE s END;
CREATE OR REPLACE MACRO terminal_count(s) AS
    len(string_split(s, ' ')) - (len(s) - len(replace(replace(s, ',1]', ''), ',2]', ''))) // 3;
"""
"""SQL macros for the nonterminal conventions of :mod:`circle.core.schemas`.

``canonical`` renumbers an English side's nonterminals left to right (``[X,2] 's [X,1]`` →
``[X,1] 's [X,2]``) and ``is_swapped`` says whether that renumbering was needed; grammars have at
most two nonterminals, so renumbering is a swap. ``terminal_count`` is T(e) of thesis §3.2.2.
A nonterminal is found by its end ``,1]`` or ``,2]``, so the macros serve Hiero's ``[X,k]`` and
the labelled ``[NP,k]`` of a SAMT grammar alike (a label holds no ``,`` or ``]``,
:func:`circle.grammar.samt.escape_label`): a swap exchanges the indices and leaves each label
in its place (``[NP,2] 's [NN,1]`` → ``[NP,1] 's [NN,2]``). A terminal never holds ``]`` (the
tokeniser escapes it as ``&#93;``), so on a Hiero grammar the macros give what they gave when
they looked for ``[X,1]`` and ``[X,2]``.
"""


def write_relation(relation: duckdb.DuckDBPyRelation, path: str | os.PathLike,
                   schema: TableSchema, provenance: Mapping[str, str] | None,
                   metadata: Mapping[str, str] | None = None) -> int:
    """Stream a DuckDB relation into a table of ``schema``; returns the number of rows.

    The streaming counterpart of :func:`circle.core.tables.write_table` (same strict cast, same
    ``circle.*`` metadata, same page checksums, same atomic replace) for tables too large to hold
    as one frame.
    """
    with RelationWriter(path, schema, provenance, metadata) as writer:
        writer.write(relation)
    return writer.rows


class RelationWriter:
    """One table of ``schema`` written from several DuckDB relations or Arrow tables in turn
    (the parts of a partitioned computation, in order), as :func:`write_relation` writes one;
    the file appears at ``path`` only when the ``with`` block ends without an error."""

    def __init__(self, path: str | os.PathLike, schema: TableSchema,
                 provenance: Mapping[str, str] | None,
                 metadata: Mapping[str, str] | None = None, batch_size: int = 1 << 20):
        self.path, self.schema, self.batch_size = path, schema, batch_size
        self.meta = {f"{META_PREFIX}schema": schema.name,
                     f"{META_PREFIX}schema_version": str(schema.version)}
        for key, value in {**(provenance or {}), **(metadata or {})}.items():
            self.meta[f"{META_PREFIX}{key}"] = value
        self.rows = 0

    def __enter__(self) -> RelationWriter:
        self._atomic = atomic_path(self.path)
        tmp = self._atomic.__enter__()
        self._writer = pq.ParquetWriter(tmp, self.schema.arrow.with_metadata(self.meta),
                                        **PARQUET_WRITE_OPTIONS)
        return self

    def write(self, rows: duckdb.DuckDBPyRelation | pa.Table) -> int:
        """Append the rows of a relation or Arrow table; returns how many."""
        batches = (rows.to_batches(self.batch_size) if isinstance(rows, pa.Table)
                   else rows.to_arrow_reader(self.batch_size))
        written = 0
        for batch in batches:
            try:
                table = pa.Table.from_batches([batch]).cast(self.schema.arrow)
            except (pa.ArrowInvalid, ValueError) as error:
                raise SchemaError(f"{self.path}: cannot store rows as schema "
                                  f"'{self.schema.name}': {error}") from None
            self._writer.write_table(table)
            written += table.num_rows
        self.rows += written
        return written

    def __exit__(self, *exc_info) -> bool | None:
        self._writer.close()
        return self._atomic.__exit__(*exc_info)


def checked_parquet(paths: str | os.PathLike | Sequence[str | os.PathLike]) -> str:
    """DuckDB's ``read_parquet`` of the pipeline table(s) ``paths``, once every page's
    checksum has been verified (:func:`circle.core.tables.verify_checksums`)."""
    paths = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    for path in paths:
        verify_checksums(path)
    return f"read_parquet([{', '.join(sql_string(path) for path in paths)}])"


def sql_string(text: str | os.PathLike) -> str:
    """``text`` as a quoted SQL string literal."""
    return "'" + str(text).replace("'", "''") + "'"
