"""The OpenAI-compatible backend, through the LLM client, against a real local HTTP server.

The server double is a small FastAPI app served by uvicorn on 127.0.0.1 in a background
thread. Tests script its behaviour per request (``POST /control``) and read back what it
received (``GET /stats``), so every assertion is about what actually crossed the wire.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from freshwiki.llm import (
    LLM,
    CallLog,
    LLMError,
    LLMOutputError,
    LLMRefusalError,
    LLMRequestError,
    LLMUnavailableError,
    Message,
    ResponseCache,
    RetryPolicy,
)
from freshwiki.llm.backends.openai_compat import OpenAICompatibleBackend

pytestmark = pytest.mark.timeout(30)

MODEL = "test-model"
PROMPT_TOKENS = 7

# --------------------------------------------------------------------------------------------
# The server double
# --------------------------------------------------------------------------------------------

Behaviour = dict[str, Any]


def ok(content: str | None, **extra: Any) -> Behaviour:
    """A 200 answer with ``content`` (extra keys: refusal, finish_reason, delay, usage)."""
    return {"kind": "ok", "content": content, **extra}


def fail(kind: str, **extra: Any) -> Behaviour:
    return {"kind": kind, **extra}


@dataclass
class _State:
    lock: threading.Lock = field(default_factory=threading.Lock)
    script: list[Behaviour] = field(default_factory=list)
    default: Behaviour = field(default_factory=lambda: ok("default reply"))
    bodies: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    generation: int = 0

    def reset(self) -> None:
        with self.lock:
            self.script = []
            self.default = ok("default reply")
            self.bodies = []
            self.in_flight = 0
            self.max_in_flight = 0
            # Handlers still sleeping from an earlier test must not touch the new counters.
            self.generation += 1

    def take(self, body: dict[str, Any]) -> Behaviour:
        """The behaviour for this request: the head of the script, else the default."""
        if not self.script:
            return self.default
        head = self.script[0]
        # These stay at the head while rejecting: the fallback request that follows is
        # served by the same entry.
        if head["kind"] == "422_on_json_schema":
            if (body.get("response_format") or {}).get("type") == "json_schema":
                return {"kind": "reject", "status": head.get("status", 400),
                        "message": head.get("message", _JSON_SCHEMA_REJECTION)}
            return {**self.script.pop(0), "kind": "ok"}
        if head["kind"] == "reject_stream_options":
            if "stream_options" in body:
                return {"kind": "reject", "status": 400,
                        "message": "Unrecognized request argument supplied: stream_options"}
            return {**self.script.pop(0), "kind": "ok"}
        return self.script.pop(0)


_JSON_SCHEMA_REJECTION = "response_format.type must be 'text' or 'json_object'"
# What llama-cpp-python 0.3.x's server answers, with HTTP 500, to a json_schema request.
LLAMA_CPP_REJECTION = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
)


def _usage(behaviour: Behaviour, content: str | None) -> dict[str, int]:
    prompt, completion = behaviour.get(
        "usage", (PROMPT_TOKENS, max(1, len((content or "").split())))
    )
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "type": "test_error", "param": None, "code": status}},
        status_code=status,
        headers=headers,
    )


def _envelope(body: dict[str, Any], behaviour: Behaviour, n: int) -> dict[str, Any]:
    content = behaviour.get("content")
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if "refusal" in behaviour:
        message["refusal"] = behaviour["refusal"]
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", MODEL),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": behaviour.get("finish_reason", "stop"),
                "logprobs": None,
            }
        ],
        "usage": _usage(behaviour, content),
    }


def _sse(body: dict[str, Any], behaviour: Behaviour, n: int) -> Iterator[str]:
    content = behaviour.get("content") or ""
    base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": body.get("model", MODEL)}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return f"data: {json.dumps({**base, 'choices': [choice]})}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    for i, piece in enumerate(re.findall(r"\S+\s*", content)):
        if i == behaviour.get("drop_after"):
            raise ConnectionAbortedError("test server drops the stream")
        if i == behaviour.get("error_after"):
            yield f"data: {json.dumps({'error': {'message': 'model crashed', 'code': 500}})}\n\n"
            return
        yield chunk({"content": piece})
    yield chunk({}, behaviour.get("finish_reason", "stop"))
    if (body.get("stream_options") or {}).get("include_usage"):
        usage_chunk = {**base, "choices": [], "usage": _usage(behaviour, content)}
        yield f"data: {json.dumps(usage_chunk)}\n\n"
    yield "data: [DONE]\n\n"


def build_app(state: _State) -> FastAPI:
    app = FastAPI()

    @app.post("/control")
    async def control(request: Request) -> dict[str, Any]:
        spec = await request.json()
        with state.lock:
            state.script = list(spec.get("script", []))
            if spec.get("default") is not None:
                state.default = spec["default"]
        return {"queued": len(state.script)}

    @app.post("/reset")
    async def reset() -> dict[str, bool]:
        state.reset()
        return {"reset": True}

    @app.get("/stats")
    async def stats() -> dict[str, Any]:
        with state.lock:
            return {
                "count": len(state.bodies),
                "bodies": list(state.bodies),
                "max_in_flight": state.max_in_flight,
                "script_left": len(state.script),
            }

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        body = await request.json()
        with state.lock:
            state.bodies.append(body)
            n = len(state.bodies)
            behaviour = state.take(body)
            generation = state.generation
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            return await _respond(body, behaviour, n)
        finally:
            with state.lock:
                if state.generation == generation:
                    state.in_flight -= 1

    return app


async def _respond(body: dict[str, Any], behaviour: Behaviour, n: int) -> Response:
    kind = behaviour["kind"]
    if kind == "429":
        retry_after = behaviour.get("retry_after")
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
        return _error(429, "rate limited, slow down", headers)
    if kind in ("500", "503"):
        return _error(int(kind), f"server trouble {kind}")
    if kind == "400":
        return _error(400, behaviour.get("message", "bad parameter: max_tokens"))
    if kind == "401":
        return _error(401, "Incorrect API key provided")
    if kind == "reject":
        return _error(behaviour["status"], behaviour["message"])
    if kind == "drop_body":
        # Headers and half a body, then the connection is cut.
        async def half() -> AsyncIterator[bytes]:
            yield b'{"id": "chatcmpl-x", "object": "chat.comp'
            raise ConnectionAbortedError("test server drops the connection")

        return StreamingResponse(half(), media_type="application/json")
    if kind == "malformed_body":
        return Response(
            "<html><body>502 Bad Gateway</body></html> {not json",
            status_code=200,
            media_type=behaviour.get("media_type", "application/json"),
        )
    if kind == "empty_choices":
        return JSONResponse({"id": f"chatcmpl-{n}", "object": "chat.completion",
                             "created": 0, "model": MODEL, "choices": []})
    if kind == "timeout":
        await asyncio.sleep(behaviour.get("seconds", 1.5))
        behaviour = ok("too late")
    elif kind == "bad_json_content":
        behaviour = ok(behaviour.get("content", "Sure! Here is the JSON: {answer: Paris"))
    elif kind != "ok":
        raise AssertionError(f"unknown behaviour {kind!r}")
    if behaviour.get("delay"):
        await asyncio.sleep(behaviour["delay"])
    if body.get("stream"):
        return StreamingResponse(_sse(body, behaviour, n), media_type="text/event-stream")
    return JSONResponse(_envelope(body, behaviour, n))


class ServerDouble:
    """Handle on the running server: script it, read what it saw."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self._http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5.0)

    def script(self, *behaviours: Behaviour, default: Behaviour | None = None) -> None:
        response = self._http.post(
            "/control", json={"script": list(behaviours), "default": default}
        )
        response.raise_for_status()

    def reset(self) -> None:
        self._http.post("/reset").raise_for_status()

    def stats(self) -> dict[str, Any]:
        response = self._http.get("/stats")
        response.raise_for_status()
        return response.json()

    @property
    def count(self) -> int:
        return int(self.stats()["count"])

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return list(self.stats()["bodies"])

    def close(self) -> None:
        self._http.close()


