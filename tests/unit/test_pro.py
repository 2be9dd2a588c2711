"""circle.tune.pro: BLEU+1 by hand, weight recovery, bounds, determinism, interpolation."""

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from circle.tune.mert import flat_pool, score_weights
from circle.tune.metrics import get_metric
from circle.tune.pro import (
    ProSettings,
    bleu_plus_one,
    fit_ranker,
    pro_optimise,
    ranking_objective,
    sample_pairs,
    sentence_scores,
)

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny"
BLEU = get_metric("bleu")
FAST = ProSettings(candidates=500)  # fewer candidate pairs keep the tests quick


def references(n_segments=10):
    ref0 = (TINY / "tune.ref0.txt").read_text(encoding="utf-8").lower().splitlines()
    ref1 = (TINY / "tune.ref1.txt").read_text(encoding="utf-8").lower().splitlines()
    return list(zip(ref0, ref1, strict=True))[:n_segments]


def corrupted_pool(sign=1.0, seed=0, n_segments=10):
    """Per segment, hypotheses made by dropping ever more words of ref0 (scored against both
    references); feature 0 is ``sign`` * the hypothesis' BLEU+1, feature 1 is noise."""
    rng = np.random.default_rng(seed)
    features, stats = [], []
    for refs in references(n_segments):
        words = refs[0].split()
        hyps = []
        for drop in (0.0, 0.1, 0.2, 0.3, 0.45, 0.6, 0.75):
            keep = rng.random(len(words)) >= drop
            keep[0] = True
            hyps.append(" ".join(w for w, k in zip(words, keep, strict=True) if k))
        s = BLEU.stats(hyps, [list(refs)] * len(hyps))
        noise = rng.normal(size=len(hyps))
        features.append(np.column_stack([sign * bleu_plus_one(s), noise]))
        stats.append(s)
    return flat_pool(features, stats)


def test_bleu_plus_one_by_hand():
    rows = np.array([
        [3, 1, 0, 0, 5, 4, 3, 2, 5, 6],  # shorter than its reference: brevity penalty
        [4, 3, 2, 1, 4, 3, 2, 1, 4, 3],  # perfect n-gram precision, longer than the reference
        [0, 0, 0, 0, 3, 2, 1, 0, 3, 4],  # no unigram match
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 5],  # empty hypothesis
    ])
    p = [3 / 5, 2 / 5, 1 / 4, 1 / 3]
    first = math.exp(sum(map(math.log, p)) / 4 + (1 - 6 / 5))
    second = 1.0  # (4/4 * 4/4 * 3/3 * 2/2) ** (1/4), no brevity penalty
    np.testing.assert_allclose(sentence_scores(BLEU, rows), [first, second, 0.0, 0.0])
    # Moses' variant also smooths unigrams
    p_moses = [4 / 6] + p[1:]
    np.testing.assert_allclose(bleu_plus_one(rows[0], smooth_unigrams=True),
                               math.exp(sum(map(math.log, p_moses)) / 4 + (1 - 6 / 5)))


def test_bleu_plus_one_of_real_statistics():
    hyp, ref = "the cat sat on a mat", "the cat sat on the mat"
    row = BLEU.stats([hyp], [[ref]])
    # matches: 5/6 unigrams, 3/5 bigrams, 2/4 trigrams, 1/3 4-grams; equal lengths
    np.testing.assert_array_equal(row[0, :4], [5, 3, 2, 1])
    expected = math.exp((math.log(5 / 6) + math.log(4 / 6) + math.log(3 / 5)
                         + math.log(2 / 4)) / 4)
    np.testing.assert_allclose(sentence_scores(BLEU, row), [expected])


