"""The grounded system: one chat turn per task, through the real pipeline on a real index."""

from __future__ import annotations

import pytest

from freshwiki.benchmarks import Sample, Task
from freshwiki.chat import GroundedChat
from freshwiki.config import Settings
from freshwiki.llm import Message
from freshwiki.retrieval import HybridIndex
from freshwiki.systems import SystemSetupError, load_system
from freshwiki.systems._index import LazyIndex
from freshwiki.systems.grounded import GroundedSystem
from tests.chat.fakes import js, scripted_llm

QUESTION = "When did KickassTorrents go offline?"


def task() -> Task:
    # The template's own prompt (with its passages) is not what the chatbot answers.
    return Task(sample=Sample(id="s1", input=QUESTION), template="4",
                messages=(Message.user(f"Passage: UNRELATED TEXT\nQuestion: {QUESTION}"),),
                query=QUESTION)


async def test_a_task_becomes_one_cited_chat_turn_on_the_bare_question(
    settings: Settings, mini_index: HybridIndex
) -> None:
    llm, script = scripted_llm({
        "answer": "KickassTorrents went offline on 20 July 2016.",
        "check": lambda m: js({"answers": ["20 July 2016"] * m[-1].content.count("___")}),
    })
    engine = GroundedChat(llm, mini_index, k=3)
    system = GroundedSystem(llm, settings, engine=engine)
    output = await system.respond(task())

    assert output.text == "KickassTorrents went offline on 20 July 2016 [1]."
    # Real retrieval found the article; the citation points at it (checked in the lead text).
    (citation,) = output.trace["citations"]
    assert citation["evidence"]["title"] == "KickassTorrents"
    assert "20 July 2016" in citation["evidence"]["text"]
    assert output.trace["grounded"] is True and output.trace["query"] == QUESTION
    assert [s["stage"] for s in output.trace["chat"]["stages"]] == ["answer", "check"]
    assert output.usage.prompt_tokens == output.trace["chat"]["prompt_tokens"] > 0
    # The template's text never reached the model: the pipeline wrote every prompt.
    assert all("UNRELATED TEXT" not in c.user for c in script.calls)


def test_options_are_checked_and_recorded(settings: Settings) -> None:
    llm, _ = scripted_llm({})
    system = load_system("grounded", llm, settings, {"mode": "wikichat", "k": "8", "index": "x"})
    # wikichat refines with feedback (WikiChat's stage 7) and writes its stage-2 summaries with
    # the model, as the paper does, unless told otherwise.
    # Index "x" is not built: its content is unknown (None) until it is.
    assert system.describe() == {"mode": "wikichat", "k": 8, "index": "x",
                                 "index_content": None, "refine": "feedback", "facts": "llm"}
    plain = load_system("grounded", llm, settings, {"mode": "wikichat", "refine": "plain",
                                                     "facts": "extractive"})
    assert (plain.describe()["refine"], plain.describe()["facts"]) == ("plain", "extractive")
    # The checked mode has neither stage: nothing to describe, and nothing to choose.
    assert load_system("grounded", llm, settings, {}).describe()["mode"] == "checked"
    assert "refine" not in load_system("grounded", llm, settings, {}).describe()
    with pytest.raises(SystemSetupError, match="refine applies to mode wikichat only"):
        load_system("grounded", llm, settings, {"refine": "plain"})
    with pytest.raises(SystemSetupError, match="facts applies to mode wikichat only"):
        load_system("grounded", llm, settings, {"facts": "extractive"})
    with pytest.raises(SystemSetupError, match="refine must be feedback or plain"):
        load_system("grounded", llm, settings, {"mode": "wikichat", "refine": "fancy"})
    with pytest.raises(SystemSetupError, match="unknown chat mode 'turbo'"):
        load_system("grounded", llm, settings, {"mode": "turbo"})
    # The old names are stored under the new ones, so runs under either name are one set-up.
    old = load_system("grounded", llm, settings, {"mode": "full"})
    assert old.describe()["mode"] == "wikichat"
    assert load_system("grounded", llm, settings, {"mode": "fast"}).describe()["mode"] == (
        "checked")


async def test_the_refine_option_reaches_the_pipeline(
    settings: Settings, mini_index: HybridIndex
) -> None:
    llm, _ = scripted_llm({})
    system = load_system("grounded", llm, settings, {"mode": "wikichat", "refine": "plain"})
    assert isinstance(system, GroundedSystem)
    system._index = LazyIndex("grounded", settings, "mini", mini_index)
    engine = await system._loaded()
    assert isinstance(engine, GroundedChat)
    assert (engine.mode, engine.refine, engine.facts) == ("wikichat", "plain", "llm")


async def test_a_missing_named_index_is_a_setup_error(settings: Settings) -> None:
    llm, _ = scripted_llm({})
    system = load_system("grounded", llm, settings, {"index": "nothere"})
    with pytest.raises(SystemSetupError, match="nothere") as caught:
        await system.respond(task())
    assert caught.value.hint and "freshwiki index build --name nothere" in caught.value.hint
