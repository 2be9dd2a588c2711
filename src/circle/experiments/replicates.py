"""Tests whose unit is the tuning run, and how many runs a comparison needs.

MERT is unstable: two tuning runs of one condition that differ only in their random draws score
differently on the test set, and Clark et al. (2011) ask for several replicates per condition.
The approximate randomisation test of :func:`circle.experiments.evaluate.approximate_randomisation`
(MultEval's) pools the test segments of all replicates, so its p-value is conditional on the few
optimiser draws that were made: with three replicates, one lucky run decides it. Here the unit
is the run: each replicate's corpus score is one observation of the condition, and

* :func:`welch_test` compares two conditions by Welch's t-test (Welch 1947) over their
  replicates' scores, unequal spreads allowed, two-sided;
* :func:`holm` adjusts the p-values of a family of such tests by Holm's (1979) step-down
  procedure, which keeps the chance of any false rejection in the family at most alpha;
* :func:`power`, :func:`replicates_needed` and :func:`detectable_difference` give the power of
  the two-sample t-test from a measured replicate spread (Cohen 1988, ch. 2): how many
  replicates per condition a difference needs, and which difference a table's replicates can
  detect, at alpha = 0.05 and power 0.8 by default.

The test set is the same for every run, so these tests generalise over the optimiser's draws on
this test set, not over test sets. scipy is not a dependency: the t distribution is computed
here, its tail from the regularised incomplete beta function (Press et al. 2007, §6.4) and the
noncentral t of the power analysis by numerical integration over the sample spread.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

ALPHA = 0.05
POWER = 0.8
_EPSILON = 1e-15
_GRID = 4001  # points of the power integral (Simpson's rule)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz; Press et al.
    2007, §6.4), converging for x < (a + 1) / (a + b + 2)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    fraction = d
    for m in range(1, 1000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            fraction *= c * d
        if abs(c * d - 1.0) < _EPSILON:
            return fraction
    raise ArithmeticError(f"the incomplete beta fraction did not converge for a={a}, b={b}, "
                          f"x={x}")


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1."""
    if not (a > 0 and b > 0 and 0 <= x <= 1):
        raise ValueError(f"incomplete beta of a={a}, b={b}, x={x}: needs a, b > 0, 0 <= x <= 1")
    if x in (0.0, 1.0):
        return x
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def t_tail(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` > 0 degrees of freedom (not necessarily whole)."""
    if df <= 0:
        raise ValueError(f"a t distribution needs df > 0, not {df}")
    half = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t))
    return half if t >= 0 else 1.0 - half


def t_quantile(upper: float, df: float) -> float:
    """The t with P(T > t) = ``upper`` (0 < upper < 1) for ``df`` degrees of freedom."""
    if not 0 < upper < 1:
        raise ValueError(f"a tail probability must be in (0, 1), not {upper}")
    if upper > 0.5:
        return -t_quantile(1.0 - upper, df)
    low, high = 0.0, 1.0
    while t_tail(high, df) > upper:
        low, high = high, 2 * high
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if t_tail(middle, df) > upper else (low, middle)
        if high - low < 1e-12 * max(1.0, high):
            break
    return (low + high) / 2


@dataclass(frozen=True)
class WelchTest:
    """Welch's t-test of B against A: ``difference`` = mean(B) − mean(A), the statistic ``t``,
    the Welch–Satterthwaite degrees of freedom ``df`` and the two-sided ``p_value``."""

    difference: float
    t: float
    df: float
    p_value: float


def welch_test(a: Sequence[float], b: Sequence[float]) -> WelchTest | None:
    """Welch's two-sided t-test (Welch 1947) of the replicate scores ``b`` against ``a``;
    None where it is undefined: a side with fewer than two replicates, or no spread on either
    side (every replicate of both scored alike, so there is no variance to test against)."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if len(x) < 2 or len(y) < 2:
        return None
    va, vb = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    if va + vb == 0:
        return None
    difference = float(y.mean() - x.mean())
    t = difference / math.sqrt(va + vb)
    df = float((va + vb) ** 2 / (va ** 2 / (len(x) - 1) + vb ** 2 / (len(y) - 1)))
    return WelchTest(difference, float(t), df, min(1.0, 2 * t_tail(abs(t), df)))


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's (1979) step-down adjusted p-values of a family of tests: sorted ascending, the
    i-th smallest (from 0) times the m − i tests left, made monotone, at most 1. A test is
    rejected at family-wise level alpha iff its adjusted p-value is below alpha. NaN entries
    (no test) stay NaN and do not count in m."""
    values = np.asarray(p_values, dtype=np.float64)
    adjusted = np.full(values.shape, np.nan)
    tested = np.flatnonzero(~np.isnan(values))
    order = tested[np.argsort(values[tested], kind="stable")]
    scaled = values[order] * (len(order) - np.arange(len(order)))
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(scaled)) if len(order) else scaled
    return adjusted


def _normal_upper(x: np.ndarray) -> np.ndarray:
    """P(Z > x) for the standard normal, elementwise."""
    return 0.5 * np.vectorize(math.erfc)(np.asarray(x) / math.sqrt(2.0))


def power(difference: float, sd: float, replicates: int, other: int | None = None,
          alpha: float = ALPHA) -> float:
    """The power of the two-sided two-sample t-test at level ``alpha`` (pooled variance,
    ``replicates`` and ``other`` runs per condition, by default as many) to detect a true
    difference ``difference`` between two conditions whose replicate scores have standard
    deviation ``sd``: P(|T'| > t_crit) for the noncentral t with df = n_a + n_b − 2 and
    noncentrality δ / (sd √(1/n_a + 1/n_b)), integrated over the sample spread. Welch's test
    (:func:`welch_test`) has about this power when the two spreads are alike."""
    n_b = replicates if other is None else other
    if replicates < 2 or n_b < 2:
        raise ValueError(f"the t-test needs at least two replicates per condition, not "
                         f"{replicates} and {n_b}")
    if not sd > 0:
        raise ValueError(f"the replicate standard deviation must be positive, not {sd}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha {alpha} is not in (0, 1)")
    df = replicates + n_b - 2
    critical = t_quantile(alpha / 2, df)
    shift = abs(difference) / (sd * math.sqrt(1 / replicates + 1 / n_b))
    # U = sqrt(chi2_df / df), the sample sd over the true one; T' = (Z + shift) / U
    u = np.linspace(0.0, 1.0 + 12.0 / math.sqrt(df), _GRID)[1:]
    log_density = (math.log(2.0) + (df / 2) * math.log(df / 2) - math.lgamma(df / 2)
                   + (df - 1) * np.log(u) - df * u * u / 2)
    integrand = (_normal_upper(critical * u - shift) + _normal_upper(critical * u + shift)) \
        * np.exp(log_density)
    integrand = np.concatenate([[0.0], integrand])  # the density is 0 at u = 0 for df >= 2
    step = u[0]
    weights = np.ones(_GRID)
    weights[1:-1:2], weights[2:-1:2] = 4.0, 2.0
    return float(min(1.0, step / 3 * weights @ integrand))


def normal_replicates(difference: float, sd: float, alpha: float = ALPHA,
                      target: float = POWER) -> float:
    """The normal approximation to the replicates per condition, 2 ((z_{α/2} + z_β) sd / δ)²:
    a lower bound of what the t-test needs."""
    z = _normal_quantile(alpha / 2) + _normal_quantile(1 - target)
    return 2 * (z * sd / difference) ** 2


def _normal_quantile(upper: float) -> float:
    """The z with P(Z > z) = ``upper``, by bisection."""
    low, high = -40.0, 40.0
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if 0.5 * math.erfc(middle / math.sqrt(2.0)) > upper \
            else (low, middle)
    return (low + high) / 2


def replicates_needed(difference: float, sd: float, alpha: float = ALPHA,
                      target: float = POWER) -> int:
    """The fewest replicates per condition (both conditions alike) with which the two-sided
    two-sample t-test at ``alpha`` detects ``difference`` with at least ``target`` power, given
    a replicate standard deviation ``sd``: from the normal approximation upwards
    (:func:`normal_replicates`, which never asks for more than the t-test needs)."""
    if difference == 0 or not math.isfinite(difference):
        raise ValueError(f"the difference to detect must be a non-zero number, not {difference}")
    if not 0 < target < 1:
        raise ValueError(f"the power {target} is not in (0, 1)")
    n = max(2, math.ceil(normal_replicates(abs(difference), sd, alpha, target)))
    while power(difference, sd, n, alpha=alpha) < target:
        n += 1
    return n


def detectable_difference(sd: float, replicates: int, other: int | None = None,
                          alpha: float = ALPHA, target: float = POWER) -> float:
    """The smallest true difference that the two-sided two-sample t-test at ``alpha`` detects
    with ``target`` power between conditions of ``replicates`` and ``other`` runs (by default
    as many) whose replicate scores have standard deviation ``sd`` (by bisection on
    :func:`power`)."""
    if not 0 < target < 1:
        raise ValueError(f"the power {target} is not in (0, 1)")
    low, high = 0.0, sd
    while power(high, sd, replicates, other, alpha) < target:
        low, high = high, 2 * high
    while high - low > 1e-6 * sd:
        middle = (low + high) / 2
        low, high = (middle, high) if power(middle, sd, replicates, other, alpha) < target \
            else (low, middle)
    return high


def pooled_sd(sds: Sequence[float], replicates: Sequence[int]) -> float:
    """The pooled standard deviation of several conditions' replicate scores:
    √(Σ (n_i − 1) s_i² / Σ (n_i − 1)) over the conditions with at least two replicates (NaN if
    none has)."""
    s = np.asarray(sds, dtype=np.float64)
    n = np.asarray(replicates, dtype=np.float64)
    kept = (n >= 2) & ~np.isnan(s)
    if not kept.any():
        return math.nan
    return float(math.sqrt(((n[kept] - 1) * s[kept] ** 2).sum() / (n[kept] - 1).sum()))


SUMMARY_METRICS: dict[str, str] = {"bleu": "BLEU", "matched_bleu": "BLEU at a common length"}
"""The scores of a :data:`~circle.core.schemas.CONDITION_SUMMARY` that the power analysis and
the replicate-level tests read, raw and at a common length."""


def summary_power(summary: pd.DataFrame, difference: float | None = None,
                  alpha: float = ALPHA, target: float = POWER) -> pd.DataFrame:
    """What the runs of a :data:`~circle.core.schemas.CONDITION_SUMMARY` can detect, per score
    of :data:`SUMMARY_METRICS`: ``sd``, the replicate standard deviation pooled over its
    conditions (:func:`pooled_sd`), ``conditions`` with two or more replicates, the fewest
    ``replicates`` such a condition has, ``detectable``, the difference the two-sided t-test at
    ``alpha`` detects with ``target`` power between two conditions of that many replicates, and
    with ``difference`` also ``needed``, the replicates per condition that detect it."""
    rows = []
    for metric in SUMMARY_METRICS:
        sds, counts = summary[f"{metric}_sd"].astype(float), summary["replicates"].astype(int)
        kept = sds.notna() & (counts >= 2)
        sd = pooled_sd(sds, counts)
        if not kept.any() or not sd > 0:
            raise ValueError(f"no condition has two replicates that differ in {metric}: there is "
                             "no replicate spread to compute power from")
        n = int(counts[kept].min())
        row = {"metric": metric, "sd": sd, "conditions": int(kept.sum()), "replicates": n,
               "detectable": detectable_difference(sd, n, alpha=alpha, target=target)}
        if difference is not None:
            row["needed"] = replicates_needed(difference, sd, alpha, target)
        rows.append(row)
    return pd.DataFrame(rows)


def summary_tests(summary: pd.DataFrame) -> pd.DataFrame:
    """The replicate-level tests of a :data:`~circle.core.schemas.CONDITION_SUMMARY`, one row
    per tested condition (in its order) with ``baseline``, ``replicates`` and, per score of
    :data:`SUMMARY_METRICS`, ``<metric>_difference`` (mean over replicates minus the
    baseline's), ``<metric>_p`` (Welch) and ``<metric>_holm`` (Holm over every test of the
    table, both scores)."""
    tested = summary[summary["baseline_condition"].notna()]
    frame = pd.DataFrame({"condition": tested["condition"].to_numpy(),
                          "baseline": tested["baseline_condition"].to_numpy(),
                          "replicates": tested["replicates"].astype(int).to_numpy()})
    p_values = np.concatenate([tested[f"{m}_welch_p_value"].to_numpy(dtype=float)
                               for m in SUMMARY_METRICS])
    adjusted = holm(p_values).reshape(len(SUMMARY_METRICS), len(tested))
    for number, metric in enumerate(SUMMARY_METRICS):
        frame[f"{metric}_difference"] = tested[f"{metric}_mean_difference"].to_numpy(dtype=float)
        frame[f"{metric}_p"] = tested[f"{metric}_welch_p_value"].to_numpy(dtype=float)
        frame[f"{metric}_holm"] = adjusted[number]
    return frame
