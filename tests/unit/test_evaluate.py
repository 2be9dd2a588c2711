"""circle.experiments.evaluate: sacrebleu corpus scores with signatures, paired bootstrap
resampling, approximate randomisation over tuning replicates, the tuning-log guard, per-condition
summary."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sacrebleu.metrics import BLEU, CHRF, TER

from circle.core.schemas import CONDITION_SUMMARY, EVALUATION, TUNING_LOG
from circle.core.tables import read_table, write_table
from circle.experiments.evaluate import (
    approximate_randomisation,
    bootstrap_p_value,
    check_tuning_log,
    chrf_statistics,
    chrf_value,
    close_replicates,
    condition_summary,
    corpus_bleu,
    corpus_chrf,
    corpus_ter,
    detokenised_scores,
    evaluate_system,
    paired_bootstrap,
    reference_streams,
    write_condition_summary,
    write_evaluation,
)
from circle.tune.metrics import bleu_from_stats, bleu_stats, get_metric

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


def test_evaluate_system_reports_chrf_with_its_signature():
    rng, references = corpus(5, n=40, refs=3)
    hypotheses = [degrade(rng, refs[0], 0.3) for refs in references]
    scores = evaluate_system(hypotheses, references, lowercased=True)
    streams = [[r[k] for r in references] for k in range(3)]
    assert scores["chrf"] == pytest.approx(CHRF(lowercase=True).corpus_score(hypotheses,
                                                                             streams).score)
    assert scores["chrf_signature"].startswith("nrefs:3|case:lc") and "nc:6" in \
        scores["chrf_signature"]
    # additive statistics: summed over segments they give the corpus chrF, also with fewer
    # references on some segments
    uneven = [refs[:1 + i % 3] for i, refs in enumerate(references)]
    total = chrf_statistics(hypotheses, uneven).sum(axis=0)
    assert chrf_value(total) == pytest.approx(corpus_chrf(hypotheses, uneven).value)
    assert chrf_value(total) != pytest.approx(corpus_chrf(hypotheses, references).value)


def test_detokenised_scores_use_13a_and_lowercase_as_the_pipeline():
    references = [["The cat sat on the mat.", "A cat was on the mat."],
                  ["He said: \"yes, it's fine.\"", "He answered \"it's fine.\""]]
    hypotheses = ["the cat sat on the mat.", "he said: \"it's fine.\""]
    lowered = detokenised_scores(hypotheses, references, lowercased=True)
    streams = [[r[k] for r in references] for k in range(2)]
    assert lowered["detok_bleu"] == BLEU(lowercase=True).corpus_score(hypotheses, streams).score
    assert "tok:13a" in lowered["detok_bleu_signature"]
    assert "case:lc" in lowered["detok_bleu_signature"]
    assert lowered["detok_chrf"] == CHRF(lowercase=True).corpus_score(hypotheses, streams).score
    mixed = detokenised_scores(hypotheses, references)
    assert mixed["detok_bleu"] < lowered["detok_bleu"]  # "the" against "The" counts


def test_lowercased_text_is_signed_case_lc_with_the_same_scores():
    rng, references = corpus(8, n=60, refs=3)
    hypotheses = [degrade(rng, refs[0], 0.3) for refs in references]
    stats = get_metric("ter").stats(hypotheses, references)
    mixed = evaluate_system(hypotheses, references, ter_statistics=stats)
    lowered = evaluate_system(hypotheses, references, ter_statistics=stats, lowercased=True)
    assert (lowered["bleu"], lowered["ter"]) == (mixed["bleu"], mixed["ter"])
    for key in ("bleu_signature", "ter_signature"):
        assert "case:mixed" in mixed[key]
        assert lowered[key] == mixed[key].replace("case:mixed", "case:lc")
    assert corpus_ter(hypotheses, references, lowercased=True).signature == \
        lowered["ter_signature"]


def test_bleu_is_its_precision_times_its_brevity_penalty():
    references = [["the cat sat on the mat today"], ["a dog ran in the park"]]
    short = corpus_bleu(["the cat sat on the mat", "a dog ran in park"], references)
    assert short.brevity_penalty == pytest.approx(math.exp(1 - 13 / 11))
    assert short.precision * short.brevity_penalty == pytest.approx(short.value)
    # every n-gram of the output is in its reference: the precision is 100
    assert corpus_bleu(["the cat sat on the mat", "a dog ran in the"], references).precision \
        == pytest.approx(100.0)
    whole = corpus_bleu(["the cat sat on the mat today", "a dog ran in the park"], references)
    assert (whole.precision, whole.brevity_penalty) == (pytest.approx(100.0), 1.0)


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
    given = evaluate_system(system, references, baseline, samples=200, seed=3,
                            ter_statistics=get_metric("ter").stats(system, references))
    assert given["ter"] == pytest.approx(scores["ter"], abs=1e-9)  # TER computed once
    assert given["ter_signature"] == scores["ter_signature"] and "case:mixed" in given[
        "ter_signature"]
    assert scores["p_value_vs_baseline"] < 0.01 and scores["bootstrap_samples"] == 200
    assert (scores["segments"], scores["eval_references"]) == (50, 4)
    base_scores = evaluate_system(baseline, references)
    assert base_scores["p_value_vs_baseline"] is None
    common = {"experiment": "default", "replicate": 0, "seed": 1, "tune_metric": "bleu",
              "tune_iterations": 5, "eval_set": "test", "reference_type": "human"}
    common.update(matched_bleu=30.0, matched_length_ratio=1.0, matched_shift=0.1)
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


# --- approximate randomisation over tuning replicates (Clark et al. 2011) -------------------

def replicated(seed: int, rates: list[float], n: int = 60):
    """References and, per degradation rate, one tuning replicate's output each."""
    rng, references = corpus(seed, n=n)
    return references, [[degrade(rng, refs[0], rate) for refs in references] for rate in rates]


