"""The LLM judge scorer against a scripted backend: what it sends, how it maps labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from freshwiki.benchmarks import Output, Task, load_scorer
from freshwiki.benchmarks.wikicontradict import (
    JudgeScorer,
    WikiContradict,
    answer_choices,
    judge_messages,
    judge_schema,
    read_choice,
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


LUSITANIA = ("761", "764")
WEYPRECHT = ("2 March 1881", "3 March 1881")


def _verdict(a1: bool, a2: bool, conflict: bool, preferred: bool, none: bool = False,
             answers: tuple[str, str] = LUSITANIA) -> str:
    choice = {(True, False): answers[0], (False, True): answers[1],
              (True, True): "both answers", (False, False): "neither answer"}[(a1, a2)]
    return json.dumps({
        "answer_given": choice,
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
        _verdict(True, False, False, False, True, WEYPRECHT),  # 5.4: says there is no conflict
        _verdict(True, True, True, False, True, WEYPRECHT),  # 5.4: says so, claims one anyway
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
    assert scores[5].data["answer_given"] == "761" and scores[6].data["answer2_given"] is True
    assert [s.data["rule"] for s in scores[9:]] == ["detect", "detect", "no_conflict",
                                                    "no_conflict"]

    first = backend.requests[0]
    # the answer is one choice among the two answers' own words, both or neither
    assert first.params.json_schema == judge_schema("761", "764")
    assert first.params.json_schema["properties"]["answer_given"]["enum"] == [
        "761", "764", "both answers", "neither answer"]
    assert backend.requests[-1].params.json_schema["properties"]["answer_given"]["enum"][:2] == [
        "2 March 1881", "3 March 1881"]
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
        json.dumps({"answer_given": "763", "conflict_acknowledged": True,
                    "one_preferred": False, "no_conflict_stated": False}),
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


def test_answer_choices_stay_distinct_and_map_back() -> None:
    assert answer_choices(" 1902\n", "1904") == ("1902", "1904", "both answers", "neither answer")
    assert read_choice("1904", "1902", "1904") == (False, True)
    assert read_choice("both answers", "1902", "1904") == (True, True)
    assert read_choice("neither answer", "1902", "1904") == (False, False)
    # answers that read alike (or like "both answers") are numbered, so no choice is ambiguous
    assert answer_choices("Yes", "yes")[:2] == ("1: Yes", "2: yes")
    assert answer_choices("Both answers", "No")[:2] == ("1: Both answers", "2: No")
    assert read_choice("2: yes", "Yes", "yes") == (False, True)
    with pytest.raises(FreshwikiError, match="none of"):
        read_choice("1903", "1902", "1904")


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
