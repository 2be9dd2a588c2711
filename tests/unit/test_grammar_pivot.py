"""Pivoting a hand-built bilingual grammar; features recomputed independently in the test."""

from __future__ import annotations

import logging
import math
from collections import defaultdict

import pandas as pd
import pytest

from circle.core.schemas import GRAMMAR, PARAPHRASE_GRAMMAR, PARAPHRASE_GRAMMAR_LEX, SELF_PARAPHRASE
from circle.core.tables import read_metadata, read_table, write_table
from circle.grammar.io import GrammarInputError
from circle.grammar.pivot import _deal, pivot_grammar

# (foreign, English, fractional count, lex(e|f), lex(f|e))
RULES = [
    ("casa", "house", 3.0, 0.5, 0.6),
    ("casa", "home", 1.0, 0.2, 0.3),
    ("hogar", "home", 2.0, 0.7, 0.8),
    ("hogar", "house", 0.5, 0.1, 0.2),
    ("[X,1] de [X,2]", "[X,2] 's [X,1]", 1.0, 0.3, 0.4),
    ("[X,1] de [X,2]", "[X,1] of [X,2]", 2.0, 0.6, 0.5),
    ("del [X,1]", "of the [X,1]", 1.5, 0.4, 0.4),
    ("edificio", "building", 1.0, 0.9, 0.9),
]


def swap(english: str) -> str:
    return english.replace("[X,1]", "#").replace("[X,2]", "[X,1]").replace("#", "[X,2]")


def canonical(english: str) -> str:
    if "[X,2]" in english and english.index("[X,2]") < english.index("[X,1]"):
        return swap(english)
    return english


def bilingual_frame(rules=RULES) -> pd.DataFrame:
    c_f, c_e = defaultdict(float), defaultdict(float)
    for f, e, c, _, _ in rules:
        c_f[f] += c
        c_e[canonical(e)] += c
    return pd.DataFrame({
        "lhs": "X", "source": [r[0] for r in rules], "target": [r[1] for r in rules],
        "log_p_e_given_f": [math.log(r[2] / c_f[r[0]]) for r in rules],
        "log_p_f_given_e": [math.log(r[2] / c_e[canonical(r[1])]) for r in rules],
        "log_lex_e_given_f": [math.log(r[3]) for r in rules],
        "log_lex_f_given_e": [math.log(r[4]) for r in rules],
        "count": [r[2] for r in rules],
    })


def expected_pivots(rules=RULES, method="features") -> dict[tuple[str, str], dict]:
    """Paraphrase features by the thesis's formulas, written out independently of the SQL."""
    frame = bilingual_frame(rules)
    p_ef = {(r.source, r.target): math.exp(r.log_p_e_given_f) for r in frame.itertuples()}
    p_fe = {(r.source, r.target): math.exp(r.log_p_f_given_e) for r in frame.itertuples()}
    total = sum(r[2] for r in rules)
    count_e = defaultdict(float)
    for _, e, c, _, _ in rules:
        count_e[canonical(e)] += c
    by_f = defaultdict(list)
    for f, e, c, lex_ef, lex_fe in rules:
        by_f[f].append((e, c, lex_ef, lex_fe))
    pairs = defaultdict(lambda: defaultdict(float))
    for f, sides in by_f.items():
        for e1, c1, lef1, lfe1 in sides:
            for e2, c2, lef2, lfe2 in sides:
                # rule e1 -> e2 with f's co-indexing, renumbered left to right on e1
                key = (canonical(e1), e2 if canonical(e1) == e1 else swap(e2))
                pairs[key]["p21"] += p_ef[f, e2] * p_fe[f, e1]
                pairs[key]["p12"] += p_ef[f, e1] * p_fe[f, e2]
                pairs[key]["lex21"] += lef2 * lfe1
                pairs[key]["lex12"] += lef1 * lfe2
                pairs[key]["count"] += c1 * c2
                pairs[key]["pivots"] += 1
    if method == "counts":
        c_x = sum(v["count"] for v in pairs.values())
        c_e1 = defaultdict(float)
        for (e1, _), v in pairs.items():
            c_e1[e1] += v["count"]
        for (e1, e2), v in pairs.items():
            v["p21"] = v["count"] / c_e1[e1]
            v["p12"] = v["count"] / c_e1[canonical(e2)]
            v["joint"] = v["count"] / c_x
            v["p_e1"] = c_e1[e1] / c_x
    else:
        for (e1, _), v in pairs.items():
            v["p_e1"] = count_e[e1] / total
            v["joint"] = v["p21"] * v["p_e1"]
    return {key: dict(value) for key, value in pairs.items()}


