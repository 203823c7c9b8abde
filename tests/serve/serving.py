"""Waiting for a real ``freshwiki serve`` subprocess to answer, shared by the e2e tests."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx


def wait_until_healthy(server: subprocess.Popen[bytes], base: str, log: Path, *,
                       timeout_s: float = 600, interval_s: float = 0.3) -> None:
    """Poll ``base/healthz`` until it answers 200; fail with the server's log if it exits.

    Loading models and indexes on a busy 2-core machine can take minutes, hence the long
    default; the test fails at once when the process dies instead of waiting it out.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        assert server.poll() is None, log.read_text()
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "server did not come up"
        time.sleep(interval_s)