def stacked(metric: str, systems, references) -> np.ndarray:
    scorer = get_metric(metric)
    return np.stack([scorer.stats(system, references) for system in systems])


def brute_force_ar(stats_a, stats_b, metric, shuffles, seed):
    """The documented procedure written out: per shuffle, one uniform per (replicate, segment)
    point, replicate-major; below 0.5 exchanges that point's two outputs."""
    scorer = get_metric(metric)
    a = [row for replicate in stats_a for row in replicate]
    b = [row for replicate in stats_b for row in replicate]
    observed = abs(scorer.value(np.sum(a, axis=0)) - scorer.value(np.sum(b, axis=0)))
    rng = np.random.default_rng(seed)
    extreme = 0
    for _ in range(shuffles):
        uniforms = rng.random(len(a))
        x = np.zeros(scorer.n_stats)
        y = np.zeros(scorer.n_stats)
        for k in range(len(a)):
            if uniforms[k] < 0.5:
                x, y = x + b[k], y + a[k]
            else:
                x, y = x + a[k], y + b[k]
        if abs(scorer.value(x) - scorer.value(y)) >= observed - 1e-12:
            extreme += 1
    return (extreme + 1) / (shuffles + 1)


@pytest.mark.parametrize("metric", ["bleu", "ter"])
def test_ar_of_identical_systems_is_one(metric):
    references, systems = replicated(10, [0.4, 0.5, 0.3])
    stats = stacked(metric, systems, references)
    assert approximate_randomisation(stats, stats.copy(), metric, shuffles=500) == 1.0


@pytest.mark.parametrize("metric", ["bleu", "ter"])
def test_ar_of_a_system_better_everywhere_is_the_smallest_p(metric):
    references, degraded = replicated(11, [0.6, 0.5, 0.4])
    # a word no reference has at the start of every segment: worse than the reference itself
    worse = [[" ".join(["zz", *h.split()[1:]]) for h in system] for system in degraded]
    better = [[refs[0] for refs in references]] * 3
    a, b = stacked(metric, worse, references), stacked(metric, better, references)
    scorer = get_metric(metric)
    per_segment_a, per_segment_b = scorer.score(a), scorer.score(b)
    assert np.all(per_segment_b > per_segment_a)  # every segment of every replicate
    for first, second in ((a, b), (b, a)):  # two-sided
        assert approximate_randomisation(first, second, metric, shuffles=2000) == 1 / 2001


