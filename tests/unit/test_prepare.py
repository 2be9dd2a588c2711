"""Corpus preparation: the seeded reference-order simulation and the references it selects,
user-file corpora and the seeded samples of the training bitext."""

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from circle.core.schemas import BITEXT
from circle.core.tables import read_metadata, read_table
from circle.corpus.prepare import (
    BALANCED,
    EVAL_SETS,
    PER_DOCUMENT,
    bible_tables,
    choose_order,
    file_tables,
    overlap_problems,
    prepare_corpus,
    reference_order,
    write_unused_training,
)
from circle.corpus.references import ordered_references, select_references, single_references
from circle.corpus.validate import CorpusError
from circle.experiments.single_reference import single_reference_table
from circle.figures.single_reference import single_reference_markdown

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


def test_select_references_follows_the_seeded_order():
    refs = ["a", "b", "c", "d"]
    assert select_references(refs, [2, 0, 3, 1], 1) == ["c"]
    assert select_references(refs, [2, 0, 3, 1], 3) == ["c", "a", "d"]
    with pytest.raises(ValueError):
        select_references(refs, [2, 0, 3, 1], 5)


def test_a_prepared_sets_references_are_taken_in_its_seeded_order(tmp_path):
    (tmp_path / "train.es").write_text("hola\n")
    (tmp_path / "train.en").write_text("hello\n")
    files = {"train": {"source": str(tmp_path / "train.es"), "target": str(tmp_path / "train.en")},
             "tune": write_set(tmp_path, "tune", 4, refs=3), "test": write_set(tmp_path, "test", 2),
             "paratune": write_set(tmp_path, "paratune", 2)}
    (tmp_path / "tune.docs").write_text("d1\nd1\nd2\nd2\n")
    files["tune"]["documents"] = str(tmp_path / "tune.docs")
    tune = file_tables(files, 100, seed=1)["tune"]
    orders = [list(order) for order in tune["ref_order"]]
    two = ordered_references(tune, 2)
    assert two == [[f"ref {order[0]} {i}", f"ref {order[1]} {i}"]
                   for i, order in enumerate(orders)]
    assert single_references(tune) == [first for first, _ in two]
    assert [len(refs) for refs in ordered_references(tune)] == [3, 3, 3, 3]
    assert single_references(tune, 3) == [f"ref 2 {i}" for i in range(4)]
    with pytest.raises(ValueError, match="cannot take 4 of 3 references"):
        ordered_references(tune, 4)
    with pytest.raises(ValueError, match="cannot take reference set 4: a segment has 3"):
        single_references(tune, 4)


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


# ref_order digests of the default rule before corpus.single_reference existed: the tiny corpus
# (tests/data/tiny) and the default experiment's Bible sets, seed 13
DEFAULT_ORDER_DIGESTS = {"tiny": {"tune": "524a92f6a8c42579", "test": "1f69098b08d7b115",
                                  "paratune": "1f69098b08d7b115"},
                         "bible": {"tune": "6dadf0dede4e65b2", "test": "c40face5775a5ef6",
                                   "paratune": "2337f03e60003d25"}}
BIBLE = ROOT / "resources" / "bible" / "bible.parquet"


def order_digest(table) -> str:
    orders = [[int(i) for i in order] for order in table["ref_order"]]
    return hashlib.sha256(json.dumps(orders).encode()).hexdigest()[:16]


def tiny_files() -> dict:
    files = yaml.safe_load((TINY / "config.yaml").read_text())["corpus"]["files"]
    for spec in files.values():
        for key, value in spec.items():
            spec[key] = [str(TINY / v) for v in value] if isinstance(value, list) \
                else str(TINY / value)
    return files


@pytest.mark.parametrize("rule", [None, PER_DOCUMENT])
def test_the_default_choice_rule_draws_the_orders_it_always_drew(rule):
    extra = {} if rule is None else {"rule": rule}
    corpora = {"tiny": file_tables(tiny_files(), 2000, 13, **extra),
               "bible": bible_tables(BIBLE, "es", "kjv", ["web", "dar", "ylt", "bbe"], 13,
                                     **extra)}
    for corpus, tables in corpora.items():
        for name, digest in DEFAULT_ORDER_DIGESTS[corpus].items():
            assert order_digest(tables[name]) == digest, (corpus, name)


def test_the_balanced_rule_balances_every_prefix_of_documents():
    """Balanced: in every prefix of the documents (so in a set cut to its first whole
    documents), the numbers of documents whose single reference is each translation differ by
    at most one; each document keeps one order, a permutation."""
    tables = bible_tables(BIBLE, "es", "kjv", ["web", "dar", "ylt", "bbe"], 13, BALANCED)
    default = bible_tables(BIBLE, "es", "kjv", ["web", "dar", "ylt", "bbe"], 13)
    for name in ("tune", "test", "paratune"):
        table = tables[name]
        firsts = table.groupby("document", sort=False)["ref_order"].first()
        counts = np.zeros(4, int)
        for order in firsts:
            assert sorted(order) == [0, 1, 2, 3]
            counts[order[0]] += 1
            assert counts.max() - counts.min() <= 1
        assert table.groupby("document")["ref_order"].apply(
            lambda orders: len({tuple(o) for o in orders}) == 1).all()
        # the thesis's per-document draw is not balanced on this corpus
        unbalanced = np.bincount([o[0] for o in default[name].groupby(
            "document", sort=False)["ref_order"].first()], minlength=4)
        assert name != "tune" or unbalanced.max() - unbalanced.min() > 1
    assert order_digest(tables["tune"]) != order_digest(
        bible_tables(BIBLE, "es", "kjv", ["web", "dar", "ylt", "bbe"], 14, BALANCED)["tune"])


