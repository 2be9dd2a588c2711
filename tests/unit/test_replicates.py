"""The replicate-level test, Holm's correction and the power analysis
(circle.experiments.replicates), on constructed cases whose answers are known."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from test_evaluate import summary_inputs

from circle.core.correlation import t_two_sided
from circle.experiments.evaluate import condition_summary
from circle.experiments.replicates import (
    detectable_difference,
    holm,
    incomplete_beta,
    pooled_sd,
    power,
    replicates_needed,
    summary_power,
    summary_tests,
    t_quantile,
    t_tail,
    welch_test,
)

# --- Student's t without scipy ---------------------------------------------------------------


def test_t_tail_has_the_closed_forms_of_one_and_two_degrees_of_freedom():
    for t in (0.0, 0.3, 1.0, 2.5, 40.0):
        assert t_tail(t, 1) == pytest.approx(0.5 - math.atan(t) / math.pi, abs=1e-13)  # Cauchy
        assert t_tail(t, 2) == pytest.approx(0.5 - t / (2 * math.sqrt(t * t + 2)), abs=1e-13)
        assert t_tail(-t, 3) == pytest.approx(1 - t_tail(t, 3), abs=1e-13)


@pytest.mark.parametrize("df", [3, 4, 7, 12, 30])
def test_t_tail_agrees_with_the_closed_form_series_for_whole_degrees_of_freedom(df):
    for t in (0.4, 1.3, 2.2, 3.9):
        assert 2 * t_tail(t, df) == pytest.approx(t_two_sided(t, df), abs=1e-12)


def test_t_tail_of_fractional_degrees_of_freedom_integrates_the_density():
    df, t = 4.5, 1.7
    x = np.linspace(0.0, t, 20001)
    density = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) \
        / math.sqrt(df * math.pi) * (1 + x * x / df) ** (-(df + 1) / 2)
    weights = np.ones(len(x))
    weights[1:-1:2], weights[2:-1:2] = 4, 2
    assert t_tail(t, df) == pytest.approx(0.5 - (x[1] / 3) * weights @ density, abs=1e-12)


def test_t_quantile_inverts_the_tail():
    assert t_quantile(0.025, 10) == pytest.approx(2.228139, abs=1e-6)  # the printed tables
    assert t_quantile(0.025, 1e6) == pytest.approx(1.959966, abs=1e-5)
    assert t_quantile(0.975, 10) == pytest.approx(-2.228139, abs=1e-6)
    with pytest.raises(ValueError, match="tail probability"):
        t_quantile(0.0, 3)
    with pytest.raises(ValueError, match="needs a, b > 0"):
        incomplete_beta(1.0, 1.0, 1.5)


# --- Welch's test and Holm's correction -------------------------------------------------------

def test_identical_systems_are_not_significant():
    scores = [38.4, 38.9, 37.7, 38.1]
    test = welch_test(scores, scores)
    assert (test.difference, test.t, test.p_value) == (0.0, 0.0, 1.0)


def test_welch_statistic_and_degrees_of_freedom_by_hand():
    # means 2 and 5, variances 1 and 1 over three runs each: t = 3 / sqrt(2/3), df = 4
    test = welch_test([1, 2, 3], [4, 5, 6])
    assert test.t == pytest.approx(3 / math.sqrt(2 / 3))
    assert test.df == pytest.approx(4.0)
    assert test.p_value == pytest.approx(t_two_sided(test.t, 4), abs=1e-12)
    # unequal spreads and sizes: variances of the means 1 and 0.75, df by Welch-Satterthwaite
    unequal = welch_test([0, 2], [0, 0, 3, 3])
    assert unequal.difference == pytest.approx(0.5)
    assert unequal.df == pytest.approx(1.75 ** 2 / (1 / 1 + 0.75 ** 2 / 3))


def test_a_fixed_shift_is_significant_when_large_against_the_spread():
    base = np.array([38.2, 38.9, 37.6, 38.4, 39.0, 38.1, 37.9, 38.6])  # sd 0.47
    assert welch_test(base, base + 2.0).p_value < 1e-5
    assert welch_test(base, base + 0.2).p_value > 0.4
    assert welch_test(base, base - 2.0).difference == pytest.approx(-2.0)


def test_the_test_is_undefined_without_two_replicates_or_without_spread():
    assert welch_test([38.0], [39.0, 40.0]) is None
    assert welch_test([38.0, 38.0], [39.0, 39.0]) is None
    assert welch_test([38.0, 38.0], [39.0, 40.0]).df == pytest.approx(1.0)


def test_holm_multiplies_the_ith_smallest_by_the_tests_left_and_keeps_the_order():
    adjusted = holm([0.01, 0.04, 0.03, 0.005, math.nan])
    assert adjusted[:4] == pytest.approx([0.03, 0.06, 0.06, 0.02])  # 0.04 * 1 < 0.03 * 2
    assert math.isnan(adjusted[4])
    assert holm([0.5, 0.9]).tolist() == [1.0, 1.0]
    assert holm([]).size == 0


# --- the power analysis ------------------------------------------------------------------------

@pytest.mark.parametrize("difference, replicates, expected", [
    (1.0, 17, 0.8070), (1.0, 16, 0.7814), (0.5, 64, 0.8015), (0.8, 26, 0.8075)])
def test_power_of_the_two_sample_t_test_matches_the_published_values(difference, replicates,
                                                                     expected):
    """Cohen (1988) Table 2.3.1 and G*Power's noncentral t, sd = 1."""
    assert power(difference, 1.0, replicates) == pytest.approx(expected, abs=5e-4)