@pytest.mark.parametrize("metric", ["bleu", "ter"])
def test_ar_equals_a_brute_force_implementation(metric):
    references, systems = replicated(12, [0.45, 0.5, 0.42, 0.5], n=6)
    a = stacked(metric, systems[:2], references)
    b = stacked(metric, systems[2:], references)
    fast = approximate_randomisation(a, b, metric, shuffles=400, seed=7)
    assert 0.05 < fast < 0.95  # a close call, where counting mistakes would show
    assert fast == brute_force_ar(a, b, metric, 400, 7)


def test_ar_approximates_the_exact_randomisation_test():
    references, (first, second) = replicated(13, [0.45, 0.4], n=10)
    a, b = stacked("bleu", [first], references), stacked("bleu", [second], references)
    flat_a, flat_b = a[0], b[0]
    observed = abs(bleu_from_stats(flat_a.sum(0)) - bleu_from_stats(flat_b.sum(0)))
    extreme = 0
    for mask in range(2 ** 10):  # every assignment of the 10 segments
        swap = np.array([(mask >> k) & 1 for k in range(10)], dtype=bool)[:, None]
        x = np.where(swap, flat_b, flat_a).sum(0)
        y = np.where(swap, flat_a, flat_b).sum(0)
        extreme += abs(bleu_from_stats(x) - bleu_from_stats(y)) >= observed - 1e-12
    exact = extreme / 2 ** 10
    assert 0.05 < exact < 0.95
    assert approximate_randomisation(a, b, shuffles=20000, seed=3) == pytest.approx(exact,
                                                                                  abs=0.015)


def test_ar_is_seeded_and_checks_shapes():
    references, systems = replicated(14, [0.45, 0.47, 0.44, 0.46], n=40)
    a, b = stacked("bleu", systems[:2], references), stacked("bleu", systems[2:], references)
    p = approximate_randomisation(a, b, shuffles=300, seed=5)
    assert p == approximate_randomisation(a, b, shuffles=300, seed=5)
    assert p != approximate_randomisation(a, b, shuffles=300, seed=6)
    assert p * 301 == pytest.approx(round(p * 301))  # (count + 1) / (shuffles + 1)
    assert approximate_randomisation(a[0], b[0], seed=2, shuffles=300) == \
        approximate_randomisation(a[:1], b[:1], seed=2, shuffles=300)
    with pytest.raises(ValueError, match="same numbers of replicates"):
        approximate_randomisation(a, b[:1])
    with pytest.raises(ValueError, match="same numbers of replicates"):
        approximate_randomisation(a, b, metric="ter")


# --- the tuning-log guard --------------------------------------------------------------------

def tuning_log(path, metric: str, scores: list[float], returned: int):
    """A TUNING_LOG table with these decode scores (iteration 1 first)."""
    frame = pd.DataFrame({
        "iteration": np.arange(1, len(scores) + 1, dtype=np.int32),
        "metric": metric,
        "weights": [[1.0, 0.5]] * len(scores),
        "decode_score": scores,
        "pool_score": [*scores[1:], None],
        "new_hypotheses": np.full(len(scores), 10, dtype=np.int64),
        "pool_size": np.arange(1, len(scores) + 1, dtype=np.int64) * 10,
        "returned": [i + 1 == returned for i in range(len(scores))],
        "stop_reason": [None] * (len(scores) - 1) + ["max_iterations"],
        "decoded_sentences": np.full(len(scores), 100, dtype=np.int64),
    })
    write_table(frame, path, TUNING_LOG)
    return read_table(path, TUNING_LOG)


