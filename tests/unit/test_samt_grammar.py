"""Labelled (SAMT) grammars: label escaping, the parser's entry over Moses tokens, labelled
extraction and the labelled pivot of Ganitkevitch & Callison-Burch (draft §4), on hand-built data
whose rules and features are worked out by hand below."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from circle.core.schemas import (
    IDENTITY_FEATURE,
    LABELLED_GRAMMAR,
    LABELLED_PARAPHRASE_GRAMMAR,
    SELF_PARAPHRASE,
)
from circle.core.tables import read_metadata, read_table, write_table
from circle.decoder import load_grammar
from circle.grammar.bias import bias_grammar
from circle.grammar.extract import ExtractionLimits, extract_grammar, sentence_rules
from circle.grammar.io import GrammarInputError
from circle.grammar.lexical import lexical_table, word_factors
from circle.grammar.pivot import pivot_grammar
from circle.grammar.samt import (
    LABEL_ESCAPES,
    Bracketing,
    Constituent,
    escape_label,
    nonterminal,
    unescape_label,
)
from circle.grammar.tree import parse_tree

PENN_TAGS = ["$", "''", ",", "-LRB-", "-RRB-", ".", ":", "ADD", "AFX", "CC", "CD", "DT", "EX",
             "FW", "HYPH", "IN", "JJ", "JJR", "JJS", "LS", "MD", "NFP", "NN", "NNP", "NNPS",
             "NNS", "PDT", "POS", "PRP", "PRP$", "RB", "RBR", "RBS", "RP", "SYM", "TO", "UH",
             "VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "WDT", "WP", "WP$", "WRB", "XX", "``", "#"]
"""spaCy's English Penn tag set (en_core_web_sm), which the parses' preterminals carry."""


# -- label escaping -------------------------------------------------------------------------

def test_punctuation_labels_are_escaped_by_name_and_plain_labels_kept():
    assert nonterminal(",", 1) == "[~COMMA~,1]"
    assert escape_label(".") == "~DOT~" and escape_label(":") == "~COLON~"
    assert escape_label("PRP$+NN") == "PRP~DOLLAR~+NN"
    assert escape_label("``") == "~BQ~~BQ~" and escape_label("''") == "~Q~~Q~"
    assert escape_label("[") == "~U5B~"
    for plain in ("NP", "VP/NP", "S\\NP", "NP+VBD", "-LRB-", "X"):
        assert escape_label(plain) == plain


@pytest.mark.parametrize("label", [
    *PENN_TAGS, *(f"{a}{op}{b}" for a, b in zip(PENN_TAGS, reversed(PENN_TAGS), strict=True)
                  for op in "+/\\"),
    "~", "~COMMA~", "a~b~c", "[X,1]", "x y|z", "é", "~U5B~", "~~"])
def test_escaping_round_trips_and_leaves_no_grammar_syntax(label):
    escaped = escape_label(label)
    assert unescape_label(escaped) == label
    assert not set(escaped) & set("[], |")
    symbol = nonterminal(label, 2)
    assert symbol.endswith(",2]") and symbol.count(",") == 1


def test_random_strings_round_trip():
    rng = random.Random(40)
    alphabet = "".join(LABEL_ESCAPES) + "AZaz09_-+/\\[], |éU"
    for _ in range(500):
        label = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))
        assert unescape_label(escape_label(label)) == label


@pytest.mark.parametrize("bad", ["~FOO~", "a~b", "~U~", ""])
def test_what_escaping_cannot_have_written_is_refused(bad):
    with pytest.raises(ValueError):
        unescape_label(bad) if bad else escape_label(bad)


# -- the parser's entry over Moses tokens ---------------------------------------------------

@pytest.fixture(scope="module")
def nlp():
    from circle.grammar.parse import load_parser

    return load_parser()


def test_moses_tokens_parse_into_trees_over_exactly_those_tokens(nlp):
    from circle.corpus.preprocess import normalize
    from circle.grammar.parse import parse_tokens

    texts = ["And Moses said unto Aaron, Take thy rod [and] stretch it out.",
             "The LORD's word came to Jeremiah: \"Go & cry!\""]
    lowered = [normalize(text, "en") for text in texts]
    cased = [normalize(text, "en", lowercase=False) for text in texts]
    assert "&apos;s" in lowered[1] and "&#91;" in lowered[0]  # Moses escapes
    for trees in (parse_tokens(lowered, nlp), parse_tokens(lowered, nlp, cased=cased)):
        for tree, line in zip(trees, lowered, strict=True):
            assert tree.words() == line.split()
            assert Bracketing.of_tree(tree).words == tuple(line.split())
    tagged = parse_tokens(lowered, nlp, cased=cased)[0]
    tags = {node.word: node.label for node in _preterminals(tagged)}
    assert tags["moses"] == "NNP" and tags["aaron"] == "NNP"  # the cased text was parsed
    with pytest.raises(ValueError, match="not the tokens"):
        parse_tokens(lowered[:1], nlp, cased=[cased[1]])


def test_a_bitext_english_side_is_parsed_over_its_tokens_and_read_back_as_bracketings(
        nlp, tmp_path):
    """parse_bitext: one tree per segment over the tokenised target's tokens, the parser
    reading the raw text's case; read_bracketings gives SAMT its constituents by segment."""
    from circle.core.schemas import BITEXT, PARSES
    from circle.corpus.preprocess import normalize
    from circle.grammar.parse import parse_bitext, read_bracketings

    raw = pd.DataFrame({"segment_id": [7, 9], "document": ["Exod", "Exod"],
                        "source": ["Y dijo Moisés a Aarón", "La palabra del SEÑOR"],
                        "target": ["And Moses said unto Aaron, Take thy rod.",
                                   "The LORD's word came to Jeremiah."]})
    tokenized = raw.assign(target=[normalize(text, "en") for text in raw["target"]])
    write_table(raw, tmp_path / "raw.parquet", BITEXT)
    write_table(tokenized, tmp_path / "train.parquet", BITEXT)
    parse_bitext(tmp_path / "raw.parquet", tmp_path / "train.parquet",
                 tmp_path / "parses.parquet", {}, "en", lowercase=True)
    table = read_table(tmp_path / "parses.parquet", PARSES)
    assert list(table["segment_id"]) == [7, 9] and set(table["reference"]) == {"target"}
    assert "spacy" in read_metadata(tmp_path / "parses.parquet")["parser"]
    bracketings = read_bracketings(tmp_path / "parses.parquet")
    for segment, line in zip(tokenized["segment_id"], tokenized["target"], strict=True):
        assert bracketings[segment].words == tuple(line.split())
    # "moses" tagged NNP: the parser read the cased text
    assert Constituent(1, 2, "NNP") in bracketings[7].constituents
    write_table(raw.iloc[::-1], tmp_path / "other.parquet", BITEXT)
    with pytest.raises(ValueError, match="not those of"):
        parse_bitext(tmp_path / "other.parquet", tmp_path / "train.parquet",
                     tmp_path / "refused.parquet", {}, "en", lowercase=True)


