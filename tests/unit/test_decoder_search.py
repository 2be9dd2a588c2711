"""Search correctness of the SCFG decoder against an independent brute-force enumeration.

The brute force below enumerates every derivation of a small hand grammar with the glue rules
and pass-through words, scores each complete output with KenLM's own sentence scorer, and so
knows the exact best derivation per output string. With pruning switched off the decoder must
find exactly these scores, in order. Every search test runs with both engines (the compiled
search loop and its pure-Python reference), and the engines must agree exactly.
"""

from __future__ import annotations

import itertools
import math
import random
import sys
from collections import Counter
from functools import cache

import kenlm
import pandas as pd
import pytest

import circle.decoder
import circle.decoder.chart
from circle.decoder import Decoder, DecoderSettings, Grammar, LanguageModel
from circle.decoder.model import ENGINES

LN10 = math.log(10.0)
EXHAUSTIVE = {"pop_limit": 10**9, "span_limit": 100, "options_limit": 10**9, "k": 10**6}
"""Settings that switch pruning off."""
FEATURES = ("f1", "f2")

RULES = [
    ("la", "the"), ("la", "her"), ("casa", "house"), ("casa", "home"),
    ("la casa", "the house"), ("la casa", "the home"), ("es", "is"), ("es", "'s"),
    ("pequeña", "small"), ("pequeña", "little"), ("el", "the"), ("perro", "dog"),
    ("el perro", "the dog"), ("de", "of"), ("y", "and"), ("grande", "big"),
    ("grande", "large house"),
    ("[X,1] pequeña", "small [X,1]"), ("[X,1] pequeña", "little [X,1]"),
    ("la [X,1] es", "the [X,1] is"), ("[X,1] es [X,2]", "[X,1] is [X,2]"),
    ("[X,1] es [X,2]", "[X,2] [X,1] is"), ("[X,1] de [X,2]", "[X,2] 's [X,1]"),
    ("[X,2] y [X,1]", "[X,1] and [X,2]"), ("muy [X,1]", "very [X,1]"),
    ("muy [X,1]", "[X,1] indeed"), ("el [X,1] de [X,2]", "the [X,1] of [X,2]"),
]
"""Spanish-English rules: phrases, reordering, two nonterminals, a source side written with
[X,2] first, and a word ('muy') that only a hierarchical rule covers."""

_rng = random.Random(7)
GRAMMAR_ROWS = [(source, target, -_rng.uniform(0.1, 2.0), -_rng.uniform(0.1, 2.0))
                for source, target in RULES]
"""The rules with their two feature values."""

SENTENCES = ["la casa es muy pequeña", "el perro de la casa es grande", "la casa y el perro",
             "la zorro es muy pequeña"]

LM_TEXT = ["the house is small", "the small house is very small", "the dog of the house is big",
           "the house and the dog", "her house is little", "the home is very small indeed",
           "a dog 's house is a small house", "the house 's dog is large"]

WEIGHTS = [
    {"f1": 1.0, "f2": 0.5, "lm": 1.0, "word_penalty": -0.3, "phrase_penalty": -0.2,
     "glue": 0.1, "oov": -5.0, "target": -1.5},
    {"f1": 0.2, "f2": 1.3, "lm": 0.7, "word_penalty": 0.4, "phrase_penalty": 0.3,
     "glue": -0.6, "oov": -2.0, "target": -0.5},
]


def write_arpa(path, sentences: list[str], order: int) -> None:
    """An ARPA model of the given order with MLE-style probabilities and varied backoffs.

    It need not be normalised: the tests compare the decoder's LM scores with KenLM's own.
    """
    counts: list[Counter] = [Counter() for _ in range(order)]
    for sentence in sentences:
        words = ["<s>", *sentence.split(), "</s>"]
        for n in range(1, order + 1):
            for i in range(len(words) - n + 1):
                counts[n - 1][tuple(words[i:i + n])] += 1
    total = sum(counts[0].values())
    lines = ["\\data\\", f"ngram 1={len(counts[0]) + 1}"]
    lines += [f"ngram {n}={len(counts[n - 1])}" for n in range(2, order + 1)]
    for n in range(1, order + 1):
        lines += ["", f"\\{n}-grams:"]
        if n == 1:
            lines.append("-3.0\t<unk>\t-0.5" if order > 1 else "-3.0\t<unk>")
        for ngram, count in sorted(counts[n - 1].items()):
            context = counts[n - 2][ngram[:-1]] if n > 1 else total
            prob = -99.0 if ngram == ("<s>",) else math.log10(count / context)
            line = f"{prob:.6f}\t{' '.join(ngram)}"
            if n < order and ngram[-1] != "</s>":
                line += f"\t{-0.1 - 0.15 * (len(ngram[-1]) % 4):.6f}"
            lines.append(line)
    lines += ["", "\\end\\", ""]
    path.write_text("\n".join(lines), encoding="utf-8")


