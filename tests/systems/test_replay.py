"""The replay system: recorded answers through the runner, identified by their content."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from freshwiki.benchmarks.wikicontradict import JudgeScorer, WikiContradict
from freshwiki.config import Settings
from freshwiki.evaluation import (
    ResultsStore,
    agree,
    evaluate,
    make_run_id,
    read_labels,
    run_identity,
)
from freshwiki.llm import LLM, Message
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.seams import ScopedTemplates, Task
from freshwiki.systems import SystemSetupError, load_system
from freshwiki.systems.replay import NoRecordedAnswerError, ReplaySystem
from tests.systems.testkit import ExactScorer, Tiny


def write(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


ROWS = [
    {"sample_id": "t01", "template": "plain", "response": "  It is 2.\n", "label": "correct",
     "model": "local:a", "system": "vanilla", "run_id": "r1"},
    {"sample_id": "t02", "template": "plain", "response": "Five.", "label": "incorrect",
     "model": "local:a", "system": "vanilla", "run_id": "r1"},
    {"sample_id": "t02", "template": "plain", "response": "It is 4.", "label": "correct",
     "model": "local:b", "system": "rag", "run_id": "r2"},
    {"sample_id": "t03", "template": "terse", "response": "6", "label": "correct",
     "model": "local:b", "system": "rag", "run_id": "r2"},
]


def replay(settings: Settings, path: Path, filter_spec: str = "") -> ReplaySystem:
    llm = LLM(ScriptedBackend([], model_id="m"))
    system = load_system("replay", llm, settings, {"answers": str(path), "filter": filter_spec})
    assert isinstance(system, ReplaySystem)
    return system


def task(sample_id: str, template: str) -> Task:
    sample = next(s for s in Tiny(6).samples() if s.id == sample_id)
    return Tiny(6).render(sample, template)


def run_id(system: ReplaySystem) -> str:
    llm = LLM(ScriptedBackend([], model_id="m"))
    return make_run_id(run_identity(Tiny(3), system, llm, None))


async def test_it_answers_exactly_the_recorded_text_with_its_producer(
    settings: Settings, tmp_path: Path,
) -> None:
    system = replay(settings, write(tmp_path / "a.jsonl", ROWS), "run_id=r1")
    output = await system.respond(task("t01", "plain"))
    assert output.text == "  It is 2.\n"  # not stripped, not normalised
    assert output.model == "local:a"
    assert output.trace == {"replayed": True, "producer": {"model": "local:a",
                                                           "system": "vanilla",
                                                           "run_id": "r1"}}
    assert (await system.respond(task("t02", "plain"))).text == "Five."
    other = replay(settings, tmp_path / "a.jsonl", "run_id=r2")
    assert (await other.respond(task("t02", "plain"))).text == "It is 4."


async def test_a_pair_without_an_answer_is_skipped_by_the_runner_and_refused_if_asked(
    settings: Settings, tmp_path: Path,
) -> None:
    system = replay(settings, write(tmp_path / "a.jsonl", ROWS), "run_id=r2")
    assert isinstance(system, ScopedTemplates)
    first = next(iter(Tiny(6).samples()))
    assert not system.applies(first, "plain")
    with pytest.raises(NoRecordedAnswerError, match="t01/plain"):
        await system.respond(task("t01", "plain"))
    # Through the runner: 6 samples x 2 templates, of which r2 answers t02/plain and
    # t03/terse; the other 10 pairs are neither answered nor failed.
    llm = LLM(ScriptedBackend([], model_id="m"))
    with ResultsStore(tmp_path / "runs.sqlite") as store:
        summary = await evaluate(Tiny(6), system, llm=llm, store=store, scorers=[ExactScorer()],
                                 model_spec="scripted:m", templates=["plain", "terse"])
        results = store.load_run(summary.info.run_id)
    assert (summary.items, summary.complete, summary.new_failures) == (2, 2, 0)
    assert sorted((i.sample_id, i.template, i.output, i.value) for i in results.items) == [
        ("t02", "plain", "It is 4.", 1.0), ("t03", "terse", "6", 1.0)]
    assert results.info.config["data_location"]["system"] == {
        "answers": str(tmp_path / "a.jsonl"), "filter": "run_id=r2"}


def test_identity_is_the_answers_content_not_the_file(settings: Settings,
                                                      tmp_path: Path) -> None:
    path = write(tmp_path / "one" / "a.jsonl", ROWS)
    first = run_id(replay(settings, path, "run_id=r1"))
    # Moved (another checkout, another name): the same run.
    moved = tmp_path / "elsewhere" / "deeper" / "b.jsonl"
    moved.parent.mkdir(parents=True)
    shutil.copy(path, moved)
    assert run_id(replay(settings, moved, "run_id=r1")) == first
    # Lines in another order, labels changed, another producer's line edited: the same run.
    edited = [ROWS[1], dict(ROWS[0], label="incorrect"), dict(ROWS[2], response="x"), ROWS[3]]
    assert run_id(replay(settings, write(tmp_path / "c.jsonl", edited), "run_id=r1")) == first
    # The same answers kept by another filter: the same run.
    assert run_id(replay(settings, path, "model=local:a,system=vanilla")) == first
    # One answer edited: a new run. Another producer's answers: another run.
    changed = [dict(ROWS[0], response="It is 2!"), *ROWS[1:]]
    assert run_id(replay(settings, write(tmp_path / "d.jsonl", changed), "run_id=r1")) != first
    assert run_id(replay(settings, path, "run_id=r2")) != first
    assert "a.jsonl" not in json.dumps(replay(settings, path, "run_id=r1").describe())


def test_two_answers_to_one_prompt_need_a_filter(settings: Settings, tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", ROWS)
    with pytest.raises(SystemSetupError, match=r"a.jsonl:3: t02/plain has another answer at "
                                               r"line 2") as info:
        replay(settings, path)
    assert "filter" in (info.value.hint or "")
    # The same text twice (one answer read from two runs) is one answer.
    same = write(tmp_path / "same.jsonl", [ROWS[0], dict(ROWS[0], run_id="r9")])
    assert len(replay(settings, same).answers) == 1


@pytest.mark.parametrize(("content", "options", "message"), [
    (None, {}, "needs option answers=PATH"),
    ("", {"filter": "nothing"}, "not FIELD=VALUE"),
    ('{"sample_id": "t01", "template": "plain"}\n', {}, r"x.jsonl:1: response is missing"),
    ('{"sample_id": "t01", "template": "plain", "response": "2"}\nnot json\n', {},
     r"x.jsonl:2: not JSON"),
    ('{"sample_id": "t01", "template": "plain", "response": "2"}\n', {"filter": "run_id=zz"},
     "no answer in .* matches filter run_id=zz"),
    (None, {"answers": "missing.jsonl"}, "no answers file"),
    ("", {"k": "3"}, "has no option 'k'"),
])
def test_bad_answers_or_options_stop_before_anything_runs(
    settings: Settings, tmp_path: Path, content: str | None, options: dict[str, str],
    message: str,
) -> None:
    given = dict(options)
    if content is not None:
        (tmp_path / "x.jsonl").write_text(content, encoding="utf-8")
        given.setdefault("answers", str(tmp_path / "x.jsonl"))
    elif "answers" in given:
        given["answers"] = str(tmp_path / given["answers"])
    llm = LLM(ScriptedBackend([], model_id="m"))
    with pytest.raises(SystemSetupError, match=message):
        load_system("replay", llm, settings, given)


BOTH = {"answer1_given": True, "answer2_given": True, "conflict_acknowledged": True,
        "one_preferred": False, "no_conflict_stated": False}
FIRST_ONLY = {"answer1_given": True, "answer2_given": False, "conflict_acknowledged": False,
              "one_preferred": False, "no_conflict_stated": False}


def _judge(messages: Sequence[Message]) -> str:
    """A judge that finds both answers only where the response carries a marker."""
    return json.dumps(BOTH if "MARKED" in messages[-1].content else FIRST_ONLY)


async def test_a_replayed_run_and_runs_agree_measure_a_judge_end_to_end(
    settings: Settings, shared_data: Path, tmp_path: Path,
) -> None:
    bench = WikiContradict.from_file(shared_data / "wikicontradict" / "wikicontradict.json")
    ids = [s.id for s in bench.samples()][:4]
    texts = ["MARKED: both passages, and they disagree.", "Only the first answer.",
             "Only the first answer, again.", "Something else entirely."]
    gold = ["correct", "correct", "partially_correct", "incorrect"]
    path = write(tmp_path / "labelled.jsonl", [
        {"sample_id": i, "template": "5", "response": t, "label": g, "labeller": "a test"}
        for i, t, g in zip(ids, texts, gold, strict=True)])
    system = replay(settings, path)
    backend = ScriptedBackend([_judge] * 4, model_id="judge")
    judge = LLM(backend)
    with ResultsStore(tmp_path / "runs.sqlite") as store:
        summary = await evaluate(bench, system, llm=judge, store=store,
                                 scorers=[JudgeScorer(judge)], model_spec="scripted:judge",
                                 judge=judge, judge_spec="scripted:judge", templates=["5"])
        run = store.load_run(summary.info.run_id)
    # 253 questions x template 5, of which the 4 answered ones are the run; 4 judge calls.
    assert (summary.items, summary.complete, len(backend.requests)) == (4, 4, 4)
    assert sorted(i.output for i in run.items) == sorted(texts)
    result = agree(run, read_labels(path), path, "wikicontradict-judge")
    # Template 5's rule: both answers + conflict -> correct; one answer -> partially_correct.
    # Judge: C, PC, PC, PC against labels C, C, PC, IC: 2 of 4 agree, p_o = 0.5.
    # Marginals: labels C 2/4, PC 1/4, IC 1/4; judge C 1/4, PC 3/4, IC 0.
    # p_e = 0.5 * 0.25 + 0.25 * 0.75 + 0.25 * 0 = 0.3125;
    # kappa = (0.5 - 0.3125) / (1 - 0.3125) = 0.1875 / 0.6875 = 3/11.
    assert result.n == 4
    assert result.accuracy == pytest.approx(0.5)
    assert result.kappa == pytest.approx(3 / 11)
    assert result.classes == ("correct", "incorrect", "partially_correct")
    assert result.matrix == ((1, 0, 1), (0, 0, 1), (0, 0, 1))
    assert result.labellers == ("a test",)
