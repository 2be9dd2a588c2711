"""Scoring and comparing outputs of a test set (circle.experiments.scoring, `circle score`,
`circle compare`) on the tiny corpus's test set: 20 verses, two references each."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from circle.core.schemas import EVALSET
from circle.core.tables import write_table
from circle.corpus.preprocess import detokenize, normalize
from circle.experiments.evaluate import bootstrap_p_value
from circle.experiments.replicates import holm, welch_test
from circle.experiments.scoring import (
    compare_outputs,
    score_output,
    stream_references,
)

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny"


def tiny_lines(name: str) -> list[str]:
    return [normalize(line, "en") for line in (TINY / name).read_text().splitlines()]


REFERENCES = [list(pair) for pair in zip(tiny_lines("test.ref0.txt"), tiny_lines("test.ref1.txt"),
                                         strict=True)]


def degraded(lines: list[str], every: int) -> list[str]:
    """Each line without every ``every``-th word: an output worse the smaller ``every``."""
    return [" ".join(w for i, w in enumerate(line.split(), 1) if i % every) for line in lines]


def circle(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "circle.cli", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def results(tmp_path) -> Path:
    """A results directory with the config and the tokenised test set the commands read."""
    results = tmp_path / "results"
    (results / "sets").mkdir(parents=True)
    (results / "config.yaml").write_text(yaml.safe_dump(
        {"preprocess": {"source_lang": "es", "target_lang": "en", "lowercase": True}}))
    write_table(pd.DataFrame({"segment_id": range(len(REFERENCES)), "document": "test",
                              "source": tiny_lines("test.es.txt"), "references": REFERENCES,
                              "ref_order": [[0, 1]] * len(REFERENCES)}),
                results / "sets/test.parquet", EVALSET)
    return results


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def test_reference_files_give_each_segment_its_non_empty_lines():
    streams = {"a.txt": ["one", "two", "three"], "b.txt": ["uno", "", "tres"]}
    assert stream_references(streams) == [["one", "uno"], ["two"], ["three", "tres"]]
    with pytest.raises(ValueError, match=r"b\.txt: 2 lines, but a\.txt has 3"):
        stream_references({"a.txt": ["x", "y", "z"], "b.txt": ["x", "y"]})
    with pytest.raises(ValueError, match=r"line 2: empty in every reference file \(a\.txt, "
                                         r"b\.txt\)"):
        stream_references({"a.txt": ["x", " ", "z"], "b.txt": ["x", "", "z"]})


def test_score_equals_the_documented_sacrebleu_command_with_every_reference(tmp_path,
                                                                            results):
    """`circle score` and the sacrebleu command of docs/usage.md (all references, -lc and
    --chrf-lowercase) give the same scores and signatures."""
    hypotheses = degraded(tiny_lines("test.ref1.txt"), 5)
    output = write(tmp_path / "out.txt", hypotheses)
    refs = [write(tmp_path / f"ref{k}.txt", [r[k] for r in REFERENCES]) for k in (0, 1)]
    ours = circle("score", str(output), "--results", str(results))
    assert ours.returncode == 0, ours.stderr
    sacrebleu = subprocess.run(
        [sys.executable, "-m", "sacrebleu", *map(str, refs), "-i", str(output), "-m", "bleu",
         "chrf", "ter", "--tokenize", "none", "-lc", "--chrf-lowercase", "-w", "2"],
        capture_output=True, text=True, timeout=120)
    assert sacrebleu.returncode == 0, sacrebleu.stderr
    bleu, chrf, ter = json.loads(sacrebleu.stdout)
    assert ours.stdout.splitlines() == [
        f"{output}: BLEU {bleu['score']:.2f}, TER {ter['score']:.2f}, chrF {chrf['score']:.2f}",
        f"  BLEU: {bleu['signature']}", f"  TER: {ter['signature']}",
        f"  chrF: {chrf['signature']}"]
    assert 10 < bleu["score"] < 90  # neither nothing nor everything matched
    assert "nrefs:2|case:lc" in chrf["signature"]
    assert score_output(hypotheses, REFERENCES, True)["bleu"] == pytest.approx(bleu["score"],
                                                                               abs=0.005)
    # the same scores from reference files, and from plain text tokenised as the pipeline does
    again = circle("score", str(output), "--results", str(results), "--references",
                   *map(str, refs))
    assert again.stdout == ours.stdout
    plain = write(tmp_path / "plain.txt", [detokenize(line, "en").upper()
                                           for line in output.read_text().splitlines()])
    tokenised = circle("score", str(plain), "--results", str(results), "--tokenize")
    assert tokenised.stdout.replace(str(plain), str(output)) == ours.stdout


def test_score_refuses_an_output_of_the_wrong_length(tmp_path, results):
    output = write(tmp_path / "short.txt", tiny_lines("test.ref0.txt")[:-1])
    result = circle("score", str(output), "--results", str(results))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{output}: 19 lines, but the references have 20 segments" in result.stderr


def test_identical_systems_do_not_differ_and_a_worse_one_does():
    base = tiny_lines("test.ref1.txt")
    frame = compare_outputs({"A": [base], "same": [list(base)], "worse": [degraded(base, 2)]},
                            REFERENCES, True, shuffles=999, samples=200, seed=5)
    same, worse = frame.iloc[1], frame.iloc[2]
    assert same["bleu_difference"] == 0 and same["bleu_ar_p"] == 1.0
    assert same["bleu_bootstrap_p"] == 0.5  # every resample a tie
    assert worse["bleu_difference"] < -20 and worse["bleu_ar_p"] == pytest.approx(1 / 1000)
    assert worse["ter_difference"] > 0 and worse["bleu_bootstrap_p"] == 1.0
    # the bootstrap is the tables' per-run test, with its samples and seed
    assert worse["bleu_bootstrap_p"] == bootstrap_p_value(base, degraded(base, 2), REFERENCES,
                                                          "bleu", 200, 5)
    assert "bleu_welch_p" not in frame  # one output per system: no test over outputs


def test_several_outputs_per_system_add_welch_tests_adjusted_by_holm():
    base = tiny_lines("test.ref1.txt")
    systems = {"A": [base, degraded(base, 7)], "B": [degraded(base, 2), degraded(base, 3)],
               "C": [degraded(base, 5), base]}
    frame = compare_outputs(systems, REFERENCES, True, shuffles=99, seed=1)
    bleu = {name: [score_output(h, REFERENCES, True)["bleu"] for h in outputs]
            for name, outputs in systems.items()}
    assert frame["bleu"].tolist() == pytest.approx([sum(v) / 2 for v in bleu.values()])
    welch = [welch_test(bleu["A"], bleu[name]).p_value for name in ("B", "C")]
    assert frame["bleu_welch_p"].iloc[1:].tolist() == pytest.approx(welch)
    family = frame[["bleu_welch_p", "ter_welch_p"]].iloc[1:].to_numpy().T.ravel()
    assert frame[["bleu_holm_p", "ter_holm_p"]].iloc[1:].to_numpy().T.ravel() == \
        pytest.approx(holm(family))
    assert frame["bleu_bootstrap_p"].isna().all()  # the bootstrap is for one output each
    with pytest.raises(ValueError, match="system B has 1 outputs but the baseline A has 2"):
        compare_outputs({"A": [base, base], "B": [base]}, REFERENCES, True)


def test_compare_names_systems_and_prints_the_tests(tmp_path, results):
    base = write(tmp_path / "base.txt", tiny_lines("test.ref1.txt"))
    worse = write(tmp_path / "worse.txt", degraded(tiny_lines("test.ref1.txt"), 2))
    result = circle("compare", "--results", str(results), "--shuffles", "99", "--system", "1H",
                    str(base), str(base), "--system", "cut", str(worse), str(base))
    assert result.returncode == 0, result.stderr
    assert "20 segments; baseline 1H;" in result.stdout
    header, _, cut = result.stdout.splitlines()[1:4]
    assert "bleu_ar_p" in header and "bleu_welch_p" in header and "bleu_holm_p" in header
    assert re.match(r"\s*cut\s+2\s", cut)
    result = circle("compare", "--results", str(results), "--system", "1H", str(base),
                    "--system", "1H", str(worse))
    assert result.returncode == 2 and "system names repeat: 1H, 1H" in result.stderr