@pytest.fixture(scope="module")
def grammar() -> Grammar:
    frame = pd.DataFrame([("X", *row) for row in GRAMMAR_ROWS],
                         columns=["lhs", "source", "target", *FEATURES])
    return Grammar.from_frame(frame, FEATURES)


@pytest.fixture(scope="module", params=[2, 3, 4], ids=lambda order: f"order{order}")
def kenlm_model(request, tmp_path_factory) -> kenlm.Model:
    path = tmp_path_factory.mktemp("lm") / f"lm{request.param}.arpa"
    write_arpa(path, LM_TEXT, request.param)
    return kenlm.Model(str(path))


@pytest.fixture(params=ENGINES)
def engine(request) -> str:
    return request.param


def lm_ln(model: kenlm.Model, text: str) -> float:
    """Natural-log sentence probability, summed in double precision."""
    return sum(score for score, _, _ in model.full_scores(text, bos=True, eos=True)) * LN10


def brute_force(words: tuple[str, ...], model: kenlm.Model, weights: dict[str, float],
                target: str | None = None, span_limit: int = 100,
                rows: list[tuple] | None = None) -> dict[str, float]:
    """Best model score of every output string, by enumerating all derivations of ``rows``
    (lhs, source, target, f1, f2; default: the Hiero rules, all X). A nonterminal [L,k]
    covers a span only by a derivation of a rule with left-hand side L (a pass-through word is
    an X); the glue rules take every label."""
    rows = [("X", *row) for row in GRAMMAR_ROWS] if rows is None else rows
    one_word = {source for _, source, *_ in rows if len(source.split()) == 1}
    labels = {lhs for lhs, *_ in rows} | {"X"}

    def splits(tokens: tuple[str, ...], i: int, j: int):
        if not tokens:
            if i == j:
                yield {}
            return
        head, rest = tokens[0], tokens[1:]
        if head.startswith("["):
            for b in range(i + 1, j + 1):
                for assignment in splits(rest, b, j):
                    yield {head: (i, b), **assignment}
        elif i < j and words[i] == head:
            yield from splits(rest, i + 1, j)

    @cache
    def x(i: int, j: int, label: str) -> list[tuple[tuple[str, ...], Counter]]:
        results = []
        if j == i + 1 and words[i] not in one_word and label == "X":
            results.append(((words[i],), Counter(oov=1, word_penalty=-1)))
        for lhs, source, target_side, *values in rows if j - i <= span_limit else ():
            if lhs != label:
                continue
            for assignment in splits(tuple(source.split()), i, j):
                names = sorted(assignment)
                for parts in itertools.product(*(x(*assignment[n], n[1:].split(",")[0])
                                                 for n in names)):
                    part = {n.split(",")[1]: p for n, p in zip(names, parts, strict=True)}
                    out: list[str] = []
                    features = Counter(dict(zip(FEATURES, values, strict=True)), phrase_penalty=1)
                    for symbol in target_side.split():
                        if symbol.startswith("["):
                            out += part[symbol.split(",")[1]][0]
                        else:
                            out.append(symbol)
                            features["word_penalty"] -= 1
                    for sub in part.values():
                        features.update(sub[1])
                    results.append((tuple(out), features))
        return results

    @cache
    def s(j: int) -> list[tuple[tuple[str, ...], Counter]]:
        results = [derivation for label in labels for derivation in x(0, j, label)]
        for i in range(1, j):
            for label in labels:
                for (left, lf), (right, rf) in itertools.product(s(i), x(i, j, label)):
                    features = Counter(lf, glue=1)
                    features.update(rf)  # Counter.update adds; Counter + would drop values ≤ 0
                    results.append((left + right, features))
        return results

    keep = set(target.split()) if target is not None else None
    best: dict[str, float] = {}
    for out, features in s(len(words)):
        text = " ".join(out)
        features = Counter(features)
        features["lm"] = lm_ln(model, text)
        if keep is not None:
            features["target"] = sum(1 for w in out if w not in keep)
        score = sum(weights.get(name, 0.0) * value for name, value in features.items())
        best[text] = max(score, best.get(text, -math.inf))
    return best


def dot(features: dict[str, float], weights: dict[str, float]) -> float:
    return sum(weights.get(name, 0.0) * value for name, value in features.items())


@pytest.mark.parametrize("weights", WEIGHTS, ids=["w0", "w1"])
@pytest.mark.parametrize("sentence", SENTENCES)
@pytest.mark.parametrize("target", [None, "the dog is very small"], ids=["untargeted", "T"])
def test_exhaustive_search_matches_brute_force(grammar, kenlm_model, engine, weights, sentence,
                                               target):
    decoder = Decoder(grammar, LanguageModel(kenlm_model), weights,
                      DecoderSettings(**EXHAUSTIVE, engine=engine))
    hypotheses = decoder.decode(sentence, target=target)
    best = brute_force(tuple(sentence.split()), kenlm_model, weights, target)
    expected = sorted(best.values(), reverse=True)
    assert [h.score for h in hypotheses] == pytest.approx(expected, abs=1e-9)
    assert {h.text for h in hypotheses} == set(best)
    for h in hypotheses:
        assert h.score == pytest.approx(best[h.text], abs=1e-9)
        assert h.score == pytest.approx(dot(h.features, weights), abs=1e-9)
        assert h.features["lm"] == pytest.approx(lm_ln(kenlm_model, h.text), abs=1e-9)