def test_power_without_a_difference_is_the_level_and_grows_with_it():
    assert power(0.0, 0.7, 8) == pytest.approx(0.05, abs=1e-9)
    assert power(0.0, 0.7, 8, alpha=0.01) == pytest.approx(0.01, abs=1e-9)
    values = [power(d, 0.7, 8) for d in (0.2, 0.5, 1.0, 2.0)]
    assert values == sorted(values) and values[-1] > 0.99


def test_replicates_needed_for_known_effect_sizes():
    assert replicates_needed(1.0, 1.0) == 17
    assert replicates_needed(0.5, 1.0) == 64
    assert replicates_needed(0.8, 1.0) == 26
    assert replicates_needed(0.5, 0.5) == replicates_needed(-1.0, 1.0) == 17  # only d = δ / sd
    with pytest.raises(ValueError, match="non-zero"):
        replicates_needed(0.0, 1.0)


def test_the_detectable_difference_is_the_inverse_of_the_replicates_needed():
    assert detectable_difference(1.0, 17) == pytest.approx(0.991, abs=1e-3)
    assert power(detectable_difference(0.74, 3), 0.74, 3) == pytest.approx(0.8, abs=1e-5)
    n = replicates_needed(0.5, 0.74)
    assert detectable_difference(0.74, n) <= 0.5 < detectable_difference(0.74, n - 1)


def test_pooled_sd_weights_by_degrees_of_freedom_and_skips_single_runs():
    assert pooled_sd([1.0, 2.0, math.nan], [3, 3, 1]) == pytest.approx(math.sqrt(2.5))
    assert pooled_sd([1.0, 3.0], [2, 5]) == pytest.approx(math.sqrt((1 + 4 * 9) / 5))
    assert math.isnan(pooled_sd([math.nan], [1]))


# --- in the condition summary -----------------------------------------------------------------