def test_guard_refuses_a_run_returning_worse_than_its_start(tmp_path):
    path = tmp_path / "1H.rep2.parquet"
    log = tuning_log(path, "bleu", [0.20, 0.15, 0.18], returned=3)
    with pytest.raises(ValueError, match=r"1H\.rep2\.parquet: tuning run 1H\.rep2 returned "
                                         r"the weights of iteration 3.*0\.18.*0\.2"):
        check_tuning_log(log, path, "1H.rep2")
    check_tuning_log(tuning_log(path, "bleu", [0.20, 0.25, 0.22], returned=2), path, "1H.rep2")
    check_tuning_log(tuning_log(path, "bleu", [0.20, 0.15], returned=1), path, "1H.rep2")


@pytest.mark.parametrize("metric", ["ter", "terbleu"])
def test_guard_knows_that_lower_ter_is_better(tmp_path, metric):
    path = tmp_path / "2H.rep0.parquet"
    check_tuning_log(tuning_log(path, metric, [0.60, 0.55, 0.58], returned=2), path, "2H.rep0")
    with pytest.raises(ValueError, match="2H.rep0.parquet: tuning run 2H.rep0 .*lower is better"):
        check_tuning_log(tuning_log(path, metric, [0.60, 0.55, 0.62], returned=3), path,
                         "2H.rep0")


def test_guard_needs_exactly_one_returned_iteration(tmp_path):
    path = tmp_path / "log.parquet"
    log = tuning_log(path, "bleu", [0.2, 0.3], returned=2)
    log["returned"] = True
    with pytest.raises(ValueError, match="2 iterations are marked as returned"):
        check_tuning_log(log, path, "1H.rep0")


# --- the per-condition summary ---------------------------------------------------------------

def summary_inputs(rates: dict[str, list[float]], n: int = 50):
    """EVALUATION-like rows and per-run statistics for conditions with these per-replicate
    degradation rates."""
    rng, references = corpus(20, n=n)
    rows, stats, outputs = [], {"bleu": {}, "ter": {}, "matched_bleu": {}, "chrf": {}}, {}
    for condition, replicate_rates in rates.items():
        human = int(condition[0])
        for replicate, rate in enumerate(replicate_rates):
            system = [degrade(rng, refs[0], rate) for refs in references]
            outputs[condition, replicate] = system
            # as if re-ranked to another length: every output loses its last word
            shorter = [" ".join(h.split()[:-1]) for h in system]
            for metric in ("bleu", "ter"):
                stats[metric][condition, replicate] = get_metric(metric).stats(system, references)
            stats["matched_bleu"][condition, replicate] = get_metric("bleu").stats(shorter,
                                                                                 references)
            stats["chrf"][condition, replicate] = chrf_statistics(system, references)
            bleu = corpus_bleu(system, references)
            rows.append({"experiment": "x", "condition": condition, "reference_type": "human",
                         "human_references": human, "paraphrase_references": 0,
                         "references_used": human, "replicate": replicate,
                         "bleu": bleu.value, "ter": corpus_ter(system, references).value,
                         "chrf": corpus_chrf(system, references).value,
                         "length_ratio": bleu.length_ratio,
                         "matched_bleu": corpus_bleu(shorter, references).value})
    return pd.DataFrame(rows), stats, outputs, references