@pytest.mark.parametrize("sentence", SENTENCES)
def test_pruned_kbest_is_sorted_unique_consistent(grammar, kenlm_model, engine, sentence):
    weights = WEIGHTS[0]
    settings = DecoderSettings(pop_limit=4, options_limit=2, k=15, engine=engine)
    hypotheses = Decoder(grammar, LanguageModel(kenlm_model), weights, settings).decode(sentence)
    best = brute_force(tuple(sentence.split()), kenlm_model, weights)
    texts = [h.text for h in hypotheses]
    scores = [h.score for h in hypotheses]
    assert 0 < len(texts) == len(set(texts)) <= 15
    assert scores == sorted(scores, reverse=True)
    for h in hypotheses:
        assert h.score <= best[h.text] + 1e-9
        assert h.score == pytest.approx(dot(h.features, weights), abs=1e-9)
        assert h.features["lm"] == pytest.approx(lm_ln(kenlm_model, h.text), abs=1e-9)
        assert h.features["lm"] == pytest.approx(
            kenlm_model.score(h.text, bos=True, eos=True) * LN10, rel=1e-6)
        assert h.features["word_penalty"] == -len(h.text.split())


@pytest.mark.parametrize("span_limit", [1, 2, 4])
def test_span_limit(grammar, kenlm_model, engine, span_limit):
    sentence = SENTENCES[1]
    settings = DecoderSettings(**{**EXHAUSTIVE, "span_limit": span_limit}, engine=engine)
    decoder = Decoder(grammar, LanguageModel(kenlm_model), WEIGHTS[1], settings)
    best = brute_force(tuple(sentence.split()), kenlm_model, WEIGHTS[1], span_limit=span_limit)
    assert {h.text: h.score for h in decoder.decode(sentence)} == pytest.approx(best, abs=1e-9)


def test_kbest_size(grammar, kenlm_model, engine):
    decoder = Decoder(grammar, LanguageModel(kenlm_model), WEIGHTS[0],
                      DecoderSettings(**EXHAUSTIVE, engine=engine))
    everything = decoder.decode(SENTENCES[0])
    assert len(everything) > 10
    assert len(decoder.decode(SENTENCES[0], k=10)) == 10
    assert [h.text for h in decoder.decode(SENTENCES[0], k=10)] == \
        [h.text for h in everything[:10]]


def test_oov_words_pass_through(grammar, kenlm_model, engine):
    decoder = Decoder(grammar, LanguageModel(kenlm_model), WEIGHTS[0],
                      DecoderSettings(k=50, engine=engine))
    hypotheses = decoder.decode("la zorro es muy pequeña")
    assert all("zorro" in h.text.split() for h in hypotheses)
    # 'muy' is covered only by the rule 'muy [X,1]': it passes through when that is not used
    assert {h.features["oov"] for h in hypotheses} == {1.0, 2.0}
    for h in hypotheses:
        assert h.features["oov"] == 1 + ("muy" in h.text.split())
    only_unknown = decoder.decode("zorro lobo")
    assert only_unknown[0].text == "zorro lobo"
    assert only_unknown[0].features["oov"] == 2.0


def test_empty_input(grammar, kenlm_model, engine):
    decoder = Decoder(grammar, LanguageModel(kenlm_model), WEIGHTS[0],
                      DecoderSettings(engine=engine))
    [hypothesis] = decoder.decode("")
    assert hypothesis.text == ""
    assert hypothesis.features["lm"] == pytest.approx(lm_ln(kenlm_model, ""), abs=1e-9)


def test_targeting_counts_and_pulls_towards_target(grammar, kenlm_model, engine):
    sentence = "la casa es muy pequeña"
    target = "her home is little indeed"
    base = dict(WEIGHTS[0])
    exhaustive = DecoderSettings(**EXHAUSTIVE, engine=engine)
    decoder = Decoder(grammar, LanguageModel(kenlm_model), {**base, "target": 0.0}, exhaustive)
    untargeted = decoder.decode(sentence, k=1)[0]
    assert untargeted.text != target
    misses = []
    for weight in (0.0, -0.5, -1.0, -2.0, -4.0, -8.0, -16.0):
        decoder = Decoder(grammar, LanguageModel(kenlm_model), {**base, "target": weight},
                          exhaustive)
        for h in decoder.decode(sentence, target=target, k=20):
            assert h.features["target"] == sum(w not in target.split() for w in h.text.split())
        misses.append(decoder.decode(sentence, target=target, k=1)[0].features["target"])
    assert misses == sorted(misses, reverse=True)
    assert misses[0] > 0 and misses[-1] == 0


