"""Every cross-cutting behaviour of the LLM client, on the deterministic scripted backend."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from freshwiki.llm import (
    LLM,
    CallLog,
    LLMOutputError,
    LLMRequestError,
    LLMUnavailableError,
    Message,
    ResponseCache,
    RetryPolicy,
    ScriptExhaustedError,
)
from freshwiki.llm.backends.scripted import ScriptedBackend, ScriptedFailure

FAST_RETRY = RetryPolicy(max_retries=3, base_delay_s=0.001, max_delay_s=0.002, timeout_s=10.0)
Q = [Message.user("What is the capital of France?")]
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "confidence": {"type": "number"}},
    "required": ["city", "confidence"],
    "additionalProperties": False,
}


def make(tmp_path: Path, steps: list, **kw: object) -> tuple[LLM, ScriptedBackend]:
    backend = ScriptedBackend(steps, **kw)  # type: ignore[arg-type]
    llm = LLM(
        backend,
        cache=ResponseCache(tmp_path / "cache.sqlite"),
        call_log=CallLog(tmp_path / "calls.sqlite"),
        retry=FAST_RETRY,
        seed=1,
    )
    return llm, backend


async def test_plain_chat_returns_text_usage_and_latency(tmp_path: Path) -> None:
    llm, backend = make(tmp_path, ["Paris is the capital."])
    result = await llm.chat(Q)
    assert result.text == "Paris is the capital."
    assert result.usage.completion_tokens == 4  # scripted counts words
    assert result.usage.prompt_tokens == 6
    assert result.latency_s >= 0
    assert not result.cache_hit and result.attempts == 1 and not result.refused
    assert backend.requests[0].messages == tuple(Q)


async def test_cache_hit_skips_backend_and_survives_a_new_client(tmp_path: Path) -> None:
    llm, backend = make(tmp_path, ["Paris."])
    first = await llm.chat(Q)
    second = await llm.chat(Q)
    assert second.cache_hit and second.text == "Paris." and second.attempts == 0
    assert len(backend.requests) == 1
    # A fresh client on the same cache file: still no backend call (the script is empty).
    llm2, backend2 = make(tmp_path, [])
    third = await llm2.chat(Q)
    assert third.cache_hit and third.text == first.text
    assert backend2.requests == []


async def test_cache_key_covers_messages_and_parameters(tmp_path: Path) -> None:
    llm, backend = make(tmp_path, ["a", "b", "c", "d"])
    await llm.chat(Q)
    await llm.chat(Q, temperature=0.7)
    await llm.chat(Q, max_tokens=9)
    await llm.chat([Message.user("What is the capital of Spain?")])
    assert len(backend.requests) == 4
    # A different model identity never serves another model's answer.
    cache = ResponseCache(tmp_path / "cache.sqlite")
    other = LLM(ScriptedBackend(["z"], model_id="other"), cache=cache)
    assert (await other.chat(Q)).text == "z"


async def test_use_cache_false_always_calls(tmp_path: Path) -> None:
    llm, backend = make(tmp_path, ["a", "b"])
    await llm.chat(Q, use_cache=False)
    result = await llm.chat(Q, use_cache=False)
    assert result.text == "b" and len(backend.requests) == 2


@pytest.mark.parametrize("kind", ["timeout", "rate_limit", "server_error", "connection"])
async def test_transient_failures_are_retried(tmp_path: Path, kind: str) -> None:
    llm, backend = make(tmp_path, [ScriptedFailure(kind), ScriptedFailure(kind), "ok"])
    result = await llm.chat(Q)
    assert result.text == "ok" and result.attempts == 3
    assert len(backend.requests) == 3


async def test_retries_exhausted_raise_typed_error_naming_backend_and_cause(tmp_path: Path) -> None:
    llm, backend = make(tmp_path, [ScriptedFailure("rate_limit")] * 10)
    with pytest.raises(LLMUnavailableError) as info:
        await llm.chat(Q)
    err = info.value
    assert err.backend == "scripted" and err.attempts == FAST_RETRY.max_retries + 1
    assert "429" in err.cause and "scripted" in str(err)
    assert len(backend.requests) == FAST_RETRY.max_retries + 1


async def test_non_transient_error_is_not_retried(tmp_path: Path) -> None:
    llm, backend = make(tmp_path, [ScriptedFailure("bad_request"), "never"])
    with pytest.raises(LLMRequestError):
        await llm.chat(Q)
    assert len(backend.requests) == 1


async def test_overall_timeout_bounds_a_hanging_backend(tmp_path: Path) -> None:
    backend = ScriptedBackend(["late", "late", "late"], delay_s=5.0)
    llm = LLM(backend, retry=RetryPolicy(max_retries=5, base_delay_s=0.01, timeout_s=0.2))
    with pytest.raises(LLMUnavailableError) as info:
        await llm.chat(Q)
    assert "timeout" in info.value.cause


async def test_deadline_cutting_a_retry_short_keeps_the_earlier_backend_error() -> None:
    # Seen in CI: a refused connection, then a retry that the deadline cut short; the
    # error said only "no answer within the timeout" and hid the refused connection.
    class RefusedThenHangs(ScriptedBackend):
        async def complete(self, messages, params):  # type: ignore[no-untyped-def]
            if not self.requests:
                self.requests.append(None)  # type: ignore[arg-type]
                from freshwiki.llm._errors import TransientBackendError

                raise TransientBackendError("connection refused by 127.0.0.1:9")
            await asyncio.sleep(5.0)
            raise AssertionError("the deadline should have cut this attempt")

    llm = LLM(
        RefusedThenHangs([]),
        retry=RetryPolicy(max_retries=5, base_delay_s=0.01, max_delay_s=0.01, timeout_s=0.3),
    )
    with pytest.raises(LLMUnavailableError) as info:
        await llm.chat(Q)
    cause = info.value.cause
    assert "connection refused by 127.0.0.1:9" in cause and "timeout" in cause


def test_backoff_grows_exponentially_with_full_jitter() -> None:
    import random

    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0)
    rng = random.Random(0)
    for attempt, cap in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (6, 8.0)]:
        delays = [policy.delay(attempt, None, rng) for _ in range(200)]
        assert all(0 <= d <= cap for d in delays)
        assert max(delays) > cap * 0.8  # jitter spans the range, not a constant
    assert policy.delay(1, 5.0, rng) >= 5.0  # Retry-After is honoured


async def test_json_schema_output_is_parsed(tmp_path: Path) -> None:
    llm, backend = make(tmp_path, ['{"city": "Paris", "confidence": 0.9}'])
    result = await llm.chat(Q, json_schema=SCHEMA, max_tokens=100)
    assert result.parsed == {"city": "Paris", "confidence": 0.9}
    assert not result.repaired
    assert backend.requests[0].params.json_schema == SCHEMA


async def test_json_in_code_fence_is_accepted_without_repair(tmp_path: Path) -> None:
    llm, _ = make(tmp_path, ['```json\n{"city": "Paris", "confidence": 1}\n```'])
    result = await llm.chat(Q, json_schema=SCHEMA)
    assert result.parsed["city"] == "Paris" and not result.repaired


async def test_invalid_json_gets_one_repair_attempt(tmp_path: Path) -> None:
    llm, backend = make(
        tmp_path, ["Sure! The city is Paris.", '{"city": "Paris", "confidence": 1}']
    )
    result = await llm.chat(Q, json_schema=SCHEMA)
    assert result.parsed == {"city": "Paris", "confidence": 1}
    assert result.repaired and len(backend.requests) == 2
    repair = backend.requests[1].messages
    assert repair[-2] == Message.assistant("Sure! The city is Paris.")
    assert "not valid JSON" in repair[-1].content and '"required"' in repair[-1].content


async def test_schema_violation_counts_as_invalid(tmp_path: Path) -> None:
    llm, backend = make(tmp_path, ['{"city": "Paris"}', '{"city": "Paris", "confidence": 0.5}'])
    result = await llm.chat(Q, json_schema=SCHEMA)
    assert result.repaired and result.parsed["confidence"] == 0.5
    assert "confidence" in backend.requests[1].messages[-1].content


async def test_invalid_twice_raises_typed_error_with_raw_text(tmp_path: Path) -> None:
    llm, backend = make(tmp_path, ["nope", "still nope"])
    with pytest.raises(LLMOutputError) as info:
        await llm.chat(Q, json_schema=SCHEMA)
    assert info.value.raw_text == "still nope"
    assert len(backend.requests) == 2  # exactly one repair, never a loop


async def test_truncated_json_error_suggests_max_tokens(tmp_path: Path) -> None:
    llm, _ = make(tmp_path, ['{"city": "Pa', '{"city": "Pa'])
    with pytest.raises(LLMOutputError) as info:
        await llm.chat(Q, json_schema=SCHEMA, max_tokens=2)
    assert "max_tokens" in (info.value.hint or "")


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("I'm sorry, but I can't help with that.", True),
        ("I cannot assist with this request.", True),
        ("As an AI language model, I cannot provide that information.", True),
        ("Sorry, I won't do that.", True),
        ("Paris is the capital of France.", False),
        ("The sources disagree; I cannot verify which date is right, but both say 1889.", False),
    ],
)
async def test_refusals_are_detected(tmp_path: Path, text: str, refused: bool) -> None:
    llm, _ = make(tmp_path, [text])
    assert (await llm.chat(Q)).refused is refused


async def test_concurrency_is_bounded(tmp_path: Path) -> None:
    backend = ScriptedBackend([f"r{i}" for i in range(8)], delay_s=0.05)
    llm = LLM(backend, concurrency=2)
    results = await asyncio.gather(
        *(llm.chat([Message.user(f"q{i}")], use_cache=False) for i in range(8))
    )
    assert sorted(r.text for r in results) == sorted(f"r{i}" for i in range(8))
    assert backend.max_in_flight == 2


async def test_client_works_across_event_loops(tmp_path: Path) -> None:
    llm, _ = make(tmp_path, ["one", "two"])
    await llm.chat([Message.user("a")])

    def other_loop() -> str:
        return asyncio.run(llm.chat([Message.user("b")])).text

    assert await asyncio.to_thread(other_loop) == "two"


async def test_call_log_records_calls_hits_and_errors(tmp_path: Path) -> None:
    llm, _ = make(tmp_path, ["a", ScriptedFailure("bad_request")])
    await llm.chat(Q, tag="t1")
    await llm.chat(Q, tag="t1")  # cache hit
    with pytest.raises(LLMRequestError):
        await llm.chat([Message.user("other")], tag="t1")
    (row,) = CallLog(tmp_path / "calls.sqlite").summary(tag="t1")
    assert (row.calls, row.cache_hits, row.errors) == (3, 1, 1)
    assert row.completion_tokens == 1  # the cache hit and the error cost nothing
    assert CallLog(tmp_path / "calls.sqlite").summary(tag="absent") == []


async def test_stream_yields_deltas_then_result_and_caches(tmp_path: Path) -> None:
    llm, backend = make(tmp_path, ["Paris is lovely"])
    chat = llm.stream(Q)
    deltas = [d async for d in chat]
    assert deltas == ["Paris", " is", " lovely"]
    assert chat.result is not None and chat.result.text == "Paris is lovely"
    again = llm.stream(Q)
    assert "".join([d async for d in again]) == "Paris is lovely"
    assert again.result is not None and again.result.cache_hit
    assert len(backend.requests) == 1


async def test_stream_retries_failure_before_first_token(tmp_path: Path) -> None:
    llm, _ = make(tmp_path, [ScriptedFailure("server_error"), "ok then"])
    chat = llm.stream(Q)
    assert "".join([d async for d in chat]) == "ok then"
    assert chat.result is not None and chat.result.attempts == 2


async def test_exhausted_script_is_a_clear_error(tmp_path: Path) -> None:
    llm, _ = make(tmp_path, [])
    with pytest.raises(ScriptExhaustedError, match="no scripted response"):
        await llm.chat(Q)


def test_script_file_loads_and_reports_bad_lines(tmp_path: Path) -> None:
    good = tmp_path / "s.jsonl"
    good.write_text(json.dumps({"text": "hi"}) + "\n" + json.dumps({"error": "timeout"}) + "\n")
    assert ScriptedBackend.from_file(good).remaining == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n{"nope": 1}\n')
    with pytest.raises(LLMRequestError, match=r"bad\.jsonl:2"):
        ScriptedBackend.from_file(bad)


class _SlowBackoff(RetryPolicy):
    """A policy whose every backoff is 1 s, so the deadline, not the retry count, decides."""

    def delay(self, attempt: int, retry_after: float | None, rng: object) -> float:
        return 1.0


@pytest.mark.parametrize("streaming", [False, True])
async def test_backoff_never_sleeps_past_the_overall_timeout(streaming: bool) -> None:
    backend = ScriptedBackend([ScriptedFailure("server_error")] * 20 + ["late"])
    llm = LLM(backend, retry=_SlowBackoff(max_retries=20, timeout_s=0.3))
    with pytest.raises(LLMUnavailableError) as info:
        if streaming:
            _ = [d async for d in llm.stream(Q)]
        else:
            await llm.chat(Q)
    assert "timeout reached" in str(info.value)
    assert len(backend.requests) == 1  # a 1 s sleep would overrun 0.3 s: give up at once
