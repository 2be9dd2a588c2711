"""What a job asks of a node: memory that follows its threads and its data.

A cluster job is killed when it outgrows its memory request and waits forever when the request
exceeds every node, so each rule's request is a model of what it really uses, not a constant:

    request = headroom * (base + per_thread * threads + per_pair * training pairs
                          + per_rule * paraphrase rules)   [MB]

``threads`` is the job's final thread count, after ``--max-threads`` (which fits every job to a
smaller node) and ``--set-threads`` (more decoder workers on a larger one): a decoder pool loads
the grammar into every worker, so memory grows with the workers. Of grammar extraction only the
split grows with the training bitext (it holds it); a counting job holds one batch of it, and
the merge hands DuckDB a fixed share of its request and spills the rest.

A paraphraser holds its whole grammar in memory, once per job (its workers are forked and share
it): about 80 bytes a rule once loaded, at most 230 at the loading peak (``python
benchmarks/grammar_load.py``: peak RSS 607 MiB for the default pruned grammar's 2.17 M rules,
2,145 MiB for the 12.0 M rules of the exact pivot of a quarter of the Bible, 4,096 MiB for the
25.1 M of half of it, of which about 110 MiB are the interpreter's; 6,158 MiB for the 12.0 M
rules when the rules were read as Python strings). The rules that load one scale with its rows,
so an exact paraphrase grammar (64.6 M rules on the default experiment) asks for what it needs
and a cluster refuses a job that no node can hold at once instead of killing it after hours.

The coefficients come from the default experiment (27.6 k training pairs, 2 threads): the
peak PSS of every job of ``make run`` and ``snakemake paper_tables`` in Snakemake's benchmark
files (in MB: tune_translation 3,505 for targeted runs and 1,480 for the others, score_iterations
1,430, paraphrase_references 1,216, grid_row 1,151, decode_shard 1,082 with one decoder, pivot
3,865, filter 1,802); a decoder pool of two workers costs about 400 MB more than one decoder
(1,480 against 1,082). The paraphraser's grammar is the per-rule term (520 MB for the default
2.17 M rules), loaded once per job: the workers of the targeted paraphraser share it as those
of the untargeted one do. The per-thread terms round the rest up (for a tuning run the
translation grammar each of its decoders loads). Not modelled: the forest a targeted run's worker
keeps for each tune reference it owns (forest mode, :mod:`circle.targeted`), 3.9 MiB a reference
at the default beam: 0.7 GB for the default 183 references, inside the request (peak PSS of the
targeted runs at 8d9445b: 2,033–2,967 MB), about 3.4 GB for the paper's 865 in one job (a
fanned-out shard job holds only its share). Extraction's jobs were measured at
25/50/100 % of the training pairs with ``benchmarks/grammar.py --extract-only`` (peak RSS in
MiB: split 204/212/232, the largest counting job 894/1,120/1,106, the merge within its
3,000 MB request 1,957/2,010/2,105).
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
    """One rule's memory: a fixed part, a part per thread (worker), one per training pair and
    one per rule of the paraphrase grammar it loads (the largest of its input ``rules_input``,
    a table or a list of tables; a job without that input loads none)."""

    base_mb: float
    per_thread_mb: float = 0.0
    per_pair_mb: float = 0.0
    per_rule_mb: float = 0.0
    rules_input: str | None = None

    def __post_init__(self) -> None:
        if bool(self.per_rule_mb) != (self.rules_input is not None):
            raise ValueError("a memory model per paraphrase rule names the input it loads "
                             "(rules_input), and only such a model does")

    def request_mb(self, threads: int = 1, pairs: int = 0, rules: int = 0) -> int:
        """The job's ``mem_mb``: the model at ``threads``, ``pairs`` and ``rules``, with
        :data:`HEADROOM`, rounded up to 100 MB."""
        if threads < 1 or pairs < 0 or rules < 0:
            raise ValueError(f"threads must be >= 1 and pairs, rules >= 0, not {threads}, "
                             f"{pairs}, {rules}")
        peak = (self.base_mb + self.per_thread_mb * threads + self.per_pair_mb * pairs
                + self.per_rule_mb * rules)
        return int(math.ceil(HEADROOM * peak / 100.0)) * 100


def parquet_rows(path: str | os.PathLike) -> int:
    """Rows of a Parquet table, from its footer."""
    return pq.ParquetFile(path).metadata.num_rows


DUCKDB_SHARE = 0.6
"""The share of its request an out-of-core job (the extraction merge, filtering, pivoting,
biasing) hands DuckDB as its memory limit: DuckDB's resident memory exceeds its limit (by 25 %
at 2,100 MB when merging the default grammar), and the job's own Python comes on top (the
pivot's phrase matching: the preparation peaked at 4.9 GB at a 3,500 MB limit on the paper's
6,568 references)."""


def duckdb_limit(request_mb: int) -> str:
    """The DuckDB memory limit of a job that may use ``request_mb`` in all."""
    return f"{int(request_mb * DUCKDB_SHARE)}MB"


PARAPHRASE_RULE_MB = 0.00024
"""Peak memory per rule of a loaded paraphrase grammar (module doc)."""


def _paraphrasing(base_mb: float, per_thread_mb: float, grammar_input: str) -> MemoryModel:
    """A job with a paraphraser whose grammar is its input ``grammar_input``."""
    return MemoryModel(base_mb, per_thread_mb, per_rule_mb=PARAPHRASE_RULE_MB,
                       rules_input=grammar_input)


MEMORY = {
    # Extraction: the split holds the training bitext; a counting job one batch of it
    # (grammar.batch_size); the merge spills what exceeds its request (duckdb_limit).
    "split_for_counting": MemoryModel(base_mb=200, per_pair_mb=0.0015),
    "count_rules": MemoryModel(base_mb=1120),
    "extract_grammar": MemoryModel(base_mb=2400),
    # The other out-of-core stages hand DuckDB the same share of their request. The pivot's
    # preparation asks for 10,000 MB so that DuckDB's limit is 6,000 MB, at which the default
    # pivot does not spill (its last bits would depend on the limit, circle.grammar.pivot).
    "filter_grammar": MemoryModel(base_mb=3200),
    "prepare_pivot": MemoryModel(base_mb=8000),
    "pivot_part": MemoryModel(base_mb=3200),
    "bias_grammar": MemoryModel(base_mb=3200),
    "estimate_lm": MemoryModel(base_mb=1600),
    "align_corpus": MemoryModel(base_mb=800, per_thread_mb=400),
    # One decoder, or a pool with one decoder (grammar, LM, paraphraser) per worker; a
    # paraphraser's grammar is loaded once per job (PARAPHRASE_RULE_MB).
    "decode_shard": MemoryModel(base_mb=1100),
    "tune_translation": _paraphrasing(400, 1000, "paraphrase_grammars"),
    "tune_shard": _paraphrasing(400, 1000, "paraphrase_grammars"),
    "tune_iteration": MemoryModel(base_mb=800),
    "score_iterations": MemoryModel(base_mb=400, per_thread_mb=600),
    "tune_paraphraser": _paraphrasing(200, 200, "grammar"),
    "paraphrase_references": _paraphrasing(200, 200, "grammar"),
    "grid_sample": MemoryModel(base_mb=400, per_thread_mb=600),
    "targeting_sweep": _paraphrasing(200, 200, "grammar"),
    "grid_row": _paraphrasing(200, 200, "grammar"),
    "report_focus": _paraphrasing(400, 1000, "paraphrase_grammars"),
}
"""The rules whose memory is modelled; every other rule keeps Snakemake's default request."""