def test_one_plan_serves_many_targets(grammar, kenlm_model, engine):
    decoder = Decoder(grammar, LanguageModel(kenlm_model), WEIGHTS[0],
                      DecoderSettings(k=20, engine=engine))
    plan = decoder.prepare(SENTENCES[1])
    for target in ("the dog 's house is big", "the house of the dog is large house", None):
        shared = decoder.decode(plan, target=target)
        fresh = decoder.decode(SENTENCES[1], target=target)
        assert [(h.text, h.score) for h in shared] == [(h.text, h.score) for h in fresh]


def test_targeting_ranks_rules_before_the_options_limit(kenlm_model, engine):
    """The options limit keeps the rules that the targeting feature favours."""
    frame = pd.DataFrame([("X", "casa", word, -0.1 * rank) for rank, word in
                          enumerate(["house", "home", "dwelling", "abode"])],
                         columns=["lhs", "source", "target", "f1"])
    grammar = Grammar.from_frame(frame, ["f1"])
    weights = {"f1": 1.0, "lm": 0.0, "word_penalty": 0.0, "phrase_penalty": 0.0, "glue": 0.0,
               "oov": -1.0, "target": -1.0}
    decoder = Decoder(grammar, LanguageModel(kenlm_model), weights, DecoderSettings(
        options_limit=1, engine=engine))
    assert [h.text for h in decoder.decode("casa")] == ["house"]
    assert [h.text for h in decoder.decode("casa", target="my abode")] == ["abode"]


def test_paraphrasing_adds_no_identity_rules(kenlm_model, engine):
    """English → English: covered words must be rewritten, uncovered ones pass through."""
    frame = pd.DataFrame([("X", "house", "home", -0.1), ("X", "small [X,1]", "little [X,1]", -0.2),
                          ("X", "small", "little", -0.3)],
                         columns=["lhs", "source", "target", "f1"])
    weights = {"f1": 1.0, "lm": 1.0, "word_penalty": 0.0, "phrase_penalty": 0.0, "glue": 0.0,
               "oov": -1.0}
    decoder = Decoder(Grammar.from_frame(frame, ["f1"]), LanguageModel(kenlm_model), weights,
                      DecoderSettings(**EXHAUSTIVE, engine=engine))
    hypotheses = decoder.decode("the small house")
    assert [h.text for h in hypotheses] == ["the little home"]
    assert hypotheses[0].features["oov"] == 1.0


def engine_outputs(grammar, model, weights, settings, cases, **cython_options):
    """Per engine, the n-best lists (text, score, features) of ``cases`` (sentence, target).

    ``cython_options`` go to the compiled engine's constructor (e.g. a tiny LM cache).
    """
    outputs = {}
    for engine in ENGINES:
        decoder = Decoder(grammar, LanguageModel(model), weights,
                          DecoderSettings(**settings, engine=engine))
        if engine == "cython" and cython_options:
            decoder._search = circle.decoder._cube.CubePruning(
                decoder.lm, decoder.model.lm_weight, decoder.settings.pop_limit,
                **cython_options)
        outputs[engine] = [[(h.text, h.score, h.features) for h in decoder.decode(s, target=t)]
                           for s, t in cases]
    return outputs


@pytest.mark.parametrize("settings", [
    {"pop_limit": 1, "options_limit": 1, "k": 5}, {"pop_limit": 3, "options_limit": 2, "k": 20},
    {"pop_limit": 10, "k": 50}, EXHAUSTIVE], ids=["pop1", "pop3", "pop10", "exhaustive"])
@pytest.mark.parametrize("weights", WEIGHTS, ids=["w0", "w1"])
def test_engines_agree_exactly(grammar, kenlm_model, weights, settings):
    cases = list(itertools.product(SENTENCES + [""], [None, "the dog is very small"]))
    outputs = engine_outputs(grammar, kenlm_model, weights, settings, cases)
    assert outputs["cython"] == outputs["python"]


def random_grammar(rng: random.Random, source_vocab: list[str], target_vocab: list[str],
                   size: int) -> Grammar:
    """Phrase rules and rules with one or two nonterminals, in kept or swapped order, on the
    target or the source side."""
    patterns = [("a", "a"), ("a b", "a b"), ("a [X,1]", "[X,1] a"), ("[X,1] a", "a [X,1] b"),
                ("a [X,1] b", "a [X,1]"), ("[X,1] a [X,2]", "[X,1] a [X,2]"),
                ("[X,1] a [X,2]", "[X,2] [X,1] b"), ("a [X,1] b [X,2]", "[X,2] a [X,1]"),
                ("[X,2] a b [X,1]", "[X,1] a [X,2]")]
    rows = set()
    while len(rows) < size:
        source, target = rng.choice(patterns)
        source = " ".join(rng.choice(source_vocab) if s in "ab" else s for s in source.split())
        target = " ".join(rng.choice(target_vocab) if s in "ab" else s for s in target.split())
        rows.add((source, target))
    frame = pd.DataFrame([("X", s, t, -rng.uniform(0, 3), -rng.uniform(0, 3))
                          for s, t in sorted(rows)],
                         columns=["lhs", "source", "target", *FEATURES])
    return Grammar.from_frame(frame, FEATURES)


