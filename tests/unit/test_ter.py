"""circle.tune._ter (through circle.tune.metrics.ter_stats): TER statistics (Snover et al. 2006)
identical to sacrebleu's ``TER(case_sensitive=True)``, which ``ter_stats_reference`` runs at test
time, on hand cases, seeded random pairs, pairs of real Bible verses and at corpus level."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sacrebleu.metrics import TER, lib_ter

from circle.experiments.evaluate import corpus_ter, reference_streams
from circle.tune import _ter
from circle.tune.metrics import ter_stats, ter_stats_reference

BIBLE = Path(__file__).resolve().parents[2] / "resources" / "bible" / "bible.parquet"
VERSIONS = ["kjv", "web", "dar", "ylt", "bbe"]


def assert_identical(hypotheses: list[str], references: list[list[str]]) -> np.ndarray:
    """Assert that ``ter_stats`` equals sacrebleu's statistics bit for bit; return them."""
    stats = ter_stats(hypotheses, references)
    assert stats.dtype == np.float64 and stats.shape == (len(hypotheses), 2)
    np.testing.assert_array_equal(stats, ter_stats_reference(hypotheses, references))
    return stats


def words(seed: int, count: int, vocabulary: str = "abcdefgh") -> str:
    """``count`` words drawn from the letters of ``vocabulary``."""
    return " ".join(np.random.default_rng(seed).choice(list(vocabulary), size=count))


LONG = words(1, 130, "abcdefghijklmnop")
HAND_CASES = {
    "empty hypothesis": ("", ["in the beginning"]),
    "empty reference": ("in the beginning", [""]),
    "both empty": ("", [""]),
    "whitespace only": (" \t ", ["\n "]),
    "identical": ("in the beginning god created", ["in the beginning god created"]),
    "one word": ("light", ["darkness"]),
    "pure shift": ("god created the heaven in the beginning",
                   ["in the beginning god created the heaven"]),
    "shifts and edits": ("the earth was without form and void and darkness",
                         ["and the earth was void and without form , darkness"]),
    "repeated words": ("the the the cat the", ["the cat the the the"]),
    "repeated blocks": ("a b a b a b c a b", ["c a b a b a b a b"]),
    "references of different lengths": ("a b c d", ["a b", "d c b a e f", "", "a b c d e"]),
    "case is kept": ("God said", ["god said"]),
    "punctuation is kept": ("and god said , let there be light :",
                            ["and god said: let there be light."]),
    "unicode tokens": ("Ἐν ἀρχῇ ἦν ὁ λόγος 太初 有 道 😀",
                       ["ἐν ἀρχῇ ὁ λόγος ἦν 😀 太初 有 道 ﬁ"]),
    "unicode whitespace": ("a\u00a0b\u2003c\u3000d\te\nf", ["d e f a b c"]),
    "a reference of three 64-word blocks": (words(2, 120, "abcdefghijklmnop"), [LONG]),
    "short hypothesis, long reference": (words(3, 4), [LONG]),
    "long hypothesis, short reference": (LONG, [words(4, 3)]),
}


@cache
def sacrebleu_hand_case(case: str) -> np.ndarray:
    hypothesis, references = HAND_CASES[case]
    return ter_stats_reference([hypothesis], [references])


@pytest.mark.parametrize("case", HAND_CASES)
def test_hand_cases(case):
    hypothesis, references = HAND_CASES[case]
    stats = ter_stats([hypothesis], [references])
    assert stats.dtype == np.float64
    np.testing.assert_array_equal(stats, sacrebleu_hand_case(case))


def test_hand_cases_in_one_call_with_repeats_and_any_order():
    expected = np.vstack([sacrebleu_hand_case(case) for case in HAND_CASES] * 2)
    hypotheses = [h for h, _ in HAND_CASES.values()] * 2
    references = [r for _, r in HAND_CASES.values()] * 2
    order = np.random.default_rng(0).permutation(len(hypotheses))
    np.testing.assert_array_equal(ter_stats([hypotheses[i] for i in order],
                                            [references[i] for i in order]), expected[order])
    assert sacrebleu_hand_case("pure shift")[0, 0] == 1  # one shift, no other edit


@pytest.mark.parametrize("setting, lifted, hypothesis, reference", [
    # the search stops once 1000 shift candidates have been counted
    ("_MAX_SHIFT_CANDIDATES", 10**9,
     "a b b a a b b a a a a b a b b b b b b a a a b a a a b b b a a a a a a a",
     "a b a a b a a a a a a a b a b a b a b b b b b b b a a b b a a a a b a a b"),
    # the beam edit distance misses the cheapest alignment of very unequal lengths
    ("_BEAM_WIDTH", 10**6, "e e a d h",
     "c d f a a h f g a a a c b d h d a d h a c a c h d h b f g h d d b e g h g c e e e a d d "
     "d h a b g f b h a f h"),
])
def test_cases_that_depend_on_sacrebleus_limits(monkeypatch, setting, lifted, hypothesis,
                                                reference):
    stats = assert_identical([hypothesis], [[reference]])
    monkeypatch.setattr(lib_ter, setting, lifted)  # the case does exercise the limit
    assert not np.array_equal(ter_stats_reference([hypothesis], [[reference]]), stats)


