"""The zero-shot system: the rendered prompt, one greedy call, a small answer cap."""

from __future__ import annotations

import pytest

from freshwiki.benchmarks import Sample, Task
from freshwiki.config import Settings
from freshwiki.llm import LLM, Message
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.systems import SystemSetupError, load_system
from freshwiki.systems.zero_shot import ZeroShotSystem


def task(max_tokens: int) -> Task:
    return Task(sample=Sample(id="s", input="note"), template="p1",
                messages=(Message.system("sys"), Message.user("Helpful? Yes or No.")),
                query="note", max_tokens=max_tokens, temperature=0.7)


async def test_sends_the_messages_once_greedily_with_the_smaller_cap() -> None:
    backend = ScriptedBackend(["Yes.", "No"])
    system = ZeroShotSystem(LLM(backend), max_tokens=10)
    out = await system.respond(task(max_tokens=250))
    assert out.text == "Yes."
    [call] = backend.requests
    assert call.messages == task(250).messages
    assert call.params.max_tokens == 10 and call.params.temperature == 0.0
    await system.respond(task(max_tokens=4))
    assert backend.requests[1].params.max_tokens == 4  # the task's cap when smaller
    assert out.trace["refused"] is False


def test_registered_with_its_option(settings: Settings) -> None:
    llm = LLM(ScriptedBackend([]))
    system = load_system("zero-shot", llm, settings, {"max_tokens": 5})
    assert system.name == "zero-shot" and system.describe() == {"max_tokens": 5}
    with pytest.raises(SystemSetupError, match="max_tokens must be at least 1"):
        load_system("zero-shot", llm, settings, {"max_tokens": 0})
    with pytest.raises(SystemSetupError, match="no option 'k'"):
        load_system("zero-shot", llm, settings, {"k": 3})
