"""Results made with another configuration, when Snakemake's own records are gone: refused
before any job, naming what changed, instead of standing for the new configuration."""

from __future__ import annotations

import shutil

import pytest
import yaml
from test_workflow import snakemake, tiny_config

pytestmark = pytest.mark.workflow

TARGET = "results/tiny/config.yaml"


def test_a_config_change_without_snakemakes_records_is_refused_naming_the_keys(tmp_path):
    config = tiny_config(tmp_path)
    run = ["--configfile", str(config), "--directory", str(tmp_path)]
    result = snakemake("--cores", "1", *run, TARGET)
    assert result.returncode == 0, result.stdout + result.stderr
    shutil.rmtree(tmp_path / ".snakemake")  # a copied results folder, a cleaned cache

    result = snakemake("-n", *run, TARGET)
    assert "Nothing to be done" in result.stdout, result.stdout + result.stderr

    changed = yaml.safe_load(config.read_text())
    changed["seed"], changed["tuning"]["restarts"] = 14, 3
    config.write_text(yaml.safe_dump(changed))
    result = snakemake("-n", *run, TARGET)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "Nothing to be done" not in output
    assert ("results/tiny was made with another configuration (results/tiny/config.yaml: "
            "seed: 13 -> 14; tuning.restarts: 2 -> 3), and Snakemake has no record of how"
            in output)
    assert "--forceall" in output

    result = snakemake("-n", "--forceall", *run, TARGET)
    assert result.returncode == 0 and "rule effective_config:" in result.stdout, \
        result.stdout + result.stderr
