"""The command line as a user meets it: help for every argument, the version and commit to
cite, CITATION.cff, `make help`, and a misspelt experiment named first."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import yaml

from circle.cli import build_parser, version_text

ROOT = Path(__file__).resolve().parents[2]


def test_every_argument_of_every_subcommand_has_help():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    missing = [f"{name} {action.option_strings or action.dest}"
               for name, sub in commands.items() for action in sub._actions
               if not action.help]
    assert missing == []
    assert all(action.help for action in parser._actions)


def test_version_names_the_commit_of_the_checkout_or_says_it_is_unknown(tmp_path):
    version = metadata.version("circle")
    if shutil.which("git") and (ROOT / ".git").exists():
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=7", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        assert re.fullmatch(rf"circle {re.escape(version)} \(commit {head}(\+dirty)?\)",
                            version_text(ROOT))
    assert version_text(tmp_path) == f"circle {version} (unknown commit)"  # no checkout
    (tmp_path / "Snakefile").write_text("")  # a copy of the project outside git
    assert version_text(tmp_path) == f"circle {version} (unknown commit)"


def test_citation_file_agrees_with_the_package_and_the_readme():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert citation["cff-version"] == "1.2.0"
    assert citation["version"] == project["version"] == metadata.version("circle")
    assert citation["license"] == project["license"]
    thesis = citation["preferred-citation"]
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    author = thesis["authors"][0]
    assert (f"{author['given-names']} {author['family-names']}. {thesis['title']}. "
            f"{thesis['thesis-type']}, {thesis['institution']['name']}, {thesis['year']}.") \
        in readme


def test_make_help_lists_every_target():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = re.search(r"^\.PHONY: (.*)$", makefile, flags=re.M)[1].split()
    result = subprocess.run(["make", "-s", "-C", str(ROOT), "help"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    listed = [line.split()[1] for line in result.stdout.splitlines()]
    assert sorted(listed) == sorted(t for t in targets if t != "help")


def test_translate_with_a_misspelt_experiment_says_so_first(tmp_path):
    (tmp_path / "Snakefile").write_text("")
    (tmp_path / "results" / "tiny").mkdir(parents=True)
    result = subprocess.run([sys.executable, "-m", "circle.cli", "translate", "--project",
                             str(tmp_path), "--experiment", "nope"], input="hola\n",
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr == (f"circle translate: error: {tmp_path / 'results/nope'}: no such "
                             f"results directory (experiments in {tmp_path / 'results'}: tiny; "
                             "name one with --experiment, or give --results)\n")
