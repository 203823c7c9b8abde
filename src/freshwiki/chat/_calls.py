"""LLM calls of a turn, each recorded as a :class:`StageRecord`.

Every stage goes through :class:`TurnCalls`, so the trace holds every call with its prompt,
output, tokens, latency and cache status (enough to inspect a turn or distil a smaller model
from it), and so a JSON stage whose output stays unusable after the client's repair round
*degrades* (the stage returns ``None`` and the pipeline carries on with less) instead of
failing the whole turn. Transport failures (:class:`LLMUnavailableError` and the like) are
not swallowed: without a model there is no turn.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from freshwiki.chat._types import StageRecord
from freshwiki.llm import LLM, LLMOutputError, LLMRefusalError, LLMResult, Message
from freshwiki.prompting import render_prompt

PROMPTS = "chat/prompts"


def prompt(name: str, **variables: Any) -> str:
    """Render ``chat/prompts/{name}.j2``."""
    return render_prompt(f"{PROMPTS}/{name}.j2", **variables)


def messages_for(system: str, user: str) -> list[Message]:
    """The usual two-message prompt: fixed instructions, then the variable input."""
    return [Message.system(system), Message.user(user)]


def _input_of(messages: Sequence[Message]) -> str:
    """What the stage saw besides its system prompt, as one string for the trace."""
    rest = [m for m in messages if m.role != "system"]
    if len(rest) == 1:
        return rest[0].content
    return "\n\n".join(f"{m.role}: {m.content}" for m in rest)


def _instruction_of(messages: Sequence[Message]) -> str:
    return "\n\n".join(m.content for m in messages if m.role == "system")


class TurnCalls:
    """Makes one turn's LLM calls and keeps their records, in call order."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self.records: list[StageRecord] = []

    def _record(self, stage: str, messages: Sequence[Message], result: LLMResult) -> None:
        self.records.append(
            StageRecord(
                stage=stage,
                instruction=_instruction_of(messages),
                input=_input_of(messages),
                output=result.text,
                latency_s=result.latency_s,
                prompt_tokens=result.usage.prompt_tokens,
                completion_tokens=result.usage.completion_tokens,
                cached_prompt_tokens=result.usage.cached_prompt_tokens,
                cache_hit=result.cache_hit,
            )
        )

    async def text(self, stage: str, messages: Sequence[Message], *, max_tokens: int) -> str:
        """A plain-text call."""
        result = await self.llm.chat(messages, max_tokens=max_tokens, tag=f"chat:{stage}")
        self._record(stage, messages, result)
        return result.text.strip()

    async def json(
        self, stage: str, messages: Sequence[Message], schema: dict[str, Any], *, max_tokens: int
    ) -> Any:
        """A JSON-schema call: the parsed object, or ``None`` when the model never produced it.

        ``None`` is recorded with the raw output and the reason, so a degraded stage is
        visible in the trace.
        """
        started = time.perf_counter()
        try:
            result = await self.llm.chat(
                messages, max_tokens=max_tokens, json_schema=schema, schema_name=stage,
                tag=f"chat:{stage}",
            )
        except (LLMOutputError, LLMRefusalError) as exc:
            raw = exc.raw_text if isinstance(exc, LLMOutputError) else ""
            self.records.append(
                StageRecord(
                    stage=stage,
                    instruction=_instruction_of(messages),
                    input=_input_of(messages),
                    output=raw or "",
                    latency_s=time.perf_counter() - started,
                    error=exc.message,
                )
            )
            return None
        self._record(stage, messages, result)
        return result.parsed

    async def stream(
        self, stage: str, messages: Sequence[Message], *, max_tokens: int
    ) -> AsyncIterator[str]:
        """Stream a plain-text call's deltas; the record is added once the stream ends."""
        chat = self.llm.stream(messages, max_tokens=max_tokens, tag=f"chat:{stage}")
        async for delta in chat:
            yield delta
        if chat.result is not None:
            self._record(stage, messages, chat.result)
