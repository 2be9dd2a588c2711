"""Decoder input and output: grammar tables, weight files, n-best formats, corpus decoding."""

from __future__ import annotations

import codecs
import json
import logging
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from circle.core.schemas import ALL_SCHEMAS, TableSchema
from circle.core.tables import read_metadata, read_table, write_table
from circle.decoder import (
    NBEST,
    Decoder,
    DecoderSettings,
    Grammar,
    GrammarError,
    LanguageModel,
    LanguageModelError,
    best_hypotheses,
    best_of,
    best_text,
    decode_corpus,
    format_nbest,
    load_grammar,
    nbest_rows,
    read_weights,
    write_weights,
)
from circle.decoder.corpus import DecoderPool
from circle.decoder.grammar import NT, concatenated_ranges
from circle.decoder.sets import gather_nbest

ARPA = """\\data\\
ngram 1=9
ngram 2=9

\\1-grams:
-1.0\t<unk>
-99\t<s>\t-0.3
-0.8\t</s>
-0.9\tthe\t-0.2
-1.1\thouse\t-0.4
-1.2\tis\t-0.3
-1.3\tsmall\t-0.1
-1.3\tvery\t-0.2
-1.5\tdog\t-0.2

\\2-grams:
-0.2\t<s> the
-0.3\tthe house
-0.6\tthe dog
-0.3\thouse is
-0.4\tdog is
-0.5\tis small
-0.5\tis very
-0.2\tvery small
-0.1\tsmall </s>

\\end\\
"""

TEST_SCHEMA = TableSchema(
    "decoder_test_grammar", 1,
    pa.schema([pa.field("lhs", pa.string()), pa.field("source", pa.string()),
               pa.field("target", pa.string()), pa.field("log_p", pa.float64()),
               pa.field("log_lex", pa.float64()), pa.field("count", pa.float64())]),
    "A grammar table for the decoder tests.", features=("log_p", "log_lex"))

RULES = pd.DataFrame(
    [("X", "la casa", "the house", -0.2, -0.4, 3.0),
     ("X", "casa", "house", -0.1, -0.3, 5.0),
     ("X", "la", "the", -0.1, -0.1, 9.0),
     ("X", "es", "is", -0.1, -0.2, 8.0),
     ("X", "pequeña", "small", -0.3, -0.3, 2.0),
     ("X", "el perro", "the dog", -0.2, -0.5, 1.0),
     ("X", "[X,1] muy [X,2]", "[X,1] very [X,2]", -0.7, -0.9, 1.0),
     ("X", "[X,2] es [X,1]", "[X,2] is [X,1]", -0.5, -0.5, 1.0)],
    columns=["lhs", "source", "target", "log_p", "log_lex", "count"])

WEIGHTS = {"log_p": 1.0, "log_lex": 0.5, "lm": 1.0, "word_penalty": -0.1,
           "phrase_penalty": -0.2, "glue": -0.1, "oov": -3.0, "target": -2.0}


@pytest.fixture
def lm_path(tmp_path):
    path = tmp_path / "lm.arpa"
    path.write_text(ARPA, encoding="utf-8")
    return path


@pytest.fixture
def grammar_path(tmp_path, monkeypatch):
    monkeypatch.setitem(ALL_SCHEMAS, TEST_SCHEMA.name, TEST_SCHEMA)
    path = tmp_path / "grammar.parquet"
    write_table(RULES, path, TEST_SCHEMA)
    return path


def one_rule_grammar(source: str, target: str, lhs: str = "X") -> Grammar:
    frame = pd.DataFrame([(lhs, source, target, 0.0)], columns=["lhs", "source", "target", "f"])
    return Grammar.from_frame(frame, ["f"])


def test_load_grammar_reads_schema_features(grammar_path):
    grammar = load_grammar(grammar_path)
    assert grammar.feature_names == ("log_p", "log_lex")
    assert len(grammar) == len(RULES)
    assert grammar.num_sources == len(RULES)