def test_seeded_random_pairs_over_small_vocabularies():
    """Few word types make many shift candidates and ties; unequal lengths test the beam."""
    rng = np.random.default_rng(0)
    hypotheses, references = [], []
    for i in range(200):
        vocabulary = "abcdefgh"[:rng.integers(2, 9)]
        hyp_length = rng.integers(0, 30)
        ref_lengths = rng.integers(0, 30, size=rng.integers(1, 4))
        if i % 10 == 0:  # very unequal lengths
            hyp_length, ref_lengths = rng.integers(1, 6), rng.integers(40, 90, size=1)
            if i % 20 == 0:
                hyp_length, ref_lengths = ref_lengths[0], np.array([hyp_length])
        hypotheses.append(words(rng.integers(1 << 30), hyp_length, vocabulary))
        references.append([words(rng.integers(1 << 30), n, vocabulary) for n in ref_lengths])
    assert_identical(hypotheses, references)


def perturbations(tokens: list[str], filler: list[str],
                  rng: np.random.Generator) -> list[list[str]]:
    """Shuffled blocks, deleted words, inserted words (from ``filler``), and all three."""
    def shuffle_blocks(t):
        cuts = np.sort(rng.choice(np.arange(1, len(t)), size=min(3, len(t) - 1), replace=False))
        blocks = np.split(np.array(t, dtype=object), cuts)
        return [w for b in rng.permutation(len(blocks)) for w in blocks[b]]

    def delete(t):
        return [w for w in t if rng.random() > 0.2]

    def insert(t):
        out = []
        for w in t:
            out.append(w)
            if rng.random() < 0.2:
                out.append(filler[rng.integers(len(filler))])
        return out

    return [shuffle_blocks(tokens), delete(tokens), insert(tokens),
            insert(delete(shuffle_blocks(tokens)))]


def bible_pairs(verses: int, seed: int) -> tuple[list[str], list[list[str]]]:
    """Hypotheses and reference lists from ``verses`` verses of the Bible table (seeded, plus
    the longest verse): one version against another, against the other four, and perturbed
    versions against the original."""
    rng = np.random.default_rng(seed)
    table = pd.read_parquet(BIBLE, columns=VERSIONS).dropna().reset_index(drop=True)
    rows = [*rng.choice(len(table), size=verses, replace=False),
            int(table["ylt"].str.split().str.len().idxmax())]
    hypotheses, references = [], []
    for row in rows:
        verse = table.iloc[row]
        hyp_version, ref_version = rng.choice(VERSIONS, size=2, replace=False)
        hypotheses += [verse[hyp_version], verse[hyp_version]]
        references += [[verse[ref_version]], [verse[v] for v in VERSIONS if v != hyp_version]]
        filler = table.iloc[(row + 1) % len(table)][ref_version].split()
        for perturbed in perturbations(verse[ref_version].split(), filler, rng):
            hypotheses.append(" ".join(perturbed))
            references.append([verse[ref_version]])
    return hypotheses, references


def test_real_bible_pairs():
    hypotheses, references = bible_pairs(40, seed=0)
    assert sum(map(len, references)) > 300
    assert max(len(r.split()) for refs in references for r in refs) > 64  # two-block vectors
    assert_identical(hypotheses, references)


def test_corpus_ter_is_sacrebleus_value_and_signature():
    """corpus_ter adds the compiled statistics as sacrebleu adds its own: the same value to the
    last bit and the same signature, on Bible verses with one to five references each (nrefs:
    var) and mixed case, folded only when ``lowercased``."""
    hypotheses, references = bible_pairs(12, seed=1)
    assert len({len(refs) for refs in references}) > 1
    hypotheses = [h.upper() if i % 3 == 0 else h for i, h in enumerate(hypotheses)]
    streams = reference_streams(references)
    values = {}
    for lowercased in (False, True):
        ours = corpus_ter(hypotheses, references, lowercased)
        metric = TER(case_sensitive=not lowercased)
        theirs = metric.corpus_score(hypotheses, streams)
        assert ours.value == theirs.score
        assert ours.signature == str(metric.get_signature()) and "nrefs:var" in ours.signature
        values[lowercased] = ours.value
    assert values[True] < values[False]  # the upper-cased verses match once folded


def test_compiled_entry_checks_its_lists():
    assert _ter.ter_statistics([], []).shape == (0, 2)
    with pytest.raises(ValueError, match="empty reference list"):
        _ter.ter_statistics(["a"], [[]])
    with pytest.raises(ValueError, match="1 hypotheses but 2 reference lists"):
        _ter.ter_statistics(["a"], [["a"], ["b"]])
