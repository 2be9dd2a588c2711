"""Targeted references inside the tuning loop (thesis §5.3): the reranking order against
hand-computed LM and WER values, the on-disk cache (hit, miss, resume), the two search modes and
the reference hook."""

import math
from dataclasses import replace

import kenlm
import numpy as np
import pandas as pd
import pytest
from markdown_it import MarkdownIt

from circle.core.pages import markdown_html
from circle.decoder import DecoderSettings, Grammar, Hypothesis, write_weights
from circle.decoder.model import RERANK_FEATURE
from circle.figures.targeted_samples import triples_page
from circle.lm import estimate_lm
from circle.paraphrase.config import ParaphraserConfig
from circle.paraphrase.targeted import (
    ParaphraseCache,
    ParaphraseMemo,
    Reranker,
    TargetedParaphraser,
    TargetedReferences,
    TargetedSettings,
    TargetedSetup,
    TargetedTask,
    cache_key,
    sample_triples,
    targeted_setup,
)
from circle.tune.loop import TuningSettings, tune
from circle.tune.mert import MertSettings
from circle.tune.metrics import get_metric, ter_from_stats, ter_stats

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


def test_rerank_order_is_lm_per_word_minus_wer_to_the_target(unigram_lm):
    target = "the sons of israel went up"
    paraphrases = [Hypothesis("the children of israel went up", -1.0, {}),   # WER 1/6
                   Hypothesis("the sons of israel went up", -2.0, {}),       # WER 0
                   Hypothesis("the children of israel", -0.5, {})]           # WER 3/6
    reranker = Reranker(lm=1.0, distance=2.0, paraphraser=0.1)
    expected = [lm_per_word(h.text) - 2.0 * ter + 0.1 * h.score
                for h, ter in zip(paraphrases, [1 / 6, 0.0, 3 / 6], strict=True)]
    memo = ParaphraseMemo(unigram_lm)
    ranked = reranker.rank(memo.prepare(paraphrases), target, memo)
    assert [text for text, _ in ranked] == [paraphrases[i].text for i in (1, 0, 2)]
    assert [score for _, score in ranked] == pytest.approx([expected[i] for i in (1, 0, 2)])
    # fluency alone, per word: sons -7.3/7 > short children -5.4/5 > long children -7.8/7
    fluency_only = Reranker(lm=1.0, distance=0.0, paraphraser=0.0)
    assert [text for text, _ in fluency_only.rank(memo.prepare(paraphrases), target, memo)] == \
        [paraphrases[i].text for i in (1, 2, 0)]


def test_cache_hit_miss_and_resume_from_disk(tmp_path):
    settings = DecoderSettings(k=10)
    key = cache_key(ParaphraserConfig(0.25, -0.5), {"lm": 1.0}, settings, "forest", 2, Reranker())
    cache = ParaphraseCache(tmp_path, key, depth=2)
    assert ("ref", "hyp", "hyp ref") not in cache
    cache.add(("ref", "hyp", "hyp ref"), [("a", 3.0), ("b", 2.0), ("c", 1.0)])
    assert cache.get(("ref", "hyp", "hyp ref")) == ["a", "b"]  # depth 2
    assert ("ref", "hyp", "hyp") not in cache  # another forest's list
    assert cache.flush("1H+1T.rep0") is not None and cache.flush("1H+1T.rep0") is None
    resumed = ParaphraseCache(tmp_path, key, depth=2)
    assert resumed.get(("ref", "hyp", "hyp ref")) == ["a", "b"]
    for other in (cache_key(ParaphraserConfig(0.25, -0.6), {"lm": 1.0}, settings, "forest", 2,
                            Reranker()),
                  cache_key(ParaphraserConfig(0.25, -0.5), {"lm": 1.0}, settings, "exact", 2,
                            Reranker()),
                  cache_key(ParaphraserConfig(0.25, -0.5), {"lm": 1.0}, settings, "forest", 3,
                            None)):
        assert ("ref", "hyp", "hyp ref") not in ParaphraseCache(tmp_path, other, depth=2)
    assert key == cache_key(ParaphraserConfig(0.25, -0.5), {"lm": 1.0}, settings, "forest", 2,
                            Reranker())


class RecordingParaphraser:
    """Paraphrases each reference towards each hypothesis as 'reference hypothesis [forest
    words]' (rank 0) and 'reference' (1), recording every call; forest words as in forest
    mode."""

    def __init__(self):
        self.calls: list[list[tuple[str, list[str]]]] = []
        self.closed = False

    def forest_words(self, hypotheses):
        return tuple(sorted({word for hypothesis in hypotheses for word in hypothesis.split()}))

    def lists(self, tasks):
        self.calls.append([(task.reference, list(task.hypotheses)) for task in tasks])
        return [[[(f"{task.reference} {hypothesis} {task.forest_words}", -1.0),
                  (task.reference, -2.0)] for hypothesis in task.hypotheses] for task in tasks]

    def close(self):
        self.closed = True