def test_nonterminal_order_is_normalised():
    swapped = one_rule_grammar("[X,2] de [X,1]", "[X,1] of [X,2]")
    plain = one_rule_grammar("[X,1] de [X,2]", "[X,2] of [X,1]")
    assert swapped.rules(0)[0].target == plain.rules(0)[0].target == (1, "of", 0)
    assert swapped.trie == plain.trie
    # the tokenised target that the compiled search reads: −1 − source position
    assert swapped.target_ids.tolist() == plain.target_ids.tolist() == [-2, 0, -1]


@pytest.mark.parametrize("source, target", [
    ("[X,1]", "[X,1]"), ("a [X,3]", "b [X,3]"), ("a [Y,1]", "b [Y,1]"),
    ("a [X,2]", "b [X,2]"), ("a [X,1] b [X,1]", "[X,1] [X,1]")])
def test_unusable_source_sides_are_rejected(source, target):
    with pytest.raises(GrammarError):
        one_rule_grammar(source, target)


@pytest.mark.parametrize("target", ["b", "b [X,1] [X,1]", "b [X,2]"])
def test_unusable_target_sides_are_rejected(target):
    with pytest.raises(GrammarError, match="a \\[X,1\\]"):
        one_rule_grammar("a [X,1]", target)


def test_only_lhs_x():
    with pytest.raises(GrammarError):
        one_rule_grammar("a", "b", lhs="S")


def test_weights_round_trip_and_errors(tmp_path):
    path = tmp_path / "weights.txt"
    weights = {"lm": 0.1 + 0.2, "oov": -100.0, "log_p": 1e-17}
    write_weights(path, weights)
    assert read_weights(path) == weights
    path.write_text("# tuned\n\nlm 0.5\noov -1\n", encoding="utf-8")
    assert read_weights(path) == {"lm": 0.5, "oov": -1.0}
    for bad in ("lm 0.5 1\n", "lm x\n", "lm 1\nlm 2\n"):
        path.write_text(bad, encoding="utf-8")
        with pytest.raises(ValueError):
            read_weights(path)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_a_weight_that_is_not_finite_is_refused_with_file_and_line(tmp_path, value):
    path = tmp_path / "weights.txt"
    path.write_text(f"# tuned\noov -1\nlm {value}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(
            f"{path}:3: weight 'lm' is not a finite number: '{value}'")):
        read_weights(path)


def test_a_byte_order_mark_before_the_first_weight_is_dropped(tmp_path):
    path = tmp_path / "weights.txt"
    path.write_bytes(codecs.BOM_UTF8 + b"lm 0.5\noov -1\n")
    assert read_weights(path) == {"lm": 0.5, "oov": -1.0}


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_grammar_with_non_finite_features_is_refused_naming_file_and_column(
        tmp_path, monkeypatch, value):
    monkeypatch.setitem(ALL_SCHEMAS, TEST_SCHEMA.name, TEST_SCHEMA)
    path = tmp_path / "grammar.parquet"
    rules = RULES.copy()
    rules.loc[[2, 5], "log_lex"] = value
    write_table(rules, path, TEST_SCHEMA)
    with pytest.raises(GrammarError, match=re.escape(
            f"{path}: column log_lex has 2 non-finite values")):
        load_grammar(path)


def grammar_arrays(grammar: Grammar) -> list:
    """Everything the decoder reads of a grammar."""
    return [grammar.features(slice(None)), grammar.rows(np.arange(grammar.num_sources)),
            grammar.target_ids, grammar.target_offsets, grammar.terminal_counts,
            grammar.trie, grammar.vocabulary]


