"""The server's front door (serve/_guard.py), through a real `freshwiki serve` process.

Each refusal is what a hostile web page, a DNS-rebinding page, an oversized upload or an
unauthenticated client would get; the last test fills the chat queue of a live server.
"""

from __future__ import annotations

import dataclasses
import http.client
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from freshwiki.config import Settings
from freshwiki.retrieval import HybridIndex
from freshwiki.serve import RETRY_AFTER_S, create_app
from tests.conftest import write_small_topics
from tests.e2e.fixtures import free_port
from tests.serve.conftest import start_server
from tests.serve.scripted_engine import ScriptedEngine
from tests.serve.serving import wait_until_healthy

EXE = str(Path(sys.executable).with_name("freshwiki"))
LIMIT = 4_000


@dataclasses.dataclass
class Served:
    base: str
    port: int


# The first search of a fresh server loads the embedder and the index, which on a loaded
# 2-core machine takes longer than httpx's 5 s default (a CI flake): a minute for every call.
def get(url: str, **kwargs: Any) -> httpx.Response:
    kwargs.setdefault("timeout", 60)
    return httpx.get(url, **kwargs)


def post(url: str, **kwargs: Any) -> httpx.Response:
    kwargs.setdefault("timeout", 60)
    return httpx.post(url, **kwargs)


def _serve(env: dict[str, str], log: Path, *args: str) -> Iterator[Served]:
    port = free_port()
    with log.open("w") as out:
        server = subprocess.Popen([EXE, "serve", "--no-chat", "--port", str(port), *args],
                                  stdout=out, stderr=out, env=env)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_healthy(server, base, log, timeout_s=600, interval_s=0.3)
            yield Served(base, port)
        finally:
            server.terminate()
            server.wait(timeout=30)


