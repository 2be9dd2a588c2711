"""circle.tune.metrics against sacrebleu: BLEU-4 / TER / TERBLEU sufficient statistics."""

import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, TER

from circle.tune.metrics import (
    bleu_from_stats,
    bleu_stats,
    closest_ref_length,
    get_metric,
    ter_from_stats,
    ter_stats,
    terbleu_from_stats,
    wer_stats,
    wer_stats_reference,
)

VOCAB = "the a cat dog sat on mat rug".split()
TINY = Path(__file__).resolve().parents[1] / "data" / "tiny"


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


def counter_bleu_stats(hypotheses, references):
    """A plain reference implementation: Counters of n-grams, one hypothesis at a time."""
    rows = []
    for hyp, refs in zip(hypotheses, references, strict=True):
        tokens = hyp.split()
        ref_tokens = [ref.split() for ref in refs]
        row = []
        for n in range(1, 5):
            counts = Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))
            clip = Counter()
            for ref in ref_tokens:
                for gram, count in Counter(tuple(ref[i:i + n])
                                           for i in range(len(ref) - n + 1)).items():
                    clip[gram] = max(clip[gram], count)
            row.append(sum(min(count, clip[gram]) for gram, count in counts.items()))
        row += [max(0, len(tokens) - n + 1) for n in range(1, 5)]
        lengths = [len(ref) for ref in ref_tokens]
        row += [len(tokens), min(lengths, key=lambda r: (abs(len(tokens) - r), r))]
        rows.append(row)
    return np.array(rows, dtype=np.int64).reshape(len(rows), 10)


def sacrebleu_bleu_stats(hypotheses, references):
    """sacrebleu's sentence-level statistics in our column order."""
    bleu = BLEU(tokenize="none", effective_order=True)
    rows = []
    for hyp, refs in zip(hypotheses, references, strict=True):
        score = bleu.sentence_score(hyp, list(refs))
        rows.append([*score.counts, *score.totals, score.sys_len, score.ref_len])
    return np.array(rows, dtype=np.int64).reshape(len(rows), 10)


def tiny_verses():
    """Lowercased lines of the tiny English corpus (training text and the references)."""
    names = ["train.en.txt", *(f"{s}.ref{k}.txt" for s in ("tune", "test", "paratune")
                               for k in (0, 1))]
    return [line.lower() for name in names
            for line in (TINY / name).read_text(encoding="utf-8").splitlines()]


def perturb(tokens, rng, words, rate=0.15):
    """Substitute, drop, duplicate and insert tokens; repeated words need clipping."""
    out = []
    for token in tokens:
        r = rng.random()
        if r < rate:
            out.append(str(rng.choice(words)))
        elif r < 2 * rate:
            continue
        elif r < 3 * rate:
            out += [token, token]
        else:
            out.append(token)
    return out


def real_corpus(seed, segments=25, per_segment=12):
    """Segments of real verses: a shared reference list per segment (1-4 references, the
    extra ones perturbed copies or other verses), hypotheses that perturb a reference, some
    hypotheses with a reference list of their own, empty and very short hypotheses."""
    rng = np.random.default_rng(seed)
    verses = tiny_verses()
    words = sorted({token for verse in verses for token in verse.split()})
    hyps, refs = [], []
    for _ in range(segments):
        base = verses[rng.integers(len(verses))].split()
        shared = [" ".join(base)]
        for _ in range(rng.integers(0, 4)):
            other = (perturb(base, rng, words) if rng.random() < 0.7
                     else verses[rng.integers(len(verses))].split())
            shared.append(" ".join(other))
        for _ in range(per_segment):
            tokens = perturb(shared[rng.integers(len(shared))].split(), rng, words)
            kind = rng.random()
            if kind < 0.05:
                tokens = []
            elif kind < 0.15:
                tokens = tokens[:rng.integers(1, 4)]
            own = rng.random() < 0.2
            hyps.append(" ".join(tokens))
            refs.append([*shared[:1], " ".join(perturb(base, rng, words))] if own else shared)
    return hyps, refs


@pytest.mark.parametrize("seed", range(6))
def test_bleu_stats_rows_equal_reference_and_sacrebleu_on_real_data(seed):
    hyps, refs = real_corpus(seed)
    stats = bleu_stats(hyps, refs)
    assert stats.dtype == np.int64 and stats.shape == (len(hyps), 10)
    np.testing.assert_array_equal(stats, counter_bleu_stats(hyps, refs))
    np.testing.assert_array_equal(stats, sacrebleu_bleu_stats(hyps, refs))
    expected = BLEU(tokenize="none").corpus_score(hyps, ref_streams(refs))
    total = stats.sum(axis=0)
    assert list(total[:4]) == expected.counts and list(total[4:8]) == expected.totals
    assert (total[8], total[9]) == (expected.sys_len, expected.ref_len)


@pytest.mark.parametrize("seed", range(4))
def test_bleu_stats_rows_equal_reference_on_small_vocabulary(seed):
    """Eight words: many repeated n-grams, so clipping and ties in length are frequent."""
    hyps, refs = random_corpus(seed + 10, n=150)
    np.testing.assert_array_equal(bleu_stats(hyps, refs), counter_bleu_stats(hyps, refs))
    np.testing.assert_array_equal(bleu_stats(hyps, refs), sacrebleu_bleu_stats(hyps, refs))