def test_one_outlier_replicate_is_significant_pooled_but_not_over_replicates():
    """2H equals 1H in two replicates and is a perfect copy of the reference in the third: the
    pooled segments make the approximate randomisation test significant, the three runs do
    not make Welch's."""
    evaluation, stats, _, _ = summary_inputs({"1H": [0.5, 0.52, 0.48], "2H": [0.5, 0.52, 0.0]})
    summary = condition_summary(evaluation, stats, "1H", shuffles=500, seed=3).set_index(
        "condition")
    outlier = summary.loc["2H"]
    assert outlier["bleu_significant"] and outlier["bleu_p_value"] < 0.01
    assert outlier["bleu_welch_p_value"] > 0.2
    runs = evaluation.set_index(["condition", "replicate"])["bleu"]
    assert outlier["bleu_mean_difference"] == pytest.approx(runs["2H"].mean() - runs["1H"].mean())
    assert outlier["bleu_welch_p_value"] == welch_test(runs["1H"], runs["2H"]).p_value
    base = summary.loc["1H"]
    assert pd.isna(base["bleu_welch_p_value"]) and pd.isna(base["matched_bleu_mean_difference"])


def test_the_same_runs_under_another_name_are_not_significant_at_any_level():
    evaluation, stats, _, _ = summary_inputs({"1H": [0.5, 0.4, 0.45]})
    copy = evaluation.assign(condition="2H", human_references=2, references_used=2)
    for metric in stats:
        stats[metric].update({("2H", r): stats[metric]["1H", r] for r in range(3)})
    summary = condition_summary(pd.concat([evaluation, copy]), stats, "1H", shuffles=200)
    tested = summary.iloc[1]
    for metric in ("bleu", "ter", "matched_bleu"):
        assert tested[f"{metric}_welch_p_value"] == 1.0 and tested[f"{metric}_p_value"] == 1.0
        assert tested[f"{metric}_mean_difference"] == 0.0


def conditions(sds: dict[str, tuple[float, float]], replicates: int = 8) -> pd.DataFrame:
    """A CONDITION_SUMMARY-like frame: per condition its (BLEU, common-length BLEU) sd, 1H the
    baseline, every other condition 0.4 BLEU better with Welch p-values 0.01 and 0.04."""
    rows = []
    for condition, (bleu_sd, matched_sd) in sds.items():
        base = condition == "1H"
        rows.append({"condition": condition, "replicates": replicates, "bleu_sd": bleu_sd,
                     "matched_bleu_sd": matched_sd,
                     "baseline_condition": None if base else "1H",
                     "bleu_mean_difference": None if base else 0.4,
                     "matched_bleu_mean_difference": None if base else 0.3,
                     "bleu_welch_p_value": None if base else 0.01,
                     "matched_bleu_welch_p_value": None if base else 0.04})
    return pd.DataFrame(rows)


def test_summary_power_pools_the_conditions_spread():
    summary = conditions({"1H": (0.6, 0.5), "2H": (0.8, 0.5)})
    power_rows = summary_power(summary, difference=0.5).set_index("metric")
    sd = math.sqrt((0.36 + 0.64) / 2)
    assert power_rows.loc["bleu", "sd"] == pytest.approx(sd)
    assert power_rows.loc["bleu", "detectable"] == pytest.approx(detectable_difference(sd, 8))
    assert power_rows.loc["matched_bleu", "needed"] == replicates_needed(0.5, 0.5) == 17
    assert power_rows["conditions"].tolist() == [2, 2]
    with pytest.raises(ValueError, match="no replicate spread"):
        summary_power(conditions({"1H": (0.0, 0.0)}))


def test_summary_tests_correct_over_both_scores_of_every_condition():
    tests = summary_tests(conditions({"1H": (0.6, 0.5), "2H": (0.8, 0.5), "1H+1P": (1, 1)}))
    assert tests["condition"].tolist() == ["2H", "1H+1P"]
    # four tests: 0.01, 0.01, 0.04, 0.04 -> 0.04, 0.04, 0.08, 0.08
    assert tests["bleu_holm"].tolist() == pytest.approx([0.04, 0.04])
    assert tests["matched_bleu_holm"].tolist() == pytest.approx([0.08, 0.08])
    assert tests["bleu_difference"].tolist() == [0.4, 0.4]