def _preterminals(tree):
    if tree.word is not None:
        yield tree
    for child in tree.children:
        yield from _preterminals(child)


# -- labelled extraction --------------------------------------------------------------------

def rules_of(source: str, target: str, links, tree: str | None):
    src, tgt = source.split(), target.split()
    table = lexical_table([(src, tgt, links)])
    target_factors, source_factors = word_factors(src, tgt, links, table)
    parse = None if tree is None else Bracketing.of_tree(parse_tree(tree))
    return list(sentence_rules(src, tgt, links, ExtractionLimits(), target_factors,
                               source_factors, parse=parse))


def test_rules_carry_the_samt_labels_of_their_target_spans():
    # el0 libro1 de2 juan3 / john0 's1 book2 ,3 with el-book, libro-book, de-'s, juan-john;
    # the comma is unaligned (a sentence-edge word: in no rule)
    tree = "(S (NP (NP (NNP john) (POS 's)) (NN book)) (, ,))"
    links = [(0, 2), (1, 2), (2, 1), (3, 0)]
    rules = {(lhs, f, e): share for lhs, f, e, share, _, _
             in rules_of("el libro de juan", "john 's book ,", links, tree)}
    assert rules[("NNP", "juan", "john")] == 1.0  # a bare preterminal
    assert rules[("POS", "de", "'s")] == 1.0
    assert rules[("NN", "el libro", "book")] == 1.0
    assert rules[("NP", "de juan", "john 's")] == pytest.approx(1 / 3)  # of 3 hole sets
    assert rules[("NP", "de [NNP,1]", "[NNP,1] 's")] == pytest.approx(1 / 3)
    # "'s book" is no constituent but the POS and the NN next to each other
    assert rules[("POS+NN", "el libro de", "'s book")] == pytest.approx(1 / 3)
    assert rules[("POS+NN", "[NN,1] de", "'s [NN,1]")] == pytest.approx(1 / 3)
    # the whole NP has 7 hole sets (none; el libro, de, juan, de juan, el libro de; el libro
    # and juan): its nonterminals are labelled by their holes' target spans, and the source
    # side's nonterminal carries the label of the target span it is co-indexed with
    whole = {rule for rule, share in rules.items() if share == pytest.approx(1 / 7)}
    assert whole == {
        ("NP", "el libro de juan", "john 's book"),
        ("NP", "[NN,1] de juan", "john 's [NN,1]"),
        ("NP", "el libro [POS,1] juan", "john [POS,1] book"),
        ("NP", "el libro de [NNP,1]", "[NNP,1] 's book"),
        ("NP", "el libro [NP,1]", "[NP,1] book"),
        ("NP", "[POS+NN,1] juan", "john [POS+NN,1]"),
        ("NP", "[NN,1] de [NNP,2]", "[NNP,2] 's [NN,1]")}
    assert len(rules) == 16


