"""The LLM judge scorer against a scripted backend: what it sends, how it maps labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from freshwiki.benchmarks import Output, Task, load_scorer
from freshwiki.benchmarks.wikicontradict import (
    JUDGE_SCHEMA,
    JudgeScorer,
    WikiContradict,
    judge_messages,
)
from freshwiki.errors import FreshwikiError
from freshwiki.llm import LLM, CallLog, LLMOutputError, ResponseCache
from freshwiki.llm.backends.scripted import ScriptedBackend


def _judge(tmp_path: Path, steps: list[str]) -> tuple[LLM, ScriptedBackend]:
    backend = ScriptedBackend(steps)
    llm = LLM(backend, cache=ResponseCache(tmp_path / "c.sqlite"),
              call_log=CallLog(tmp_path / "l.sqlite"))
    return llm, backend


def _task(bench: WikiContradict, sample_id: str, template: str) -> Task:
    return bench.render(next(s for s in bench.samples() if s.id == sample_id), template)


def _verdict(a1: bool, a2: bool, conflict: bool, preferred: bool, none: bool = False) -> str:
    return json.dumps({
        "answer1_given": a1, "answer2_given": a2,
        "conflict_acknowledged": conflict, "one_preferred": preferred,
        "no_conflict_stated": none,
    })


async def test_checklists_become_labels_by_the_papers_rules(
    tmp_path: Path, wikicontradict: WikiContradict
) -> None:
    llm, backend = _judge(tmp_path, [
        _verdict(True, True, True, False),
        _verdict(True, True, True, True),
        _verdict(False, True, False, False),
        _verdict(True, True, False, False),
        _verdict(False, False, True, False),
        _verdict(True, False, False, False),  # template 2: passage 1's answer alone
        _verdict(False, True, False, False),  # template 2: the other passage's answer
        _verdict(True, True, False, False),  # template 2: both (no partial class there)
        _verdict(False, True, False, False),  # template 1: one gold answer only
        _verdict(True, True, True, False),  # 5.2: found and explained
        _verdict(False, False, True, False),  # 5.2: found, not explained
        _verdict(True, False, False, False, True),  # 5.4: says there is no conflict
        _verdict(True, True, True, False, True),  # 5.4: says so, then claims one anyway
    ])
    scorer = load_scorer("wikicontradict-judge", llm)
    assert isinstance(scorer, JudgeScorer) and scorer.name == "wikicontradict-judge"
    both = _task(wikicontradict, "wc-044-q1", "5")
    one = _task(wikicontradict, "wc-044-q1", "2")
    responses = [
        "The passages conflict: 761 or 764 survivors.",
        "761 or 764, but 764 is more reliable.",
        "764 survived.",
        "761 survivors and 764 survivors.",
        "The passages conflict.",
    ]
    scores = [await scorer.score(both, Output(text=r)) for r in responses]
    scores += [await scorer.score(one, Output(text=r)) for r in ("761.", "764.", "761 or 764.")]
    closed = _task(wikicontradict, "wc-044-q1", "1")
    scores.append(await scorer.score(closed, Output(text="764 people survived.")))
    find = _task(wikicontradict, "wc-044-q1", "5.2")
    scores += [await scorer.score(find, Output(text=r)) for r in (
        "Yes: passage 1 says 761 survived, passage 2 implies 764.", "Yes, they contradict.")]
    revised = _task(wikicontradict, "wc-034-q1", "5.4")
    scores += [await scorer.score(revised, Output(text=r)) for r in (
        "No contradiction: both give 2 March 1881.", "No; but passage 2 says 3 March.")]
    assert [(s.label, s.value) for s in scores] == [
        ("correct", 1.0),
        ("partially_correct", 0.0),
        ("partially_correct", 0.0),
        ("incorrect", 0.0),
        ("incorrect", 0.0),
        ("correct", 1.0),
        ("incorrect", 0.0),
        ("incorrect", 0.0),
        ("partially_correct", 0.0),
        ("correct", 1.0),
        ("incorrect", 0.0),
        ("correct", 1.0),
        ("incorrect", 0.0),
    ]
    assert scores[0].explanation == (
        "answer1_given=true; answer2_given=true; conflict_acknowledged=true; "
        "one_preferred=false; no_conflict_stated=false"
    )
    assert scores[0].data["rule"] == "both_answers" and scores[0].data["judge_model"] == "scripted"
    assert scores[5].data["rule"] == "one_answer" and scores[5].data["answer1_given"] is True
    assert [s.data["rule"] for s in scores[9:]] == ["detect", "detect", "no_conflict",
                                                    "no_conflict"]

    first = backend.requests[0]
    assert first.params.json_schema == JUDGE_SCHEMA
    assert first.params.temperature == 0.0
    # the instructions and examples are one fixed system message, whatever the item or
    # template; the item comes last
    assert first.messages[0].role == "system"
    assert {r.messages[0].content for r in backend.requests} == {first.messages[0].content}
    assert "conflict_acknowledged" in first.messages[0].content
    assert first.messages[-1].content == (
        "Question: How many survivors there were after the Sinking of the RMS Lusitania?\n"
        "Answer 1: 761\n"
        "Answer 2: 764\n"
        "Response: The passages conflict: 761 or 764 survivors."
    )
    # on revised passages the judge sees the kept answer first and the dropped one second
    assert backend.requests[-1].messages[-1].content.startswith(
        "Question: What day did Karl Weyprecht die?\nAnswer 1: 2 March 1881\n"
        "Answer 2: 3 March 1881\n")


async def test_malformed_judge_output_is_an_error(
    tmp_path: Path, wikicontradict: WikiContradict
) -> None:
    # a reply outside the schema, and the one repair attempt fails too
    llm, backend = _judge(tmp_path, [
        json.dumps({"answer1_given": "yes", "answer2_given": True,
                    "conflict_acknowledged": True, "one_preferred": False,
                    "no_conflict_stated": False}),
        "I think it is correct.",
    ])
    with pytest.raises(LLMOutputError):
        await JudgeScorer(llm).score(
            _task(wikicontradict, "wc-044-q1", "4"), Output(text="761 survivors.")
        )
    assert len(backend.requests) == 2


async def test_one_bad_reply_is_repaired(tmp_path: Path, wikicontradict: WikiContradict) -> None:
    llm, _ = _judge(tmp_path, ["label: correct", _verdict(True, True, True, False)])
    score = await JudgeScorer(llm).score(
        _task(wikicontradict, "wc-044-q1", "4"), Output(text="761 or 764; they conflict.")
    )
    assert score.label == "correct" and score.data["judge_repaired"] is True


def test_empty_response_is_shown_as_such() -> None:
    messages = judge_messages("q?", "a", "b", "  ")
    assert messages[-1].content.endswith("Response: (empty response)")


def test_judge_scorer_needs_a_judge() -> None:
    with pytest.raises(FreshwikiError, match="needs a judge model") as err:
        load_scorer("wikicontradict-judge", None)
    assert "wikicontradict-match" in (err.value.hint or "")


def test_benchmark_adds_the_judge_when_given(
    tmp_path: Path, wikicontradict: WikiContradict
) -> None:
    llm, _ = _judge(tmp_path, [])
    assert [s.name for s in wikicontradict.scorers(llm)] == [
        "wikicontradict-match", "wikicontradict-judge",
    ]


def test_examples_do_not_teach_answer_1_by_position() -> None:
    # A judge whose one-answer examples all gave answer 1 reported bare answer-2 replies as
    # answer 1 on a real run; the examples must show each answer alone equally often.
    system = judge_messages("q?", "a", "b", "r")[0].content
    verdicts = [json.loads(line) for line in system.splitlines() if line.startswith("{")]
    assert len(verdicts) >= 8
    alone = [(v["answer1_given"], v["answer2_given"]) for v in verdicts
             if v["answer1_given"] != v["answer2_given"]]
    assert alone.count((True, False)) == alone.count((False, True)) >= 2
