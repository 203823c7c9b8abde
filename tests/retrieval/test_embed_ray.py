"""Embedding on Ray fills the cache with the vectors a local build computes, and resumes.

A real (local) Ray instance with two CPUs, real all-MiniLM-L6-v2 weights and real topic
leads. Started with ``address="local"`` so a cluster left running here is never joined.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from freshwiki.records import Passage
from freshwiki.retrieval import (
    Embedder,
    EmbeddingCache,
    HybridIndex,
    embed_on_ray,
    runtime_name,
)

pytestmark = pytest.mark.e2e


def test_onnx_vectors_from_ray_are_the_local_ones_bit_for_bit_and_a_rerun_resumes(
    ray_instance: None, topic_passages: list[Passage], tmp_path: Path
) -> None:
    passages = topic_passages[:70]
    models = tmp_path / "models"
    cache = EmbeddingCache(tmp_path / "ray.sqlite", model=runtime_name("onnx"))
    # A build that stopped after its first 30 vectors: only the rest go out.
    local = Embedder(None, runtime="onnx", models_dir=models)
    first = local.encode([p.indexed_text for p in passages[:30]])
    cache.put([p.id for p in passages[:30]], [p.indexed_text for p in passages[:30]], first)
    seen: list[tuple[int, int | None]] = []
    computed = embed_on_ray(passages, cache, runtime="onnx", models_dir=models,
                            shard_size=16, progress=lambda d, s: seen.append((d, s)))
    assert computed == (40, 70) and seen[-1] == (40, 70)
    stored = cache.get([p.id for p in passages], [p.indexed_text for p in passages])
    assert len(stored) == 70
    expected = local.encode([p.indexed_text for p in passages])
    assert all(np.array_equal(stored[i], expected[i]) for i in range(70))
    assert embed_on_ray(passages, cache, runtime="onnx", models_dir=models) == (0, 70)
    cache.close()


def test_an_index_built_after_ray_embeds_nothing_locally(
    ray_instance: None, topic_passages: list[Passage], embedder: Embedder, tmp_path: Path
) -> None:
    passages = topic_passages[:40]
    built = Embedder(tmp_path / "vectors.sqlite")
    assert built.cache is not None
    assert embed_on_ray(passages, built.cache, runtime="torch",
                        models_dir=tmp_path / "models") == (40, 40)
    index = HybridIndex.build(passages, tmp_path / "idx", embedder=built)
    assert built.embedded == 0 and len(index) == 40  # every vector came from the cache
    # PyTorch pads batches, so the vectors agree with a local encode to rounding only.
    vectors = built.embed_passages(passages)
    assert np.allclose(vectors, embedder.encode([p.indexed_text for p in passages]),
                       atol=1e-5)
    title = passages[5].title
    assert index.search(title, k=3, method="dense")[0].passage.title == title
    index.close()
    built.close()