@pytest.fixture(scope="module")
def env(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("guard")
    write_small_topics(shared_data, root / "data")
    return {**os.environ, "FRESHWIKI_HOME": str(root / "home"),
            "FRESHWIKI_DATA_DIR": str(root / "data"), "FRESHWIKI_MAX_BODY_BYTES": str(LIMIT)}


@pytest.fixture(scope="module")
def served(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from _serve(env, tmp_path_factory.mktemp("log") / "serve.log")


def refused(response: httpx.Response, status: int, needle: str) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert needle in error["message"] and error["hint"], error


@pytest.mark.e2e
def test_a_cross_site_form_post_is_refused_before_any_work(served: Served) -> None:
    # A page on another site can send text/plain without a CORS preflight.
    for path in ("/v1/search", "/v1/chat/completions"):
        response = post(f"{served.base}{path}", content=b'{"q": "pear"}',
                              headers={"Content-Type": "text/plain"})
        refused(response, 415, "must be JSON")
    ok = post(f"{served.base}/v1/search", json={"q": "liverwort"})
    assert ok.status_code == 200 and ok.json()["hits"]


@pytest.mark.e2e
def test_foreign_hosts_and_origins_are_refused(served: Served) -> None:
    # DNS rebinding: the browser sends the attacker's name as Host.
    refused(get(f"{served.base}/v1/search", params={"q": "pear"},
                      headers={"Host": f"evil.example:{served.port}"}), 400, "evil.example")
    refused(get(f"{served.base}/v1/search", params={"q": "pear"},
                      headers={"Origin": "https://evil.example"}), 403, "evil.example")
    refused(get(f"{served.base}/v1/search", params={"q": "pear"},
                      headers={"Origin": "null"}), 403, "null")
    # The chat page's own origin, and localhost by name, are fine.
    for headers in ({"Origin": served.base}, {"Host": f"localhost:{served.port}"}):
        assert get(f"{served.base}/v1/search", params={"q": "pear"},
                         headers=headers).status_code == 200


@pytest.mark.e2e
def test_bodies_over_the_limit_get_413_declared_or_chunked(served: Served) -> None:
    big = b'{"q": "' + b"a" * LIMIT + b'"}'
    refused(post(f"{served.base}/v1/search", content=big,
                       headers={"Content-Type": "application/json"}), 413, "4,000 bytes")

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield big[:LIMIT // 2]
        yield big[LIMIT // 2:]

    refused(post(f"{served.base}/v1/search", content=chunks(),
                       headers={"Content-Type": "application/json"}), 413, "4,000 bytes")


@pytest.mark.e2e
def test_field_lengths_are_checked(served: Served) -> None:
    response = get(f"{served.base}/v1/search", params={"q": "pear " * 250})
    assert response.status_code == 422 and "the limit is 1,000" in response.text


@pytest.mark.e2e
def test_an_api_key_guards_everything_but_healthz(env: dict[str, str], tmp_path: Path) -> None:
    keyed = {**env, "FRESHWIKI_API_KEY": "s3cret-key"}
    for server in _serve(keyed, tmp_path / "serve.log"):
        url = f"{server.base}/v1/search"
        refused(get(url, params={"q": "pear"}), 401, "API key")
        refused(get(url, params={"q": "pear"},
                          headers={"Authorization": "Bearer wrong"}), 401, "API key")
        assert get(url, params={"q": "pear"},
                         headers={"Authorization": "Bearer s3cret-key"}).status_code == 200
        assert get(f"{server.base}/healthz").status_code == 200


@pytest.mark.e2e
def test_a_public_address_without_a_key_does_not_start(env: dict[str, str]) -> None:
    run = subprocess.run([EXE, "serve", "--no-chat", "--host", "0.0.0.0", "--port",
                          str(free_port())], env=env, capture_output=True, text=True,
                         timeout=120, check=False)
    assert run.returncode == 2
    assert "FRESHWIKI_API_KEY" in run.stderr and "Traceback" not in run.stderr


def test_turns_beyond_the_queue_get_503_with_retry_after(
    chat_settings: Settings, chat_index: HybridIndex
) -> None:
    engine = ScriptedEngine(chat_index)
    engine.gate = threading.Event()  # the first turn holds half-way until the gate opens
    settings = dataclasses.replace(chat_settings, chat_queue=1)
    port = free_port()
    server, thread = start_server(create_app(settings, index=chat_index, index_name="default",
                                             engine=engine, model_name="scripted:q"), port)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    body = {"model": "m", "stream": True,
            "messages": [{"role": "user", "content": "What is Clasmatocolea fasciculata?"}]}
    try:
        first: list[httpx.Response] = []
        holder = threading.Thread(target=lambda: first.append(post(url, json=body,
                                                                         timeout=60)))
        holder.start()
        assert engine.held.wait(30)
        second = post(url, json={**body, "stream": False}, timeout=30)
        refused(second, 503, "the server takes 1 at once")
        assert second.headers["Retry-After"] == "5"
        engine.gate.set()
        holder.join(30)
        assert first and first[0].status_code == 200
        again = post(url, json={**body, "stream": False}, timeout=30)
        assert again.status_code == 200  # the finished turn gave its place back
    finally:
        engine.gate.set()
        server.should_exit = True
        thread.join(timeout=30)


@pytest.mark.e2e
def test_an_idle_connection_outlives_the_retry_after_it_asks_for(served: Served) -> None:
    # Found under load (experiments/reliability.py, 50 sessions): a client told to come back
    # in 5 s that reused its connection met uvicorn closing it after its default 5 s keep-alive.
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
    try:
        conn.request("GET", "/healthz")
        assert conn.getresponse().read() and conn.sock is not None
        first = conn.sock
        time.sleep(RETRY_AFTER_S + 1)
        conn.request("GET", "/healthz")  # a closed connection: RemoteDisconnected here
        response = conn.getresponse()
        assert response.status == 200 and response.read()
        assert conn.sock is first  # answered on the same connection
    finally:
        conn.close()
