"""φ_ident (Ganitkevitch & Callison-Burch, draft §4.1) on the biased paraphrase grammars: which
rules it marks, that it changes nothing else, how the decoder scores it and that MERT tunes it."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from test_decoder_search import write_arpa
from test_grammar_pivot import bilingual_frame

from circle.core.schemas import (
    EVALSET,
    GRAMMAR,
    IDENTITY_FEATURE,
    PARAPHRASE_GRAMMAR,
    PARAPHRASE_GRAMMAR_IDENT,
    PARAPHRASE_GRAMMAR_LEX,
    PARAPHRASE_GRAMMAR_LEX_IDENT,
    SELF_PARAPHRASE,
    TUNING_LOG,
)
from circle.core.tables import read_metadata, read_table, write_table
from circle.decoder import DecoderSettings, decode_corpus, load_grammar, read_weights, write_weights
from circle.grammar.bias import bias_grammar
from circle.grammar.pivot import grammar_parts, pivot_grammar
from circle.paraphrase.untargeted import tune_paraphraser
from circle.tune.loop import TUNING_FIXED, TuningSettings, tune
from circle.tune.mert import MertSettings

UNTUNED = {"log_p_e2_given_e1": 0.3, "log_p_e1_given_e2": 0.3, "log_p_e1_e2": 0.1,
           "neg_target_terminals": 0.0, "lm": 0.5, "word_penalty": -0.5, "phrase_penalty": 0.0,
           "glue": 0.0, "oov": -10.0}
"""The config schema's untuned paraphraser weights, which do not name ``identity``."""

PARAPHRASES = [("house", "home"), ("big", "large"), ("dog", "hound"), ("small", "little")]
"""Hand-built one-word paraphrases, each in both directions."""


def hand_built(tmp_path, leftover_identity: bool = True):
    """An unbiased grammar: the PARAPHRASES both ways, a nonterminal swap whose target is its
    source renumbered, and (``leftover_identity``) an identity rule a ``keep_identity`` pivot
    would leave; with its self-paraphrase table."""
    rules = [(e1, e2) for pair in PARAPHRASES for e1, e2 in (pair, pair[::-1])]
    rules.append(("[X,1] of [X,2]", "[X,2] of [X,1]"))
    if leftover_identity:
        rules.append(("house", "house"))
    frame = pd.DataFrame({
        "lhs": "X", "source": [e1 for e1, _ in rules], "target": [e2 for _, e2 in rules],
        "log_p_e2_given_e1": math.log(0.6), "log_p_e1_given_e2": math.log(0.6),
        "log_p_e1_e2": math.log(0.006), "neg_target_terminals": -1.0,
        "log_lex_e2_given_e1": -2.0, "log_lex_e1_given_e2": -2.0, "count": 1.0, "pivots": 1})
    phrases = sorted({e1 for e1, _ in rules})
    self_paraphrase = pd.DataFrame({
        "lhs": "X", "phrase": phrases, "residual": 0.4, "log_p_phrase": math.log(0.01),
        "log_lex_identity": -1.0, "count": 2.0, "pivots": 1})
    write_table(frame, tmp_path / "para.parquet", PARAPHRASE_GRAMMAR, metadata={"bias": "0"})
    write_table(self_paraphrase, tmp_path / "self.parquet", SELF_PARAPHRASE)
    return [tmp_path / "para.parquet"], tmp_path / "self.parquet"


def test_phi_ident_is_one_exactly_on_the_identity_rules_the_bias_adds(tmp_path):
    parts, phrases = hand_built(tmp_path)
    bias_grammar(parts, phrases, tmp_path / "ident.parquet", 0.5, identity_feature=True)
    grammar = read_table(tmp_path / "ident.parquet", PARAPHRASE_GRAMMAR_IDENT)
    marked = dict(zip(zip(grammar["source"], grammar["target"], strict=True),
                      grammar[IDENTITY_FEATURE], strict=True))
    words = [word for pair in PARAPHRASES for word in pair]
    expected = {(e1, e2): 0.0 for pair in PARAPHRASES for e1, e2 in (pair, pair[::-1])}
    expected |= {(word, word): 1.0 for word in words}  # the bias's p'(e1|e1) = b rules
    expected |= {("[X,1] of [X,2]", "[X,2] of [X,1]"): 0.0,  # a swap is no identity
                 ("[X,1] of [X,2]", "[X,1] of [X,2]"): 1.0}
    assert marked == expected  # the leftover house -> house is replaced by the bias's, once
    identity = grammar[grammar[IDENTITY_FEATURE] == 1.0]
    assert np.allclose(identity["log_p_e2_given_e1"], math.log(0.5))
    assert PARAPHRASE_GRAMMAR_IDENT.features[-1] == IDENTITY_FEATURE


