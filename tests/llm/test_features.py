"""Answer features: the logprob summary by hand, scripted features, and the OpenAI backend's
logprob request against a real HTTP server on 127.0.0.1 (a double, and llama_cpp.server)."""

from __future__ import annotations

import math
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from freshwiki.llm import (
    LLM,
    LOGPROB_FEATURES,
    Completion,
    FeatureBackend,
    GenerationParams,
    LLMRequestError,
    Message,
    ResponseCache,
    RetryPolicy,
    TokenLogprob,
    logprob_summary,
)
from freshwiki.llm.backends.openai_compat import OpenAICompatibleBackend
from freshwiki.llm.backends.scripted import ScriptedBackend

LN2 = math.log(2.0)
MESSAGES = [Message.system("Answer briefly."), Message.user("Capital of France?")]


# -- the summary, computed by hand ------------------------------------------------------------


def test_logprob_summary_matches_hand_computation() -> None:
    tokens = [
        TokenLogprob(-0.1, (math.log(0.5), math.log(0.5))),  # entropy ln 2
        TokenLogprob(-0.5, (math.log(0.25),) * 4),  # entropy ln 4 = 2 ln 2
        TokenLogprob(-1.2, (0.0,)),  # one certain alternative: entropy 0
    ]
    mean, low, std, entropy, n = logprob_summary(tokens)
    assert mean == pytest.approx(-0.6)
    assert low == pytest.approx(-1.2)
    # deviations 0.5, 0.1, -0.6: sqrt((0.25 + 0.01 + 0.36) / 3)
    assert std == pytest.approx(math.sqrt(0.62 / 3))
    assert entropy == pytest.approx((LN2 + 2 * LN2 + 0.0) / 3)
    assert n == 3.0
    assert LOGPROB_FEATURES == ("mean_logprob", "min_logprob", "std_logprob",
                                "mean_top_entropy", "n_tokens")


def test_top_alternatives_are_renormalised_and_an_empty_answer_is_zeros() -> None:
    # 0.3 and 0.3 are the top two of a larger distribution: renormalised to 0.5 / 0.5.
    [_, _, _, entropy, _] = logprob_summary([TokenLogprob(-1.0, (math.log(0.3),) * 2)])
    assert entropy == pytest.approx(LN2)
    # No alternatives reported at all: entropy is averaged over nothing, so 0.
    assert logprob_summary([TokenLogprob(-2.0)])[3] == 0.0
    assert logprob_summary([]) == (0.0, 0.0, 0.0, 0.0, 0.0)


# -- scripted features and the client ---------------------------------------------------------


async def test_scripted_features_are_deterministic_and_differ_by_answer() -> None:
    backend = ScriptedBackend([], model_id="fake-model")
    llm = LLM(backend)
    assert isinstance(backend, FeatureBackend) and llm.feature_kind == "scripted"
    a = await llm.features(MESSAGES, "Paris")
    again = await llm.features(MESSAGES, "Paris")
    b = await llm.features(MESSAGES, "Lyon")
    assert a.values == again.values and a.values != b.values
    assert a.dim == 8 and all(0.0 <= v < 1.0 for v in a.values)
    assert (a.kind, a.model) == ("scripted", "fake-model")
    assert backend.feature_requests == [(tuple(MESSAGES), "Paris"), (tuple(MESSAGES), "Paris"),
                                        (tuple(MESSAGES), "Lyon")]


async def test_scripted_features_callable_receives_messages_and_answer() -> None:
    seen: list[tuple[int, str]] = []

    def features(messages: Sequence[Message], answer: str) -> list[float]:
        seen.append((len(messages), answer))
        return [len(answer), 1]

    llm = LLM(ScriptedBackend([], features=features))
    vector = await llm.features(MESSAGES, "Paris")
    assert vector.values == (5.0, 1.0) and seen == [(2, "Paris")]


async def test_features_are_cached_exactly_by_model_messages_and_answer(tmp_path: Path) -> None:
    seen: list[str] = []

    def features(messages: Sequence[Message], answer: str) -> list[float]:
        seen.append(answer)
        return [len(answer) / 3, 1e-300, -2.5]  # floats a float32 store would change

    cache = ResponseCache(tmp_path / "cache.sqlite")
    llm = LLM(ScriptedBackend([], features=features), cache=cache)
    first = await llm.features(MESSAGES, "Paris")
    again = await llm.features(MESSAGES, "Paris")
    assert seen == ["Paris"] and again == first  # the second one never reached the backend
    assert again.values == (5 / 3, 1e-300, -2.5)
    await llm.features(MESSAGES, "Lyon")  # another answer, another vector
    await llm.features(MESSAGES[1:], "Paris")  # other messages, too
    await llm.features(MESSAGES, "Paris", use_cache=False)
    assert seen == ["Paris", "Lyon", "Paris", "Paris"]
    # Another model's vectors are never served, even for the same prompt and answer.
    other = LLM(ScriptedBackend([], model_id="other", features=features), cache=cache)
    await other.features(MESSAGES, "Paris")
    assert seen[-1] == "Paris" and len(seen) == 5
    cache.close()


class _PlainBackend:
    """A backend without answer features."""

    name = "plain"
    model_id = "plain-model"
    default_concurrency = 1
    retries_bounded_by_timeout = True

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        return Completion("x")

    async def stream(self, messages: Sequence[Message], params: GenerationParams
                     ) -> AsyncIterator[str | Completion]:
        yield Completion("x")

    async def aclose(self) -> None:
        pass


