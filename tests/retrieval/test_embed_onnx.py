"""The onnx-int8 embedder: exported here from the packaged weights, close to the float one.

Every test uses the real all-MiniLM-L6-v2 weights, the real exporter and ONNX Runtime; the
export (about half a minute) is made once per session.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from freshwiki.config import Settings
from freshwiki.records import Passage
from freshwiki.retrieval import (
    DIMENSION,
    MODEL_NAME,
    Embedder,
    HybridIndex,
    RetrievalError,
    default_cache_path,
    runtime_name,
)
from freshwiki.retrieval._embed_onnx import FILES, MANIFEST, export_dir, read_manifest

INT8 = "onnx-int8"


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def int8(models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Embedder]:
    emb = Embedder(tmp_path_factory.mktemp("emb8") / "vectors.sqlite", runtime=INT8,
                   models_dir=models_dir)
    emb.encode(["warm up"])  # exports the model
    yield emb
    emb.close()


def test_the_export_is_recorded_with_its_source_and_hash(int8: Embedder, models_dir: Path
                                                         ) -> None:
    folder = export_dir(models_dir)
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["source_weights"] == Embedder(None).weights_identity()
    assert int8.weights_identity() == f"sha256:{manifest['sha256'][INT8]}"
    assert manifest["max_length"] == 256
    # int8 weights: about a quarter of the 90 MB float file
    assert 80_000_000 < (folder / FILES["onnx"]).stat().st_size < 100_000_000
    assert 15_000_000 < (folder / FILES[INT8]).stat().st_size < 40_000_000
    leftovers = [p for p in models_dir.iterdir() if p.is_dir() and p.name.startswith(".")]
    assert not leftovers  # no half-made export left behind


def test_onnx_float_vectors_are_the_torch_ones(
    embedder: Embedder, topic_passages: list[Passage], models_dir: Path
) -> None:
    texts = [p.indexed_text for p in topic_passages[:20]]
    onnx = Embedder(None, runtime="onnx", models_dir=models_dir)
    assert onnx.name == f"{MODEL_NAME}+onnx"
    assert np.allclose(onnx.encode(texts), embedder.encode(texts), atol=1e-5)


def test_int8_vectors_are_close_to_the_float_ones(
    int8: Embedder, embedder: Embedder, topic_passages: list[Passage]
) -> None:
    texts = [p.indexed_text for p in topic_passages[:40]]
    new, old = int8.encode(texts), embedder.encode(texts)
    assert new.shape == (40, DIMENSION) and new.dtype == np.float32
    assert np.allclose(np.linalg.norm(new, axis=1), 1.0, atol=1e-5)
    cosine = (new * old).sum(axis=1)
    assert cosine.min() > 0.97, cosine.min()  # close, but not the same vectors
    assert not np.allclose(new, old, atol=1e-3)


def test_each_passage_finds_its_own_float_vector_first(
    int8: Embedder, embedder: Embedder, topic_passages: list[Passage]
) -> None:
    texts = [p.indexed_text for p in topic_passages[:200]]
    new, old = int8.encode(texts), embedder.encode(texts)
    nearest = (new @ old.T).argmax(axis=1)
    assert (nearest == np.arange(len(texts))).all()


def test_a_texts_vector_does_not_depend_on_the_texts_embedded_with_it(
    int8: Embedder, topic_passages: list[Passage], models_dir: Path
) -> None:
    # Dynamic int8 scales activations by the largest value in the input, so in a padded
    # batch a vector would change with its batch-mates; each text runs alone instead.
    query = "who invented the steam engine condenser?"
    texts = [query, *(p.indexed_text for p in topic_passages[:9])]
    together = Embedder(None, runtime=INT8, models_dir=models_dir, threads=3).encode(texts)
    alone = Embedder(None, runtime=INT8, models_dir=models_dir, threads=1)
    assert np.array_equal(alone.embed_query(query), together[0])
    assert np.array_equal(alone.encode(texts[5:]), together[5:])


def test_a_stale_export_is_made_again(int8: Embedder, models_dir: Path) -> None:
    folder = export_dir(models_dir)
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    (folder / MANIFEST).write_text(json.dumps({**manifest, "source_weights": "sha256:0"}),
                                   encoding="utf-8")
    assert read_manifest(folder) is None
    again = Embedder(None, runtime=INT8, models_dir=models_dir)
    assert again.weights_identity() == int8.weights_identity()  # same tools, same bytes
    assert read_manifest(folder) is not None


def test_runtimes_have_their_own_names_and_caches(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, models_dir=tmp_path / "models")
    assert runtime_name("torch") == MODEL_NAME
    assert runtime_name(INT8) == f"{MODEL_NAME}+{INT8}"
    assert default_cache_path(settings, INT8) != default_cache_path(settings)
    assert Embedder.default(settings, INT8).name == runtime_name(INT8)
    with pytest.raises(RetrievalError, match="unknown embedder runtime 'fp8'"):
        Embedder(None, runtime="fp8")
    with pytest.raises(RetrievalError, match="needs a models folder"):
        Embedder(None, runtime=INT8)


def test_an_int8_index_is_queried_with_the_int8_embedder(
    int8: Embedder, embedder: Embedder, topic_passages: list[Passage], models_dir: Path,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    directory = tmp_path / "idx8"
    HybridIndex.build(topic_passages[:60], directory, embedder=int8).close()
    manifest = json.loads((directory / "index.json").read_text(encoding="utf-8"))
    assert manifest["embedder"]["name"] == runtime_name(INT8)
    assert manifest["content"]["embedder"]["weights"] == int8.weights_identity()

    with pytest.raises(RetrievalError, match="was built with"):
        HybridIndex.load(directory, embedder=embedder)
    # Loaded without an embedder while the setting says torch: the index's own runtime wins.
    monkeypatch.setenv("FRESHWIKI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FRESHWIKI_MODELS_DIR", str(models_dir))
    monkeypatch.setenv("FRESHWIKI_EMBEDDER_RUNTIME", "torch")
    with HybridIndex.load(directory) as index:
        assert index.embedder.name == runtime_name(INT8)
        title = topic_passages[7].title
        hits = index.search(title, k=3, method="dense")
        assert hits[0].passage.title == title