def test_hook_paraphrases_each_new_pair_once_and_resumes(tmp_path):
    paraphraser = RecordingParaphraser()
    cache = ParaphraseCache(tmp_path, "k", depth=2)
    first = [(0, "h0"), (0, "h0"), (1, "h1"), (0, "h2")]
    with TargetedReferences(["r0", "r1"], paraphraser, 1, cache, "run") as hook:
        hook.prepare(first)
        assert paraphraser.calls == [[("r0", ["h0", "h2"]), ("r1", ["h1"])]]
        # the original reference + the top paraphrase, made in a forest for h0 and h2
        assert hook(0, "h0") == ["r0", "r0 h0 ('h0', 'h2')"]
        hook.prepare([(0, "h0"), (0, "h2")])  # the same batch again: all cached
        assert len(paraphraser.calls) == 1
        hook.prepare([(1, "h1"), (1, "h3"), (0, "h4")])  # later batches: the first forests
        assert paraphraser.calls[-1] == [("r1", ["h3"]), ("r0", ["h4"])]
        assert hook(1, "h3") == ["r1", "r1 h3 ('h1',)"]
        assert hook(0, "h4") == ["r0", "r0 h4 ('h0', 'h2')"]
    assert paraphraser.closed
    resumed = RecordingParaphraser()
    again = TargetedReferences(["r0", "r1"], resumed, 2, ParaphraseCache(tmp_path, "k", 2), "run")
    again.restore(first)  # what a resumed run's loop shows the hook of its saved iterations
    again.prepare([(1, "h1"), (1, "h3"), (0, "h4")])
    assert resumed.calls == []  # a killed run's lists are on disk
    assert again(1, "h3") == ["r1", "r1 h3 ('h1',)", "r1"]


def test_lists_do_not_depend_on_what_the_cache_holds(tmp_path):
    """A run that finds another run's lists in the cache computes what it would have computed
    alone: a reference's forest words come from the whole batch, cached pairs included."""
    alone = TargetedReferences(["r0"], RecordingParaphraser(), 1,
                               ParaphraseCache(tmp_path / "alone", "k", 1), "run")
    alone.prepare([(0, "a b"), (0, "b c")])
    shared_cache = tmp_path / "shared"
    other = TargetedReferences(["r0"], RecordingParaphraser(), 1,
                               ParaphraseCache(shared_cache, "k", 1), "other")
    other.prepare([(0, "a b")])  # the same pair in a batch of its own
    sharing = TargetedReferences(["r0"], RecordingParaphraser(), 1,
                                 ParaphraseCache(shared_cache, "k", 1), "run")
    sharing.prepare([(0, "a b"), (0, "b c")])
    assert [sharing(0, h) for h in ("a b", "b c")] == [alone(0, h) for h in ("a b", "b c")]
    assert sharing.paraphraser.calls == [[("r0", ["a b", "b c"])]]


def test_hook_refuses_too_many_references_and_setup_an_untargeted_configuration(tmp_path):
    cache = ParaphraseCache(tmp_path, "k", depth=2)
    with pytest.raises(ValueError, match="keeps 2"):
        TargetedReferences(["r"], RecordingParaphraser(), 3, cache, "run")
    with pytest.raises(ValueError, match="negative targeting weight"):
        TargetedSetup(ParaphraserConfig(0.0, 0.0), "g", "lm", {}, DecoderSettings(), "forest", 2,
                      Reranker(), "lm5", tmp_path, 2)