def test_condition_summary_counts_means_deviations_and_tests(tmp_path):
    evaluation, stats, outputs, references = summary_inputs(
        {"1H": [0.5, 0.55, 0.45], "2H": [0.2, 0.25, 0.15], "3H": [0.5, 0.45, 0.55]})
    summary = condition_summary(evaluation, stats, "1H", shuffles=500, significance_level=0.05,
                                seed=4)
    assert summary["condition"].tolist() == ["1H", "2H", "3H"]
    assert summary["replicates"].tolist() == [3, 3, 3]
    for row in summary.itertuples():
        runs = evaluation[evaluation["condition"] == row.condition]
        assert row.bleu_mean == pytest.approx(runs["bleu"].mean())
        assert row.bleu_sd == pytest.approx(runs["bleu"].std(ddof=1))
        assert row.ter_sd == pytest.approx(np.std(runs["ter"], ddof=1))
        # the pooled score is corpus BLEU/TER of all replicates' outputs together
        everything = [h for r in range(3) for h in outputs[row.condition, r]]
        assert row.bleu_pooled == pytest.approx(corpus_bleu(everything, references * 3).value)
        assert row.ter_pooled == pytest.approx(corpus_ter(everything, references * 3).value)
        # chrF: summarised (pooled from sacrebleu's additive statistics), not tested
        assert row.chrf_mean == pytest.approx(runs["chrf"].mean())
        assert row.chrf_sd == pytest.approx(runs["chrf"].std(ddof=1))
        assert row.chrf_pooled == pytest.approx(corpus_chrf(everything, references * 3).value)
        assert row.matched_bleu_mean == pytest.approx(runs["matched_bleu"].mean())
        assert row.length_ratio_mean == pytest.approx(runs["length_ratio"].mean())
    base, better, same = summary.iloc[0], summary.iloc[1], summary.iloc[2]
    assert pd.isna(base["baseline_condition"]) and pd.isna(base["bleu_p_value"])
    assert pd.isna(base["bleu_significant"]) and better["baseline_condition"] == "1H"
    assert better["bleu_p_value"] == approximate_randomisation(
        np.stack([stats["bleu"]["1H", r] for r in range(3)]),
        np.stack([stats["bleu"]["2H", r] for r in range(3)]), "bleu", 500, 4)
    assert better["bleu_significant"] and better["bleu_difference"] > 0
    assert better["matched_bleu_p_value"] == approximate_randomisation(
        np.stack([stats["matched_bleu"]["1H", r] for r in range(3)]),
        np.stack([stats["matched_bleu"]["2H", r] for r in range(3)]), "bleu", 500, 4)
    assert better["matched_bleu_difference"] == pytest.approx(
        better["matched_bleu_pooled"] - base["matched_bleu_pooled"])
    assert better["ter_significant"] and better["ter_difference"] < 0
    assert not same["bleu_significant"] and same["bleu_p_value"] > 0.05
    path = tmp_path / "conditions.parquet"
    write_condition_summary(summary, path)
    table = read_table(path, CONDITION_SUMMARY)
    assert table["bleu_significant"].tolist() == [None, True, False]
    assert (table["shuffles"] == 500).all() and (table["significance_level"] == 0.05).all()


def test_condition_summary_level_and_replicates(tmp_path):
    evaluation, stats, _, _ = summary_inputs({"1H": [0.5, 0.5], "2H": [0.45, 0.45]}, n=30)
    loose = condition_summary(evaluation, stats, "1H", shuffles=200, significance_level=0.99)
    strict = condition_summary(evaluation, stats, "1H", shuffles=200, significance_level=0.001)
    assert loose["bleu_p_value"][1] == strict["bleu_p_value"][1]
    assert loose["bleu_significant"][1] and not strict["bleu_significant"][1]
    one = evaluation[evaluation["replicate"] == 0]
    single = condition_summary(one, stats, "1H", shuffles=100)
    assert single["replicates"].tolist() == [1, 1] and single["bleu_sd"].isna().all()
    unpaired = evaluation.drop(index=evaluation.index[-1])
    with pytest.raises(ValueError, match=r"condition 2H has replicates \[0\] but the baseline"):
        condition_summary(unpaired, stats, "1H", shuffles=100)
    with pytest.raises(ValueError, match="baseline condition 4H"):
        condition_summary(evaluation, stats, "4H")


def test_close_replicates_are_pairs_within_the_tolerance_in_every_metric():
    assert close_replicates(np.array([[40.0, 50.0], [40.005, 49.995], [41.0, 49.0]]))
    assert not close_replicates(np.array([[40.0, 50.0], [40.005, 50.5], [41.0, 49.0]]))
    assert not close_replicates(np.array([[40.0, 50.0]]))  # one replicate: nothing to compare
    assert close_replicates(np.array([[40.0, 50.0], [40.3, 50.0]]), tolerance=0.5)