def test_at_bias_zero_there_is_no_identity_rule_to_mark(tmp_path):
    parts, phrases = hand_built(tmp_path)
    bias_grammar(parts, phrases, tmp_path / "ident.parquet", 0.0, identity_feature=True)
    grammar = read_table(tmp_path / "ident.parquet", PARAPHRASE_GRAMMAR_IDENT)
    assert len(grammar) == 2 * len(PARAPHRASES) + 1 and (grammar[IDENTITY_FEATURE] == 0).all()


@pytest.mark.parametrize("bias", [0.0, 0.05, 0.5])
@pytest.mark.parametrize("lexical", [False, True])
def test_the_feature_leaves_every_rule_and_other_column_as_it_was(tmp_path, bias, lexical):
    write_table(bilingual_frame(), tmp_path / "grammar.parquet", GRAMMAR)
    pivot_grammar(tmp_path / "grammar.parquet", tmp_path / "para", tmp_path / "self.parquet",
                  jobs=2, lexical_feature=lexical)
    parts = grammar_parts(tmp_path / "para", 2)
    for name, switch in (("off", False), ("on", True), ("default", None)):
        options = {} if switch is None else {"identity_feature": switch}
        bias_grammar(parts, tmp_path / "self.parquet", tmp_path / f"{name}.parquet", bias,
                     provenance={"rule": "bias_grammar"}, **options)
    plain, with_ident = ((PARAPHRASE_GRAMMAR_LEX, PARAPHRASE_GRAMMAR_LEX_IDENT) if lexical
                         else (PARAPHRASE_GRAMMAR, PARAPHRASE_GRAMMAR_IDENT))
    off, on = read_table(tmp_path / "off.parquet", plain), read_table(tmp_path / "on.parquet",
                                                                      with_ident)
    assert on[IDENTITY_FEATURE].tolist() == (on["source"] == on["target"]).astype(float).tolist()
    assert (on[IDENTITY_FEATURE] == 1).any() == (bias > 0) and (on[IDENTITY_FEATURE] == 0).any()
    pd.testing.assert_frame_equal(on.drop(columns=IDENTITY_FEATURE), off)
    assert pq.read_schema(tmp_path / "off.parquet").remove_metadata() == plain.arrow
    assert read_metadata(tmp_path / "on.parquet") == {
        **read_metadata(tmp_path / "off.parquet"), "schema": with_ident.name}
    # the switch is off by default: the same bytes as without it
    assert (tmp_path / "default.parquet").read_bytes() == (tmp_path / "off.parquet").read_bytes()


SENTENCES = ["the house is big", "the dog is small", "a big dog", "the small house",
             "the house of the dog is big", "a small dog is big"]


def paraphrased(sentence: str) -> str:
    """The sentence with every word of PARAPHRASES replaced by its paraphrase."""
    table = dict(PARAPHRASES)
    return " ".join(table.get(word, word) for word in sentence.split())


@pytest.fixture
def lm_path(tmp_path):
    """A bigram LM of the sentences and their paraphrases, each once."""
    path = tmp_path / "lm.arpa"
    write_arpa(path, SENTENCES + [paraphrased(s) for s in SENTENCES], 2)
    return path


def test_the_decoder_reads_phi_ident_and_its_weight_flips_the_1best(tmp_path, lm_path):
    parts, phrases = hand_built(tmp_path)
    bias_grammar(parts, phrases, tmp_path / "ident.parquet", 0.5, identity_feature=True)
    grammar = load_grammar(tmp_path / "ident.parquet")
    assert grammar.feature_names == PARAPHRASE_GRAMMAR_IDENT.features
    sentence = "the house is big"
    best = {}
    for weight in (-3.0, 3.0):
        hypotheses, = decode_corpus([sentence], grammar, lm_path,
                                    {**UNTUNED, IDENTITY_FEATURE: weight}, DecoderSettings(k=5))
        best[weight] = hypotheses[0]
        for hypothesis in hypotheses:  # one per identity rule used; 'the', 'is' pass through
            copied = sum(a == b for a, b in zip(sentence.split(), hypothesis.text.split(),
                                                strict=True) if a in ("house", "big"))
            assert hypothesis.features[IDENTITY_FEATURE] == copied
    assert best[3.0].text == sentence and best[-3.0].text == paraphrased(sentence)
    neutral, = decode_corpus([sentence], grammar, lm_path, UNTUNED, DecoderSettings(k=5))
    scores = {h.text: h.score for h in neutral}  # a weight left out is 0: φ_ident adds nothing
    assert scores[sentence] == pytest.approx(best[3.0].score - 3.0 * 2)


