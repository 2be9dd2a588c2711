"""The SLURM test: the README's cluster command on the tiny config, against a local run.

Needs a running Slurm whose partition is named in CIRCLE_SLURM_PARTITION; .ci/slurm-test starts
a single-node one on localhost and sets CIRCLE_SLURM_REQUIRED=1, which turns a skip into a
failure. Without them the test is skipped (and reported as skipped).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_workflow import KEPT_RUN, ROOT, tiny_alignment, tiny_config

from circle.core.tables import parquet_rows
from circle.pipeline.resources import MEMORY, RUNTIME_FLOOR_MIN, input_mb, runtime_model

pytestmark = pytest.mark.workflow


FAST_STATUS_CHECKS = ["--slurm-init-seconds-before-status-checks", "2"]
"""Added to the README's command in this test only. The executor plugin waits this long after a
round of status checks in which a job ended, 10 s more after each round in which none did (the
profile: 20 s, kind to a shared slurmctld); the tiny run's jobs take seconds, so with the
profile's value the test waited on the poll far longer than on its jobs. Nothing the test asserts
depends on the interval; a first check within 6 s (3 × 2 s) is still far inside this cluster's
MinJobAge (300 s), so the plugin keeps to squeue."""


def readme_cluster_command() -> list[str]:
    """The one command of the README's "Running on a cluster" code block."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Running on a cluster", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "the cluster section must hold exactly one code block"
    lines = [line for line in blocks[0].splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("snakemake "), blocks[0]
    return shlex.split(lines[0])


def require_slurm() -> str:
    partition = os.environ.get("CIRCLE_SLURM_PARTITION")
    reason = None
    if not partition:
        reason = "CIRCLE_SLURM_PARTITION is not set (run .ci/slurm-test)"
    elif shutil.which("sinfo") is None:
        reason = "sinfo not found"
    else:
        probe = subprocess.run(["sinfo", "--noheader", "--partition", partition],
                               capture_output=True, text=True, timeout=30)
        if probe.returncode != 0 or not probe.stdout.strip():
            reason = f"no Slurm partition {partition!r}: {probe.stderr.strip()}"
    if reason:
        if os.environ.get("CIRCLE_SLURM_REQUIRED") == "1":
            pytest.fail(f"Slurm required but unavailable: {reason}")
        pytest.skip(reason)
    return partition


def tables(directory: Path) -> dict[str, pd.DataFrame]:
    """Every Parquet table under results/, but the targeted-paraphrase cache (named by a hash of
    its set-up and the writing run, not a table of record)."""
    return {str(path.relative_to(directory)): pd.read_parquet(path)
            for path in sorted(directory.glob("results/**/*.parquet"))
            if "/targeted/cache/" not in str(path)}


def run(command: list[str], cwd: Path, log: Path) -> None:
    with log.open("w") as out:
        result = subprocess.run(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                timeout=1500)
    assert result.returncode == 0, log.read_text()[-5000:]


def planned_jobs(tmp_path: Path, *extra: str) -> list[tuple[str, int, dict[str, str]]]:
    """(rule, threads, resources) of every job of a dry run of the README's cluster command on
    the tiny config. A dry run caps threads at --cores (1 unless given); a cluster run does not,
    so the plan is made with 64."""
    args = [arg.replace("<partition>", "somewhere") for arg in readme_cluster_command()[1:]]
    tmp_path.mkdir(exist_ok=True)
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"), *args,
         "-n", "--forceall", "--cores", "64", "--configfile", str(tiny_config(tmp_path)),
         "--directory", str(tmp_path), *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    jobs = []
    for block in re.split(r"^(?=rule \w+:$)", result.stdout, flags=re.M)[1:]:
        rule = block.split(":", 1)[0].removeprefix("rule ")
        threads = re.search(r"^\s+threads: (\d+)$", block, flags=re.M)
        resources = re.search(r"^\s+resources: (.*)$", block, flags=re.M)
        assert resources, block
        jobs.append((rule, int(threads[1]) if threads else 1,
                     dict(item.split("=", 1) for item in resources[1].split(", "))))
    return jobs


def test_readme_cluster_command_plans_the_rules_own_resources(tmp_path):
    """A dry run of the README's command: every job asks what its rule's memory model gives at
    its threads (the split for extraction: at the tiny training set's pairs; the merge once its
    counts exist), and the partition from the command line reaches every job."""
    pairs = parquet_rows(tiny_alignment())
    jobs = planned_jobs(tmp_path)
    assert len(jobs) > 40
    assert all(resources["slurm_partition"] == "somewhere" for _, _, resources in jobs)
    modelled = [(rule, threads, resources["mem_mb"]) for rule, threads, resources in jobs
                if rule in MEMORY]
    assert {rule for rule, _, _ in modelled} >= {
        "split_for_counting", "count_rules", "extract_grammar", "tune_translation",
        "decode_shard", "prepare_pivot", "pivot_part", "bias_grammar"}
    waiting = set()
    for rule, threads, memory in modelled:
        if memory == "<TBD>":
            # a job that loads a paraphrase grammar asks by its size, and the extraction's
            # merge by its counts' size, known once they are made
            assert MEMORY[rule].per_rule_mb or MEMORY[rule].per_input_mb, rule
            waiting.add(rule)
        else:
            assert int(memory) == MEMORY[rule].request_mb(threads, pairs), rule
    assert {"tune_paraphraser", "paraphrase_references", "grid_row", "extract_grammar"} <= waiting
    # untargeted tuning runs load no paraphrase grammar: their request is known at once
    assert any(rule == "tune_translation" and memory != "<TBD>"
               for rule, _, memory in modelled)
    assert max(threads for _, threads, _ in jobs) == 2


def test_requests_scale_to_the_node_with_the_threads(tmp_path):
    """--max-threads fits every job to a smaller node and --set-threads uses a larger one; the
    memory requests follow the threads."""
    small = planned_jobs(tmp_path / "small", "--max-threads", "1")
    assert {threads for _, threads, _ in small} == {1}
    large = planned_jobs(tmp_path / "large", "--set-threads", "tune_translation=8")
    for jobs, threads in ((small, 1), (large, 8)):
        tuning = {int(resources["mem_mb"]) for rule, _, resources in jobs
                  if rule == "tune_translation" and resources["mem_mb"] != "<TBD>"}
        assert tuning == {MEMORY["tune_translation"].request_mb(threads)}
    assert MEMORY["tune_translation"].request_mb(1) < MEMORY["tune_translation"].request_mb(8)


def test_every_planned_job_asks_for_a_time_limit(tmp_path):
    """A dry run of the README's cluster command: every job asks for a runtime (minutes, the
    Slurm executor's --time) from its rule's model at its inputs' size and threads, or, until
    its inputs exist, one to be determined when it is ready (as memory is); none is left to
    the partition's default."""
    jobs = planned_jobs(tmp_path)
    untimed = {rule for rule, _, resources in jobs if "runtime" not in resources}
    assert untimed == {"all"}  # the default target, which runs nothing
    known = [(rule, threads, resources["runtime"]) for rule, threads, resources in jobs
             if resources.get("runtime", "<TBD>") != "<TBD>"]
    # the jobs whose inputs exist before the run (the corpus files): their limit is planned
    assert {"prepare_corpus", "effective_config", "write_initial_weights"} <= {
        rule for rule, _, _ in known}
    for rule, _, minutes in known:
        assert int(minutes) >= RUNTIME_FLOOR_MIN, rule
    tiny = yaml.safe_load((tmp_path / "config.yaml").read_text())  # planned_jobs wrote it
    corpus = [path for spec in tiny["corpus"]["files"].values() for value in spec.values()
              for path in ([value] if isinstance(value, str) else value)]
    prepare = [int(minutes) for rule, _, minutes in known if rule == "prepare_corpus"]
    assert prepare and max(prepare) >= runtime_model("prepare_corpus").request_min(
        1, input_mb(corpus))


SUBMITTED = re.compile(r"Job \d+ has been submitted with SLURM jobid (\d+)")


def queued_jobs() -> list[str]:
    """Ids of the jobs Slurm has pending or running."""
    result = subprocess.run(["squeue", "--noheader", "--states=PENDING,RUNNING",
                             "--format=%i"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def submissions(log: Path) -> list[str]:
    return SUBMITTED.findall(log.read_text()) if log.exists() else []


def wait_for(condition, what: str, seconds: float = 600) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {seconds} s waiting for {what}"
        time.sleep(0.5)


def start(command: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(command, cwd=ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT)


def cancel_one_job(command: list[str], log: Path) -> str:
    """Run ``command`` until it has submitted 5 jobs, scancel the next job Slurm holds, and
    return its id once Snakemake has ended (a cancelled job fails the run, is not resubmitted)."""
    snakemake = start(command, log)
    wait_for(lambda: len(submissions(log)) >= 5 or snakemake.poll() is not None, "5 jobs")
    cancelled = None
    while cancelled is None:
        assert snakemake.poll() is None, "the run ended before a job could be cancelled"
        for job in set(queued_jobs()) & set(submissions(log)):
            details = subprocess.run(["scontrol", "show", "job", job], capture_output=True,
                                     text=True, timeout=30).stdout
            if details:  # Slurm, not Snakemake, requeues a job whose node fails
                assert "Requeue=1" in details, details
                # the job asked for its rule's runtime (the partition has no limit of its own)
                limit = re.search(r"TimeLimit=(\S+)", details)
                assert limit and limit[1] not in ("UNLIMITED", "Partition_Limit"), details
            if subprocess.run(["scancel", job], capture_output=True).returncode == 0 \
                    and job not in queued_jobs():
                cancelled = job
                break
        time.sleep(0.2)
    assert snakemake.wait(timeout=600) != 0, log.read_text()[-3000:]
    return cancelled


TERMINATING = "Terminating processes on user request"
GRACEFUL = "Will exit after finishing currently running jobs"


def interrupt(command: list[str], log: Path) -> None:
    """Run ``command`` until Slurm holds one of its jobs, then press Ctrl-C (SIGINT), up to
    three times, 10 s apart, until Snakemake says it terminates; if it does not, stop it with
    SIGTERM, which Snakemake handles with a handler of its own (no new jobs; it exits once its
    running jobs end).

    Snakemake 9.27 can miss SIGINT for good: in CI it went on submitting jobs through five
    presses over 50 s (likely, not proven: its log handler and its persistent asyncio runner
    each swallow a KeyboardInterrupt that lands in them)."""
    snakemake = start(command, log)
    wait_for(lambda: set(queued_jobs()) & set(submissions(log)) or snakemake.poll() is not None,
             "a queued job")
    for _ in range(3):
        assert snakemake.poll() is None, "the run ended before it could be interrupted"
        snakemake.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 10
        while TERMINATING not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        if TERMINATING in log.read_text():
            break
    else:
        snakemake.send_signal(signal.SIGTERM)
        wait_for(lambda: GRACEFUL in log.read_text() or snakemake.poll() is not None,
                 "Snakemake to answer SIGTERM", seconds=60)
    assert snakemake.wait(timeout=600) != 0, log.read_text()[-3000:]


def test_readme_cluster_command_matches_a_local_run(tmp_path):
    """The README's command through Slurm, with the drill a user goes through: one job
    cancelled with scancel (the run stops, nothing is resubmitted), a rerun interrupted with
    Ctrl-C, or SIGTERM where Snakemake misses Ctrl-C (it releases the directory and leaves none
    of its jobs queued), then the same command again resumes, recomputing no finished job, and
    every table equals a local run's. Then one tuning run again with its iterations fanned out
    as Slurm jobs (tuning.fan_out: 2): the same weights and log as the local run's."""
    partition = require_slurm()
    command = readme_cluster_command()
    args = [arg.replace("<partition>", partition) for arg in command[1:]]
    assert f"slurm_partition={partition}" in args, command

    local, cluster = tmp_path / "local", tmp_path / "slurm"
    local.mkdir()
    cluster.mkdir()
    snakemake = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile")]
    # The README's command as written (relative profile path: run from the repository root),
    # polling faster (FAST_STATUS_CHECKS).
    readme = [*snakemake, *args, *FAST_STATUS_CHECKS, "--configfile", str(tiny_config(cluster)),
              "--directory", str(cluster)]

    cancelled = cancel_one_job(readme, tmp_path / "cancelled.log")
    cancelled_log = (tmp_path / "cancelled.log").read_text()
    assert re.search(rf"SLURM-job '{cancelled}' failed, SLURM status is: 'CANCELLED'",
                     cancelled_log), cancelled_log[-3000:]
    assert "Trying to restart" not in cancelled_log
    assert not set(queued_jobs()) & set(submissions(tmp_path / "cancelled.log"))

    interrupt(readme, tmp_path / "interrupted.log")
    # none of the interrupted run's jobs is left queued, and no lock is left behind
    wait_for(lambda: not set(queued_jobs()) & set(submissions(tmp_path / "interrupted.log")),
             "the interrupted run's jobs to leave the queue", seconds=60)
    assert not list((cluster / ".snakemake" / "locks").glob("*"))

    run(readme, ROOT, tmp_path / "slurm.log")
    # Both replay the tiny config's frozen alignment (eflomal has no seed); everything after it
    # is deterministic and must come out identical. The local run is the one `make test` kept
    # (CIRCLE_KEEP_TINY_RUN, set by .ci/run), or one made here.
    kept = Path(os.environ.get(KEPT_RUN, "") or tmp_path / "no-kept-run")
    if (kept / "snakemake.log").is_file():
        local = kept
        shutil.copyfile(kept / "snakemake.log", tmp_path / "local.log")
    else:
        run([*snakemake, "--cores", "2", "--configfile", str(tiny_config(local)),
             "--directory", str(local)], ROOT, tmp_path / "local.log")

    resumed = submissions(tmp_path / "slurm.log")
    assert resumed, "no job went through sbatch:\n" + (tmp_path / "slurm.log").read_text()[-3000:]
    local_jobs = re.search(r"^total\s+(\d+)$", (tmp_path / "local.log").read_text(), flags=re.M)
    assert local_jobs and len(resumed) < int(local_jobs[1]), "the rerun recomputed finished jobs"

    expected, produced = tables(local), tables(cluster)
    assert expected, "the local run wrote no tables"
    assert sorted(produced) == sorted(expected)
    for name, frame in expected.items():
        pd.testing.assert_frame_equal(produced[name], frame, check_exact=True, obj=name)
    # two runs of one config write byte-identical tables (provenance included)
    different = [name for name in expected
                 if (cluster / name).read_bytes() != (local / name).read_bytes()]
    assert not different, different

    # one tuning run fanned out (tuning.fan_out): its iterations are Slurm jobs
    fanned = tmp_path / "fanned-out"
    fanned.mkdir()
    run_name = "1H.rep0"
    weights = f"results/tiny/weights/{run_name}.txt"
    started = time.monotonic()
    run([*snakemake, *args, *FAST_STATUS_CHECKS,
         "--configfile", str(tiny_config(fanned, **{"tuning.fan_out": 2})),
         "--directory", str(cluster), "--forcerun", "tune_translation", "--", weights], ROOT,
        tmp_path / "fanned-out.log")
    wall = time.monotonic() - started
    log = (tmp_path / "fanned-out.log").read_text()
    jobs = re.findall(r"^(?:local)?(?:rule|checkpoint) (\w+):$", log, flags=re.M)
    iterations = jobs.count("tune_iteration")
    print(f"fanned-out {run_name} through Slurm: {len(submissions(tmp_path / 'fanned-out.log'))} "
          f"jobs submitted ({jobs.count('tune_shard')} tune_shard, {iterations} tune_iteration, "
          f"{jobs.count('tune_translation')} tune_translation) in {wall:.0f} s")
    assert jobs.count("tune_shard") == 2 * iterations and iterations >= 2, jobs
    assert len(submissions(tmp_path / "fanned-out.log")) >= 4
    assert (cluster / weights).read_bytes() == (local / weights).read_bytes()
    tuning_log = f"results/tiny/tune/{run_name}.parquet"
    fanned_log, one_job = pd.read_parquet(cluster / tuning_log), pd.read_parquet(local / tuning_log)
    # decoded sentences included: both read the decode stage's lists at the start weights
    pd.testing.assert_frame_equal(fanned_log, one_job)
