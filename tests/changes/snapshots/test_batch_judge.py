"""The batched NLI judge with the scripted backend: batching, order, and every fallback.

The scripted replies answer from the prompt they are shown: each NEW sentence has its own
relation (``ANSWERS``), so a reply or a code path that puts one pair's answer on another
pair is caught by the relation it returns, not only by a count.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from freshwiki.changes.snapshots import (
    Aligner,
    BatchLLMJudge,
    Relation,
    Shape,
)
from freshwiki.config import Settings, load_settings
from freshwiki.llm import Message, open_llm
from freshwiki.llm.backends.scripted import ScriptedBackend, ScriptedCall
from tests.changes.snapshots.helpers import FakeEncoder, snap

PAIRS: list[tuple[str, str]] = [
    ("The bridge opened in 1901.", "The bridge opened in 1910."),
    ("The village has a bakery.", "The village has a bakery and a school."),
    ("The river is long.", "The river is very long."),
    ("The mayor is Ann Lee.", "The mayor is Bo Park."),
    ("The castle is ruined.", "The castle lies in ruins."),
]
ANSWERS: dict[str, Relation] = {
    "The bridge opened in 1910.": "contradiction",
    "The village has a bakery and a school.": "neutral",
    "The river is very long.": "neutral",
    "The mayor is Bo Park.": "contradiction",
    "The castle lies in ruins.": "entailment",
}
EXPECTED = [ANSWERS[new] for _, new in PAIRS]

_PAIR = re.compile(r"^Pair (\d+)\nOLD: .*\nNEW: (.*)$", re.MULTILINE)


def shown(call: ScriptedCall | Sequence[Message]) -> list[tuple[int, str]]:
    """The (number, NEW sentence) pairs a batched prompt shows, in prompt order."""
    messages = call.messages if isinstance(call, ScriptedCall) else call
    return [(int(n), new) for n, new in _PAIR.findall(messages[-1].content)]


def batch_reply(messages: Sequence[Message]) -> str:
    """A correct batched answer: each shown pair's own relation, under its own number."""
    return json.dumps({"answers": [{"pair": n, "relation": ANSWERS[new]}
                                   for n, new in shown(messages)]})


def single_reply(messages: Sequence[Message]) -> str:
    """A correct one-pair answer (LLMJudge's prompt and schema)."""
    new = messages[-1].content.split("NEW: ", 1)[1].strip()
    return json.dumps({"reason": "scripted", "relation": ANSWERS[new]})


def judge_with(settings: Settings, steps: Sequence[str | Callable[[Sequence[Message]], str]],
               **kwargs: object) -> tuple[BatchLLMJudge, ScriptedBackend]:
    """A judge on a scripted backend; numbered replies unless ``shape`` says otherwise."""
    backend = ScriptedBackend(steps, concurrency=1)
    llm = open_llm(settings=settings, backend=backend, cache=False)
    kwargs.setdefault("shape", "numbered")
    return BatchLLMJudge(llm, **kwargs), backend  # type: ignore[arg-type]


def is_single(call: ScriptedCall) -> bool:
    return call.params.schema_name == "nli"


# -- batching and order --------------------------------------------------------------------------

async def test_pairs_go_in_near_equal_batches_and_come_back_in_input_order(
        settings: Settings) -> None:
    judge, backend = judge_with(settings, [batch_reply] * 3, batch_size=2)
    assert await judge.relations(PAIRS, title="Riverton") == EXPECTED
    # 5 pairs at most 2 per call: 3 calls of 2, 2 and 1 pairs, each numbered from 1.
    assert [shown(call) for call in backend.requests] == [
        [(1, PAIRS[0][1]), (2, PAIRS[1][1])],
        [(1, PAIRS[2][1]), (2, PAIRS[3][1])],
        [(1, PAIRS[4][1])],
    ]
    first = backend.requests[0]
    assert "Article: Riverton" in first.messages[-1].content
    assert "OLD: The bridge opened in 1901." in first.messages[-1].content
    assert (judge.counts.pairs, judge.counts.calls, judge.counts.requests) == (5, 3, 3)
    assert judge.counts.reasked == judge.counts.unanswered == 0


