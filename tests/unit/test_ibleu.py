"""iBLEU (Sun & Zhou 2012), the paraphraser's copy-penalising tuning metric: its statistics are
BLEU's against the references then BLEU's against the input, on the tiny corpus's verses and
checked against sacrebleu; and the paraphraser's MERT on it where BLEU makes a copier."""

import numpy as np
import pandas as pd
import pytest
from sacrebleu.metrics import BLEU
from snakemake.exceptions import WorkflowError
from test_identity_feature import (
    PARAPHRASES,
    SENTENCES,
    UNTUNED,
    hand_built,
    lm_path,
    paraphrased,
)
from test_metrics import perturb, tiny_verses
from test_plan import config

from circle.core.schemas import EVALSET, IDENTITY_FEATURE, TUNING_LOG
from circle.core.tables import read_metadata, read_table, write_table
from circle.decoder import DecoderSettings, decode_corpus, load_grammar, read_weights, write_weights
from circle.grammar.bias import bias_grammar
from circle.paraphrase.untargeted import tune_paraphraser
from circle.pipeline.plan import Plan
from circle.tune.loop import TuningSettings
from circle.tune.mert import MertSettings
from circle.tune.metrics import BLEU_STATS, IBleu, bleu_stats, get_metric

__all__ = ["lm_path"]  # a fixture the paraphraser's tuning below decodes with


def sacrebleu(hypotheses, references):
    """sacrebleu's corpus BLEU (fraction), one reference list per hypothesis of equal length."""
    streams = [list(stream) for stream in zip(*references, strict=True)]
    return BLEU(tokenize="none").corpus_score(hypotheses, streams).score / 100


def verses(seed, n=40):
    """Real verses as (input, references, hypothesis): the input a verse, its two references and
    the hypothesis perturbed copies of it (substitutions, drops, repeats)."""
    rng = np.random.default_rng(seed)
    lines = tiny_verses()
    words = sorted({token for line in lines for token in line.split()})
    inputs = [lines[i] for i in rng.choice(len(lines), n, replace=False)]
    references = [[" ".join(perturb(line.split(), rng, words, 0.2)) for _ in range(2)]
                  for line in inputs]
    hypotheses = [" ".join(perturb(line.split(), rng, words, 0.1)) for line in inputs]
    return inputs, references, hypotheses


@pytest.mark.parametrize("seed", range(3))
def test_each_half_is_sacrebleu_and_ibleu_combines_them(seed):
    inputs, references, hypotheses = verses(seed)
    metric = get_metric("ibleu:0.8")
    stats = metric.stats(hypotheses, [[i, *r] for i, r in zip(inputs, references, strict=True)])
    assert stats.shape == (len(hypotheses), 2 * BLEU_STATS) and stats.dtype == np.int64
    adequacy, copying = sacrebleu(hypotheses, references), sacrebleu(hypotheses,
                                                                      [[i] for i in inputs])
    total = stats.sum(axis=0)
    assert get_metric("bleu").value(total[:BLEU_STATS]) == pytest.approx(adequacy, abs=1e-9)
    assert get_metric("bleu").value(total[BLEU_STATS:]) == pytest.approx(copying, abs=1e-9)
    assert metric.value(total) == pytest.approx(0.8 * adequacy - 0.2 * copying, abs=1e-9)
    assert metric.score(total) == metric.value(total) and metric.higher_is_better
    assert 0 < copying < 1 and 0 < adequacy < 1  # neither half trivial on these verses


def test_an_exact_copy_of_the_input_loses_one_minus_alpha():
    inputs, references, _ = verses(3)
    metric = IBleu(0.9)
    stats = metric.stats(inputs, [[i, *r] for i, r in zip(inputs, references, strict=True)])
    assert metric.value(stats.sum(axis=0)) == pytest.approx(
        0.9 * sacrebleu(inputs, references) - 0.1, abs=1e-9)


