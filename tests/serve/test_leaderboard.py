"""`/leaderboard`: the leaderboard site served from the server's runs store, behind the guard."""

from __future__ import annotations

import dataclasses
import http.client
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from freshwiki.config import Settings
from freshwiki.evaluation import ResultsStore, default_results_path
from freshwiki.retrieval import HybridIndex
from freshwiki.serve import create_app
from tests.e2e.fixtures import free_port
from tests.evaluation.leaderboard_data import commit, growover_runs, hellofresh_run
from tests.serve.conftest import start_server
from tests.serve.serving import wait_until_healthy

RALM, VANILLA, RILM = growover_runs()


@pytest.fixture
def served(chat_settings: Settings, chat_index: HybridIndex,
           tmp_path: Path) -> Iterator[tuple[str, Settings]]:
    """A real uvicorn on 127.0.0.1 with its own empty home (no chat engine needed)."""
    settings = dataclasses.replace(chat_settings, home=tmp_path / "home")
    port = free_port()
    server, thread = start_server(create_app(settings, index=chat_index,
                                             index_name="default"), port)
    try:
        yield f"http://127.0.0.1:{port}", settings
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def get(url: str, **kwargs: object) -> httpx.Response:
    return httpx.get(url, timeout=120, **kwargs)  # type: ignore[arg-type]


def raw_get(base: str, path: str) -> int:
    """Status of a request whose path is sent exactly as written (no dot-segment cleanup)."""
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


def test_the_leaderboard_follows_the_runs_store(served: tuple[str, Settings]) -> None:
    base, settings = served
    empty = get(f"{base}/leaderboard/")
    assert empty.status_code == 200 and 'id="no-runs"' in empty.text
    store_path = default_results_path(settings)
    assert not store_path.exists()  # showing nothing created no store
    with ResultsStore(store_path) as store:
        commit(store, RALM)
        commit(store, VANILLA)
    moved = get(f"{base}/leaderboard")
    assert moved.status_code == 307 and moved.headers["location"] == "/leaderboard/"
    index = get(f"{base}/leaderboard", follow_redirects=True)
    assert index.status_code == 200 and 'href="boards/growover.html"' in index.text
    assert index.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in index.headers["content-security-policy"]
    assert index.headers["cache-control"] == "no-cache"
    board = get(f"{base}/leaderboard/boards/growover.html")
    # ralm's pooled F1 is 7.5 / 12 (see leaderboard_data); its report is linked and served.
    assert f'<tr data-run="{RALM.run_id}">' in board.text and 'data-mean="0.625000"' in board.text
    report = get(f"{base}/leaderboard/runs/{RALM.run_id}/report.html")
    assert report.status_code == 200 and RALM.run_id in report.text
    assert get(f"{base}/leaderboard/leaderboard.json").json()["boards"][0]["slug"] == "growover"
    # New results while the server runs: the next request shows them (and only one build
    # is kept).
    with ResultsStore(store_path) as store:
        commit(store, hellofresh_run("e5f6a1b2c3d4", "rag", {"2024-01": [1, 1, 0]}))
    assert 'href="boards/hellofresh-notes.html"' in get(f"{base}/leaderboard/").text
    builds = settings.home / "serve" / "leaderboard"
    assert len([p for p in builds.iterdir() if not p.name.startswith(".")]) == 1


def test_only_pages_of_the_site_are_served(served: tuple[str, Settings]) -> None:
    base, settings = served
    with ResultsStore(default_results_path(settings)) as store:
        commit(store, RALM)
    assert get(f"{base}/leaderboard/").status_code == 200
    for path in ("/leaderboard/%2e%2e/%2e%2e/%2e%2e/runs/runs.sqlite",
                 "/leaderboard/../../../runs/runs.sqlite", "/leaderboard/.freshwiki-leaderboard",
                 "/leaderboard/boards/nope.html", "/leaderboard/%2Fetc%2Fpasswd"):
        assert raw_get(base, path) == 404, path
    port = base.rsplit(":", 1)[1]
    foreign = get(f"{base}/leaderboard/", headers={"Host": f"evil.example:{port}"})
    assert foreign.status_code == 400  # the guard stands in front of the leaderboard too


@pytest.mark.e2e
def test_freshwiki_serve_shows_the_leaderboard_behind_its_api_key(
        small_data_dir: Path, _isolated_home: Path, tmp_path: Path) -> None:
    with ResultsStore(_isolated_home / "runs" / "runs.sqlite") as store:
        for run in growover_runs():
            commit(store, run)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    env = {**os.environ, "FRESHWIKI_API_KEY": "k3y"}
    with log.open("w") as out:
        server = subprocess.Popen(
            [str(Path(sys.executable).with_name("freshwiki")), "serve", "--no-chat",
             "--port", str(port)], stdout=out, stderr=out, env=env)
        try:
            wait_until_healthy(server, base, log, timeout_s=600, interval_s=0.3)
            assert get(f"{base}/leaderboard/").status_code == 401
            auth = {"Authorization": "Bearer k3y"}
            index = get(f"{base}/leaderboard", headers=auth, follow_redirects=True)
            assert index.status_code == 200 and "3 runs on 1 board" in index.text
            board = get(f"{base}/leaderboard/boards/growover.html", headers=auth)
            assert 'data-mean="0.750000"' in board.text  # rilm: 4.5 / 6, the leader
            assert '<polyline class="series"' in board.text
        finally:
            server.terminate()
            server.wait(timeout=30)
    assert "leaderboard: /leaderboard" in log.read_text()
    assert "Traceback" not in log.read_text()