def test_sample_triples_draw_from_every_part_whatever_wrote_it(tmp_path):
    setup = TargetedSetup(ParaphraserConfig(0.5, -0.5), "g", "lm", {"lm": 1.0},
                          DecoderSettings(k=10), "forest", 2, Reranker(), "lm5", tmp_path, 2)
    for writer, pairs in (("1H+1T.rep0", range(0, 6)), ("1H+2T.rep1", range(6, 12))):
        cache = setup.cache()
        for n in pairs:
            cache.add((f"the house {n}", f"a home {n}", f"a home {n}"),
                      [(f"the home {n}", -1.0), ("x", -2.0)])
        cache.flush(writer)
    cache = setup.cache()
    assert len(cache.lists) == 12
    triples = sample_triples(cache, 4, seed=13)
    assert len(triples) == 4 and triples.equals(sample_triples(setup.cache(), 4, seed=13))
    assert not triples.equals(sample_triples(cache, 4, seed=14))
    for row in triples.itertuples():
        n = row.reference.split()[-1]
        assert (row.hypothesis, row.paraphrase) == (f"a home {n}", f"the home {n}")
    page = triples_page(triples, setup, len(cache.lists))
    assert "bias 0.5, targeting weight -0.5; forest search, 10-best" in page
    first = triples.iloc[0]
    # "the home n" is one substitution from "a home n": TER 1/3; the reference two: 2/3
    assert f"- R: {first['reference']} [66.7]" in page
    assert f"- P: {first['paraphrase']} [33.3]" in page
    # each triple one unit as a forge renders it: its heading, then one list of H, R and P
    tokens = MarkdownIt("commonmark").parse(page)
    starts = [i for i, token in enumerate(tokens) if token.type == "heading_open"
              and token.tag == "h2"]
    assert [tokens[i + 1].content for i in starts] == [f"Triple {n}" for n in range(1, 5)]
    for start, row in zip(starts, triples.itertuples(), strict=True):
        assert tokens[start + 3].type == "bullet_list_open"
        items = [t.content for t in tokens[start + 3:] if t.type == "inline"][:3]
        assert [item.split(" [")[0] for item in items] == [
            f"H: {row.hypothesis}", f"R: {row.reference}", f"P: {row.paraphrase}"]
    assert markdown_html(page, "t").count("<ul>") == 4  # the report's HTML alike
    assert len(sample_triples(cache, 50, seed=1)) == 12
    with pytest.raises(ValueError, match="holds no lists"):
        sample_triples(ParaphraseCache(tmp_path / "empty", "k", 2), 3, seed=1)


WORDS = [("la", "the", "her"), ("casa", "house", "home"), ("es", "is", "'s"),
         ("pequeña", "small", "little"), ("el", "the", "him"), ("perro", "dog", "hound")]
"""Spanish words with a right and a wrong English translation."""

PARAPHRASER_WEIGHTS = {"p": 1.0, "lm": 0.5, "word_penalty": 0.0, "phrase_penalty": 0.0,
                       "glue": 0.0, "oov": -1.0}


@pytest.fixture(scope="module")
def small_grammars(tmp_path_factory):
    """A translation grammar with right and wrong English words, a paraphrase grammar between
    them (each word: its other form or itself) and a trigram LM."""
    translation = Grammar.from_frame(pd.DataFrame(
        [("X", s, right, -1.5, -0.1) for s, right, _ in WORDS]
        + [("X", s, wrong, -0.1, -1.5) for s, _, wrong in WORDS],
        columns=["lhs", "source", "target", "f1", "f2"]), ["f1", "f2"])
    english = [(right, wrong) for _, right, wrong in WORDS if right != "the"]
    paraphrases = Grammar.from_frame(pd.DataFrame(
        [("X", a, b, -1.0) for right, wrong in english for a, b in ((right, wrong), (wrong, right))]
        + [("X", w, w, -0.7) for pair in english for w in pair],
        columns=["lhs", "source", "target", "p"]), ["p"])
    directory = tmp_path_factory.mktemp("small")
    text = directory / "lm.txt"
    text.write_text("the house is small\nthe dog is small\nthe home is little\n" * 3)
    estimate_lm([text], 3, directory / "lm.binary", discount_fallback=True, memory="50M")
    return translation, paraphrases, directory / "lm.binary"


@pytest.mark.parametrize("reranker", [Reranker(), None], ids=["reranked", "not-reranked"])
def test_forest_and_exact_modes_agree_with_a_wide_beam(small_grammars, reranker):
    """Every derivation survives the beam, so re-weighting one forest per reference gives the
    targeted search's lists; hypotheses with the same words share one decode."""
    _, paraphrases, lm = small_grammars
    tasks = [("the house is small", ["the home is little", "little the home is", "her house"]),
             ("the dog is small", ["the hound 's little", "the dog is small"])]
    settings = DecoderSettings(pop_limit=1000, options_limit=1000, k=20)
    lists = {}
    for mode in ("exact", "forest"):
        paraphraser = TargetedParaphraser(paraphrases, lm, PARAPHRASER_WEIGHTS,
                                          ParaphraserConfig(0.0, -1.0), settings, mode, 1,
                                          reranker, lm, depth=20)
        lists[mode] = list(paraphraser.lists([TargetedTask(reference, hypotheses,
                                                           paraphraser.forest_words(hypotheses))
                                              for reference, hypotheses in tasks]))
    for forest_task, exact_task in zip(lists["forest"], lists["exact"], strict=True):
        for forest_ranked, exact_ranked in zip(forest_task, exact_task, strict=True):
            # the same entries with the same scores, in the same order up to exact ties
            # (which floating-point noise in the model scores may break either way)
            assert len(forest_ranked) == len(exact_ranked) > 1
            assert [score for _, score in forest_ranked] == \
                pytest.approx([score for _, score in exact_ranked], abs=1e-9)
            assert dict(forest_ranked) == pytest.approx(dict(exact_ranked), abs=1e-9)
    top = lists["exact"][0][0][0][0]
    assert top == "the home is little"  # fully targeted: every word of the hypothesis
    if reranker is None:  # same words, same list (before reranking, which reads the order)
        assert lists["exact"][0][0] == lists["exact"][0][1]


