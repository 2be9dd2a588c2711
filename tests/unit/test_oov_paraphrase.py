"""circle.grammar.oov_paraphrase: rules borrowed from distributional paraphrases (Marton,
Callison-Burch & Resnik 2009 §5), on hand-made rules and in a real decode of the tiny corpus."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_decoder_search import write_arpa

from circle.core.schemas import (
    ALIGNMENT,
    BITEXT,
    GRAMMAR,
    GRAMMAR_OOV_PARAPHRASED,
    GRAMMAR_OOV_PARAPHRASED_BY_LENGTH,
    OOV_PARAPHRASES,
)
from circle.core.tables import read_table, write_table
from circle.corpus.preprocess import normalize
from circle.decoder import decode_corpus
from circle.decoder.grammar import load_grammar
from circle.distributional import DistributionalSettings, MonolingualCorpus, oov_phrases
from circle.grammar.extract import extract_grammar
from circle.grammar.oov_paraphrase import (
    FEATURE,
    LONG_FEATURE,
    SHORT_FEATURE,
    Coverage,
    augment,
    augment_grammar,
    borrowed_rules,
    coverage,
    known_words,
    paraphrase_features,
    read_known_words,
)

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny"
FEATURES = list(GRAMMAR.features)


def rules(*rows: tuple[str, str, float]) -> pd.DataFrame:
    """Grammar rows (source, target, p(e|f)); the other features are fixed."""
    return pd.DataFrame([{"lhs": "X", "source": s, "target": t, "log_p_e_given_f": math.log(p),
                          "log_p_f_given_e": -1.0, "log_lex_e_given_f": -2.0,
                          "log_lex_f_given_e": -3.0, "count": 1.0} for s, t, p in rows])


PARAPHRASES = pd.DataFrame({"phrase": ["cuarto", "cuarto", "menor"],
                            "paraphrase": ["tercero", "segundo", "mayor"],
                            "similarity": [0.6, 0.5, 0.4], "rank": [1, 2, 1]})
RULES = rules(("tercero", "third", 0.7), ("tercero", "three", 0.2), ("segundo", "second", 0.8),
              ("segundo", "third", 0.1), ("tercero [X,1]", "third [X,1]", 0.5),
              ("mayor", "greater", 0.9))


def test_one_rule_per_phrase_and_translation_with_the_aggregate_and_the_best_features():
    borrowed = borrowed_rules(PARAPHRASES, RULES).set_index(["source", "target"])
    assert sorted(borrowed.index) == [("cuarto", "second"), ("cuarto", "third"),
                                      ("cuarto", "three"), ("menor", "greater")]
    # third through tercero (0.6) and segundo (0.5): asim = 1 - 0.4 · 0.5 = 0.8, and the
    # features of tercero → third, the more similar paraphrase's rule
    third = borrowed.loc[("cuarto", "third")]
    assert third[FEATURE] == pytest.approx(math.log(0.8))
    assert third["log_p_e_given_f"] == pytest.approx(math.log(0.7))
    assert third["paraphrase_of"] == "tercero"
    assert borrowed.loc[("cuarto", "three"), FEATURE] == pytest.approx(math.log(0.6))
    assert borrowed.loc[("cuarto", "second"), "paraphrase_of"] == "segundo"
    assert borrowed.loc[("menor", "greater"), FEATURE] == pytest.approx(math.log(0.4))


def test_identical_profiles_give_h_1_and_orthogonal_ones_no_rule():
    paraphrases = pd.DataFrame({"phrase": ["cuarto", "cuarto"], "paraphrase": ["tercero", "mayor"],
                                "similarity": [1.0, 0.0], "rank": [1, 2]})
    with np.errstate(all="raise"):
        borrowed = borrowed_rules(paraphrases, RULES)
    assert sorted(borrowed["target"]) == ["third", "three"]
    assert (borrowed[FEATURE] == 0.0).all()


def test_the_aggregate_does_not_depend_on_the_order_of_the_paraphrases():
    forward = borrowed_rules(PARAPHRASES, RULES)
    for seed in range(3):
        shuffled = PARAPHRASES.sample(frac=1, random_state=seed)
        pd.testing.assert_frame_equal(
            borrowed_rules(shuffled, RULES.sample(frac=1, random_state=seed)), forward)


def test_augmenting_keeps_the_grammar_and_adds_only_rules_for_unknown_phrases():
    grammar = rules(("menor", "least", 0.5), ("casa", "house", 0.9))
    augmented = augment(grammar, PARAPHRASES, RULES)
    own = augmented[augmented["paraphrase_of"].isna()]
    pd.testing.assert_frame_equal(own[list(grammar.columns)], grammar)
    assert (own[FEATURE] == 0.0).all()
    # "menor" has a rule of its own: it is no OOV phrase, so nothing is borrowed for it
    assert sorted(augmented.loc[augmented["paraphrase_of"].notna(), "source"].unique()) \
        == ["cuarto"]
    assert not augmented.duplicated(["source", "target"]).any()
    assert list(augmented.columns) == GRAMMAR_OOV_PARAPHRASED.arrow.names
    pd.testing.assert_frame_equal(augment(grammar, PARAPHRASES.head(0), RULES),
                                  grammar.assign(**{FEATURE: 0.0, "paraphrase_of": None}))


def test_split_features_carry_ln_h_by_the_oov_phrases_length():
    """feature_split 2 (the seed's "1-2 + 3-4grams"): a borrowed rule for a one- or two-word
    OOV phrase has ln h in the short feature, one for a three-word phrase in the long one, the
    other 0; the grammar's own rules 0 in both."""
    paraphrases = pd.concat([PARAPHRASES, pd.DataFrame({
        "phrase": ["el día cuarto", "día cuarto"], "paraphrase": ["mayor", "tercero"],
        "similarity": [0.5, 0.25], "rank": [1, 1]})], ignore_index=True)
    grammar = rules(("casa", "house", 0.9))
    table = augment(grammar, paraphrases, RULES, feature_split=2)
    assert list(table.columns) == GRAMMAR_OOV_PARAPHRASED_BY_LENGTH.arrow.names
    augmented = table.set_index(["source", "target"])
    assert augmented.loc[("casa", "house"), [SHORT_FEATURE, LONG_FEATURE]].tolist() == [0, 0]
    third = augmented.loc[("cuarto", "third")]
    assert third[SHORT_FEATURE] == pytest.approx(math.log(0.8)) and third[LONG_FEATURE] == 0
    two = augmented.loc[("día cuarto", "third")]
    assert two[SHORT_FEATURE] == pytest.approx(math.log(0.25)) and two[LONG_FEATURE] == 0
    three = augmented.loc[("el día cuarto", "greater")]
    assert three[LONG_FEATURE] == pytest.approx(math.log(0.5)) and three[SHORT_FEATURE] == 0
    # the one-feature grammar's rules and values, split
    one = augment(grammar, paraphrases, RULES).set_index(["source", "target"])
    assert one.index.equals(augmented.index)
    assert np.allclose(one[FEATURE], augmented[SHORT_FEATURE] + augmented[LONG_FEATURE])
    assert paraphrase_features(2) == (SHORT_FEATURE, LONG_FEATURE)
    assert paraphrase_features(None) == (FEATURE,)


def test_coverage_counts_the_oov_tokens_no_borrowed_rule_covers():
    found = coverage(["a x b y", "x c", "z z"], {"a", "b", "c"}, {"a x", "z"}, 2)
    # before: x, y, x, z, z; after: y and the x of "x c" ("a x" covers only the first)
    assert found == Coverage(types=3, tokens=5, types_after=2, tokens_after=2, words=8)


@pytest.fixture(scope="module")
def tiny_system(tmp_path_factory):
    """A grammar of the tiny corpus's last 100 training verses (its frozen alignment; the
    whole bitext takes 25 s to extract), a 3-gram LM of the English side, and the Spanish text
    of every set, tokenised as the pipeline does."""
    directory = tmp_path_factory.mktemp("tiny")
    spanish = {name: [normalize(line, "es") for line in
                      (TINY / f"{name}.es.txt").read_text(encoding="utf-8").splitlines()]
               for name in ("train", "tune", "test", "paratune")}
    english = [normalize(line, "en") for line in
               (TINY / "train.en.txt").read_text(encoding="utf-8").splitlines()]
    kept = range(len(english) - 100, len(english))
    write_table(pd.DataFrame({"segment_id": kept, "document": "tiny",
                              "source": [spanish["train"][i] for i in kept],
                              "target": [english[i] for i in kept]}),
                directory / "train.parquet", BITEXT)
    links = read_table(TINY / "alignment.parquet", ALIGNMENT)
    write_table(links[links["segment_id"].isin(kept)], directory / "links.parquet", ALIGNMENT)
    extract_grammar(directory / "train.parquet", directory / "links.parquet",
                    directory / "grammar.parquet")
    write_arpa(directory / "lm.arpa", english, 3)
    return directory, spanish


def test_an_oov_is_translated_after_augmentation(tiny_system):
    directory, spanish = tiny_system
    grammar = read_table(directory / "grammar.parquet", GRAMMAR)
    sentence = next(s for s in spanish["test"] if "cuarto" in s.split())
    assert "cuarto" not in known_words(grammar)
    corpus = MonolingualCorpus([s for texts in spanish.values() for s in texts],
                               DistributionalSettings(stoplist_threshold=50))
    # unigram OOVs (the seed's "1grams" system): this tiny grammar has no rule for "tercero"
    # alone, and longer OOV phrases borrow the grammar's noise ("mañana el día cuarto" ->
    # "land", through "tierra")
    found = [p for phrase in oov_phrases([sentence], known_words(grammar), 1)
             for p in corpus.paraphrases(phrase)]
    assert ("cuarto", "segundo") in {(p.phrase, p.paraphrase) for p in found}
    write_table(pd.DataFrame({"phrase": [p.phrase for p in found],
                              "paraphrase": [p.paraphrase for p in found],
                              "similarity": [p.similarity for p in found],
                              "rank": np.ones(len(found), dtype=np.int32)}),
                directory / "paraphrases.parquet", OOV_PARAPHRASES)
    counts = augment_grammar(directory / "grammar.parquet", directory / "grammar.parquet",
                             directory / "paraphrases.parquet", directory / "augmented.parquet")
    assert counts["rules"] == len(grammar) and counts["borrowed_rules"] > 0
    assert read_known_words(directory / "grammar.parquet") == known_words(grammar)
    weights = {"log_p_e_given_f": 1.0, "log_p_f_given_e": 1.0, "log_lex_e_given_f": 0.5,
               "log_lex_f_given_e": 0.5, "lm": 1.0, "word_penalty": -0.5,
               "phrase_penalty": 0.0, "glue": 0.0, "oov": -10.0}
    before = decode_corpus([sentence], load_grammar(directory / "grammar.parquet"),
                           str(directory / "lm.arpa"), weights, k=1)[0][0]
    augmented = load_grammar(directory / "augmented.parquet")
    assert augmented.feature_names == GRAMMAR_OOV_PARAPHRASED.features
    after = decode_corpus([sentence], augmented, str(directory / "lm.arpa"),
                          {**weights, FEATURE: 1.0}, k=1)[0][0]
    assert "cuarto" in before.text.split() and "cuarto" not in after.text.split()
    assert after.features["oov"] < before.features["oov"]
    assert after.features[FEATURE] < 0  # a borrowed rule, whose h = asim < 1
    assert "second" in after.text.split()  # cuarto -> second, borrowed from segundo
    # the seed's two-feature variant: a one-word phrase's ln h in the short feature
    augment_grammar(directory / "grammar.parquet", directory / "grammar.parquet",
                    directory / "paraphrases.parquet", directory / "split.parquet",
                    feature_split=1)
    split = load_grammar(directory / "split.parquet")
    assert split.feature_names == GRAMMAR_OOV_PARAPHRASED_BY_LENGTH.features
    both = decode_corpus([sentence], split, str(directory / "lm.arpa"),
                         {**weights, SHORT_FEATURE: 1.0, LONG_FEATURE: 1.0}, k=1)[0][0]
    assert both.text == after.text
    assert both.features[SHORT_FEATURE] == after.features[FEATURE]
    assert both.features[LONG_FEATURE] == 0
