"""Real weights for end-to-end tests, installed once into the shared models dir if absent."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from freshwiki.config import load_settings
from freshwiki.llm import models


def _installed(name: str) -> Path:
    settings = load_settings().settings
    return models.install(name, settings.models_dir)  # no-op when already there


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    return _installed("smollm2-135m")


@pytest.fixture(scope="session")
def qwen15_path() -> Path:
    return _installed("qwen2.5-coder-1.5b")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server(smollm2_path: Path) -> Iterator[str]:
    """A real llama_cpp.server on 127.0.0.1 serving SmolLM2; yields its /v1 base URL."""
    port = free_port()
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"freshwiki-llama-server-{port}.log"
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_path),
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
             "--model_alias", "smollm2"],
            stdout=fh, stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited early:\n{log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/models", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
