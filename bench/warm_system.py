"""Time `circle translate` and `circle paraphrase` cold (one process per call) against warm
(`--stream`: one process, fed a line at a time through a pipe).

    python bench/warm_system.py --results results/default --sentences 20 --weights 1H.rep1

Input: the first N verses of the experiment's test corpus (``corpus/test.parquet``): their
Spanish source for translate, their first English reference for paraphrase. Cold is one
whole process per call, measured as ``/usr/bin/time -v`` does (wall, user + system CPU and
peak RSS of the process, from ``wait4``): once on one sentence (the start-up cost) and once on
all N in one file (a batch). Warm is one ``--stream`` process: the first line's answer pays the
start-up, then each further line is written only after the previous answer has been read; per
line, the wall time from writing it to reading its answer and the process's CPU time in
between (psutil). Prints, per mode, a row per measurement, and whether the warm answers equal
the batch's lines. On a loaded machine, compare CPU seconds rather than wall.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import psutil

from circle.cli import version_text
from circle.core.layout import (
    BILINGUAL_GRAMMAR,
    CORPUS_TABLE,
    PARAPHRASE_GRAMMAR,
    RESULTS,
    Results,
    under_experiment,
)
from circle.translate import results_directory

MODES = {"translate": under_experiment(BILINGUAL_GRAMMAR),
         "paraphrase": under_experiment(PARAPHRASE_GRAMMAR, bias="0")}
"""Each mode and the table of the results directory it needs."""


def inputs(results: Path, mode: str, count: int) -> list[str]:
    """The first ``count`` test verses: Spanish sources, or first English references."""
    test = pd.read_parquet(Results.at(results).path(CORPUS_TABLE, split="test")).head(count)
    if mode == "translate":
        return list(test["source"])
    return [references[0] for references in test["references"]]


def command(mode: str, results: Path, weights: str | None, *args: str) -> list[str]:
    chosen = ["--weights", weights] if weights is not None and mode == "translate" else []
    return [sys.executable, "-m", "circle.cli", mode, *args, *chosen, "--results", str(results)]


def cold(mode: str, results: Path, weights: str | None, path: Path
         ) -> tuple[dict[str, float], list[str]]:
    """One whole process on the file at ``path``: its wall, CPU and peak RSS, and its output."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(command(mode, results, weights, str(path)), stdout=out,
                                   stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{' '.join(process.args)} failed:\n{err.read().decode()}")
        lines = out.read().decode("utf-8").splitlines()
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mib": usage.ru_maxrss / 1024}, lines


def warm(mode: str, results: Path, weights: str | None, lines: list[str]
         ) -> tuple[list[tuple[float, float]], dict[str, float], list[str]]:
    """One ``--stream`` process fed ``lines`` one at a time: (wall, CPU) of each answer, the
    whole process's wall, CPU and peak RSS, and the answers."""
    answers, times = [], []
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(command(mode, results, weights, "-", "--stream"),
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        watched = psutil.Process(process.pid)
        for line in lines:
            cpu = sum(watched.cpu_times()[:2])
            asked = time.perf_counter()
            process.stdin.write(f"{line}\n".encode())
            process.stdin.flush()
            answer = process.stdout.readline()
            if not answer:
                err.seek(0)
                sys.exit(f"{' '.join(process.args)} ended:\n{err.read().decode()}")
            times.append((time.perf_counter() - asked, sum(watched.cpu_times()[:2]) - cpu))
            answers.append(answer.decode("utf-8").removesuffix("\n"))
        process.stdin.close()
        process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            sys.exit(f"{' '.join(process.args)} failed:\n{err.read().decode()}")
    return times, {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                   "rss_mib": usage.ru_maxrss / 1024}, answers


def whole(label: str, figures: dict[str, float], per: int = 0) -> str:
    share = (f"; per sentence {figures['wall'] / per:.2f} s wall, {figures['cpu'] / per:.2f} s "
             "CPU" if per else "")
    return (f"  {label}: {figures['wall']:.2f} s wall, {figures['cpu']:.2f} s CPU, peak RSS "
            f"{figures['rss_mib']:,.0f} MiB{share}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--results", default=RESULTS.format(experiment="default"),
                        help="the results directory, relative to the project root")
    parser.add_argument("--sentences", type=int, default=20, help="N (default: %(default)s)")
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument("--weights", help="translate's --weights (default: circle's choice)")
    args = parser.parse_args()
    results = results_directory(args.results, None)
    print(f"{results}: the first {args.sentences} test verses; {version_text()}; niceness "
          f"{os.nice(0)}, load average {os.getloadavg()[0]:.1f} at the start")
    for mode in args.modes:
        if not (results / MODES[mode]).is_file():
            print(f"{mode}: skipped, no {results / MODES[mode]}")
            continue
        lines = inputs(results, mode, args.sentences)
        with tempfile.TemporaryDirectory() as directory:
            one, batch = Path(directory) / "one.txt", Path(directory) / "batch.txt"
            one.write_text(f"{lines[0]}\n", encoding="utf-8")
            batch.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
            single, _ = cold(mode, results, args.weights, one)
            many, expected = cold(mode, results, args.weights, batch)
        times, process, answers = warm(mode, results, args.weights, lines)
        later = times[1:]
        print(f"{mode}:")
        print(whole("cold, 1 sentence", single))
        print(whole(f"cold, {len(lines)} sentences in one file", many, len(lines)))
        print(f"  warm (--stream), first answer: {times[0][0]:.2f} s wall, {times[0][1]:.2f} s "
              "CPU (the start-up and one sentence)")
        if later:
            walls, cpus = [t[0] for t in later], [t[1] for t in later]
            print(f"  warm, each of the next {len(later)}: median {statistics.median(walls):.3f} "
                  f"s wall (mean {statistics.mean(walls):.3f}, max {max(walls):.3f}), median "
                  f"{statistics.median(cpus):.3f} s CPU (mean {statistics.mean(cpus):.3f})")
        print(whole("warm, the whole process", process, len(lines)))
        print(f"  warm answers equal the batch's lines: {answers == expected}")


if __name__ == "__main__":
    main()