@pytest.mark.parametrize("batch_rows", [1, 3, 100])
def test_a_grammar_loaded_in_batches_is_the_grammar_built_at_once(grammar_path, monkeypatch,
                                                                   batch_rows):
    """load_grammar reads the table a batch at a time: sources and words are numbered as they
    first appear in the whole table, whatever the batches."""
    monkeypatch.setattr("circle.decoder.grammar.LOAD_BATCH_ROWS", batch_rows)
    loaded = load_grammar(grammar_path)
    built = Grammar.from_frame(RULES, ["log_p", "log_lex"])
    for got, expected in zip(grammar_arrays(loaded), grammar_arrays(built), strict=True):
        if isinstance(expected, tuple) and isinstance(expected[0], np.ndarray):
            assert all(np.array_equal(g, e) for g, e in zip(got, expected, strict=True))
        elif isinstance(expected, np.ndarray):
            assert np.array_equal(got, expected) and got.dtype == expected.dtype
        else:
            assert got == expected
    assert [rule.target for rule in loaded.rules_at(range(len(loaded)))] == \
        [rule.target for rule in built.rules_at(range(len(built)))]


@pytest.mark.parametrize("row, problem", [
    (("X", "[X,1] muy [X,2]", "[X,1] very", -0.7, -0.9, 1.0),
     "rule '[X,1] muy [X,2]' → '[X,1] very': the target side must use each source nonterminal "
     "exactly once"),
    (("X", "casa", "[Y,1] house", -0.1, -0.3, 5.0),
     "unsupported nonterminal '[Y,1]' in rule '[Y,1] house'"),
    (("S", "casa", "house", -0.1, -0.3, 5.0),
     "only the left-hand side X is supported, found ['S']"),
])
def test_a_grammar_with_a_bad_rule_is_refused_quoting_it(tmp_path, monkeypatch, row, problem):
    monkeypatch.setitem(ALL_SCHEMAS, TEST_SCHEMA.name, TEST_SCHEMA)
    monkeypatch.setattr("circle.decoder.grammar.LOAD_BATCH_ROWS", 4)
    path = tmp_path / "grammar.parquet"
    write_table(pd.concat([RULES, pd.DataFrame([row], columns=RULES.columns)],
                          ignore_index=True), path, TEST_SCHEMA)
    with pytest.raises(GrammarError, match=re.escape(problem)):
        load_grammar(path)


@pytest.mark.parametrize("content, problem", [
    (None, "language model does not exist"),
    ("la casa es pequeña\n", "not a KenLM model"),
])
def test_the_language_model_is_checked_before_the_grammar_is_loaded(tmp_path, content,
                                                                     problem):
    lm = tmp_path / "lm.bin"
    if content is not None:
        lm.write_text(content, encoding="utf-8")
    missing_grammar = tmp_path / "no-grammar.parquet"
    with pytest.raises(LanguageModelError, match=re.escape(f"{lm}: {problem}")):
        decode_corpus(["la casa"], missing_grammar, lm, WEIGHTS)


def test_weights_must_fit_the_features(grammar_path, lm_path):
    grammar, lm = load_grammar(grammar_path), LanguageModel(lm_path)
    untargeted = {k: v for k, v in WEIGHTS.items() if k != "target"}
    assert Decoder(grammar, lm, untargeted).model.target_weight == 0.0
    with pytest.raises(ValueError, match="missing"):
        Decoder(grammar, lm, {k: v for k, v in WEIGHTS.items() if k != "lm"})
    with pytest.raises(ValueError, match="unknown"):
        Decoder(grammar, lm, {**WEIGHTS, "typo": 1.0})