def test_punctuation_labels_are_escaped_inside_rules():
    # a0 b1 / x0 ,1 : the comma is aligned, so its span is a nonterminal of the whole
    tree = "(S (NP (NN x)) (, ,))"
    rules = {(lhs, f, e) for lhs, f, e, *_ in rules_of("a b", "x ,", [(0, 0), (1, 1)], tree)}
    assert ("~COMMA~", "b", ",") in rules
    assert ("S", "a [~COMMA~,1]", "x [~COMMA~,1]") in rules
    assert ("S", "[NP,1] b", "[NP,1] ,") in rules


def random_tree(words: list[str], rng: random.Random) -> str:
    """A random binary bracketing of ``words`` with preterminals of random tags."""
    if len(words) == 1:
        return f"({rng.choice(['NN', 'VB', ',', 'PRP$'])} {words[0]})"
    cut = rng.randint(1, len(words) - 1)
    return (f"({rng.choice(['NP', 'VP', 'S'])} {random_tree(words[:cut], rng)} "
            f"{random_tree(words[cut:], rng)})")


def test_labelled_rules_are_the_hiero_rules_with_labels():
    """Every sentence's labelled rules, their labels replaced by X, are its Hiero rules with
    the same shares and lexical weights: the labeller extends the extraction, it adds no rule
    and drops none."""
    rng = random.Random(5)
    for _ in range(40):
        n = rng.randint(2, 9)
        source = " ".join(rng.choice("abcdefgh") for _ in range(n))
        target_words = [rng.choice("stuvwxyz") for _ in range(n)]
        links = sorted({(i, min(n - 1, max(0, i + rng.choice([-1, 0, 1])))) for i in range(n)
                        if rng.random() < 0.85})
        hiero = rules_of(source, " ".join(target_words), links, None)
        labelled = rules_of(source, " ".join(target_words), links,
                            random_tree(target_words, rng))
        stripped = [(_as_x(f), _as_x(e), share, lex_ef, lex_fe)
                    for _, f, e, share, lex_ef, lex_fe in labelled]
        assert stripped == hiero