@pytest.fixture(scope="module")
def http_server() -> Iterator[ServerDouble]:
    # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on accepted sockets whose
    # proto says TCP, and without it every keep-alive request stalls ~40 ms (delayed ACK).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        build_app(_State()),
        log_level="warning",
        lifespan="off",
        access_log=False,
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn test server did not start")
        time.sleep(0.01)
    double = ServerDouble(port)
    try:
        yield double
    finally:
        double.close()
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@pytest.fixture
def server(http_server: ServerDouble) -> Iterator[ServerDouble]:
    http_server.reset()
    yield http_server
    http_server.reset()


# --------------------------------------------------------------------------------------------
# Building clients
# --------------------------------------------------------------------------------------------

MakeLLM = Callable[..., LLM]


@pytest.fixture
async def make_llm(server: ServerDouble, tmp_path: Path) -> AsyncIterator[MakeLLM]:
    made: list[LLM] = []

    def factory(
        *,
        base_url: str | None = None,
        model: str = MODEL,
        timeout_s: float = 2.0,
        max_retries: int = 3,
        overall_timeout_s: float = 5.0,
        concurrency: int | None = None,
        cache_name: str = "c.sqlite",
        use_cache_file: bool = True,
    ) -> LLM:
        backend = OpenAICompatibleBackend(
            model, base_url=base_url or server.base_url, timeout_s=timeout_s, concurrency=4
        )
        llm = LLM(
            backend,
            cache=ResponseCache(tmp_path / cache_name) if use_cache_file else None,
            call_log=CallLog(tmp_path / "l.sqlite"),
            retry=RetryPolicy(
                max_retries=max_retries,
                base_delay_s=0.01,
                max_delay_s=0.05,
                timeout_s=overall_timeout_s,
            ),
            concurrency=concurrency,
            seed=0,
        )
        made.append(llm)
        return llm

    yield factory
    for llm in made:
        await llm.aclose()
        if llm.cache is not None:
            llm.cache.close()
        if llm.call_log is not None:
            llm.call_log.close()