SOURCE_VOCAB = [f"s{i}" for i in range(12)]
TARGET_VOCAB = [f"t{i}" for i in range(15)]


def random_grammar_and_lm(rng: random.Random, tmp_path) -> tuple[Grammar, kenlm.Model]:
    """A random grammar of 400 rules over SOURCE_VOCAB → TARGET_VOCAB and a random trigram LM."""
    grammar = random_grammar(rng, SOURCE_VOCAB, TARGET_VOCAB, 400)
    path = tmp_path / "lm.arpa"
    write_arpa(path, [" ".join(rng.choices(TARGET_VOCAB, k=12)) for _ in range(40)], 3)
    return grammar, kenlm.Model(str(path))


@pytest.mark.parametrize("cython_options", [{}, {"max_transitions": 7}],
                         ids=["lm-cache", "tiny-lm-cache"])
def test_engines_agree_on_a_random_grammar(tmp_path, cython_options):
    """Heavy pruning and recombination: many rules per span, long inputs, a trigram LM."""
    rng = random.Random(11)
    grammar, model = random_grammar_and_lm(rng, tmp_path)
    cases = [(" ".join(rng.choices(SOURCE_VOCAB + ["oov"], k=rng.randint(6, 14))),
              " ".join(rng.choices(TARGET_VOCAB, k=8)) if i % 2 else None) for i in range(8)]
    settings = {"pop_limit": 20, "options_limit": 6, "k": 50}
    outputs = engine_outputs(grammar, model, WEIGHTS[1], settings, cases,
                             **cython_options)
    assert min(len(nbest) for nbest in outputs["python"]) >= 20
    assert outputs["cython"] == outputs["python"]


@pytest.mark.parametrize("span_limit", [1, 3, 20])
def test_compiled_matcher_agrees_with_the_reference(span_limit):
    """The same applications per span, in the same order, and the same pass-through words."""
    from circle.decoder import _cube
    rng = random.Random(3)
    source_vocab = [f"s{i}" for i in range(8)]
    grammar = random_grammar(rng, source_vocab, ["t", "u", "v"], 300)
    hierarchical = 0
    for _ in range(20):
        words = tuple(rng.choices(source_vocab + ["oov"], k=rng.randint(0, 16)))
        reference = circle.decoder.chart.match(grammar, words, span_limit)
        compiled = _cube.match(grammar, words, span_limit)
        assert list(compiled.spans.items()) == list(reference.spans.items())
        assert compiled.oov == reference.oov and compiled.words == words
        hierarchical += sum(len(spans) > 0 for applications in reference.spans.values()
                            for _, spans in applications)
    assert hierarchical > 100 or span_limit == 1  # rules with nonterminals were matched


def test_compiled_engine_refuses_an_overlong_rule_target_clearly(kenlm_model):
    """Rule targets are held in fixed-size arrays by the compiled search; the reference
    search has no limit."""
    long_target = " ".join(["house"] * 40)
    frame = pd.DataFrame([("X", "casa", long_target, -0.1)], columns=["lhs", "source", "target",
                                                                      "f1"])
    grammar = Grammar.from_frame(frame, ["f1"])
    weights = {"f1": 1.0, "lm": 1.0, "word_penalty": 0.0, "phrase_penalty": 0.0, "glue": 0.0,
               "oov": -1.0}
    lm = LanguageModel(kenlm_model)
    assert Decoder(grammar, lm, weights, DecoderSettings(engine="python")).decode(
        "casa")[0].text == long_target
    with pytest.raises(ValueError, match="'house', 'house'.* longer than the compiled search"):
        Decoder(grammar, lm, weights, DecoderSettings(engine="cython")).decode("casa")


def test_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="engine"):
        DecoderSettings(engine="fortran")


def test_unbuilt_compiled_engine_is_a_clear_error(grammar, kenlm_model, monkeypatch):
    monkeypatch.delattr(circle.decoder, "_cube", raising=False)
    monkeypatch.setitem(sys.modules, "circle.decoder._cube", None)
    lm = LanguageModel(kenlm_model)
    with pytest.raises(ImportError, match="pip install -e"):
        Decoder(grammar, lm, WEIGHTS[0], DecoderSettings(engine="cython"))
    assert Decoder(grammar, lm, WEIGHTS[0], DecoderSettings(engine="python")).decode("la casa")