def _as_x(side: str) -> str:
    return " ".join(f"[X,{word[-2]}]" if word.startswith("[") else word for word in side.split())


def test_a_parse_of_other_words_is_refused():
    with pytest.raises(GrammarInputError, match="not the target side"):
        rules_of("a", "x", [(0, 0)], "(NP (NN y))")



def test_labelled_grammar_relative_frequencies_condition_on_the_label(tmp_path,
                                                                      write_aligned_bitext):
    # "a" is "x" twice, once an NP and once a VP, and "z" once as an NP
    rows = [(1, "a", "x", "0-0"), (2, "a", "x", "0-0"), (3, "a", "z", "0-0")]
    parses = {1: "(NP (NN x))", 2: "(VP (VB x))", 3: "(NP (NN z))"}
    bitext, alignment = write_aligned_bitext(rows)
    stats = extract_grammar(bitext, alignment, tmp_path / "g.parquet", batch_size=2, workers=2,
                            parses={k: Bracketing.of_tree(parse_tree(t))
                                    for k, t in parses.items()})
    grammar = read_table(tmp_path / "g.parquet", LABELLED_GRAMMAR)
    assert stats.rules == 3
    rows = grammar.set_index(["lhs", "source", "target"])
    assert math.exp(rows.loc[("NP", "a", "x"), "log_p_e_given_f"]) == pytest.approx(1 / 2)
    assert math.exp(rows.loc[("VP", "a", "x"), "log_p_e_given_f"]) == pytest.approx(1.0)
    assert math.exp(rows.loc[("NP", "a", "z"), "log_p_e_given_f"]) == pytest.approx(1 / 2)
    assert math.exp(rows.loc[("NP", "a", "x"), "log_p_f_given_e"]) == pytest.approx(1.0)
    assert list(rows["count"]) == [1.0, 1.0, 1.0]
    with pytest.raises(GrammarInputError, match="no parse"):
        extract_grammar(bitext, alignment, tmp_path / "h.parquet",
                        parses={1: Bracketing.of_tree(parse_tree(parses[1]))})


# -- the labelled pivot ---------------------------------------------------------------------

# (lhs, foreign, English, count, lex(e|f), lex(f|e))
LABELLED_RULES = [
    ("NN", "casa", "house", 3.0, 0.5, 0.6),
    ("NN", "casa", "home", 1.0, 0.2, 0.3),
    ("NN", "hogar", "home", 2.0, 0.7, 0.8),
    ("NN", "hogar", "house", 0.5, 0.1, 0.2),
    ("NP", "casa", "the house", 1.0, 0.4, 0.4),  # same foreign side, another label
    ("NP", "el [NN,1] de [NNP,2]", "the [NNP,2] 's [NN,1]", 1.0, 0.3, 0.4),
    ("NP", "el [NN,1] de [NNP,2]", "the [NN,1] of the [NNP,2]", 2.0, 0.6, 0.5),
    ("X", "el [NN,1] de [NNP,2]", "the [NN,1] from [NNP,2]", 5.0, 0.2, 0.2),
]


def labelled_frame(rules=LABELLED_RULES) -> pd.DataFrame:
    """The bilingual features as extraction writes them: relative frequencies per label (an
    English side's total pools its nonterminal numberings, as c(e) does)."""
    def canonical(e):
        return e.replace("[NNP,2] 's [NN,1]", "[NNP,1] 's [NN,2]")

    c_f, c_e = {}, {}
    for lhs, f, e, c, *_ in rules:
        c_f[lhs, f] = c_f.get((lhs, f), 0.0) + c
        c_e[lhs, canonical(e)] = c_e.get((lhs, canonical(e)), 0.0) + c
    return pd.DataFrame({
        "lhs": [r[0] for r in rules], "source": [r[1] for r in rules],
        "target": [r[2] for r in rules],
        "log_p_e_given_f": [math.log(r[3] / c_f[r[0], r[1]]) for r in rules],
        "log_p_f_given_e": [math.log(r[3] / c_e[r[0], canonical(r[2])]) for r in rules],
        "log_lex_e_given_f": [math.log(r[4]) for r in rules],
        "log_lex_f_given_e": [math.log(r[5]) for r in rules],
        "count": [r[3] for r in rules]})


