"""Bad inputs on the artefacts of a real tiny run: each ends in a one-line error naming the file
(and line), with a non-zero exit status and no traceback.

The tiny experiment (tests/data/tiny) is run once, up to its untuned translations; the command
line and single pipeline jobs are then given broken copies of its grammar, language model,
weights, input and alignment.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_workflow import TINY, snakemake, tiny_config

from circle.core.schemas import GRAMMAR
from circle.core.tables import read_table

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    """A directory holding the tiny experiment run up to its untuned translations."""
    directory = tmp_path_factory.mktemp("tiny")
    result = snakemake("--cores", "2", "--configfile", str(tiny_config(directory)),
                       "--directory", str(directory), "untuned_translations")
    assert result.returncode == 0, result.stdout + result.stderr
    return directory


def circle(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "circle.cli", *args], capture_output=True,
                          text=True, timeout=300)


def truncated(run: Path, tmp: Path) -> Path:
    path = tmp / "truncated.parquet"
    data = (run / "results/tiny/grammar/filtered/test.parquet").read_bytes()
    path.write_bytes(data[:len(data) // 2])
    return path


def with_non_finite_features(run: Path, tmp: Path) -> Path:
    """The filtered test grammar with a NaN, an inf and a -inf in one feature column."""
    table = pq.read_table(run / "results/tiny/grammar/filtered/test.parquet")
    column = table.schema.get_field_index("log_lex_f_given_e")
    values = table.column(column).to_numpy().copy()
    values[[0, 7, 9]] = [np.nan, np.inf, -np.inf]
    path = tmp / "non-finite.parquet"
    pq.write_table(table.set_column(column, table.field(column), pa.array(values)), path)
    return path


def nan_weights(run: Path, tmp: Path) -> Path:
    path = tmp / "nan-weights.txt"
    text = (run / "results/tiny/weights/untuned-translation.txt").read_text()
    path.write_text(text.replace("lm 0.5", "lm nan"))
    return path


def latin1(run: Path, tmp: Path) -> Path:
    path = tmp / "test.latin1.es"
    path.write_bytes((TINY / "test.es.txt").read_text(encoding="utf-8").encode("latin-1"))
    return path


Broken = Callable[[Path, Path], Path]

DECODE_CASES: dict[str, tuple[str, Broken, str]] = {
    "nan-weight": ("--weights", nan_weights, ":5: weight 'lm' is not a finite number: 'nan'"),
    "truncated-grammar": ("--grammar", truncated, ": not a readable Parquet file (Parquet"),
    "text-as-grammar": ("--grammar", lambda run, tmp: TINY / "test.es.txt",
                        ": not a readable Parquet file (Parquet magic bytes not found"),
    "non-finite-features": ("--grammar", with_non_finite_features,
                    ": column log_lex_f_given_e has 3 non-finite values"),
    "missing-lm": ("--lm", lambda run, tmp: tmp / "missing.binary",
                   ": language model does not exist"),
    "text-as-lm": ("--lm", lambda run, tmp: TINY / "train.en.txt", ": not a KenLM model ("),
    "latin1-input": ("--input", latin1, ":1: invalid UTF-8 at byte 19 of the line"),
    "nbest-as-grammar": ("--grammar", lambda run, tmp: run / NBEST,
                         ": table schema 'nbest' is not a grammar schema"),
    "directory-as-input": ("--input", lambda run, tmp: tmp,
                           ": not a file (--input names a text file, one sentence per line)"),
}
NBEST = "results/tiny/decode/untuned-translation/test.nbest.parquet"


@pytest.mark.parametrize("case", DECODE_CASES)
def test_circle_decode_reports_a_bad_input_in_one_line(tiny_run, tmp_path, case):
    option, broken, problem = DECODE_CASES[case]
    arguments = {"--grammar": tiny_run / "results/tiny/grammar/filtered/test.parquet",
                 "--lm": tiny_run / "results/tiny/lm/3gram.binary",
                 "--weights": tiny_run / "results/tiny/weights/untuned-translation.txt",
                 "--input": TINY / "test.es.txt"}
    arguments[option] = broken(tiny_run, tmp_path)
    result = circle("decode", *(str(part) for pair in arguments.items() for part in pair))
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    error = result.stderr[result.stderr.index("circle decode: error: "):]
    assert f"{arguments[option]}{problem}" in error


def test_circle_validate_refuses_a_line_that_tokenises_to_nothing(tmp_path):
    lines = (TINY / "tune.ref0.txt").read_text(encoding="utf-8").splitlines()
    lines[2] = "\x1a"
    path = tmp_path / "tune.ref0.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = circle("validate", str(TINY / "tune.es.txt"), str(path))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{path}:3: no token left after tokenisation" in result.stderr


def test_a_control_character_line_stops_the_first_job(tmp_path):
    bad = tmp_path / "tune.ref1.txt"
    lines = (TINY / "tune.ref1.txt").read_text(encoding="utf-8").splitlines()
    lines[6] = "\x07"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = tiny_config(tmp_path, **{"corpus.files.tune.references": [
        str(TINY / "tune.ref0.txt"), str(bad)]})
    result = snakemake("--cores", "1", "--configfile", str(config), "--directory", str(tmp_path))
    assert result.returncode != 0
    log = "".join(p.read_text() for p in (tmp_path / "logs/tiny").glob("prepare_corpus/*.log"))
    assert f"{bad}:7: no token left after tokenisation" in log and "Traceback" not in log
    assert not (tmp_path / "results/tiny/tokenized").exists()


def test_a_text_file_as_frozen_alignment_is_refused_when_the_workflow_is_built(tmp_path):
    pharaoh = tmp_path / "alignment.txt"
    pharaoh.write_text("0-0 1-1 2-2\n0-1 1-0\n")
    config = tiny_config(tmp_path, **{"alignment.frozen": str(pharaoh)})
    result = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path),
                       "results/tiny/grammar/bilingual.parquet")
    assert result.returncode != 0
    assert (f"alignment.frozen: {pharaoh}: not a readable Parquet file (Parquet magic bytes"
            in result.stdout + result.stderr)
    assert "rebuild it with `snakemake refreeze_alignment`" in result.stdout + result.stderr


def test_a_truncated_grammar_is_removed_and_rebuilt_by_a_plain_rerun(tiny_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(tiny_run, run, symlinks=True)
    target = "results/tiny/grammar/bilingual.parquet"
    grammar = run / target
    table = read_table(grammar, GRAMMAR)
    data = grammar.read_bytes()
    grammar.write_bytes(data[:len(data) // 3])
    result = snakemake("--cores", "1", "--configfile", str(run / "config.yaml"),
                       "--directory", str(run), target)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert f"{target}: not a readable Parquet file (Parquet magic bytes not found in footer." \
        in output and "removed it, so that this run rebuilds it" in output
    assert "rule extract_grammar:" in output and "Traceback" not in output
    pd.testing.assert_frame_equal(read_table(grammar, GRAMMAR), table)


def test_a_config_key_given_twice_is_refused_when_the_workflow_is_built(tmp_path):
    config = tiny_config(tmp_path)
    config.write_text(config.read_text() + "seed: 14\n")
    result = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path))
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in output
    line = config.read_text().splitlines().index("seed: 14") + 1
    assert f"{config}:{line}: key 'seed' given twice in one mapping" in output


def test_the_outputs_made_from_a_removed_table_are_rebuilt_with_it(tiny_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(tiny_run, run, symlinks=True)
    grammar = run / "results/tiny/grammar/bilingual.parquet"
    grammar.write_bytes(truncated := grammar.read_bytes()[:-100])
    result = snakemake("-n", "--configfile", str(run / "config.yaml"), "--directory", str(run),
                       "results/tiny/grammar/filtered/test.parquet")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert ("a run would remove it (a dry run removes nothing), so that a run would rebuild it "
            "and what was made from it") in output and grammar.read_bytes() == truncated
    assert "Nothing to be done" not in output
    assert "rule extract_grammar:" in output and "rule filter_grammar:" in output
