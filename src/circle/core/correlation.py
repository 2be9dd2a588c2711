"""Pearson's correlation with its two-sided p-value, for the pages that ask whether a tuning gain
follows a reference's adequacy (the ladder, the dose-response).

The p-value is the t-test on r: t = r √((n − 2) / (1 − r²)) has Student's t distribution with
n − 2 degrees of freedom when the two variables are uncorrelated normal samples. Its tail is
taken in closed form, exact for integer degrees of freedom (Abramowitz & Stegun 1964, 26.7.3
and 26.7.4), so no statistics library is needed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Correlation:
    """Pearson's ``r`` over ``n`` pairs and its two-sided ``p`` (t-test on r); both NaN where
    a variable is constant."""

    r: float
    n: int
    p: float

    def __str__(self) -> str:
        if math.isnan(self.r):
            return f"r undefined (n = {self.n}: a constant variable)"
        return f"r = {self.r:+.2f} (n = {self.n}, p = {self.p:.2g})"


def t_two_sided(t: float, df: int) -> float:
    """P(|T| ≥ |t|) for Student's T with ``df`` degrees of freedom: 1 − A(t|ν), A as Abramowitz
    & Stegun 26.7.3 (ν odd) and 26.7.4 (ν even) give it, with θ = arctan(t / √ν)."""
    if df < 1:
        raise ValueError(f"Student's t needs at least one degree of freedom, not {df}")
    theta = math.atan(abs(t) / math.sqrt(df))
    sine, cosine = math.sin(theta), math.cos(theta)
    # the series' terms: cos^k θ times (k−1)/k · the previous coefficient, up to k = ν − 2
    term = cosine if df % 2 else 1.0
    total = term if df > 1 else 0.0
    for k in range(3 if df % 2 else 2, df - 1, 2):
        term *= cosine * cosine * (k - 1) / k
        total += term
    inside = (2 / math.pi * (theta + sine * total)) if df % 2 else sine * total
    return max(0.0, 1.0 - inside)


def pearson(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Pearson's r of ``x`` and ``y`` with its two-sided p-value (see the module); NaN for a
    constant variable. Refuses fewer than three pairs (no degree of freedom) and missing
    values."""
    first, second = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if first.shape != second.shape or first.ndim != 1:
        raise ValueError(f"pairs needed: {first.shape} values against {second.shape}")
    if not (np.isfinite(first).all() and np.isfinite(second).all()):
        raise ValueError("a correlation needs finite values")
    n = len(first)
    if n < 3:
        raise ValueError(f"a correlation's test needs at least 3 pairs, not {n}")
    if np.ptp(first) == 0 or np.ptp(second) == 0:
        return Correlation(math.nan, n, math.nan)
    r = float(np.clip(np.corrcoef(first, second)[0, 1], -1.0, 1.0))
    if abs(r) == 1.0:
        return Correlation(r, n, 0.0)
    return Correlation(r, n, t_two_sided(r * math.sqrt((n - 2) / (1 - r * r)), n - 2))
