"""freshwiki.stats against values worked out by hand (and SciPy where it helps)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats  # type: ignore[import-untyped]

from freshwiki.stats import (
    class_scores,
    cohens_kappa,
    confusion,
    kappa_from_matrix,
    kendall_tau_b,
    paired_bootstrap_ci,
    percentile,
    percentile_interval,
    prf,
    ranks,
    ratio_bootstrap_ci,
    wilson_ci,
)

C, P, N = "correct", "partially_correct", "incorrect"
A = [C, C, P, N, N, C]
B = [C, P, P, N, C, C]


def test_wilson_worked_by_hand() -> None:
    # 5 of 10 with z = 1.96: z² = 3.8416, z²/n = 0.38416, z²/2n = 0.19208, z²/4n² = 0.009604.
    # centre = (0.5 + 0.19208) / 1.38416 = 0.5 exactly (p = 1/2 is symmetric);
    # half = 1.96 * sqrt(0.5 * 0.5 / 10 + 0.009604) / 1.38416
    #      = 1.96 * sqrt(0.034604) / 1.38416 = 1.96 * 0.1860215 / 1.38416 = 0.263410
    # -> [0.236590, 0.763410].
    w = wilson_ci(5, 10, z=1.96)
    assert w is not None
    assert (w.low, w.high) == pytest.approx((0.236590, 0.763410), abs=1e-6)
    # 0 of 10: centre = half = 0.19208 / 1.38416 = 0.138770 -> [0, 0.277540], 0 exact.
    w0 = wilson_ci(0, 10, z=1.96)
    assert w0 is not None and w0.low == 0.0 and w0.high == pytest.approx(0.277540, abs=1e-6)
    w10 = wilson_ci(10, 10, z=1.96)
    assert w10 is not None and w10.high == 1.0 and w10.low == pytest.approx(0.722460, abs=1e-6)
    # confidence=0.95 uses the exact quantile 1.959964, a hair narrower than z = 1.96
    exact = wilson_ci(5, 10)
    assert exact is not None and exact.confidence == 0.95
    assert w.low < exact.low < 0.2366 and exact.high < w.high
    assert wilson_ci(0, 0) is None
    with pytest.raises(ValueError, match="successes"):
        wilson_ci(4, 3)


def test_kappa_worked_by_hand() -> None:
    # p_o = 4/6 (positions 0, 2, 3, 5 agree).
    # A has C:3 P:1 N:2, B has C:3 P:2 N:1 (out of 6), so
    # p_e = (3*3 + 1*2 + 2*1) / 36 = 13/36 and kappa = (24/36 - 13/36) / (23/36) = 11/23.
    assert cohens_kappa(A, B) == pytest.approx(11 / 23)
    assert cohens_kappa(B, A) == pytest.approx(11 / 23)
    # the same from the matrix (rows A, columns B, order C, P, N)
    order, matrix = confusion(A, B, labels=(C, P, N))
    assert order == (C, P, N)
    assert matrix == ((2, 1, 0), (0, 1, 0), (1, 0, 1))
    assert kappa_from_matrix(matrix) == pytest.approx(11 / 23)


def test_kappa_edge_cases() -> None:
    assert cohens_kappa([C, C], [C, C]) is None  # chance agreement is 1: 0/0, undefined
    assert kappa_from_matrix(((0, 0), (0, 0))) is None  # no items
    # systematic disagreement: p_o = 0, p_e = 1/2 -> kappa = -1
    assert cohens_kappa([C, N], [N, C]) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="differ in length"):
        cohens_kappa([C], [C, C])
    with pytest.raises(ValueError, match="square"):
        kappa_from_matrix(((1, 2),))


def test_precision_recall_f1_by_hand() -> None:
    # gold A, predicted B, positive "correct": predicted at 0, 4, 5; gold at 0, 1, 5
    # tp = 2 (0, 5), fp = 1 (4), fn = 1 (1) -> P = R = F1 = 2/3
    s = class_scores(A, B, C)
    assert (s.true_positives, s.false_positives, s.false_negatives) == (2, 1, 1)
    assert (s.precision, s.recall, s.f1) == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    # never predicting the class: precision undefined, recall 0, F1 0 / (0 + 0 + 1) = 0
    none = class_scores([C, N], [N, N], C)
    assert (none.precision, none.recall, none.f1) == (None, 0.0, 0.0)
    # element-wise over counts: tp 3, fp 1, fn 2 -> P 3/4, R 3/5, F1 6/9; and all-zero -> NaN
    p, r, f = prf([3, 0], [1, 0], [2, 0])
    assert (p[0], r[0], f[0]) == pytest.approx((0.75, 0.6, 6 / 9))
    assert math.isnan(p[1]) and math.isnan(r[1]) and math.isnan(f[1])


def test_nearest_rank_percentile_by_hand() -> None:
    values = [5.0, 1.0, 4.0, 2.0, 3.0, 9.0, 8.0, 7.0, 6.0, 10.0]  # 1..10 shuffled
    # ceil(0.5 * 10) = 5th smallest = 5; ceil(0.99 * 10) = 10th = 10; ceil(0.25 * 10) = 3rd
    assert percentile(values, 0.5) == 5.0
    assert percentile(values, 0.99) == 10.0
    assert percentile(values, 0.25) == 3.0
    assert percentile(values, 1.0) == 10.0
    assert percentile([7.0], 0.01) == 7.0
    assert percentile([], 0.5) is None
    with pytest.raises(ValueError, match="q must be"):
        percentile(values, 50)


def test_percentile_interval_uses_linear_quantiles_and_skips_undefined() -> None:
    # 0..100 (101 values): the 2.5 % and 97.5 % quantiles are 2.5 and 97.5 (linear).
    draws = np.append(np.arange(101, dtype=np.float64), np.nan)
    ci = percentile_interval(draws)
    assert ci is not None and ci.confidence == 0.95
    assert (ci.low, ci.high) == pytest.approx((2.5, 97.5))
    assert percentile_interval(np.array([np.nan])) is None


def test_kendall_tau_b_by_hand_and_against_scipy() -> None:
    # One discordant pair of six: (5 - 1) / 6.
    assert kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    # With ties: C = 4, D = 0, one pair tied in each: 4 / sqrt(5 * 5).
    x, y = [1, 1, 2, 3], [1, 2, 2, 3]
    assert kendall_tau_b(x, y) == pytest.approx(0.8)
    assert kendall_tau_b(x, y) == pytest.approx(scipy_stats.kendalltau(x, y).statistic)
    rng = np.random.default_rng(0)
    for _ in range(5):
        a, b = rng.integers(0, 4, 9).tolist(), rng.integers(0, 4, 9).tolist()
        assert kendall_tau_b(a, b) == pytest.approx(scipy_stats.kendalltau(a, b).statistic)
    assert kendall_tau_b([1, 2], [2, 1]) == -1.0
    assert kendall_tau_b([1, 1, 1], [1, 2, 3]) is None
    assert kendall_tau_b([1], [1]) is None


def test_ranks_share_ties() -> None:
    assert ranks({"a": 0.5, "b": 0.9, "c": 0.5, "d": None}) == {"b": 1.0, "a": 2.5, "c": 2.5}


def test_paired_bootstrap_of_a_constant_difference_is_a_point() -> None:
    # System B is always 1 higher than A on every item: every resample's difference is 1.
    a = np.array([0.0, 1.0, 2.0, 5.0])

    def difference(idx: np.ndarray) -> np.ndarray:
        return (a[idx] + 1).mean(axis=1) - a[idx].mean(axis=1)

    ci = paired_bootstrap_ci(len(a), difference, resamples=500)
    assert ci is not None and ci.low == pytest.approx(1.0) and ci.high == pytest.approx(1.0)
    assert paired_bootstrap_ci(0, difference) is None


def test_ratio_bootstrap_brackets_the_ratio_and_is_a_point_when_proportional() -> None:
    # Every numerator is 0.8 x its denominator: each resample's ratio of sums is 0.8.
    low, high = ratio_bootstrap_ci([0.8, 1.6, 2.4, 4.0], [1.0, 2.0, 3.0, 5.0])
    assert (low, high) == pytest.approx((0.8, 0.8))
    low, high = ratio_bootstrap_ci([1.0, 3.0, 2.0, 6.0], [2.0, 2.0, 2.0, 2.0])
    assert low <= 12 / 8 <= high  # the ratio of means, 12 / 8, lies inside
    with pytest.raises(ValueError):
        ratio_bootstrap_ci([1.0], [1.0, 2.0])