async def test_nine_pairs_at_eight_are_asked_as_five_and_four(settings: Settings) -> None:
    pairs = [(f"Old {k}.", PAIRS[k % 5][1]) for k in range(9)]
    judge, backend = judge_with(settings, [batch_reply] * 2, batch_size=8)
    assert await judge.relations(pairs) == [ANSWERS[new] for _, new in pairs]
    assert [len(shown(call)) for call in backend.requests] == [5, 4]


async def test_the_schema_pins_one_numbered_result_per_pair(settings: Settings) -> None:
    judge, backend = judge_with(settings, [batch_reply], batch_size=8)
    await judge.relations(PAIRS[:3])
    schema = backend.requests[0].params.json_schema
    assert schema is not None
    answers = schema["properties"]["answers"]
    assert (answers["minItems"], answers["maxItems"], answers["items"]) == (3, 3, False)
    assert [item["properties"]["pair"] for item in answers["prefixItems"]] == [
        {"const": 1}, {"const": 2}, {"const": 3}]
    assert answers["prefixItems"][0]["required"] == ["pair", "relation"]  # no reason asked
    assert backend.requests[0].params.max_tokens >= 3 * 16  # room for three results


async def test_reasons_are_asked_for_only_when_wanted(settings: Settings) -> None:
    def reply(messages: Sequence[Message]) -> str:
        return json.dumps({"answers": [{"pair": n, "reason": "short", "relation": ANSWERS[new]}
                                       for n, new in shown(messages)]})

    judge, backend = judge_with(settings, [reply], batch_size=8, reason=True)
    assert await judge.relations(PAIRS[:2]) == EXPECTED[:2]
    schema = backend.requests[0].params.json_schema
    assert schema is not None
    assert schema["properties"]["answers"]["prefixItems"][0]["required"] == [
        "pair", "reason", "relation"]
    assert "a reason of a few words" in backend.requests[0].messages[0].content


async def test_batch_size_one_is_the_one_pair_judge(settings: Settings) -> None:
    judge, backend = judge_with(settings, [single_reply] * 3, batch_size=1)
    assert await judge.relations(PAIRS[:3]) == EXPECTED[:3]
    assert all(is_single(call) for call in backend.requests) and len(backend.requests) == 3
    assert judge.counts.calls == 3


def test_batch_size_below_one_is_refused(settings: Settings) -> None:
    llm = open_llm(settings=settings, backend=ScriptedBackend([]), cache=False)
    with pytest.raises(ValueError, match="at least 1"):
        BatchLLMJudge(llm, batch_size=0)


# -- partial and invalid replies -----------------------------------------------------------------

async def test_a_missing_result_is_reasked_alone_and_numbers_not_positions_count(
        settings: Settings) -> None:
    # Pairs 3 and 1 answered, in that order; pair 2 left out. The repair round-trip (the
    # client's, for a reply that does not fit the schema) gets the same reply.
    partial = json.dumps({"answers": [
        {"pair": 3, "relation": ANSWERS[PAIRS[2][1]]},
        {"pair": 1, "relation": ANSWERS[PAIRS[0][1]]}]})
    judge, backend = judge_with(settings, [partial, partial, single_reply], batch_size=8)
    assert await judge.relations(PAIRS[:3]) == EXPECTED[:3]
    assert [is_single(call) for call in backend.requests] == [False, False, True]
    assert "NEW: " + PAIRS[1][1] in backend.requests[2].messages[-1].content
    assert (judge.counts.calls, judge.counts.repairs, judge.counts.requests) == (2, 1, 3)
    assert judge.counts.reasked == 1 and judge.counts.unanswered == 0