@pytest.fixture
def labelled_pivot(tmp_path, read_pivoted):
    def run(rules=LABELLED_RULES, **options):
        grammar = tmp_path / "labelled.parquet"
        write_table(labelled_frame(rules), grammar, LABELLED_GRAMMAR)
        out = tmp_path / "para"
        pivot_grammar(grammar, out, tmp_path / "self.parquet", labelled=True, **options)
        frame = read_pivoted(out, LABELLED_PARAPHRASE_GRAMMAR)
        return (frame.set_index(["lhs", "source", "target"]),
                read_table(tmp_path / "self.parquet", SELF_PARAPHRASE))

    return run


def test_rules_pair_only_with_the_same_label_and_foreign_side(labelled_pivot):
    rules, phrases = labelled_pivot(keep_identity=True)
    assert set(rules.index) == {
        ("NN", "house", "home"), ("NN", "home", "house"), ("NN", "house", "house"),
        ("NN", "home", "home"), ("NP", "the house", "the house"),
        ("NP", "the [NNP,1] 's [NN,2]", "the [NN,2] of the [NNP,1]"),
        ("NP", "the [NN,1] of the [NNP,2]", "the [NNP,2] 's [NN,1]"),
        ("NP", "the [NNP,1] 's [NN,2]", "the [NNP,1] 's [NN,2]"),
        ("NP", "the [NN,1] of the [NNP,2]", "the [NN,1] of the [NNP,2]"),
        ("X", "the [NN,1] from [NNP,2]", "the [NN,1] from [NNP,2]")}
    # the NP "the house" and the NN "house" share "casa" but no label: no NN/NP mixing, and
    # the X rule shares the possessive's foreign side but not its label
    # the phrase table (phrases with a paraphrase other than themselves) keys them by label
    assert set(zip(phrases["lhs"], phrases["phrase"], strict=True)) == {
        ("NN", "home"), ("NN", "house"), ("NP", "the [NNP,1] 's [NN,2]"),
        ("NP", "the [NN,1] of the [NNP,2]")}


def test_possessive_rule_by_composing_the_correspondences(labelled_pivot):
    """f = el [NN,1] de [NNP,2]: ∼1 sends f's 1 to e1's [NN,1] (second), 2 to [NNP,2] (first);
    ∼2 is the identity. ∼ = ∼1⁻¹ ∘ ∼2 and e1 renumbered left to right give the draft's
    possessive NP → the NNP₁'s NN₂ | the NN₂ of the NNP₁, its nonterminals reordered."""
    rules, _ = labelled_pivot()
    rule = rules.loc[("NP", "the [NNP,1] 's [NN,2]", "the [NN,2] of the [NNP,1]")]
    assert rule["reordered"] == 1.0 and rule[IDENTITY_FEATURE] == 0.0
    assert rule["neg_target_terminals"] == -3.0
    # one pivot: p(e2|e1) = p(e2|NP,f) p(f|NP,e1) = 2/3 * 1; p(e1|e2) = 1/3 * 1
    assert math.exp(rule["log_p_e2_given_e1"]) == pytest.approx(2 / 3)
    assert math.exp(rule["log_p_e1_given_e2"]) == pytest.approx(1 / 3)
    assert math.exp(rule["log_lex_e2_given_e1"]) == pytest.approx(0.6 * 0.4)
    # black box, the two rules' own values multiplied: p(e1|f) p(e2|f) = 1/3 * 2/3,
    # p(f|e1) p(f|e2) = 1, p(r1|NP) p(r2|NP) = 1/4 * 2/4 (c(NP) = 1 + 1 + 2), rarities added
    assert math.exp(rule["log_bb_p_e_given_f"]) == pytest.approx(2 / 9)
    assert math.exp(rule["log_bb_p_f_given_e"]) == pytest.approx(1.0)
    assert math.exp(rule["log_bb_p_rule_given_lhs"]) == pytest.approx(1 / 8)
    assert rule["bb_rarity"] == pytest.approx(math.exp(0.0) + math.exp(-1.0))
    assert rule["pivots"] == 1 and rule["count"] == 2.0


