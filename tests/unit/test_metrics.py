"""circle.metrics against sacrebleu: BLEU-4 / TER / TERBLEU sufficient statistics."""

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, TER

from circle.metrics import (
    bleu_from_stats,
    bleu_stats,
    closest_ref_length,
    get_metric,
    ter_from_stats,
    ter_stats,
    terbleu_from_stats,
)

VOCAB = "the a cat dog sat on mat rug".split()


def random_sentence(rng, lo=0, hi=12):
    return " ".join(rng.choice(VOCAB, size=rng.integers(lo, hi + 1)))


def random_corpus(seed, n=120):
    rng = np.random.default_rng(seed)
    hyps = [random_sentence(rng) for _ in range(n)]
    refs = [[random_sentence(rng, 1) for _ in range(rng.integers(1, 5))] for _ in range(n)]
    # shorter than all references; equally far from a shorter and a longer reference
    hyps += ["the cat", "the cat sat on the"]
    refs += [["the cat sat on the mat", "a dog sat on the rug"],
             ["the cat sat on", "the cat sat on a mat"]]
    return hyps, refs


def ref_streams(refs):
    """sacrebleu's layout: one stream per reference slot, None where a hypothesis has fewer."""
    width = max(len(r) for r in refs)
    return [[r[k] if k < len(r) else None for r in refs] for k in range(width)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_summed_bleu_stats_equal_sacrebleu_corpus_bleu(seed):
    hyps, refs = random_corpus(seed)
    stats = bleu_stats(hyps, refs)
    assert stats.shape == (len(hyps), 10) and stats.dtype == np.int64
    expected = BLEU(tokenize="none").corpus_score(hyps, ref_streams(refs))
    total = stats.sum(axis=0)
    assert list(total[:4]) == expected.counts and list(total[4:8]) == expected.totals
    assert (total[8], total[9]) == (expected.sys_len, expected.ref_len)
    assert bleu_from_stats(total) == pytest.approx(expected.score / 100, abs=1e-9)


def test_bleu_formula_matches_sacrebleu_on_edge_cases():
    rng = np.random.default_rng(3)
    cases = [[0, 0, 0, 0, 5, 4, 3, 2, 5, 7], [3, 0, 0, 0, 5, 4, 3, 2, 5, 7],
             [3, 2, 0, 1, 5, 4, 3, 2, 5, 9], [2, 1, 0, 0, 3, 2, 1, 0, 3, 3],
             [4, 3, 2, 1, 4, 3, 2, 1, 4, 4], [0, 0, 0, 0, 0, 0, 0, 0, 0, 2]]
    for _ in range(200):
        totals = np.sort(rng.integers(0, 30, 4))[::-1]
        matches = rng.integers(0, totals + 1)
        cases.append([*matches, *totals, totals[0], rng.integers(1, 40)])
    cases = np.array(cases)
    got = bleu_from_stats(cases)
    for row, value in zip(cases, got, strict=True):
        want = BLEU.compute_bleu(list(row[:4]), list(row[4:8]), int(row[8]), int(row[9]),
                                 smooth_method="exp").score / 100
        assert value == pytest.approx(want, abs=1e-12), row


def test_closest_reference_length_prefers_shorter_on_ties():
    assert closest_ref_length(5, [6, 4]) == 4
    assert closest_ref_length(2, [6, 9, 7]) == 6
    stats = bleu_stats(["a b c d e", "a b"],
                       [["a b c d", "a b c d e f"], ["a b c x y z", "q r s t"]])
    assert list(stats[:, 9]) == [4, 4]


def test_each_hypothesis_uses_its_own_references():
    hyp = "the cat sat on the mat"
    stats = bleu_stats([hyp, hyp, hyp],
                       [["the dog sat on a rug"], ["a cat sat on the mat"], ["x", hyp]])
    assert list(stats[0, :4]) == [3, 1, 0, 0]  # the, sat, on / "sat on"
    assert list(stats[1, :4]) == [5, 4, 3, 2]
    assert list(stats[2, :4]) == list(stats[2, 4:8]) == [6, 5, 4, 3]
    assert stats[2, 9] == 6
    # clipping: "the" twice in the hypothesis, once in the reference
    assert bleu_stats(["the the"], [["the cat"]])[0, 0] == 1


def test_ter_stats_match_sacrebleu_corpus_ter():
    hyps, refs = random_corpus(4, n=60)
    stats = ter_stats(hyps, refs)
    assert stats.shape == (len(hyps), 2)
    expected = TER(case_sensitive=True).corpus_score(hyps, ref_streams(refs))
    assert ter_from_stats(stats.sum(axis=0)) == pytest.approx(expected.score / 100, abs=1e-9)
    assert stats[:, 0].sum() == pytest.approx(expected.num_edits)
    assert stats[:, 1].sum() == pytest.approx(expected.ref_length)


def test_terbleu_is_half_ter_plus_half_one_minus_bleu():
    hyps, refs = random_corpus(5, n=60)
    metric = get_metric("terbleu")
    stats = metric.stats(hyps, refs)
    assert stats.shape == (len(hyps), 12)
    bleu = BLEU(tokenize="none").corpus_score(hyps, ref_streams(refs)).score / 100
    ter = TER(case_sensitive=True).corpus_score(hyps, ref_streams(refs)).score / 100
    want = 0.5 * ter + 0.5 * (1 - bleu)
    assert terbleu_from_stats(stats.sum(axis=0)) == pytest.approx(want, abs=1e-9)
    assert metric.value(stats.sum(axis=0)) == pytest.approx(want, abs=1e-9)
    assert metric.score(stats.sum(axis=0)) == pytest.approx(-want, abs=1e-9)


def test_metric_objects_and_scores_are_higher_is_better():
    hyps = ["the cat sat on the mat", "a dog"]
    refs = [["the cat sat on the mat"], ["a dog sat"]]
    for name in ("bleu", "ter", "terbleu"):
        metric = get_metric(name)
        good = metric.stats(hyps, refs).sum(axis=0)
        bad = metric.stats(["mat the on", "rug"], refs).sum(axis=0)
        assert metric.score(good) > metric.score(bad), name
        stacked = metric.score(np.vstack([good, bad]))
        assert stacked.shape == (2,) and stacked[0] == metric.score(good)
    assert get_metric("ter").value(get_metric("ter").stats(["a b"], [["a b"]])[0]) == 0.0
    with pytest.raises(ValueError, match="unknown metric"):
        get_metric("meteor")


@pytest.mark.parametrize("stats_fn", [bleu_stats, ter_stats])
def test_input_errors(stats_fn):
    with pytest.raises(ValueError, match="empty reference list"):
        stats_fn(["a b"], [[]])
    with pytest.raises(ValueError, match="2 hypotheses but 1 reference lists"):
        stats_fn(["a", "b"], [["a"]])
    with pytest.raises(ValueError, match="is a string"):
        stats_fn(["a"], ["a"])
