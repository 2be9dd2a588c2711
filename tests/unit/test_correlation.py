"""circle.core.correlation on constructed pairs whose r and p are known in closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest

from circle.core.correlation import pearson, t_two_sided


def test_three_pairs_have_one_degree_of_freedom_and_a_cauchy_tail():
    """r = 0.5 over three pairs: t = 1/√3, θ = π/6, so p = 1 − 2θ/π = 2/3."""
    found = pearson([1, 2, 3], [1, 3, 2])
    assert (found.r, found.n) == (pytest.approx(0.5), 3)
    assert found.p == pytest.approx(2 / 3)
    assert str(found) == "r = +0.50 (n = 3, p = 0.67)"


def test_four_pairs_have_p_one_minus_r():
    """With two degrees of freedom sin θ = |r|, so p = 1 − |r|: r = ±0.8 gives 0.2."""
    assert pearson([1, 2, 3, 4], [1, 3, 2, 4]).p == pytest.approx(0.2)
    negative = pearson([10, 20, 30, 40], [4, 2, 3, 1])
    assert (negative.r, negative.p) == (pytest.approx(-0.8), pytest.approx(0.2))


def test_five_pairs_follow_the_odd_series():
    """r = 0.8 over five pairs: t = 0.8 √(3 / 0.36), tan θ = 4/3, so sin θ = 0.8, cos θ = 0.6
    and p = 1 − (2/π)(θ + sin θ cos θ)."""
    found = pearson([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    assert found.r == pytest.approx(0.8)
    assert found.p == pytest.approx(1 - 2 / math.pi * (math.atan(4 / 3) + 0.8 * 0.6))


@pytest.mark.parametrize(("t", "df"), [(12.706, 1), (4.303, 2), (2.571, 5), (2.228, 10),
                                       (2.201, 11)])
def test_the_tail_meets_the_tables_two_sided_five_percent_points(t, df):
    assert t_two_sided(t, df) == pytest.approx(0.05, abs=2e-4)
    assert t_two_sided(-t, df) == t_two_sided(t, df)
    assert t_two_sided(0.0, df) == pytest.approx(1.0)


def test_a_shift_of_one_variable_leaves_r_and_p():
    """Gains over one shared baseline: an error of the baseline moves every gain alike."""
    adequacy, gains = [19.4, 28.8, 44.8, 13.7], np.array([-1.2, -0.1, 0.7, -1.5])
    found, shifted = pearson(adequacy, gains), pearson(adequacy, gains - 0.9)
    assert (shifted.r, shifted.p) == (pytest.approx(found.r), pytest.approx(found.p))
    assert found.r > 0.9


def test_perfect_constant_and_too_few_pairs():
    assert pearson([1, 2, 3], [2, 4, 6]).p == 0.0
    assert pearson([1, 2, 3], [3, 2, 1]).r == -1.0
    constant = pearson([1, 2, 3], [5, 5, 5])
    assert math.isnan(constant.r) and str(constant).startswith("r undefined")
    with pytest.raises(ValueError, match="at least 3"):
        pearson([1, 2], [2, 1])
    with pytest.raises(ValueError, match="pairs"):
        pearson([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="finite"):
        pearson([1, 2, 3, 4], [1, float("nan"), 2, 3])
