"""What a job asks of a node: memory that follows its threads and its data.

A cluster job is killed when it outgrows its memory request and waits forever when the request
exceeds every node, so each rule's request is a model of what it really uses, not a constant:

    request = headroom * (base + per_thread * threads + per_pair * training pairs
                          + per_rule * paraphrase rules + per_input * input MB)   [MB]

``threads`` is the job's final thread count, after ``--max-threads`` (which fits every job to a
smaller node) and ``--set-threads`` (more decoder workers on a larger one): a decoder pool loads
the grammar into every worker, so memory grows with the workers. Of grammar extraction only the
split grows with the training bitext (it holds it); a counting job holds one batch of it, and
the merge hands DuckDB a share of its request and spills the rest, but not all of it: DuckDB's
aggregation of the counts needs memory that grows with them, so the merge's request grows with
its input (the counting jobs' files). Measured on the es-english rung's five-fold pivot bitext
(137,870 pairs, 3,067 MB of counts, 71.1 M rules; ``circle.grammar.extract.merge_counts`` alone,
two threads): out of memory at a DuckDB limit of 1,440 MB after 2 min, done at 2,880 MB in
10 min at 4,079 MB peak RSS (shared cores). The model passes through that working point and
keeps the default experiment's request (650 MB of counts: 3,000 MB).

A paraphraser holds its whole grammar in memory, once per job (its workers are forked and share
it): about 80 bytes a rule once loaded, at most 230 at the loading peak (``python
bench/grammar_load.py``: peak RSS 607 MiB for the default pruned grammar's 2.17 M rules,
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
keeps for each tune reference it owns (forest mode, :mod:`circle.paraphrase.targeted`), 3.9 MiB a
reference at the default beam: 0.7 GB for the default 183 references, inside the request (peak PSS
of the targeted runs at 8d9445b: 2,033–2,967 MB), about 3.4 GB for the paper's 865 in one job (a
fanned-out shard job holds only its share). Extraction's jobs were measured at
25/50/100 % of the training pairs with ``bench/grammar.py --extract-only`` (peak RSS in
MiB: split 204/212/232, the largest counting job 894/1,120/1,106, the merge within its
3,000 MB request 1,957/2,010/2,105).
``python bench/memory_requests.py results/<experiment>`` prints each rule's measured peak
beside its request for any finished run.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

HEADROOM = 1.25
"""Requests exceed the measured peaks by this factor (peaks vary between runs and inputs)."""


@dataclass(frozen=True)
class MemoryModel:
    """One rule's memory: a fixed part, a part per thread (worker), one per training pair, one
    per rule of the paraphrase grammar it loads (the largest of its input ``rules_input``, a
    table or a list of tables; a job without that input loads none) and one per MB of its input
    files (:func:`input_mb`)."""

    base_mb: float
    per_thread_mb: float = 0.0
    per_pair_mb: float = 0.0
    per_rule_mb: float = 0.0
    rules_input: str | None = None
    per_input_mb: float = 0.0

    def __post_init__(self) -> None:
        if bool(self.per_rule_mb) != (self.rules_input is not None):
            raise ValueError("a memory model per paraphrase rule names the input it loads "
                             "(rules_input), and only such a model does")

    def request_mb(self, threads: int = 1, pairs: int = 0, rules: int = 0,
                   input_mb: float = 0.0) -> int:
        """The job's ``mem_mb``: the model at ``threads``, ``pairs``, ``rules`` and
        ``input_mb``, with :data:`HEADROOM`, rounded up to 100 MB."""
        if threads < 1 or pairs < 0 or rules < 0 or input_mb < 0:
            raise ValueError(f"threads must be >= 1 and pairs, rules, input_mb >= 0, not "
                             f"{threads}, {pairs}, {rules}, {input_mb}")
        peak = (self.base_mb + self.per_thread_mb * threads + self.per_pair_mb * pairs
                + self.per_rule_mb * rules + self.per_input_mb * input_mb)
        return int(math.ceil(HEADROOM * peak / 100.0)) * 100


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
    # (grammar.batch_size); the merge spills what exceeds its request (duckdb_limit), except
    # what grows with its counts (module notes: 3,000 MB at the default's 650 MB of counts,
    # 4,800 MB at the es-english rung's 3,067 MB, where DuckDB's limit is the measured 2,880).
    "split_for_counting": MemoryModel(base_mb=200, per_pair_mb=0.0015),
    "count_rules": MemoryModel(base_mb=1120),
    "extract_grammar": MemoryModel(base_mb=2010, per_input_mb=0.596),
    # The other out-of-core stages hand DuckDB the same share of their request. The pivot's
    # preparation asks for 10,000 MB so that DuckDB's limit is 6,000 MB, at which the default
    # pivot does not spill (its last bits would depend on the limit, circle.grammar.pivot).
    "filter_grammar": MemoryModel(base_mb=3200),
    "prepare_pivot": MemoryModel(base_mb=8000),
    "pivot_part": MemoryModel(base_mb=3200),
    "bias_grammar": MemoryModel(base_mb=3200),
    # The labelled (SAMT) grammar: extraction holds the training parses beside its counting
    # workers and merges out of core (peak RSS 3,930 MB on the default experiment, 46.9 M
    # rules); the labelled pivot asks for the Hiero preparation's share (peak 7,379 MB); the
    # collapse reads the labelled bilingual grammar's English sides (peak 1,659 MB).
    "extract_labelled_grammar": MemoryModel(base_mb=4000),
    "pivot_labelled_grammar": MemoryModel(base_mb=8000),
    "collapse_labelled_grammar": MemoryModel(base_mb=3200),
    "estimate_lm": MemoryModel(base_mb=1600),
    "estimate_paraphraser_lm": MemoryModel(base_mb=1600),  # estimate_lm's, on a similar text
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


# Time limits. A cluster job that outlives its time limit is killed, and one without a limit
# gets the partition's default (often an hour, or days): each rule's ``runtime`` (minutes, which
# the Slurm executor passes as --time) is a model of how long it runs, scaled by the size of
# the job's input the way memory follows its data:
#
#     runtime = max(RUNTIME_FLOOR_MIN, RUNTIME_HEADROOM * minutes
#                   * max(1, input MB / reference MB) * max(1, reference threads / threads))
#
# ``minutes`` is the longest wall time of the rule's jobs in the default experiment's
# Snakemake benchmark files (benchmarks/default/<rule>/...tsv; ``python
# bench/stage_cost.py`` sums them per rule), ``reference MB`` the summed size of that
# job's inputs. A job never asks for less than its rule's measured maximum with headroom, more
# when its input is larger (the paper's full sets and exact paraphrase grammar: the grammars
# are tens of times the default's, and so are the limits of the jobs that load them), and more
# again when --max-threads gives it fewer workers than it was measured with. Input size stands
# in for the work: decoding and tuning grow with the grammar and LM they load, extraction with
# the bitext. It is an upper-bound model, not a prediction: its purpose is that no job is killed
# for time, while a hung one is stopped within hours rather than days.

RUNTIME_HEADROOM = 3.0
"""Time limits exceed the measured maxima (scaled to the job's input) by this factor: wall
times vary with the node and with what runs beside the job (measured on a shared 2-core
machine)."""

RUNTIME_FLOOR_MIN = 10
"""No job asks for less (scheduling, loading Python and the tables, a slow shared file
system)."""


@dataclass(frozen=True)
class RuntimeModel:
    """One rule's wall time: the longest measured job, ``minutes``, whose inputs summed
    ``reference_mb``, at ``reference_threads``."""

    minutes: float
    reference_mb: float
    reference_threads: int = 1

    def __post_init__(self) -> None:
        if self.minutes <= 0 or self.reference_mb <= 0 or self.reference_threads < 1:
            raise ValueError("a runtime model needs positive minutes and reference MB and at "
                             f"least one thread, not {self}")

    def request_min(self, threads: int = 1, input_mb: float = 0.0) -> int:
        """The job's ``runtime`` in whole minutes (module notes above)."""
        if threads < 1 or input_mb < 0:
            raise ValueError(f"threads must be >= 1 and input_mb >= 0, not {threads}, "
                             f"{input_mb}")
        scale = max(1.0, input_mb / self.reference_mb) * max(1.0,
                                                             self.reference_threads / threads)
        return max(RUNTIME_FLOOR_MIN, int(math.ceil(RUNTIME_HEADROOM * self.minutes * scale)))


RUNTIME = {
    # Measured (longest job in the default run's benchmarks, its inputs' MB, its threads).
    "tokenize_corpus": RuntimeModel(0.13, 2.5),
    "split_for_counting": RuntimeModel(0.10, 5.0),
    "count_rules": RuntimeModel(3.40, 2.0),
    "extract_grammar": RuntimeModel(3.18, 650.0, 2),
    "filter_grammar": RuntimeModel(2.03, 640.0),
    # The labelled (SAMT) stages, from `snakemake samt_grammars` on the default experiment.
    "parse_training": RuntimeModel(1.21, 5.2),
    "extract_labelled_grammar": RuntimeModel(11.29, 7.2, 2),
    "pivot_labelled_grammar": RuntimeModel(3.81, 1256.0),
    "collapse_labelled_grammar": RuntimeModel(1.62, 1262.0),
    "prepare_pivot": RuntimeModel(1.11, 640.0),
    "pivot_part": RuntimeModel(0.22, 90.0),
    "bias_grammar": RuntimeModel(0.28, 88.0),
    "estimate_lm": RuntimeModel(0.08, 3.0),
    "estimate_paraphraser_lm": RuntimeModel(0.08, 3.0),
    "decode_shard": RuntimeModel(1.00, 56.0),
    "tune_translation": RuntimeModel(4.42, 57.0, 2),
    "tune_paraphraser": RuntimeModel(1.14, 91.0, 2),
    "paraphrase_references": RuntimeModel(0.21, 91.0, 2),
    # Not in the default run's benchmarks (frozen alignment; fan-out and grid search not run):
    # bounded by the measured jobs they resemble. eflomal: minutes on the default bitext; a
    # shard or an optimisation step is at most a whole tuning run's time; the grid search's
    # sweep and rows took 54 s and 28-31 s (docs/measurements.md); the iteration scores and the
    # Fig. 5.4 focus decode the test set per iteration like a tuning run.
    "align_corpus": RuntimeModel(5.0, 5.0, 2),
    "tune_shard": RuntimeModel(4.42, 57.0),
    "tune_iteration": RuntimeModel(1.0, 57.0),
    "score_iterations": RuntimeModel(4.42, 57.0, 2),
    "grid_sample": RuntimeModel(1.0, 91.0, 2),
    "targeting_sweep": RuntimeModel(1.0, 91.0, 2),
    "grid_row": RuntimeModel(0.6, 91.0, 2),
    "report_focus": RuntimeModel(4.42, 91.0, 2),
}
"""The calibrated rules; every other rule (set selection, evaluation, reports, small
conversions) runs in seconds at the default scale and gets :data:`DEFAULT_RUNTIME`."""

DEFAULT_RUNTIME = RuntimeModel(1.0, 100.0)
"""Seconds-long jobs: the floor, growing past it only with inputs of several hundred MB."""


def runtime_model(rule: str) -> RuntimeModel:
    return RUNTIME.get(rule, DEFAULT_RUNTIME)


def input_mb(paths) -> float | None:
    """The summed size of a job's input files in MB (a directory counts its files); None if
    one does not exist yet."""
    total = 0
    for path in paths:
        if os.path.isdir(path):
            total += sum(os.path.getsize(os.path.join(root, name))
                         for root, _, names in os.walk(path) for name in names)
        elif os.path.exists(path):
            total += os.path.getsize(path)
        else:
            return None
    return total / 1e6
