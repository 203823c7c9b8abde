"""The runner in-process with scripted models: resume, run identity, per-item errors, stops."""

from __future__ import annotations

import asyncio
import io
import json
import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import freshwiki
from freshwiki.benchmarks import Output, Task
from freshwiki.config import Settings
from freshwiki.evaluation import (
    EvaluationError,
    ResultsStore,
    RunSummary,
    SystemicFailureError,
    evaluate,
    load_plugins,
    run_evaluation,
)
from freshwiki.evaluation._runner import code_version, make_run_id, run_identity
from freshwiki.llm import LLM, LLMRequestError, Message
from freshwiki.llm.backends.scripted import ScriptedBackend, ScriptedFailure
from freshwiki.systems import SystemSetupError
from freshwiki.systems.rag import RagSystem
from freshwiki.systems.vanilla import VanillaSystem
from tests.systems.testkit import ConstantScorer, ExactScorer, Tiny

REPO = Path(__file__).resolve().parents[2]


def number_in(messages: Sequence[Message]) -> int:
    return int(re.findall(r"What is (\d+) plus", messages[-1].content)[0])


def right_on_even(messages: Sequence[Message]) -> str:
    """Answers 2N when N is even, 2N+1 when odd: exact-match mean is then #even / #samples."""
    n = number_in(messages)
    return f"It is {2 * n if n % 2 == 0 else 2 * n + 1}."


def backend(step: Any = right_on_even, n: int = 200, **kw: Any) -> ScriptedBackend:
    return ScriptedBackend([step] * n, **kw)


async def run(
    store: ResultsStore,
    llm: LLM,
    *,
    bench: Tiny | None = None,
    system: Any = None,
    scorers: Sequence[Any] | None = None,
    **kw: Any,
) -> RunSummary:
    return await evaluate(
        bench or Tiny(6), system or VanillaSystem(llm), llm=llm, store=store,
        scorers=[ExactScorer()] if scorers is None else scorers, model_spec="scripted:test",
        **kw,
    )


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    return ResultsStore(tmp_path / "runs.sqlite")


async def test_a_full_run_commits_every_item_once_with_hand_checked_means(
    store: ResultsStore,
) -> None:
    llm = LLM(backend())
    summary = await run(store, llm, templates=["plain", "terse"])
    assert (summary.items, summary.complete, summary.new_outputs, summary.new_scores) == (
        12, 12, 12, 12)
    # Samples 1..6: even ones (2, 4, 6) answered right, under both templates.
    assert [(m.template, m.mean, m.n) for m in summary.means] == [("plain", 0.5, 6),
                                                                  ("terse", 0.5, 6)]
    results = store.load_run(summary.info.run_id)
    by_key = {(i.sample_id, i.template): i for i in results.items}
    assert by_key[("t02", "plain")].value == 1.0 and by_key[("t02", "plain")].output == "It is 4."
    assert by_key[("t03", "terse")].value == 0.0
    assert by_key[("t03", "terse")].metadata == {"parity": "odd"}
    # The terse template's prefix reached the model; the task's cap and temperature too.
    sent = [r for r in llm.backend.requests if "number only" in r.messages[0].content]  # type: ignore[attr-defined]
    assert len(sent) == 6 and all(r.params.max_tokens == 20 for r in sent)
    info = summary.info
    assert info.config["templates"] == ["plain", "terse"] and info.config["limit"] is None
    assert info.config["breakdowns"] == ["parity"]  # what reports group by
    assert info.model_hashes == {"model": "scripted"} and info.label == "vanilla/scripted:test"
    assert info.code_version.startswith(freshwiki.__version__)


async def test_a_rerun_continues_where_it_stopped_with_exact_counts(store: ResultsStore) -> None:
    first = await run(store, LLM(backend()), limit=2)
    assert (first.items, first.new_outputs) == (2, 2)
    b = backend()
    second = await run(store, LLM(b), limit=5)
    assert second.info.run_id == first.info.run_id  # --limit widens the same run
    assert (second.already_done, second.new_outputs, second.new_scores, second.complete) == (
        2, 3, 3, 5)
    assert len(b.requests) == 3 and sorted(number_in(r.messages) for r in b.requests) == [3, 4, 5]
    again = backend()
    third = await run(store, LLM(again), limit=5)
    assert (third.new_outputs, third.new_scores, len(again.requests)) == (0, 0, 0)
    # Adding a scorer scores the stored outputs without asking the model again.
    fourth = await run(store, LLM(again), limit=5,
                       scorers=[ExactScorer(), ConstantScorer("extra", 0.25)])
    assert (fourth.new_outputs, fourth.new_scores, len(again.requests)) == (0, 5, 0)
    assert [(m.scorer, m.mean, m.n) for m in fourth.means] == [("tiny-exact", 0.4, 5),
                                                               ("extra", 0.25, 5)]
    assert store.count("outputs", first.info.run_id) == (5, 5)
    assert store.count("scores", first.info.run_id) == (10, 10)
    assert store.run_info(first.info.run_id).config["scorers"] == ["tiny-exact", "extra"]


