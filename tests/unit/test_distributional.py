"""circle.distributional: Marton, Callison-Burch & Resnik (2009) profiles, LLR, cosine and the
paraphrase search, on hand-computed cases and the tiny corpus's Spanish text (tests/data/tiny)."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from circle.corpus.preprocess import normalize
from circle.distributional import (
    DistributionalSettings,
    MonolingualCorpus,
    Profile,
    cosine,
    log_likelihood_ratio,
    oov_phrases,
)

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny"


@pytest.fixture(scope="module")
def tiny_spanish() -> list[str]:
    """The Spanish side of every tiny set, tokenised as the pipeline does."""
    return [normalize(line, "es") for name in ("train", "tune", "test", "paratune")
            for line in (TINY / f"{name}.es.txt").read_text(encoding="utf-8").splitlines()]


def test_llr_of_a_hand_computed_table():
    # k11 = 10, row 20, column 20, N = 100: expected 4, 16, 16, 64, so
    # G² = 2 (10 ln 10/4 + 2 · 10 ln 10/16 + 70 ln 70/64) = 12.0714...
    assert log_likelihood_ratio(np.array([10.0]), 20.0, np.array([20.0]), 100.0)[0] \
        == pytest.approx(12.07138, abs=1e-5)
    # Dunning's form agrees with 2 Σ O ln(O/E) on another table, and a cell of 0 is allowed
    for k11, row, column, total in [(3.0, 7.0, 11.0, 50.0), (0.0, 5.0, 6.0, 30.0)]:
        cells = [k11, row - k11, column - k11, total - row - column + k11]
        expected = [row * column, row * (total - column), (total - row) * column,
                    (total - row) * (total - column)]
        g2 = 2 * sum(o * math.log(o * total / e) for o, e in zip(cells, expected, strict=True)
                     if o > 0)
        assert log_likelihood_ratio(np.array([k11]), row, np.array([column]), total)[0] \
            == pytest.approx(g2)


def test_cosine_of_hand_computed_profiles():
    a = Profile(np.array([1, 2], dtype=np.int32), np.array([3.0, 4.0]))
    b = Profile(np.array([1, 5], dtype=np.int32), np.array([4.0, 3.0]))
    assert cosine(a, b) == pytest.approx(12 / 25)
    assert cosine(a, a) == pytest.approx(1.0)
    assert cosine(a, Profile(np.array([7], dtype=np.int32), np.array([2.0]))) == 0.0
    assert cosine(a, Profile(np.array([], dtype=np.int32), np.array([]))) == 0.0


def test_windows_stay_in_the_sentence_and_profiles_keep_positive_associations():
    corpus = MonolingualCorpus(["a b c d e", "b a", "b d"], DistributionalSettings(window=2))
    ids = corpus.index
    # "a": (b, c) around its first occurrence, only b around its second (not the e before it)
    starts = corpus.occurrences([ids["a"]])
    assert Counter(corpus.vocabulary[i] for i in corpus.window_tokens(starts, 1)) \
        == Counter({"b": 2, "c": 1})
    # a phrase's window is around the whole phrase: "b c" sees a, d, e
    assert sorted(corpus.vocabulary[i] for i in corpus.window_tokens(
        corpus.occurrences([ids["b"], ids["c"]]), 2)) == ["a", "d", "e"]
    # window slots: a 2+1, b 3+1+1, c 4, d 3+1, e 2 (N = 18); "c" has row total 4 and sees
    # a, b, d, e once each: b (expected 4 · 5 / 18 = 1.11) is a negative association, a
    # (0.67), d (0.89) and e (0.44) are positive
    assert corpus.total == 18 and corpus.words == 9
    profile = corpus.profile([ids["c"]])
    assert [corpus.vocabulary[i] for i in profile.ids] == ["a", "d", "e"]
    assert profile.weights[0] == pytest.approx(
        log_likelihood_ratio(np.array([1.0]), 4.0, np.array([3.0]), 18.0)[0])
    assert log_likelihood_ratio(np.array([1.0]), 4.0, np.array([5.0]), 18.0)[0] > 0


def test_frequent_phrases_are_sampled_and_scaled():
    sentences = ["x y", "x z"] * 10
    full = MonolingualCorpus(sentences, DistributionalSettings(window=1))
    sampled = MonolingualCorpus(sentences, DistributionalSettings(window=1, sample=5))
    x = full.index["x"]
    again = MonolingualCorpus(sentences, DistributionalSettings(window=1, sample=5))
    np.testing.assert_array_equal(sampled.profile([x]).weights, again.profile([x]).weights)
    # 5 of the 20 occurrences, counts × 4: the profile of an all-alike word is unchanged
    uniform = ["x y"] * 20
    assert np.allclose(
        MonolingualCorpus(uniform, DistributionalSettings(window=1, sample=5)).profile([1])
        .weights, MonolingualCorpus(uniform, DistributionalSettings(window=1)).profile([1])
        .weights)
    assert full.profile([x]).ids.tolist() == [full.index["y"], full.index["z"]]


def test_contexts_grow_over_the_stoplist_and_candidates_fill_them():
    sentences = ["el perro come carne .", "el gato come carne .", "el perro bebe agua .",
                 "un gato bebe leche ."]
    # distinct collocates (window 6): el 7, . 9, gato 7, bebe 7, perro 6, others fewer
    corpus = MonolingualCorpus(sentences, DistributionalSettings(stoplist_threshold=6))
    stopped = {corpus.vocabulary[i] for i in np.flatnonzero(corpus.stopwords)}
    assert stopped == {"el", ".", "gato", "bebe"}
    perro = [corpus.index["perro"]]
    contexts = {(corpus.text(left), corpus.text(right))
                for left, right in corpus.contexts(perro)}
    assert contexts == {("<s> el", "come"), ("<s> el", "bebe agua")}
    assert {corpus.text(x) for x in corpus.candidates(perro)} == {"gato"}


def test_stoplist_against_a_brute_force_count(tiny_spanish):
    settings = DistributionalSettings(stoplist_threshold=50, sample=20)
    corpus = MonolingualCorpus(tiny_spanish, settings)
    collocates: dict[str, set[str]] = {}
    bigrams: Counter = Counter()
    for sentence in tiny_spanish:
        words = sentence.split()
        for i, word in enumerate(words):
            collocates.setdefault(word, set()).update(
                words[max(0, i - 6):i] + words[i + 1:i + 7])
        bigrams.update(zip(words, words[1:], strict=False))
    expected = {w for w, c in collocates.items() if len(c) > 50}
    assert {corpus.vocabulary[i] for i in np.flatnonzero(corpus.stopwords)} == expected
    expected_bigrams = {b for b, n in bigrams.items() if n > 20 and set(b) <= expected}
    assert expected_bigrams  # the case is exercised
    assert {(corpus.vocabulary[a], corpus.vocabulary[b]) for a, b in corpus.stop_bigrams} \
        == expected_bigrams


def test_candidates_are_every_filler_of_the_contexts(tiny_spanish):
    corpus = MonolingualCorpus(tiny_spanish, DistributionalSettings(stoplist_threshold=50))
    padded = [["<s>", *s.split(), "<s>"] for s in tiny_spanish]
    for phrase in ("cuarto", "menor", "hijos de", "tierra"):
        pattern = corpus.ids(phrase)
        expected = set()
        for left, right in corpus.contexts(pattern):
            left, right = corpus.text(left).split(), corpus.text(right).split()
            for words in padded:
                for i in range(len(words) - len(left) + 1):
                    if words[i:i + len(left)] != left:
                        continue
                    for m in range(1, 5):
                        j = i + len(left)
                        x = words[j:j + m]
                        if len(x) == m and "<s>" not in x \
                                and words[j + m:j + m + len(right)] == right \
                                and not _contains(x, phrase.split()):
                            expected.add(" ".join(x))
        assert {corpus.text(x) for x in corpus.candidates(pattern)} == expected, phrase
        assert expected or phrase == "cuarto"


def _contains(words: list[str], part: list[str]) -> bool:
    return any(words[k:k + len(part)] == part for k in range(len(words) - len(part) + 1))


def test_paraphrases_of_tiny_oovs(tiny_spanish):
    settings = DistributionalSettings(stoplist_threshold=50, min_score=0.3, k=2)
    corpus = MonolingualCorpus(tiny_spanish, settings)
    found = corpus.paraphrases("cuarto")
    assert [(p.paraphrase, round(p.similarity, 3)) for p in found] \
        == [("tercero", 0.567), ("segundo", 0.464)]
    own = corpus.profile(corpus.ids("cuarto"))
    assert found[0].similarity == pytest.approx(cosine(own, corpus.profile(corpus.ids("tercero"))))
    assert corpus.paraphrases("palabra-que-no-existe") == []
    assert all(p.similarity >= 0.3 for w in ("menor", "dé", "separe")
               for p in corpus.paraphrases(w))


def test_oov_phrases_are_the_ngrams_over_unknown_words():
    phrases = oov_phrases(["a b x c", "x"], {"a", "b", "c"}, 2)
    assert phrases == ["b x", "x", "x c"]
    assert oov_phrases(["a b x c"], {"a", "b", "c"}, 4) == [
        "a b x", "a b x c", "b x", "b x c", "x", "x c"]


def test_settings_from_a_config_section_keep_the_search_keys_and_the_seed():
    """The oov_paraphrase section also says which runs translate with the paraphrases; those
    keys are not search settings (circle translate builds its search from the section)."""
    section = {"window": 4, "k": 5, "min_score": 0.6, "translate": False,
               "tuning_conditions": ["4H"], "untuned_weight": 0.2}
    settings = DistributionalSettings.from_config(section, seed=7)
    assert settings == DistributionalSettings(window=4, k=5, min_score=0.6, seed=7)