def test_nbest_text_and_rows(tmp_path, grammar_path, lm_path):
    decoder = Decoder(load_grammar(grammar_path), LanguageModel(lm_path), WEIGHTS,
    DecoderSettings(k=5))
    hypotheses = decoder.decode("la casa es muy pequeña")
    lines = format_nbest(7, hypotheses)
    assert len(lines) == len(hypotheses) > 1
    for line, h in zip(lines, hypotheses, strict=True):
        segment, text, features, total = line.split(" ||| ")
        values = moses_features(features)
        assert (segment, text) == ("7", h.text)
        assert list(values) == list(decoder.feature_names)
        assert all(len(v) == 1 for v in values.values())
        assert float(total) == h.score
        assert math.isclose(sum(WEIGHTS[n] * v[0] for n, v in values.items()), h.score,
                            abs_tol=1e-9)
    path = tmp_path / "nbest.parquet"
    rows = nbest_rows(7, hypotheses, target="the house")
    write_table(pd.DataFrame(rows), path, NBEST,
                metadata={"feature_names": json.dumps(decoder.feature_names)})
    table = read_table(path, NBEST)
    assert json.loads(read_metadata(path)["feature_names"]) == list(decoder.feature_names)
    assert table["hypothesis"].tolist() == [h.text for h in hypotheses]
    assert table["rank"].tolist() == list(range(len(hypotheses)))
    assert list(table["features"][0]) == list(hypotheses[0].features.values())


def test_the_1best_of_a_list_and_of_a_table_is_the_hypothesis_of_rank_0(grammar_path, lm_path):
    decoder = Decoder(load_grammar(grammar_path), LanguageModel(lm_path), WEIGHTS,
                      DecoderSettings(k=5))
    lists = {3: decoder.decode("la casa es muy pequeña"),
             1: decoder.decode("el perro es muy pequeña"), 2: []}
    assert len(lists[3]) > 1 and len(lists[1]) > 1
    assert [best_text(hypotheses) for hypotheses in lists.values()] == [
        lists[3][0].text, lists[1][0].text, ""]
    rows = [row for segment, hypotheses in lists.items()
            for row in nbest_rows(segment, hypotheses)]
    table = pd.DataFrame(rows[::-1])  # each best last: the rank says which is best, not the row
    best = best_hypotheses(table)
    assert list(best.items()) == [(1, lists[1][0].text), (3, lists[3][0].text)]
    assert best_of(table, [3, 1]) == [lists[3][0].text, lists[1][0].text]
    with pytest.raises(ValueError, match=r"^test.nbest.parquet: no 1-best for segments \[2\]$"):
        best_of(table, [1, 2], "test.nbest.parquet")


def moses_features(field: str) -> dict[str, list[float]]:
    """Moses n-best features (``name= v1 v2 name2= v3``) by name, as Moses' mert reads them."""
    features: dict[str, list[float]] = {}
    for token in field.split():
        if token.endswith("="):
            name = token[:-1]
            features[name] = []
        else:
            features[name].append(float(token))
    return features


def test_gathered_text_numbers_lines_from_zero_and_detokenises_the_1best(tmp_path):
    names = ["lm", "count"]
    hypotheses = {40: ["&quot; don &apos;t , &quot; he said &#91; to them &#93; .", "no ."],
                  41: ["bread &amp; wine &#124; oil"], 39: ["it &apos;s 5 &lt; 6 ."]}
    shards = []
    for number, segments in enumerate([[40, 41], [39]]):
        rows = [{"segment_id": segment, "target": None, "rank": rank, "hypothesis": text,
                 "score": -1.5 * rank, "features": [-1.25 - rank, float(rank)]}
                for segment in segments for rank, text in enumerate(hypotheses[segment])]
        shards.append(tmp_path / f"shard{number}.parquet")
        write_table(pd.DataFrame(rows), shards[-1], NBEST,
                    metadata={"feature_names": json.dumps(names)})
    out = {name: tmp_path / f"test.{name}" for name in ("nbest.parquet", "nbest.txt",
                                                        "1best.txt", "1best.detok.txt")}
    assert gather_nbest(shards, *out.values(), "en") == 3
    lines = [line.split(" ||| ") for line in out["nbest.txt"].read_text().splitlines()]
    assert [line[0] for line in lines] == ["0", "0", "1", "2"]  # positions in the set
    assert [line[1] for line in lines] == hypotheses[40] + hypotheses[41] + hypotheses[39]
    assert [moses_features(line[2]) for line in lines[:2]] == [
        {"lm": [-1.25], "count": [0.0]}, {"lm": [-2.25], "count": [1.0]}]
    assert out["1best.txt"].read_text().splitlines() == [
        hypotheses[40][0], hypotheses[41][0], hypotheses[39][0]]
    assert out["1best.detok.txt"].read_text().splitlines() == [
        '"don\'t," he said [to them].', "bread & wine | oil", "it's 5 < 6."]
    table = read_table(out["nbest.parquet"], NBEST)
    assert table["segment_id"].drop_duplicates().tolist() == [40, 41, 39]


