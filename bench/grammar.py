"""Benchmark grammar extraction, pivoting and biasing on a bitext and its alignment.

    python bench/grammar.py --bitext results/default/tokenized/train.parquet \\
        --alignment resources/alignment/bible-es-kjv.parquet --out-dir /tmp/grammar-bench \\
        --memory-limit 4GB --sentences-from results/default/sets/tune.parquet

Extraction runs as the workflow's jobs, each in a process of its own: the split, the counting
jobs (``--workers`` at a time) and the merge; for each it prints the wall time and the job's
peak resident memory (the largest of the counting jobs'), for the merge also its peak DuckDB
spill. Pivoting runs as the workflow's jobs too: the preparation and ``--pivot-jobs`` pairing
jobs (``--workers`` at a time), whose parts are the paraphrase grammar; for each the wall time,
peak resident memory and the peak DuckDB spill, then the whole. Then per bias the wall time,
the peak resident memory of the process tree (this process and DuckDB inside it; sampled every
50 ms with psutil), the peak size of its scratch files (DuckDB spill; sampled every 0.5 s) and
what the stage returned.
``--extract-only`` stops after extraction.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import psutil

from circle.core.schemas import ALIGNMENT, BITEXT, EVALSET
from circle.core.tables import parquet_rows, read_table, write_table
from circle.grammar.bias import bias_grammar
from circle.grammar.extract import ExtractionLimits, count_part, merge_counts, split_for_counting
from circle.grammar.pivot import (
    METHODS,
    PivotOptions,
    PivotWork,
    grammar_parts,
    pivot_part,
    pivot_stats,
    prepare_pivot,
)
from circle.pipeline.resources import MEMORY, duckdb_limit


class PeakMemory:
    """Samples the summed RSS of this process and its children while the block runs, and the
    size of the scratch directories (``.<output>.scratch-*``: shards, DuckDB spill) in
    ``scratch_parent``."""

    def __init__(self, scratch_parent: Path | None = None, interval: float = 0.05):
        self.interval = interval
        self.scratch_parent = scratch_parent
        self.peak = 0
        self.peak_scratch = 0
        self._done = threading.Event()

    def _scratch_size(self) -> int:
        total = 0
        for directory in self.scratch_parent.glob(".*.scratch-*"):
            for file in directory.rglob("*"):
                try:
                    total += file.stat().st_size if file.is_file() else 0
                except FileNotFoundError:
                    continue
        return total

    def _sample(self) -> None:
        me = psutil.Process()
        sampled = 0
        while not self._done.is_set():
            total = 0
            for process in [me, *me.children(recursive=True)]:
                try:
                    total += process.memory_info().rss
                except psutil.NoSuchProcess:
                    continue
            self.peak = max(self.peak, total)
            if self.scratch_parent is not None and sampled % 10 == 0:
                self.peak_scratch = max(self.peak_scratch, self._scratch_size())
            sampled += 1
            self._done.wait(self.interval)

    def __enter__(self) -> PeakMemory:
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()


def measure(name: str, run: Callable[[], object], scratch_parent: Path) -> object:
    started = time.perf_counter()
    with PeakMemory(scratch_parent) as memory:
        result = run()
    print(f"{name:<22} {time.perf_counter() - started:8.1f} s  {memory.peak / 2**20:8.0f} MiB"
          f"  scratch {memory.peak_scratch / 2**20:8.0f} MiB  {result}", flush=True)
    return result


def head_tables(bitext: Path, alignment: Path, sentences: int, out_dir: Path
                ) -> tuple[Path, Path]:
    """Copies of the first ``sentences`` sentence pairs of both tables."""
    paths = out_dir / "bitext-head.parquet", out_dir / "alignment-head.parquet"
    for path, schema, out in ((bitext, BITEXT, paths[0]), (alignment, ALIGNMENT, paths[1])):
        frame = read_table(path, schema).sort_values("segment_id").head(sentences)
        write_table(frame, out, schema)
    return paths


def _job(step: Callable[..., object], *args: object) -> tuple[float, float]:
    """Run one job's step in this (fresh) process; its wall seconds and peak RSS in MiB."""
    started = time.perf_counter()
    step(*args)
    return time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _fresh_processes(workers: int) -> ProcessPoolExecutor:
    """A pool that runs each job in a new process (so each job's peak RSS is its own)."""
    return ProcessPoolExecutor(workers, mp_context=get_context("spawn"), max_tasks_per_child=1)


