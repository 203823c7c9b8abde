"""A real llama_cpp.server on 127.0.0.1 answering through the OpenAI-compatible backend."""

from __future__ import annotations

import asyncio

import pytest

from freshwiki.config import load_settings
from freshwiki.llm import LLMUnavailableError, Message, open_llm

pytestmark = pytest.mark.e2e


async def test_openai_backend_answers_from_llama_server(llama_server: str) -> None:
    llm = open_llm(f"openai:smollm2@{llama_server}", cache=False)
    result = await llm.chat([Message.user("What is the capital of France?")], max_tokens=30)
    # SmolLM2-135M is a plumbing model: assert the wire, not its knowledge.
    assert result.text.strip() and result.model == "smollm2"
    assert result.backend == "openai" and 0 < result.usage.completion_tokens <= 30
    assert result.usage.prompt_tokens > 5
    chat = llm.stream([Message.user("Name three colours.")], max_tokens=30)
    deltas = [d async for d in chat]
    assert len(deltas) > 2 and chat.result is not None
    assert chat.result.text == "".join(deltas)
    await llm.aclose()


async def test_json_schema_through_llama_server(llama_server: str) -> None:
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    }
    llm = open_llm(f"openai:smollm2@{llama_server}", cache=False)
    result = await llm.chat(
        [Message.user("What is the capital of France? Reply as JSON.")],
        json_schema=schema,
        max_tokens=60,
    )
    assert isinstance(result.parsed, dict) and isinstance(result.parsed["answer"], str)
    await llm.aclose()


async def test_concurrent_requests_all_answer(llama_server: str) -> None:
    llm = open_llm(f"openai:smollm2@{llama_server}", cache=False)
    results = await asyncio.gather(
        *(llm.chat([Message.user(f"Say the number {i}.")], max_tokens=10) for i in range(4))
    )
    assert all(r.text for r in results)
    await llm.aclose()


@pytest.mark.timeout(60)
async def test_unreachable_server_fails_typed_within_timeout() -> None:
    from tests.e2e.fixtures import free_port

    settings = load_settings({"timeout": 3.0, "max_retries": 10}).settings
    llm = open_llm(f"openai:x@http://127.0.0.1:{free_port()}/v1", settings=settings, cache=False)
    with pytest.raises(LLMUnavailableError) as info:
        await llm.chat([Message.user("hi")])
    assert "connection" in info.value.cause and "127.0.0.1" in info.value.cause
    await llm.aclose()