def test_ter_and_terbleu_sentence_scores():
    np.testing.assert_allclose(sentence_scores(get_metric("ter"), np.array([[2, 10], [0, 5]])),
                               [-0.2, 0.0])
    bleu_row = [4, 3, 2, 1, 4, 3, 2, 1, 4, 3]  # BLEU+1 = 1
    rows = np.array([bleu_row + [2, 10], [0] * 8 + [0, 5] + [5, 5]], dtype=float)
    np.testing.assert_allclose(sentence_scores(get_metric("terbleu"), rows),
                               [-(0.5 * 0.2 + 0.5 * 0.0), -(0.5 * 1.0 + 0.5 * 1.0)])
    with pytest.raises(ValueError, match="statistics per row"):
        sentence_scores(get_metric("ter"), np.zeros((2, 10)))


def test_pro_finds_the_predictive_feature():
    pool = corrupted_pool()
    start = np.array([0.05, 1.0])
    lower, upper = np.full(2, -np.inf), np.full(2, np.inf)
    start_score = score_weights(pool, BLEU, start)
    weights, score = pro_optimise(pool, BLEU, start, lower, upper,
                                  replace(FAST, interpolation=1.0), np.random.default_rng(1))
    assert weights[0] > 0.9 * np.abs(weights).sum()  # the noise feature gets little weight
    assert score == score_weights(pool, BLEU, weights)
    assert score > start_score + 0.05
    # the default interpolation moves a tenth of the way towards that solution
    weights, score = pro_optimise(pool, BLEU, start, lower, upper, FAST,
                                  np.random.default_rng(1))
    assert weights[0] > start[0] + 0.05 and weights[1] < start[1] - 0.05


def test_pro_works_with_ter():
    rng = np.random.default_rng(3)
    features, stats = [], []
    for _ in range(6):
        edits = rng.integers(0, 10, size=8).astype(float)
        stats.append(np.column_stack([edits, np.full(8, 10.0)]))
        features.append(np.column_stack([-edits, rng.normal(size=8)]))
    pool = flat_pool(features, stats)
    ter = get_metric("ter")
    weights, score = pro_optimise(pool, ter, np.array([0.0, 1.0]), np.full(2, -np.inf),
                                  np.full(2, np.inf), replace(FAST, interpolation=1.0),
                                  np.random.default_rng(0))
    assert weights[0] > 0 and score == pytest.approx(-ter.value(
        np.vstack([s[np.argmin(s[:, 0])] for s in stats]).sum(axis=0)))


def test_bounds_are_respected():
    pool = corrupted_pool(sign=-1.0)  # feature 0 is minus BLEU+1: the optimum weights it < 0
    start = np.array([0.5, 0.5])
    free = (np.full(2, -np.inf), np.full(2, np.inf))
    settings = replace(FAST, interpolation=1.0)
    unbounded, _ = pro_optimise(pool, BLEU, start, *free, settings, np.random.default_rng(0))
    assert unbounded[0] < 0
    lower = np.array([0.0, -np.inf])
    for psi in (1.0, 0.1):
        weights, _ = pro_optimise(pool, BLEU, start, lower, free[1],
                                  replace(settings, interpolation=psi), np.random.default_rng(0))
        assert weights[0] >= 0
    # the bounded classifier solution satisfies the KKT conditions of its box
    scores = sentence_scores(BLEU, pool.stats)
    better, worse = sample_pairs(pool, scores, settings, np.random.default_rng(0))
    x = pool.features[better] - pool.features[worse]
    w = fit_ranker(x, lower, free[1], settings)
    margins = x @ w
    gradient = -2.0 * x.T @ (1.0 / (1.0 + np.exp(margins))) + settings.l2 * w
    assert w[0] == 0.0 and gradient[0] > 0
    assert abs(gradient[1]) < 1e-6 * (1 + np.abs(x).sum())
    # an upper bound holds too (the good feature would otherwise get a large weight)
    x_good = -x
    w_up = fit_ranker(x_good, free[0], np.array([0.5, np.inf]), settings)
    assert w_up[0] == 0.5
    assert fit_ranker(x_good, *free, settings)[0] > 0.5


