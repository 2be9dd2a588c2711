"""Filtering grammars to input sentences, Thrax text export and paraphrase inspection."""

from __future__ import annotations

import gzip
import math

import pytest
from test_grammar_pivot import bilingual_frame

from circle.core.schemas import GRAMMAR, PARAPHRASE_GRAMMAR
from circle.core.tables import SchemaError, read_metadata, read_table, write_table
from circle.grammar.filter import SentenceIndex, SourcePattern, filter_grammar, key_ranges
from circle.grammar.inspect import top_paraphrases
from circle.grammar.pivot import pivot_grammar
from circle.grammar.thrax import export_thrax


def test_source_pattern():
    pattern = SourcePattern.parse("[X,1] a b [X,2] c")
    assert pattern.chunks == ("a b", "c") and pattern.gaps == (1, 1, 0)
    assert pattern.lengths == (2, 1)
    assert SourcePattern.parse("a [X,1] [X,2] d").gaps == (0, 2, 0)


@pytest.mark.parametrize("source, span_limit, matches", [
    ("a", 10, True), ("a b", 10, True), ("b a", 10, False),
    ("a [X,1] c", 10, True), ("a [X,1] b", 10, False),      # a nonterminal covers >= 1 word
    ("[X,1] a", 10, False), ("[X,1] b", 10, True),          # ... also at the edges
    ("e [X,1]", 10, False), ("d [X,1]", 10, True),
    ("a [X,1] e", 5, True), ("a [X,1] e", 4, False),        # span limit
    ("[X,1] c [X,2]", 3, True), ("[X,1] c [X,2]", 2, False),
    ("a [X,1] [X,2] d", 10, True), ("a [X,1] [X,2] c", 10, False),
    ("x [X,1] a", 10, False), ("a [X,1] y", 10, False),     # chunks in different sentences
    ("k [X,1] k", 10, True), ("m [X,1] [X,2] n", 10, False), ("q [X,1] c", 10, False),
    ("f [X,1] h", 3, True),  # too long from the first f, short enough from the second
])
def test_matches(source, span_limit, matches):
    index = SentenceIndex(["a b c d e", "x y", "k m k n", "f q q q f g h"], span_limit)
    assert index.matches(SourcePattern.parse(source)) is matches


def test_key_ranges_cover_sources_that_start_with_an_input_word_or_a_nonterminal_then_one():
    """Up to two nonterminals, an input word, then nothing, the next word, or a nonterminal
    and a later word within the span limit."""
    ranges = key_ranges(["la casa de dios", "el rey"], span_limit=3)
    def inside(source):
        return any(low <= source <= high for low, high in ranges)
    assert all(inside(source) for source in [
        "casa", "la casa", "la casa de [X,1]", "la [X,1]", "la [X,1] de", "la [X,1] de dios",
        "[X,1] casa [X,2]", "[X,1] [X,2] dios", "[X,1] la casa", "rey", "el [X,1] [X,2]"])
    assert not any(inside(source) for source in [
        "casas", "perro la", "[X,1] perro", "la de", "la rey", "la [X,1] casa",
        "la [X,1] dios", "casa [X,1] la", "el [X,1] rey", "[X,2] casa"])


def test_filter_grammar_keeps_schema_and_metadata(tmp_path):
    frame = bilingual_frame()
    write_table(frame, tmp_path / "g.parquet", GRAMMAR, metadata={"limits": "{}"})
    kept = filter_grammar(tmp_path / "g.parquet", ["la casa del pueblo", "el hogar"],
                          tmp_path / "f.parquet")
    filtered = read_table(tmp_path / "f.parquet", GRAMMAR)
    assert kept == len(filtered) == 5
    assert sorted(set(filtered["source"])) == ["casa", "del [X,1]", "hogar"]
    assert read_metadata(tmp_path / "f.parquet")["limits"] == "{}"
    pivot_grammar(tmp_path / "g.parquet", tmp_path / "p", tmp_path / "s.parquet")
    filter_grammar(tmp_path / "p" / "part0.parquet", ["the old house"], tmp_path / "pf.parquet")
    paraphrases = read_table(tmp_path / "pf.parquet", PARAPHRASE_GRAMMAR)
    assert set(paraphrases["source"]) == {"house"}
    with pytest.raises(SchemaError, match="s.parquet: expected one of the schemas"):
        filter_grammar(tmp_path / "s.parquet", ["x"], tmp_path / "bad.parquet")


def test_export_thrax(tmp_path):
    write_table(bilingual_frame()[4:6], tmp_path / "g.parquet", GRAMMAR)
    assert export_thrax(tmp_path / "g.parquet", tmp_path / "g.txt.gz") == 2
    with gzip.open(tmp_path / "g.txt.gz", "rt") as lines:
        first = next(lines).rstrip("\n")
    assert first == ("[X] ||| [X,1] de [X,2] ||| [X,2] 's [X,1] ||| "
                     "log_p_e_given_f=-1.09861 log_p_f_given_e=0 "
                     "log_lex_e_given_f=-1.20397 log_lex_f_given_e=-0.916291")


def test_top_paraphrases(tmp_path):
    write_table(bilingual_frame(), tmp_path / "g.parquet", GRAMMAR)
    pivot_grammar(tmp_path / "g.parquet", tmp_path / "p", tmp_path / "s.parquet")
    top = top_paraphrases(tmp_path / "p" / "part0.parquet", "  house ", n=5)
    assert top["target"].tolist() == ["home"]
    assert top.loc[0, "p_e2_given_e1"] == pytest.approx(math.exp(top.loc[0, "log_p_e2_given_e1"]))
    assert top_paraphrases(tmp_path / "p" / "part0.parquet", "castle").empty
