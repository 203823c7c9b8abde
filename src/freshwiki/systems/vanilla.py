"""The vanilla system: the LLM alone, no retrieval. The baseline every other system beats."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from freshwiki.llm import LLM, Message
from freshwiki.prompting import render_prompt
from freshwiki.seams import Output, System, Task
from freshwiki.systems._options import read_options

if TYPE_CHECKING:
    from freshwiki.config import Settings


def vanilla_messages(question: str, *, today: dt.date | None = None) -> list[Message]:
    """The chat messages that ask the model ``question`` with today's date in context.

    The date matters: questions about changing facts are only answerable relative to "now".
    """
    if not question.strip():
        raise ValueError("the question is empty")
    today = today or dt.date.today()
    return [
        Message.system(render_prompt("systems/prompts/vanilla_system.j2", today=today.isoformat())),
        Message.user(question.strip()),
    ]


class VanillaSystem:
    """Sends the benchmark's messages to the model exactly as rendered.

    No system prompt of its own and no date: the benchmark's template is the whole prompt,
    so ``vanilla`` measures the model and the template, nothing else. Generation length and
    temperature come from the task, as the benchmark prescribes.
    """

    name = "vanilla"

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    def describe(self) -> Mapping[str, Any]:
        """Nothing but the model determines its outputs."""
        return {}

    async def respond(self, task: Task) -> Output:
        """One chat call with ``task.messages``."""
        result = await self.llm.chat(
            task.messages, max_tokens=task.max_tokens, temperature=task.temperature,
            tag=f"eval:{self.name}",
        )
        return Output(
            text=result.text,
            usage=result.usage,
            latency_s=result.latency_s,
            cache_hit=result.cache_hit,
            model=result.model,
            trace={"finish_reason": result.finish_reason, "refused": result.refused},
        )

    async def aclose(self) -> None:
        """Holds nothing; the LLM belongs to the caller."""


def vanilla_system(llm: LLM, settings: Settings, options: Mapping[str, Any]) -> System:
    """``vanilla``: the task's messages sent to the model unchanged (no options)."""
    read_options("vanilla", options, {})
    return VanillaSystem(llm)