def test_fit_ranker_minimises_the_objective():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(200, 3)) + [1.0, 0.0, -0.5]
    settings = ProSettings()
    w = fit_ranker(x, np.full(3, -np.inf), np.full(3, np.inf), settings)
    best = ranking_objective(x, w, settings.l2)
    for _ in range(20):
        other = w + rng.normal(scale=1e-3, size=3)
        assert ranking_objective(x, other, settings.l2) >= best


def test_same_seed_same_weights_other_seed_other_samples():
    pool = corrupted_pool()
    args = (pool, BLEU, np.array([0.05, 1.0]), np.full(2, -np.inf), np.full(2, np.inf), FAST)
    first, score1 = pro_optimise(*args, np.random.default_rng(7))
    second, score2 = pro_optimise(*args, np.random.default_rng(7))
    np.testing.assert_array_equal(first, second)
    assert score1 == score2
    scores = sentence_scores(BLEU, pool.stats)
    a = sample_pairs(pool, scores, FAST, np.random.default_rng(7))
    b = sample_pairs(pool, scores, FAST, np.random.default_rng(8))
    assert len(a[0]) != len(b[0]) or not np.array_equal(np.stack(a), np.stack(b))


def test_sampled_pairs_follow_the_sampler():
    pool = corrupted_pool()
    scores = sentence_scores(BLEU, pool.stats)
    settings = replace(FAST, samples=5)
    better, worse = sample_pairs(pool, scores, settings, np.random.default_rng(0))
    assert np.all(pool.segment[better] == pool.segment[worse])
    gaps = scores[better] - scores[worse]
    assert np.all(gaps >= settings.min_difference)
    counts = np.bincount(pool.segment[better], minlength=len(pool.starts))
    assert np.all(counts == 5)
    # within a segment the kept pairs come in decreasing order of their score difference
    for k in range(len(pool.starts)):
        g = gaps[pool.segment[better] == k]
        assert np.all(np.diff(g) <= 0)


def test_flat_pool_returns_start():
    row = BLEU.stats(["the cat sat"], [["the cat sat on the mat"]])[0]
    rng = np.random.default_rng(0)
    pool = flat_pool([rng.normal(size=(4, 2)) for _ in range(3)], [np.tile(row, (4, 1))] * 3)
    start = np.array([0.3, -0.7])
    weights, score = pro_optimise(pool, BLEU, start, np.full(2, -np.inf), np.full(2, np.inf),
                                  FAST, np.random.default_rng(0))
    np.testing.assert_array_equal(weights, start)
    assert score == score_weights(pool, BLEU, start)


def test_interpolation_extremes():
    pool = corrupted_pool()
    start = np.array([0.2, 0.8])
    bounds = (np.full(2, -np.inf), np.full(2, np.inf))
    full, _ = pro_optimise(pool, BLEU, start, *bounds, replace(FAST, interpolation=1.0),
                           np.random.default_rng(4))
    scores = sentence_scores(BLEU, pool.stats)
    better, worse = sample_pairs(pool, scores, FAST, np.random.default_rng(4))
    w = fit_ranker(pool.features[better] - pool.features[worse], *bounds, FAST)
    np.testing.assert_allclose(full, w * np.abs(start).sum() / np.abs(w).sum())
    assert np.abs(full).sum() == pytest.approx(np.abs(start).sum())
    none, score = pro_optimise(pool, BLEU, start, *bounds, replace(FAST, interpolation=0.0),
                               np.random.default_rng(4))
    np.testing.assert_array_equal(none, start)
    assert score == score_weights(pool, BLEU, start)


def test_rejects_bad_inputs():
    pool = corrupted_pool(n_segments=2)
    bounds = (np.full(2, -np.inf), np.full(2, np.inf))
    with pytest.raises(ValueError, match="start weights"):
        pro_optimise(pool, BLEU, np.ones(3), *bounds, FAST, np.random.default_rng(0))
    with pytest.raises(ValueError, match="statistics per hypothesis"):
        pro_optimise(pool, get_metric("ter"), np.ones(2), *bounds, FAST,
                     np.random.default_rng(0))
    with pytest.raises(ValueError, match="interpolation"):
        ProSettings(interpolation=1.5)
