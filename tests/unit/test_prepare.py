"""Corpus preparation: the seeded reference-order simulation and user-file corpora."""

from pathlib import Path

import pytest
import yaml

from circle.corpus.prepare import (
    EVAL_SETS,
    bible_tables,
    file_tables,
    overlap_problems,
    prepare_corpus,
    reference_order,
)
from circle.corpus.validate import CorpusError

DOCS = ["a", "a", "b", "c", "b", "a"]


def test_reference_order_is_per_document_seeded_and_a_permutation():
    orders = reference_order(DOCS, 4, seed=13)
    assert orders == reference_order(DOCS, 4, seed=13)
    assert orders[0] == orders[1] == orders[5] and orders[2] == orders[4]
    assert all(sorted(o) == [0, 1, 2, 3] for o in orders)
    other_seeds = {tuple(map(tuple, reference_order(DOCS, 4, seed=s))) for s in range(10)}
    assert len(other_seeds) > 1


def test_reference_order_pins_the_first_reference():
    orders = reference_order(DOCS, 4, seed=13, first={"a": 2, "c": 0})
    assert orders[0][0] == 2 and orders[3][0] == 0 and sorted(orders[0]) == [0, 1, 2, 3]


def write_set(tmp_path, name, n, refs=2):
    (tmp_path / f"{name}.src").write_text("".join(f"fuente {i}\n" for i in range(n)))
    for r in range(refs):
        (tmp_path / f"{name}.ref{r}").write_text("".join(f"ref {r} {i}\n" for i in range(n)))
    return {"source": str(tmp_path / f"{name}.src"),
            "references": [str(tmp_path / f"{name}.ref{r}") for r in range(refs)]}


def test_user_files_become_split_tables(tmp_path):
    (tmp_path / "train.es").write_text("hola\nadiós\n")
    (tmp_path / "train.en").write_text("hello\ngoodbye\n")
    files = {"train": {"source": str(tmp_path / "train.es"), "target": str(tmp_path / "train.en")},
             "tune": write_set(tmp_path, "tune", 3), "test": write_set(tmp_path, "test", 2),
             "paratune": write_set(tmp_path, "paratune", 2, refs=3)}
    (tmp_path / "tune.docs").write_text("d1\nd1\nd2\n")
    files["tune"]["documents"] = str(tmp_path / "tune.docs")
    tables = file_tables(files, 100, seed=1)
    assert list(tables["train"]["target"]) == ["hello", "goodbye"]
    tune = tables["tune"]
    assert list(tune["references"][2]) == ["ref 0 2", "ref 1 2"]
    assert list(tune["document"]) == ["d1", "d1", "d2"]
    assert list(tune["ref_order"][0]) == list(tune["ref_order"][1])
    assert len(tables["paratune"]["references"][0]) == 3


def test_problems_of_every_set_are_reported_together(tmp_path):
    (tmp_path / "train.es").write_text("hola\nadiós\n")
    (tmp_path / "train.en").write_text("hello\n")
    files = {"train": {"source": str(tmp_path / "train.es"), "target": str(tmp_path / "train.en")},
             "tune": write_set(tmp_path, "tune", 3), "test": write_set(tmp_path, "test", 2),
             "paratune": write_set(tmp_path, "paratune", 2)}
    (tmp_path / "test.ref1").write_text("only one line\n")
    with pytest.raises(CorpusError) as caught:
        file_tables(files, 100, seed=1)
    text = str(caught.value)
    assert "train.en: has 1 lines but" in text and "test.ref1: has 1 lines but" in text


TINY = Path(__file__).resolve().parents[1] / "data" / "tiny"
ROOT = TINY.parents[2]


def tiny_corpus(directory: Path, test_line: str | None = None) -> dict:
    """The tiny config's corpus, with line 5 of the test source replaced by ``test_line``."""
    config = yaml.safe_load((TINY / "config.yaml").read_text())["corpus"]
    for spec in config["files"].values():
        for key, value in spec.items():
            spec[key] = ([str(TINY / v) for v in value] if isinstance(value, list)
                         else str(TINY / value))
    if test_line is not None:
        lines = (TINY / "test.es.txt").read_text(encoding="utf-8").splitlines()
        lines[4] = test_line
        config["files"]["test"]["source"] = str(directory / "test.es.txt")
        (directory / "test.es.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


def prepared(directory: Path, corpus: dict, overlap: str = "error") -> None:
    outputs = {name: directory / f"{name}.parquet" for name in ("train", *EVAL_SETS)}
    prepare_corpus(corpus, 2000, 13, outputs, {}, overlap)


def test_the_shipped_corpora_have_no_overlapping_sets(tmp_path):
    prepared(tmp_path, tiny_corpus(tmp_path))
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    bible = {"kind": "bible", "bible": {"table": str(ROOT / "resources/bible/bible.parquet"),
                                        "source": "es", "train_target": "kjv",
                                        "references": config["corpus"]["bible"]["references"]}}
    tables = bible_tables(bible["bible"]["table"], "es", "kjv",
                          bible["bible"]["references"], 13)
    assert overlap_problems(tables, bible) == []


@pytest.mark.parametrize("other, line, found", [
    ("train", 10, "train.es.txt:10"), ("tune", 3, "tune.es.txt:3")])
def test_a_test_sentence_seen_in_training_or_tuning_is_refused(tmp_path, other, line, found):
    seen = (TINY / f"{other}.es.txt").read_text(encoding="utf-8").splitlines()[line - 1]
    changed = "  " + seen.upper().replace(",", " , ") + " "  # the same words, written otherwise
    corpus = tiny_corpus(tmp_path, changed)
    with pytest.raises(CorpusError) as caught:
        prepared(tmp_path, corpus)
    assert caught.value.problems == [
        f"{tmp_path / 'test.es.txt'}:5: 1 test source(s) also in the {other} set (first: this "
        f"line, as {TINY / found})", "set validation.overlap: warn to run anyway"]
    assert not (tmp_path / "train.parquet").exists()


def test_overlapping_sets_are_only_logged_with_overlap_warn(tmp_path, caplog):
    seen = (TINY / "train.es.txt").read_text(encoding="utf-8").splitlines()[9]
    prepared(tmp_path, tiny_corpus(tmp_path, seen), overlap="warn")
    assert f"{tmp_path / 'test.es.txt'}:5: 1 test source(s) also in the train set" in caplog.text
    assert (tmp_path / "test.parquet").exists()
