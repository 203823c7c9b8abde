"""The vanilla system sends the benchmark's messages as they are."""

from __future__ import annotations

import datetime as dt

import pytest

from freshwiki.benchmarks import Sample, Task
from freshwiki.config import Settings
from freshwiki.llm import LLM, Message, Usage
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.systems import SystemSetupError, load_system, system_names
from freshwiki.systems.vanilla import VanillaSystem, vanilla_messages

TASK = Task(
    sample=Sample(id="s1", input="Who won?", targets=("A",)),
    template="4",
    messages=(Message.system("Be brief."), Message.user("Context... Who won?")),
    query="Who won?",
    max_tokens=33,
    temperature=0.7,
)


async def test_vanilla_sends_the_task_as_is(settings: Settings) -> None:
    backend = ScriptedBackend(["Team A won the final."], model_id="m-1")
    system = load_system("vanilla", LLM(backend), settings)
    assert isinstance(system, VanillaSystem) and system.describe() == {}
    output = await system.respond(TASK)
    [call] = backend.requests
    assert call.messages == TASK.messages
    assert (call.params.max_tokens, call.params.temperature) == (33, 0.7)
    assert output.text == "Team A won the final."
    # The scripted backend counts words: 2 + 3 prompt words, 5 completion words.
    assert output.usage == Usage(prompt_tokens=5, completion_tokens=5)
    assert (output.model, output.cache_hit) == ("m-1", False)
    assert output.trace == {"finish_reason": "stop", "refused": False}
    await system.aclose()


def test_vanilla_takes_no_options(settings: Settings) -> None:
    with pytest.raises(SystemSetupError, match="system 'vanilla' has no option 'k'") as exc:
        load_system("vanilla", LLM(ScriptedBackend([])), settings, {"k": 3})
    assert exc.value.hint == "options of 'vanilla': none."


def test_both_systems_are_registered() -> None:
    assert {"vanilla", "rag"} <= set(system_names())


def test_vanilla_messages_for_ask_keep_the_date() -> None:
    system, user = vanilla_messages("  Who is the UK prime minister? ",
                                    today=dt.date(2024, 7, 5))
    assert "2024-07-05" in system.content and user == Message.user(
        "Who is the UK prime minister?")
