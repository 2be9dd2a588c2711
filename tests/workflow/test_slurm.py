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
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from test_workflow import ROOT, tiny_config

pytestmark = pytest.mark.workflow


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


def test_readme_cluster_command_plans_the_rules_own_resources(tmp_path):
    """A dry run of the README's command: every job asks what its rule declares, which fits a
    2-core node, and the partition from the command line reaches every job."""
    args = [arg.replace("<partition>", "somewhere") for arg in readme_cluster_command()[1:]]
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"), *args,
         "-n", "--forceall", "--configfile", str(tiny_config(tmp_path)),
         "--directory", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    resources = re.findall(r"^\s+resources: (.*)$", result.stdout, flags=re.M)
    threads = [int(n) for n in re.findall(r"^\s+threads: (\d+)$", result.stdout, flags=re.M)]
    assert len(resources) > 40
    assert all("slurm_partition=somewhere" in line for line in resources)
    memory = [int(m) for line in resources for m in re.findall(r"\bmem_mb=(\d+)", line)]
    assert memory and max(memory) <= 6000 and max(threads, default=1) <= 2


def test_readme_cluster_command_matches_a_local_run(tmp_path):
    partition = require_slurm()
    command = readme_cluster_command()
    args = [arg.replace("<partition>", partition) for arg in command[1:]]
    assert f"slurm_partition={partition}" in args, command

    local, cluster = tmp_path / "local", tmp_path / "slurm"
    local.mkdir()
    cluster.mkdir()
    snakemake = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile")]
    # The README's command as written (relative profile path: run from the repository root).
    run([*snakemake, *args, "--configfile", str(tiny_config(cluster)),
         "--directory", str(cluster)], ROOT, tmp_path / "slurm.log")
    # Both replay the tiny config's frozen alignment (eflomal has no seed); everything after it
    # is deterministic and must come out identical.
    run([*snakemake, "--cores", "2", "--configfile", str(tiny_config(local)),
         "--directory", str(local)], ROOT, tmp_path / "local.log")

    log = (tmp_path / "slurm.log").read_text()
    submitted = re.findall(r"Job \d+ has been submitted with SLURM jobid (\d+)", log)
    assert submitted, "no job went through sbatch:\n" + log[-3000:]

    expected, produced = tables(local), tables(cluster)
    assert expected, "the local run wrote no tables"
    assert sorted(produced) == sorted(expected)
    for name, frame in expected.items():
        pd.testing.assert_frame_equal(produced[name], frame, check_exact=True, obj=name)
    # two runs of one config write byte-identical tables (provenance included)
    different = [name for name in expected
                 if (cluster / name).read_bytes() != (local / name).read_bytes()]
    assert not different, different