def test_an_unknown_choice_rule_is_refused():
    with pytest.raises(ValueError, match="unknown single-reference rule"):
        choose_order(DOCS, 4, 13, "by_length")


def test_the_single_reference_page_counts_translations_and_length():
    tune = pd.DataFrame({"segment_id": [1, 2, 3], "document": ["a", "a", "b"],
                         "references": [["one two three four", "one two"],
                                        ["x y z w", "x y"], ["p q", "p q r s t u"]],
                         "ref_order": [[0, 1], [0, 1], [1, 0]]})
    table = single_reference_table(tune, ["long", "short"]).set_index("reference")
    assert table.loc["long", "documents"] == 1 and table.loc["long", "segments"] == 2
    assert table.loc["long", "length_ratio"] == pytest.approx(8 / 4)
    assert table.loc["short", "length_ratio"] == pytest.approx(6 / 2)
    assert table.loc["all", "segments"] == 3
    assert table.loc["all", "length_ratio"] == pytest.approx(14 / 6)
    assert "| long | 1 | 2 | 66.7 | 4.0 | 2.000 |" in single_reference_markdown(
        table.reset_index(), PER_DOCUMENT)


def sampled(directory: Path, segments: int, seed: int = 13) -> pd.DataFrame:
    """The tiny corpus's train table (500 verses) with corpus.train_segments ``segments``."""
    directory.mkdir(exist_ok=True)
    corpus = {**tiny_corpus(directory), "train_segments": segments}
    prepare_corpus(corpus, 2000, seed, {"train": directory / "train.parquet"}, {})
    return read_table(directory / "train.parquet", BITEXT)


def test_training_samples_are_seeded_nested_in_corpus_order_and_recorded(tmp_path):
    whole = file_tables(tiny_files(), 2000, 13)["train"]
    small, large = sampled(tmp_path / "100", 100), sampled(tmp_path / "300", 300)
    assert (len(small), len(large)) == (100, 300)
    assert set(small["segment_id"]) < set(large["segment_id"]) < set(whole["segment_id"])
    for table in (small, large):
        assert list(table["segment_id"]) == sorted(table["segment_id"])
        rows = whole.set_index("segment_id").loc[table["segment_id"]]
        assert list(rows["source"]) == list(table["source"])
        assert list(rows["target"]) == list(table["target"])
    assert read_metadata(tmp_path / "300" / "train.parquet")["train_segments"] == "300"
    assert read_metadata(tmp_path / "300" / "train.parquet")["train_segments_of"] == "500"
    assert list(sampled(tmp_path / "again", 100)["segment_id"]) == list(small["segment_id"])
    assert set(sampled(tmp_path / "seed14", 100, seed=14)["segment_id"]) != set(
        small["segment_id"])


def test_without_train_segments_the_train_table_is_the_whole_bitext_as_before(tmp_path):
    prepared(tmp_path, tiny_corpus(tmp_path))
    assert len(read_table(tmp_path / "train.parquet", BITEXT)) == 500
    assert "train_segments" not in read_metadata(tmp_path / "train.parquet")


def test_a_sample_larger_than_the_training_bitext_is_refused(tmp_path):
    with pytest.raises(CorpusError, match=r"corpus.train_segments is 501, but the training "
                                          r"bitext has only 500 segments"):
        sampled(tmp_path, 501)
    assert not (tmp_path / "train.parquet").exists()
    assert len(sampled(tmp_path, 500)) == 500


def test_the_unused_training_table_is_the_complement_of_the_sample(tmp_path):
    corpus = {**tiny_corpus(tmp_path), "train_segments": 300}
    write_unused_training(corpus, 2000, 13, tmp_path / "unused.parquet", {})
    unused = read_table(tmp_path / "unused.parquet", BITEXT)
    train = sampled(tmp_path / "sample", 300)
    whole = file_tables(tiny_files(), 2000, 13)["train"]
    assert len(unused) == 200 and list(unused["segment_id"]) == sorted(unused["segment_id"])
    assert set(unused["segment_id"]).isdisjoint(train["segment_id"])
    assert sorted([*unused["segment_id"], *train["segment_id"]]) == list(whole["segment_id"])
    assert list(unused["source"]) == list(
        whole.set_index("segment_id").loc[unused["segment_id"], "source"])
    assert read_metadata(tmp_path / "unused.parquet")["train_segments"] == "300"
