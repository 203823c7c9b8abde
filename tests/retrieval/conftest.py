"""Shared real data for retrieval tests: topic leads cut into passages, one real embedder.

The embedder loads the real all-MiniLM-L6-v2 weights once per session, with every socket
connection refused while it loads: that is the test that the model never touches the network.
Its passage-vector cache lives in a session temp folder, so each passage is embedded once
however many indexes the tests build.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from freshwiki.records import Passage
from freshwiki.retrieval import Embedder, HybridIndex
from tests.retrieval.data import passages_of

HEAD = "wikipedia/topics/head_articles_en.json"
N_ARTICLES = 300


@pytest.fixture(scope="session")
def head_leads(shared_data: Path) -> dict[str, str]:
    leads: dict[str, str] = json.loads((shared_data / HEAD).read_text(encoding="utf-8"))
    return dict(list(leads.items())[:N_ARTICLES])


@pytest.fixture(scope="session")
def topic_passages(head_leads: dict[str, str]) -> list[Passage]:
    return passages_of(head_leads)


@pytest.fixture(scope="session")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Embedder]:
    emb = Embedder(tmp_path_factory.mktemp("emb") / "vectors.sqlite")
    real_connect = socket.socket.connect

    def refuse(self: socket.socket, address: Any) -> None:
        raise AssertionError(f"the embedder tried to connect to {address}")

    socket.socket.connect = refuse  # type: ignore[method-assign,assignment]
    try:
        emb.encode(["warm up"])  # loads the model
    finally:
        socket.socket.connect = real_connect  # type: ignore[method-assign]
    yield emb
    emb.close()


@pytest.fixture(scope="session")
def topic_index(
    topic_passages: list[Passage], embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[HybridIndex]:
    index = HybridIndex.build(topic_passages, tmp_path_factory.mktemp("idx") / "topics",
                              embedder=embedder)
    yield index
    index.close()
