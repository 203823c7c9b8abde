"""Reliability figures (issue 16): load, faults, crashes and fuzzing, each bounded, loopback only.

Scenarios (``--scenarios``, all by default), every one bounded in count and in time, every
server on 127.0.0.1:

* **load**: a real ``freshwiki serve`` process (fast mode, a 12-article default corpus built
  from the shared topic leads) with its model an OpenAI-compatible double on loopback, so the
  server, not the model, is under test. ``--sessions`` concurrent chat sessions (50) of
  ``--turns`` turns (5), even sessions streaming, odd ones not; turn 2 on continues by
  ``conversation_id``. Each server queue size in ``--queues`` is one run: the default queue
  (4, FRESHWIKI_CHAT_QUEUE) answers the surplus with 503 + Retry-After, which the client
  honours and counts apart from errors; a queue as large as the session count admits all.
  Reported: errors, 503s, p50 / p99 latency of the answered request and of the whole turn
  (waits for Retry-After included), and whether every turn is stored exactly once (each
  conversation read back through ``GET /v1/conversations/ID``: exactly the user messages sent,
  in order, each followed by the reply the client received).
* **faults**: ``freshwiki eval wikicontradict`` (vanilla system, LLM judge, default templates:
  253 questions x 2 templates = 506 items) against the double failing ``--fault-rate`` (20 %)
  of calls, spread over HTTP 500, 429 (Retry-After: 1), a hang past the client's timeout,
  malformed JSON and a connection dropped mid-body. The same command against the fault-free
  double is the reference. Reported: items scored, items recorded with their error, items
  neither (goal 0), and items whose output or scores differ from the reference (goal 0); then
  the same command re-run (it retries failed items) until every item is scored.
* **crashes**: ``kill -9`` (of the whole process group) at ``--kills`` (10) seeded random
  points, then resume, of (a) ``freshwiki eval`` as above, killed repeatedly in one run, a
  random number of new results after the last kill plus a random delay, and (b) ``freshwiki
  corpus ingest`` of the real enwiki dump slice, each kill in a fresh store once a random
  number of revisions is stored, then the same command again. Goal: results byte-identical
  to an uninterrupted run, 0 lost, 0 duplicated. Compared: every output (text, tokens, model,
  sample metadata) and score (value, label, explanation, data) of the run, and every page,
  revision and passage (storage order included) of the corpus; not the times and latencies
  each row records, nor a score's ``judge_cache_hit`` flag (a judge call answered
  before a kill is a cache hit on resume), nor the ``sources`` log of ingest invocations.
* **fuzz**: Hypothesis on five parsers (``tests/fuzzing.py``): the wikitext cleaner, the dump
  reader (XML, bz2 incl. multistream, gzip, xz, damaged), the Community Notes TSV loader, the
  API JSON edit reader and the chat API's request parsing. ``--fuzz-count`` inputs per target
  (goal 10^5), each target also bounded by ``--fuzz-budget`` seconds; the count reached is
  what is reported. Goal: 0 unhandled exceptions (handled = the module's documented error,
  with a message naming the input file).

Run::

    .venv/bin/python experiments/reliability.py [--scenarios load,faults,crashes,fuzz]
        [--fuzz-count 100000] [--quick]

Writes ``experiments/results/reliability.json`` (``--quick``: ``reliability_quick.json``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import hashlib
import json
import os
import platform
import random
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from freshwiki.stats import percentile

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = REPO.parent / "shared" / "data"
DUMP = SHARED / "wikipedia" / "dumps" / "enwiki-pages-articles-sample.xml.bz2"
RESULTS = HERE / "results" / "reliability.json"
EXE = str(Path(sys.executable).with_name("freshwiki"))
FAULTS = ("http_500", "http_429", "timeout", "malformed_json", "dropped")

sys.path.insert(0, str(REPO))  # the fuzz targets and the topic-subset writer live in tests/


def say(text: str) -> None:
    print(text, flush=True)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def seconds_at(values: list[float], q: float) -> float | None:
    """The nearest-rank ``q``-quantile of ``values`` (``q`` in (0, 1]), rounded to ms.

    ``None`` when empty.
    """
    value = percentile(values, q)
    return None if value is None else round(value, 3)


# -- the model double ------------------------------------------------------------------------

WORDS = ("river", "1947", "Paris", "council", "three", "north", "album", "treaty", "2019",
         "station", "Smith", "island")


def _fill(schema: dict[str, Any], rng: random.Random) -> Any:
    """A value valid under ``schema`` (the small subset freshwiki's stages use)."""
    if "enum" in schema:
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return _fill(schema[key][0], rng)
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        return {k: _fill(v, rng) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        low = int(schema.get("minItems", 0))
        high = int(schema.get("maxItems", low + 2))
        return [_fill(schema.get("items", {}), rng) for _ in range(rng.randint(low, high))]
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "integer":
        return rng.randint(int(schema.get("minimum", 0)), int(schema.get("maximum", 10)))
    if kind == "number":
        return round(rng.random(), 3)
    if kind == "string":
        return rng.choice(WORDS)[: int(schema.get("maxLength", 80))]
    return None


def answer(body: dict[str, Any]) -> str:
    """The double's reply: a pure function of the request (messages and response format).

    Text: two sentences of the last user message, chosen by a hash of the request, so
    benchmark scores vary between items yet never between runs. JSON: a schema-valid object
    drawn the same way; the chat's query stage gets a real search for the user's words.
    """
    messages = body.get("messages") or []
    fmt = body.get("response_format") or {}
    digest = hashlib.sha256(json.dumps([messages, fmt], sort_keys=True).encode()).hexdigest()
    rng = random.Random(int(digest[:16], 16))
    user = next((m.get("content") or "" for m in reversed(messages)
                 if m.get("role") == "user"), "")
    user = user if isinstance(user, str) else json.dumps(user)
    if fmt:
        spec = fmt.get("json_schema") or {}
        schema = spec.get("schema") or fmt.get("schema") or {}
        if spec.get("name") == "query":
            words = " ".join(user.split()[-12:])[:150] or "Wikipedia"
            return json.dumps({"search": True, "query": words, "time": "none", "year": 0})
        return json.dumps(_fill(schema, rng))
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", user) if len(s) > 20]
    if not sentences:
        return "I do not know."
    return " ".join(rng.sample(sentences, min(2, len(sentences))))[:600]


@dataclass
class DoubleState:
    """Knobs and counters of the double (shared with the uvicorn thread under a lock)."""

    fault_rate: float = 0.0
    hang_s: float = 6.0
    delay_s: float = 0.0
    seed: int = 16
    calls: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)
    rng: random.Random = field(default_factory=random.Random)

    def reset(self, fault_rate: float, *, delay_s: float = 0.0) -> None:
        with self.lock:
            self.fault_rate, self.delay_s = fault_rate, delay_s
            self.calls, self.faults = 0, Counter()
            self.rng = random.Random(self.seed)

    def draw(self) -> str | None:
        with self.lock:
            self.calls += 1
            if self.rng.random() >= self.fault_rate:
                return None
            kind = self.rng.choice(FAULTS)
            self.faults[kind] += 1
            return kind


def _usage(body: dict[str, Any], text: str) -> dict[str, int]:
    prompt = sum(len(str(m.get("content") or "").split()) for m in body.get("messages") or [])
    return {"prompt_tokens": prompt, "completion_tokens": len(text.split()),
            "total_tokens": prompt + len(text.split())}


def double_app(state: DoubleState) -> FastAPI:
    """An OpenAI-compatible chat server: deterministic replies, faults at ``fault_rate``."""
    app = FastAPI()

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": "double", "object": "model"}]}

    @app.post("/v1/chat/completions", response_model=None)
    async def completions(request: Request) -> Response:
        body = await request.json()
        fault = state.draw()
        if state.delay_s:
            await asyncio.sleep(state.delay_s)
        stream = bool(body.get("stream"))
        text = answer(body)
        if fault == "http_500":
            return JSONResponse({"error": {"message": "injected 500", "type": "server_error"}},
                                status_code=500)
        if fault == "http_429":
            return JSONResponse({"error": {"message": "injected 429", "type": "rate_limit"}},
                                status_code=429, headers={"Retry-After": "1"})
        if fault == "timeout":  # hang past the client's timeout; the answer then goes nowhere
            await asyncio.sleep(state.hang_s)
        if fault == "malformed_json":
            if stream:
                return StreamingResponse(iter(['data: {"id": "x", "choices": [{"de\n\n']),
                                         media_type="text/event-stream")
            return Response('{"id": "chatcmpl-x", "choices": [{"message": {"content": "',
                            media_type="application/json")
        if stream:
            return StreamingResponse(_sse(body, text, dropped=fault == "dropped"),
                                     media_type="text/event-stream")
        envelope = json.dumps({
            "id": "chatcmpl-double", "object": "chat.completion", "created": 0,
            "model": body.get("model", "double"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": _usage(body, text)})
        if fault == "dropped":  # the connection closes half-way through the body
            return StreamingResponse(_dropped(envelope), media_type="application/json")
        return Response(envelope, media_type="application/json")

    return app


class _Dropped(Exception):
    """Raised inside a response body: uvicorn then closes the connection mid-body."""


async def _dropped(envelope: str) -> AsyncIterator[str]:
    yield envelope[: len(envelope) // 2]
    raise _Dropped("injected drop")


async def _sse(body: dict[str, Any], text: str, *, dropped: bool) -> AsyncIterator[str]:
    def chunk(delta: dict[str, Any], finish: str | None) -> str:
        return "data: " + json.dumps({
            "id": "chatcmpl-double", "object": "chat.completion.chunk", "created": 0,
            "model": body.get("model", "double"),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"

    words = text.split(" ")
    yield chunk({"role": "assistant", "content": ""}, None)
    for i, word in enumerate(words):
        if dropped and i == len(words) // 2:
            raise _Dropped("injected drop")
        yield chunk({"content": word if i == 0 else " " + word}, None)
    yield chunk({}, "stop")
    yield "data: " + json.dumps({"id": "chatcmpl-double", "object": "chat.completion.chunk",
                                 "created": 0, "model": body.get("model", "double"),
                                 "choices": [], "usage": _usage(body, text)}) + "\n\n"
    yield "data: [DONE]\n\n"


@dataclass
class Double:
    state: DoubleState
    server: uvicorn.Server
    thread: threading.Thread
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def spec(self, name: str) -> str:
        return f"openai:{name}@{self.url}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


def start_double(seed: int) -> Double:
    state = DoubleState(seed=seed)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(double_app(state), host="127.0.0.1", port=port,
                                           log_level="critical", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the model double did not start")
        time.sleep(0.05)
    return Double(state, server, thread, port)


def base_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("FRESHWIKI_CONFIG", "FRESHWIKI_MODEL", "FRESHWIKI_OPENAI_BASE_URL")}
    env.update({"FRESHWIKI_HOME": str(home), "FRESHWIKI_DATA_DIR": str(SHARED),
                "NO_COLOR": "1", "COLUMNS": "200", **extra})
    return env


# -- load ------------------------------------------------------------------------------------

FOLLOW_UPS = ("When did that happen?", "Where is it?", "Who is involved?",
              "What else is known about it?")


@dataclass
class LoadTally:
    served_s: list[float] = field(default_factory=list)
    turn_s: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    busy: int = 0
    sent: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    conversations: dict[int, str] = field(default_factory=dict)
    turn_numbers: dict[int, list[int]] = field(default_factory=dict)


async def _turn(client: httpx.AsyncClient, api: str, body: dict[str, Any]
                ) -> tuple[int, str | None, dict[str, Any] | None, str]:
    """(status, Retry-After, freshwiki extension, reply text) of one request."""
    if not body["stream"]:
        response = await client.post(f"{api}/chat/completions", json=body)
        if response.status_code != 200:
            return response.status_code, response.headers.get("retry-after"), None, \
                response.text[:200]
        data = response.json()
        return 200, None, data.get("freshwiki"), data["choices"][0]["message"]["content"]
    text: list[str] = []
    extension: dict[str, Any] | None = None
    async with client.stream("POST", f"{api}/chat/completions", json=body) as response:
        if response.status_code != 200:
            await response.aread()
            return response.status_code, response.headers.get("retry-after"), None, \
                response.text[:200]
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[6:])
            if "error" in event:
                return 599, None, None, f"error event: {event['error'].get('message')}"
            for choice in event.get("choices", []):
                text.append(choice.get("delta", {}).get("content") or "")
            extension = event.get("freshwiki", extension)
    return 200, None, extension, "".join(text)


async def _session(client: httpx.AsyncClient, api: str, number: int, questions: list[str],
                   tally: LoadTally, deadline: float) -> None:
    conversation: str | None = None
    tally.sent[number], tally.turn_numbers[number] = [], []
    for question in questions:
        body: dict[str, Any] = {"model": "any", "stream": number % 2 == 0,
                                "messages": [{"role": "user", "content": question}]}
        if conversation is not None:
            body["conversation_id"] = conversation
        started = time.perf_counter()
        while True:
            if time.monotonic() > deadline:
                tally.errors["scenario time limit reached"] += 1
                return
            attempt = time.perf_counter()
            try:
                status, retry, extension, text = await _turn(client, api, body)
            except (httpx.HTTPError, json.JSONDecodeError, KeyError) as exc:
                tally.errors[f"{type(exc).__name__}"] += 1
                return
            if status == 503 and retry is not None:
                tally.busy += 1
                await asyncio.sleep(float(retry))
                continue
            break
        if status != 200 or extension is None:
            tally.errors[f"HTTP {status}: {text[:80]}"] += 1
            return
        tally.served_s.append(time.perf_counter() - attempt)
        tally.turn_s.append(time.perf_counter() - started)
        conversation = extension["conversation_id"]
        tally.conversations[number] = conversation
        tally.turn_numbers[number].append(int(extension["turn"]))
        tally.sent[number].append((question, text))


def _check_store(api: str, tally: LoadTally, turns: int) -> dict[str, Any]:
    """Each conversation read back: the user messages sent, in order, once, with the replies."""
    stored_ok = lost = duplicated = mismatched = 0
    with httpx.Client(timeout=60) as client:
        for number, conversation in tally.conversations.items():
            data = client.get(f"{api}/conversations/{conversation}").json()
            messages = data.get("messages", [])
            users = [m["content"] for m in messages if m["role"] == "user"]
            replies = [m["content"] for m in messages if m["role"] == "assistant"]
            sent = [q for q, _ in tally.sent[number]]
            expected_roles = ["user", "assistant"] * len(sent)
            if users == sent and replies == [r for _, r in tally.sent[number]] and \
                    [m["role"] for m in messages] == expected_roles:
                stored_ok += len(sent)
            else:
                mismatched += 1
                lost += max(0, len(sent) - len(users))
                duplicated += max(0, len(users) - len(sent))
    answered = sum(len(v) for v in tally.sent.values())
    numbers_ok = all(v == list(range(1, len(v) + 1)) for v in tally.turn_numbers.values())
    return {"turns_answered": answered, "turns_stored_exactly_once": stored_ok,
            "conversations": len(tally.conversations), "conversations_mismatched": mismatched,
            "lost": lost, "duplicated": duplicated, "turn_numbers_1_to_n": numbers_ok,
            "all_stored_once": stored_ok == answered == len(tally.sent) * turns}


def load_run(args: argparse.Namespace, double: Double, root: Path, queue: int,
             titles: list[str]) -> dict[str, Any]:
    home = root / "home"
    env = base_env(home, FRESHWIKI_DATA_DIR=str(root / "data"), FRESHWIKI_CACHE="false",
                   FRESHWIKI_CHAT_QUEUE=str(queue), FRESHWIKI_TIMEOUT="60")
    port = free_port()
    log = root / f"serve-queue{queue}.log"
    with log.open("w") as out:
        proc = subprocess.Popen([EXE, "serve", "--port", str(port), "--model",
                                 double.spec("scripted")],
                                env=env, stdout=out, stderr=out, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 900
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"freshwiki serve exited: {log.read_text()[-2000:]}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("freshwiki serve did not come up in 900 s")
            time.sleep(0.5)
        rng = random.Random(args.seed)
        plans = []
        for _ in range(args.sessions):
            title = rng.choice(titles)
            plans.append([f"What is {title}?", *rng.sample(FOLLOW_UPS, len(FOLLOW_UPS))]
                         [: args.turns])
        tally = LoadTally()
        double.state.reset(0.0)
        started = time.perf_counter()

        async def drive() -> None:
            limits = httpx.Limits(max_connections=args.sessions + 10)
            async with httpx.AsyncClient(timeout=120, limits=limits) as client:
                stop_at = time.monotonic() + args.load_timeout
                await asyncio.gather(*(_session(client, f"{base}/v1", n, plan, tally, stop_at)
                                       for n, plan in enumerate(plans)))

        asyncio.run(drive())
        wall = time.perf_counter() - started
        store = _check_store(f"{base}/v1", tally, args.turns)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    errors = sum(tally.errors.values())
    row = {
        "queue": queue, "sessions": args.sessions, "turns_per_session": args.turns,
        "turns_sent": args.sessions * args.turns, "errors": errors,
        "error_kinds": dict(tally.errors), "busy_503_retried": tally.busy,
        "served_p50_s": seconds_at(tally.served_s, 0.5),
        "served_p99_s": seconds_at(tally.served_s, 0.99),
        "turn_p50_s": seconds_at(tally.turn_s, 0.5), "turn_p99_s": seconds_at(tally.turn_s, 0.99),
        "wall_s": round(wall, 1),
        "turns_per_s": round(len(tally.turn_s) / wall, 2) if wall else None,
        "model_calls": double.state.calls, **store,
    }
    say(f"  queue {queue}: {errors} errors, {tally.busy} x 503 retried, served p50/p99 "
        f"{row['served_p50_s']}/{row['served_p99_s']} s, turn p50/p99 {row['turn_p50_s']}/"
        f"{row['turn_p99_s']} s, {store['turns_stored_exactly_once']}/{row['turns_sent']} "
        f"turns stored exactly once, {row['wall_s']} s")
    return row


def scenario_load(args: argparse.Namespace, double: Double, work: Path) -> dict[str, Any]:
    from tests.conftest import write_small_topics

    say(f"load: {args.sessions} sessions x {args.turns} turns against freshwiki serve")
    root = work / "load"
    titles = list(write_small_topics(SHARED, root / "data"))
    runs = [load_run(args, double, root, queue, titles) for queue in args.queues]
    return {
        "runs": runs,
        "setup": "freshwiki serve (fast mode, k=5) over a default index of 12 real topic leads "
                 "(4 head, 4 tail, 4 recent), model: an OpenAI-compatible double on loopback "
                 "answering at once (schema-valid JSON, sentences of the prompt), response "
                 "cache off; even sessions stream, odd ones do not; a 503 with Retry-After is "
                 "retried after the time it asks",
        "goals": {
            f"queue{r['queue']}_0_errors": r["errors"] == 0 for r in runs} | {
            f"queue{r['queue']}_all_turns_stored_once": r["all_stored_once"] for r in runs},
    }


# -- evaluation runs (faults and crashes) ----------------------------------------------------


def eval_command(double: Double, limit: int | None) -> list[str]:
    command = [EXE, "eval", "wikicontradict", "--system", "vanilla",
               "--model", double.spec("sut"), "--judge", double.spec("judge"), "--json"]
    return command + (["--limit", str(limit)] if limit else [])


def eval_db(home: Path) -> Path:
    return home / "runs" / "runs.sqlite"


def results_dump(home: Path) -> bytes:
    """Every output and score of the store, minus times and latencies, as canonical JSON."""
    with contextlib.closing(sqlite3.connect(eval_db(home))) as conn:
        outputs = conn.execute(
            "SELECT run_id, sample_id, template, sample_index, metadata, text, prompt_tokens,"
            " completion_tokens, model FROM outputs ORDER BY run_id, sample_id, template"
        ).fetchall()
        scores = conn.execute(
            "SELECT run_id, sample_id, template, scorer, value, label, explanation, data"
            " FROM scores ORDER BY run_id, sample_id, template, scorer").fetchall()
    # A judge call answered before a kill is served from the response cache on resume: the
    # score is the same, only its "judge_cache_hit" flag (how it was obtained) differs, so
    # that flag is left out with the times, like output.cache_hit is.
    scores = [(*row[:7], _without_cache_flag(row[7])) for row in scores]
    return json.dumps({"outputs": outputs, "scores": scores}, sort_keys=True).encode()


def _without_cache_flag(data: str | None) -> Any:
    if not data:
        return data
    parsed = json.loads(data)
    if isinstance(parsed, dict):
        parsed.pop("judge_cache_hit", None)
    return parsed


def eval_rows(home: Path) -> tuple[dict[tuple[str, str], Any], dict[tuple[str, str], Any],
                                   dict[tuple[str, str], list[Any]]]:
    """(outputs, scores and failures) keyed by (sample, template)."""
    with contextlib.closing(sqlite3.connect(eval_db(home))) as conn:
        outputs = {(s, t): text for s, t, text in conn.execute(
            "SELECT sample_id, template, text FROM outputs")}
        scores: dict[tuple[str, str], Any] = {}
        for s, t, scorer, value, label in conn.execute(
                "SELECT sample_id, template, scorer, value, label FROM scores"):
            scores.setdefault((s, t), {})[scorer] = (value, label)
        failures: dict[tuple[str, str], list[Any]] = {}
        for s, t, stage, scorer, kind, message in conn.execute(
                "SELECT sample_id, template, stage, scorer, error_type, message FROM failures"):
            failures.setdefault((s, t), []).append((stage, scorer, kind, message[:120]))
    return outputs, scores, failures


def duplicates(home: Path) -> int:
    with contextlib.closing(sqlite3.connect(eval_db(home))) as conn:
        out = conn.execute("SELECT COUNT(*) - COUNT(DISTINCT run_id || '/' || sample_id || '/'"
                           " || template) FROM outputs").fetchone()[0]
        sc = conn.execute("SELECT COUNT(*) - COUNT(DISTINCT run_id || '/' || sample_id || '/'"
                          " || template || '/' || scorer) FROM scores").fetchone()[0]
    return int(out) + int(sc)


def run_eval(double: Double, home: Path, limit: int | None, timeout_s: float,
             **env: str) -> tuple[int, dict[str, Any] | None, float, str]:
    started = time.perf_counter()
    proc = subprocess.run(eval_command(double, limit), capture_output=True, text=True,
                          timeout=timeout_s, env=base_env(home, **env))
    summary = None
    with contextlib.suppress(json.JSONDecodeError):
        summary = json.loads(proc.stdout)
    return proc.returncode, summary, time.perf_counter() - started, proc.stderr[-1500:]


@dataclass
class Reference:
    home: Path
    dump: bytes
    items: int
    seconds: float


def reference_eval(args: argparse.Namespace, double: Double, work: Path,
                   cache: dict[str, Reference]) -> Reference:
    """The uninterrupted, fault-free run every other run is compared with (made once)."""
    if "eval" not in cache:
        home = work / "eval-reference"
        double.state.reset(0.0)
        code, summary, seconds, err = run_eval(double, home, args.eval_limit, args.eval_timeout)
        if code != 0 or summary is None:
            raise RuntimeError(f"the reference evaluation failed ({code}): {err}")
        if summary["complete"] != summary["items"]:
            raise RuntimeError(f"the fault-free reference left items incomplete: {summary}")
        cache["eval"] = Reference(home, results_dump(home), int(summary["items"]), seconds)
        say(f"  reference: {summary['complete']}/{summary['items']} items complete, "
            f"{len(summary['failures'])} failures, {seconds:.1f} s")
    return cache["eval"]


def scenario_faults(args: argparse.Namespace, double: Double, work: Path,
                    cache: dict[str, Reference]) -> dict[str, Any]:
    say(f"faults: freshwiki eval against a double failing {args.fault_rate:.0%} of calls")
    ref = reference_eval(args, double, work, cache)
    ref_outputs, ref_scores, _ = eval_rows(ref.home)
    home = work / "eval-faults"
    env = {"FRESHWIKI_TIMEOUT": str(args.client_timeout)}
    double.state.hang_s = args.client_timeout + 2
    passes = []
    first: dict[str, Any] = {}
    for attempt in range(1 + args.resumes):
        double.state.reset(args.fault_rate)
        code, _summary, seconds, err = run_eval(double, home, args.eval_limit, args.eval_timeout,
                                               **env)
        outputs, scores, failures = eval_rows(home)
        keys = set(ref_outputs)
        complete = {k for k in keys if k in outputs and len(scores.get(k, {})) == 2}
        failed = {k for k in keys - complete if k in failures}
        differ = sorted(f"{s}/{t}" for (s, t) in complete
                        if outputs[(s, t)] != ref_outputs[(s, t)]
                        or scores[(s, t)] != ref_scores[(s, t)])
        kinds = Counter(f[2] for k in failed for f in failures[k])
        row = {"pass": attempt + 1, "exit_code": code, "seconds": round(seconds, 1),
               "model_calls": double.state.calls, "faults_injected": dict(double.state.faults),
               "items": len(keys), "scored": len(complete), "recorded_with_error": len(failed),
               "neither": len(keys) - len(complete) - len(failed),
               "error_types": dict(kinds), "differ_from_fault_free": len(differ),
               "differing_items": differ[:10]}
        if code != 0:
            row["stderr_tail"] = err[-600:]
        passes.append(row)
        if attempt == 0:
            first = row
        say(f"  pass {attempt + 1}: {row['scored']}/{row['items']} scored, "
            f"{row['recorded_with_error']} recorded with their error ({dict(kinds)}), "
            f"{row['neither']} neither, {row['differ_from_fault_free']} differ from the "
            f"fault-free run; {double.state.calls} calls, faults {dict(double.state.faults)}, "
            f"exit {code}, {seconds:.0f} s")
        if len(complete) == len(keys):
            break
    final_identical = results_dump(home) == ref.dump
    say(f"  after {len(passes)} pass(es): results byte-identical to the fault-free run: "
        f"{final_identical}")
    return {
        "fault_rate": args.fault_rate, "fault_kinds": list(FAULTS),
        "client_timeout_s": args.client_timeout, "hang_s": double.state.hang_s,
        "reference_seconds": round(ref.seconds, 1), "passes": passes,
        "complete_after_passes": len(passes) if passes[-1]["neither"] == 0 and
        passes[-1]["recorded_with_error"] == 0 else None,
        "final_byte_identical_to_fault_free": final_identical,
        "goals": {
            "every_item_scored_or_recorded": first.get("neither") == 0,
            "identical_scores_where_succeeded": first.get("differ_from_fault_free") == 0,
        },
    }


def count_results(home: Path) -> int:
    try:
        with contextlib.closing(sqlite3.connect(f"file:{eval_db(home)}?mode=ro", uri=True,
                                                timeout=5)) as conn:
            row = conn.execute("SELECT (SELECT COUNT(*) FROM outputs)"
                               " + (SELECT COUNT(*) FROM scores)").fetchone()
        return int(row[0])
    except sqlite3.Error:
        return 0


def count_revisions(path: Path) -> int:
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True,
                                                timeout=5)) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM revisions").fetchone()[0])
    except sqlite3.Error:
        return 0


def kill_group(proc: subprocess.Popen[bytes]) -> bool:
    """``kill -9`` the process and its children; whether it was still running."""
    alive = proc.poll() is None
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    return alive


def crash_eval(args: argparse.Namespace, double: Double, work: Path,
               cache: dict[str, Reference], rng: random.Random) -> dict[str, Any]:
    ref = reference_eval(args, double, work, cache)
    home = work / "eval-crashes"
    double.state.reset(0.0, delay_s=args.crash_delay)
    total = 3 * ref.items  # an output and two scores per item
    kills: list[dict[str, Any]] = []
    attempts = 0
    while len(kills) < args.kills and attempts < 3 * args.kills:
        attempts += 1
        before = count_results(home)
        target = before + rng.randint(1, max(1, (total - before) // (args.kills - len(kills) + 1)))
        jitter = rng.uniform(0.0, 0.3)
        proc = subprocess.Popen(eval_command(double, args.eval_limit), env=base_env(home),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        deadline = time.monotonic() + args.eval_timeout
        while proc.poll() is None and count_results(home) < target and \
                time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(jitter)
        if kill_group(proc):
            kills.append({"results_before": before, "kill_after_results": target,
                          "jitter_s": round(jitter, 3), "results_at_kill": count_results(home)})
    code, _summary, _seconds, _err = run_eval(double, home, args.eval_limit, args.eval_timeout)
    double.state.reset(0.0)
    identical = code == 0 and results_dump(home) == ref.dump
    outputs, scores, failures = eval_rows(home)
    ref_outputs, _, _ = eval_rows(ref.home)
    lost = sum(1 for k in ref_outputs if k not in outputs or len(scores.get(k, {})) != 2)
    dup = duplicates(home)
    say(f"  eval: {len(kills)} kills, then a resume (exit {code}): byte-identical {identical}, "
        f"{lost} lost, {dup} duplicated, {len(failures)} failure rows")
    return {"kills": len(kills), "kill_points": kills, "resume_exit_code": code,
            "byte_identical": identical, "lost": lost, "duplicated": dup,
            "failure_rows": len(failures), "items": ref.items,
            "double_delay_s": args.crash_delay}


def corpus_dump(path: Path) -> tuple[bytes, dict[str, int]]:
    """Pages, revisions and passages (storage order too), as canonical JSON, and counts."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        tables = {
            "pages": conn.execute("SELECT * FROM pages ORDER BY id").fetchall(),
            "revisions": conn.execute("SELECT * FROM revisions ORDER BY id").fetchall(),
            "passages": conn.execute("SELECT * FROM passages ORDER BY rowid").fetchall(),
        }
        distinct = conn.execute("SELECT COUNT(DISTINCT id) FROM passages").fetchone()[0]
    counts = {k: len(v) for k, v in tables.items()} | {"distinct_passage_ids": int(distinct)}
    return json.dumps(tables, sort_keys=True).encode(), counts


def crash_ingest(args: argparse.Namespace, work: Path, rng: random.Random) -> dict[str, Any]:
    from freshwiki.config import load_settings

    def corpus_of(home: Path) -> Path:
        return load_settings({"home": home}).settings.corpus_path

    command = [EXE, "corpus", "ingest", str(DUMP)]
    ref_home = work / "ingest-reference"
    started = time.perf_counter()
    subprocess.run(command, env=base_env(ref_home), capture_output=True, timeout=900, check=True)
    ref_seconds = time.perf_counter() - started
    ref_dump, ref_counts = corpus_dump(corpus_of(ref_home))
    trials: list[dict[str, Any]] = []
    attempts = 0
    while len(trials) < args.kills and attempts < 3 * args.kills:
        attempts += 1
        home = work / f"ingest-crash-{attempts}"
        target = rng.randint(0, ref_counts["revisions"] - 1)
        jitter = rng.uniform(0.0, 0.2)
        proc = subprocess.Popen(command, env=base_env(home), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 900
        while proc.poll() is None and count_revisions(corpus_of(home)) < target and \
                time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(jitter)
        at_kill = count_revisions(corpus_of(home))
        if not kill_group(proc):
            continue
        resumed = subprocess.run(command, env=base_env(home), capture_output=True, text=True,
                                 timeout=900)
        dump, counts = corpus_dump(corpus_of(home))
        trials.append({
            "kill_after_revisions": target, "jitter_s": round(jitter, 3),
            "revisions_at_kill": at_kill, "resume_exit_code": resumed.returncode,
            "byte_identical": dump == ref_dump,
            "lost": max(0, ref_counts["revisions"] - counts["revisions"])
            + max(0, ref_counts["passages"] - counts["passages"]),
            "duplicated": max(0, counts["revisions"] - ref_counts["revisions"])
            + max(0, counts["passages"] - ref_counts["passages"])
            + counts["passages"] - counts["distinct_passage_ids"]})
    identical = sum(t["byte_identical"] for t in trials)
    lost = sum(t["lost"] for t in trials)
    dup = sum(t["duplicated"] for t in trials)
    say(f"  ingest: {len(trials)} kills, each resumed: {identical}/{len(trials)} byte-identical, "
        f"{lost} lost, {dup} duplicated (reference {ref_counts}, {ref_seconds:.1f} s)")
    return {"kills": len(trials), "trials": trials, "byte_identical": identical,
            "lost": lost, "duplicated": dup, "reference_counts": ref_counts,
            "reference_seconds": round(ref_seconds, 1)}


def scenario_crashes(args: argparse.Namespace, double: Double, work: Path,
                     cache: dict[str, Reference]) -> dict[str, Any]:
    say(f"crashes: kill -9 at {args.kills} random points, then resume")
    rng = random.Random(args.seed)
    evaluation = crash_eval(args, double, work, cache, rng)
    ingest = crash_ingest(args, work, rng)
    return {
        "eval": evaluation, "ingest": ingest,
        "goals": {
            "eval_byte_identical_0_lost_0_duplicated": evaluation["byte_identical"]
            and evaluation["lost"] == 0 and evaluation["duplicated"] == 0
            and evaluation["kills"] == args.kills,
            "ingest_byte_identical_0_lost_0_duplicated": ingest["byte_identical"]
            == ingest["kills"] == args.kills and ingest["lost"] == 0
            and ingest["duplicated"] == 0,
        },
    }


# -- fuzz ------------------------------------------------------------------------------------


def scenario_fuzz(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from tests import fuzzing

    say(f"fuzz: {args.fuzz_count:,} inputs per target (at most {args.fuzz_budget:.0f} s each)")
    targets = [fuzzing.wikitext_target(), fuzzing.dump_target(), fuzzing.notes_target(),
               fuzzing.api_target()]
    chat, bodies = fuzzing.chat_target(work / "fuzz-home")
    targets.append(chat)
    rows: dict[str, Any] = {}
    try:
        for target in targets:
            outcome = fuzzing.fuzz(target, args.fuzz_count, seed=args.seed,
                                   budget_s=args.fuzz_budget, workdir=work)
            rows[target.name] = {"what": target.what, **outcome.as_dict()}
            say(f"  {target.name}: {outcome.inputs:,} inputs, {len(outcome.unhandled)} "
                f"unhandled, handled {dict(outcome.handled)}, {outcome.seconds:.0f} s, slowest "
                f"input {outcome.slowest_s:.3f} s")
    finally:
        bodies.close()
    return {
        "targets": rows, "seed": args.seed,
        "generator": "Hypothesis picks each input's shape and a seed (phase generate, no "
                     "database); a seeded random.Random fills in the details from real data "
                     "(enwiki dump slice pages, Community Notes rows) or fuzzed fields",
        "goals": {
            "1e5_inputs_per_target": all(r["inputs"] >= 100_000 for r in rows.values()),
            "0_unhandled": all(r["unhandled"] == 0 for r in rows.values()),
        },
    }


# -- main ------------------------------------------------------------------------------------


def git_commit() -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                          cwd=HERE).stdout.strip()


def collect_goals(out: dict[str, Any]) -> dict[str, bool]:
    return {f"{name}.{goal}": met for name, data in out.items()
            for goal, met in data.get("goals", {}).items()}


def write_results(results_path: Path, out: dict[str, Any], scenarios: list[str],
                  started: float) -> None:
    goals = collect_goals(out)
    tmp = results_path.with_suffix(".json.part")
    results_path.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(json.dumps({
        "command": " ".join(["python", *sys.argv]),
        "commit": subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                 cwd=HERE).stdout.strip(),
        "dirty": bool(subprocess.run(["git", "status", "--porcelain", "--", "src"],
                                     capture_output=True, text=True, cwd=HERE).stdout.strip()),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}, "
                   f"{os.cpu_count()} cores (shared)",
        "python": platform.python_version(),
        "seconds": round(time.perf_counter() - started, 1),
        "scenarios_this_run": scenarios, "complete": list(out),
        "data": {
            "load": "12 real Wikipedia lead paragraphs from ../shared/data/wikipedia/topics "
                    "(WikiChat's head/tail/recent sets), copied to a temporary data folder",
            "faults_crashes_eval": "WikiContradict (../shared/data/wikicontradict, IBM "
                                   "release): 253 questions x templates 4 and 5",
            "crashes_ingest": "../shared/data/wikipedia/dumps/enwiki-pages-articles-sample."
                              "xml.bz2 (206 real enwiki pages, gensim test data)",
            "fuzz": "windows of that dump and of ../shared/data/communitynotes (notes-00000, "
                    "scoredNotes), plus generated inputs",
            "model": "an OpenAI-compatible double on 127.0.0.1 (this script): replies are a "
                     "pure function of the request, so runs are comparable byte for byte",
        },
        **out, "goals": goals,
    }, indent=1, default=str), encoding="utf-8")
    tmp.replace(results_path)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scenarios", default="load,faults,crashes,fuzz")
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--queues", default="4,50",
                        help="Server chat queue sizes, one load run each (default 4 and 50).")
    parser.add_argument("--load-timeout", type=float, default=900.0)
    parser.add_argument("--eval-limit", type=int, default=None,
                        help="Only the first N WikiContradict questions (default all 253).")
    parser.add_argument("--eval-timeout", type=float, default=900.0)
    parser.add_argument("--fault-rate", type=float, default=0.2)
    parser.add_argument("--client-timeout", type=float, default=4.0,
                        help="FRESHWIKI_TIMEOUT of the faulty runs (a hang lasts 2 s more).")
    parser.add_argument("--resumes", type=int, default=3)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--crash-delay", type=float, default=0.02,
                        help="Seconds the double takes per call in the eval crash runs.")
    parser.add_argument("--fuzz-count", type=int, default=100_000)
    parser.add_argument("--fuzz-budget", type=float, default=400.0,
                        help="Seconds at most per fuzz target.")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--update", action="store_true",
                        help="Keep the other scenarios of the existing result file and replace "
                             "only those run now (each scenario records its own commit).")
    parser.add_argument("--quick", action="store_true",
                        help="A small run of everything (8 sessions, 40 questions, 3 kills, "
                             "2,000 fuzz inputs per target).")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.eval_limit, args.kills = 8, 40, 3
        args.fuzz_count, args.queues = min(args.fuzz_count, 2_000), "4"
    args.queues = [int(q) for q in str(args.queues).split(",") if q.strip()]
    scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    results_path = RESULTS.with_name("reliability_quick.json") if args.quick else RESULTS
    started = time.perf_counter()
    out: dict[str, Any] = {}
    if args.update and results_path.exists():
        kept = json.loads(results_path.read_text(encoding="utf-8"))
        out = {name: kept[name] for name in kept.get("complete", []) if name not in scenarios}
    cache: dict[str, Reference] = {}
    with tempfile.TemporaryDirectory(prefix="freshwiki-reliability-") as tmp:
        work = Path(tmp)
        double = start_double(args.seed)
        try:
            for name in scenarios:
                t0 = time.perf_counter()
                if name == "load":
                    out[name] = scenario_load(args, double, work)
                elif name == "faults":
                    out[name] = scenario_faults(args, double, work, cache)
                elif name == "crashes":
                    out[name] = scenario_crashes(args, double, work, cache)
                elif name == "fuzz":
                    out[name] = scenario_fuzz(args, work)
                else:
                    raise SystemExit(f"unknown scenario {name!r}")
                out[name]["seconds"] = round(time.perf_counter() - t0, 1)
                out[name]["commit"] = git_commit()
                out[name]["date"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
                # Written after every scenario: a later one that crashes or is stopped
                # loses only itself ("complete" says which scenarios the file holds).
                write_results(results_path, out, scenarios, started)
        finally:
            double.stop()
    for goal, met in collect_goals(out).items():
        say(f"goal {goal}: {'MET' if met else 'NOT MET'}")
    say(f"wrote {results_path} ({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