def _identity_id(llm: LLM, judge: LLM | None = None, system: Any = None,
                 bench: Tiny | None = None, options: Mapping[str, Any] | None = None) -> str:
    return make_run_id(run_identity(bench or Tiny(6), system or VanillaSystem(llm), llm, judge,
                                    options))


def test_the_run_id_depends_on_what_determines_outputs_only(settings: Settings) -> None:
    llm = LLM(ScriptedBackend([], model_id="m1"))
    base = _identity_id(llm)
    assert re.fullmatch(r"[0-9a-f]{12}", base)
    assert _identity_id(LLM(ScriptedBackend([], model_id="m1"))) == base  # stable
    assert make_run_id(run_identity(Tiny(6), VanillaSystem(llm), llm, None)) == base
    changed = {
        "model": _identity_id(LLM(ScriptedBackend([], model_id="m2"))),
        "judge": _identity_id(llm, judge=LLM(ScriptedBackend([], model_id="j"))),
        "dataset": _identity_id(llm, bench=Tiny(7)),
        "options": _identity_id(llm, options={"n": 6}),
        "system": _identity_id(llm, system=RagSystem(llm, settings, k=5)),
        "k": _identity_id(llm, system=RagSystem(llm, settings, k=3)),
    }
    assert len({base, *changed.values()}) == 1 + len(changed), changed


async def test_templates_limit_and_scorers_do_not_change_the_run(store: ResultsStore) -> None:
    a = await run(store, LLM(backend()), limit=1, templates=["plain"])
    b = await run(store, LLM(backend()), limit=2, templates=["terse"], scorers=[])
    assert a.info.run_id == b.info.run_id


async def test_a_failing_item_is_recorded_and_retried_on_the_next_run(
    store: ResultsStore,
) -> None:
    def breaks_on_3(messages: Sequence[Message]) -> str:
        if number_in(messages) == 3:
            raise LLMRequestError("HTTP 400: prompt rejected", backend="scripted", model="m")
        return right_on_even(messages)

    first = await run(store, LLM(backend(breaks_on_3)), scorers=[ExactScorer(),
                                                                ConstantScorer("fragile", 1.0,
                                                                       frozenset({"t05"}))])
    assert (first.complete, first.new_outputs, first.new_failures) == (4, 5, 2)
    failed = {(f.sample_id, f.stage, f.scorer, f.error_type) for f in first.failures}
    assert failed == {("t03", "respond", None, "LLMRequestError"),
                      ("t05", "score", "fragile", "RuntimeError")}
    assert "prompt rejected" in next(f.message for f in first.failures if f.sample_id == "t03")
    assert len(store.load_run(first.info.run_id).failures) == 2

    b = backend()
    second = await run(store, LLM(b), scorers=[ExactScorer(), ConstantScorer("fragile", 1.0)])
    assert [number_in(r.messages) for r in b.requests] == [3]  # only the failed respond
    assert (second.complete, second.new_outputs, second.new_scores) == (6, 1, 3)
    assert second.failures == () and store.failures(first.info.run_id) == []
    assert [(m.scorer, m.mean, m.n) for m in second.means] == [("tiny-exact", 0.5, 6),
                                                               ("fragile", 1.0, 6)]


async def test_the_same_error_over_and_over_stops_the_run(store: ResultsStore) -> None:
    llm = LLM(ScriptedBackend([ScriptedFailure("bad_request")] * 50))
    with pytest.raises(SystemicFailureError, match="last 3 attempts at responding") as stop:
        await run(store, llm, concurrency=1, max_consecutive_failures=3)
    assert "re-run the same command" in (stop.value.hint or "")
    [overview] = store.list_runs()
    assert (overview.outputs, overview.failures) == (0, 3)
    # Fixed, the same command resumes and retries the recorded failures.
    fixed = await run(store, LLM(backend()), concurrency=1, max_consecutive_failures=3)
    assert (fixed.complete, fixed.new_outputs, fixed.failures) == (6, 6, ())


async def test_scattered_failures_never_stop_a_run(store: ResultsStore) -> None:
    def every_other(messages: Sequence[Message]) -> str:
        if number_in(messages) % 2:
            raise LLMRequestError("odd", backend="scripted", model="m")
        return "fine"

    summary = await run(store, LLM(backend(every_other)), bench=Tiny(20), concurrency=1,
                        max_consecutive_failures=2)
    assert (summary.new_outputs, summary.new_failures) == (10, 10)


