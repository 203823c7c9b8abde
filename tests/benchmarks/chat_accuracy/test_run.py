"""chat_accuracy through the runner with a scripted model: stored, scored, resumed, exported."""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from freshwiki.benchmarks import Output, Task
from freshwiki.benchmarks.chat_accuracy import chat_accuracy_benchmark
from freshwiki.config import Settings
from freshwiki.evaluation import ResultsStore, RunSummary, evaluate, export_runs, read_runs_file
from freshwiki.llm import LLM
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.systems.vanilla import VanillaSystem
from tests.benchmarks.chat_accuracy.conftest import FALSEQA_TEXT, answer


async def run(settings: Settings, folder: Path, store: ResultsStore,
              options: Mapping[str, Any] | None = None,
              llm: LLM | None = None) -> tuple[RunSummary, LLM]:
    llm = llm or LLM(ScriptedBackend([answer] * 20))
    bench = chat_accuracy_benchmark(settings, {"path": str(folder), **(options or {})})
    summary = await evaluate(bench, VanillaSystem(llm), llm=llm, store=store,
                             scorers=bench.scorers(None), model_spec="scripted:test",
                             benchmark_options={"split": "test"}, concurrency=1,
                             simulator=llm)
    return summary, llm


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    return ResultsStore(tmp_path / "runs.sqlite")


async def test_each_reply_is_placed_by_rules_then_by_its_hand_label(
    settings: Settings, chat_eval: Path, store: ResultsStore,
) -> None:
    summary, _ = await run(settings, chat_eval, store)
    assert (summary.items, summary.complete, summary.new_outputs) == (4, 4, 4)
    results = store.load_run(summary.info.run_id)
    placed = {(i.sample_id, i.scorer): (i.label, i.value) for i in results.items}
    # a1 states "motorized bicycle"; f1's second reply states 2017; b1 names a founder of a
    # company the corpus lacks; p1's reply states no correction: the rules cannot tell, the
    # label (keyed by system, item and this exact reply) reads it as rejected.
    assert placed[("a1", "chat-accuracy-rules")] == ("correct", 1.0)
    assert placed[("f1", "chat-accuracy-rules")] == ("correct", 1.0)
    assert placed[("b1", "chat-accuracy-rules")] == ("answered", 0.0)
    assert placed[("p1", "chat-accuracy-rules")] == ("other", 0.0)
    assert placed[("p1", "chat-accuracy")] == ("rejected", 1.0)
    means = {m.scorer: m.mean for m in summary.means}
    assert means == {"chat-accuracy-rules": 0.5, "chat-accuracy": 0.75}


async def test_a_follow_up_is_asked_as_two_turns_and_the_second_reply_is_kept(
    settings: Settings, chat_eval: Path, store: ResultsStore,
) -> None:
    summary, llm = await run(settings, chat_eval, store)
    sent = [r.messages for r in llm.backend.requests]  # type: ignore[attr-defined]
    second = next(m for m in sent if m[-1].content == "What year was that?")
    assert [(m.role, m.content) for m in second] == [
        ("user", "In which city was Leading Ladies formed?"),
        ("assistant", "They were formed in London."),
        ("user", "What year was that?")]
    output = store.get_output(summary.info.run_id, "f1", "qa")
    assert output is not None and output.text == "That was in 2017."
    assert output.trace["first_reply"] == "They were formed in London."
    assert output.trace["system_label"] == "vanilla"
    assert output.trace["seconds"] >= 0.0


async def test_a_rerun_resumes_and_the_run_exports(
    settings: Settings, chat_eval: Path, store: ResultsStore, tmp_path: Path,
) -> None:
    first, _ = await run(settings, chat_eval, store)
    again, llm = await run(settings, chat_eval, store)
    assert again.info.run_id == first.info.run_id
    assert (again.already_done, again.new_outputs, again.new_scores) == (4, 0, 0)
    assert llm.backend.requests == []  # type: ignore[attr-defined]
    bundle = tmp_path / "run.jsonl.gz"
    export_runs(store, bundle, [first.info.run_id])
    _header, counts = read_runs_file(bundle)
    assert counts["outputs"] == 4 and counts["scores"] == 8


async def test_the_same_set_elsewhere_is_the_same_run_and_an_edit_a_new_one(
    settings: Settings, chat_eval: Path, store: ResultsStore, tmp_path: Path,
) -> None:
    first, _ = await run(settings, chat_eval, store)
    moved = tmp_path / "checkout2" / "chat_eval"
    shutil.copytree(chat_eval, moved)
    same, _ = await run(settings, moved, store)
    assert same.info.run_id == first.info.run_id and same.new_outputs == 0
    text = (moved / "questions.jsonl").read_text(encoding="utf-8")
    (moved / "questions.jsonl").write_text(text.replace('"2017"', '"2018"'), encoding="utf-8")
    edited, _ = await run(settings, moved, store)
    assert edited.info.run_id != first.info.run_id


async def test_a_falseqa_question_is_never_stored(
    settings: Settings, chat_eval: Path, falseqa_clone: Path, store: ResultsStore,
    tmp_path: Path,
) -> None:
    # A system whose trace repeats the question, as rag's query and the chat's searches do.
    class Echo(VanillaSystem):
        async def respond(self, task: Task) -> Output:
            output = await super().respond(task)
            return Output(text=output.text, trace={"query": task.query,
                                                   "chat": {"queries": [task.query + "?"]}})

    llm = LLM(ScriptedBackend([answer] * 4))
    bench = chat_accuracy_benchmark(settings, {"path": str(chat_eval), "kinds": "falseqa",
                                               "falseqa": str(falseqa_clone)})
    summary = await evaluate(bench, Echo(llm), llm=llm, store=store,
                             scorers=bench.scorers(None), model_spec="scripted:test",
                             simulator=llm)
    output = store.get_output(summary.info.run_id, "q1", "qa")
    assert output is not None and output.text == "I don't know."  # it was asked
    assert output.trace["chat"]["queries"] == ["(FalseQA row 1)?"]
    bundle = tmp_path / "q.jsonl.gz"
    export_runs(store, bundle, [summary.info.run_id])
    assert FALSEQA_TEXT not in gzip.decompress(bundle.read_bytes()).decode("utf-8")
    placed = {i.scorer: i.label for i in store.load_run(summary.info.run_id).items}
    assert placed == {"chat-accuracy-rules": "abstained", "chat-accuracy": "abstained"}