async def test_bad_numbers_unknown_relations_and_double_answers_are_not_used(
        settings: Settings) -> None:
    # n = 3. Pair 1 is answered twice, differently; "2" is a string; 0 and 4 do not exist;
    # pair 2's relation is unknown. Only pair 3's answer is usable.
    messy = json.dumps({"answers": [
        {"pair": 1, "relation": "entailment"}, {"pair": 1, "relation": "contradiction"},
        {"pair": "2", "relation": "neutral"}, {"pair": 0, "relation": "neutral"},
        {"pair": 4, "relation": "neutral"}, {"pair": 2, "relation": "maybe"},
        {"pair": 3, "relation": ANSWERS[PAIRS[2][1]]}]})
    judge, backend = judge_with(settings, [messy, messy, single_reply, single_reply],
                                batch_size=8)
    assert await judge.relations(PAIRS[:3]) == EXPECTED[:3]
    # Two left of three: re-asked in batches of one (half of three), i.e. one by one.
    assert [is_single(call) for call in backend.requests] == [False, False, True, True]
    asked_again = {call.messages[-1].content.split("NEW: ", 1)[1]
                   for call in backend.requests[2:]}
    assert asked_again == {PAIRS[0][1], PAIRS[1][1]}
    assert judge.counts.reasked == 2


async def test_same_answer_twice_for_a_pair_is_still_its_answer(settings: Settings) -> None:
    twice = json.dumps({"answers": [
        {"pair": 1, "relation": ANSWERS[PAIRS[0][1]]},
        {"pair": 1, "relation": ANSWERS[PAIRS[0][1]]},
        {"pair": 2, "relation": ANSWERS[PAIRS[1][1]]}]})
    judge, backend = judge_with(settings, [twice, twice], batch_size=8)
    assert await judge.relations(PAIRS[:2]) == EXPECTED[:2]
    assert len(backend.requests) == 2  # the batch and its repair; nothing re-asked


async def test_unusable_output_is_reasked_in_halves(settings: Settings) -> None:
    judge, backend = judge_with(
        settings, ["I think they agree.", "Sorry, still prose.", batch_reply, batch_reply],
        batch_size=4)
    assert await judge.relations(PAIRS[:4]) == EXPECTED[:4]
    assert [len(shown(call)) for call in backend.requests[2:]] == [2, 2]
    assert [shown(call) for call in backend.requests[2:]] == [
        [(1, PAIRS[0][1]), (2, PAIRS[1][1])], [(1, PAIRS[2][1]), (2, PAIRS[3][1])]]
    assert judge.counts.reasked == 4 and judge.counts.repairs == 1


async def test_a_reply_cut_at_the_token_cap_keeps_its_complete_results(
        settings: Settings) -> None:
    cut = ('{"answers": [{"pair": 1, "relation": "' + ANSWERS[PAIRS[0][1]]
           + '"}, {"pair": 2, "relation": "neu')
    judge, backend = judge_with(settings, [cut, cut, single_reply], batch_size=8)
    assert await judge.relations(PAIRS[:2]) == EXPECTED[:2]
    assert [is_single(call) for call in backend.requests] == [False, False, True]
    assert "NEW: " + PAIRS[1][1] in backend.requests[2].messages[-1].content


async def test_a_pair_nothing_answers_is_none(settings: Settings) -> None:
    # Batch of two and its repair, then each pair alone (one-pair prompt) and its repair.
    judge, backend = judge_with(settings, ["not JSON"] * 6, batch_size=8)
    assert await judge.relations(PAIRS[:2]) == [None, None]
    assert [is_single(call) for call in backend.requests] == [False] * 2 + [True] * 4
    assert judge.counts.unanswered == 2 and judge.counts.requests == 6


# -- the shorter reply shapes ----------------------------------------------------------------

def keyed_reply(messages: Sequence[Message]) -> str:
    return json.dumps({str(n): ANSWERS[new] for n, new in shown(messages)})


def positional_reply(messages: Sequence[Message]) -> str:
    return json.dumps({"relations": [ANSWERS[new] for _, new in shown(messages)]})