@pytest.mark.parametrize("references, sign", [("copies", 1), ("paraphrases", -1)])
def test_mert_tunes_phi_ident_from_zero_towards_what_the_references_do(tmp_path, lm_path,
                                                                       references, sign):
    """Identity and non-identity rules tie on every other feature but p(e2|e1), which favours
    the 1-best the references do not want; only the sign of φ_ident's weight can fix it."""
    rows = []
    for e1, e2 in PARAPHRASES:
        for target, identity in ((e1, 1.0), (e2, 0.0)):
            favoured = (identity == 1.0) == (references == "paraphrases")
            rows.append(("X", e1, target, -0.5 + (0.1 if favoured else 0.0), -0.5, -5.0,
                         -1.0, -1.0, -1.0, 1.0, 1, identity))
    for function_word in ("the", "is", "a", "of"):
        rows.append(("X", function_word, function_word, -0.5, -0.5, -5.0, -1.0, -1.0, -1.0,
                     1.0, 1, 1.0))
    columns = [field.name for field in PARAPHRASE_GRAMMAR_IDENT.arrow]
    write_table(pd.DataFrame(rows, columns=columns), tmp_path / "g.parquet",
                PARAPHRASE_GRAMMAR_IDENT)
    wanted = SENTENCES if references == "copies" else [paraphrased(s) for s in SENTENCES]
    settings = TuningSettings(max_iterations=5, seed=0, mert=MertSettings(restarts=5))
    result = tune(SENTENCES, [[r] for r in wanted], load_grammar(tmp_path / "g.parquet"),
                  lm_path, UNTUNED, DecoderSettings(k=10), settings, fixed=TUNING_FIXED)
    start = dict(zip(result.feature_names, result.log[0].weights, strict=True))
    assert start[IDENTITY_FEATURE] == 0.0  # φ_ident starts neutral
    assert result.log[0].decode_score < 0.5
    assert np.sign(result.weights[IDENTITY_FEATURE]) == sign
    best = decode_corpus(SENTENCES, load_grammar(tmp_path / "g.parquet"), lm_path,
                         result.weights, DecoderSettings(k=1))
    assert [hypotheses[0].text for hypotheses in best] == wanted


@pytest.mark.parametrize("bias", [0.0, 0.25])
def test_the_paraphrasers_mert_tunes_phi_ident_only_where_identity_rules_exist(tmp_path, lm_path,
                                                                                bias):
    """Paraphraser tuning as the workflow runs it, the references copying the input: at bias
    0.25 every other feature prefers the paraphrase (p'(e1|e1) = 0.25 against 0.75), so MERT
    copies by raising φ_ident's weight from 0; at bias 0 no rule has φ_ident, and its weight
    stays 0 instead of drifting onto the biased grammars the tuned paraphraser also decodes."""
    parts, phrases = hand_built(tmp_path)
    bias_grammar(parts, phrases, tmp_path / "ident.parquet", bias, identity_feature=True)
    paratune = pd.DataFrame({"segment_id": range(len(SENTENCES)), "document": "d",
                             "source": "-", "references": [[s, s] for s in SENTENCES],
                             "ref_order": [[0, 1]] * len(SENTENCES)})
    write_table(paratune, tmp_path / "paratune.parquet", EVALSET)
    write_weights(tmp_path / "untuned.txt", UNTUNED)
    settings = TuningSettings(max_iterations=3, seed=0, mert=MertSettings(restarts=5))
    tune_paraphraser(tmp_path / "paratune.parquet", tmp_path / "ident.parquet", lm_path,
                     tmp_path / "untuned.txt", DecoderSettings(k=10), settings, 1,
                     tmp_path / "tuned.txt", tmp_path / "log.parquet")
    tuned = read_weights(tmp_path / "tuned.txt")[IDENTITY_FEATURE]
    fixed = json.loads(read_metadata(tmp_path / "log.parquet")["fixed_features"])
    scores = read_table(tmp_path / "log.parquet", TUNING_LOG)["decode_score"]
    if bias:
        assert fixed == list(TUNING_FIXED) and tuned > 0.01
        assert scores.iloc[0] < 0.5 and scores.max() == pytest.approx(1.0)
    else:
        assert fixed == [*TUNING_FIXED, IDENTITY_FEATURE] and tuned == 0.0
