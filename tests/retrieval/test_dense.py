from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from freshwiki.records import Passage
from freshwiki.retrieval import DenseIndex, Embedder, RetrievalError, _dense


@pytest.fixture(scope="module")
def vectors(topic_passages: list[Passage], embedder: Embedder) -> np.ndarray:
    return embedder.embed_passages(topic_passages)


def brute_force(vectors: np.ndarray, query: np.ndarray, k: int,
                allowed: np.ndarray | None = None) -> list[int]:
    scores = vectors @ query
    keys = np.arange(len(vectors)) if allowed is None else np.flatnonzero(allowed)
    order = sorted(keys.tolist(), key=lambda i: (-scores[i], i))
    return order[:k]


def test_flat_search_is_exact(vectors: np.ndarray) -> None:
    index = DenseIndex(vectors.shape[1])
    index.add(vectors)
    assert index.kind == "flat"
    for q in (0, 17, 123):
        hits = index.search(vectors[q], 10)
        assert [key for key, _ in hits] == brute_force(vectors, vectors[q], 10)
        assert hits[0][0] == q and hits[0][1] == pytest.approx(1.0, abs=1e-5)


def test_switches_to_hnsw_past_flat_max_and_stays_accurate(vectors: np.ndarray) -> None:
    index = DenseIndex(vectors.shape[1], flat_max=100)
    index.add(vectors[:80])
    assert index.kind == "flat"
    index.add(vectors[80:])
    assert index.kind == "hnsw" and len(index) == len(vectors)
    assert np.array_equal(index.vectors(), vectors)
    overlap = [
        len({k for k, _ in index.search(vectors[q], 10)} & set(brute_force(vectors,
                                                                          vectors[q], 10)))
        for q in range(0, len(vectors), 7)
    ]
    assert min(overlap) >= 8 and np.mean(overlap) >= 9.5


@pytest.mark.parametrize("gather_max", [10_000, 0])  # numpy gather, or FAISS's bitmap scan
@pytest.mark.parametrize("flat_max", [100_000, 100])
def test_filters_return_exact_allowed_results(
    vectors: np.ndarray, flat_max: int, gather_max: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_dense, "GATHER_MAX", gather_max)
    index = DenseIndex(vectors.shape[1], flat_max=flat_max, exact_max=50)
    index.add(vectors)
    rng = np.random.default_rng(1)
    for share in (0.02, 0.5, 0.9):  # selective (exact) and broad (selector, on HNSW)
        allowed = rng.random(len(vectors)) < share
        for q in (3, 200):
            hits = index.search(vectors[q], 10, allowed)
            assert all(allowed[key] for key, _ in hits)
            assert len(hits) == min(10, int(allowed.sum()))
            if share < 0.1 or flat_max > len(vectors):  # exact paths
                assert [k for k, _ in hits] == brute_force(vectors, vectors[q], 10, allowed)


def test_hnsw_filter_falls_back_to_exact_when_the_graph_returns_too_few(
    vectors: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = DenseIndex(vectors.shape[1], flat_max=100, exact_max=0)
    index.add(vectors)
    real_search = index._index.search

    def starved(x: np.ndarray, k: int, params: Any = None) -> Any:
        scores, ids = real_search(x, k, params=params)
        ids[:, 1:] = -1  # as if the filtered graph walk found a single allowed vector
        return scores, ids

    monkeypatch.setattr(index._index, "search", starved)
    allowed = np.zeros(len(vectors), dtype=bool)
    allowed[::3] = True
    hits = index.search(vectors[9], 5, allowed)
    assert [k for k, _ in hits] == brute_force(vectors, vectors[9], 5, allowed)


@pytest.mark.parametrize("flat_max", [100_000, 100])
def test_save_load_round_trip(vectors: np.ndarray, flat_max: int, tmp_path: Path) -> None:
    index = DenseIndex(vectors.shape[1], flat_max=flat_max)
    index.add(vectors)
    index.save(tmp_path)
    loaded = DenseIndex.load(tmp_path)
    assert loaded.kind == index.kind
    for q in (0, 50):
        assert loaded.search(vectors[q], 10) == index.search(vectors[q], 10)


def test_rejects_vectors_of_the_wrong_shape() -> None:
    with pytest.raises(RetrievalError, match="shape"):
        DenseIndex(4).add(np.zeros((2, 3), dtype=np.float32))
    assert DenseIndex(4).search(np.zeros(4, dtype=np.float32), 5) == []


def test_hnsw_searches_with_the_chosen_ef_search_raised_to_k(
    vectors: np.ndarray, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    index = DenseIndex(vectors.shape[1], flat_max=100)
    index.add(vectors)
    assert index.kind == "hnsw" and index.ef_search == 512  # see _dense's module doc
    seen: list[int] = []
    real_search = index._index.search

    def spy(x: np.ndarray, k: int, params: Any = None) -> Any:
        seen.append(params.efSearch)
        return real_search(x, k, params=params)

    monkeypatch.setattr(index._index, "search", spy)
    index.search(vectors[0], 10)
    index.search(vectors[0], 600)
    assert seen == [512, 600]

    custom = DenseIndex(vectors.shape[1], flat_max=100, ef_search=64)
    custom.add(vectors)
    custom.save(tmp_path)
    assert DenseIndex.load(tmp_path).ef_search == 64
