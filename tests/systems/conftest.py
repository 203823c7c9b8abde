"""A small real index for the rag system: 16 real Wikipedia leads, the real embedder."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from freshwiki.retrieval import Embedder, HybridIndex
from tests.retrieval.data import passages_of

HEAD = "wikipedia/topics/head_articles_en.json"
TOPICS = ("Taya Kyle", "Geoffrey Zakarian", "Rat Terrier", "Lobar pneumonia", "UFC 244",
          "UFC 245", "UFC 246", "Pareto chart", "Quality control", "Restriction enzyme",
          "Tahnee Welch", "Scott Newman (actor)", "KickassTorrents", "William Murdoch",
          "Government Secure Intranet", "Call girl")


@pytest.fixture(scope="session")
def mini_index_dir(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved index folder; tests load or copy it (never modify it)."""
    leads = json.loads((shared_data / HEAD).read_text(encoding="utf-8"))
    passages = passages_of({title: leads[title] for title in TOPICS})
    root = tmp_path_factory.mktemp("rag-index")
    embedder = Embedder(root / "vectors.sqlite")
    HybridIndex.build(passages, root / "mini", embedder=embedder).close()
    embedder.close()
    return root / "mini"


@pytest.fixture(scope="session")
def mini_index(mini_index_dir: Path, tmp_path_factory: pytest.TempPathFactory
               ) -> Iterator[HybridIndex]:
    embedder = Embedder(tmp_path_factory.mktemp("rag-emb") / "vectors.sqlite")
    index = HybridIndex.load(mini_index_dir, embedder=embedder)
    yield index
    index.close()
    embedder.close()