def user(text: str = "What is the capital of France?") -> list[Message]:
    return [Message.system("Answer briefly."), Message.user(text)]


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "year": {"type": "integer"}},
    "required": ["answer", "year"],
    "additionalProperties": False,
}
VALID_JSON = '{"answer": "Paris", "year": 2024}'
PARSED = {"answer": "Paris", "year": 2024}


# --------------------------------------------------------------------------------------------
# 1. Transient failures are retried
# --------------------------------------------------------------------------------------------




@pytest.mark.parametrize(
    "failure",
    [
        fail("429"),
        fail("429", retry_after="0.05"),
        fail("500"),
        fail("503"),
        fail("malformed_body"),
        fail("malformed_body", media_type="text/plain"),
        fail("empty_choices"),
        fail("drop_body"),
    ],
    ids=["429", "429-retry-after", "500", "503", "malformed-json-type", "malformed-text-type",
         "no-choices", "dropped-connection"],
)
async def test_transient_failure_then_ok_is_retried(
    server: ServerDouble, make_llm: MakeLLM, failure: Behaviour
) -> None:
    server.script(failure, ok("Paris."))
    llm = make_llm()

    result = await llm.chat(user())

    assert result.text == "Paris."
    assert result.attempts == 2
    assert result.cache_hit is False
    assert result.backend == "openai"
    stats = server.stats()
    assert stats["count"] == 2
    assert stats["script_left"] == 0
    first, second = stats["bodies"]
    assert first["messages"] == second["messages"] == [m.to_dict() for m in user()]


