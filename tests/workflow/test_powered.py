"""The powered experiment's overlays (config/powered*.yaml) and the commands docs/results.md
gives for them, by dry runs: what the pilot, the powered experiment and its two paraphraser
experiments would tune, and that those two share its MT system and 1H runs."""

from __future__ import annotations

import os
import re
import shlex
import subprocess

import pytest
from test_config_files import effective_config
from test_workflow import ROOT, snakemake

from circle.pipeline.plan import Plan
from circle.pipeline.shared_system import mt_system_changes

pytestmark = pytest.mark.workflow

SECTION = "## The powered experiment: decision rules, fixed before the run"
POWERED = ["config/paper.yaml", "config/powered.yaml"]
OVERLAYS = {"pilot": [*POWERED, "config/powered-pilot.yaml"], "powered": POWERED,
            "powered-languages-english": [*POWERED, "config/ladder-languages-english.yaml",
                                          "config/powered-languages-english.yaml"],
            "powered-identity": [*POWERED, "config/identity-feature.yaml",
                                 "config/powered-identity.yaml"]}
CONTROLS = ["1H+1X_shuffle", "1H+1X_kjv", "1H+1X_copy"]
PARAPHRASER_RULES = {"pivot_part", "tune_paraphraser", "paraphrase_references"}


def documented_commands() -> list[list[str]]:
    """The command lines of the code blocks of docs/results.md's powered-experiment section."""
    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return [shlex.split(line) for block in re.findall(r"```\n(.*?)```", section, flags=re.S)
            for line in block.splitlines() if line.strip()]


def configs(tmp_path, name: str) -> dict:
    """The effective config of one of :data:`OVERLAYS`, written in its own directory."""
    run = tmp_path / name
    run.mkdir()
    experiment = "powered" if name == "pilot" else name
    return effective_config(run, experiment, *(ROOT / path for path in OVERLAYS[name]))


def planned(tmp_path, command: list[str]) -> tuple[set[str], set[str]]:
    """The tuning runs ('experiment/1H.rep0') and the rules of a dry run of a documented
    snakemake command (its partition a placeholder's)."""
    run = tmp_path / "plan"
    run.mkdir(exist_ok=True)
    for name in ("config", "resources"):
        if not (run / name).exists():
            (run / name).symlink_to(ROOT / name)
    args = [arg.replace("<partition>", "somewhere") for arg in command[1:]]
    result = snakemake("-n", "--directory", str(run), *args)
    assert result.returncode == 0, result.stdout + result.stderr
    runs = {f"{experiment}/{condition}.rep{replicate}" for experiment, condition, replicate
            in re.findall(r"^rule tune_translation:.*?wildcards: experiment=([\w-]+), "
                          r"condition=([^,]+), replicate=(\d+)$", result.stdout,
                          flags=re.S | re.M)}
    return runs, set(re.findall(r"^rule (\w+):$", result.stdout, flags=re.M))


def runs(experiment: str, conditions: list[str], replicates: int = 8) -> set[str]:
    return {f"{experiment}/{c}.rep{r}" for c in conditions for r in range(replicates)}


def test_the_pilot_tunes_the_powered_experiments_first_eight_1h_runs(tmp_path):
    """The pilot is the powered experiment narrowed to 1H: the same name and config but the
    conditions, so its eight runs are the powered experiment's 1H replicates 0-7."""
    pilot, powered = configs(tmp_path, "pilot"), configs(tmp_path, "powered")
    # the replicate count the pilot sets for the rest leaves its eight runs as they are
    raised = {**powered, "tuning": {**powered["tuning"], "replicates": 20}}
    plans = Plan(pilot), Plan(powered), Plan(raised)
    for replicate in range(8):
        params = [plan.tuning_job_params("powered", "1H", replicate) for plan in plans]
        assert params[0] == params[1] == params[2]
    assert pilot["tuning"].pop("conditions") == ["1H"]
    assert powered["tuning"].pop("conditions") == ["1H", "2H", "1H+1P"]
    assert pilot == powered and powered["tuning"]["replicates"] >= 8
    assert powered["sets"]["max_segments"] == {"tune": None, "test": None, "paratune": None}
    assert powered["paraphrase"]["min_count"] == 1
    command = documented_commands()[0]
    assert command[command.index("--configfile") + 1:command.index("--")] == [
        *OVERLAYS["pilot"], "config/one-machine.yaml"]
    # on one machine the pilot decodes each set in one job; its tuning runs are the same
    (tmp_path / "one-machine").mkdir()
    one_machine = effective_config(tmp_path / "one-machine", "powered",
                                   *(ROOT / path for path in command[
                                       command.index("--configfile") + 1:command.index("--")]))
    assert one_machine["decoder"].pop("shards") == 1 and pilot["decoder"]["shards"] == 16
    for replicate in range(8):
        assert Plan(one_machine).tuning_job_params("powered", "1H", replicate) \
            == plans[0].tuning_job_params("powered", "1H", replicate)
    tuned, rules = planned(tmp_path, command)
    assert tuned == runs("powered", ["1H"])
    assert not rules & PARAPHRASER_RULES  # 1H alone needs no paraphraser