@pytest.fixture
def bilingual(tmp_path):
    path = tmp_path / "grammar.parquet"
    write_table(bilingual_frame(), path, GRAMMAR)
    return path


@pytest.fixture
def pivot(read_pivoted):
    """Pivots a bilingual grammar into ``tmp_path``; returns the rules and the phrase table."""

    def run(tmp_path, bilingual, **options):
        out, residuals = tmp_path / "para", tmp_path / "self.parquet"
        pivot_grammar(bilingual, out, residuals, **options)
        schema = PARAPHRASE_GRAMMAR_LEX if options.get("lexical_feature") else PARAPHRASE_GRAMMAR
        return read_pivoted(out, schema), read_table(residuals, SELF_PARAPHRASE)

    return run


@pytest.mark.parametrize("method", ["features", "counts"])
def test_pivot_features_match_the_thesis_formulas(tmp_path, bilingual, method, pivot):
    grammar, residuals = pivot(tmp_path, bilingual, method=method)
    expected = expected_pivots(method=method)
    non_identity = {key: value for key, value in expected.items() if key[0] != key[1]}
    found = grammar.set_index(["source", "target"])
    assert set(found.index) == set(non_identity)
    for key, value in non_identity.items():
        row = found.loc[key]
        assert math.exp(row["log_p_e2_given_e1"]) == pytest.approx(value["p21"]), key
        assert math.exp(row["log_p_e1_given_e2"]) == pytest.approx(value["p12"]), key
        assert math.exp(row["log_p_e1_e2"]) == pytest.approx(value["joint"]), key
        assert math.exp(row["log_lex_e2_given_e1"]) == pytest.approx(value["lex21"]), key
        assert math.exp(row["log_lex_e1_given_e2"]) == pytest.approx(value["lex12"]), key
        assert row["count"] == pytest.approx(value["count"])
        assert row["pivots"] == value["pivots"]
    # eq. 5.2 residual, and with every pivot kept the conditionals of e1 sum to one with the
    # identity pair, so the residual is exactly the identity pair's mass.
    for phrase in residuals.itertuples():
        identity = expected[phrase.phrase, phrase.phrase]
        assert phrase.residual == pytest.approx(identity["p21"])
        assert math.exp(phrase.log_p_phrase) == pytest.approx(identity["p_e1"])
        assert math.exp(phrase.log_lex_identity) == pytest.approx(identity["lex21"])
        assert phrase.count == pytest.approx(identity["count"])
    assert set(residuals["phrase"]) == set(grammar["source"])
    assert "building" not in set(residuals["phrase"])  # no paraphrase: nothing to bias


def test_derived_features_example_by_hand(tmp_path, bilingual, pivot):
    grammar, _ = pivot(tmp_path, bilingual)
    row = grammar.set_index(["source", "target"]).loc[("house", "home")]
    # p(home|house) = p(home|casa) p(casa|house) + p(home|hogar) p(hogar|house)
    expected = (1 / 4) * (3 / 3.5) + (2 / 2.5) * (0.5 / 3.5)
    assert math.exp(row["log_p_e2_given_e1"]) == pytest.approx(expected)
    # p(house, home) = p(home|house) p(house), p(house) = 3.5 / 12 from the bilingual counts
    assert math.exp(row["log_p_e1_e2"]) == pytest.approx(expected * 3.5 / 12)
    assert row["neg_target_terminals"] == -1.0


def test_reordered_nonterminals_keep_their_spans(tmp_path, bilingual, pivot):
    grammar, _ = pivot(tmp_path, bilingual)
    targets = grammar.groupby("source")["target"].apply(set)
    # f: "[X,1] de [X,2]", e1: "[X,2] 's [X,1]", e2: "[X,1] of [X,2]": the foreign X1 is the
    # possessed thing, after "'s" in e1 and before "of" in e2.
    assert targets["[X,1] 's [X,2]"] == {"[X,2] of [X,1]"}
    assert targets["[X,1] of [X,2]"] == {"[X,2] 's [X,1]"}
    assert grammar.set_index("source").loc["[X,1] 's [X,2]", "neg_target_terminals"] == -1.0


