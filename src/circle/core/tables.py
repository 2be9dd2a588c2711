"""Reading and writing the pipeline's Parquet tables.

Every table is written through :func:`write_table`: it is cast to its schema from
:mod:`circle.core.schemas` (a wrong column or type is an error, not a silent conversion), stamped
with provenance in the Parquet key/value metadata, and written atomically (a temporary file in the
same directory, then ``os.replace``), so that an interrupted job never leaves a half-written table
that a rerun would trust. Every data page carries a CRC-32 checksum (:data:`PARQUET_WRITE_OPTIONS`),
which :func:`read_table` verifies, as it checks the schema name and version, before returning data.

Temporaries live next to their output and are named after it: ``.<name>.XXXXXXXX`` for the file
that :func:`atomic_path` renames into place, ``.<name>.scratch-XXXXXXXX`` for a step's
:func:`scratch_directory`. A killed job leaves them behind; the next write of the same output
removes its own leftovers first, and nothing else.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from circle.core.schemas import ALL_SCHEMAS, TableSchema

logger = logging.getLogger(__name__)

META_PREFIX = "circle."
PARQUET_WRITE_OPTIONS: dict[str, Any] = {"compression": "zstd", "write_page_checksum": True}
"""How pyarrow writes every pipeline table: zstd pages, each with its CRC-32 checksum."""
_RANDOM_PART = "[a-z0-9_]{8}"  # the random part of :mod:`tempfile`'s names
TRACKED_PACKAGES = ("circle", "numpy", "pandas", "pyarrow", "sacrebleu", "sacremoses", "kenlm",
                    "eflomal", "snakemake")


class SchemaError(ValueError):
    """A table is unreadable or does not have the schema its reader or writer expects."""


@contextmanager
def parquet_errors(path: str | os.PathLike) -> Iterator[None]:
    """Turn the errors of reading ``path`` with pyarrow (truncated, corrupt, not Parquet) into a
    :class:`SchemaError` naming the file."""
    try:
        yield
    except (pa.ArrowException, OSError) as error:
        raise SchemaError(f"{path}: not a readable Parquet file ({error})") from None


def remove_unreadable_tables(directory: str | os.PathLike, is_output: Callable[[str], bool],
                             dry_run: bool) -> dict[str, str]:
    """Remove the Parquet files under ``directory`` whose footer cannot be read (truncated,
    overwritten, not Parquet) and that the workflow makes (``is_output`` of the path), and
    return each one's path and problem, ``path: not a readable Parquet file (...); removed it``
    (on a read-only tree, why it could not be removed; with ``dry_run``, that a run removes
    it: a dry run changes nothing), for the workflow to rebuild them (the workflow forces their
    jobs, so that the outputs made from them are rebuilt too). Files no rule makes (a user's
    own) and hidden files (a running job's temporaries) are left alone. Only footers are read,
    so this is fast. Every table is written atomically, so an unreadable one was damaged after
    its job finished, not caught while being written."""
    directory = Path(directory)
    problems = {}
    for path in sorted(directory.rglob("*.parquet")):
        if any(part.startswith(".") for part in path.relative_to(directory).parts):
            continue
        try:
            with parquet_errors(path):
                pq.read_metadata(path)
        except SchemaError as error:
            if not is_output(str(path)):
                continue
            if dry_run:
                problems[str(path)] = f"{error}; a run would remove it (a dry run removes nothing)"
                continue
            try:
                path.unlink()
                problems[str(path)] = f"{error}; removed it"
            except OSError as failure:
                problems[str(path)] = f"{error}; could not remove it ({failure.strerror})"
    return problems


def config_hash(config: Mapping[str, Any]) -> str:
    """A short, stable hash of a (JSON-serialisable) configuration mapping."""
    text = json.dumps(config, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def package_versions() -> dict[str, str]:
    """Versions of the packages whose behaviour shapes the tables."""
    versions = {}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def provenance(rule: str, config: Mapping[str, Any] | None = None,
               **extra: Any) -> dict[str, str]:
    """Provenance entries for :func:`write_table`: rule, config hash, package versions, extras.

    Deliberately free of timestamps and host names, so that a rerun writes identical files.
    """
    entries = {"rule": rule, "versions": json.dumps(package_versions(), sort_keys=True)}
    if config is not None:
        entries["config_hash"] = config_hash(config)
    for key, value in extra.items():
        entries[key] = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return entries


def remove_leftovers(path: Path, infix: str = "") -> None:
    """Remove the temporaries ``.<name>.<infix>XXXXXXXX`` of output ``path`` that a killed job
    left next to it (files or directories); other names, the neighbours' included, are kept."""
    pattern = re.compile(re.escape(f".{path.name}.{infix}") + _RANDOM_PART)
    if not path.parent.is_dir():
        return
    for leftover in path.parent.iterdir():
        if pattern.fullmatch(leftover.name):
            logger.info("removing %s, left behind by an interrupted job", leftover)
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover)
            else:
                leftover.unlink()


class ScratchSpaceError(OSError):
    """A step's output directory has less free disk than the step is known to need."""