async def test_a_backend_without_features_is_refused_clearly() -> None:
    llm = LLM(_PlainBackend())
    assert llm.feature_kind is None
    with pytest.raises(LLMRequestError, match="cannot compute answer features") as info:
        await llm.features(MESSAGES, "Paris")
    assert "plain:plain-model" in str(info.value) and "local:" in str(info.value)


# -- the OpenAI-compatible backend against an HTTP double --------------------------------------


@dataclass
class _Double:
    bodies: list[dict[str, Any]] = field(default_factory=list)
    script: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _logprobs_body(body: dict[str, Any], step: dict[str, Any]) -> dict[str, Any]:
    content = None
    if step.get("logprobs", True):
        content = [
            {"token": tok, "logprob": lp, "bytes": None,
             "top_logprobs": [{"token": f"alt{i}", "logprob": alt, "bytes": None}
                              for i, alt in enumerate(top)]}
            for tok, lp, top in step["tokens"]
        ]
    text = "".join(tok for tok, _, _ in step.get("tokens", ()))
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0,
        "model": body.get("model", "m"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop",
                     "logprobs": None if content is None else {"content": content}}],
        "usage": {"prompt_tokens": 9, "completion_tokens": len(step.get("tokens", ())),
                  "total_tokens": 9},
    }


@pytest.fixture(scope="module")
def double() -> Iterator[tuple[_Double, str]]:
    state = _Double()
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        with state.lock:
            state.bodies.append(body)
            step = state.script.pop(0)
        if "status" in step:
            return JSONResponse({"error": {"message": "busy", "code": step["status"]}},
                                status_code=step["status"])
        return JSONResponse(_logprobs_body(body, step))

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off",
                                           access_log=False, timeout_graceful_shutdown=1))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "test server did not start"
        time.sleep(0.01)
    try:
        yield state, f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def _client(base_url: str) -> LLM:
    backend = OpenAICompatibleBackend("test-model", base_url=base_url, timeout_s=5)
    return LLM(backend, retry=RetryPolicy(max_retries=2, base_delay_s=0.01, max_delay_s=0.02))


async def test_openai_features_request_logprobs_and_summarise_them(
    double: tuple[_Double, str],
) -> None:
    state, url = double
    state.bodies.clear()
    state.script[:] = [{"tokens": [
        ("Par", -0.1, (math.log(0.5), math.log(0.5))),
        ("is", -0.5, (math.log(0.25),) * 4),
        (".", -1.2, (0.0,)),
    ]}]
    llm = _client(url)
    try:
        assert llm.feature_kind == "logprob-summary"
        vector = await llm.features(MESSAGES, "Paris.")
    finally:
        await llm.aclose()
    [body] = state.bodies
    assert body["logprobs"] is True and body["top_logprobs"] == 5
    assert body["temperature"] == 0.0 and body["stream"] is False
    assert body["max_tokens"] == 16 + len("Paris.") // 2  # 19: the budget follows the answer
    assert body["messages"] == [m.to_dict() for m in MESSAGES]
    # The same three tokens as the hand computation above.
    assert vector.values == pytest.approx((-0.6, -1.2, math.sqrt(0.62 / 3), LN2, 3.0))
    assert vector.names == LOGPROB_FEATURES
    assert (vector.kind, vector.model) == ("logprob-summary", f"test-model@{url}")
    assert vector.detail == {"scored_text": "Paris.", "matches_answer": True, "tokens": 3}


async def test_openai_features_retry_a_5xx_and_refuse_a_server_without_logprobs(
    double: tuple[_Double, str],
) -> None:
    state, url = double
    state.bodies.clear()
    state.script[:] = [{"status": 503}, {"tokens": [("Lyon", -2.0, ())]},
                       {"tokens": [("Lyon", -2.0, ())], "logprobs": False}]
    llm = _client(url)
    try:
        vector = await llm.features(MESSAGES, "Paris")
        assert len(state.bodies) == 2  # the 503 was retried
        assert vector.values == (-2.0, -2.0, 0.0, 0.0, 1.0)
        assert vector.detail["matches_answer"] is False  # the regeneration differs
        with pytest.raises(LLMRequestError, match="returned no logprobs"):
            await llm.features(MESSAGES, "Paris")
    finally:
        await llm.aclose()


@pytest.mark.e2e
async def test_llama_cpp_server_returns_logprob_features(llama_server: str) -> None:
    backend = OpenAICompatibleBackend("smollm2", base_url=llama_server, timeout_s=120)
    llm = LLM(backend)
    try:
        question = [Message.user("What is the capital of France? Answer in one word.")]
        answer = await llm.chat(question, max_tokens=8, use_cache=False)
        vector = await llm.features(question, answer.text)
        other = await llm.features([Message.user("Name a colour.")], "Blue")
    finally:
        await llm.aclose()
    mean, low, std, entropy, n = vector.values
    assert n >= 1 and low <= mean <= 0.0 and std >= 0.0
    assert 0.0 <= entropy <= math.log(5) + 1e-9  # at most uniform over the top 5
    # Greedy regeneration reproduces the greedy answer (possibly continuing past its budget).
    assert str(vector.detail["scored_text"]).startswith(answer.text.strip())
    assert other.values != vector.values
