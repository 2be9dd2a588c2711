"""Wall time per MERT iteration of every tuning run of an experiment, from the tuning jobs' logs
(``logs/<experiment>/tune_translation/<run>.log``, lines "iteration i of at most N: ...; n new
hypotheses, ...; decode A s, references B s, optimise C s").

Printed per run: iterations, the median iteration (decode + references + optimise), the
references step's share, the new (sentence, hypothesis) pairs and, for targeted runs (1H+kT),
the wall time of the references step per new pair. Then the ratio that thesis §5.3's targeted
tuning is judged by: the median targeted iteration against the median untargeted iteration of
the same experiment, and against the same iterations without their references step. Run from
the repository root after the tuning jobs:

    python bench/iteration_cost.py [--experiment default]
"""

from __future__ import annotations

import argparse
import re
import statistics
from pathlib import Path

from circle.experiments.conditions import TuningRun

LINE = re.compile(r"iteration (\d+) of at most \d+: .*?; (\d+) new hypotheses, .*?; "
                  r"decode ([\d.]+) s, references ([\d.]+) s, optimise ([\d.]+) s")


def iterations(log: Path) -> list[dict[str, float]]:
    """The iteration lines of one tuning job's log (a resumed run logs only what it ran)."""
    found = {}
    for match in LINE.finditer(log.read_text(encoding="utf-8")):
        number, pairs, decode, references, optimise = match.groups()
        found[int(number)] = {"pairs": int(pairs), "decode": float(decode),
                              "references": float(references), "optimise": float(optimise)}
    return [found[number] for number in sorted(found)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiment", default="default")
    parser.add_argument("--logs", default="logs")
    args = parser.parse_args()
    directory = Path(args.logs) / args.experiment / "tune_translation"
    untargeted, targeted, without_references = [], [], []
    print(f"{'run':<24} {'iterations':>10} {'median s':>9} {'references':>11} {'pairs':>8} "
          f"{'ms/pair':>8}")
    for log in sorted(directory.glob("*.log")):
        rows = iterations(log)
        if not rows:
            continue
        run = TuningRun.parse(log.stem)
        totals = [r["decode"] + r["references"] + r["optimise"] for r in rows]
        share = sum(r["references"] for r in rows) / sum(totals)
        pairs = sum(r["pairs"] for r in rows)
        per_pair = (f"{1000 * sum(r['references'] for r in rows) / pairs:.2f}"
                    if run.condition.targeted else "")
        print(f"{run.name:<24} {len(rows):>10} {statistics.median(totals):>9.1f} "
              f"{100 * share:>10.0f}% {pairs:>8} {per_pair:>8}")
        if run.condition.targeted:
            targeted += totals
            without_references += [r["decode"] + r["optimise"] for r in rows]
        else:
            untargeted += totals
    if targeted and untargeted:
        median_untargeted = statistics.median(untargeted)
        print(f"median iteration: targeted {statistics.median(targeted):.1f} s, untargeted "
              f"{median_untargeted:.1f} s: {statistics.median(targeted) / median_untargeted:.2f}"
              f"x; targeted against its own iterations without references: "
              f"{sum(targeted) / sum(without_references):.2f}x")


if __name__ == "__main__":
    main()