def test_a_hypothesis_with_no_ngram_of_the_input_loses_nothing():
    inputs, references, hypotheses = verses(4)
    foreign = [" ".join(word for word in hypothesis.split() if word not in set(line.split()))
               for hypothesis, line in zip(hypotheses, inputs, strict=True)]
    foreign = [words or "zzz" for words in foreign]
    metric = IBleu(0.7)
    stats = metric.stats(foreign, [[i, *r] for i, r in zip(inputs, references, strict=True)])
    assert not stats[:, BLEU_STATS:BLEU_STATS + 4].any()  # no n-gram of the input
    assert metric.value(stats.sum(axis=0)) == pytest.approx(
        0.7 * sacrebleu(foreign, references), abs=1e-9)
    assert metric.value(stats.sum(axis=0)) > 0


def test_statistics_add_up_over_sentences_like_bleus():
    """Rows do not depend on batching, and the corpus score of a split corpus is that of its
    summed parts (not a mean of sentence scores)."""
    inputs, references, hypotheses = verses(5)
    lists = [[i, *r] for i, r in zip(inputs, references, strict=True)]
    metric = IBleu(0.9)
    whole = metric.stats(hypotheses, lists)
    parts = [metric.stats(hypotheses[:13], lists[:13]), metric.stats(hypotheses[13:], lists[13:])]
    assert np.array_equal(np.vstack(parts), whole)
    assert np.array_equal(whole[:, :BLEU_STATS], bleu_stats(hypotheses, references))
    assert np.array_equal(whole[:, BLEU_STATS:], bleu_stats(hypotheses, [[i] for i in inputs]))
    corpus = metric.value(parts[0].sum(axis=0) + parts[1].sum(axis=0))
    assert corpus == pytest.approx(0.9 * sacrebleu(hypotheses, references)
                                   - 0.1 * sacrebleu(hypotheses, [[i] for i in inputs]))
    sentence_mean = np.mean([metric.value(row) for row in whole])
    assert corpus != pytest.approx(sentence_mean)


def test_the_name_carries_alpha_and_alpha_one_is_bleu():
    metric = get_metric("ibleu:0.9")
    assert isinstance(metric, IBleu) and metric.alpha == 0.9 and metric.name == "ibleu:0.9"
    assert get_metric(metric.name).name == metric.name
    assert metric.input_first and not get_metric("bleu").input_first
    inputs, references, hypotheses = verses(6)
    stats = get_metric("ibleu:1").stats(hypotheses, [[i, *r] for i, r in
                                                     zip(inputs, references, strict=True)])
    assert get_metric("ibleu:1").value(stats.sum(axis=0)) == pytest.approx(
        sacrebleu(hypotheses, references), abs=1e-12)
    for bad in ("ibleu", "ibleu:1.5", "ibleu:x"):
        with pytest.raises(ValueError, match="'ibleu:<alpha>' with alpha in"):
            get_metric(bad)
    with pytest.raises(ValueError, match="input sentence followed by its references"):
        metric.stats(["a b"], [["a b"]])