def test_the_cluster_commands_tune_the_whole_design(tmp_path):
    """The documented Slurm commands: the powered experiment's 1H, 2H, 1H+1P and the three
    controls, and 1H+1P of each paraphraser experiment, with eight replicates each; the
    paraphraser experiments, run once the powered one has its 1H runs (stood in for here by
    its effective config and empty files), copy its MT system in and build none of it."""
    cluster = [command for command in documented_commands()
               if "--workflow-profile" in command]
    expected = {"powered": runs("powered", ["1H", "2H", "1H+1P", *CONTROLS]),
                "powered-languages-english": runs("powered-languages-english", ["1H+1P"]),
                "powered-identity": runs("powered-identity", ["1H+1P"])}
    assert len(cluster) == len(expected)
    plan_directory = tmp_path / "plan"
    for command, (name, tuned_runs) in zip(cluster, expected.items(), strict=True):
        assert command[command.index("--configfile") + 1:command.index("--")] == OVERLAYS[name]
        if name != "powered" and not (plan_directory / "results/powered").exists():
            # once: a run in this directory would sweep the empty files as unreadable tables
            effective_config(plan_directory, "powered",
                             *(ROOT / path for path in OVERLAYS["powered"]))
            for path in Plan(configs(tmp_path, name)).shared_mt_files:
                (plan_directory / "results/powered" / path).parent.mkdir(parents=True,
                                                                         exist_ok=True)
                (plan_directory / "results/powered" / path).touch()
        tuned, rules = planned(tmp_path, command)
        assert tuned == tuned_runs, name
        assert "report_references" in rules and ("report_dose_response" in rules) == (
            name == "powered")
        assert ("share_mt_system" in rules) == (name != "powered")
        assert ("extract_grammar" in rules) == (name != "powered-identity")  # pivot grammars
        if name != "powered":
            assert not rules & {"estimate_lm", "filter_grammar", "select_evalset"}


def test_the_paraphraser_experiments_share_the_powered_mt_system(tmp_path):
    """The rung's and the copier's experiments differ from the powered one in the paraphraser
    only: they translate with its MT system (mt_system), whose settings theirs equal, so their
    1H runs are its runs."""
    powered = configs(tmp_path, "powered")
    own_configs = {name: configs(tmp_path, name)
                   for name in ("powered-languages-english", "powered-identity")}
    for config in own_configs.values():
        assert config["mt_system"] == "powered" and powered["mt_system"] is None
        assert mt_system_changes(powered, config) == []
        assert config["tuning"]["conditions"] == ["1H", "1H+1P"]
        shared = Plan(config).shared_mt_files
        assert "weights/1H.rep7.txt" in shared and "weights/1H.rep8.txt" not in shared
    rung, copier = own_configs.values()
    assert len(rung["paraphrase"]["pivots"]) == 10 and rung["paraphrase"]["min_count"] == 1
    assert rung["paraphrase"]["language_models"] == "pivots"
    assert copier["paraphrase"]["identity_feature"] and copier["paraphrase"]["min_count"] == 1
    assert copier["tuning"]["paraphraser_bias"] == 0.05


def test_make_powered_runs_the_documented_experiments():
    """`make powered` runs the three experiments of the documented cluster commands, in their
    order, with their configs and targets, each set decoded in one job (the one-machine
    overlay, last)."""
    outside_make = {k: v for k, v in os.environ.items()  # `make test` runs this test
                    if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    planned_make = subprocess.run(["make", "--no-print-directory", "-n", "powered"], cwd=ROOT,
                                  capture_output=True, text=True, env=outside_make)
    assert planned_make.returncode == 0, planned_make.stderr
    made = [shlex.split(line)[3:] for line in
            planned_make.stdout.replace("\\\n", " ").splitlines()
            if line.startswith(".venv/bin/snakemake --cores")]
    cluster = [command[command.index("--configfile"):] for command in documented_commands()
               if "--workflow-profile" in command]
    one_machine = [[*command[:command.index("--")], "config/one-machine.yaml",
                    *command[command.index("--"):]] for command in cluster]
    assert made == one_machine
