"""The circle command's interface: version, argument checks, info, help text, pipes, defaults."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from test_tables import tiny_bitext

from circle.cli import build_parser
from circle.core.schemas import BITEXT
from circle.core.tables import provenance, write_table


def circle(*args: str, **options) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "circle.cli", *args], capture_output=True,
                          text=True, timeout=120, **options)


def test_version():
    result = circle("--version")
    assert result.returncode == 0
    assert re.fullmatch(rf"circle {re.escape(metadata.version('circle'))} "
                        r"\((commit [0-9a-f]{7}(\+dirty)?|unknown commit)\)\n", result.stdout)


@pytest.mark.parametrize("args", [
    ["paraphrases", "-n", "-1", "the house"],
    ["paraphrases", "-n", "0", "the house"],
    ["decode", "--grammar", "g", "--weights", "w", "-k", "0"],
    ["paraphrase", "--pop-limit", "-5", "-s", "the house"],
    ["paraphrase", "--workers", "0", "-s", "the house"],
    ["validate", "--max-line-chars", "ten", "a.txt"],
])
def test_counts_below_one_are_refused_with_a_message(args):
    result = circle(*args)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert re.search(r"error: argument \S+: must be a whole number of at least 1, not '",
                     result.stderr)


@pytest.mark.parametrize("args", [
    ["decode", "--grammar", "g", "--weights", "w", "-k", "1000000000"],
    ["paraphrase", "--pop-limit", "10001", "-s", "the house"],
])
def test_search_sizes_that_would_exhaust_the_memory_are_refused_with_a_message(args):
    result = circle(*args)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert re.search(r"error: argument \S+: must be at most 10000, not '", result.stderr)


def test_info_shows_rows_columns_with_types_and_provenance(tmp_path):
    path = tmp_path / "train.parquet"
    table = tiny_bitext()
    write_table(table, path, BITEXT, provenance("prepare_corpus", {"seed": 13}))
    result = circle("info", str(path))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"{path}: {len(table)} rows"
    assert lines[1:5] == ["  segment_id: int64 not null", "  document: string not null",
                          "  source: string not null", "  target: string not null"]
    assert '"rule": "prepare_corpus"' in result.stdout and '"schema": "bitext"' in result.stdout


def test_info_finds_a_table_as_given_else_in_the_results_directory(tmp_path):
    """The path rule of the other subcommands: a path as given (the working directory), else
    one inside --results (relative to the project root); a missing table names both tries."""
    results = tmp_path / "results" / "mine"
    (results / "corpus").mkdir(parents=True)
    write_table(tiny_bitext(), results / "corpus/train.parquet", BITEXT)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "corpus").mkdir(parents=True)
    write_table(tiny_bitext().head(2), elsewhere / "corpus/train.parquet", BITEXT)
    options = ["--project", str(tmp_path), "--experiment", "mine"]
    found = circle("info", "corpus/train.parquet", *options, cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith(f"{results / 'corpus/train.parquet'}: {len(tiny_bitext())} "
                                   "rows\n")
    given = circle("info", "corpus/train.parquet", *options, cwd=elsewhere)
    assert given.returncode == 0 and given.stdout.startswith("corpus/train.parquet: 2 rows\n")
    missing = circle("info", "corpus/test.parquet", *options, cwd=elsewhere)
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr == ("circle info: error: corpus/test.parquet: no such table (tried "
                              "corpus/test.parquet in the working directory and "
                              f"{results / 'corpus/test.parquet'} in the results directory)\n")


def test_help_has_no_docstring_markup():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # every subcommand's own help
    for text in [parser.format_help(), *(sub.format_help() for sub in commands.values())]:
        assert not re.search(r"``|:func:|:mod:|:data:|:class:", text), text


def test_a_closed_pipe_ends_the_output_quietly(tmp_path):
    text = tmp_path / "in.txt"  # more than a pipe holds
    text.write_text("".join(f"The house of God's people, verse {k}.\n" for k in range(50_000)))
    with open(text) as lines:
        process = subprocess.Popen([sys.executable, "-m", "circle.cli", "tokenize"],
                                   stdin=lines, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
    assert process.stdout.readline() == "the house of god &apos;s people , verse 0 .\n"
    process.stdout.close()  # as `| head -1` does
    stderr = process.stderr.read()
    assert process.wait(timeout=120) == 1
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr


def test_decode_defaults_to_the_lm_of_the_experiments_decoding_order(tmp_path):
    """Without --lm, decode reads the LM of the order the effective config records
    (lm.decoding_order), not a fixed 3-gram."""
    results = tmp_path / "results" / "mine"
    results.mkdir(parents=True)
    (results / "config.yaml").write_text("lm:\n  decoding_order: 4\n")
    (tmp_path / "w.txt").write_text("lm 1\n")
    (tmp_path / "in.txt").write_text("la casa\n")
    result = circle("decode", "--results", str(results), "--grammar", str(tmp_path / "g.parquet"),
                    "--weights", str(tmp_path / "w.txt"), "--input", str(tmp_path / "in.txt"))
    assert result.returncode == 2
    assert f"{results / 'lm/4gram.binary'}: language model does not exist" in result.stderr


def test_paraphrase_says_which_weights_and_finds_tables_under_results(tmp_path):
    results = tmp_path / "results" / "mine"
    (results / "weights").mkdir(parents=True)
    untuned = results / "weights/untuned-paraphrase.txt"
    untuned.write_text("lm 1\n")
    result = circle("paraphrase", "--results", str(results), "-s", "the house")
    assert (f"decoding with the UNTUNED weights {untuned}: warning, there are no tuned ones at "
            f"{results / 'weights/paraphraser-bias0.txt'}") in result.stderr
    # the next problem is the language model, looked for in the results directory given
    assert result.returncode == 2
    assert f"{results / 'lm/3gram.binary'}: language model does not exist" in result.stderr
    tuned = results / "weights/paraphraser-bias0.txt"
    tuned.write_text("lm 1\n")
    result = circle("paraphrase", "--results", str(results), "-s", "the house")
    assert f"decoding with the tuned paraphraser weights {tuned}\n" in result.stderr
    given = tmp_path / "w.txt"
    result = circle("paraphrase", "--results", str(results), "--weights", str(given), "-s", "x")
    assert f"decoding with the weights {given}\n" in result.stderr


def test_the_defaults_are_the_default_experiment_of_the_project_wherever_it_runs(tmp_path):
    """Results resolve against the project root (the checkout circle runs from, or --project),
    not against the working directory."""
    root = Path(__file__).resolve().parents[2]
    result = circle("paraphrases", "the house", cwd=tmp_path)
    assert result.returncode == 2
    assert str(root / "results/default/paraphrase/bias0.parquet") in result.stderr
    result = circle("paraphrases", "the house", "--project", str(tmp_path), "--results",
                    "results/mine", cwd=root)
    assert str(tmp_path / "results/mine/paraphrase/bias0.parquet") in result.stderr