async def test_timeout_then_ok_is_retried(server: ServerDouble, make_llm: MakeLLM) -> None:
    server.script(fail("timeout", seconds=1.5), ok("Paris."))
    llm = make_llm(timeout_s=0.4)

    result = await llm.chat(user())

    assert result.text == "Paris."
    assert result.attempts == 2
    assert server.count == 2


# --------------------------------------------------------------------------------------------
# 2. Persistent transient failure gives up, typed
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("failure", "cause_part"),
    [
        (fail("500"), "500"),
        (fail("503"), "503"),
        (fail("429"), "429"),
        (fail("malformed_body", media_type="text/plain"), "malformed"),
        (fail("malformed_body"), "malformed"),
        (fail("drop_body"), "connection"),
    ],
    ids=["500", "503", "429", "malformed-text-type", "malformed-json-type", "dropped"],
)
async def test_persistent_failure_raises_unavailable(
    server: ServerDouble, make_llm: MakeLLM, failure: Behaviour, cause_part: str
) -> None:
    server.script(default=failure)
    llm = make_llm(max_retries=3)

    with pytest.raises(LLMUnavailableError) as info:
        await llm.chat(user())

    err = info.value
    assert err.backend == "openai"
    assert err.model == llm.backend.model_id
    assert err.attempts == 4
    assert cause_part in err.cause
    assert cause_part in str(err)
    assert err.hint
    assert server.count == 4


async def test_persistent_timeout_raises_unavailable(
    server: ServerDouble, make_llm: MakeLLM
) -> None:
    server.script(default=fail("timeout", seconds=1.0))
    llm = make_llm(timeout_s=0.2, max_retries=1)

    with pytest.raises(LLMUnavailableError) as info:
        await llm.chat(user())

    assert info.value.attempts == 2
    assert "timeout" in info.value.cause
    assert server.count == 2


# --------------------------------------------------------------------------------------------
# 3. Requests the server rejects are not retried
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["400", "401"])
async def test_rejected_request_is_not_retried(
    server: ServerDouble, make_llm: MakeLLM, status: str
) -> None:
    server.script(default=fail(status))
    llm = make_llm()

    with pytest.raises(LLMRequestError) as info:
        await llm.chat(user())

    err = info.value
    assert not isinstance(err, LLMUnavailableError)
    assert err.backend == "openai"
    assert f"HTTP {status}" in str(err)
    assert server.count == 1
    if status == "401":
        assert "Incorrect API key provided" in err.message
        assert err.hint is not None and "API_KEY" in err.hint
    else:
        assert "bad parameter: max_tokens" in err.message


# --------------------------------------------------------------------------------------------
# 5. Response cache
# --------------------------------------------------------------------------------------------


async def test_identical_request_is_served_from_cache(
    server: ServerDouble, make_llm: MakeLLM
) -> None:
    server.script(ok("Paris is the capital."))
    llm = make_llm()

    first = await llm.chat(user())
    second = await llm.chat(user())

    assert (first.cache_hit, first.attempts) == (False, 1)
    assert (second.cache_hit, second.attempts) == (True, 0)
    assert second.text == first.text == "Paris is the capital."
    assert second.usage == first.usage
    assert server.count == 1


async def test_different_parameters_or_messages_miss_the_cache(
    server: ServerDouble, make_llm: MakeLLM
) -> None:
    server.script(ok("one"), ok("two"), ok("three"), ok("four"), ok("five"))
    llm = make_llm()

    base = await llm.chat(user())
    warmer = await llm.chat(user(), temperature=0.7)
    other_question = await llm.chat(user("What is the capital of Spain?"))
    shorter = await llm.chat(user(), max_tokens=16)
    uncached = await llm.chat(user(), use_cache=False)

    results = [base, warmer, other_question, shorter, uncached]
    assert [r.text for r in results] == ["one", "two", "three", "four", "five"]
    assert not any(r.cache_hit for r in results)
    bodies = server.bodies
    assert len(bodies) == 5
    assert bodies[1]["temperature"] == 0.7
    assert bodies[2]["messages"][-1]["content"] == "What is the capital of Spain?"
    assert bodies[3]["max_tokens"] == 16
    # And the original request is still cached under its own key.
    again = await llm.chat(user())
    assert (again.cache_hit, again.text) == (True, "one")
    assert server.count == 5


