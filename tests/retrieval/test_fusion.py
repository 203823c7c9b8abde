from __future__ import annotations

import pytest

from freshwiki.retrieval import fuse

BM25 = [(10, 12.0), (11, 6.0), (12, 3.0)]
DENSE = [(12, 0.9), (13, 0.8), (10, 0.4)]


def test_rrf_sums_reciprocal_ranks() -> None:
    fused = fuse([BM25, DENSE], "rrf", (5.0, 5.0))  # weights ignored by plain RRF
    scores = {f.key: f.score for f in fused}
    assert scores[10] == pytest.approx(1 / 61 + 1 / 63)
    assert scores[12] == pytest.approx(1 / 63 + 1 / 61)
    assert scores[11] == pytest.approx(1 / 62)
    assert scores[13] == pytest.approx(1 / 62)
    # Exact ties: the better component rank first, then the smaller key.
    assert [f.key for f in fused] == [10, 12, 11, 13]
    assert fused[0].ranks == (1, 3) and fused[0].scores == (12.0, 0.4)
    assert fused[3].ranks == (None, 2)


def test_weighted_rrf() -> None:
    fused = fuse([BM25, DENSE], "weighted_rrf", (0.5, 1.0))
    scores = {f.key: f.score for f in fused}
    assert scores[13] == pytest.approx(1 / 62)
    assert scores[11] == pytest.approx(0.5 / 62)
    assert [f.key for f in fused] == [12, 10, 13, 11]


def test_minmax_keeps_margins() -> None:
    fused = fuse([BM25, DENSE], "minmax", (0.7, 1.0))
    scores = {f.key: f.score for f in fused}
    assert scores[10] == pytest.approx(0.7 * 1.0 + 0.0)
    assert scores[11] == pytest.approx(0.7 * 3 / 9)
    assert scores[12] == pytest.approx(0.7 * 0.0 + 1.0)
    assert scores[13] == pytest.approx(0.8)
    assert [f.key for f in fused] == [12, 13, 10, 11]


def test_single_or_empty_lists() -> None:
    assert fuse([[], []], "rrf", (1.0, 1.0)) == []
    [only] = fuse([[(7, 2.5)], []], "minmax", (1.0, 1.0))
    assert (only.key, only.score, only.ranks) == (7, 1.0, (1, None))
