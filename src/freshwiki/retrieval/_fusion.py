"""Fusing the BM25 and dense ranked lists into one.

Three methods, all over each component's top ``depth`` hits; a passage missing from a list
contributes nothing from it:

- ``rrf``: Reciprocal Rank Fusion (Cormack et al., 2009), ``sum 1 / (60 + rank)``. It uses
  only ranks, so BM25's unbounded scores and cosine similarities need no calibration.
- ``weighted_rrf``: RRF with per-method weights (``bm25_weight`` on BM25, 1 on dense).
- ``minmax``: each list's scores min-max normalised to [0, 1] over its top ``depth``, then
  ``bm25_weight * bm25 + dense``, i.e. a linear combination that keeps score *margins*
  (a clear BM25 winner stays a clear winner), which ranks throw away. The floor is the
  list's lowest score, which stands for "not in the list"; but a list shorter than
  ``depth`` is exhaustive (a selective filter, or few passages containing a query term), so
  its floor is 0 instead: otherwise the last of two filtered hits would score 0 however
  close it was to the first. (Dividing by the maximum alone, i.e. a floor of 0 always, was
  measured slightly worse: cosine similarities sit in a narrow band, so it mutes the dense
  list.)

Which is the default is decided by measurement on real queries; see the table in
:mod:`freshwiki.retrieval._hybrid`.

Ties are broken by the better component rank, then by the smaller key, so results do not
depend on dictionary order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from freshwiki.retrieval._bm25 import Hits

FusionMethod = Literal["rrf", "weighted_rrf", "minmax"]
FUSION_METHODS: tuple[str, ...] = ("rrf", "weighted_rrf", "minmax")
RRF_K = 60


@dataclass(frozen=True)
class Fused:
    """One fused candidate with where it stood in each component list (1-based)."""

    key: int
    score: float
    ranks: tuple[int | None, ...]
    scores: tuple[float | None, ...]


def fuse(
    lists: Sequence[Hits],
    method: FusionMethod,
    weights: Sequence[float],
    *,
    rrf_k: int = RRF_K,
    depth: int | None = None,
) -> list[Fused]:
    """Fuse ranked (key, score) lists into one list, best first.

    Args:
        lists: One ranked list per component (BM25, dense), each best first.
        method: ``rrf``, ``weighted_rrf`` or ``minmax`` (see the module doc).
        weights: One weight per list; ignored by plain ``rrf``.
        rrf_k: RRF's rank offset.
        depth: How many hits each list was asked for. A list that came back shorter is
            exhaustive (every passage that could match is in it), so ``minmax`` uses 0, not
            the list's own minimum, as its floor. ``None``: lists are taken as truncated.
    """
    m = len(lists)
    ranks: dict[int, list[int | None]] = {}
    raw: dict[int, list[float | None]] = {}
    fused: dict[int, float] = {}
    for j, hits in enumerate(lists):
        weight = 1.0 if method == "rrf" else float(weights[j])
        if method == "minmax" and hits:
            values = [s for _, s in hits]
            exhaustive = depth is not None and len(hits) < depth
            lo, hi = (min(0.0, min(values)) if exhaustive else min(values)), max(values)
            span = hi - lo
        for position, (key, score) in enumerate(hits, start=1):
            if key not in ranks:
                ranks[key] = [None] * m
                raw[key] = [None] * m
                fused[key] = 0.0
            ranks[key][j] = position
            raw[key][j] = score
            if method == "minmax":
                fused[key] += weight * ((score - lo) / span if span > 0 else 1.0)
            else:
                fused[key] += weight / (rrf_k + position)

    def order(key: int) -> tuple[float, int, int]:
        best = min((r for r in ranks[key] if r is not None), default=1 << 30)
        return (-fused[key], best, key)

    return [
        Fused(key, fused[key], tuple(ranks[key]), tuple(raw[key]))
        for key in sorted(fused, key=order)
    ]