def extract_as_jobs(bitext: Path, alignment: Path, grammar: Path, args: argparse.Namespace
                    ) -> None:
    """Extraction as the workflow runs it: split, ``--count-jobs`` counting jobs (``--workers``
    at a time) and the merge within ``--merge-mb``, each job in a process of its own."""
    scratch = args.out_dir / "extraction"
    scratch.mkdir(exist_ok=True)
    lexical = scratch / "lexical.parquet"
    parts = [scratch / f"part{k}.parquet" for k in range(args.count_jobs)]
    counts = [scratch / f"counts{k}.parquet" for k in range(args.count_jobs)]
    started = time.perf_counter()
    with _fresh_processes(1) as pool:
        wall, peak = pool.submit(_job, split_for_counting, bitext, alignment, lexical, parts,
                                 args.batch_size).result()
    print(f"{'split':<22} {wall:8.1f} s  {peak:8.0f} MiB", flush=True)
    with _fresh_processes(args.workers) as pool:
        jobs = [pool.submit(_job, count_part, part, lexical, out, ExtractionLimits())
                for part, out in zip(parts, counts, strict=True)]
        results = [job.result() for job in jobs]
    print(f"{'count (slowest job)':<22} {max(w for w, _ in results):8.1f} s  "
          f"{max(p for _, p in results):8.0f} MiB  ({len(jobs)} jobs, {args.workers} at a time, "
          f"{sum(w for w, _ in results):.1f} s in all)", flush=True)
    with _fresh_processes(1) as pool, PeakMemory(args.out_dir) as spill:
        wall, peak = pool.submit(_job, merge_counts, counts, grammar, args.workers, None,
                                 duckdb_limit(args.merge_mb)).result()
    print(f"{'merge':<22} {wall:8.1f} s  {peak:8.0f} MiB  scratch {spill.peak_scratch / 2**20:8.0f}"
          f" MiB  (request {args.merge_mb} MB, DuckDB limit {duckdb_limit(args.merge_mb)})",
          flush=True)
    print(f"{'extract':<22} {time.perf_counter() - started:8.1f} s  "
          f"{parquet_rows(grammar)} rules", flush=True)


