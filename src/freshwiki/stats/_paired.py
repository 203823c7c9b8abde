"""Tests of "no difference" between two systems on paired items: exact McNemar, sign flips."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

import numpy as np
import numpy.typing as npt

from freshwiki.stats._intervals import CHUNK_CELLS, FloatArray, as_array

# Up to this many non-zero paired differences, the sign-flip test enumerates all 2^m flips.
_EXACT_FLIP_LIMIT = 16


def mcnemar_exact_p(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pair counts ``b`` and ``c``.

    Under "no difference" each discordant pair is equally likely to go either way, so the
    smaller count is binomial(b + c, 1/2); concordant pairs carry no information.
    """
    m = b + c
    if m == 0:
        return 1.0
    tail = sum(math.comb(m, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / (1 << m))  # exact integer ratio, correctly rounded


def _flip_signs(m: int, size: int, rng: np.random.Generator) -> Iterator[npt.NDArray[np.int8]]:
    chunk = max(1, CHUNK_CELLS // m)
    done = 0
    while done < size:
        rows = min(chunk, size - done)
        yield (rng.integers(0, 2, size=(rows, m), dtype=np.int8) * 2 - 1).astype(np.int8)
        done += rows


def sign_flip_p(differences: Iterable[float] | FloatArray, *, resamples: int = 10_000,
                seed: int = 0) -> tuple[float, bool]:
    """Two-sided sign-flip permutation test that paired differences are centred on zero.

    Under "no difference" the two runs' scores for a pair are exchangeable, so each difference
    is as likely to have either sign. The statistic is ``|Σ d|``; zero differences are the
    same under every flip and drop out.

    Args:
        differences: One difference per independent unit (a pair, or a sample's summed pairs).
        resamples: Random sign flips when there are too many units to enumerate.
        seed: Random seed for the random flips.

    Returns:
        ``(p_value, exact)``: all 2^m flips are enumerated when at most 16 differences are
        non-zero (exact); otherwise ``(1 + hits) / (1 + resamples)`` from random flips, which
        never reports an impossible p of 0.
    """
    d = as_array(differences)
    d = d[d != 0]
    m = d.size
    if m == 0:
        return 1.0, True
    observed = abs(math.fsum(d))
    tolerance = 1e-9 * float(np.abs(d).sum())
    if m <= _EXACT_FLIP_LIMIT:
        patterns = np.arange(2**m)[:, None] >> np.arange(m) & 1
        stats = np.abs((1 - 2 * patterns) @ d)
        return float(np.mean(stats >= observed - tolerance)), True
    rng = np.random.default_rng(seed)
    hits = sum(int(np.sum(np.abs(signs @ d) >= observed - tolerance))
               for signs in _flip_signs(m, resamples, rng))
    return (1 + hits) / (1 + resamples), False
