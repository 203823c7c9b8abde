"""A real uvicorn server on 127.0.0.1 serving the app with a scripted chat engine.

One server per session (the small default corpus is built once, ~10 s): tests reset the
engine's knobs, and each test's conversations are its own because ids are fresh.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import uvicorn

from freshwiki.chat.conversations import ConversationStore
from freshwiki.config import Settings, load_settings
from freshwiki.retrieval import HybridIndex, build_default_index
from freshwiki.serve import create_app
from tests.conftest import write_small_topics
from tests.e2e.fixtures import free_port
from tests.serve.scripted_engine import ScriptedEngine


@dataclass
class LiveServer:
    base: str
    engine: ScriptedEngine
    settings: Settings
    store: ConversationStore

    @property
    def api(self) -> str:
        return f"{self.base}/v1"


def start_server(app: object, port: int) -> tuple[uvicorn.Server, threading.Thread]:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,  # type: ignore[arg-type]
                                           log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive(), "uvicorn exited while starting"
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    return server, thread


@pytest.fixture(scope="session")
def chat_settings(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    root = tmp_path_factory.mktemp("chat-server")
    write_small_topics(shared_data, root / "data")
    return load_settings({"home": root / "home", "data_dir": root / "data"}).settings


@pytest.fixture(scope="session")
def chat_index(chat_settings: Settings) -> Iterator[HybridIndex]:
    index = build_default_index(chat_settings)
    yield index
    index.close()


@pytest.fixture(scope="session")
def _live_server(chat_settings: Settings, chat_index: HybridIndex) -> Iterator[LiveServer]:
    engine = ScriptedEngine(chat_index)
    app = create_app(chat_settings, index=chat_index, index_name="default", engine=engine,
                     model_name="scripted:test")
    port = free_port()
    server, thread = start_server(app, port)
    base = f"http://127.0.0.1:{port}"
    assert httpx.get(f"{base}/healthz", timeout=10).json()["chat"] is True
    store = ConversationStore.open(chat_settings)  # a second reader, as a REPL would be
    try:
        yield LiveServer(base, engine, chat_settings, store)
    finally:
        store.close()
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture
def live(_live_server: LiveServer) -> Iterator[LiveServer]:
    _live_server.engine.reset()
    yield _live_server
    if _live_server.engine.gate is not None:
        _live_server.engine.gate.set()  # never leave a stream hanging for the next test