@pytest.mark.parametrize(("mode", "workers"), [("exact", 1), ("forest", 2)])
def test_targeted_references_reach_the_tuning_statistics(tmp_path, small_grammars, mode,
                                                        workers):
    """Tuning with the hook on real decoders: every pooled hypothesis is scored against the
    original reference and its own reranked paraphrase, targeted to it."""
    translation, paraphrases, lm = small_grammars
    sentences, references = ["la casa es pequeña", "el perro es pequeña"], \
        ["the house is small", "the dog is small"]
    paraphraser = TargetedParaphraser(
        paraphrases, lm, PARAPHRASER_WEIGHTS, ParaphraserConfig(0.0, -2.0),
        DecoderSettings(k=5), mode, 2, Reranker(), lm, depth=3, workers=workers)
    hook = TargetedReferences(references, paraphraser, 1,
                              ParaphraseCache(tmp_path / "cache", "k", 3), "run")
    weights = {"f1": 1.0, "f2": 0.1, "lm": 0.05, "word_penalty": 0.0, "phrase_penalty": 0.0,
               "glue": 0.0, "oov": -1.0}
    given: dict[tuple[int, str], list[str]] = {}

    class Recorded:
        """The hook, recording the references it gives each hypothesis."""

        prepare = hook.prepare

        def __call__(self, index, hypothesis):
            given[index, hypothesis] = hook(index, hypothesis)
            return given[index, hypothesis]

    with hook:
        result = tune(sentences, [[r] for r in references], translation, lm, weights,
                      DecoderSettings(k=4), TuningSettings(max_iterations=2, seed=0,
                                                           mert=MertSettings(restarts=2)),
                      references_for=Recorded())
    pool = sorted(zip(result.pool.segment_ids, result.pool.hypotheses, strict=True),
                  key=lambda pair: pair[0])  # the flat pool's order: by segment, stable
    assert hook.paraphrased == len(pool) > len(sentences)
    assert sorted(given) == sorted(pool)
    assert all(len(given[i, h]) == 2 and given[i, h][0] == references[i] for i, h in pool)
    expected = get_metric("bleu").stats(
        [hypothesis for _, hypothesis in pool],
        [given[i, hypothesis] for i, hypothesis in pool])
    assert np.array_equal(result.pool.flat().stats, expected)
    # the paraphrases are targeted: each is at least as close to its hypothesis as the
    # original reference is, and some are closer
    closeness = [(ter(targeted_top, hypothesis), ter(references[i], hypothesis))
                 for i, hypothesis in pool
                 for targeted_top in [given[i, hypothesis][1]]]
    assert all(new <= old for new, old in closeness)
    assert any(new < old for new, old in closeness)


def ter(hypothesis: str, reference: str) -> float:
    return float(ter_from_stats(ter_stats([hypothesis], [[reference]])[0]))