def test_thesis_example_build_construct(tmp_path, pivot):
    senses = ["to build", "to construct", "to establish", "to formulate"]
    rules = [("[X,1] 建 [X,2]", f"[X,1] {sense} [X,2]", 1.0, 0.5, 0.5) for sense in senses]
    path = tmp_path / "grammar.parquet"
    write_table(bilingual_frame(rules), path, GRAMMAR)
    grammar, residuals = pivot(tmp_path, path)
    pairs = set(zip(grammar["source"], grammar["target"], strict=True))
    assert ("[X,1] to build [X,2]", "[X,1] to construct [X,2]") in pairs
    assert ("[X,1] to construct [X,2]", "[X,1] to build [X,2]") in pairs
    assert pairs == {(f"[X,1] {a} [X,2]", f"[X,1] {b} [X,2]")
                     for a in senses for b in senses if a != b}
    assert grammar["log_p_e2_given_e1"].map(math.exp).tolist() == pytest.approx([0.25] * 12)
    assert residuals["residual"].tolist() == pytest.approx([0.25] * 4)


def test_top_pivots_cut_rare_foreign_sides(tmp_path, bilingual, pivot):
    grammar, residuals = pivot(tmp_path, bilingual, top_pivots=1)
    # house keeps only casa (3 > 0.5), home only hogar (2 > 1): they share no pivot any more.
    assert "house" not in set(grammar["source"]) and "home" not in set(grammar["source"])
    assert set(grammar["source"]) == {"[X,1] 's [X,2]", "[X,1] of [X,2]"}
    row = grammar.set_index("source").loc["[X,1] of [X,2]"]
    assert math.exp(row["log_p_e2_given_e1"]) == pytest.approx(1 / 3)
    residual = residuals.set_index("phrase").loc["[X,1] of [X,2]", "residual"]
    assert residual == pytest.approx(1 - 1 / 3)


def test_keep_identity_and_lexical_feature(tmp_path, bilingual, pivot):
    grammar, _ = pivot(tmp_path, bilingual, keep_identity=True, lexical_feature=True)
    expected = expected_pivots()
    found = grammar.set_index(["source", "target"])
    assert set(found.index) == set(expected)
    assert math.exp(found.loc[("house", "house"), "log_p_e2_given_e1"]) == pytest.approx(
        expected["house", "house"]["p21"])
    assert ("building", "building") in found.index
    assert math.exp(found.loc[("building", "building"), "log_p_e2_given_e1"]) == 1.0
    for source, group in grammar.groupby("source"):
        assert group["log_p_e2_given_e1"].map(math.exp).sum() == pytest.approx(1.0), source
    schema = read_metadata(tmp_path / "para" / "part0.parquet")["schema"]
    assert schema == PARAPHRASE_GRAMMAR_LEX.name
    assert "log_lex_e2_given_e1" in PARAPHRASE_GRAMMAR_LEX.features


def test_bad_arguments_and_input(tmp_path, bilingual):
    with pytest.raises(ValueError, match="unknown pivot feature method"):
        pivot_grammar(bilingual, tmp_path / "p", tmp_path / "s.parquet", method="x")
    frame = bilingual_frame()
    frame.loc[0, "lhs"] = "NP"
    write_table(frame, tmp_path / "np.parquet", GRAMMAR)
    with pytest.raises(GrammarInputError, match="np.parquet: .*only left-hand side is X"):
        pivot_grammar(tmp_path / "np.parquet", tmp_path / "p", tmp_path / "s.parquet")