def test_options_are_the_best_rules_by_score_and_lm_estimate(kenlm_model, engine):
    """The options of a source side are its ``options_limit`` best rules by features · weights
    plus the weighted LM estimate of their target words, ties in table order; both engines
    estimate as :meth:`LanguageModel.estimate` does."""
    rng = random.Random(5)
    grammar = random_grammar(rng, ["la", "casa"], ["the", "house", "small", "dog", "is"], 60)
    lm = LanguageModel(kenlm_model)
    decoder = Decoder(grammar, lm, WEIGHTS[1], DecoderSettings(options_limit=3, engine=engine))
    plan = decoder.prepare("la casa la casa")
    assert max(len(ranked.rows) for ranked in plan.rule_sets.values()) > 3  # the limit binds
    for ranked in plan.rule_sets.values():
        rules = grammar.rules_at(ranked.rows.tolist())
        priorities = [decoder.model.dot(rule.values)
                      + decoder.model.lm_weight * LN10 * lm.estimate(rule.target)
                      for rule in rules]
        assert ranked.priorities.tolist() == pytest.approx(priorities, abs=1e-9)
        table_order = sorted(ranked.rows.tolist())
        expected = sorted(table_order, key=lambda row: -priorities[ranked.rows.tolist().index(row)])
        assert [option.rule for option in ranked.best] == grammar.rules_at(expected[:3])


@pytest.mark.parametrize("target_weight", [-4.0, -0.5, 0.0, 0.8])
def test_targeted_options_are_the_best_rules_with_the_targeting_term(kenlm_model, engine,
                                                                     target_weight):
    """Re-ranked towards a target, a side's options are its ``options_limit`` best rules by
    priority + targeting weight × words missing from T, ties in untargeted order, checked
    against all of the side's rules (the decoder considers only rows that can qualify)."""
    rng = random.Random(8)
    target_vocab = ["the", "house", "small", "dog", "is", "big", "a"]
    grammar = random_grammar(rng, ["la", "casa"], target_vocab, 150)
    weights = {**WEIGHTS[1], "target": target_weight}
    decoder = Decoder(grammar, LanguageModel(kenlm_model), weights,
                      DecoderSettings(options_limit=3, engine=engine))
    plan = decoder.prepare("la casa la casa")
    pruned = len(plan.ranked_sides.rows)
    for target in ("the small dog", "a big house is big", "dog"):
        selected = decoder._select(plan, decoder._target(target.split()))
        for key, ranked in plan.rule_sets.items():
            rules = grammar.rules_at(ranked.rows.tolist())
            misses = [sum(word not in target.split() for word in rule.words) for rule in rules]
            adjusted = [p + target_weight * m
                        for p, m in zip(ranked.priorities.tolist(), misses, strict=True)]
            best = sorted(range(len(rules)), key=lambda i: -adjusted[i])[:3]
            assert [option.rule for option in selected[key]] == [rules[i] for i in best]
            assert [option.miss for option in selected[key]] == [misses[i] for i in best]
    assert max(len(ranked.rows) for ranked in plan.rule_sets.values()) > 3  # the limit binds
    if target_weight == 0.0:
        assert pruned == sum(min(len(ranked.rows), 3) for ranked in plan.rule_sets.values())


FOREST_TARGETS = ["the dog is very small", "the house 's dog is large", "", "the dog is very small"]
"""Targets decoded one after another from one forest (the last repeats the first: re-weighting
in place must leave nothing behind)."""


@pytest.mark.parametrize("weights", WEIGHTS, ids=["w0", "w1"])
@pytest.mark.parametrize("sentence", SENTENCES)
def test_forest_kbest_equals_targeted_decoding_without_pruning(grammar, kenlm_model, engine,
                                                               weights, sentence):
    """Targeting is rule-local: re-weighting the untargeted hypergraph gives the targeted
    search's k-best list (texts, scores, features) when nothing is pruned."""
    decoder = Decoder(grammar, LanguageModel(kenlm_model), weights,
                      DecoderSettings(**EXHAUSTIVE, engine=engine))
    forest = decoder.forest(sentence)
    for target in FOREST_TARGETS:
        from_forest = decoder.decode_forest(forest, target)
        searched = decoder.decode(sentence, target=target)
        assert [h.text for h in from_forest] == [h.text for h in searched]
        for ours, theirs in zip(from_forest, searched, strict=True):
            assert ours.score == pytest.approx(theirs.score, abs=1e-9)
            assert ours.features == pytest.approx(theirs.features, abs=1e-9)
            assert ours.features["target"] == sum(
                word not in target.split() for word in ours.text.split())