def test_decode_corpus_parallel_equals_serial(grammar_path, lm_path, caplog):
    caplog.set_level(logging.INFO, logger="circle.decoder.corpus")
    sentences = ["la casa es pequeña", "el perro es muy pequeña", "la casa es pequeña",
                 "casa zorro", "la casa es pequeña"]
    targets = ["the house is small", None, "the dog is very small", None, "house"]
    settings = DecoderSettings(k=4)
    serial = decode_corpus(sentences, load_grammar(grammar_path), lm_path, WEIGHTS, settings,
                           workers=1, targets=targets)
    parallel = decode_corpus(sentences, grammar_path, lm_path, WEIGHTS, settings, workers=2,
                             targets=targets)
    assert [[(h.text, h.score) for h in hs] for hs in serial] == \
        [[(h.text, h.score) for h in hs] for hs in parallel]
    assert all(0 < len(hs) <= 4 for hs in serial)
    assert serial[3][0].text == "house zorro"
    for hypotheses, target in zip(serial, targets, strict=True):
        for h in hypotheses:
            missing = [w for w in h.text.split() if target is not None and w not in target.split()]
            assert h.features["target"] == len(missing)
    assert decode_corpus(sentences[:1], grammar_path, lm_path, WEIGHTS, settings, k=2)[0] \
        == serial[0][:2]
    progress = [record.getMessage() for record in caplog.records]
    assert len(progress) == 3  # one final line per call: 3 distinct inputs, then 1
    assert all(line.startswith("decoding: 3/3 inputs in ") for line in progress[:2])
    assert progress[2].startswith("decoding: 1/1 inputs in ")


@pytest.mark.parametrize("starts, lengths, expected", [
    ([5, 0, 9], [2, 0, 3], [5, 6, 9, 10, 11]), ([3], [0], []), ([], [], [])])
def test_concatenated_ranges(starts, lengths, expected):
    positions = concatenated_ranges(np.array(starts, dtype=np.int64),
                                    np.array(lengths, dtype=np.int64))
    assert positions.tolist() == expected


def test_rows_of_a_key_cover_every_way_of_writing_its_source_side():
    frame = pd.DataFrame([("X", "[X,1] de [X,2]", "[X,2] 's [X,1]", -1.0),
                          ("X", "casa", "house", -2.0),
                          ("X", "[X,2] de [X,1]", "[X,2] of [X,1]", -3.0)],
                         columns=["lhs", "source", "target", "f"])
    grammar = Grammar.from_frame(frame, ["f"])
    key = grammar.trie[NT]["de"][NT][None]
    rows, counts = grammar.rows(np.array([key]))
    assert rows.tolist() == [0, 2] and counts.tolist() == [2]
    assert [rule.target for rule in grammar.rules(key)] == [(1, "'s", 0), (0, "of", 1)]
    assert [rule.values[0] for rule in grammar.rules(key)] == [-1.0, -3.0]
    assert grammar.terminal_counts.tolist() == [1, 1, 1]