async def test_cache_persists_across_clients(server: ServerDouble, make_llm: MakeLLM) -> None:
    server.script(ok("stored answer"), ok("other model answer"))
    first_llm = make_llm()
    first = await first_llm.chat(user())
    await first_llm.aclose()

    second_llm = make_llm()  # new backend, new cache connection, same file
    second = await second_llm.chat(user())

    assert first.cache_hit is False
    assert (second.cache_hit, second.text) == (True, "stored answer")
    assert server.count == 1

    other_model = make_llm(model="other-model")
    third = await other_model.chat(user())
    assert (third.cache_hit, third.text) == (False, "other model answer")
    assert server.count == 2
    assert server.bodies[1]["model"] == "other-model"


# --------------------------------------------------------------------------------------------
# 6. JSON under a schema
# --------------------------------------------------------------------------------------------


async def test_json_schema_is_sent_and_parsed(server: ServerDouble, make_llm: MakeLLM) -> None:
    server.script(ok(VALID_JSON))
    llm = make_llm()

    result = await llm.chat(user(), json_schema=SCHEMA, schema_name="capital")

    assert result.parsed == PARSED
    assert result.repaired is False
    assert result.attempts == 1
    (body,) = server.bodies
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "capital", "schema": SCHEMA},
    }


@pytest.mark.parametrize(
    ("bad", "error_part"),
    [
        (fail("bad_json_content"), "not valid JSON"),
        (ok('{"answer": "Paris"}'), "does not fit the schema"),
    ],
    ids=["not-json", "schema-violation"],
)
async def test_invalid_json_gets_one_repair_call(
    server: ServerDouble, make_llm: MakeLLM, bad: Behaviour, error_part: str
) -> None:
    server.script(bad, ok(VALID_JSON))
    llm = make_llm()

    result = await llm.chat(user(), json_schema=SCHEMA)

    assert result.parsed == PARSED
    assert result.repaired is True
    assert result.attempts == 2
    assert result.text == VALID_JSON
    first, second = server.bodies
    assert second["response_format"]["type"] == "json_schema"
    assert second["messages"][: len(first["messages"])] == first["messages"]
    assert second["messages"][-2]["role"] == "assistant"
    assert second["messages"][-2]["content"] != VALID_JSON
    repair = second["messages"][-1]
    assert repair["role"] == "user"
    assert "could not be used" in repair["content"]
    assert error_part in repair["content"]
    assert json.dumps(SCHEMA, ensure_ascii=False) in repair["content"]
    # Usage covers both calls.
    assert result.usage.prompt_tokens == 2 * PROMPT_TOKENS


async def test_invalid_json_twice_raises_output_error(
    server: ServerDouble, make_llm: MakeLLM
) -> None:
    server.script(fail("bad_json_content"), fail("bad_json_content", content="still {not json"))
    llm = make_llm()

    with pytest.raises(LLMOutputError) as info:
        await llm.chat(user(), json_schema=SCHEMA)

    assert info.value.raw_text == "still {not json"
    assert info.value.backend == "openai"
    assert server.count == 2


