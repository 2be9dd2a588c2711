"""Corpus preparation: the seeded reference-order simulation and user-file corpora."""

import pytest

from circle.corpus.prepare import file_tables, reference_order
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