@contextmanager
def scratch_directory(path: str | os.PathLike, needs_bytes: int = 0,
                      purpose: str = "its scratch files") -> Iterator[Path]:
    """A temporary directory next to output ``path`` for a step's scratch files (shards, DuckDB
    spill), removed at the end; the scratch directories of earlier, killed runs go first.
    Raises :class:`ScratchSpaceError` before any work if the disk holding ``path`` has fewer
    than ``needs_bytes`` free (the step's scratch and output together, ``purpose`` says why)."""
    path = Path(path)
    remove_leftovers(path, "scratch-")
    path.parent.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(path.parent).free
    if free < needs_bytes:
        raise ScratchSpaceError(
            f"{path}: {purpose} need about {needs_bytes / 2**30:.1f} GB of free disk in "
            f"{path.parent}, which has {free / 2**30:.1f} GB; free some, or run the workflow "
            "on a larger disk, before this step starts")
    with tempfile.TemporaryDirectory(prefix=f".{path.name}.scratch-", dir=path.parent) as tmp:
        yield Path(tmp)


def atomic_path(path: str | os.PathLike) -> _AtomicPath:
    """Context manager yielding a temporary path that replaces ``path`` on success; the
    temporary files of earlier, killed writes of ``path`` are removed first."""
    return _AtomicPath(Path(path))


class _AtomicPath:
    def __init__(self, path: Path):
        self.path = path
        self.tmp: Path | None = None

    def __enter__(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        remove_leftovers(self.path)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        os.close(fd)
        self.tmp = Path(tmp)
        return self.tmp

    def __exit__(self, exc_type, exc, tb) -> None:
        assert self.tmp is not None
        if exc_type is None:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(self.tmp, 0o666 & ~umask)  # mkstemp creates files private to the owner
            os.replace(self.tmp, self.path)
        else:
            self.tmp.unlink(missing_ok=True)


def write_table(frame: pd.DataFrame, path: str | os.PathLike, schema: TableSchema,
                provenance: Mapping[str, str] | None = None,
                metadata: Mapping[str, str] | None = None) -> None:
    """Write ``frame`` as ``schema`` to ``path`` atomically, with provenance in the metadata.

    ``metadata`` holds table-specific facts (e.g. ``reference_names``); ``provenance`` is from
    :func:`provenance`. Both are stored under the ``circle.`` prefix.
    """
    missing = [n for n in schema.arrow.names if n not in frame.columns]
    extra = [c for c in frame.columns if c not in schema.arrow.names]
    if missing or extra:
        raise SchemaError(f"{path}: table for schema '{schema.name}' has missing columns "
                          f"{missing} and unexpected columns {extra}")
    try:
        table = pa.Table.from_pandas(frame[schema.arrow.names], schema=schema.arrow,
                                     preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as error:
        raise SchemaError(f"{path}: cannot store rows as schema '{schema.name}': {error}") from None
    meta = {f"{META_PREFIX}schema": schema.name,
            f"{META_PREFIX}schema_version": str(schema.version)}
    for key, value in {**(provenance or {}), **(metadata or {})}.items():
        meta[f"{META_PREFIX}{key}"] = value
    table = table.replace_schema_metadata(meta)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, **PARQUET_WRITE_OPTIONS)


def read_metadata(path: str | os.PathLike) -> dict[str, str]:
    """The ``circle.*`` metadata of a table, keys without the prefix."""
    with parquet_errors(path):
        raw = pq.read_schema(path).metadata or {}
    return {k.decode()[len(META_PREFIX):]: v.decode() for k, v in raw.items()
            if k.decode().startswith(META_PREFIX)}


def read_table(path: str | os.PathLike, schema: TableSchema,
               columns: list[str] | None = None) -> pd.DataFrame:
    """Read a table written by :func:`write_table`, checking its schema name and version and
    its pages' checksums."""
    _check_schema(path, schema)
    with parquet_errors(path):
        return pq.read_table(path, columns=columns,
                             page_checksum_verification=True).to_pandas()


def read_batches(path: str | os.PathLike, schema: TableSchema, columns: list[str],
                 rows: int) -> Iterator[pa.RecordBatch]:
    """:func:`read_table` as Arrow record batches of at most ``rows`` rows, for a large table
    that is read whole but need not be held whole as it was written (a grammar)."""
    _check_schema(path, schema)
    with parquet_errors(path):
        yield from pq.ParquetFile(path, page_checksum_verification=True).iter_batches(
            batch_size=rows, columns=columns)


def verify_checksums(path: str | os.PathLike) -> None:
    """Read every page of ``path`` once, verifying its CRC-32 checksum as :func:`read_table`
    does, for a table that another reader (DuckDB, which does not verify them) then reads:
    a damaged page raises :class:`SchemaError` naming the file instead of becoming data."""
    with parquet_errors(path):
        for _ in pq.ParquetFile(path, page_checksum_verification=True).iter_batches(
                batch_size=VERIFY_BATCH_ROWS):
            pass


VERIFY_BATCH_ROWS = 1 << 16
"""Rows :func:`verify_checksums` holds at a time."""


def _check_schema(path: str | os.PathLike, schema: TableSchema) -> None:
    if not Path(path).exists():
        raise FileNotFoundError(f"{path}: table '{schema.name}' does not exist")
    meta = read_metadata(path)
    found = (meta.get("schema"), meta.get("schema_version"))
    if found != (schema.name, str(schema.version)):
        raise SchemaError(f"{path}: expected schema '{schema.name}' version {schema.version}, "
                          f"found '{found[0]}' version {found[1]}")


def schema_by_name(name: str) -> TableSchema:
    try:
        return ALL_SCHEMAS[name]
    except KeyError:
        raise SchemaError(f"unknown table schema '{name}'; known: {sorted(ALL_SCHEMAS)}") from None


def parquet_rows(path: str | os.PathLike) -> int:
    """Rows of a Parquet table, from its footer."""
    return pq.ParquetFile(path).metadata.num_rows
