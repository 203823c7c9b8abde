"""chat_latency: the questions it times, what a timed turn stores, and the ratio to rag."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from freshwiki.benchmarks import benchmark_analysis, load_benchmark
from freshwiki.benchmarks.chat_accuracy import ChatEvalError
from freshwiki.benchmarks.chat_latency import chat_latency_benchmark, pick_questions
from freshwiki.benchmarks.chat_latency.analysis import Tally, latency_row
from freshwiki.config import Settings
from freshwiki.evaluation import ResultsStore, evaluate, export_runs, read_runs_file
from freshwiki.llm import LLM
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.results import OutputList, RunInfo, RunResults
from freshwiki.systems.vanilla import VanillaSystem
from tests.benchmarks.chat_accuracy.conftest import answer


def test_questions_take_turns_by_set_in_file_order() -> None:
    rows = [{"id": f"{s}{n}", "kind": "answerable", "set": s}
            for s in ("head", "tail") for n in range(3)]
    rows.append({"id": "r0", "kind": "two_part", "set": "recent"})
    rows.append({"id": "x", "kind": "absent_fact", "set": "head"})  # never timed
    assert [r["id"] for r in pick_questions(rows)] == [
        "head0", "tail0", "r0", "head1", "tail1", "head2", "tail2"]
    assert [r["id"] for r in pick_questions(rows, 4)] == ["head0", "tail0", "r0", "head1"]


def test_the_repository_test_split_starts_with_the_scripts_questions(
    settings: Settings,
) -> None:
    bench = load_benchmark("chat_latency", settings, {})
    ids = [s.id for s in bench.samples()][:4]
    # The first head, tail and recent answerable items of the test split, then the next head.
    assert ids == ["head-ans-01", "tail-ans-01", "recent-ans-01", "head-ans-02"]
    assert "/" not in str(bench.describe())
    with pytest.raises(ChatEvalError, match="no option questions"):
        load_benchmark("chat_latency", settings, {"questions": "3"})


async def test_a_timed_turn_stores_its_seconds_calls_and_tokens(
    settings: Settings, chat_eval: Path, tmp_path: Path,
) -> None:
    bench = chat_latency_benchmark(settings, {"path": str(chat_eval)})
    assert [s.id for s in bench.samples()] == ["a1"]  # the only answerable item of "test"
    llm = LLM(ScriptedBackend([answer] * 4))
    with ResultsStore(tmp_path / "runs.sqlite") as store:
        summary = await evaluate(bench, VanillaSystem(llm), llm=llm, store=store, scorers=[],
                                 model_spec="scripted:test", templates=["dated"],
                                 concurrency=1, simulator=llm)
        output = store.get_output(summary.info.run_id, "a1", "dated")
        export_runs(store, tmp_path / "t.jsonl.gz", [summary.info.run_id])
    assert (summary.items, summary.complete) == (1, 1)
    (request,) = llm.backend.requests  # type: ignore[attr-defined]
    assert request.messages[0].role == "system"  # the dated template: today's date first
    assert dt.date.today().isoformat() in request.messages[0].content
    assert request.params.max_tokens == 512
    assert output is not None
    trace = output.trace
    assert {"seconds", "first_text_s", "calls", "prompt_tokens", "completion_tokens",
            "reused_prompt_tokens", "cache_hit"} <= set(trace)
    assert trace["calls"] == 1 and trace["first_text_s"] is None  # nothing streamed
    assert trace["cache_hit"] is False
    assert abs(output.latency_s - trace["seconds"]) < 1e-3  # one measurement, rounded once
    assert read_runs_file(tmp_path / "t.jsonl.gz")[1]["outputs"] == 1


def run_of(system: str, seconds: dict[str, float], first: dict[str, float | None]
           ) -> RunResults:
    now = dt.datetime(2026, 11, 27, tzinfo=dt.UTC)
    info = RunInfo(run_id=system, benchmark="chat_latency", system=system, model="m",
                   config={}, code_version="0", model_hashes={}, created_at=now,
                   updated_at=now)
    outputs = tuple((i, "qa", {}, "reply", {"seconds": s, "first_text_s": first[i],
                                            "calls": 1 if system == "rag" else 4})
                    for i, s in seconds.items())
    return RunResults(info=info, items=(), outputs=OutputList(outputs))


def test_the_report_pairs_each_run_with_rag_on_shared_questions() -> None:
    rag = run_of("rag", {"q1": 2.0, "q2": 4.0, "q3": 9.0}, {"q1": None, "q2": None,
                                                             "q3": None})
    checked = run_of("grounded", {"q1": 3.0, "q2": 5.0}, {"q1": 1.0, "q2": 2.0})
    factory = benchmark_analysis("chat_latency")
    assert factory is not None
    (section,) = factory().report_sections([rag, checked], ["rag", "checked"])
    view = section.context["latency"]
    assert view.anchor == "rag"
    rows = {label: (n, row) for label, n, row in view.rows}
    # checked answered q1 and q2 only: means 4 vs rag's 3 there; first text 1.5 vs 3.
    assert rows["checked"][0] == 2
    assert rows["checked"][1]["x_rag"] == 1.333 and rows["checked"][1]["mean_s"] == 4.0
    assert rows["checked"][1]["first_text_x_rag"] == 0.5
    assert rows["checked"][1]["calls"] == 4.0
    assert rows["rag"][1]["x_rag"] == 1.0 and rows["rag"][0] == 3
    assert factory().report_sections([checked], ["checked"]) == []  # no rag run: no anchor


def test_a_row_gives_the_script_its_keys() -> None:
    tally = Tally()
    for n, s in enumerate((1.0, 3.0)):
        tally.add_trace(f"q{n}", {"seconds": s, "calls": 2, "prompt_tokens": 10,
                                  "completion_tokens": 4, "reused_prompt_tokens": 6})
    row = latency_row(tally, [2.0, 2.0])
    assert row["mean_s"] == 2.0 and row["median_s"] == 2.0 and row["x_rag"] == 1.0
    assert row["first_text_s"] == 2.0  # no streamed text: the turn's end
    assert (row["prompt_tokens"], row["completion_tokens"], row["reused_prompt_tokens"]) == (
        10, 4, 6)
    assert set(row) == {"mean_s", "median_s", "first_text_s", "calls", "prompt_tokens",
                        "completion_tokens", "reused_prompt_tokens", "x_rag", "x_rag_95",
                        "first_text_x_rag", "first_text_x_rag_95"}