def test_feature_groups_over_two_pivots_by_hand(labelled_pivot):
    rules, _ = labelled_pivot(keep_identity=True)
    rule = rules.loc[("NN", "house", "home")]
    # within NN: p(.|casa) = house 3/4, home 1/4 (the NP rule of casa is another label);
    # p(.|hogar) = home 2/2.5, house 0.5/2.5; p(f|house) = casa 3/3.5, hogar 0.5/3.5
    p_casa_house, p_hogar_house = 3 / 3.5, 0.5 / 3.5
    # group 2 and the thesis's eq. 3.12: sums over the pivots
    assert math.exp(rule["log_p_e2_given_e1"]) == pytest.approx(
        0.25 * p_casa_house + 0.8 * p_hogar_house)
    assert math.exp(rule["log_lex_e2_given_e1"]) == pytest.approx(0.2 * 0.6 + 0.7 * 0.2)
    assert math.exp(rule["log_lex_e1_given_e2"]) == pytest.approx(0.5 * 0.3 + 0.1 * 0.8)
    # eq. 3.13: p(e1, e2) = p(e2|e1) p(e1), p(e1) from all bilingual counts (sum 15.5)
    assert math.exp(rule["log_p_e1_e2"]) == pytest.approx(
        (0.25 * p_casa_house + 0.8 * p_hogar_house) * 3.5 / 15.5)
    # group 3: the best pivot's product (casa: 3/4 * 1/4 against hogar: 0.2 * 0.8), the
    # smallest sum of rarities (casa: e^-2 + e^0 against hogar: e^0.5 + e^-1)
    assert math.exp(rule["log_bb_p_e_given_f"]) == pytest.approx(0.75 * 0.25)
    assert math.exp(rule["log_bb_p_f_given_e"]) == pytest.approx(
        max(p_casa_house * (1 / 3), p_hogar_house * (2 / 3)))
    assert math.exp(rule["log_bb_p_rule_given_lhs"]) == pytest.approx(3 / 6.5 * 1 / 6.5)
    assert rule["bb_rarity"] == pytest.approx(math.exp(-2.0) + 1.0)
    # group 1: rule-local
    assert rule["neg_target_terminals"] == -1.0 and rule["reordered"] == 0.0
    assert rule[IDENTITY_FEATURE] == 0.0 and rule["pivots"] == 2
    identity = rules.loc[("NN", "house", "house")]
    assert identity[IDENTITY_FEATURE] == 1.0
    assert math.exp(identity["log_p_e2_given_e1"]) == pytest.approx(
        0.75 * p_casa_house + 0.2 * p_hogar_house)