def test_the_paraphrasers_mert_on_ibleu_keeps_rewriting_where_bleu_copies(tmp_path, lm_path):
    """The paraphraser's tuning as the workflow runs it, on the 25 % grammar with φ_ident from 0,
    where each reference paraphrases the input's first paraphrasable word and keeps the others.
    The untuned paraphraser rewrites every paraphrasable word (p'(e1|e1) = 0.25 against 0.75).
    BLEU prefers the copy to that rewrite (38.5 against 33.3), so MERT raises φ_ident and copies.
    Under iBLEU at α = 0.9 the copy pays 0.1 for its self-BLEU of 1, more than the 0.9 x 5.2
    BLEU points it keeps: φ_ident is not raised and the paraphraser still rewrites every
    sentence. The log records the metric and its α."""
    parts, phrases = hand_built(tmp_path)
    bias_grammar(parts, phrases, tmp_path / "ident.parquet", 0.25, identity_feature=True)
    references = [first_paraphrased(s) for s in SENTENCES]
    paratune = pd.DataFrame({"segment_id": range(len(SENTENCES)), "document": "d",
                             "source": "-", "references": [[s, r] for s, r in
                                                           zip(SENTENCES, references,
                                                               strict=True)],
                             "ref_order": [[0, 1]] * len(SENTENCES)})
    write_table(paratune, tmp_path / "paratune.parquet", EVALSET)
    write_weights(tmp_path / "untuned.txt", UNTUNED)
    grammar = load_grammar(tmp_path / "ident.parquet")
    copies = sacrebleu(SENTENCES, [[r] for r in references])
    rewrites = [paraphrased(s) for s in SENTENCES]
    assert copies > sacrebleu(rewrites, [[r] for r in references])  # BLEU wants copies
    rewrites_ibleu = 0.9 * sacrebleu(rewrites, [[r] for r in references]) \
        - 0.1 * sacrebleu(rewrites, [[s] for s in SENTENCES])
    assert 0.9 * copies - 0.1 < rewrites_ibleu  # iBLEU wants rewrites
    outputs, identity = {}, {}
    for metric in ("bleu", "ibleu:0.9"):
        settings = TuningSettings(metric=metric, max_iterations=3, seed=0,
                                  mert=MertSettings(restarts=5))
        tune_paraphraser(tmp_path / "paratune.parquet", tmp_path / "ident.parquet", lm_path,
                         tmp_path / "untuned.txt", DecoderSettings(k=10), settings, 1,
                         tmp_path / f"{metric}.txt", tmp_path / f"{metric}.parquet")
        weights = read_weights(tmp_path / f"{metric}.txt")
        best = decode_corpus(SENTENCES, grammar, lm_path, weights, DecoderSettings(k=1))
        outputs[metric], identity[metric] = [h[0].text for h in best], weights[IDENTITY_FEATURE]
        log = read_table(tmp_path / f"{metric}.parquet", TUNING_LOG)
        assert set(log["metric"]) == {metric}
        assert read_metadata(tmp_path / f"{metric}.parquet")["metric"] == metric
    assert outputs["bleu"] == SENTENCES and identity["bleu"] > 0
    assert outputs["ibleu:0.9"] == rewrites and identity["ibleu:0.9"] <= 0
    log = read_table(tmp_path / "ibleu:0.9.parquet", TUNING_LOG)  # the input is the first reference
    assert log.loc[log["returned"], "decode_score"].item() == pytest.approx(rewrites_ibleu)


def first_paraphrased(sentence: str) -> str:
    """The sentence with its first word of PARAPHRASES replaced by its paraphrase."""
    table, words = dict(PARAPHRASES), sentence.split()
    first = next(i for i, word in enumerate(words) if word in table)
    return " ".join([*words[:first], table[words[first]], *words[first + 1:]])


def test_the_option_reaches_the_paraphrasers_tuning_job_and_no_other():
    """tuning.paraphraser_metric as the rules receive it (circle.pipeline.plan): the paraphraser's
    tuning job gets it as its metric, the MT runs keep tuning.metric, and left unset no job's
    params change, so finished runs stay finished. config/identity-ibleu.yaml sets iBLEU at 0.9
    on config/identity-feature.yaml's paraphraser."""
    default, ibleu = Plan(config()), Plan(config("identity-ibleu"))
    assert default.paraphraser_tuning_settings()["metric"] == "bleu"
    assert "paraphraser_metric" not in default.paraphraser_tuning_settings()
    settings = ibleu.paraphraser_tuning_settings()
    assert settings["metric"] == "ibleu:0.9" and "paraphraser_metric" not in settings
    assert TuningSettings.from_config(settings, 0).metric == "ibleu:0.9"
    identity = Plan(config("identity-feature"))
    assert {k: v for k, v in settings.items() if k != "metric"} == {
        k: v for k, v in identity.paraphraser_tuning_settings().items() if k != "metric"}
    for plan in (default, ibleu):
        mt = plan.tuning_job_params("x", "1H+1P", 0)["tuning"]
        assert mt["metric"] == "bleu" and "paraphraser_metric" not in mt
    assert ibleu.tuning_job_params("x", "1H", 0) == identity.tuning_job_params("x", "1H", 0)
    with pytest.raises(WorkflowError, match="'ibleu' does not match"):
        config(tuning={"paraphraser_metric": "ibleu"})  # α must be given