async def test_a_system_that_cannot_work_stops_at_once(store: ResultsStore) -> None:
    class Broken(VanillaSystem):
        async def respond(self, task: Task) -> Output:
            raise SystemSetupError("no index", hint="build it")

    llm = LLM(backend())
    with pytest.raises(SystemSetupError, match="no index"):
        await run(store, llm, system=Broken(llm))
    [overview] = store.list_runs()
    assert (overview.outputs, overview.failures) == (0, 0)


async def test_items_in_flight_are_bounded(store: ResultsStore) -> None:
    state = {"now": 0, "max": 0}

    class Counting(VanillaSystem):
        async def respond(self, task: Task) -> Output:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
            await asyncio.sleep(0.01)
            state["now"] -= 1
            return await super().respond(task)

    b = backend(concurrency=2, delay_s=0.01)
    llm = LLM(b)
    await run(store, llm, system=Counting(llm), bench=Tiny(12), concurrency=3)
    assert state["max"] == 3 and b.max_in_flight <= 2
    state["max"] = 0
    other = ResultsStore(store.path.with_name("other.sqlite"))
    llm2 = LLM(backend(concurrency=2))
    await run(other, llm2, system=Counting(llm2), bench=Tiny(12))
    assert state["max"] == 4  # default: twice the client's concurrency


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"templates": ["nope"]}, "no template 'nope'"),
    ({"limit": 0}, "at least 1"),
    ({"concurrency": 0}, "at least 1"),
    ({"scorers": [ExactScorer(), ExactScorer()]}, "repeat"),
])
async def test_bad_requests_are_clear_errors(store: ResultsStore, kwargs: dict[str, Any],
                                             message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        await run(store, LLM(backend()), **kwargs)


async def test_duplicate_sample_ids_are_refused(store: ResultsStore) -> None:
    class Twice(Tiny):
        def samples(self):  # type: ignore[no-untyped-def]
            yield from super().samples()
            yield from super().samples()

    with pytest.raises(EvaluationError, match="sample id 't01' twice"):
        await run(store, LLM(backend()), bench=Twice(2))


async def test_progress_on_a_non_terminal_is_one_final_line(store: ResultsStore) -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, force_terminal=False)
    summary = await run(store, LLM(backend()), console=console)
    text = buffer.getvalue()
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1 and "\x1b" not in text, text
    assert f"run {summary.info.run_id}" in text and "6/6" in text and "it/s" in text
    assert "0 failed" in text and len(lines[0]) <= 80


async def test_run_evaluation_resolves_names_and_chooses_scorers_by_judge(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FRESHWIKI_PLUGINS", "tests.systems.testkit")
    script = tmp_path / "answers.jsonl"
    script.write_text("\n".join(json.dumps({"text": "It is 2."}) for _ in range(10)))
    judge = tmp_path / "judge.jsonl"
    judge.write_text("\n".join(json.dumps({"text": "yes"}) for _ in range(10)))
    plain = await run_evaluation("tiny", model=f"scripted:{script}", judge=None, limit=2,
                                 benchmark_options={"n": 3}, settings=settings)
    assert [(m.scorer, m.mean, m.n) for m in plain.means] == [("tiny-exact", 0.5, 2)]
    judged = await run_evaluation("tiny", model=f"scripted:{script}", judge=f"scripted:{judge}",
                                  limit=2, benchmark_options={"n": 3}, settings=settings)
    assert judged.info.run_id != plain.info.run_id
    assert [(m.scorer, m.mean) for m in judged.means] == [("tiny-exact", 0.5),
                                                          ("tiny-judge", 1.0)]
    assert judged.info.model_hashes == {"model": "script:answers.jsonl",
                                        "judge": "script:judge.jsonl"}
    only = await run_evaluation("tiny", model=f"scripted:{script}", judge=f"scripted:{judge}",
                                limit=2, scorers=["tiny-judge"], benchmark_options={"n": 3},
                                settings=settings)
    assert only.info.run_id == judged.info.run_id and only.new_scores == 0
    with ResultsStore(settings.home / "runs" / "runs.sqlite") as s:
        assert {o.info.run_id for o in s.list_runs()} == {plain.info.run_id, judged.info.run_id}


def test_plugins_are_imported_from_the_environment() -> None:
    assert load_plugins({"FRESHWIKI_PLUGINS": " tests.systems.testkit , "}) == [
        "tests.systems.testkit"]
    assert load_plugins({}) == []
    with pytest.raises(EvaluationError, match="no_such_plugin") as exc:
        load_plugins({"FRESHWIKI_PLUGINS": "no_such_plugin"})
    assert "PYTHONPATH" in (exc.value.hint or "")


def test_code_version_names_the_git_commit() -> None:
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(REPO / "src" / "freshwiki"), "status",
                            "--porcelain", "--", "."], capture_output=True, text=True,
                           check=True).stdout.strip()
    expected = f"{freshwiki.__version__} (git {head}{'+dirty' if dirty else ''})"
    code_version.cache_clear()
    assert code_version() == expected