def pivot_as_jobs(grammar: Path, phrases: Path, sentences: list[str] | None,
                  args: argparse.Namespace) -> list[Path]:
    """Pivoting as the workflow runs it: the preparation and ``--pivot-jobs`` pairing jobs
    (``--workers`` at a time), each job in a process of its own; returns the grammar's
    parts."""
    options = PivotOptions(top_pivots=args.top_pivots, method=args.method,
                           min_count=args.min_count, min_probability=args.min_probability)
    work = PivotWork.inside(args.out_dir / "pivoting")
    work.rules.parent.mkdir(exist_ok=True)
    parts = grammar_parts(args.out_dir / "pivoted", args.pivot_jobs)
    started = time.perf_counter()
    with _fresh_processes(1) as pool, PeakMemory(work.rules.parent) as spill:
        wall, peak = pool.submit(_job, prepare_pivot, grammar, work, phrases, options,
                                 sentences, args.pivot_jobs, args.threads,
                                 args.memory_limit).result()
    print(f"{'prepare pivot':<22} {wall:8.1f} s  {peak:8.0f} MiB  scratch "
          f"{spill.peak_scratch / 2**20:8.0f} MiB  ({parquet_rows(work.rules)} pairing rules, "
          f"{parquet_rows(work.sources)} phrases)", flush=True)
    with _fresh_processes(args.workers) as pool, PeakMemory(work.rules.parent) as spill:
        jobs = [pool.submit(_job, pivot_part, work, job, part, phrases, options, args.threads,
                            args.memory_limit) for job, part in enumerate(parts)]
        results = [job.result() for job in jobs]
    print(f"{'pair (slowest job)':<22} {max(w for w, _ in results):8.1f} s  "
          f"{max(p for _, p in results):8.0f} MiB  scratch {spill.peak_scratch / 2**20:8.0f} MiB"
          f"  ({len(jobs)} jobs, {args.workers} at a time, {sum(w for w, _ in results):.1f} s "
          f"in all)", flush=True)
    wall = time.perf_counter() - started
    stats = pivot_stats(parts, work.sources, phrases)
    print(f"{'pivot':<22} {wall:8.1f} s  {stats.paraphrase_rules} paraphrase rules, "
          f"{stats.phrases} phrases", flush=True)
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bitext", type=Path, help="needed unless --reuse-grammar finds one")
    parser.add_argument("--alignment", type=Path, help="needed unless --reuse-grammar finds one")
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--sentences", type=int, help="use only the first N sentence pairs")
    parser.add_argument("--workers", type=int, default=2, help="jobs run at a time")
    parser.add_argument("--count-jobs", type=int, default=4, help="as grammar.count_jobs")
    parser.add_argument("--batch-size", type=int, default=1000, help="as grammar.batch_size")
    parser.add_argument("--merge-mb", type=int, default=MEMORY["extract_grammar"].request_mb(),
                        help="the merge job's memory request (default: the workflow's)")
    parser.add_argument("--pivot-jobs", type=int, default=1, help="as paraphrase.pivot_jobs")
    parser.add_argument("--threads", type=int, default=1, help="DuckDB threads for pivoting")
    parser.add_argument("--memory-limit", help="DuckDB memory limit of pivoting, e.g. 4GB")
    parser.add_argument("--top-pivots", type=int, default=25)
    parser.add_argument("--method", choices=METHODS, default="features")
    parser.add_argument("--min-count", type=float, default=0.0)
    parser.add_argument("--min-probability", type=float, default=0.0)
    parser.add_argument("--reuse-grammar", action="store_true",
                        help="skip extraction if OUT_DIR/grammar.parquet exists")
    parser.add_argument("--sentences-from", type=Path, nargs="+",
                        help="EVALSET tables: pivot only the phrases their references can use")
    parser.add_argument("--biases", type=float, nargs="*",
                        default=[0.0, 0.05, 0.10, 0.15, 0.25, 0.40, 0.50])
    parser.add_argument("--log", action="store_true", help="log each step's progress")
    parser.add_argument("--extract-only", action="store_true", help="stop after extraction")
    args = parser.parse_args()
    if args.log:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    args.out_dir.mkdir(parents=True, exist_ok=True)
    bitext, alignment = args.bitext, args.alignment
    if args.sentences:
        bitext, alignment = head_tables(bitext, alignment, args.sentences, args.out_dir)
    settings = {key: str(value) for key, value in vars(args).items()}
    settings["limits"] = ExtractionLimits().__dict__
    settings["cpus"] = psutil.cpu_count()
    print(json.dumps(settings, indent=1))
    grammar = args.out_dir / "grammar.parquet"
    phrases = args.out_dir / "self_paraphrase.parquet"
    if not (args.reuse_grammar and grammar.exists()):
        if not (bitext and alignment):
            parser.error(f"--bitext and --alignment are needed to extract {grammar}")
        extract_as_jobs(bitext, alignment, grammar, args)
    if args.extract_only:
        return
    sentences = None
    if args.sentences_from:
        # as the prepare_pivot rule does: each distinct reference once
        sentences = sorted({ref for path in args.sentences_from
                            for refs in read_table(path, EVALSET, columns=["references"])
                            ["references"] for ref in refs})
        print(f"pivoting the phrases of {len(sentences)} reference sentences", flush=True)
    parts = pivot_as_jobs(grammar, phrases, sentences, args)
    for bias in args.biases:
        measure(f"bias {bias:.2f}", lambda bias=bias: bias_grammar(
            parts, phrases, args.out_dir / f"paraphrase-bias{bias:.2f}.parquet", bias,
            threads=args.threads, memory_limit=args.memory_limit), args.out_dir)


if __name__ == "__main__":
    main()
