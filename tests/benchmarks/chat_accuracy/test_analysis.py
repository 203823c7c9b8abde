"""The per-kind table and the paired difference vs rag, from stored runs and from rows."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from freshwiki.benchmarks import Output, Task, benchmark_analysis
from freshwiki.benchmarks.chat_accuracy import chat_accuracy_benchmark
from freshwiki.benchmarks.chat_accuracy.analysis import (
    ChatAccuracyAnalysis,
    paired,
    reply_row,
    summarise,
)
from freshwiki.config import Settings
from freshwiki.evaluation import ResultsStore, evaluate, write_report
from freshwiki.llm import LLM
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.systems.vanilla import VanillaSystem
from tests.benchmarks.chat_accuracy.conftest import answer


class FakeRag:
    """Answers like the scripted model but wrong on a1, cites passage [1] (Derny) there."""

    name = "rag"

    def describe(self) -> Mapping[str, Any]:
        return {}

    async def respond(self, task: Task) -> Output:
        if task.query.startswith("What kind of vehicle"):
            return Output(text="A Derny is a car [1].", trace={
                "retrieved": [{"title": "Derny"}], "query": task.query})
        return Output(text=answer(task.messages), trace={"retrieved": []})

    async def aclose(self) -> None:
        return None


async def two_runs(settings: Settings, chat_eval: Path, store: ResultsStore) -> list[Any]:
    bench = chat_accuracy_benchmark(settings, {"path": str(chat_eval)})
    llm = LLM(ScriptedBackend([answer] * 20))
    out = []
    for system in (VanillaSystem(llm), FakeRag()):
        summary = await evaluate(bench, system, llm=llm, store=store,
                                 scorers=bench.scorers(None), model_spec="scripted:test",
                                 concurrency=1, simulator=llm)
        out.append(store.load_run(summary.info.run_id))
    return out


async def test_the_report_table_counts_each_kind_and_pairs_with_rag(
    settings: Settings, chat_eval: Path, tmp_path: Path,
) -> None:
    with ResultsStore(tmp_path / "runs.sqlite") as store:
        runs = await two_runs(settings, chat_eval, store)
    factory = benchmark_analysis("chat_accuracy")
    assert factory is not None
    sections = factory().report_sections(runs, ["vanilla", "rag"])
    view = sections[0].context["chat"]
    rows = {r.label: r for r in view.rows}
    # vanilla: a1, f1 correct (2 of 2 answerable kinds); rag: f1 only. Absent b1: answered.
    assert rows["vanilla"].shares["answerable"][0] == 1.0
    assert rows["rag"].shares["answerable"][0] == 0.5
    assert rows["vanilla"].shares["absent"][0] == 0.0
    # p1: vanilla's reply has a label (rejected); rag's identical reply is keyed by "rag"
    # and has none, so it stays unread; so does rag's a1 ("a car": no word of the answer,
    # no "I don't know"), which the rules leave to a reader.
    assert rows["vanilla"].shares["false_premise"][0] == 1.0
    assert (rows["vanilla"].unread, rows["rag"].unread) == (0, 2)
    assert view.baseline == "rag"
    (diff,) = view.paired
    # vanilla - rag on a1 (1 - 0) and f1 (1 - 1): mean 0.5, one question only vanilla's.
    assert (diff.label, diff.n, diff.mean_difference, diff.only_this, diff.only_baseline) == (
        "vanilla", 2, 0.5, 1, 0)
    html, md = write_report(runs, tmp_path / "report")
    text = md.read_text(encoding="utf-8")
    assert "## Chat accuracy by kind" in text
    assert "| vanilla/scripted:test | 4 | 1.000 [0.34, 1.00] | — | 0.000" in text  # Wilson 2 of 2
    assert 'id="chat-accuracy"' in html.read_text(encoding="utf-8")


def test_summaries_count_contradicted_citations_and_false_conflict_notes() -> None:
    items = [{"id": "x", "kind": "answerable", "titles": ["Derny"], "answers": [["bicycle"]],
              "set": "head"},
             {"id": "y", "kind": "absent_fact", "titles": ["Z"], "answers": []}]
    rows = {"x": reply_row("It is a car [1].", {"retrieved": [{"title": "Derny"}]}),
            "y": reply_row("The sources disagree on it.", {"seconds": 3.0})}
    summary = summarise(items, rows, {"x": "wrong", "y": "answered"})
    # x is wrong and cites its own lead (Derny); y carries a conflict note on a set with no
    # contradiction: a false alarm.
    assert summary["contradicted_citations"] == 1
    assert summary["by_kind"]["answerable"]["contradicted_ids"] == ["x"]
    assert summary["conflict_notes_outside_conflicts"] == 1
    assert summary["answerable_correct"][0] == 0.0
    assert summary["mean_seconds"] == 1.5  # 0 (no timing in x's trace) and 3
    assert summary["by_set"] == {"head": summary["answerable_correct"]}
    assert paired("a", "b", items, {"a": {"x": "correct"}}) is None  # b has no reply


def test_an_analysis_without_runs_adds_nothing() -> None:
    assert ChatAccuracyAnalysis().report_sections([], []) == []
