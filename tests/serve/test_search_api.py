"""`/v1/search`: in-process through FastAPI's test client, then a real `freshwiki serve`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from freshwiki.config import load_settings
from freshwiki.retrieval import HybridIndex, build_default_index
from freshwiki.serve import ATTRIBUTION, create_app
from tests.serve.serving import wait_until_healthy

# Queries written by hand in other words than the leads (checked against the text):
PARAPHRASES = {
    "a liverwort species found in South Africa": "Clasmatocolea fasciculata",
    "South African cricketer who played first-class matches for Eastern Province":
        "Cecil Lowell",
    "website listing torrent files and magnet links": "KickassTorrents",
    "prototype sports racing car from March Engineering": "March 77S",
}


@pytest.fixture
def index(small_data_dir: Path) -> Iterator[HybridIndex]:
    built = build_default_index(load_settings().settings)
    yield built
    built.close()


@pytest.fixture
def client(index: HybridIndex) -> Iterator[TestClient]:
    app = create_app(load_settings().settings, index=index, index_name="default")
    with TestClient(app, base_url="http://127.0.0.1") as test_client:
        yield test_client


@pytest.mark.parametrize(("query", "title"), PARAPHRASES.items())
def test_get_finds_the_article_a_paraphrase_describes(
    client: TestClient, query: str, title: str
) -> None:
    response = client.get("/v1/search", params={"q": query, "k": 3})
    assert response.status_code == 200
    body = response.json()
    assert body["attribution"] == ATTRIBUTION
    assert body["index"] == "default"
    assert body["hits"][0]["title"] == title
    assert [h["rank"] for h in body["hits"]] == [1, 2, 3]


def test_post_takes_the_same_fields_and_filters_by_title(client: TestClient) -> None:
    body: dict[str, Any] = {"q": "cricketer", "k": 5, "title": ["March 77S"]}
    response = client.post("/v1/search", json=body)
    assert response.status_code == 200
    hits = response.json()["hits"]
    assert hits and {h["title"] for h in hits} == {"March 77S"}


@pytest.mark.parametrize(("params", "needle"), [
    ({"q": "x", "method": "fuzzy"}, "method 'fuzzy'"),
    ({"q": "x", "time": "someday"}, "someday"),
    ({"q": "x", "k": 0}, "greater than or equal to 1"),
    ({"q": "   "}, "q is empty"),
    ({"q": "x", "since": "yesterday"}, "date"),
])
def test_bad_requests_get_422_saying_what_is_wrong(
    client: TestClient, params: dict[str, Any], needle: str
) -> None:
    response = client.get("/v1/search", params=params)
    assert response.status_code == 422
    assert needle in response.text


def test_healthz_reports_the_index(client: TestClient, index: HybridIndex) -> None:
    body = client.get("/healthz").json()
    assert body["status"] == "ok"
    assert body["passages"] == len(index) > 12


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.mark.e2e
def test_real_server_builds_the_default_corpus_then_answers(
    small_data_dir: Path, tmp_path: Path
) -> None:
    port = _free_port()
    exe = str(Path(sys.executable).with_name("freshwiki"))
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen([exe, "serve", "--port", str(port)], stdout=log, stderr=log,
                              env=dict(os.environ))
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_healthy(server, base, tmp_path / "serve.log", timeout_s=300, interval_s=0.5)
        found = httpx.get(f"{base}/v1/search",
                          params={"q": "a liverwort species found in South Africa", "k": 2})
        assert found.status_code == 200
        assert found.json()["hits"][0]["title"] == "Clasmatocolea fasciculata"
        assert found.json()["attribution"] == ATTRIBUTION
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    assert "Building the default corpus once" in (tmp_path / "serve.log").read_text()
