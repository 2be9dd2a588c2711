"""circle.tune.loop: the MERT outer loop on a real tiny grammar and a real lmplz language model.

Every Spanish word has a right and a wrong English translation; the wrong one is better on
feature f1, the right one on f2 and the language model. The initial weights favour f1, so the
initial 1-best is almost all wrong and tuning must find weights that translate correctly.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from circle.core.schemas import TUNING_CHECKPOINT, TUNING_LOG
from circle.core.tables import read_metadata, read_table
from circle.decoder import DecoderSettings, Grammar, decode_corpus
from circle.decoder.sets import RecordedDecode, write_nbest
from circle.experiments.conditions import TuningRun, run_seed, tuning_params
from circle.experiments.evaluate import corpus_bleu, corpus_ter
from circle.experiments.mt_tuning import run_tuning_settings
from circle.lm import estimate_lm
from circle.tune import fanout, loop
from circle.tune.checkpoint import Checkpoint, StaleIteration, read_iteration
from circle.tune.loop import TuningSettings, tune, write_tuning_log
from circle.tune.mert import MertSettings
from circle.tune.pro import ProSettings

RIGHT, WRONG = (-1.5, -0.1), (-0.1, -1.5)
WORDS = [("la", "the", "her"), ("casa", "house", "home"), ("es", "is", "'s"),
         ("pequeña", "small", "little"), ("el", "the", "him"), ("perro", "dog", "hound"),
         ("grande", "big", "large"), ("y", "and", "plus"), ("gato", "cat", "kitty"),
         ("come", "eats", "dines"), ("duerme", "sleeps", "rests")]
RULES = [("X", source, right, *RIGHT) for source, right, _ in WORDS] \
    + [("X", source, wrong, *WRONG) for source, _, wrong in WORDS] \
    + [("X", "[X,1] negro", "black [X,1]", *RIGHT), ("X", "[X,1] negro", "[X,1] dark", *WRONG)]
SENTENCES = ["la casa es pequeña", "el perro es grande", "el gato come", "la casa es grande",
             "el perro negro duerme", "el gato negro come", "el perro y el gato duermen",
             "la casa negro es pequeña"]
REFERENCES = [["the house is small"], ["the dog is big", "the dog is large"], ["the cat eats"],
              ["the house is big"], ["the black dog sleeps"], ["the black cat eats"],
              ["the dog and the cat sleep"], ["the black house is small"]]
LM_TEXT = [r for refs in REFERENCES for r in refs] + [
    "the cat and the dog eat", "a small black cat sleeps", "the big house is black"]
BAD_WEIGHTS = {"f1": 1.0, "f2": 0.1, "lm": 0.05, "word_penalty": 0.0, "phrase_penalty": 0.0,
               "glue": 0.0, "oov": -1.0}
DECODER = DecoderSettings(k=3)
MERT = TuningSettings(max_iterations=8, seed=0, mert=MertSettings(restarts=5))
NAMES = ("f1", "f2", "lm", "word_penalty", "phrase_penalty", "glue", "oov", "target")


@pytest.fixture(scope="module")
def grammar() -> Grammar:
    frame = pd.DataFrame(RULES, columns=["lhs", "source", "target", "f1", "f2"])
    return Grammar.from_frame(frame, ["f1", "f2"])


@pytest.fixture(scope="module")
def lm_path(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tune_lm")
    text = directory / "lm.txt"
    text.write_text("\n".join(LM_TEXT * 2) + "\n", encoding="utf-8")
    estimate_lm([text], 3, directory / "lm.binary", discount_fallback=True, memory="50M")
    return directory / "lm.binary"


@pytest.fixture(scope="module")
def tuned(grammar, lm_path):
    return tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, MERT)


def one_best(grammar, lm_path, weights) -> list[str]:
    return [hs[0].text for hs in decode_corpus(SENTENCES, grammar, lm_path, weights,
                                               DecoderSettings(k=1))]


def bleu(hypotheses, references=REFERENCES) -> float:
    return corpus_bleu(hypotheses, references).value / 100


def test_tuning_from_bad_weights_improves_bleu(tuned, grammar, lm_path):
    before = bleu(one_best(grammar, lm_path, BAD_WEIGHTS))
    after = bleu(one_best(grammar, lm_path, tuned.weights))
    assert before < 0.1 and after > 0.8
    log = tuned.log
    assert log[0].decode_score == pytest.approx(before, abs=1e-12)
    assert [e.iteration for e in log] == list(range(1, len(log) + 1)) and len(log) >= 2
    assert [e.stop_reason is None for e in log] == [True] * (len(log) - 1) + [False]
    assert np.cumsum([e.new_hypotheses for e in log]).tolist() == [e.pool_size for e in log]
    assert len(tuned.pool) == log[-1].pool_size
    assert list(tuned.weights) == list(NAMES)


def test_the_best_decoded_weights_are_returned(tuned, grammar, lm_path):
    scores = [e.decode_score for e in tuned.log]
    returned = tuned.returned
    assert [e.returned for e in tuned.log].count(True) == 1
    assert returned.decode_score == max(scores)  # Moses --return-best-dev
    assert scores.index(max(scores)) == returned.iteration - 1  # the earliest of ties
    assert tuned.weights == dict(zip(NAMES, returned.weights, strict=True))
    assert bleu(one_best(grammar, lm_path, tuned.weights)) == pytest.approx(
        returned.decode_score, abs=1e-12)


def test_logged_weights_reproduce_the_logged_scores(tuned, grammar, lm_path, tmp_path):
    tuned.pool.save(tmp_path / "pool.npz")
    with np.load(tmp_path / "pool.npz") as saved:  # rows in the order they joined the pool
        segments, texts = saved["segment_ids"], saved["hypotheses"]
        features = saved["features"]
    for number, entry in enumerate(tuned.log):
        decoded = one_best(grammar, lm_path, dict(zip(NAMES, entry.weights, strict=True)))
        assert entry.decode_score == pytest.approx(bleu(decoded), abs=1e-12)
        if entry.pool_score is None or number + 1 == len(tuned.log):  # chose nothing new
            continue
        following = tuned.log[number + 1].weights  # the weights this iteration chose
        scores = features[:entry.pool_size] @ np.array(following)
        chosen = []
        for segment in range(len(SENTENCES)):
            rows = np.flatnonzero(segments[:entry.pool_size] == segment)
            chosen.append(str(texts[rows[np.argmax(scores[rows])]]))
        assert entry.pool_score == pytest.approx(bleu(chosen), abs=1e-12)


def test_the_last_optimised_weights_are_decoded_before_the_run_ends(grammar, lm_path):
    settings = TuningSettings(max_iterations=1, seed=0, mert=MertSettings(restarts=2))
    result = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, settings)
    assert len(result.log) == 2 and result.log[-1].pool_score is None
    assert result.stop_reason == "reached 1 optimisations (the last one decoded)"
    assert result.log[1].decode_score > result.log[0].decode_score
    assert result.returned.iteration == 2


def test_weights_that_win_on_the_pool_but_collapse_when_decoded_are_not_returned(
        grammar, lm_path, monkeypatch):
    # An optimiser that, like MERT on a flat first pool, moves to weights that reward the
    # wrong translations: the run must still return its best *decoded* weights.
    collapse = np.array([5.0, -5.0, -1.0, 3.0, 0.0, 0.0, 0.0])  # f1 up, f2 and the LM down

    def overfitting_optimiser(pool, metric, start, settings, rng, box=None, workers=1):
        return collapse.copy(), 1.0

    monkeypatch.setattr(loop, "optimise", overfitting_optimiser)
    start = {**BAD_WEIGHTS, "f1": 0.1, "f2": 1.0, "lm": 0.5}
    settings = TuningSettings(max_iterations=2, seed=0, bounds=())
    result = tune(SENTENCES, REFERENCES, grammar, lm_path, start, DECODER, settings)
    first = result.log[0].decode_score
    assert first > 0.5 and result.log[1].decode_score < first  # the candidate collapsed
    assert result.returned.iteration == 1
    assert result.weights == {**start, "target": 0.0}


def test_sign_constraints_keep_the_lm_and_log_probabilities_non_negative(grammar, lm_path):
    bounds = (("f*", 0.0, None), ("lm", 0.0, None))
    result = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER,
                  TuningSettings(max_iterations=4, seed=1, bounds=bounds,
                                 mert=MertSettings(restarts=8)))
    for entry in result.log:
        weights = dict(zip(NAMES, entry.weights, strict=True))
        assert weights["f1"] >= 0 and weights["f2"] >= 0 and weights["lm"] >= 0
    with pytest.raises(ValueError, match="outside the tuning bounds"):
        tune(SENTENCES, REFERENCES, grammar, lm_path, {**BAD_WEIGHTS, "lm": -0.1}, DECODER,
             TuningSettings(bounds=bounds))


def test_a_first_pool_from_perturbed_weights_holds_more_hypotheses(grammar, lm_path):
    plain = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER,
                 TuningSettings(max_iterations=1, seed=0))
    wide = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER,
                TuningSettings(max_iterations=1, seed=0, first_pool=3))
    assert wide.log[0].new_hypotheses > plain.log[0].new_hypotheses
    assert wide.log[0].decode_score == plain.log[0].decode_score  # scored at the start only
    assert set(zip(plain.pool.segment_ids, plain.pool.hypotheses, strict=True)) <= set(
        zip(wide.pool.segment_ids, wide.pool.hypotheses, strict=True))


def _first_iteration(grammar, lm_path, run, replicate_pool):
    tuning = {"restarts": 0, "max_iterations": 1, "replicate_pool": replicate_pool}
    settings = run_tuning_settings(run, tuning, run.seed(13))
    return tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, settings)


def test_two_replicates_of_a_condition_tune_from_different_pools(grammar, lm_path):
    # without restarts MERT is deterministic: the seed alone made the replicates one run
    replicates = [TuningRun.of("1H", r) for r in (0, 1)]
    alike = [_first_iteration(grammar, lm_path, run, 0) for run in replicates]
    assert alike[0].log[0].weights == alike[1].log[0].weights
    assert alike[0].weights == alike[1].weights
    assert alike[0].pool.hypotheses == alike[1].pool.hypotheses
    # each replicate's own perturbation of the start joins its first pool and is where its
    # first optimisation continues from: different pools and paths, the same start decoded
    own = [_first_iteration(grammar, lm_path, run, 1) for run in replicates]
    pools = [set(zip(r.pool.segment_ids, r.pool.hypotheses, strict=True)) for r in own]
    assert pools[0] != pools[1]
    assert own[0].log[0].weights == own[1].log[0].weights == alike[0].log[0].weights
    assert own[0].log[0].decode_score == alike[0].log[0].decode_score
    assert own[0].log[1].weights != own[1].log[1].weights


def test_a_targeted_run_draws_no_perturbations_of_its_start():
    tuning = {"first_pool": 2, "replicate_pool": 1, "conditions": ["1H"]}
    assert TuningRun.of("1H+1T", 0).start == "1H.rep0"
    assert run_tuning_settings(TuningRun.of("1H+1T", 0), tuning, 5).replicate_pool == 0
    assert TuningRun.of("2H", 0).start == "untuned-translation"
    settings = run_tuning_settings(TuningRun.of("2H", 0), tuning, 5)
    assert settings.replicate_pool == 1 and settings.first_pool == 2 and settings.seed == 5
    assert "replicate_pool" not in tuning_params(tuning)  # the paraphraser's run
    assert tuning_params(tuning, TuningRun.of("2H_ter", 0).condition) == {
        "first_pool": 2, "replicate_pool": 1, "metric": "ter"}


def test_every_condition_and_replicate_gets_its_own_seed():
    runs = [f"{condition}.rep{r}" for condition in ("1H", "2H", "1H+1P") for r in range(3)]
    seeds = [run_seed(13, run) for run in runs]
    assert len(set(seeds)) == len(seeds)
    assert seeds == [run_seed(13, run) for run in runs]  # stable
    assert run_seed(14, "1H.rep0") != run_seed(13, "1H.rep0")


def test_settings_from_the_config():
    settings = TuningSettings.from_config(
        {"optimizer": "pro", "restarts": 3, "max_iterations": 7, "first_pool": 2,
         "bounds": {"log_*": [0, None], "glue": [None, 0]}, "pro": {"interpolation": 0.3},
         "conditions": ["1H"]}, seed=5)
    assert settings.optimizer == "pro" and settings.seed == 5 and settings.max_iterations == 7
    assert settings.mert.restarts == 3 and settings.pro.interpolation == 0.3
    box = settings.box(["log_p", "glue", "lm"])
    assert list(box.lower) == [0, -np.inf, -np.inf] and list(box.upper) == [np.inf, 0, np.inf]
    assert list(box.restart_low) == [0, -1, -1] and list(box.restart_high) == [1, 0, 1]
    with pytest.raises(ValueError, match="unknown optimizer"):
        TuningSettings(optimizer="mira")


def test_target_weight_stays_fixed_and_free_weights_are_normalised(tuned):
    for entry in tuned.log[1:]:
        assert entry.weights[NAMES.index("target")] == 0.0
        assert sum(abs(w) for w in entry.weights) == pytest.approx(1.0)


def test_fixed_weights_with_per_segment_values_do_not_stop_normalisation(grammar, lm_path):
    # oov is the same for every hypothesis of a sentence: fixed at -10 it cannot change a
    # 1-best, so the tuned weights are still L1-normalised
    sentences = SENTENCES + ["el pájaro come"]
    references = REFERENCES + [["the pájaro eats"]]
    start = {**BAD_WEIGHTS, "oov": -10.0}
    result = tune(sentences, references, grammar, lm_path, start, DECODER,
                  TuningSettings(max_iterations=3, seed=0, mert=MertSettings(restarts=3)),
                  fixed=("target", "oov"))
    for entry in result.log[1:]:
        weights = dict(zip(NAMES, entry.weights, strict=True))
        assert weights["oov"] == -10.0
        assert sum(abs(v) for k, v in weights.items() if k not in ("oov", "target")) \
            == pytest.approx(1.0)


def test_nonzero_fixed_weights_anchor_the_scale(grammar, lm_path):
    start = {**BAD_WEIGHTS, "glue": 0.3, "target": -1.0}
    result = tune(SENTENCES, REFERENCES, grammar, lm_path, start, DECODER, MERT,
                  fixed=("target", "glue"))
    for entry in result.log:
        assert entry.weights[NAMES.index("glue")] == 0.3
        assert entry.weights[NAMES.index("target")] == -1.0
    assert result.weights["glue"] == 0.3 and result.weights["target"] == -1.0
    assert result.weights["f1"] != BAD_WEIGHTS["f1"]
    assert bleu(one_best(grammar, lm_path, result.weights)) > 0.8
    assert result.fixed == ("target", "glue")


def test_bad_names_are_rejected(grammar, lm_path):
    with pytest.raises(ValueError, match="not among the features"):
        tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, MERT,
             fixed=("targte",))
    with pytest.raises(ValueError, match="unknown"):
        tune(SENTENCES, REFERENCES, grammar, lm_path, {**BAD_WEIGHTS, "typo": 1.0}, DECODER,
             MERT)
    with pytest.raises(ValueError, match="reference lists"):
        tune(SENTENCES, REFERENCES[:-1], grammar, lm_path, BAD_WEIGHTS, DECODER, MERT)
    with pytest.raises(ValueError, match="every feature is fixed"):
        tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, MERT, fixed=NAMES)


class EchoReferences:
    """A reference hook: each hypothesis is its own reference; records every call."""

    def __init__(self):
        self.calls: list[tuple[int, str]] = []
        self.prepared: list[list[tuple[int, str]]] = []

    def prepare(self, pairs):
        self.prepared.append(pairs)

    def __call__(self, index, hypothesis):
        self.calls.append((index, hypothesis))
        return [hypothesis]


def test_reference_hook_gives_each_hypothesis_its_own_references(tuned, grammar, lm_path):
    hook = EchoReferences()
    result = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, MERT,
                  references_for=hook)
    assert all(e.pool_score == 1.0 and e.decode_score == 1.0 for e in result.log)
    assert tuned.log[0].decode_score < 0.1  # the default references score the same decode low
    pool_pairs = list(zip(result.pool.segment_ids, result.pool.hypotheses, strict=True))
    assert hook.calls == pool_pairs  # once per new (sentence, hypothesis), in pool order
    assert [pair for batch in hook.prepared for pair in batch] == pool_pairs
    assert len(hook.prepared) == sum(e.new_hypotheses > 0 for e in result.log)


def test_hook_returning_the_default_references_changes_nothing(tuned, grammar, lm_path):
    result = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, MERT,
                  references_for=lambda index, _hypothesis: REFERENCES[index])
    pd.testing.assert_frame_equal(result.log_frame(), tuned.log_frame())


def test_tuning_is_deterministic_and_seeded(tuned, grammar, lm_path):
    again = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, MERT)
    pd.testing.assert_frame_equal(again.log_frame(), tuned.log_frame())
    assert again.weights == tuned.weights


def test_ter_tuning_lowers_ter(grammar, lm_path):
    settings = TuningSettings(metric="ter", max_iterations=8, seed=0,
                              mert=MertSettings(restarts=5))
    result = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, settings)
    assert result.metric == "ter"
    before = corpus_ter(one_best(grammar, lm_path, BAD_WEIGHTS), REFERENCES).value / 100
    after = corpus_ter(one_best(grammar, lm_path, result.weights), REFERENCES).value / 100
    assert result.log[0].decode_score == pytest.approx(before, abs=1e-9)
    assert after < before - 0.3
    assert result.returned.decode_score == min(e.decode_score for e in result.log)


def test_tuning_log_table_round_trips(tuned, tmp_path):
    path = tmp_path / "log.parquet"
    write_tuning_log(tuned, path)
    table = read_table(path, TUNING_LOG)
    meta = read_metadata(path)
    assert json.loads(meta["feature_names"]) == list(NAMES)
    assert json.loads(meta["fixed_features"]) == ["target"]
    assert json.loads(meta["final_weights"]) == tuned.weights
    assert len(table) == len(tuned.log)
    assert [list(w) for w in table["weights"]] == [list(e.weights) for e in tuned.log]
    assert table["decode_score"].tolist() == [e.decode_score for e in tuned.log]
    assert table["returned"].tolist() == [e.returned for e in tuned.log]
    assert table["stop_reason"].iloc[-1] == tuned.stop_reason
    assert table["stop_reason"].iloc[:-1].isna().all()


def test_loop_stops_when_the_nbest_lists_bring_nothing_new(grammar, lm_path):
    # k covers every output of these short sentences, so the second decode adds nothing
    result = tune(SENTENCES[:3], REFERENCES[:3], grammar, lm_path, BAD_WEIGHTS,
                  DecoderSettings(k=500), MERT)
    assert len(result.log) == 2
    last = result.log[-1]
    assert last.new_hypotheses == 0 and last.pool_score is None
    assert last.stop_reason == "no new hypotheses in the n-best lists"
    assert bleu(one_best(grammar, lm_path, result.weights)[:3], REFERENCES[:3]) \
        == pytest.approx(1.0)


def test_pro_tunes_through_the_same_loop(grammar, lm_path):
    settings = TuningSettings(optimizer="pro", max_iterations=6, seed=0,
                              pro=ProSettings(interpolation=1.0))
    result = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, settings)
    assert result.returned.decode_score > result.log[0].decode_score + 0.3
    assert bleu(one_best(grammar, lm_path, result.weights)) == pytest.approx(
        result.returned.decode_score, abs=1e-12)
    hook = EchoReferences()  # per-hypothesis references reach PRO's statistics too
    echoed = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, settings,
                  references_for=hook)
    assert all(e.decode_score == 1.0 for e in echoed.log) and hook.calls
    with pytest.raises(ValueError, match="PRO cannot tune"):
        tune(SENTENCES, REFERENCES, grammar, lm_path, {**BAD_WEIGHTS, "glue": 0.3}, DECODER,
             settings, fixed=("target", "glue"))


class Interrupted(Exception):
    """Stands for a kill in the middle of a tuning run."""


class CountingDecoder:
    """decode_corpus, counting its calls; raises :class:`Interrupted` on call ``fail_at``."""

    def __init__(self, fail_at: int | None = None):
        self.calls, self.fail_at = 0, fail_at

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls == self.fail_at:
            raise Interrupted
        return decode_corpus(*args, **kwargs)


class RecordingReferences:
    """A reference hook giving the default references; records the pairs it is asked for and
    those of the saved iterations it is shown."""

    def __init__(self):
        self.calls: list[tuple[int, str]] = []
        self.restored: list[list[tuple[int, str]]] = []

    def restore(self, pairs):
        self.restored.append(pairs)

    def __call__(self, index, hypothesis):
        self.calls.append((index, hypothesis))
        return REFERENCES[index]


PRO = TuningSettings(optimizer="pro", max_iterations=8, seed=0)
RESUMABLE = {"mert": (MERT, DECODER), "pro": (PRO, DecoderSettings(k=2))}
"""Runs of 2 (MERT) and 6 (PRO, whose sampling draws from the iteration's generator)
iterations."""


def interrupted(grammar, lm_path, checkpoint, monkeypatch, optimizer, iteration):
    """Run the ``optimizer`` run of :data:`RESUMABLE` with ``checkpoint`` until the decode of
    ``iteration`` is killed."""
    settings, decoder = RESUMABLE[optimizer]
    monkeypatch.setattr(loop, "decode_corpus", CountingDecoder(fail_at=iteration))
    with pytest.raises(Interrupted):
        tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, decoder, settings,
             references_for=RecordingReferences(), checkpoint=checkpoint)
    assert sorted(p.name for p in checkpoint.directory.iterdir()) == \
        [f"iteration-{n:04d}.parquet" for n in range(1, iteration)]


def pool_rows(result):
    segments, texts, features, stats = result.pool.rows()
    return segments, texts, features.tolist(), stats.tolist()


@pytest.mark.parametrize(("optimizer", "stop"), [("mert", 2), ("pro", 3), ("pro", 5)])
def test_an_interrupted_run_resumes_where_it_stopped_and_ends_as_if_never_stopped(
        optimizer, stop, grammar, lm_path, tmp_path, monkeypatch, caplog):
    settings, decoder_settings = RESUMABLE[optimizer]
    whole = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, decoder_settings,
                 settings)
    assert len(whole.log) >= stop  # the run reaches the killed iteration
    checkpoint = Checkpoint(tmp_path / "run.checkpoint", key="inputs")
    interrupted(grammar, lm_path, checkpoint, monkeypatch, optimizer, stop)
    decoder, hook = CountingDecoder(), RecordingReferences()
    monkeypatch.setattr(loop, "decode_corpus", decoder)
    with caplog.at_level("INFO", logger="circle.tune.checkpoint"):
        resumed = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, decoder_settings,
                       settings, references_for=hook, checkpoint=checkpoint)
    assert f"continuing at iteration {stop} (iterations 1 to {stop - 1} were done)" \
        in caplog.text
    assert decoder.calls == len(whole.log) - (stop - 1)  # saved iterations are not decoded
    pd.testing.assert_frame_equal(resumed.log_frame(), whole.log_frame())
    assert resumed.weights == whole.weights
    assert pool_rows(resumed) == pool_rows(whole)  # the frozen statistics included
    pairs = list(zip(resumed.pool.segment_ids, resumed.pool.hypotheses, strict=True))
    assert hook.calls == pairs[whole.log[stop - 2].pool_size:]  # saved pairs: not asked again
    assert [pair for batch in hook.restored for pair in batch] == \
        pairs[:whole.log[stop - 2].pool_size]  # but shown, iteration by iteration
    assert [len(batch) for batch in hook.restored] == \
        [entry.new_hypotheses for entry in whole.log[:stop - 1]]


@pytest.mark.parametrize("change", ["settings", "inputs", "corrupt file"])
def test_a_checkpoint_of_other_inputs_or_settings_is_ignored(
        change, grammar, lm_path, tmp_path, monkeypatch, caplog):
    checkpoint = Checkpoint(tmp_path / "run.checkpoint", key="inputs")
    interrupted(grammar, lm_path, checkpoint, monkeypatch, "pro", 3)
    settings, decoder_settings = RESUMABLE["pro"]
    if change == "settings":
        settings = TuningSettings(optimizer="pro", max_iterations=8, seed=1)
    if change == "inputs":
        checkpoint = Checkpoint(checkpoint.directory, key="rebuilt inputs")
    if change == "corrupt file":
        saved = checkpoint.directory / "iteration-0002.parquet"
        saved.write_bytes(saved.read_bytes()[:-100])
    monkeypatch.setattr(loop, "decode_corpus", decoder := CountingDecoder())
    with caplog.at_level("INFO", logger="circle.tune.checkpoint"):
        result = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, decoder_settings,
                      settings, checkpoint=checkpoint)
    assert "ignoring the checkpoint" in caplog.text and "continuing" not in caplog.text
    assert decoder.calls == len(result.log)  # every iteration decoded: started at 1
    monkeypatch.setattr(loop, "decode_corpus", decode_corpus)
    fresh = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, decoder_settings,
                 settings)
    pd.testing.assert_frame_equal(result.log_frame(), fresh.log_frame())


def test_the_checkpoint_of_a_job_lies_next_to_its_output_and_follows_its_inputs(tmp_path):
    source = tmp_path / "grammar.parquet"
    source.write_text("first")
    output = tmp_path / "tune" / "1H+1T.rep0.parquet"
    checkpoint = Checkpoint.for_output(output, [source], {"seed": 1})
    assert checkpoint.directory == tmp_path / "tune" / "1H+1T.rep0.checkpoint"
    assert Checkpoint.for_output(output, [source], {"seed": 1}).key == checkpoint.key
    assert Checkpoint.for_output(output, [source], {"seed": 2}).key != checkpoint.key
    source.write_text("rebuilt")
    assert Checkpoint.for_output(output, [source], {"seed": 1}).key != checkpoint.key


@pytest.mark.parametrize("shards", [1, 3])
@pytest.mark.parametrize("optimizer", ["mert", "pro"])
def test_a_run_fanned_out_over_jobs_returns_what_the_loop_returns(
        optimizer, shards, grammar, lm_path, tmp_path, fanned_out):
    settings, decoder_settings = RESUMABLE[optimizer]
    settings = replace(settings, first_pool=2)  # iteration 1 decodes three weight vectors
    checkpoint = Checkpoint(tmp_path / "loop", key="inputs")
    whole = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, decoder_settings,
                 settings, checkpoint=checkpoint)
    result, paths = fanned_out(tmp_path / "jobs", SENTENCES, REFERENCES, grammar, lm_path,
                               BAD_WEIGHTS, settings, decoder_settings, shards)
    assert len(whole.log) >= 2 and whole.log[0].new_hypotheses > 0
    pd.testing.assert_frame_equal(result.log_frame(), whole.log_frame())
    assert result.weights == whole.weights
    # every iteration's file is the one the in-process loop saves: same rows in pool order
    for path in paths:
        ours, theirs = read_table(path, TUNING_CHECKPOINT), read_table(
            checkpoint.directory / path.name, TUNING_CHECKPOINT)
        pd.testing.assert_frame_equal(ours, theirs)
        assert read_metadata(path)["next_weights"] == \
            read_metadata(checkpoint.directory / path.name)["next_weights"]


def test_shards_keep_the_sentences_of_one_reference_together():
    references = [["a"], ["b"], ["a", "x"], ["c"], ["b"], ["d"]]
    assert fanout.shard_of(references, 2) == [0, 1, 0, 0, 1, 1]
    assert fanout.shard_sentences(references, 2, 1) == [1, 4, 5]
    assert sorted(fanout.shard_sentences(references, 4, 0)
                  + fanout.shard_sentences(references, 4, 1)
                  + fanout.shard_sentences(references, 4, 2)
                  + fanout.shard_sentences(references, 4, 3)) == list(range(6))


def test_fanned_out_jobs_refuse_files_of_another_run_and_iterations_after_the_end(
        grammar, lm_path, tmp_path, fanned_out):
    settings, decoder_settings = RESUMABLE["mert"]
    result, paths = fanned_out(tmp_path, SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS,
                               settings, decoder_settings, 2)
    problem = loop.TuningProblem(grammar.feature_names, BAD_WEIGHTS, settings)
    other = Checkpoint(tmp_path, key="other inputs").fingerprint(
        problem.run_arguments(SENTENCES, REFERENCES, decoder_settings))
    with pytest.raises(StaleIteration, match="iteration-0001.parquet was written for other"):
        read_iteration(paths[0], other)
    with pytest.raises(StaleIteration, match="shard0.parquet: written for other"):
        fanout.read_shard(tmp_path / "iteration-0001.shard0.parquet", other,
                          problem.metric.n_stats)
    fingerprint = Checkpoint(tmp_path, key="inputs").fingerprint(
        problem.run_arguments(SENTENCES, REFERENCES, decoder_settings))
    saved = [read_iteration(path, fingerprint) for path in paths]
    builder = loop.PoolBuilder(problem, loop.default_hook(REFERENCES))
    with pytest.raises(ValueError, match=f"iteration {len(saved)} ended the run"):
        fanout.decode_shard(builder, saved, SENTENCES, [0], lambda *_: [])
    with pytest.raises(ValueError, match="given where iteration 1 belongs"):
        fanout.finish(problem, saved[1:])


def test_a_recorded_decode_of_the_start_weights_stands_in_for_the_first_one(
        tuned, grammar, lm_path, tmp_path, monkeypatch):
    """The decode stage's table at the start weights, read back, gives the run of a decode:
    same log and weights, one decoder call fewer; a table of other weights is not used."""
    segment_ids = [10 + i for i in range(len(SENTENCES))]
    for weights, name in ((BAD_WEIGHTS, "start"), ({**BAD_WEIGHTS, "f2": 0.2}, "other")):
        write_nbest(segment_ids, decode_corpus(SENTENCES, grammar, lm_path, weights, DECODER),
                    NAMES, tmp_path / f"{name}.parquet",
                    metadata={"weights": json.dumps(weights)})
    plain = CountingDecoder()
    monkeypatch.setattr(loop, "decode_corpus", plain)
    without = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, MERT)
    for name, saved_calls in (("start", 1), ("other", 0)):
        counting = CountingDecoder()
        monkeypatch.setattr(loop, "decode_corpus", counting)
        recorded = RecordedDecode.read(tmp_path / f"{name}.parquet", segment_ids)
        result = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, MERT,
                      recorded=recorded)
        decodes = result.log_frame().pop("decoded_sentences")
        pd.testing.assert_frame_equal(result.log_frame().drop(columns="decoded_sentences"),
                                      tuned.log_frame().drop(columns="decoded_sentences"))
        assert result.weights == tuned.weights == without.weights
        assert counting.calls == plain.calls - saved_calls
        # the log counts what was decoded: the recorded start's lists are not
        assert decodes.tolist() == [len(SENTENCES) * (1 - saved_calls)] \
            + [len(SENTENCES)] * (len(decodes) - 1)
    with pytest.raises(ValueError, match=r"start.parquet: no n-best list for segments \[99\]"):
        RecordedDecode.read(tmp_path / "start.parquet", [*segment_ids, 99])


def test_a_fanned_out_first_iteration_reads_the_recorded_start_decode(grammar, lm_path,
                                                                       tmp_path):
    """A shard of iteration 1 given the decode stage's lists at the start weights adds what
    decoding them adds, decodes the other vectors only, and counts only what it decoded; the
    count survives the shard file."""
    segment_ids = [10 + i for i in range(len(SENTENCES))]
    write_nbest(segment_ids, decode_corpus(SENTENCES, grammar, lm_path, BAD_WEIGHTS, DECODER),
                NAMES, tmp_path / "start.parquet", metadata={"weights": json.dumps(BAD_WEIGHTS)})
    recorded = RecordedDecode.read(tmp_path / "start.parquet", segment_ids)
    problem = loop.TuningProblem(grammar.feature_names, BAD_WEIGHTS, replace(MERT, first_pool=2))
    indices = fanout.shard_sentences(REFERENCES, 2, 1)
    decoded = []

    def decode(sources, weights):
        decoded.append(dict(weights))
        return decode_corpus(sources, grammar, lm_path, weights, DECODER)

    def shard(given):
        return fanout.decode_shard(loop.PoolBuilder(problem, loop.default_hook(REFERENCES)), [],
                                   SENTENCES, indices, decode, given)

    plain, read = shard(None), shard(recorded)
    vectors = len(problem.decoded_vectors(1, problem.start))
    assert vectors > 1 and len(indices) > 1
    assert plain.decoded_sentences == vectors * len(indices)
    assert read.decoded_sentences == (vectors - 1) * len(indices)
    assert decoded.count(problem.weights_of(problem.start)) == 1  # only without the record
    assert len(decoded) == 2 * vectors - 1
    for field in ("decodes", "sentences", "hypotheses", "one_best_sentences"):
        assert getattr(read, field) == getattr(plain, field)
    for field in ("features", "stats", "one_best_stats"):
        np.testing.assert_array_equal(getattr(read, field), getattr(plain, field))
    fanout.write_shard(read, tmp_path / "shard.parquet", problem.names, "key")
    again = fanout.read_shard(tmp_path / "shard.parquet", "key", problem.metric.n_stats)
    assert again.decoded_sentences == read.decoded_sentences


def logs(*scores: float) -> list[loop.IterationLog]:
    return [loop.IterationLog(i + 1, (), score, None, 1, i + 1) for i, score in enumerate(scores)]


def test_patience_counts_decodes_since_the_best_tuned_score():
    problem = loop.TuningProblem(("f1", "f2"), BAD_WEIGHTS, TuningSettings(patience=2))
    waited = problem.decodes_without_gain
    assert waited(logs(0.30, 0.35), 0.34) is None  # the best is one decode old
    assert waited(logs(0.30, 0.35, 0.34), 0.35) == 2  # a tie does not beat the earlier best
    assert waited(logs(0.30, 0.35, 0.34), 0.36) is None
    # the start's score is no best to wait on: the first optimisation often collapses
    assert waited(logs(0.30, 0.01, 0.20), 0.25) is None
    ter = loop.TuningProblem(("f1", "f2"), BAD_WEIGHTS, TuningSettings(metric="ter", patience=1))
    assert ter.decodes_without_gain(logs(0.60, 0.50), 0.55) == 1  # lower TER is better
    assert loop.TuningProblem(("f1", "f2"), BAD_WEIGHTS, TuningSettings()).decodes_without_gain(
        logs(0.30, 0.35, 0.34, 0.33), 0.32) is None  # no patience: no such stop
    with pytest.raises(ValueError, match="patience"):
        TuningSettings(patience=0)


def test_a_run_out_of_patience_stops_without_optimising(grammar, lm_path):
    problem = loop.TuningProblem(("f1", "f2"), BAD_WEIGHTS, TuningSettings(patience=2))
    builder = loop.PoolBuilder(problem, loop.default_hook(REFERENCES))
    nbests = decode_corpus(SENTENCES, grammar, lm_path, BAD_WEIGHTS, DECODER)
    new, score = builder.merge([builder.score(list(range(len(SENTENCES))), SENTENCES, [nbests])])
    start = problem.start
    stopped, weights = problem.step(builder, logs(0.30, 0.35, 0.34), start, new, 0.33)
    assert "iteration 2 was not beaten in 2 decodes" in stopped.stop_reason
    assert stopped.pool_score is None and weights is start
    going_on, weights = problem.step(builder, logs(0.30, 0.35, 0.34), start, new, 0.36)
    assert going_on.stop_reason is None and going_on.pool_score is not None
    assert not np.array_equal(weights, start)


def test_forest_mert_tunes_through_the_same_loop(grammar, lm_path, tuned):
    """line_search forest: the same loop, each optimisation over the decode's forests and the
    pool; its pool scores are of what it searched (forest envelopes included), and each
    iteration decodes the tune set once."""
    settings = replace(MERT, line_search="forest")
    result = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, settings)
    assert result.log[0].decode_score == tuned.log[0].decode_score
    assert bleu(one_best(grammar, lm_path, result.weights)) == pytest.approx(
        result.returned.decode_score, abs=1e-12)
    assert result.returned.decode_score > 0.8
    assert all(e.decoded_sentences == len(SENTENCES) for e in result.log)
    again = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, settings,
                 workers=2)  # forests sent from decoding workers, searched by forked ones
    assert (again.weights, again.log) == (result.weights, result.log)
    calls = []

    def echo(index, hypothesis):  # outputs of the envelopes are scored through the hook too
        calls.append((index, hypothesis))
        return [hypothesis]

    echoed = tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, settings,
                  references_for=echo)
    pooled = set(zip(echoed.pool.segment_ids, echoed.pool.hypotheses, strict=True))
    assert set(calls) > pooled


def test_forest_mert_refuses_what_has_no_forest(grammar, lm_path):
    with pytest.raises(ValueError, match="unknown line search"):
        TuningSettings(line_search="lattice")
    with pytest.raises(ValueError, match="optimizer pro has no line search"):
        TuningSettings(optimizer="pro", line_search="forest")
    settings = replace(MERT, line_search="forest")
    with pytest.raises(ValueError, match="reranking feature"):
        tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, settings,
             rerank_lm=lm_path)
    with pytest.raises(ValueError, match="prepares batches"):
        tune(SENTENCES, REFERENCES, grammar, lm_path, BAD_WEIGHTS, DECODER, settings,
             references_for=EchoReferences())
    problem = loop.TuningProblem(("f1", "f2"), BAD_WEIGHTS, settings)
    builder = loop.PoolBuilder(problem, loop.default_hook(REFERENCES))
    with pytest.raises(ValueError, match="a fanned-out run has none"):
        problem.step(builder, [], problem.start, 1, 0.5)


def test_an_unset_line_search_leaves_the_checkpoint_fingerprint_as_it_was():
    """Runs from before the option keep their checkpoints: the key enters a run's arguments
    only when it is set."""
    def arguments(settings):
        return loop.TuningProblem(("f1", "f2"), BAD_WEIGHTS, settings).run_arguments(
            SENTENCES, REFERENCES, DECODER)["settings"]

    assert "line_search" not in arguments(MERT)
    assert arguments(replace(MERT, line_search="forest"))["line_search"] == "forest"
    assert TuningSettings.from_config({"line_search": "forest"}, seed=1).line_search == "forest"
    assert TuningSettings.from_config({}, seed=1).line_search is None
    one_h = TuningRun.of("1H", 0).condition
    assert tuning_params({"line_search": None, "restarts": 3}, one_h) == {"restarts": 3}
    assert tuning_params({"line_search": "forest"}) == {"line_search": "forest"}