async def test_keyed_replies_give_each_pair_the_answer_under_its_number(
        settings: Settings) -> None:
    judge, backend = judge_with(settings, [keyed_reply] * 2, batch_size=3, shape="keyed")
    assert await judge.relations(PAIRS) == EXPECTED
    schema = backend.requests[0].params.json_schema
    assert schema is not None and schema["required"] == ["1", "2", "3"]
    assert schema["properties"]["2"] == {"enum": ["entailment", "neutral", "contradiction"]}
    assert "keys are the pair numbers" in backend.requests[0].messages[0].content


async def test_a_keyed_reply_missing_a_number_has_that_pair_reasked(settings: Settings) -> None:
    # Keys out of order, "2" missing, "4" out of range: pairs 1 and 3 keep their answers.
    partial = json.dumps({"3": ANSWERS[PAIRS[2][1]], "4": "neutral",
                          "1": ANSWERS[PAIRS[0][1]]})
    judge, backend = judge_with(settings, [partial, partial, single_reply], batch_size=8,
                                shape="keyed")
    assert await judge.relations(PAIRS[:3]) == EXPECTED[:3]
    assert [is_single(call) for call in backend.requests] == [False, False, True]
    assert "NEW: " + PAIRS[1][1] in backend.requests[2].messages[-1].content


async def test_a_cut_keyed_reply_keeps_its_complete_answers(settings: Settings) -> None:
    cut = '{"1": "' + ANSWERS[PAIRS[0][1]] + '", "2": "neu'
    judge, backend = judge_with(settings, [cut, cut, single_reply], batch_size=8,
                                shape="keyed")
    assert await judge.relations(PAIRS[:2]) == EXPECTED[:2]
    assert [is_single(call) for call in backend.requests] == [False, False, True]


async def test_positional_replies_give_answers_in_pair_order(settings: Settings) -> None:
    judge, backend = judge_with(settings, [positional_reply] * 2, batch_size=3,
                                shape="positional")
    assert await judge.relations(PAIRS) == EXPECTED
    schema = backend.requests[0].params.json_schema
    assert schema is not None
    listed = schema["properties"]["relations"]
    assert (listed["minItems"], listed["maxItems"], len(listed["prefixItems"])) == (3, 3, 3)
    assert "the list of relations" in backend.requests[0].messages[0].content


async def test_a_positional_list_of_the_wrong_length_is_not_used_at_all(
        settings: Settings) -> None:
    # Three answers for four pairs: which one is missing cannot be known, so none is used
    # and the four pairs are asked again in halves.
    short = json.dumps({"relations": [ANSWERS[PAIRS[0][1]], ANSWERS[PAIRS[2][1]],
                                      ANSWERS[PAIRS[3][1]]]})
    judge, backend = judge_with(settings, [short, short, positional_reply, positional_reply],
                                batch_size=4, shape="positional")
    assert await judge.relations(PAIRS[:4]) == EXPECTED[:4]
    # The batch of four, the client's repair request, then two halves.
    assert len(backend.requests) == 4
    assert [shown(call) for call in backend.requests[2:]] == [
        [(1, PAIRS[0][1]), (2, PAIRS[1][1])], [(1, PAIRS[2][1]), (2, PAIRS[3][1])]]
    assert judge.counts.reasked == 4


async def test_a_cut_positional_list_keeps_the_answers_before_the_cut(
        settings: Settings) -> None:
    cut = ('{"relations": ["' + ANSWERS[PAIRS[0][1]] + '", "' + ANSWERS[PAIRS[1][1]]
           + '", "contr')
    judge, backend = judge_with(settings, [cut, cut, single_reply], batch_size=8,
                                shape="positional")
    assert await judge.relations(PAIRS[:3]) == EXPECTED[:3]
    assert [is_single(call) for call in backend.requests] == [False, False, True]
    assert "NEW: " + PAIRS[2][1] in backend.requests[2].messages[-1].content


def test_unknown_shapes_and_reasons_without_room_are_refused(settings: Settings) -> None:
    llm = open_llm(settings=settings, backend=ScriptedBackend([]), cache=False)
    with pytest.raises(ValueError, match="shape must be one of"):
        BatchLLMJudge(llm, shape="table")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="numbered shape"):
        BatchLLMJudge(llm, shape="keyed", reason=True)


