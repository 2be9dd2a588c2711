"""circle.evaluate: sacrebleu corpus scores with signatures, paired bootstrap resampling."""

from __future__ import annotations

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, TER

from circle.evaluate import (
    bootstrap_p_value,
    corpus_bleu,
    corpus_ter,
    evaluate_system,
    paired_bootstrap,
    reference_streams,
    write_evaluation,
)
from circle.metrics import bleu_from_stats, bleu_stats
from circle.schemas import EVALUATION
from circle.tables import read_table

VOCAB = "the a cat dog sat on mat rug and big small".split()


def corpus(seed: int, n: int = 200, refs: int = 2):
    rng = np.random.default_rng(seed)
    references = [[" ".join(rng.choice(VOCAB, size=rng.integers(6, 12))) for _ in range(refs)]
                  for _ in range(n)]
    return rng, references


def degrade(rng, sentence: str, rate: float) -> str:
    """Replace each word by a random one with probability ``rate``."""
    return " ".join(w if rng.random() > rate else str(rng.choice(VOCAB))
                    for w in sentence.split())


def test_corpus_scores_equal_sacrebleu_and_carry_signatures():
    rng, references = corpus(0)
    hypotheses = [degrade(rng, refs[0], 0.4) for refs in references]
    streams = [[r[k] for r in references] for k in range(2)]
    bleu, ter = corpus_bleu(hypotheses, references), corpus_ter(hypotheses, references)
    assert bleu.value == BLEU(tokenize="none").corpus_score(hypotheses, streams).score
    assert ter.value == TER().corpus_score(hypotheses, streams).score
    assert 10 < bleu.value < 90 and 10 < ter.value < 90  # percent
    assert "nrefs:2" in bleu.signature and "tok:none" in bleu.signature
    assert "version:" in bleu.signature and "nrefs:2" in ter.signature


def test_variable_reference_counts():
    references = [["a b c d"], ["x y z", "x y w"]]
    assert reference_streams(references) == [["a b c d", "x y z"], [None, "x y w"]]
    bleu = corpus_bleu(["a b c d", "x y w"], references)
    assert bleu.value == pytest.approx(100.0) and "nrefs:var" in bleu.signature
    with pytest.raises(ValueError, match="hypotheses"):
        corpus_bleu(["a"], references)
    with pytest.raises(ValueError, match="list of reference strings"):
        corpus_ter(["a", "b"], ["a", "b"])


def test_bootstrap_detects_a_clearly_better_system():
    rng, references = corpus(1)
    worse = [degrade(rng, refs[0], 0.6) for refs in references]
    better = [degrade(rng, refs[0], 0.2) for refs in references]
    assert bootstrap_p_value(worse, better, references) < 0.001
    assert bootstrap_p_value(better, worse, references) > 0.999
    assert bootstrap_p_value(worse, better, references, metric="ter", samples=300) < 0.001


def test_identical_systems_get_one_half():
    rng, references = corpus(2)
    system = [degrade(rng, refs[0], 0.4) for refs in references]
    assert bootstrap_p_value(system, list(system), references) == 0.5


def test_exchangeable_systems_are_not_significant():
    rng, references = corpus(3, n=400)
    good = [degrade(rng, refs[0], 0.2) for refs in references]
    bad = [degrade(rng, refs[0], 0.6) for refs in references]
    a = [g if i % 2 else b for i, (g, b) in enumerate(zip(good, bad, strict=True))]
    b = [b if i % 2 else g for i, (g, b) in enumerate(zip(good, bad, strict=True))]
    assert 0.05 < bootstrap_p_value(a, b, references) < 0.95


def naive_bootstrap(stats_a, stats_b, samples, seed):
    """Koehn (2004) literally: resample segment indices, compare corpus BLEU per resample."""
    rng = np.random.default_rng(seed)
    n, score = len(stats_a), 0.0
    for _ in range(samples):
        index = rng.integers(0, n, n)
        a, b = bleu_from_stats(stats_a[index].sum(0)), bleu_from_stats(stats_b[index].sum(0))
        score += 1.0 if b < a else 0.5 if b == a else 0.0
    return score / samples


def test_bootstrap_agrees_with_a_naive_implementation():
    rng, references = corpus(4, n=150)
    a = [degrade(rng, refs[0], 0.40) for refs in references]
    b = [degrade(rng, refs[0], 0.38) for refs in references]
    stats_a, stats_b = bleu_stats(a, references), bleu_stats(b, references)
    fast = paired_bootstrap(stats_a, stats_b, samples=2000, seed=5)
    assert 0.02 < fast < 0.98  # a close call, so the comparison means something
    assert fast == pytest.approx(naive_bootstrap(stats_a, stats_b, 2000, 6), abs=0.04)


def test_bootstrap_is_seeded_and_checks_shapes():
    rng, references = corpus(5, n=100)
    a = bleu_stats([degrade(rng, r[0], 0.4) for r in references], references)
    b = bleu_stats([degrade(rng, r[0], 0.4) for r in references], references)
    assert paired_bootstrap(a, b, seed=1) == paired_bootstrap(a, b, seed=1)
    assert paired_bootstrap(a, b, samples=10, seed=1) in {i / 20 for i in range(21)}
    with pytest.raises(ValueError, match="shapes"):
        paired_bootstrap(a, b[:-1])
    with pytest.raises(ValueError, match="shapes"):
        paired_bootstrap(a, b, metric="ter")


def test_evaluate_system_and_table_round_trip(tmp_path):
    rng, references = corpus(6, n=50, refs=4)
    baseline = [degrade(rng, r[0], 0.5) for r in references]
    system = [degrade(rng, r[0], 0.1) for r in references]
    scores = evaluate_system(system, references, baseline, samples=200, seed=3)
    assert scores["bleu"] == corpus_bleu(system, references).value
    assert scores["ter"] == corpus_ter(system, references).value
    assert scores["p_value_vs_baseline"] < 0.01 and scores["bootstrap_samples"] == 200
    assert (scores["segments"], scores["eval_references"]) == (50, 4)
    base_scores = evaluate_system(baseline, references)
    assert base_scores["p_value_vs_baseline"] is None
    common = {"experiment": "default", "replicate": 0, "seed": 1, "tune_metric": "bleu",
              "tune_iterations": 5, "eval_set": "test", "reference_type": "human"}
    rows = [{**common, **base_scores, "condition": "1H", "human_references": 1,
             "paraphrase_references": 0, "references_used": 1, "baseline_condition": None},
            {**common, **scores, "condition": "2H", "human_references": 2,
             "paraphrase_references": 0, "references_used": 2, "baseline_condition": "1H"}]
    path = tmp_path / "evaluation.parquet"
    write_evaluation(rows, path)
    table = read_table(path, EVALUATION)
    assert table["condition"].tolist() == ["1H", "2H"]
    assert np.isnan(table["p_value_vs_baseline"][0])
    assert table["p_value_vs_baseline"][1] == scores["p_value_vs_baseline"]
    assert table["bootstrap_samples"].isna().tolist() == [True, False]
    assert table["bleu_signature"][1].startswith("nrefs:4")
