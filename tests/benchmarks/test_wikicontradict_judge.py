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


def _verdict(a1: bool, a2: bool, conflict: bool, preferred: bool) -> str:
    return json.dumps({
        "answer1_given": a1, "answer2_given": a2,
        "conflict_acknowledged": conflict, "one_preferred": preferred,
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
    scores += [await scorer.score(one, Output(text=r)) for r in ("761.", "764.")]
    assert [(s.label, s.value) for s in scores] == [
        ("correct", 1.0),
        ("partially_correct", 0.5),
        ("partially_correct", 0.5),
        ("incorrect", 0.0),
        ("incorrect", 0.0),
        ("correct", 1.0),
        ("incorrect", 0.0),
    ]
    assert scores[0].explanation == (
        "answer1_given=true; answer2_given=true; conflict_acknowledged=true; one_preferred=false"
    )
    assert scores[0].data["mode"] == "both" and scores[0].data["judge_model"] == "scripted"
    assert scores[5].data["mode"] == "passage1" and scores[5].data["answer1_given"] is True

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


async def test_malformed_judge_output_is_an_error(
    tmp_path: Path, wikicontradict: WikiContradict
) -> None:
    # a reply outside the schema, and the one repair attempt fails too
    llm, backend = _judge(tmp_path, [
        json.dumps({"answer1_given": "yes", "answer2_given": True,
                    "conflict_acknowledged": True, "one_preferred": False}),
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