def test_bleu_stats_edge_cases():
    hyps = ["", "   ", "the", "the cat", "the cat sat",
            "the the the the the", "the cat the cat the cat",
            "a b c d e",
            "café naïve 日本語 😀 😀", "x\u00a0y\u3000z\tw\n", "ß SS ss"]
    refs = [["the cat"], ["a", "a b"], ["the cat sat on the mat"], ["the cat", "cat the"],
            ["the cat sat on the mat", "the cat", "a dog"],
            ["the the cat", "the cat the the"], ["the cat the", "cat the cat the"],
            ["a b c d", "a b c d e f"],
            ["café 日本語 😀", "naïve café 😀 😀 😀"], ["x y z w"], ["ss SS", "ß"]]
    stats = bleu_stats(hyps, refs)
    np.testing.assert_array_equal(stats, counter_bleu_stats(hyps, refs))
    np.testing.assert_array_equal(stats, sacrebleu_bleu_stats(hyps, refs))
    assert list(stats[0]) == [0] * 9 + [2]  # empty hypothesis: closest reference length only
    assert list(stats[1]) == [0] * 9 + [1]  # whitespace only: no tokens
    assert list(stats[2]) == [1, 0, 0, 0, 1, 0, 0, 0, 1, 6]
    # clipped by the largest count in one reference (3 "the", 1 "the the"), not by the sum
    assert list(stats[5, :4]) == [3, 1, 0, 0]
    assert list(stats[6, :4]) == [4, 3, 2, 1]  # each n-gram's clip from its own best reference
    assert stats[7, 9] == 4  # 5 tokens: 4 and 6 are equally close
    assert list(stats[8, :2]) == [5, 2]  # "日本語 😀" from the first reference, "😀 😀" the second
    assert list(stats[9, :4]) == [4, 3, 2, 1]  # no-break and ideographic spaces split tokens
    assert list(stats[10, :1]) == [3]  # no case folding or normalisation


def test_bleu_stats_empty_input_and_reference_edge_cases():
    empty = bleu_stats([], [])
    assert empty.shape == (0, 10) and empty.dtype == np.int64
    hyps = ["a b", "a b", "a b", "a"]
    refs = [[""], ["", "a b c"], ("a b", "a b"), ["a", "", "a a"]]
    stats = bleu_stats(hyps, refs)
    np.testing.assert_array_equal(stats, counter_bleu_stats(hyps, refs))
    assert list(stats[:, 9]) == [0, 3, 2, 1]


def test_bleu_stats_rows_do_not_depend_on_batching_or_shared_lists():
    hyps, refs = real_corpus(7, segments=8, per_segment=10)
    stats = bleu_stats(hyps, refs)
    one_by_one = np.vstack([bleu_stats([h], [r]) for h, r in zip(hyps, refs, strict=True)])
    np.testing.assert_array_equal(stats, one_by_one)
    copies = [list(r) for r in refs]  # equal lists that are distinct objects
    np.testing.assert_array_equal(bleu_stats(hyps, copies), stats)
    order = np.random.default_rng(7).permutation(len(hyps))
    shuffled = bleu_stats([hyps[i] for i in order], [refs[i] for i in order])
    np.testing.assert_array_equal(shuffled, stats[order])
    # one reference list shared by every hypothesis; then every hypothesis with its own list
    shared = refs[0]
    np.testing.assert_array_equal(bleu_stats(hyps, [shared] * len(hyps)),
                                  counter_bleu_stats(hyps, [shared] * len(hyps)))
    own = [[h, *r] for h, r in zip(hyps, refs, strict=True)]
    np.testing.assert_array_equal(bleu_stats(hyps, own), counter_bleu_stats(hyps, own))


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


def test_wer_counts_word_edits_against_one_reference():
    stats = wer_stats(["a b c", "", "a b", "x y z w"], ["a x c d", "a b", "", "x z y w"])
    assert stats.tolist() == [[2, 4], [2, 2], [2, 0], [2, 4]]
    assert ter_from_stats(stats).tolist() == [0.5, 1.0, 1.0, 0.5]


@pytest.mark.parametrize("longest", [30, 64, 65, 100], ids=lambda n: f"up-to-{n}-words")
def test_compiled_wer_equals_the_textbook_programme(longest):
    """Targets of up to 64 words take the bit-parallel algorithm, longer ones the recurrence;
    references repeat, so several hypotheses share one target."""
    rng = random.Random(longest)
    vocabulary = "the sons of israel went up and".split()
    references = [" ".join(rng.choices(vocabulary, k=rng.randint(0, longest))) for _ in range(40)]
    references = rng.choices(references + [" ".join(["the"] * longest)], k=300)
    hypotheses = [" ".join(rng.choices(vocabulary, k=rng.randint(0, longest))) for _ in range(300)]
    assert np.array_equal(wer_stats(hypotheses, references),
                          wer_stats_reference(hypotheses, references))
