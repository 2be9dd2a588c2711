"""Targeted references inside the tuning loop (thesis §5.3): the reranking order against
hand-computed LM and TER values, the on-disk cache (hit, miss, resume) and the reference hook."""

import math

import kenlm
import numpy as np
import pandas as pd
import pytest

from circle.decoder import DecoderSettings, Grammar, Hypothesis
from circle.lm import estimate_lm
from circle.metrics import get_metric, ter_from_stats, ter_stats
from circle.paraphraser import Paraphraser, ParaphraserConfig
from circle.targeted import ParaphraseCache, Reranker, TargetedReferences, cache_key
from circle.tune.loop import TuningSettings, tune
from circle.tune.mert import MertSettings

# A bigram model whose only bigram repeats its unigram and whose backoffs are 0, so a sentence's
# log10 probability is the sum of these unigram values ("</s>" ends every sentence).
UNIGRAMS = {"<unk>": -3.0, "<s>": -99.0, "</s>": -1.0, "the": -0.5, "sons": -1.5,
            "children": -2.0, "of": -0.7, "israel": -1.2, "went": -1.3, "up": -1.1}


@pytest.fixture(scope="module")
def unigram_lm(tmp_path_factory):
    path = tmp_path_factory.mktemp("lm") / "unigram.arpa"
    lines = ["\\data\\", f"ngram 1={len(UNIGRAMS)}", "ngram 2=1", "", "\\1-grams:"]
    lines += [f"{prob:.6f}\t{word}\t0.0" for word, prob in UNIGRAMS.items()]
    lines += ["", "\\2-grams:", f"{UNIGRAMS['sons']:.6f}\tthe sons"]
    path.write_text("\n".join([*lines, "", "\\end\\", ""]), encoding="utf-8")
    return kenlm.Model(str(path))


def lm_per_word(text: str) -> float:
    words = text.split()
    return math.log(10) * (sum(UNIGRAMS[w] for w in words) + UNIGRAMS["</s>"]) / (len(words) + 1)


def test_rerank_order_is_lm_per_word_minus_ter_to_the_target(unigram_lm):
    target = "the sons of israel went up"
    paraphrases = [Hypothesis("the children of israel went up", -1.0, {}),   # TER 1/6
                   Hypothesis("the sons of israel went up", -2.0, {}),       # TER 0
                   Hypothesis("the children of israel", -0.5, {})]           # TER 3/6
    reranker = Reranker(lm=1.0, distance=2.0, paraphraser=0.1)
    expected = [lm_per_word(h.text) - 2.0 * ter + 0.1 * h.score
                for h, ter in zip(paraphrases, [1 / 6, 0.0, 3 / 6], strict=True)]
    ranked = reranker.rank(paraphrases, target, unigram_lm)
    assert [text for text, _ in ranked] == [paraphrases[i].text for i in (1, 0, 2)]
    assert [score for _, score in ranked] == pytest.approx([expected[i] for i in (1, 0, 2)])
    # fluency alone, per word: sons -7.3/7 > short children -5.4/5 > long children -7.8/7
    fluency_only = Reranker(lm=1.0, distance=0.0, paraphraser=0.0)
    assert [text for text, _ in fluency_only.rank(paraphrases, target, unigram_lm)] == \
        [paraphrases[i].text for i in (1, 2, 0)]


def test_cache_hit_miss_and_resume_from_disk(tmp_path):
    key = cache_key(ParaphraserConfig(0.25, -0.5), {"lm": 1.0}, 10, Reranker())
    cache = ParaphraseCache(tmp_path, key, depth=2)
    assert ("ref", "hyp") not in cache
    cache.add("ref", "hyp", [("a", 3.0), ("b", 2.0), ("c", 1.0)])
    assert cache.get("ref", "hyp") == ["a", "b"]  # depth 2
    assert cache.flush("1H+1T.rep0") is not None and cache.flush("1H+1T.rep0") is None
    resumed = ParaphraseCache(tmp_path, key, depth=2)
    assert resumed.get("ref", "hyp") == ["a", "b"]
    other = cache_key(ParaphraserConfig(0.25, -0.6), {"lm": 1.0}, 10, Reranker())
    assert ("ref", "hyp") not in ParaphraseCache(tmp_path, other, depth=2)


class RecordingParaphraser:
    """Paraphrases each input towards its target as 'input target' (rank 0) and 'input' (1),
    recording every call."""

    def __init__(self):
        self.calls: list[list[tuple[str, str]]] = []

    def paraphrase(self, inputs, targets, targeting_weight):
        self.calls.append(list(zip(inputs, targets, strict=True)))
        return [[Hypothesis(f"{source} {target}", -1.0, {}), Hypothesis(source, -2.0, {})]
                for source, target in zip(inputs, targets, strict=True)]


