"""circle.decoder.rerank: the thesis's reranking of n-best lists with the reranking LM, in the
decoder's lists, the tuning pool, the decode stage's tables, the untargeted paraphrases, the
grid sample and the per-iteration test decodes.

The toy grammar of test_tune_loop translates each Spanish word rightly or wrongly; here the
decoder's trigram knows only the tiny corpus's Bible English, while the 5-gram reranking LM is
estimated on the toy references' English, so only the reranking feature tells the right
translations from the wrong ones.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import kenlm
import pandas as pd
import pytest
from test_tune_loop import BAD_WEIGHTS, LM_TEXT, REFERENCES, RULES, SENTENCES

from circle.core.schemas import EVALSET
from circle.core.tables import read_metadata, write_table
from circle.decoder import DecoderSettings, Grammar, decode_corpus, write_weights
from circle.decoder.model import RERANK_FEATURE, Model
from circle.decoder.rerank import NBestReranker, split_rerank_weight
from circle.decoder.sets import RecordedDecode, gather_nbest, write_nbest
from circle.experiments.evaluate import corpus_bleu
from circle.experiments.iterations import score_iterations
from circle.experiments.length_matching import match_length
from circle.lm import estimate_lm
from circle.paraphrase.grid_search import make_grid_sample
from circle.tune.loop import TuningSettings, tune, write_tuning_run
from circle.tune.mert import MertSettings

TINY_ENGLISH = Path(__file__).resolve().parents[1] / "data" / "tiny" / "train.en.txt"
DECODER = DecoderSettings(k=5)


@pytest.fixture(scope="module")
def grammar() -> Grammar:
    frame = pd.DataFrame(RULES, columns=["lhs", "source", "target", "f1", "f2"])
    return Grammar.from_frame(frame, ["f1", "f2"])


@pytest.fixture(scope="module")
def lms(tmp_path_factory):
    """(decoding trigram on the tiny corpus's English, 5-gram reranking LM on the toy text)."""
    directory = tmp_path_factory.mktemp("rerank_lms")
    bible, toy = directory / "bible.txt", directory / "toy.txt"
    bible.write_text(TINY_ENGLISH.read_text(encoding="utf-8").lower(), encoding="utf-8")
    toy.write_text("\n".join(LM_TEXT * 2) + "\n", encoding="utf-8")
    estimate_lm([bible], 3, directory / "3gram.binary", discount_fallback=True, memory="50M")
    estimate_lm([toy], 5, directory / "5gram.binary", discount_fallback=True, memory="50M")
    return directory / "3gram.binary", directory / "5gram.binary"


def test_the_feature_is_kenlms_score_of_the_string_with_sentence_boundaries(lms):
    reranker = NBestReranker(lms[1], 0.0)
    model = kenlm.Model(str(lms[1]))
    assert model.order == 5
    for text in ["the black dog sleeps", "the dog and the cat sleep", "hound dark rests", ""]:
        expected = model.score(text, bos=True, eos=True) * math.log(10)
        assert reranker.value(text) == pytest.approx(expected, rel=1e-12)
        by_words = sum(score for score, _, _ in model.full_scores(text, bos=True, eos=True))
        assert reranker.value(text) == pytest.approx(by_words * math.log(10), rel=1e-6)
    assert reranker.value("the black dog sleeps") > reranker.value("the dark hound rests")


def test_with_weight_zero_the_lists_are_the_decoders_with_one_more_feature(grammar, lms):
    plain = decode_corpus(SENTENCES, grammar, lms[0], BAD_WEIGHTS, DECODER)
    reranked = decode_corpus(SENTENCES, grammar, lms[0], BAD_WEIGHTS, DECODER,
                             rerank_lm=lms[1])
    model = kenlm.Model(str(lms[1]))
    for before, after in zip(plain, reranked, strict=True):
        assert [h.text for h in after] == [h.text for h in before]
        assert [h.score for h in after] == [h.score for h in before]
        for old, new in zip(before, after, strict=True):
            assert list(new.features) == [*old.features, RERANK_FEATURE]
            assert new.features[RERANK_FEATURE] == pytest.approx(
                model.score(new.text, bos=True, eos=True) * math.log(10))


def test_the_reranked_one_best_is_the_argmax_of_the_list_under_all_the_weights(grammar, lms):
    weights = {**BAD_WEIGHTS, RERANK_FEATURE: 0.5}
    plain = decode_corpus(SENTENCES, grammar, lms[0], BAD_WEIGHTS, DECODER)
    reranked = decode_corpus(SENTENCES, grammar, lms[0], weights, DECODER, rerank_lm=lms[1])
    model = Model(["f1", "f2"], weights, rerank=True)
    changed = 0
    for before, after in zip(plain, reranked, strict=True):
        dots = [model.dot(list(h.features.values())) for h in after]
        assert [h.score for h in after] == pytest.approx(dots)
        assert dots == sorted(dots, reverse=True)
        assert sorted(h.text for h in after) == sorted(h.text for h in before)
        changed += after[0].text != before[0].text
    assert changed > 0  # the reranking LM changes some 1-best outputs


def test_weights_naming_the_feature_need_a_reranking_lm(grammar, lms):
    with pytest.raises(ValueError, match="lm_rerank.*no reranking LM"):
        decode_corpus(SENTENCES[:1], grammar, lms[0], {**BAD_WEIGHTS, RERANK_FEATURE: 0.1})


@pytest.fixture(scope="module")
def tuned(grammar, lms):
    """A run whose rule features keep their bad weights: the reranking LM's is the free weight
    that can tell right from wrong translations."""
    settings = TuningSettings(max_iterations=4, seed=0, mert=MertSettings(restarts=3))
    return tune(SENTENCES, REFERENCES, grammar, lms[0], BAD_WEIGHTS, DecoderSettings(k=10),
                settings, fixed=("target", "oov", "f1", "f2"), rerank_lm=lms[1])


def test_tuning_pools_the_feature_and_mert_moves_its_weight_from_zero(tuned, lms):
    assert tuned.feature_names[-1] == RERANK_FEATURE
    assert RERANK_FEATURE in tuned.weights
    assert tuned.log[0].weights[-1] == 0.0  # the start weight
    assert tuned.weights[RERANK_FEATURE] > 0.0
    assert tuned.returned.decode_score > tuned.log[0].decode_score
    model = kenlm.Model(str(lms[1]))
    _, texts, features, _ = tuned.pool.rows(0)
    assert features[:, -1] == pytest.approx([model.score(t, bos=True, eos=True) * math.log(10)
                                    for t in texts])


def test_decode_stage_tables_carry_the_feature_and_their_one_best_is_the_argmax(
        grammar, lms, tuned, tmp_path):
    """The decode stage's table of the tuned weights (as decode_shard writes it): feature
    names and weights recorded, read back as the recorded decode of those weights, its 1-best
    text the argmax of each list under the tuned weights; the common-length re-ranking ranks by
    the table's scores, which include the feature, so at δ = 0 it picks the same 1-best."""
    weights = tuned.weights
    outputs = decode_corpus(SENTENCES, grammar, lms[0], weights, DECODER, rerank_lm=lms[1])
    names = Model(grammar.feature_names, weights, rerank=True).names
    shard = tmp_path / "shard0.parquet"
    write_nbest(list(range(len(SENTENCES))), outputs, names, shard, None,
                {"weights": json.dumps(weights, sort_keys=True)})
    table = tmp_path / "test.parquet"
    gather_nbest([shard], table, tmp_path / "test.nbest.txt", tmp_path / "test.1best.txt",
                 tmp_path / "test.1best.detok.txt", "en")
    assert json.loads(read_metadata(table)["feature_names"])[-1] == RERANK_FEATURE
    assert "lm_rerank= " in (tmp_path / "test.nbest.txt").read_text(encoding="utf-8")
    recorded = RecordedDecode.read(table, list(range(len(SENTENCES))))
    assert recorded.lists_for(weights) is not None
    model = Model(grammar.feature_names, weights, rerank=True)
    argmax = [max(hs, key=lambda h: model.dot(list(h.features.values()))).text
              for hs in recorded.lists]
    assert (tmp_path / "test.1best.txt").read_text(encoding="utf-8").splitlines() == argmax
    match = match_length([[h.score for h in hs] for hs in recorded.lists],
                         [[len(h.text.split()) for h in hs] for hs in recorded.lists],
                         sum(len(hs[0].text.split()) for hs in recorded.lists))
    assert match.delta == 0.0 and set(match.choices) == {0}


def test_a_decode_without_the_feature_is_not_a_recorded_decode_of_weights_with_it(
        grammar, lms, tmp_path):
    outputs = decode_corpus(SENTENCES, grammar, lms[0], BAD_WEIGHTS, DECODER)
    table = tmp_path / "untuned.parquet"
    write_nbest(list(range(len(SENTENCES))), outputs,
                Model(grammar.feature_names, BAD_WEIGHTS).names, table, None,
                {"weights": json.dumps(BAD_WEIGHTS)})
    recorded = RecordedDecode.read(table, list(range(len(SENTENCES))))
    without, with_feature = (Model(grammar.feature_names, BAD_WEIGHTS, rerank)
                             for rerank in (False, True))
    assert recorded.lists_for(dict(zip(without.names, without.weights, strict=True)))
    assert recorded.lists_for(dict(zip(with_feature.names, with_feature.weights,
                                       strict=True))) is None


@pytest.fixture(scope="module")
def toy_set(tmp_path_factory):
    """The toy sentences and their references as an evaluation-set table."""
    path = tmp_path_factory.mktemp("toy_set") / "set.parquet"
    write_table(pd.DataFrame({"segment_id": range(len(SENTENCES)), "document": "toy",
                              "source": SENTENCES, "references": REFERENCES,
                              "ref_order": [list(range(len(refs))) for refs in REFERENCES]}),
                path, EVALSET)
    return path


def reranked_one_best(grammar, lms, weights) -> list[str]:
    """The 1-best of each toy sentence's reranked 5-best list."""
    return [hs[0].text for hs in decode_corpus(SENTENCES, grammar, lms[0], weights, DECODER,
                                               rerank_lm=lms[1])]


def test_the_grid_samples_mt_output_is_the_reranked_one_best(grammar, lms, toy_set, tmp_path):
    """With the reranking LM the sample's 1-best is that of the decoder's 5-best list
    reranked, not of a 1-best list: some differ from the search's own 1-best."""
    weights = {**BAD_WEIGHTS, RERANK_FEATURE: 0.5}
    write_weights(tmp_path / "1H.txt", weights)
    sample = make_grid_sample(toy_set, grammar, lms[0], tmp_path / "1H.txt", len(SENTENCES), 0,
                              DECODER, 1, tmp_path / "sample.parquet", rerank_lm_path=lms[1])
    expected = dict(enumerate(reranked_one_best(grammar, lms, weights)))
    assert list(sample["mt_output"]) == [expected[s] for s in sample["segment_id"]]
    plain = [hs[0].text for hs in decode_corpus(SENTENCES, grammar, lms[0], BAD_WEIGHTS,
                                                DECODER)]
    assert list(expected.values()) != plain


def test_each_iterations_test_decode_is_reranked_as_in_tuning(grammar, lms, tuned, toy_set,
                                                              tmp_path):
    write_tuning_run(tuned, tmp_path / "run.txt", tmp_path / "run.parquet", None, None)
    scores = score_iterations(tmp_path / "run.parquet", toy_set, grammar, lms[0], DECODER, 1,
                              "run", tmp_path / "scores.parquet", rerank_lm_path=lms[1])
    assert len(scores) == len(tuned.log)
    reordered = 0
    for entry, bleu in zip(tuned.log, scores["test_bleu"], strict=True):
        weights = dict(zip(tuned.feature_names, entry.weights, strict=True))
        best = reranked_one_best(grammar, lms, weights)
        assert bleu == pytest.approx(corpus_bleu(best, REFERENCES).value)
        search, _ = split_rerank_weight(weights)
        reordered += best != [hs[0].text for hs in decode_corpus(
            SENTENCES, grammar, lms[0], search, DECODER, k=1)]
    assert reordered  # a 1-best list would not have been reranked
    with pytest.raises(ValueError, match="lm_rerank.*no reranking LM"):
        score_iterations(tmp_path / "run.parquet", toy_set, grammar, lms[0], DECODER, 1, "run",
                         tmp_path / "without.parquet")
