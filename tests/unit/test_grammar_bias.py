"""The self-paraphrase bias: the thesis's worked example and distributions that sum to one."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from test_grammar_pivot import RULES, bilingual_frame

from circle.core.schemas import GRAMMAR, PARAPHRASE_GRAMMAR, SELF_PARAPHRASE
from circle.core.tables import read_metadata, read_table, write_table
from circle.grammar.bias import bias_grammar
from circle.grammar.io import GrammarInputError
from circle.grammar.pivot import grammar_parts, pivot_grammar

P_E1 = 0.01


def worked_example(tmp_path):
    """e1 has p(e1|e1) = 0.05: p(e2|e1) = 0.6, p(e3|e1) = 0.35 (thesis §5.2.2)."""
    rules = pd.DataFrame({
        "lhs": "X",
        "source": ["e1", "e1", "e2", "e3"], "target": ["e2", "e3", "e1", "e1"],
        "log_p_e2_given_e1": [math.log(p) for p in (0.6, 0.35, 0.8, 0.5)],
        "log_p_e1_given_e2": [math.log(p) for p in (0.8, 0.5, 0.6, 0.35)],
        "log_p_e1_e2": [math.log(p) for p in (0.006, 0.0035, 0.006, 0.0035)],
        "neg_target_terminals": -1.0, "log_lex_e2_given_e1": -2.0, "log_lex_e1_given_e2": -3.0,
        "count": 1.0, "pivots": 1,
    })
    phrases = pd.DataFrame({
        "lhs": "X", "phrase": ["e1", "e2", "e3"], "residual": [0.05, 0.2, 0.5],
        "log_p_phrase": [math.log(P_E1), math.log(0.0075), math.log(0.007)],
        "log_lex_identity": -1.5, "count": 2.0, "pivots": 3,
    })
    write_table(rules, tmp_path / "para.parquet", PARAPHRASE_GRAMMAR, metadata={"bias": "0"})
    write_table(phrases, tmp_path / "self.parquet", SELF_PARAPHRASE)
    return [tmp_path / "para.parquet"], tmp_path / "self.parquet"


def test_thesis_worked_example(tmp_path):
    grammar, phrases = worked_example(tmp_path)
    bias_grammar(grammar, phrases, tmp_path / "biased.parquet", 0.5)
    biased = read_table(tmp_path / "biased.parquet", PARAPHRASE_GRAMMAR)
    rows = biased.set_index(["source", "target"]).map(
        lambda v: math.exp(v) if isinstance(v, float) else v)
    # eq. 5.3: the self-paraphrase probability 0.05 is scaled by 10 to the bias 0.5
    assert rows.loc[("e1", "e1"), "log_p_e2_given_e1"] == pytest.approx(0.05 * 10)
    # eq. 5.6: the other paraphrases by 0.5 / 0.95
    assert rows.loc[("e1", "e2"), "log_p_e2_given_e1"] == pytest.approx(0.6 * 0.5 / 0.95)
    assert rows.loc[("e1", "e3"), "log_p_e2_given_e1"] == pytest.approx(0.35 * 0.5 / 0.95)
    # eq. 5.8-5.9: p'(e1) = p(e1) 0.95 / 0.5, p'(e1, e1) = p(e1, e1) 0.95 / 0.05
    p_identity_joint = 0.05 * P_E1
    assert rows.loc[("e1", "e1"), "log_p_e1_e2"] == pytest.approx(
        p_identity_joint * 0.95 / 0.05)
    assert rows.loc[("e1", "e1"), "log_p_e1_e2"] / 0.5 == pytest.approx(P_E1 * 0.95 / 0.5)
    # eq. 5.10: the joint of other pairs is unchanged
    assert rows.loc[("e1", "e2"), "log_p_e1_e2"] == pytest.approx(0.006)
    # reverse conditional p(e1|e2) is e2's conditional, rescaled with e2's residual 0.2
    assert rows.loc[("e1", "e2"), "log_p_e1_given_e2"] == pytest.approx(0.8 * 0.5 / 0.8)
    assert rows.loc[("e1", "e1"), "log_p_e1_given_e2"] == pytest.approx(0.5)
    # identity rules: length and lexical features from the self-paraphrase table
    assert biased.set_index(["source", "target"]).loc[("e1", "e1"), "neg_target_terminals"] == -1
    assert biased.set_index(["source", "target"]).loc[("e1", "e1"), "log_lex_e2_given_e1"] == -1.5
    for source, group in biased.groupby("source"):
        assert group["log_p_e2_given_e1"].map(math.exp).sum() == pytest.approx(1.0), source
    assert read_metadata(tmp_path / "biased.parquet")["bias"] == "0.5"


@pytest.mark.parametrize("bias", [0.05, 0.25, 0.5])
@pytest.mark.parametrize("keep_identity", [False, True])
def test_biased_pivot_grammar_is_normalised_both_ways(tmp_path, bias, keep_identity):
    write_table(bilingual_frame(), tmp_path / "grammar.parquet", GRAMMAR)
    pivot_grammar(tmp_path / "grammar.parquet", tmp_path / "para", tmp_path / "self.parquet",
                  jobs=2, keep_identity=keep_identity)
    bias_grammar(grammar_parts(tmp_path / "para", 2), tmp_path / "self.parquet",
                 tmp_path / "biased.parquet", bias)
    biased = read_table(tmp_path / "biased.parquet", PARAPHRASE_GRAMMAR)
    forward = biased.groupby("source")["log_p_e2_given_e1"].apply(
        lambda v: v.map(math.exp).sum())
    assert forward.tolist() == pytest.approx([1.0] * len(forward))
    canonical_target = biased["target"].map(
        lambda t: t.replace("[X,1]", "#").replace("[X,2]", "[X,1]").replace("#", "[X,2]")
        if t.find("[X,2]") >= 0 and t.find("[X,2]") < t.find("[X,1]") else t)
    reverse = biased.assign(e2=canonical_target).groupby("e2")["log_p_e1_given_e2"].apply(
        lambda v: v.map(math.exp).sum())
    assert reverse.tolist() == pytest.approx([1.0] * len(reverse))
    identities = biased[biased["source"] == biased["target"]]
    assert set(identities["source"]) == set(biased["source"])
    assert identities["log_p_e2_given_e1"].map(math.exp).tolist() == pytest.approx(
        [bias] * len(identities))
    # eq. 3.13 still holds: p'(e1, e2) = p'(e2|e1) p'(e1) = p'(e1|e2) p'(e2)
    p_prime = dict(zip(identities["source"], identities["log_p_e1_e2"]
                       - identities["log_p_e2_given_e1"], strict=True))
    for row in biased.itertuples():
        assert row.log_p_e1_e2 == pytest.approx(row.log_p_e2_given_e1 + p_prime[row.source])


def test_bias_zero_is_the_unbiased_grammar_sorted(tmp_path, read_pivoted):
    write_table(bilingual_frame(), tmp_path / "grammar.parquet", GRAMMAR)
    pivot_grammar(tmp_path / "grammar.parquet", tmp_path / "para", tmp_path / "self.parquet",
                  jobs=2, keep_identity=True)
    pivot_grammar(tmp_path / "grammar.parquet", tmp_path / "plain", tmp_path / "self.parquet")
    bias_grammar(grammar_parts(tmp_path / "para", 2), tmp_path / "self.parquet",
                 tmp_path / "zero.parquet", 0.0)
    zero = read_table(tmp_path / "zero.parquet", PARAPHRASE_GRAMMAR)
    pd.testing.assert_frame_equal(zero, read_pivoted(tmp_path / "plain"))
    assert len(RULES) and not (zero["source"] == zero["target"]).any()


def test_bad_bias_and_inputs(tmp_path):
    grammar, phrases = worked_example(tmp_path)
    with pytest.raises(ValueError, match=r"must be in \[0, 1\)"):
        bias_grammar(grammar, phrases, tmp_path / "b.parquet", 1.0)
    bias_grammar(grammar, phrases, tmp_path / "b.parquet", 0.25)
    with pytest.raises(GrammarInputError, match="already biased"):
        bias_grammar([tmp_path / "b.parquet"], phrases, tmp_path / "c.parquet", 0.25)
    partial = read_table(phrases, SELF_PARAPHRASE).iloc[:2]
    write_table(partial, tmp_path / "partial.parquet", SELF_PARAPHRASE)
    with pytest.raises(GrammarInputError, match="no residual for 2 rule"):
        bias_grammar(grammar, tmp_path / "partial.parquet", tmp_path / "d.parquet", 0.25)