async def test_json_schema_rejected_falls_back_to_json_object(
    server: ServerDouble, make_llm: MakeLLM
) -> None:
    server.script(
        fail("422_on_json_schema", content=VALID_JSON), ok('{"answer": "Rome", "year": 1}')
    )
    llm = make_llm()

    result = await llm.chat(user(), json_schema=SCHEMA)

    assert result.parsed == PARSED
    first, second = server.bodies
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert second["messages"] == first["messages"]

    # The backend remembers the server's dialect: the next call goes straight to json_object.
    later = await llm.chat(user("Capital of Italy?"), json_schema=SCHEMA)
    assert later.parsed == {"answer": "Rome", "year": 1}
    bodies = server.bodies
    assert len(bodies) == 3
    assert bodies[2]["response_format"] == {"type": "json_object", "schema": SCHEMA}


async def test_json_schema_fallback_against_llama_cpp_style_500(
    server: ServerDouble, make_llm: MakeLLM
) -> None:
    # llama-cpp-python's server answers its own request-validation error with HTTP 500.
    server.script(
        fail("422_on_json_schema", content=VALID_JSON, status=500, message=LLAMA_CPP_REJECTION)
    )
    llm = make_llm()

    result = await llm.chat(user(), json_schema=SCHEMA)

    assert result.parsed == PARSED
    first, second = server.bodies
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == {"type": "json_object", "schema": SCHEMA}


async def test_plain_server_error_on_json_schema_request_is_retried_not_a_fallback(
    server: ServerDouble, make_llm: MakeLLM
) -> None:
    server.script(fail("500"), fail("429"), ok(VALID_JSON))
    llm = make_llm()

    result = await llm.chat(user(), json_schema=SCHEMA)

    assert result.parsed == PARSED
    assert result.attempts == 3
    assert [b["response_format"]["type"] for b in server.bodies] == ["json_schema"] * 3


async def test_unrelated_400_on_json_schema_request_is_final(
    server: ServerDouble, make_llm: MakeLLM
) -> None:
    server.script(default=fail("400", message="context length exceeded"))
    llm = make_llm()

    with pytest.raises(LLMRequestError) as info:
        await llm.chat(user(), json_schema=SCHEMA)

    assert "context length exceeded" in info.value.message
    (body,) = server.bodies
    assert body["response_format"]["type"] == "json_schema"


# --------------------------------------------------------------------------------------------
# 7. Unreachable or silent servers fail fast and typed
# --------------------------------------------------------------------------------------------


async def test_unreachable_server_raises_unavailable(make_llm: MakeLLM) -> None:
    # Bound but not listening: connections are refused, and nobody else can take the port.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        llm = make_llm(base_url=f"http://127.0.0.1:{port}/v1", timeout_s=0.5)

        with pytest.raises(LLMUnavailableError) as info:
            await llm.chat(user())

    err = info.value
    assert err.backend == "openai"
    assert err.attempts == 4
    assert "connection" in err.cause
    assert str(port) in err.cause


async def test_silent_server_times_out(make_llm: MakeLLM) -> None:
    # Listening but never accepting: the request is sent and no answer ever comes.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        port = sock.getsockname()[1]
        llm = make_llm(base_url=f"http://127.0.0.1:{port}/v1", timeout_s=0.2, max_retries=1)

        with pytest.raises(LLMUnavailableError) as info:
            await llm.chat(user())

    assert info.value.attempts == 2
    assert "timeout" in info.value.cause


# --------------------------------------------------------------------------------------------
# 8. Streaming
# --------------------------------------------------------------------------------------------

STREAMED = "The quick brown fox jumps over the lazy dog."


async def test_stream_yields_deltas_and_result(server: ServerDouble, make_llm: MakeLLM) -> None:
    server.script(ok(STREAMED, usage=(11, 9)))
    llm = make_llm()

    chat = llm.stream(user())
    deltas = [d async for d in chat]

    assert "".join(deltas) == STREAMED
    assert len(deltas) == len(STREAMED.split())
    assert chat.result is not None
    assert chat.result.text == STREAMED
    assert chat.result.usage.prompt_tokens == 11
    assert chat.result.usage.completion_tokens == 9
    assert (chat.result.cache_hit, chat.result.attempts) == (False, 1)
    assert chat.result.finish_reason == "stop"
    (body,) = server.bodies
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}

    # A streamed reply is cached too: the same stream again does not reach the server.
    again = llm.stream(user())
    assert "".join([d async for d in again]) == STREAMED
    assert again.result is not None and again.result.cache_hit is True
    assert server.count == 1