def test_a_worker_that_cannot_load_the_grammar_fails_the_call(tmp_path, lm_path):
    """A pool worker whose start fails reports the error through the first task instead of
    dying, which would make the pool start another in its place, forever."""
    broken = tmp_path / "grammar.parquet"
    broken.write_text("[X] ||| la ||| the ||| 0.5\n")

    def hung(signum, frame):
        raise TimeoutError("the pool kept restarting its workers")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(120)
    try:
        with pytest.raises(Exception, match=re.escape(str(broken))) as caught:
            decode_corpus(["la casa"], str(broken), lm_path, WEIGHTS, DecoderSettings(k=1),
                          workers=2)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert not isinstance(caught.value, TimeoutError)


def _worker_of(decoder, task):
    """A pool task: the worker's process id and the task's best translation."""
    if task == "fail":
        raise ValueError("task failed on purpose")
    if task == "die":
        os._exit(3)
    return os.getpid(), decoder.decode(task, k=1)[0].text


def test_tasks_of_one_owner_always_run_in_the_same_worker(grammar_path, lm_path):
    sentences = ["la casa es pequeña", "el perro", "casa zorro", "la casa", "el perro es muy"]
    owners = ["a", "b", "c", "a", "b"]
    with DecoderPool(grammar_path, lm_path, WEIGHTS, DecoderSettings(k=1), workers=2) as pool:
        first = pool.map(_worker_of, sentences, owners=owners)
        again = pool.map(_worker_of, sentences[::-1], owners=owners[::-1])
        free = pool.map(_worker_of, sentences)
        with pytest.raises(ValueError, match="task failed on purpose"):
            pool.map(_worker_of, ["la casa", "fail", "el perro"], owners=["a", "b", "c"])
        after = pool.map(_worker_of, sentences, owners=owners)  # no answer left over
    worker = {owner: pid for owner, (pid, _) in zip(owners, first, strict=True)}
    assert len(set(worker.values())) == 2  # owners dealt to both workers in turn
    assert worker["a"] == worker["c"] != worker["b"]
    for answers, order in ((first, owners), (again, owners[::-1]), (after, owners)):
        assert [pid for pid, _ in answers] == [worker[owner] for owner in order]
    assert [text for _, text in first] == [text for _, text in free] == \
        [text for _, text in after] == [text for _, text in again][::-1]
    with pytest.raises(ValueError, match="2 owners for 1 tasks"):
        DecoderPool(grammar_path, lm_path, WEIGHTS, workers=1).map(_worker_of, ["la"],
                                                                  owners=["a", "b"])


def test_a_worker_that_dies_fails_the_call(grammar_path, lm_path):
    with DecoderPool(grammar_path, lm_path, WEIGHTS, DecoderSettings(k=1), workers=2) as pool:
        with pytest.raises(RuntimeError, match=r"decoder worker \d+ died \(exit code 3\)"):
            pool.map(_worker_of, ["la casa", "die"])


ORPHAN_SCRIPT = """
import os, signal, sys
import pandas as pd
from circle.decoder.corpus import DecoderPool
from circle.decoder.grammar import Grammar
grammar = Grammar.from_frame(pd.DataFrame([("X", "la casa", "the house", -0.2)],
                                          columns=["lhs", "source", "target", "f"]), ["f"])
weights = {"f": 1.0, "lm": 1.0, "word_penalty": 0.0, "phrase_penalty": 0.0, "glue": 0.0,
           "oov": -1.0}
pool = DecoderPool(grammar, sys.argv[1], weights, workers=2)
print(" ".join(str(worker.process.pid) for worker in pool._workers), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by init, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_workers_die_with_a_killed_parent(lm_path, tmp_path):
    output = tmp_path / "workers.txt"
    with output.open("w") as stdout:  # a file, not a pipe the workers would hold open
        result = subprocess.run([sys.executable, "-c", ORPHAN_SCRIPT, str(lm_path)],
                                stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=60)
    assert result.returncode == -signal.SIGKILL, result.stderr
    workers = [int(pid) for pid in output.read_text().split()]
    assert len(workers) == 2
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    orphans = [pid for pid in workers if alive(pid)]
    for pid in orphans:
        os.kill(pid, signal.SIGKILL)
    assert orphans == []
