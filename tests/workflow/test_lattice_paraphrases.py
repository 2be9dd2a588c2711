"""snakemake lattice_paraphrases: the paraphrase pairs of the tune and test verses' lattices and
their page (Pang, Knight & Marcu 2003, §4.1), outside the default target."""

from __future__ import annotations

import re

import pytest
from test_workflow import snakemake, tiny_config

pytestmark = pytest.mark.workflow


def test_tiny_lattice_paraphrases_dry_run_plans_the_tables_and_the_page(tmp_path):
    config = tiny_config(tmp_path)
    result = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path),
                       "lattice_paraphrases")
    assert result.returncode == 0, result.stdout + result.stderr
    outputs = set(re.findall(r"^    output: (.+)$", result.stdout, flags=re.M))
    assert {"results/tiny/config.yaml", "results/tiny/lattice/tune.paraphrases.parquet",
            "results/tiny/lattice/test.paraphrases.parquet",
            "results/tiny/report/lattice_paraphrases.md, "
            "results/tiny/report/lattice_paraphrases.html"} <= outputs
    default = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path))
    assert default.returncode == 0, default.stdout + default.stderr
    assert "paraphrases.parquet" not in default.stdout