@pytest.mark.parametrize("failure", [fail("429"), fail("503")], ids=["429", "503"])
async def test_stream_failure_before_first_chunk_is_retried(
    server: ServerDouble, make_llm: MakeLLM, failure: Behaviour
) -> None:
    server.script(failure, ok(STREAMED))
    llm = make_llm()

    chat = llm.stream(user(), use_cache=False)
    text = "".join([d async for d in chat])

    assert text == STREAMED
    assert chat.result is not None
    assert chat.result.attempts == 2
    assert server.count == 2


async def test_stream_persistent_failure_raises_unavailable(
    server: ServerDouble, make_llm: MakeLLM
) -> None:
    server.script(default=fail("429"))
    llm = make_llm(max_retries=2)

    chat = llm.stream(user())
    with pytest.raises(LLMUnavailableError) as info:
        _ = [d async for d in chat]

    assert info.value.attempts == 3
    assert "429" in info.value.cause
    assert chat.result is None
    assert server.count == 3


async def test_stream_401_is_not_retried(server: ServerDouble, make_llm: MakeLLM) -> None:
    server.script(default=fail("401"))
    llm = make_llm()

    with pytest.raises(LLMRequestError):
        _ = [d async for d in llm.stream(user())]

    assert server.count == 1


async def test_stream_400_raises_request_error(server: ServerDouble, make_llm: MakeLLM) -> None:
    server.script(default=fail("400"))
    llm = make_llm()

    with pytest.raises(LLMRequestError) as info:
        _ = [d async for d in llm.stream(user())]

    assert "bad parameter: max_tokens" in info.value.message
    assert server.count == 1


async def test_stream_without_stream_options_support(
    server: ServerDouble, make_llm: MakeLLM
) -> None:
    server.script(fail("reject_stream_options", content=STREAMED))
    llm = make_llm()

    chat = llm.stream(user())
    deltas = [d async for d in chat]

    assert "".join(deltas) == STREAMED
    first, second = server.bodies
    assert first["stream_options"] == {"include_usage": True}
    assert "stream_options" not in second
    assert second["messages"] == first["messages"]
    assert chat.result is not None
    # No usage chunk: completion tokens are counted from the deltas.
    assert chat.result.usage.completion_tokens == len(deltas)


async def test_stream_dropped_before_first_delta_is_retried(
    server: ServerDouble, make_llm: MakeLLM
) -> None:
    server.script(ok(STREAMED, drop_after=0), ok(STREAMED))
    llm = make_llm()

    chat = llm.stream(user())
    text = "".join([d async for d in chat])

    assert text == STREAMED
    assert chat.result is not None and chat.result.attempts == 2
    assert server.count == 2


async def test_stream_dropped_mid_reply_raises_unavailable(
    server: ServerDouble, make_llm: MakeLLM
) -> None:
    server.script(ok(STREAMED, drop_after=3), ok("never requested"))
    llm = make_llm()

    chat = llm.stream(user())
    received: list[str] = []
    with pytest.raises(LLMUnavailableError) as info:
        async for delta in chat:
            received.append(delta)

    # Text already shown cannot be taken back, so there is no silent retry.
    assert "".join(received) == "The quick brown "
    assert info.value.attempts == 1
    assert "interrupted" in str(info.value)
    assert chat.result is None
    assert server.count == 1


async def test_stream_error_event_raises_typed_error(
    server: ServerDouble, make_llm: MakeLLM
) -> None:
    server.script(default=ok(STREAMED, error_after=2))
    llm = make_llm(max_retries=1)

    chat = llm.stream(user())
    with pytest.raises(LLMError):
        _ = [d async for d in chat]