def test_forest_of_a_pruned_search_misses_what_targeting_would_keep(kenlm_model, engine):
    """With options_limit 1 the untargeted forest holds only 'house'; the targeted search
    re-ranks the rules first and finds 'abode' (why forests are built with a wider beam)."""
    frame = pd.DataFrame([("X", "casa", word, -0.1 * rank) for rank, word in
                          enumerate(["house", "home", "dwelling", "abode"])],
                         columns=["lhs", "source", "target", "f1"])
    weights = {"f1": 1.0, "lm": 0.0, "word_penalty": 0.0, "phrase_penalty": 0.0, "glue": 0.0,
               "oov": -1.0, "target": -1.0}
    narrow, wide = (Decoder(Grammar.from_frame(frame, ["f1"]), LanguageModel(kenlm_model),
                            weights, DecoderSettings(options_limit=limit, engine=engine))
                    for limit in (1, 4))
    assert [h.text for h in narrow.decode_forest(narrow.forest("casa"), "my abode")] == ["house"]
    assert [h.text for h in wide.decode_forest(wide.forest("casa"), "my abode")][0] == "abode"
    assert [h.text for h in narrow.decode("casa", target="my abode")] == ["abode"]


def test_engines_agree_on_forest_decoding(tmp_path):
    """Pruned forests of a random grammar, re-weighted towards several targets in turn."""
    rng = random.Random(5)
    grammar, model = random_grammar_and_lm(rng, tmp_path)
    sentences = [" ".join(rng.choices(SOURCE_VOCAB + ["oov"], k=rng.randint(6, 14)))
                 for _ in range(4)]
    targets = [" ".join(rng.choices(TARGET_VOCAB, k=8)) for _ in range(3)]
    outputs = {}
    for engine in ENGINES:
        decoder = Decoder(grammar, LanguageModel(model), WEIGHTS[1],
                          DecoderSettings(pop_limit=20, options_limit=6, k=50, engine=engine))
        outputs[engine] = [[(h.text, h.score, h.features)
                            for h in decoder.decode_forest(forest, target)]
                           for forest in map(decoder.forest, sentences) for target in targets]
    assert min(len(nbest) for nbest in outputs["python"]) >= 20
    assert outputs["cython"] == outputs["python"]


def test_forest_of_another_decoder_is_refused(grammar, kenlm_model):
    one, other = (Decoder(grammar, LanguageModel(kenlm_model), weights) for weights in WEIGHTS)
    with pytest.raises(ValueError, match="another decoder"):
        other.decode_forest(one.forest(SENTENCES[0]), "the house")


def test_a_forest_kbest_list_is_read_before_the_next_reweighting(grammar, kenlm_model):
    """The compiled forest k-best reuses its node states from list to list: a list begun
    before the decoder re-weighted a forest again is refused, not read from another target's
    states."""
    decoder = Decoder(grammar, LanguageModel(kenlm_model), WEIGHTS[0],
                      DecoderSettings(engine="cython"))
    forest = decoder.forest(SENTENCES[0])
    weight = decoder.model.target_weight
    first = decoder._search.retarget(forest.items, forest.base, frozenset({"the"}), weight)
    second = decoder._search.retarget(forest.items, forest.base, frozenset({"house"}), weight)
    assert [d.words for d in second.best(forest.base, 5)] == [
        tuple(h.text.split()) for h in decoder.decode_forest(forest, "house", k=5)]
    with pytest.raises(RuntimeError, match="before the decoder re-weights a forest again"):
        first.best(forest.base, 5)


LABELLED_RULES = [
    ("DT", "la", "the"), ("PRP$", "la", "her"), ("NN", "casa", "house"), ("NN", "casa", "home"),
    ("NP", "la casa", "the house"), ("NP", "la casa", "the home"), ("VBZ", "es", "is"),
    ("POS", "es", "'s"), ("JJ", "pequeña", "small"), ("JJ", "pequeña", "little"),
    ("DT", "el", "the"), ("NN", "perro", "dog"), ("NP", "el perro", "the dog"),
    ("IN", "de", "of"), ("CC", "y", "and"), ("JJ", "grande", "big"),
    ("NP", "grande", "large house"), ("NP", "la [NN,1]", "the [NN,1]"),
    ("NP", "[NN,1] pequeña", "small [NN,1]"), ("NP", "[NP,1] pequeña", "little [NP,1]"),
    ("S", "[NP,1] es [JJ,2]", "[NP,1] is [JJ,2]"), ("S", "[NP,1] es [NP,2]", "[NP,2] [NP,1] is"),
    ("NP", "[NP,1] de [NP,2]", "[NP,2] 's [NP,1]"), ("NP", "[NP,2] y [NP,1]", "[NP,1] and [NP,2]"),
    ("JJ", "muy [JJ,1]", "very [JJ,1]"), ("ADJP", "muy [JJ,1]", "[JJ,1] indeed"),
    ("NP", "el [NN,1] de [NP,2]", "the [NN,1] of [NP,2]"), ("X", "la [X,1] es", "the [X,1] is"),
]
"""The Spanish-English rules of RULES with SAMT-style labels: a source side with two
left-hand sides ('muy [JJ,1]'), nonterminals of several labels, one rule whose nonterminal only
a pass-through word (label X) can fill ('la [X,1] es')."""