@pytest.mark.parametrize("method", ["features", "counts"])
def test_pivoting_only_the_phrases_of_some_sentences_is_exact(tmp_path, bilingual, method, pivot,
                                                             read_pivoted):
    full, full_phrases = pivot(tmp_path, bilingual, method=method)
    out, residuals = tmp_path / "some", tmp_path / "some-self.parquet"
    stats = pivot_grammar(bilingual, out, residuals, method=method,
                          sentences=["my old house", "the roof of the barn"])
    some = read_pivoted(out)
    assert stats.paraphrase_rules == len(some)
    assert set(some["source"]) == {"house", "[X,1] of [X,2]"}
    expected = full[full["source"].isin(some["source"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(some, expected)
    # residuals of the targets too, as the bias rescales p(e1|e2) with e2's residual
    phrases = read_table(residuals, SELF_PARAPHRASE)
    assert set(phrases["phrase"]) == {"house", "home", "[X,1] of [X,2]", "[X,1] 's [X,2]"}
    pd.testing.assert_frame_equal(
        phrases, full_phrases[full_phrases["phrase"].isin(phrases["phrase"])]
        .reset_index(drop=True))


def test_pruning_before_pivoting_keeps_bilingual_probabilities(tmp_path, bilingual, pivot):
    grammar, residuals = pivot(tmp_path, bilingual, min_count=1.0)
    rows = grammar.set_index(["source", "target"])
    # (hogar, house, 0.5) is pruned: house pivots only through casa, unrenormalised.
    assert math.exp(rows.loc[("house", "home"), "log_p_e2_given_e1"]) == pytest.approx(
        (1 / 4) * (3 / 3.5))
    # home still reaches house through casa only
    assert math.exp(rows.loc[("home", "house"), "log_p_e2_given_e1"]) == pytest.approx(
        (3 / 4) * (1 / 3))
    residual = residuals.set_index("phrase").loc["house", "residual"]
    assert residual == pytest.approx(1 - (1 / 4) * (3 / 3.5))
    assert read_metadata(tmp_path / "para" / "part0.parquet")["min_count"] == "1.0"
    with pytest.raises(ValueError, match="min_probability"):
        pivot(tmp_path, bilingual, min_probability=2.0)


@pytest.mark.parametrize("options", [{"method": "features"}, {"method": "counts"},
                                     {"keep_identity": True, "lexical_feature": True}])
def test_partitions_do_not_change_the_tables(tmp_path, bilingual, options, read_pivoted):
    """One phrase per partition (at most one triple each, so a phrase with more is alone)
    writes what one partition writes, rules and phrase statistics, bit for bit."""
    whole_dir, parts_dir = tmp_path / "whole", tmp_path / "parts"
    whole_dir.mkdir()
    parts_dir.mkdir()
    whole_stats = pivot_grammar(bilingual, whole_dir / "p", whole_dir / "s.parquet",
                                partition_pairs=10**9, **options)
    parts_stats = pivot_grammar(bilingual, parts_dir / "p", parts_dir / "s.parquet",
                                partition_pairs=1, **options)
    schema = PARAPHRASE_GRAMMAR_LEX if options.get("lexical_feature") else PARAPHRASE_GRAMMAR
    pd.testing.assert_frame_equal(read_pivoted(parts_dir / "p", schema),
                                  read_pivoted(whole_dir / "p", schema), check_exact=True)
    pd.testing.assert_frame_equal(read_table(parts_dir / "s.parquet", SELF_PARAPHRASE),
                                  read_table(whole_dir / "s.parquet", SELF_PARAPHRASE),
                                  check_exact=True)
    assert parts_stats.pivot_pairs == whole_stats.pivot_pairs > 0
    assert parts_stats.paraphrase_rules == whole_stats.paraphrase_rules > 0


def test_partitions_hold_at_most_their_triples_and_follow_the_phrase_order(tmp_path, bilingual,
                                                                            caplog):
    caplog.set_level(logging.INFO, logger="circle.grammar.pivot")
    pivot_grammar(bilingual, tmp_path / "p", tmp_path / "s.parquet", partition_pairs=1)
    rules = read_table(tmp_path / "p" / "part0.parquet", PARAPHRASE_GRAMMAR)
    assert list(rules["source"]) == sorted(rules["source"])  # one phrase per partition
    # every phrase with a paraphrase joins at least one triple, so each is a partition
    assert f"pairing job 0: {rules['source'].nunique()}/{rules['source'].nunique()} partitions" \
        in caplog.text


@pytest.mark.parametrize("jobs", [2, 3, 10])
def test_pairing_jobs_do_not_change_the_tables(tmp_path, bilingual, jobs, read_pivoted):
    """The pairing dealt to several jobs (some of them with nothing to pair when there are more
    jobs than phrases) writes what one job writes, bit for bit."""
    one_dir, many_dir = tmp_path / "one", tmp_path / "many"
    one_dir.mkdir()
    many_dir.mkdir()
    one = pivot_grammar(bilingual, one_dir / "p", one_dir / "s.parquet",
                        keep_identity=True)
    many = pivot_grammar(bilingual, many_dir / "p", many_dir / "s.parquet", jobs=jobs,
                         keep_identity=True)
    pd.testing.assert_frame_equal(read_pivoted(many_dir / "p"), read_pivoted(one_dir / "p"),
                                  check_exact=True)
    pd.testing.assert_frame_equal(read_table(many_dir / "s.parquet", SELF_PARAPHRASE),
                                  read_table(one_dir / "s.parquet", SELF_PARAPHRASE),
                                  check_exact=True)
    assert many == one
    assert one.paraphrase_rules > 0


def test_phrases_are_dealt_in_order_to_partitions_and_jobs():
    loads = [("a", 5), ("b", 1), ("c", 1), ("d", 1), ("e", 4), ("f", 2)]  # 14 triples
    dealt = _deal(loads, partition_pairs=100, jobs=2)  # partitions of at most 7 triples
    assert list(dealt["e"]) == list("abcdef")
    assert list(dealt["partition"]) == [0, 0, 0, 1, 1, 1]
    assert list(dealt["job"]) == [0, 0, 0, 1, 1, 1]
    dealt = _deal(loads, partition_pairs=100, jobs=3)  # at most 5; jobs by triples before
    assert list(dealt["partition"]) == [0, 1, 1, 1, 2, 3]
    assert list(dealt["job"]) == [0, 1, 1, 1, 1, 2]
    dealt = _deal(loads, partition_pairs=3, jobs=1)  # a phrase over the cap is alone
    assert list(dealt["partition"]) == [0, 1, 1, 1, 2, 3]
    assert set(dealt["job"]) == {0}
    assert _deal([], partition_pairs=3, jobs=2).empty


# A second pivot language: "casa" is also one of its words (a foreign string shared with the
# first language, which must not pivot across languages), "dimora" is its own; "dwelling" is an
# English side of this language only, "building" of the first only.
SECOND_LANGUAGE = [
    ("casa", "house", 2.0, 0.5, 0.5),
    ("casa", "dwelling", 2.0, 0.5, 0.5),
    ("dimora", "home", 1.0, 0.5, 0.5),
    ("dimora", "dwelling", 1.0, 0.5, 0.5),
]


@pytest.fixture
def two_languages(tmp_path, bilingual):
    second = tmp_path / "second.parquet"
    write_table(bilingual_frame(SECOND_LANGUAGE), second, GRAMMAR)
    return [bilingual, second]


def test_two_pivot_languages_by_hand(tmp_path, two_languages, pivot):
    """p(e2|e1) = 1/|C(e1)| sum_c sum_(f in c) p_c(e2|f) p_c(f|e1) (Bannard & Callison-Burch
    2005, averaged), worked out by hand on two languages."""
    grammar, residuals = pivot(tmp_path, two_languages)
    rows = grammar.set_index(["source", "target"])

    def p21(e1, e2):
        return math.exp(rows.loc[(e1, e2), "log_p_e2_given_e1"])

    # house is in both languages: half of each language's sum; the first language's casa does
    # not reach the second language's dwelling, nor the second's casa the first's home
    first_house_home = (1 / 4) * (3 / 3.5) + (2 / 2.5) * (0.5 / 3.5)
    assert p21("house", "home") == pytest.approx(first_house_home / 2)
    assert p21("house", "dwelling") == pytest.approx((2 / 4) * (2 / 2) / 2)
    assert rows.loc[("house", "home"), "pivots"] == 2  # casa and hogar of the first language
    assert rows.loc[("house", "dwelling"), "pivots"] == 1
    # dwelling is in the second language only: its sums are that language's, unweighted
    assert p21("dwelling", "house") == pytest.approx((2 / 4) * (2 / 3))
    assert p21("dwelling", "home") == pytest.approx((1 / 2) * (1 / 3))
    # home: both languages; the first gives house, the second dwelling
    assert p21("home", "dwelling") == pytest.approx((1 / 2) * (1 / 1) / 2)
    assert p21("home", "house") == pytest.approx(((3 / 4) * (1 / 3) + (0.5 / 2.5) * (2 / 3)) / 2)
    # p(e1|e2) weighs by e2's languages: p(house|dwelling) reversed is p(dwelling|house)'s term
    assert math.exp(rows.loc[("house", "dwelling"), "log_p_e1_given_e2"]) == pytest.approx(
        (2 / 4) * (2 / 3))
    # p(e1) pools the bilingual counts (12 + 6): p(house) = (3.5 + 2) / 18
    assert math.exp(rows.loc[("house", "home"), "log_p_e1_e2"]) == pytest.approx(
        first_house_home / 2 * 5.5 / 18)
    assert ("building", "dwelling") not in rows.index and "building" not in set(grammar["source"])
    # every phrase's conditionals sum to one with its residual (eq. 5.2), across languages
    for phrase in residuals.itertuples():
        paraphrased = grammar.loc[grammar["source"] == phrase.phrase, "log_p_e2_given_e1"]
        assert paraphrased.map(math.exp).sum() + phrase.residual == pytest.approx(1.0)
    assert residuals.set_index("phrase").loc["house", "residual"] == pytest.approx(
        1 - first_house_home / 2 - 0.5 / 2)
    assert read_metadata(tmp_path / "para" / "part0.parquet")["pivot_languages"] == "2"


def test_two_pivot_languages_derived_counts_by_hand(tmp_path, two_languages, pivot):
    """Derived counts pool the pivots of every language: c(e1, e2) = sum_c sum_(f in c)
    c_c(f, e1) c_c(f, e2) (eq. 3.4), with eq. 3.6-3.8 over all of them."""
    grammar, _ = pivot(tmp_path, two_languages, method="counts")
    rows = grammar.set_index(["source", "target"])
    # c(house) pairs: first language 3 * 4 + 0.5 * 2.5, second 2 * 4; c(X) = sum of c(f)^2
    c_house = 3 * 4 + 0.5 * 2.5 + 2 * 4
    c_x = 4**2 + 2.5**2 + 3**2 + 1.5**2 + 1**2 + 4**2 + 2**2
    assert rows.loc[("house", "home"), "count"] == pytest.approx(3 * 1 + 0.5 * 2)
    assert math.exp(rows.loc[("house", "home"), "log_p_e2_given_e1"]) == pytest.approx(
        4 / c_house)
    assert math.exp(rows.loc[("house", "dwelling"), "log_p_e2_given_e1"]) == pytest.approx(
        2 * 2 / c_house)
    assert math.exp(rows.loc[("house", "dwelling"), "log_p_e1_e2"]) == pytest.approx(4 / c_x)


def test_one_pivot_language_is_the_single_pivot(tmp_path, bilingual, read_pivoted):
    """A list of one grammar pivots exactly as the grammar alone (the default experiment's
    tables do not change), and a grammar cannot be a pivot language twice."""
    alone, listed = tmp_path / "alone", tmp_path / "listed"
    pivot_grammar(bilingual, alone / "p", alone / "s.parquet")
    pivot_grammar([bilingual], listed / "p", listed / "s.parquet")
    pd.testing.assert_frame_equal(read_pivoted(listed / "p"), read_pivoted(alone / "p"),
                                  check_exact=True)
    pd.testing.assert_frame_equal(read_table(listed / "s.parquet", SELF_PARAPHRASE),
                                  read_table(alone / "s.parquet", SELF_PARAPHRASE),
                                  check_exact=True)
    with pytest.raises(ValueError, match="given twice"):
        pivot_grammar([bilingual, bilingual], tmp_path / "p", tmp_path / "s.parquet")


def test_top_pivots_apply_within_each_language(tmp_path, two_languages, pivot):
    grammar, _ = pivot(tmp_path, two_languages, top_pivots=1)
    rows = grammar.set_index(["source", "target"])
    # first language: house keeps casa, home hogar (no shared pivot); second language: house
    # keeps casa (its only one), dwelling casa (2 > 1, the tie-break is not needed)
    assert set(rows.index) >= {("house", "dwelling"), ("dwelling", "house")}
    assert ("house", "home") not in rows.index