# --------------------------------------------------------------------------------------------
# 9. Concurrency bound
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("concurrency", "expected"), [(2, 2), (6, 6)])
async def test_concurrency_is_bounded(
    server: ServerDouble, make_llm: MakeLLM, concurrency: int, expected: int
) -> None:
    server.script(default=ok("slow answer", delay=0.2))
    llm = make_llm(concurrency=concurrency)

    results = await asyncio.gather(
        *(llm.chat(user(f"question {i}"), use_cache=False) for i in range(6))
    )

    assert [r.text for r in results] == ["slow answer"] * 6
    stats = server.stats()
    assert stats["count"] == 6
    assert sorted(b["messages"][-1]["content"] for b in stats["bodies"]) == [
        f"question {i}" for i in range(6)
    ]
    # ≤ proves the bound holds; ≥ proves the calls really overlapped up to it.
    assert stats["max_in_flight"] <= expected
    assert stats["max_in_flight"] >= expected


# --------------------------------------------------------------------------------------------
# 10. Call log
# --------------------------------------------------------------------------------------------


async def test_call_log_summary_counts_calls_and_hits(
    server: ServerDouble, make_llm: MakeLLM
) -> None:
    server.script(
        ok("alpha beta", usage=(5, 2)),
        fail("500"),
        ok("gamma", usage=(6, 1)),
        fail("401"),
    )
    llm = make_llm()

    await llm.chat(user("one"), tag="run-1")
    await llm.chat(user("one"), tag="run-1")  # cache hit
    retried = await llm.chat(user("two"), tag="run-1")  # 500 then ok
    with pytest.raises(LLMRequestError):
        await llm.chat(user("three"), tag="run-2")

    assert retried.attempts == 2
    assert server.count == 4
    assert llm.call_log is not None
    (summary,) = llm.call_log.summary()
    assert (summary.backend, summary.model) == ("openai", llm.backend.model_id)
    assert summary.calls == 4
    assert summary.cache_hits == 1
    assert summary.errors == 1
    assert summary.prompt_tokens == 5 + 6
    assert summary.completion_tokens == 2 + 1

    (run_1,) = llm.call_log.summary(tag="run-1")
    assert (run_1.calls, run_1.cache_hits, run_1.errors) == (3, 1, 0)
    (run_2,) = llm.call_log.summary(tag="run-2")
    assert (run_2.calls, run_2.cache_hits, run_2.errors) == (1, 0, 1)


# --------------------------------------------------------------------------------------------
# 11. Refusals
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("behaviour", "refused"),
    [
        (ok("I'm sorry, but I can't help with that."), True),
        (ok("Paris is the capital of France."), False),
        (ok("Paris. I cannot verify figures newer than 2023, though."), False),
        (ok(None, refusal="I can't assist with that request."), True),
        (ok("Partial answer", finish_reason="content_filter"), True),
    ],
    ids=["refusal-text", "answer", "caveat-not-refusal", "refusal-field", "content-filter"],
)
async def test_refusal_detection(
    server: ServerDouble, make_llm: MakeLLM, behaviour: Behaviour, refused: bool
) -> None:
    server.script(behaviour)
    llm = make_llm()

    result = await llm.chat(user())

    assert result.refused is refused
    assert result.text == (behaviour["content"] or "")
    assert server.count == 1


async def test_refusal_field_with_json_schema_raises(
    server: ServerDouble, make_llm: MakeLLM
) -> None:
    server.script(ok(None, refusal="I can't assist with that request."))
    llm = make_llm()

    with pytest.raises(LLMRefusalError) as info:
        await llm.chat(user(), json_schema=SCHEMA)

    assert "I can't assist with that request." in str(info.value)
    assert server.count == 1  # a refusal is not "invalid JSON": no repair call
