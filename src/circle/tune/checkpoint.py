"""Per-iteration checkpoints of a tuning run, so that a killed run resumes at the iteration
where it stopped instead of at MERT iteration 1 (:func:`circle.tune.loop.tune`).

A checkpoint is a directory next to the run's output. After every iteration, the last one
included, the loop writes one file ``iteration-NNNN.parquet`` into it
(:data:`~circle.core.schemas.TUNING_CHECKPOINT`, atomically): the n-best pool rows that joined in
that iteration with their features and frozen metric statistics (against each hypothesis' own
references, as a per-hypothesis reference hook gave them), the iteration's log row, and the
weights the next iteration decodes with. The loop's random generators depend on the seed and
the iteration number alone (:meth:`~circle.tune.loop.TuningSettings.iteration_rng`), so these
files are the run's whole state: a resumed run returns the same weights and log as a run that
was never interrupted (one whose last saved iteration ended the run only returns its result).
A run fanned out over jobs (:mod:`circle.tune.fanout`) writes the same files, one job each.

Every file carries a fingerprint of what the run depends on: the caller's key (e.g. the job's
input files and parameters, :meth:`Checkpoint.for_output`) and the loop's own arguments. A
checkpoint with another fingerprint, a missing iteration or an unreadable file is removed with
a log line, and the run starts at iteration 1. The caller removes the checkpoint once the run's
outputs are written.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from circle.core.schemas import TUNING_CHECKPOINT
from circle.core.tables import SchemaError, read_metadata, read_table, write_table

logger = logging.getLogger(__name__)

_FILE = re.compile(r"iteration-(\d+)\.parquet")


@dataclass(frozen=True)
class SavedIteration:
    """One finished iteration: its log row (a dict of :class:`~circle.tune.loop.IterationLog`
    fields), the weights the next iteration decodes with, and the pool rows it added."""

    log: dict[str, Any]
    next_weights: np.ndarray
    sentences: list[int]
    hypotheses: list[str]
    features: np.ndarray
    stats: np.ndarray

    @property
    def iteration(self) -> int:
        return int(self.log["iteration"])

    @property
    def stop_reason(self) -> str | None:
        """Why the run stopped after this iteration (None: it went on)."""
        return self.log["stop_reason"]


class StaleIteration(ValueError):
    """A saved iteration of another run (other inputs or settings)."""


def read_iteration(path: str | os.PathLike, fingerprint: str) -> SavedIteration:
    """One saved iteration; refuses (:class:`StaleIteration`) a file written for another
    fingerprint, and an unreadable one (:class:`~circle.core.tables.SchemaError`)."""
    meta = read_metadata(path)
    if meta.get("fingerprint") != fingerprint:
        raise StaleIteration(f"{Path(path).name} was written for other inputs or settings")
    table = read_table(path, TUNING_CHECKPOINT)
    width = len(json.loads(meta["next_weights"]))
    return SavedIteration(
        json.loads(meta["log"]), np.array(json.loads(meta["next_weights"])),
        table["sentence"].tolist(), table["hypothesis"].tolist(),
        np.array(table["features"].tolist(), dtype=np.float64).reshape(len(table), width),
        np.array(table["stats"].tolist(), dtype=np.float64).reshape(
            len(table), len(table["stats"].iloc[0]) if len(table) else 0))


def ended(path: str | os.PathLike) -> bool:
    """Whether the saved iteration ``path`` ended its run."""
    return json.loads(read_metadata(path)["log"])["stop_reason"] is not None


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Checkpoint:
    """The checkpoint directory of one tuning run; ``key`` identifies what the loop cannot see
    (the grammar and LM files, what a reference hook depends on)."""

    def __init__(self, directory: str | os.PathLike, key: str = ""):
        self.directory, self.key = Path(directory), key

    @classmethod
    def for_output(cls, output: str | os.PathLike, inputs: Iterable[str | os.PathLike],
                   params: Mapping[str, Any]) -> Checkpoint:
        """The checkpoint of the run writing ``output``: ``<output stem>.checkpoint/`` next to
        it, keyed by the input files (path, size, modification time: a rebuilt input voids the
        checkpoint) and the job's parameters."""
        files = []
        for path in inputs:
            info = os.stat(path)
            files.append([str(path), info.st_size, info.st_mtime_ns])
        return cls(Path(output).with_suffix(".checkpoint"), _digest([files, dict(params)]))

    def fingerprint(self, run: Mapping[str, Any]) -> str:
        """The fingerprint of this checkpoint's key and the loop's arguments ``run``."""
        return _digest([self.key, dict(run)])

    def _files(self) -> list[tuple[int, Path]]:
        if not self.directory.is_dir():
            return []
        found = ((_FILE.fullmatch(path.name), path) for path in self.directory.iterdir())
        return sorted((int(match.group(1)), path) for match, path in found if match)

    def load(self, fingerprint: str) -> list[SavedIteration]:
        """The saved iterations 1, 2, ... of a run with ``fingerprint``; none (and the
        checkpoint removed) if it holds another run's, a gap or an unreadable file."""
        saved: list[SavedIteration] = []
        problem = None
        for expected, (number, path) in enumerate(self._files(), start=1):
            if number != expected:
                problem = f"iteration {expected} is missing"
                break
            try:
                saved.append(read_iteration(path, fingerprint))
            except (SchemaError, StaleIteration) as error:
                problem = str(error)
                break
        if problem is not None:
            logger.warning("ignoring the checkpoint %s (%s): starting at iteration 1",
                           self.directory, problem)
            self.remove()
            return []
        if saved:
            logger.info("resuming from the checkpoint %s: continuing at iteration %d "
                        "(iterations 1 to %d were done)", self.directory, len(saved) + 1,
                        len(saved))
        return saved

    def path(self, iteration: int) -> Path:
        """The file of iteration ``iteration``."""
        return self.directory / f"iteration-{iteration:04d}.parquet"

    def save(self, fingerprint: str, saved: SavedIteration,
             provenance: Mapping[str, str] | None = None) -> None:
        """Write one finished iteration (atomically)."""
        frame = pd.DataFrame({"sentence": pd.Series(saved.sentences, dtype="int64"),
                              "hypothesis": pd.Series(saved.hypotheses, dtype=object),
                              "features": pd.Series(list(saved.features), dtype=object),
                              "stats": pd.Series(list(saved.stats), dtype=object)})
        metadata = {"fingerprint": fingerprint, "iteration": str(saved.iteration),
                    "log": json.dumps(saved.log),
                    "next_weights": json.dumps(saved.next_weights.tolist())}
        write_table(frame, self.path(saved.iteration), TUNING_CHECKPOINT, provenance, metadata)

    def remove(self) -> None:
        """Delete the checkpoint (once the run's outputs are written, or when it is stale)."""
        if self.directory.exists():
            shutil.rmtree(self.directory)
