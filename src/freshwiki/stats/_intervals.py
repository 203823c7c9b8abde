"""Confidence intervals: percentile bootstrap (plain, clustered, paired, of a ratio) and Wilson.

Design choices, and why:

* **Percentile bootstrap** for every mean: scores are bounded, often binary or three-valued
  (1 / 0.5 / 0), and samples are small, where a normal-theory interval can poke outside [0, 1].
  A resample's mean depends only on how often each *distinct* value is drawn, so for the usual
  few distinct scores resamples are drawn as multinomial counts over them: exactly the
  bootstrap distribution, at a cost of ``resamples x distinct values`` instead of
  ``resamples x n``.
* **Clustered** whenever observations come in correlated groups (one sample answered under
  several templates): whole clusters are resampled, or the interval would be too narrow.
* **Paired** when two systems answered the same items: the same resampled items for both, so
  per-item difficulty cancels out of the difference.
* **Wilson** for a proportion: a bootstrap of an all-0 or all-1 group collapses to a point and
  says nothing about n; the Wilson interval still widens as n shrinks, and unlike the normal
  approximation it never leaves [0, 1].
* **Fixed seeds**: the same data give the same interval, byte for byte.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.int64]

# Cells (resamples x categories) drawn at once: bounds memory to ~16 MB per chunk.
CHUNK_CELLS = 1 << 21
# Up to this many distinct values, resamples are drawn as counts per value (scores are usually
# 0 / 0.5 / 1), which is much cheaper than drawing n indices per resample.
_FEW_DISTINCT = 32
# Resamples drawn at once by the paired bootstrap (resamples x n indices per block).
_PAIRED_BLOCK = 1000


@dataclass(frozen=True)
class Interval:
    """A confidence interval.

    Attributes:
        low: Lower bound.
        high: Upper bound.
        confidence: Nominal coverage, e.g. 0.95.
    """

    low: float
    high: float
    confidence: float


def as_array(values: Iterable[float] | FloatArray) -> FloatArray:
    """``values`` as a flat float64 array, refusing NaN and infinity.

    Raises:
        ValueError: not flat, or a value is NaN or infinite.
    """
    array = np.asarray(list(values) if not isinstance(values, np.ndarray) else values,
                       dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"expected a flat sequence of numbers, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError("values contain NaN or infinity")
    return array


def _check(confidence: float, resamples: int) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")


def _resampled_means(draws: int, probs: FloatArray | None, sums: FloatArray,
                     counts: FloatArray, resamples: int,
                     rng: np.random.Generator) -> FloatArray:
    """Means of bootstrap resamples, each drawing ``draws`` categories with replacement.

    A resample's mean is ``sum(sums) / sum(counts)`` over the categories drawn. With ``probs``
    (few distinct categories of unequal weight) the draws are multinomial counts per category,
    costing ``resamples x categories``; with ``probs=None`` (equally likely categories, many of
    them) they are plain indices, costing ``resamples x draws``. Chunked to bound memory.
    """
    width = len(sums) if probs is not None else draws
    chunk = max(1, CHUNK_CELLS // width)
    means: list[FloatArray] = []
    done = 0
    while done < resamples:
        size = min(chunk, resamples - done)
        if probs is not None:
            weights = rng.multinomial(draws, probs, size=size).astype(np.float64)
            means.append((weights @ sums) / (weights @ counts))
        else:
            picks = rng.integers(0, len(sums), size=(size, draws))
            means.append(sums[picks].sum(axis=1) / counts[picks].sum(axis=1))
        done += size
    return np.concatenate(means)


def percentile_interval(draws: FloatArray, confidence: float = 0.95) -> Interval | None:
    """The percentile bootstrap interval of a statistic's resampled values.

    The bounds are the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of
    ``draws`` with linear interpolation (numpy's default). Undefined draws (NaN: a metric
    whose denominator was 0 in that resample) are left out; ``None`` when none is defined.
    """
    finite = draws[np.isfinite(draws)]
    if finite.size == 0:
        return None
    alpha = 1.0 - confidence
    low, high = np.quantile(finite, [alpha / 2, 1 - alpha / 2])
    return Interval(float(low), float(high), confidence)


def bootstrap_ci(values: Iterable[float] | FloatArray, *, confidence: float = 0.95,
                 resamples: int = 10_000, seed: int = 0) -> Interval | None:
    """Percentile bootstrap confidence interval of the mean of ``values``.

    Args:
        values: Independent observations (one score per answer).
        confidence: Nominal coverage.
        resamples: Bootstrap resamples; 10,000 keeps the bounds' Monte Carlo error well below
            the third decimal that reports print.
        seed: Random seed, fixed so a report is reproducible.

    Returns:
        ``None`` for no values (there is nothing to estimate); a zero-width interval at the
        value when all values are equal (every resample has that mean), including n = 1.

    Raises:
        ValueError: ``values`` holds NaN/infinity, or ``confidence``/``resamples`` is invalid.
    """
    _check(confidence, resamples)
    array = as_array(values)
    if array.size == 0:
        return None
    distinct, freq = np.unique(array, return_counts=True)
    if distinct.size == 1:
        return Interval(float(distinct[0]), float(distinct[0]), confidence)
    rng = np.random.default_rng(seed)
    if distinct.size <= _FEW_DISTINCT:
        means = _resampled_means(array.size, freq / array.size, distinct,
                                 np.ones_like(distinct), resamples, rng)
    else:
        means = _resampled_means(array.size, None, array, np.ones_like(array), resamples, rng)
    return percentile_interval(means, confidence)


def cluster_bootstrap_ci(values: Iterable[float] | FloatArray, clusters: Sequence[str], *,
                         confidence: float = 0.95, resamples: int = 10_000,
                         seed: int = 0) -> Interval | None:
    """Bootstrap interval of the mean when observations come in correlated clusters.

    Whole clusters (samples) are resampled and the mean is taken over all their items, so a
    sample answered under five templates counts as one draw, not five independent ones. With
    one item per cluster this is the ordinary bootstrap.

    Args:
        values: One value per item.
        clusters: The cluster (sample id) of each item, aligned with ``values``.
        confidence: Nominal coverage.
        resamples: Bootstrap resamples.
        seed: Random seed.

    Returns:
        As :func:`bootstrap_ci`.

    Raises:
        ValueError: As :func:`bootstrap_ci`, or ``clusters`` is not aligned with ``values``.
    """
    _check(confidence, resamples)
    array = as_array(values)
    if len(clusters) != array.size:
        raise ValueError(f"{array.size} values but {len(clusters)} cluster ids")
    if array.size == 0:
        return None
    if np.all(array == array[0]):
        return Interval(float(array[0]), float(array[0]), confidence)
    index: dict[str, int] = {}
    codes = np.array([index.setdefault(c, len(index)) for c in clusters])
    sums = np.bincount(codes, weights=array).astype(np.float64)
    counts = np.bincount(codes).astype(np.float64)
    rng = np.random.default_rng(seed)
    means = _resampled_means(len(index), None, sums, counts, resamples, rng)
    return percentile_interval(means, confidence)


def paired_bootstrap_ci(n: int, difference: Callable[[IndexArray], FloatArray], *,
                        confidence: float = 0.95, resamples: int = 10_000,
                        seed: int = 0) -> Interval | None:
    """Paired percentile bootstrap of a statistic of two systems on the same ``n`` items.

    Each resample draws ``n`` item indices with replacement, the same for both systems, and
    ``difference`` turns a block of resamples (an array of shape ``(rows, n)`` of indices)
    into one value per row (NaN where undefined). A statistic that is not a mean (an F1, a
    ratio of means) needs the items themselves resampled, hence the callback.

    Returns:
        ``None`` when ``n`` is 0 or no resample gives a defined value.
    """
    _check(confidence, resamples)
    if n == 0:
        return None
    rng = np.random.default_rng(seed)
    values = []
    for start in range(0, resamples, _PAIRED_BLOCK):  # in blocks: bounded memory
        idx = rng.integers(0, n, size=(min(_PAIRED_BLOCK, resamples - start), n))
        values.append(difference(idx))
    return percentile_interval(np.concatenate(values), confidence)


def ratio_bootstrap_ci(numerators: Sequence[float], denominators: Sequence[float], *,
                       resamples: int = 2000, seed: int = 12) -> tuple[float, float]:
    """95 % bootstrap interval of ``mean(numerators) / mean(denominators)``, items paired.

    Each resample draws item indices with replacement (Python's ``random.Random(seed)``) and
    takes the ratio of the two sums over the same items; the bounds are the order statistics
    at positions ``int(0.025 x resamples)`` and ``int(0.975 x resamples) - 1`` of the sorted
    ratios. Used for one system's latency relative to another's on the same questions.

    Raises:
        ValueError: the sequences differ in length or are empty.
    """
    if len(numerators) != len(denominators) or not numerators:
        raise ValueError(f"{len(numerators)} numerators against {len(denominators)} "
                         "denominators (need the same, at least one)")
    rng = random.Random(seed)
    n = len(numerators)
    ratios = []
    for _ in range(resamples):
        picks = [rng.randrange(n) for _ in range(n)]
        ratios.append(sum(numerators[i] for i in picks) / sum(denominators[i] for i in picks))
    ratios.sort()
    return ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1]


def wilson_ci(successes: int, trials: int, *, confidence: float = 0.95,
              z: float | None = None) -> Interval | None:
    """Wilson score interval of a proportion (0/1 scores).

    With p = successes / n and z the standard normal quantile of the coverage, the bounds are
    ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``.

    Args:
        successes: Hits.
        trials: n.
        confidence: Nominal coverage (z is its two-sided normal quantile, 1.95996... for 0.95).
        z: The quantile itself, overriding ``confidence`` (``1.96``, as some figures were
            computed with the rounded value; ``confidence`` is then reported as given).

    Returns:
        ``None`` for no trials. At 0 or n successes the bound is exactly 0 or 1.

    Raises:
        ValueError: ``successes`` outside [0, trials], or ``confidence`` not in (0, 1).
    """
    if not 0 <= successes <= trials:
        raise ValueError(f"{successes} successes out of {trials} trials")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if trials == 0:
        return None
    if z is None:
        z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = (z / (1 + z * z / trials)) * math.sqrt(p * (1 - p) / trials
                                                  + z * z / (4 * trials * trials))
    # At 0 or n successes the bound is exactly 0 or 1; rounding would leave 1e-17.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return Interval(low, high, confidence)
