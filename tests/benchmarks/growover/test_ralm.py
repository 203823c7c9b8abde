"""The ralm systems with a fake snapshot index, and how GrowOVER renders its tasks."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import pytest

from freshwiki.benchmarks import Sample, Task
from freshwiki.config import Settings
from freshwiki.llm import LLM, Message
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.records import Passage
from freshwiki.retrieval import SearchHit
from freshwiki.systems import SystemSetupError, load_system
from freshwiki.systems.ralm import RalmSystem


def hit(rank: int, pid: str, text: str) -> SearchHit:
    passage = Passage(id=pid, page_id=1, revision_id=2, title="Alpha", section_path=(),
                      text=text, timestamp=dt.datetime(2020, 1, 1, tzinfo=dt.UTC),
                      meta={"sentences": [rank]})
    return SearchHit(passage=passage, score=1.0 / rank, rank=rank, key=rank, fused_score=0.0)


class FakeIndex:
    def __init__(self) -> None:
        self.queries: list[tuple[str, int]] = []
        self.methods: list[str] = []

    def search(self, query: str, k: int = 5, **options: Any) -> list[SearchHit]:
        self.queries.append((query, k))
        self.methods.append(options.get("method", "hybrid"))
        return [hit(r, f"p{r}", f"Passage number {r}.") for r in range(1, 4)][:k]


class FakeIndexes:
    def __init__(self) -> None:
        self.index = FakeIndex()
        self.paths: list[str] = []

    def get(self, path: str) -> FakeIndex:
        self.paths.append(path)
        return self.index

    def close(self) -> None:
        pass


def task(index: str | None = "/snap/index") -> Task:
    meta = {"kind": "qa"} if index is None else {"kind": "qa", "index": index}
    sample = Sample(id="2020-01-31:x", input="How many?", targets=("3",), metadata=meta)
    return Task(sample=sample, template="qa", messages=(Message.user("Q: How many?"),),
                query="How many?")


def run(system: RalmSystem, t: Task) -> Any:
    return asyncio.run(system.respond(t))


@pytest.mark.parametrize("k", [2, 1])
def test_ralm_puts_the_top_passages_before_the_question_and_traces_them(
        settings: Settings, k: int) -> None:
    backend = ScriptedBackend(["3"])
    indexes = FakeIndexes()
    system = RalmSystem(LLM(backend), settings, k=k, indexes=indexes)  # type: ignore[arg-type]
    out = run(system, task())
    assert indexes.paths == ["/snap/index"] and indexes.index.queries == [("How many?", k)]
    assert indexes.index.methods == ["dense"]  # GrowOVER retrieves by sentence embeddings
    prompt = backend.requests[0].messages[-1].content
    shown = [f"Passage number {r}." for r in range(1, 4)]
    assert [s in prompt for s in shown] == [r <= k for r in range(1, 4)]
    assert prompt.index("Passage number 1.") < prompt.index("Q: How many?")
    assert [(r["id"], r["rank"], r["sentences"]) for r in out.trace["retrieved"]] == [
        (f"p{r}", r, [r]) for r in range(1, k + 1)]
    assert out.trace["retrieved"][0]["text"] == "Passage number 1."


def test_a_sample_without_a_snapshot_index_stops_the_run(settings: Settings) -> None:
    system = RalmSystem(LLM(ScriptedBackend([])), settings, indexes=FakeIndexes())  # type: ignore[arg-type]
    with pytest.raises(SystemSetupError, match="names no snapshot index"):
        run(system, task(index=None))


def test_systems_are_registered_with_their_options(settings: Settings) -> None:
    llm = LLM(ScriptedBackend([]))
    assert load_system("ralm", llm, settings).describe()["k"] == 3  # the paper's k
    assert load_system("ralm", llm, settings, {"k": 5}).describe()["k"] == 5
    assert load_system("ralm", llm, settings, {"method": "hybrid"}).describe()["method"] == (
        "hybrid")
    with pytest.raises(SystemSetupError, match="unknown method"):
        load_system("ralm", llm, settings, {"method": "bm26"})
    with pytest.raises(SystemSetupError, match="has no option 'kk'"):
        load_system("ralm", llm, settings, {"kk": 3})


def test_dialogue_turns_render_history_and_query() -> None:
    from freshwiki.benchmarks.growover import GrowOver

    sample = Sample(id="d", input="And its size?", targets=("It is big.",), metadata={
        "kind": "dialogue", "title": "Alpha", "snapshot": "2020-01-31",
        "history": [["Where is Alpha?", "In Spain."]]})
    bench = GrowOver.__new__(GrowOver)
    bench.kind = "dialogue"
    rendered = GrowOver.render(bench, sample, "dialogue")
    assert [m.role for m in rendered.messages] == ["system", "user", "assistant", "user"]
    assert rendered.messages[-1].content == "And its size?"
    assert rendered.query == "Where is Alpha? And its size?"
    assert "Alpha" in rendered.messages[0].content and "2020-01-31" in rendered.messages[0].content