def test_pruning_count_threshold_and_top_n_per_pattern(labelled_pivot):
    # min_count 1 drops hogar -> house (0.5): house -> home pivots through casa alone, the
    # bilingual probabilities not renormalised
    rules, _ = labelled_pivot(keep_identity=True, min_count=1.0)
    assert math.exp(rules.loc[("NN", "house", "home"), "log_p_e2_given_e1"]) == \
        pytest.approx(0.25 * 3 / 3.5)
    assert rules.loc[("NN", "house", "home"), "pivots"] == 1
    # top 1 per phrase by p(e2|e1) lex(e2|e1): for home, itself (1/3 * 1/4 + 2/3 * 4/5 times
    # its lex) beats house; for house, itself beats home
    rules, _ = labelled_pivot(keep_identity=True, top_paraphrases=1)
    score = {}
    for e1, e2 in (("home", "home"), ("home", "house"), ("house", "home"), ("house", "house")):
        full, _ = labelled_pivot(keep_identity=True)
        row = full.loc[("NN", e1, e2)]
        score[e1, e2] = row["log_p_e2_given_e1"] + row["log_lex_e2_given_e1"]
    best = {e1: max(("home", "house"), key=lambda e2, e1=e1: score[e1, e2])
            for e1 in ("home", "house")}
    kept = {(e1, e2) for lhs, e1, e2 in rules.index if lhs == "NN"}
    assert kept == {(e1, best[e1]) for e1 in best}
    assert best == {"home": "home", "house": "house"}
    assert len(rules) == 6  # one per phrase of each label


def test_metadata_and_hiero_grammar_is_refused(labelled_pivot, tmp_path):
    labelled_pivot(top_paraphrases=3)
    meta = read_metadata(next((tmp_path / "para").glob("part*.parquet")))
    assert meta["labelled"] == "true" and meta["top_paraphrases"] == "3"
    from circle.core.schemas import GRAMMAR
    from circle.core.tables import SchemaError

    write_table(labelled_frame().assign(lhs="X"), tmp_path / "hiero.parquet", GRAMMAR)
    with pytest.raises(SchemaError):
        pivot_grammar(tmp_path / "hiero.parquet", tmp_path / "p2", tmp_path / "s2.parquet",
                      labelled=True)


def test_the_page_counts_labels_and_shows_the_possessive_rule(labelled_pivot, tmp_path):
    """The labelled grammars' page on the hand-built grammar: sizes against a Hiero grammar,
    the labels (left-hand sides and nonterminals) and the draft's possessive rule found by
    its cues, with its counts and features."""
    from circle.core.schemas import GRAMMAR
    from circle.figures.samt import samt_page

    # the possessive as the tokeniser writes it
    rules = [(lhs, f, e.replace("'s", "&apos;s"), *rest) for lhs, f, e, *rest in LABELLED_RULES]
    labelled_pivot(rules, keep_identity=True)
    hiero = labelled_frame(rules).head(6).assign(lhs="X")
    write_table(hiero, tmp_path / "hiero.parquet", GRAMMAR)
    page = samt_page(tmp_path / "hiero.parquet", tmp_path / "labelled.parquet",
                     tmp_path / "para" / "part0.parquet", examples=5)
    assert "| Hiero bilingual | 6 |" in page
    assert "| labelled bilingual | 8 | 1.33× Hiero; 3 left-hand-side labels, 4 labels in all; " \
           "12.5% of the rules have the left-hand side X |" in page
    assert "| `NN` | 4 | 3 |" in page and "| `NNP` | 0 | 3 |" in page
    assert "6 identity rules (φ_ident = 1), 5 with nonterminals, 2 reordering them" in page
    # the possessive and its mirror; p(e2|e1) = 2/3 and 1/3 (test above), one pivot
    assert ("| possessive | `NP → the [NNP,1] &apos;s [NN,2] \\| the [NN,2] of the [NNP,1]` | "
            "2.00 | 0.667 |") in page
    assert ("| possessive | `NP → the [NN,1] of the [NNP,2] \\| the [NNP,2] &apos;s [NN,1]`"
            in page)
    assert "fractional count at least 0, " in page and "every paraphrase kept" in page
    assert "Every phrase is pivoted." in page


# -- collapsing the labels after pivoting ----------------------------------------------------