def test_hook_paraphrases_each_new_pair_once_and_resumes(tmp_path, unigram_lm):
    config = ParaphraserConfig(0.25, -0.5)
    paraphraser = RecordingParaphraser()
    cache = ParaphraseCache(tmp_path, "k", depth=2)
    hook = TargetedReferences(["r0", "r1"], paraphraser, config, 1, cache, None, unigram_lm,
                              "run")
    hook.prepare([(0, "h0"), (0, "h0"), (1, "h1"), (0, "h2")])
    assert paraphraser.calls == [[("r0", "h0"), ("r1", "h1"), ("r0", "h2")]]
    assert hook(0, "h0") == ["r0", "r0 h0"]  # the original reference + the top paraphrase
    hook.prepare([(0, "h0"), (1, "h3")])  # only the new pair is paraphrased
    assert paraphraser.calls[-1] == [("r1", "h3")]
    resumed = RecordingParaphraser()
    again = TargetedReferences(["r0", "r1"], resumed, config, 2, ParaphraseCache(tmp_path, "k", 2),
                               None, unigram_lm, "run")
    again.prepare([(0, "h0"), (1, "h1"), (0, "h2"), (1, "h3")])
    assert resumed.calls == []  # a killed run's lists are on disk
    assert again(1, "h3") == ["r1", "r1 h3", "r1"]


def test_hook_refuses_an_untargeted_configuration_or_too_many_references(tmp_path, unigram_lm):
    cache = ParaphraseCache(tmp_path, "k", depth=2)
    with pytest.raises(ValueError, match="negative targeting weight"):
        TargetedReferences(["r"], RecordingParaphraser(), ParaphraserConfig(0.0, 0.0), 1, cache,
                           None, unigram_lm, "run")
    with pytest.raises(ValueError, match="keeps 2"):
        TargetedReferences(["r"], RecordingParaphraser(), ParaphraserConfig(0.0, -1.0), 3, cache,
                           None, unigram_lm, "run")


def test_targeted_references_reach_the_tuning_statistics(tmp_path):
    """Tuning with the hook on real decoders: every pooled hypothesis is scored against the
    original reference and its own reranked paraphrase, targeted to it (a translation grammar
    with right and wrong English words, a paraphrase grammar between them)."""

    words = [("la", "the", "her"), ("casa", "house", "home"), ("es", "is", "'s"),
             ("pequeña", "small", "little"), ("el", "the", "him"), ("perro", "dog", "hound")]
    translation = Grammar.from_frame(pd.DataFrame(
        [("X", s, right, -1.5, -0.1) for s, right, _ in words]
        + [("X", s, wrong, -0.1, -1.5) for s, _, wrong in words],
        columns=["lhs", "source", "target", "f1", "f2"]), ["f1", "f2"])
    english = [(right, wrong) for _, right, wrong in words if right != "the"]
    paraphrases = Grammar.from_frame(pd.DataFrame(  # each word: its other form or itself
        [("X", a, b, -1.0) for right, wrong in english for a, b in ((right, wrong), (wrong, right))]
        + [("X", w, w, -0.7) for pair in english for w in pair],
        columns=["lhs", "source", "target", "p"]), ["p"])
    text = tmp_path / "lm.txt"
    text.write_text("the house is small\nthe dog is small\nthe home is little\n" * 3)
    estimate_lm([text], 3, tmp_path / "lm.binary", discount_fallback=True, memory="50M")
    lm = tmp_path / "lm.binary"
    sentences, references = ["la casa es pequeña", "el perro es pequeña"], \
        ["the house is small", "the dog is small"]
    paraphraser = Paraphraser(paraphrases, lm, {"p": 1.0, "lm": 0.5, "word_penalty": 0.0,
                                                "phrase_penalty": 0.0, "glue": 0.0,
                                                "oov": -1.0}, DecoderSettings(k=5))
    hook = TargetedReferences(references, paraphraser, ParaphraserConfig(0.0, -2.0), 1,
                              ParaphraseCache(tmp_path / "cache", "k", 3), Reranker(), lm, "run")
    weights = {"f1": 1.0, "f2": 0.1, "lm": 0.05, "word_penalty": 0.0, "phrase_penalty": 0.0,
               "glue": 0.0, "oov": -1.0}
    result = tune(sentences, [[r] for r in references], translation, lm, weights,
                  DecoderSettings(k=4), TuningSettings(max_iterations=2, seed=0,
                                                       mert=MertSettings(restarts=2)),
                  references_for=hook)
    pool = sorted(zip(result.pool.segment_ids, result.pool.hypotheses, strict=True),
                  key=lambda pair: pair[0])  # the flat pool's order: by segment, stable
    assert hook.paraphrased == len(pool) > len(sentences)
    expected = get_metric("bleu").stats(
        [hypothesis for _, hypothesis in pool],
        [[references[i], hook.cache.get(references[i], hypothesis)[0]] for i, hypothesis in pool])
    assert np.array_equal(result.pool.flat().stats, expected)
    # the paraphrases are targeted: each is at least as close to its hypothesis as the
    # original reference is, and some are closer
    closeness = [(ter(targeted_top, hypothesis), ter(references[i], hypothesis))
                 for i, hypothesis in pool
                 for targeted_top in [hook.cache.get(references[i], hypothesis)[0]]]
    assert all(new <= old for new, old in closeness)
    assert any(new < old for new, old in closeness)


def ter(hypothesis: str, reference: str) -> float:
    return float(ter_from_stats(ter_stats([hypothesis], [[reference]])[0]))
