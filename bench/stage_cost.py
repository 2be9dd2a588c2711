"""Where a finished run's time and memory went: its Snakemake job benchmarks summed per rule.

    python bench/stage_cost.py [WORKDIR] [--experiment default]

Reads ``benchmarks/<experiment>/`` of WORKDIR (one TSV per job, written by each rule's
``benchmark:``) and prints, for the experiment's own system and for its held-out system of
Fig. 4.11/4.12 (``benchmarks/<experiment>/heldout/``) apart: per rule, the jobs, their summed
wall and CPU seconds, the longest job and the largest peak RSS. Tuning runs are split by what
they are for: the config's conditions (``tuning.conditions`` of ``results/<exp>/config.yaml``)
or the runs only a paper figure needs, untargeted or targeted (1H+kT, thesis §5.3). Rules
without a ``benchmark:`` (set selection, evaluation, reports) are not counted. Jobs run
side by side on ``--cores``, so the summed walls exceed the run's elapsed wall; the sums are
what a paper-scale extrapolation multiplies, stage by stage (docs/measurements.md "Running at
paper scale").
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import yaml

from circle.core.layout import Results
from circle.experiments.conditions import TuningRun

HELDOUT = "heldout"


@dataclass
class Stage:
    """The summed cost of one rule's jobs (or of one kind of tuning run)."""

    jobs: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    longest: float = 0.0
    peak_rss_mb: float = 0.0

    def add(self, row: dict[str, str]) -> None:
        wall = float(row["s"])
        self.jobs += 1
        self.wall += wall
        self.cpu += float(row["cpu_time"])
        self.longest = max(self.longest, wall)
        self.peak_rss_mb = max(self.peak_rss_mb, float(row["max_rss"]))


def last_row(path: Path) -> dict[str, str]:
    """A benchmark file's last measurement (Snakemake appends one row per repeat)."""
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    if not rows:
        raise SystemExit(f"{path}: a benchmark file without a measurement")
    return rows[-1]


def stage_of(relative: Path, conditions: set[str]) -> str:
    """The stage a benchmark file (relative to its system's directory) belongs to: its rule,
    and for a tuning run whether it is one of the config's conditions and whether targeted."""
    rule = relative.parts[0] if len(relative.parts) > 1 else relative.stem
    if rule != "tune_translation":
        return rule
    condition = TuningRun.parse(relative.stem).condition
    purpose = "conditions" if condition.name in conditions else "figure runs"
    kind = "targeted" if condition.targeted else "untargeted"
    return f"tune_translation ({purpose}, {kind})"


def system_stages(directory: Path, conditions: set[str]) -> dict[str, Stage]:
    """Every job benchmark under ``directory`` (a held-out system's subdirectory excluded)
    summed per stage."""
    stages: dict[str, Stage] = defaultdict(Stage)
    for path in sorted(directory.rglob("*.tsv")):
        relative = path.relative_to(directory)
        if relative.parts[0] == HELDOUT:
            continue
        stages[stage_of(relative, conditions)].add(last_row(path))
    return dict(stages)


def print_table(title: str, stages: dict[str, Stage]) -> None:
    print(f"\n{title}\n")
    print("| stage | jobs | summed wall | summed CPU | longest job | peak RSS |")
    print("|:---|---:|---:|---:|---:|---:|")
    total = Stage()
    for name, stage in sorted(stages.items(), key=lambda item: -item[1].wall):
        print(f"| {name} | {stage.jobs} | {stage.wall:,.0f} s | {stage.cpu:,.0f} s | "
              f"{stage.longest:,.0f} s | {stage.peak_rss_mb / 1024:.1f} GB |")
        total.jobs += stage.jobs
        total.wall += stage.wall
        total.cpu += stage.cpu
        total.longest = max(total.longest, stage.longest)
        total.peak_rss_mb = max(total.peak_rss_mb, stage.peak_rss_mb)
    print(f"| all | {total.jobs} | {total.wall:,.0f} s | {total.cpu:,.0f} s | "
          f"{total.longest:,.0f} s | {total.peak_rss_mb / 1024:.1f} GB |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workdir", nargs="?", type=Path, default=Path("."))
    parser.add_argument("--experiment", default="default")
    args = parser.parse_args()
    benchmarks = args.workdir / "benchmarks" / args.experiment
    config = Results.of(args.workdir, args.experiment).config
    for required in (benchmarks, config):
        if not required.exists():
            raise SystemExit(f"{required}: not found; run the experiment first")
    conditions = set(yaml.safe_load(config.read_text())["tuning"]["conditions"])
    print_table(f"Experiment '{args.experiment}': {benchmarks}",
                system_stages(benchmarks, conditions))
    if (benchmarks / HELDOUT).is_dir():
        print_table(f"Its held-out system (Fig. 4.11/4.12): {benchmarks / HELDOUT}",
                    system_stages(benchmarks / HELDOUT, conditions))


if __name__ == "__main__":
    main()