def test_collapsed_grammar_marginalises_the_labels_by_their_shares(labelled_pivot, tmp_path):
    """"house" is an NN 3.5 times and a VP once, so its NN labelling has share 7/9: the
    collapsed p(home|house) is 7/9 of the NN rule's, its residual 1 - 7/9 (1 - r_NN); the
    possessive keeps its one labelling's probabilities with X nonterminals. Biased, every
    collapsed phrase's paraphrase distribution, identity included, sums to 1 (eq. 5.3-5.6)."""
    from circle.core.schemas import PARAPHRASE_GRAMMAR
    from circle.grammar.bias import bias_grammar
    from circle.grammar.collapse import collapse_labels

    rules = [*LABELLED_RULES, ("VP", "casa", "house", 1.0, 0.5, 0.5)]
    labelled, phrases = labelled_pivot(rules)
    out = tmp_path / "collapsed.parquet"
    count = collapse_labels([tmp_path / "para" / "part0.parquet"], tmp_path / "self.parquet",
                            tmp_path / "labelled.parquet", out, tmp_path / "xself.parquet")
    collapsed = read_table(out, PARAPHRASE_GRAMMAR).set_index(["source", "target"])
    assert count == len(collapsed) == 4 and set(collapsed["lhs"]) == {"X"}
    nn = labelled.loc[("NN", "house", "home")]
    rule = collapsed.loc[("house", "home")]
    assert rule["log_p_e2_given_e1"] == pytest.approx(nn["log_p_e2_given_e1"] + math.log(7 / 9))
    assert rule["log_p_e1_given_e2"] == pytest.approx(nn["log_p_e1_given_e2"])  # home: NN only
    assert rule["log_p_e1_e2"] == pytest.approx(rule["log_p_e2_given_e1"]
                                                + math.log(4.5 / 16.5))
    possessive = collapsed.loc[("the [X,1] 's [X,2]", "the [X,2] of the [X,1]")]
    assert math.exp(possessive["log_p_e2_given_e1"]) == pytest.approx(2 / 3)
    residuals = read_table(tmp_path / "xself.parquet", SELF_PARAPHRASE).set_index("phrase")
    r_nn = phrases.set_index(["lhs", "phrase"]).loc[("NN", "house"), "residual"]
    assert residuals.loc["house", "residual"] == pytest.approx(1 - 7 / 9 * (1 - r_nn))
    assert read_metadata(out)["collapsed_labels"] == "true"
    bias_grammar([out], tmp_path / "xself.parquet", tmp_path / "biased.parquet", 0.5)
    biased = read_table(tmp_path / "biased.parquet", PARAPHRASE_GRAMMAR)
    totals = biased.assign(p=biased["log_p_e2_given_e1"].map(math.exp)).groupby("source")["p"]
    assert totals.sum().to_numpy() == pytest.approx(1.0)


def test_a_labelled_grammar_is_decoded_as_pivoted_at_bias_0_only(labelled_pivot, tmp_path):
    """samt.decoding labelled: the "bias 0" grammar is the labelled pivot's output, sorted, its
    identity rules and φ_ident kept (the draft's model); the thesis's bias is refused for it."""
    pivoted, _ = labelled_pivot(keep_identity=True)
    parts = sorted(str(part) for part in (tmp_path / "para").glob("part*.parquet"))
    out = tmp_path / "bias0.parquet"
    assert bias_grammar(parts, tmp_path / "self.parquet", out, 0.0) == len(pivoted)
    written = read_table(out, LABELLED_PARAPHRASE_GRAMMAR)
    assert list(zip(written["lhs"], written["source"], written["target"], strict=True)) == \
        sorted(pivoted.index)
    assert written.set_index(["lhs", "source", "target"]).sort_index().equals(
        pivoted.sort_index().astype(written.set_index(["lhs", "source", "target"]).dtypes))
    assert (written["identity"] == 1).any() and read_metadata(out)["bias"] == "0.0"
    grammar = load_grammar(out)
    assert grammar.labelled and set(grammar.key_labels) == set(written["lhs"])
    with pytest.raises(GrammarInputError, match="not defined for it"):
        bias_grammar(parts, tmp_path / "self.parquet", tmp_path / "b05.parquet", 0.05)