_labelled_rng = random.Random(5)
LABELLED_ROWS = [(lhs, source, target, -_labelled_rng.uniform(0.1, 2.0),
                  -_labelled_rng.uniform(0.1, 2.0)) for lhs, source, target in LABELLED_RULES]


@pytest.fixture(scope="module")
def labelled_grammar() -> Grammar:
    frame = pd.DataFrame(LABELLED_ROWS, columns=["lhs", "source", "target", *FEATURES])
    return Grammar.from_frame(frame, FEATURES, labelled=True)


@pytest.mark.parametrize("weights", WEIGHTS, ids=["w0", "w1"])
@pytest.mark.parametrize("sentence", SENTENCES)
@pytest.mark.parametrize("target", [None, "the dog is very small"], ids=["untargeted", "T"])
def test_labelled_search_matches_brute_force(labelled_grammar, kenlm_model, engine, weights,
                                             sentence, target):
    """Labelled chart cells: exactly the outputs whose derivations respect the labels, each
    with its best score; glue rules over every label."""
    decoder = Decoder(labelled_grammar, LanguageModel(kenlm_model), weights,
                      DecoderSettings(**EXHAUSTIVE, engine=engine))
    hypotheses = decoder.decode(sentence, target=target)
    best = brute_force(tuple(sentence.split()), kenlm_model, weights, target,
                       rows=LABELLED_ROWS)
    assert {h.text for h in hypotheses} == set(best)
    for h in hypotheses:
        assert h.score == pytest.approx(best[h.text], abs=1e-9)
        assert h.score == pytest.approx(dot(h.features, weights), abs=1e-9)


def test_labels_restrict_what_a_nonterminal_covers(labelled_grammar, kenlm_model, engine):
    """'[NN,1] pequeña' takes 'casa' (an NN) but not 'la casa' (an NP): 'small the house' is
    out; the unlabelled grammar of the same rules derives it."""
    weights = WEIGHTS[0]
    settings = DecoderSettings(**EXHAUSTIVE, engine=engine)
    labelled = {h.text for h in Decoder(labelled_grammar, LanguageModel(kenlm_model), weights,
                                        settings).decode("la casa pequeña")}
    frame = pd.DataFrame([("X", source.replace("[NN,", "[X,").replace("[NP,", "[X,")
                           .replace("[JJ,", "[X,"), target.replace("[NN,", "[X,")
                           .replace("[NP,", "[X,").replace("[JJ,", "[X,"), *values)
                          for _, source, target, *values in LABELLED_ROWS],
                         columns=["lhs", "source", "target", *FEATURES])
    unlabelled = {h.text for h in Decoder(Grammar.from_frame(frame, FEATURES),
                                          LanguageModel(kenlm_model), weights,
                                          settings).decode("la casa pequeña")}
    assert "the small house" in labelled and "small the house" in unlabelled
    assert "small the house" not in labelled
    assert labelled < unlabelled


@pytest.mark.parametrize("settings", [{"pop_limit": 3, "options_limit": 2, "k": 20},
                                      {"pop_limit": 10, "k": 50}], ids=["pop3", "pop10"])
def test_a_grammar_of_x_decodes_the_same_labelled(grammar, kenlm_model, engine, settings):
    """Hiero's grammar is the labelled grammar whose only label is X: the labelled chart gives
    the same n-best lists, pruned, as Hiero's."""
    frame = pd.DataFrame([("X", *row) for row in GRAMMAR_ROWS],
                         columns=["lhs", "source", "target", *FEATURES])
    as_labelled = Grammar.from_frame(frame, FEATURES, labelled=True)
    for weights in WEIGHTS:
        decoders = [Decoder(g, LanguageModel(kenlm_model), weights,
                            DecoderSettings(**settings, engine=engine))
                    for g in (grammar, as_labelled)]
        for sentence in SENTENCES + [""]:
            hiero, labelled = ([(h.text, h.score, h.features) for h in d.decode(sentence)]
                               for d in decoders)
            assert labelled == hiero


def test_engines_agree_on_a_labelled_grammar(labelled_grammar, kenlm_model):
    cases = list(itertools.product(SENTENCES, [None, "the dog is very small"]))
    outputs = engine_outputs(labelled_grammar, kenlm_model, WEIGHTS[1],
                             {"pop_limit": 3, "options_limit": 2, "k": 20}, cases)
    assert outputs["cython"] == outputs["python"]


def test_an_unlabelled_grammar_refuses_labels():
    frame = pd.DataFrame([("X", "la [NN,1]", "the [NN,1]", -0.1, -0.2)],
                         columns=["lhs", "source", "target", *FEATURES])
    with pytest.raises(circle.decoder.grammar.GrammarError, match=r"\[NN,1\]"):
        Grammar.from_frame(frame, FEATURES)