# -- through the aligner -----------------------------------------------------------------------

LLM_PAIRS = [
    ("The school opened in a former mill.", "The school moved into a former mill.", 0.75),
    ("The station closed.", "A new station was planned.", 0.65),
    ("The lake is shallow.", "The lake is popular with anglers.", 0.55),
]
ALIGNER_ANSWERS = {
    "The school moved into a former mill.": "contradiction",
    "A new station was planned.": "entailment",
    "The lake is popular with anglers.": "contradiction",
}


def aligner_reply(messages: Sequence[Message]) -> str:
    """The default shape's reply: the relations in pair order."""
    return json.dumps({"relations": [ALIGNER_ANSWERS[new] for _, new in shown(messages)]})


def test_the_aligner_sends_an_articles_pending_pairs_in_one_call(settings: Settings) -> None:
    backend = ScriptedBackend([aligner_reply])
    llm = open_llm(settings=settings, backend=backend, cache=False)
    old = snap(["Anchor.", *(o for o, _, _ in LLM_PAIRS)], title="Springfield")
    new = snap(["Anchor.", *(n for _, n, _ in LLM_PAIRS)], title="Springfield")
    judge = BatchLLMJudge(llm)  # the defaults: 16 pairs a call, positional replies
    result = Aligner(FakeEncoder(LLM_PAIRS), judge).align(old, new)
    # The same labels as with one call per pair (test_align.test_llm_decides_the_ambiguous_
    # pairs), from one call.
    assert [(lab.label, lab.step, lab.relation) for lab in result.new_labels[1:]] == [
        ("changed", "llm", "contradiction"),
        ("unchanged", "llm", "entailment"),
        ("new", "llm", "contradiction"),
    ]
    assert len(backend.requests) == 1 and judge.counts.calls == 1
    assert result.llm_calls == 3  # sentence pairs checked
    assert "Article: Springfield" in backend.requests[0].messages[-1].content


def test_the_aligner_keeps_an_unanswered_pair_flagged(settings: Settings) -> None:
    (a, b, _), (c, d, _) = LLM_PAIRS[:2]
    # Pair 1 answered; pair 2 never: the list is cut after pair 1's answer, and alone
    # pair 2 stays prose.
    partial = '{"relations": ["contradiction", "ent'

    backend = ScriptedBackend([partial, partial, "no idea", "still no idea"])
    llm = open_llm(settings=settings, backend=backend, cache=False)
    result = Aligner(FakeEncoder(LLM_PAIRS[:2]), BatchLLMJudge(llm)).align(
        snap(["Anchor.", a, c]), snap(["Anchor.", b, d]))
    answered, unanswered = result.new_labels[1:]
    assert (answered.label, answered.step, answered.ambiguous) == ("changed", "llm", False)
    assert (unanswered.label, unanswered.step, unanswered.ambiguous) == (
        "new", "fallback", True)
    assert "unusable" in unanswered.reason
    assert len(backend.requests) == 4


# -- end to end ------------------------------------------------------------------------------

@pytest.mark.e2e
@pytest.mark.parametrize("shape", ["numbered", "keyed", "positional"])
async def test_a_real_local_model_answers_every_pair_of_a_batch_in_one_call(
        smollm2_path: Path, shape: Shape) -> None:
    # Plumbing, not judgement (SmolLM2-135M): llama.cpp turns each shape's schema into a
    # grammar, so one call gives one usable answer per pair, with no repair.
    settings = load_settings({"n_threads": 1}).settings
    llm = open_llm("local:smollm2-135m", settings=settings, cache=False)
    judge = BatchLLMJudge(llm, batch_size=8, shape=shape)
    try:
        found = await judge.relations(PAIRS[:3], title="Riverton")
    finally:
        await llm.aclose()
    assert len(found) == 3 and all(r in ("entailment", "neutral", "contradiction")
                                   for r in found)
    assert (judge.counts.calls, judge.counts.repairs, judge.counts.reasked) == (1, 0, 0)
    assert 0 < judge.counts.completion_tokens <= 16 + 24 * 3
