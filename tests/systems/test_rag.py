"""The rag system on a small real index: retrieval, numbered context, trace, lazy index."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from freshwiki.benchmarks import Sample, Task
from freshwiki.config import Settings
from freshwiki.llm import LLM, Message
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.retrieval import HybridIndex, default_index_dir, index_content
from freshwiki.systems import SystemSetupError, load_system, read_options
from freshwiki.systems.rag import RagSystem, context_messages


def task(question: str) -> Task:
    return Task(
        sample=Sample(id="s1", input=question),
        template="t",
        messages=(Message.system("Answer briefly."),
                  Message.user(f"Instructions first.\nQuestion: {question}")),
        query=question,
        max_tokens=40,
    )


async def test_rag_puts_numbered_labelled_passages_before_the_request(
    settings: Settings, mini_index: HybridIndex,
) -> None:
    backend = ScriptedBackend(["September 4, 1974."])
    system = RagSystem(LLM(backend), settings, k=3, index=mini_index)
    question = "When was Taya Kyle born?"
    output = await system.respond(task(question))
    expected = mini_index.search(question, 3)
    assert expected[0].passage.title == "Taya Kyle"  # real retrieval finds the article

    [call] = backend.requests
    assert call.messages[0] == Message.system("Answer briefly.")
    assert call.params.max_tokens == 40
    prompt = call.messages[1].content
    assert call.messages[1].role == "user"
    assert prompt.endswith(f"Instructions first.\nQuestion: {question}")
    positions = []
    for number, hit in enumerate(expected, start=1):
        label = f"[{number}] {hit.passage.title}"
        assert label in prompt and hit.passage.text in prompt
        positions.append(prompt.index(label))
    assert positions == sorted(positions)
    assert "[4]" not in prompt
    assert f"({expected[0].passage.timestamp.date().isoformat()})" in prompt  # type: ignore[union-attr]

    assert output.text == "September 4, 1974."
    assert output.trace["query"] == question and output.trace["index"] == "main"
    assert [r["id"] for r in output.trace["retrieved"]] == [h.passage.id for h in expected]
    assert [r["title"] for r in output.trace["retrieved"]] == [h.passage.title for h in expected]
    assert [r["score"] for r in output.trace["retrieved"]] == [h.score for h in expected]
    assert output.latency_s >= output.trace["retrieval_s"]
    await system.aclose()
    assert len(mini_index) > 0  # an index passed in belongs to the caller: still open


def test_without_hits_the_messages_are_unchanged() -> None:
    messages = (Message.system("s"), Message.user("u"))
    assert context_messages(messages, []) == messages


async def test_the_named_index_is_loaded_once_lazily_and_closed(
    settings: Settings, mini_index_dir: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    shutil.copytree(mini_index_dir, default_index_dir(settings, "mini"))
    loads: list[Path] = []
    real_load = HybridIndex.load

    def counting_load(directory: Path, **kw: Any) -> HybridIndex:
        loads.append(directory)
        return real_load(directory, **kw)

    monkeypatch.setattr(HybridIndex, "load", counting_load)
    backend = ScriptedBackend(["a", "b", "c"])
    system = load_system("rag", LLM(backend), settings, {"k": "2", "index": "mini"})
    # The copy is identified by its content, the same as the folder it was copied from.
    assert system.describe() == {"k": 2, "index": "mini", "time": "none",
                                 "index_content": index_content(mini_index_dir)["digest"]}
    assert loads == []  # building and describing the system load nothing
    outputs = await asyncio.gather(*(system.respond(task(q)) for q in (
        "Who is Geoffrey Zakarian?", "What is a Rat Terrier?", "What is lobar pneumonia?")))
    assert loads == [default_index_dir(settings, "mini")]
    assert [o.trace["retrieved"][0]["title"] for o in outputs] == [
        "Geoffrey Zakarian", "Rat Terrier", "Lobar pneumonia"]
    assert all(len(o.trace["retrieved"]) == 2 for o in outputs)
    await system.aclose()
    assert system._index._index is None  # type: ignore[attr-defined]  # closed and released


async def test_a_missing_index_says_how_to_build_it(settings: Settings) -> None:
    system = load_system("rag", LLM(ScriptedBackend([])), settings, {"index": "nothere"})
    with pytest.raises(SystemSetupError, match="no index 'nothere'") as exc:
        await system.respond(task("anything?"))
    assert "freshwiki index build --name nothere" in (exc.value.hint or "")


@pytest.mark.parametrize(("options", "message"), [
    ({"kk": 3}, "has no option 'kk'"),
    ({"k": "three"}, "option k='three' is not a int"),
    ({"k": 2.5}, "option k=2.5 is not a int"),
    ({"k": 0}, "k must be at least 1"),
    ({"k": True}, "got a boolean"),
])
def test_bad_rag_options_are_refused(settings: Settings, options: dict[str, Any],
                                     message: str) -> None:
    with pytest.raises(SystemSetupError, match=message):
        load_system("rag", LLM(ScriptedBackend([])), settings, options)


def test_read_options_fills_defaults_and_coerces() -> None:
    assert read_options("x", {"k": "7", "flag": False}, {"k": 5, "name": "a", "flag": True}) == {
        "k": 7, "name": "a", "flag": False}