def test_a_targeted_run_fanned_out_over_jobs_returns_what_the_loop_returns(
        tmp_path, small_grammars, fanned_out):
    """Each shard job paraphrases with its own hook and cache part; the references, and so the
    run, are those of the in-process run (a reference's pairs stay in one shard)."""
    translation, paraphrases, lm = small_grammars
    sentences = ["la casa es pequeña", "el perro es pequeña", "la casa es grande"]
    references = ["the house is small", "the dog is small", "the house is big"]

    def hook_for(name, cache):
        paraphraser = TargetedParaphraser(
            paraphrases, lm, PARAPHRASER_WEIGHTS, ParaphraserConfig(0.0, -2.0),
            DecoderSettings(k=5), "forest", 2, Reranker(), lm, depth=2, workers=1)
        return TargetedReferences(references, paraphraser, 2,
                                  ParaphraseCache(cache, "k", 2), name)

    weights = {"f1": 1.0, "f2": 0.1, "lm": 0.05, "word_penalty": 0.0, "phrase_penalty": 0.0,
               "glue": 0.0, "oov": -1.0}
    settings = TuningSettings(max_iterations=3, seed=0, mert=MertSettings(restarts=2))
    with hook_for("run", tmp_path / "loop-cache") as hook:
        whole = tune(sentences, [[r] for r in references], translation, lm, weights,
                     DecoderSettings(k=4), settings, references_for=hook)
    shard_hooks = []
    result, _ = fanned_out(tmp_path / "jobs", sentences, [[r] for r in references], translation,
                           lm, weights, settings, DecoderSettings(k=4), 2,
                           lambda name: shard_hooks.append(hook_for(name, tmp_path / "jobs-cache"))
                           or shard_hooks[-1])
    assert hook.paraphrased > len(sentences) and len(whole.log) >= 2
    # a shard job of iteration i is shown iterations 1..i-1, so its forests are the run's first
    assert len(shard_hooks) == 2 * len(whole.log) and all(
        shard.forest_words[reference] == hook.forest_words[reference]
        for shard in shard_hooks for reference in shard.forest_words)
    pd.testing.assert_frame_equal(result.log_frame(), whole.log_frame())
    assert result.weights == whole.weights
    parts = sorted(path.name for path in (tmp_path / "jobs-cache").iterdir())
    assert parts[0] == "k-it1.shard0-0000.parquet" and "k-it1.shard1-0000.parquet" in parts


def test_the_set_up_finds_its_bias_grammar_by_name_not_by_float_equality(tmp_path):
    """A bias read back from a table or computed (0.1 + 0.2 - 0.2 is not 0.1) names the same
    grammar as the config's 0.1; a bias the config has no grammar for is refused by name."""
    weights = tmp_path / "paraphraser.txt"
    write_weights(weights, {"lm": 1.0, "target": 0.0})
    params = {"biases": [0.0, 0.05, 0.1], "nbest": 5, "search": "forest", "forest_beam": 2,
              "rerank": None, "cache": str(tmp_path / "cache"), "depth": 3,
              "point": {"bias": 0.1 + 0.2 - 0.2, "weight": -1.0}}
    grammars = [f"bias{b}.parquet" for b in ("0", "0.05", "0.1")]
    setup = targeted_setup(TargetedSettings.from_config(params), None, grammars, "3gram.binary",
                           weights, "5gram.binary", DecoderSettings())
    assert setup.grammar_path == "bias0.1.parquet" and setup.settings.k == 5
    with pytest.raises(ValueError, match=r"bias 0.25 has no grammar .*\['0', '0.05', '0.1'\]"):
        targeted_setup(TargetedSettings.from_config(
            {**params, "point": {"bias": 0.25, "weight": -1.0}}), None, grammars,
            "3gram.binary", weights, "5gram.binary", DecoderSettings())


def test_the_paraphrasers_reranking_weight_is_left_to_the_targeted_reranker(tmp_path,
                                                                            small_grammars):
    """Paraphraser weights tuned with lm.rerank_nbest name lm_rerank: the targeted set-up
    searches with the others (its Reranker scores with the reranking LM itself), so it makes
    the lists, and has the cache key, of the same weights without it."""
    _, paraphrases, lm = small_grammars
    params = {"biases": [0.0], "nbest": 5, "search": "exact", "forest_beam": 1,
              "rerank": {"lm": 1.0, "distance": 1.0, "paraphraser": 0.0},
              "cache": str(tmp_path / "cache"), "depth": 2,
              "point": {"bias": 0.0, "weight": -2.0}}
    setups = {}
    for name, weights in (("plain", PARAPHRASER_WEIGHTS),
                          ("reranked", {**PARAPHRASER_WEIGHTS, RERANK_FEATURE: 0.8})):
        write_weights(tmp_path / f"{name}.txt", weights)
        setups[name] = replace(targeted_setup(
            TargetedSettings.from_config(params), None, ["bias0.parquet"], lm,
            tmp_path / f"{name}.txt", lm, DecoderSettings()), grammar_path=paraphrases)
    assert setups["reranked"].paraphraser_weights == PARAPHRASER_WEIGHTS
    assert setups["reranked"].key == setups["plain"].key
    pairs = [(0, "the home is little"), (1, "the hound 's little")]
    lists = {}
    for name, setup in setups.items():
        with setup.references(["the house is small", "the dog is small"], 2, name, 1) as hook:
            lists[name] = [hook(index, hypothesis) for index, hypothesis in pairs]
    assert lists["reranked"] == lists["plain"]
    assert lists["plain"][0][1] == "the home is little"
