"""Order statistics: nearest-rank percentiles, ranks with ties, Kendall's rank correlation."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def percentile(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank ``q``-quantile of ``values`` (``q`` in (0, 1]).

    The smallest value with at least ``q`` of the values at or below it, i.e. the
    ``ceil(q·n)``-th smallest. Always an observed value (a latency that happened, not an
    interpolation between two).

    Returns:
        ``None`` for no values.

    Raises:
        ValueError: ``q`` outside (0, 1].
    """
    if not 0.0 < q <= 1.0:
        raise ValueError(f"q must be in (0, 1], got {q}")
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1))]


def ranks(scores: Mapping[str, float | None]) -> dict[str, float]:
    """Ranks by descending score (1 = best); ties share their mean rank; ``None`` is unranked."""
    ordered = sorted(((v, k) for k, v in scores.items() if v is not None),
                     key=lambda vk: -vk[0])
    out: dict[str, float] = {}
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1][0] == ordered[i][0]:
            j += 1
        for pos in range(i, j + 1):
            out[ordered[pos][1]] = (i + 1 + j + 1) / 2
        i = j + 1
    return out


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ-b of two aligned sequences (ties corrected); ``None`` when undefined.

    τ-b = (C - D) / sqrt((P - Tx) (P - Ty)) with P = n(n-1)/2 pairs, C/D the concordant and
    discordant pairs, Tx/Ty the pairs tied in x/y. Undefined for fewer than two items or
    when either sequence is constant.
    """
    if len(x) != len(y):
        raise ValueError(f"{len(x)} values against {len(y)}")
    n = len(x)
    concordant = discordant = tied_x = tied_y = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0:
                tied_x += 1
            if dy == 0:
                tied_y += 1
            if dx * dy > 0:
                concordant += 1
            elif dx * dy < 0:
                discordant += 1
    pairs = n * (n - 1) // 2
    denominator = math.sqrt((pairs - tied_x) * (pairs - tied_y))
    return None if denominator == 0 else (concordant - discordant) / denominator
