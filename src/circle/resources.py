"""What a job asks of a node: memory that follows its threads and its data.

A cluster job is killed when it outgrows its memory request and waits forever when the request
exceeds every node, so each rule's request is a model of what it really uses, not a constant:

    request = headroom * (base + per_thread * threads + per_pair * training pairs)   [MB]

``threads`` is the job's final thread count, after ``--max-threads`` (which fits every job to a
smaller node) and ``--set-threads`` (more decoder workers on a larger one): a decoder pool loads
the grammar into every worker, so memory grows with the workers. Of grammar extraction only the
split grows with the training bitext (it holds it); a counting job holds one batch of it, and
the merge hands DuckDB a fixed share of its request and spills the rest.

The coefficients come from the default experiment (27.6 k training pairs, 2 threads): the
peak PSS of every job of ``make run`` and ``snakemake paper_tables`` in Snakemake's benchmark
files (in MB: tune_translation 3,505 for targeted runs and 1,480 for the others, score_iterations
1,430, paraphrase_references 1,216, grid_row 1,151, decode_shard 1,082 with one decoder, pivot
3,865, filter 1,802); a decoder pool of two workers costs about 400 MB more than one decoder
(1,480 against 1,082), a targeted one 1,400 MB per worker, and the per-thread terms below
round these up. Extraction's jobs were measured at 25/50/100 % of the training pairs with
``benchmarks/grammar.py --extract-only`` (peak RSS in MiB: split 204/212/232, the largest
counting job 894/1,120/1,106, the merge within its 3,000 MB request 1,957/2,010/2,105).
``python benchmarks/memory_requests.py results/<experiment>`` prints each rule's measured peak
beside its request for any finished run.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import pyarrow.parquet as pq

HEADROOM = 1.25
"""Requests exceed the measured peaks by this factor (peaks vary between runs and inputs)."""


@dataclass(frozen=True)
class MemoryModel:
    """One rule's memory: a fixed part, a part per thread (worker) and one per training pair."""

    base_mb: float
    per_thread_mb: float = 0.0
    per_pair_mb: float = 0.0

    def request_mb(self, threads: int = 1, pairs: int = 0) -> int:
        """The job's ``mem_mb``: the model at ``threads`` and ``pairs``, with :data:`HEADROOM`,
        rounded up to 100 MB."""
        if threads < 1 or pairs < 0:
            raise ValueError(f"threads must be >= 1 and pairs >= 0, not {threads}, {pairs}")
        peak = self.base_mb + self.per_thread_mb * threads + self.per_pair_mb * pairs
        return int(math.ceil(HEADROOM * peak / 100.0)) * 100


def parquet_rows(path: str | os.PathLike) -> int:
    """Rows of a Parquet table, from its footer."""
    return pq.ParquetFile(path).metadata.num_rows


DUCKDB_SHARE = 0.6
"""The share of its request the extraction merge hands DuckDB as its memory limit: DuckDB's
resident memory exceeds its limit (by 25 % at 2,100 MB when merging the default grammar)."""


def duckdb_limit(request_mb: int) -> str:
    """The DuckDB memory limit of a job that may use ``request_mb`` in all."""
    return f"{int(request_mb * DUCKDB_SHARE)}MB"


MEMORY = {
    # Extraction: the split holds the training bitext; a counting job one batch of it
    # (grammar.batch_size); the merge spills what exceeds its request (duckdb_limit).
    "split_for_counting": MemoryModel(base_mb=200, per_pair_mb=0.0015),
    "count_rules": MemoryModel(base_mb=1120),
    "extract_grammar": MemoryModel(base_mb=2400),
    # The other out-of-core stages hand their request to DuckDB as its memory limit.
    "filter_grammar": MemoryModel(base_mb=3200),
    "prepare_pivot": MemoryModel(base_mb=4800),
    "pivot_part": MemoryModel(base_mb=3200),
    "bias_grammar": MemoryModel(base_mb=3200),
    "estimate_lm": MemoryModel(base_mb=1600),
    "align_corpus": MemoryModel(base_mb=800, per_thread_mb=400),
    # One decoder, or a pool with one decoder (grammar, LM, paraphraser) per worker.
    "decode_shard": MemoryModel(base_mb=1100),
    "tune_translation": MemoryModel(base_mb=400, per_thread_mb=1600),
    "tune_shard": MemoryModel(base_mb=400, per_thread_mb=1600),
    "tune_iteration": MemoryModel(base_mb=800),
    "score_iterations": MemoryModel(base_mb=400, per_thread_mb=600),
    "tune_paraphraser": MemoryModel(base_mb=400, per_thread_mb=600),
    "paraphrase_references": MemoryModel(base_mb=400, per_thread_mb=600),
    "grid_sample": MemoryModel(base_mb=400, per_thread_mb=600),
    "targeting_sweep": MemoryModel(base_mb=400, per_thread_mb=600),
    "grid_row": MemoryModel(base_mb=400, per_thread_mb=600),
    "report_focus": MemoryModel(base_mb=400, per_thread_mb=1600),
}
"""The rules whose memory is modelled; every other rule keeps Snakemake's default request."""
