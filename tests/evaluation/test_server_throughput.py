"""The plumbing of experiments/server_throughput.py, against an OpenAI-compatible double.

The script's figure (runner throughput over the server's saturated throughput) is only fair if
both clients send the very same requests, and its cache figure only means something if the
re-run really is answered from the response cache. Both are checked here on a real HTTP
server on 127.0.0.1 (a small FastAPI app that records every body it receives), with real
WikiContradict prompts, without building llama-server: what crosses the wire, the counts,
and that the cache re-run sends nothing and returns exactly what the filling run stored.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from freshwiki.benchmarks.wikicontradict import DATASET_FILE

pytestmark = pytest.mark.timeout(120)

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "server_throughput.py"
ITEMS = 5
MAX_TOKENS = 8


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("server_throughput", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


@dataclass
class _Recorder:
    lock: threading.Lock = field(default_factory=threading.Lock)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0

    def take(self) -> tuple[list[dict[str, Any]], int]:
        """The bodies received since the last call, and the most that were in flight."""
        with self.lock:
            taken, peak = self.bodies, self.max_in_flight
            self.bodies, self.max_in_flight = [], 0
        return taken, peak


def _double(recorder: _Recorder) -> FastAPI:
    """Answers every chat call after a short pause with a reply unique to the call.

    Prompt tokens are a function of the messages (characters / 4), so equal counts mean equal
    prompts; the reply names the call's number, so an answer that came from the server a
    second time could never equal the first one.
    """
    app = FastAPI()
    served = {"calls": 0, "completion": 0}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        with recorder.lock:
            recorder.bodies.append(body)
            served["calls"] += 1
            n = served["calls"]
            recorder.in_flight += 1
            recorder.max_in_flight = max(recorder.max_in_flight, recorder.in_flight)
        try:
            await asyncio.sleep(0.05)  # long enough for concurrent calls to overlap
        finally:
            with recorder.lock:
                recorder.in_flight -= 1
        prompt = len(json.dumps(body["messages"])) // 4
        completion = min(int(body["max_tokens"]), 3)
        served["completion"] += completion
        return JSONResponse({
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "length", "logprobs": None,
                         "message": {"role": "assistant", "content": f"reply number {n}"}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        })

    @app.get("/metrics")
    async def metrics() -> PlainTextResponse:
        return PlainTextResponse(
            "# HELP llamacpp:tokens_predicted_total Number of generation tokens processed.\n"
            "# TYPE llamacpp:tokens_predicted_total counter\n"
            f"llamacpp:tokens_predicted_total {served['completion']}\n"
            f"llamacpp:n_decode_total {served['calls']}\n")

    return app


@pytest.fixture(scope="module")
def double() -> Iterator[tuple[str, _Recorder]]:
    recorder = _Recorder()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(_double(recorder), log_level="warning",
                                           lifespan="off", access_log=False,
                                           timeout_graceful_shutdown=1))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "test server did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/v1", recorder
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def _canonical(body: dict[str, Any]) -> str:
    return json.dumps(body, sort_keys=True)


def test_anchor_and_runner_send_the_same_requests_and_the_rerun_sends_none(
    double: tuple[str, _Recorder], shared_data: Path, tmp_path: Path,
) -> None:
    url, recorder = double
    script = _script()
    bench = script.load_benchmark(shared_data / DATASET_FILE, MAX_TOKENS)
    ids = script.item_ids(bench, ITEMS)
    assert ids == ["wc-000-q1", "wc-001-q1", "wc-002-q1", "wc-003-q1", "wc-004-q1"]
    bodies = script.anchor_bodies(bench, ITEMS, script.MODEL_ALIAS)
    assert list(bodies) == ids

    anchor = asyncio.run(script.run_anchor(url, bodies))
    anchor_sent, anchor_peak = recorder.take()
    assert len(anchor_sent) == ITEMS and anchor.requests == ITEMS
    assert anchor_peak == ITEMS  # all at once: the server's queue, not the client, paces it
    # Real template-4 prompts: both passages and the question, at the fixed generation cap.
    first = bodies["wc-000-q1"]
    assert first["max_tokens"] == MAX_TOKENS and first["temperature"] == 0.0
    sample = next(iter(bench.samples()))
    assert sample.input in first["messages"][0]["content"]
    assert all(doc.text[:60] in first["messages"][0]["content"] for doc in sample.documents)

    phases = {}
    for concurrency in (1, 2):
        phase = asyncio.run(script.run_runner(
            url, bench, items=ITEMS, concurrency=concurrency, home=tmp_path / f"h{concurrency}",
            name=f"runner-c{concurrency}"))
        sent, peak = recorder.take()
        # Byte for byte the anchor's requests (order aside): the ratio compares like with like.
        assert sorted(map(_canonical, sent)) == sorted(map(_canonical, anchor_sent))
        assert 1 <= peak <= concurrency  # the client's bound holds
        assert (phase.requests, phase.failures, phase.cache_hits) == (ITEMS, 0, 0)
        assert phase.prompt_tokens_by_item == anchor.prompt_tokens_by_item
        assert phase.completion_tokens == anchor.completion_tokens == 3 * ITEMS
        phases[concurrency] = phase
    assert script.same_work(anchor, phases[2]) == {
        "same_prompt_tokens": True, "identical_texts": 0, "items": ITEMS}

    rerun = asyncio.run(script.run_runner(
        url, bench, items=ITEMS, concurrency=2, home=tmp_path / "h2", name="cache-rerun",
        store_path=tmp_path / "rerun.sqlite"))
    assert recorder.take()[0] == []  # nothing reached the server
    assert (rerun.requests, rerun.cache_hits, rerun.failures) == (ITEMS, ITEMS, 0)
    assert rerun.texts == phases[2].texts
    assert len(set(rerun.texts.values())) == ITEMS  # each item its own stored reply
    assert script.same_work(phases[2], rerun)["identical_texts"] == ITEMS


def test_ratios_and_server_counters(double: tuple[str, _Recorder]) -> None:
    url, recorder = double
    script = _script()
    before = script.server_metrics(url)
    asyncio.run(script.run_anchor(url, {"a": {"model": "m", "max_tokens": 5, "messages": [
        {"role": "user", "content": "hello"}]}}))
    recorder.take()
    delta = script._delta(before, script.server_metrics(url))
    assert delta == {"tokens_predicted_total": 3.0, "n_decode_total": 1.0}

    def phase(name: str, client: str, wall: float, tokens: int, concurrency: int = 4) -> Any:
        return script.Phase(name=name, client=client, concurrency=concurrency, wall_s=wall,
                            requests=10, prompt_tokens=100, completion_tokens=tokens)

    # Anchors at 2.0 and 2.5 req/s (mean 2.25); a runner at 2.0 req/s is 0.889 of it.
    ratios = script.compare([phase("a1", "httpx", 5.0, 400), phase("a2", "httpx", 4.0, 400)],
                            [phase("r4", "freshwiki eval", 5.0, 450)])
    assert ratios["anchor_requests_per_s"] == 2.25 and ratios["anchor_drift"] == 1.25
    assert ratios["runner"]["4"] == {"requests_ratio": 0.8889, "tokens_ratio": 1.0}
