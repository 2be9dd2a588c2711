"""Each rule's measured peak memory beside the request circle.pipeline.resources makes for it.

    python bench/memory_requests.py [WORKDIR] [--experiment default]

Reads a finished run's Snakemake benchmark files (``benchmarks/<experiment>/``, peak PSS: the
proportional set size, which counts memory shared between a decoder pool's workers once) and
prints per rule the jobs, the largest peak, the request today's memory models make at the
rule's declared threads (capped at the run's ``--cores``; for the rules that load a paraphrase
grammar, at the rows of the largest of the run's paraphrase grammars) and their ratio. A rule whose
peak exceeds its request is marked OVER: on a cluster that enforces requests it would be killed.
Exit status 1 if any is.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

import yaml

from circle.core.layout import EFLOMAL_ALIGNMENT, PARAPHRASE_GRAMMAR, TOKENIZED_TABLE, Results
from circle.core.tables import parquet_rows
from circle.pipeline.resources import MEMORY

RULE = re.compile(r"^(?:rule|checkpoint) (\w+):$")
THREADS = re.compile(r"^\s+threads: (\d+)$")
RULES = Path(__file__).resolve().parents[1] / "workflow" / "rules"


def declared_threads(cores: int) -> dict[str, int]:
    """Each rule's threads as the workflow declares them, capped at ``cores`` as Snakemake does
    (``--cores`` locally, ``--max-threads`` on a cluster)."""
    threads: dict[str, int] = {}
    for rules in sorted(RULES.glob("*.smk")):
        rule = None
        for line in rules.read_text().splitlines():
            if match := RULE.match(line):
                rule = match.group(1)
            elif (match := THREADS.match(line)) and rule:
                threads[rule] = min(int(match.group(1)), cores)
    return threads


def training_pairs(workdir: Path, experiment: str) -> int:
    """Rows of the run's training bitext, or of its alignment (one row per pair)."""
    results = Results.of(workdir, experiment)
    config = yaml.safe_load(results.config.read_text())
    for table in (results.path(TOKENIZED_TABLE, split="train"),
                  workdir / str(config["alignment"]["frozen"]), results.path(EFLOMAL_ALIGNMENT)):
        if table.is_file():
            return parquet_rows(table)
    raise SystemExit(f"{results.directory}: neither the tokenised training bitext nor an "
                     "alignment exists")


def paraphrase_rules(workdir: Path, experiment: str) -> int:
    """Rows of the run's largest paraphrase grammar (0 if it has none)."""
    grammars = Results.of(workdir, experiment).files(PARAPHRASE_GRAMMAR)
    return max((parquet_rows(grammar) for grammar in grammars), default=0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("workdir", nargs="?", default=".", type=Path)
    parser.add_argument("--experiment", default="default")
    parser.add_argument("--cores", type=int, default=2, help="the --cores of the run (2)")
    args = parser.parse_args()
    threads = declared_threads(args.cores)
    pairs = training_pairs(args.workdir, args.experiment)
    rules = paraphrase_rules(args.workdir, args.experiment)
    peaks: dict[str, list[float]] = {}
    root = args.workdir / "benchmarks" / args.experiment
    for path in sorted(root.rglob("*.tsv")):
        rows = list(csv.DictReader(path.open(), delimiter="\t"))
        if not rows or rows[-1]["max_pss"] in ("", "-", "NA"):
            continue
        rule = path.relative_to(root).parts[0].removesuffix(".tsv")
        peaks.setdefault(rule, []).append(float(rows[-1]["max_pss"]))
    print(f"{args.workdir.resolve().name}/{args.experiment}: {pairs:,} training pairs, "
          f"{rules:,} paraphrase rules\n")
    print("| rule | jobs | threads | peak PSS (MB) | request (MB) | peak / request |")
    print("|---|---|---|---|---|---|")
    over = []
    for rule, jobs in sorted(peaks.items()):
        peak, count = max(jobs), threads.get(rule, 1)
        if rule not in MEMORY:
            print(f"| {rule} | {len(jobs)} | {count} | {peak:,.0f} | Snakemake default | |")
            continue
        request = MEMORY[rule].request_mb(count, pairs, rules)
        mark = " OVER" if peak > request else ""
        if mark:
            over.append(rule)
        print(f"| {rule} | {len(jobs)} | {count} | {peak:,.0f} | {request:,} | "
              f"{peak / request:.2f}{mark} |")
    if over:
        print(f"\npeaks above their request: {', '.join(over)}", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
