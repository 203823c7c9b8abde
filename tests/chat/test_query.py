from __future__ import annotations

import datetime as dt

import pytest

from freshwiki.chat import ChatMessage
from freshwiki.chat._calls import TurnCalls
from freshwiki.chat.query import SCHEMA, heuristic_plan, is_chitchat, plan_query, time_intent_of
from tests.chat.fakes import js, scripted_llm

TODAY = dt.date(2024, 6, 1)


@pytest.mark.parametrize("text", ["hi", "Hello there!", "thanks a lot", "Thank you so much.",
                                  "good morning", "bye", "how are you?"])
def test_small_talk_is_recognised(text: str) -> None:
    assert is_chitchat(text)


@pytest.mark.parametrize("text", ["hi, who won Bigg Boss 17?", "thanks, and when did it end?",
                                  "Who is the current coach?", "hello " * 30])
def test_questions_are_not_small_talk(text: str) -> None:
    assert not is_chitchat(text)


@pytest.mark.parametrize(("text", "intent"), [
    ("Who won the league in 2019?", "year=2019"),
    ("Who is the coach now?", "recent"),
    ("What is the latest album?", "recent"),
    ("Who won last year?", "year=2023"),
    ("What happened this year?", "year=2024"),
    ("Who ruled between 1990 and 2000?", "none"),
    ("Who founded KickassTorrents?", "none"),
])
def test_time_intent_from_explicit_cues(text: str, intent: str) -> None:
    assert time_intent_of(text, TODAY) == intent


def test_heuristic_plan_uses_the_message_as_query() -> None:
    plan = heuristic_plan([ChatMessage("user", "Who won Bigg Boss 17 in 2024?")], TODAY)
    assert (plan.search, plan.query, plan.time_intent, plan.how) == (
        True, "Who won Bigg Boss 17 in 2024?", "year=2024", "heuristic")
    assert not heuristic_plan([ChatMessage("user", "thanks!")], TODAY).search


HISTORY = [ChatMessage("user", "Tell me about KickassTorrents."),
           ChatMessage("assistant", "KickassTorrents was a torrent directory [1]."),
           ChatMessage("user", "When did it go offline?")]


async def test_llm_plan_resolves_coreference_and_sees_the_conversation() -> None:
    llm, script = scripted_llm({"query": js(
        {"search": True, "query": "KickassTorrents offline date", "time": "none", "year": 0})})
    calls = TurnCalls(llm)
    plan = await plan_query(calls, HISTORY, TODAY, use_llm=True)
    assert (plan.search, plan.query, plan.time_intent, plan.how) == (
        True, "KickassTorrents offline date", "none", "llm")
    [call] = script.calls
    assert "User: Tell me about KickassTorrents." in call.user
    assert "Latest user message: When did it go offline?" in call.user
    assert "Today's date: 2024-06-01" in call.user
    assert "[1]" not in call.user  # old citation markers are stripped
    assert "{{" not in call.system and "2024" not in call.system  # fixed, cacheable
    [record] = calls.records
    assert record.stage == "query" and record.output.startswith('{"search"')


async def test_llm_time_intent_is_used_but_explicit_cues_win() -> None:
    llm, _ = scripted_llm({"query": [
        js({"search": True, "query": "KAT", "time": "year", "year": 2016}),
        js({"search": True, "query": "KAT", "time": "recent", "year": 0}),
        js({"search": True, "query": "KAT", "time": "year", "year": 9999}),
    ]})
    calls = TurnCalls(llm)
    assert (await plan_query(calls, HISTORY, TODAY, use_llm=True)).time_intent == "year=2016"
    in_2012 = [*HISTORY[:-1], ChatMessage("user", "And what did it do in 2012?")]
    assert (await plan_query(calls, in_2012, TODAY, use_llm=True)).time_intent == "year=2012"
    assert (await plan_query(calls, HISTORY, TODAY, use_llm=True)).time_intent == "none"


async def test_unusable_model_output_falls_back_to_heuristics() -> None:
    llm, script = scripted_llm({"query": ["not json", '{"search": "maybe"}']})
    calls = TurnCalls(llm)
    plan = await plan_query(calls, HISTORY, TODAY, use_llm=True)
    assert (plan.query, plan.how) == ("When did it go offline?", "fallback")
    assert len(script.calls) == 2  # the client's one repair round, then give up
    assert calls.records[0].error and calls.records[0].output == '{"search": "maybe"}'


async def test_heuristics_only_and_greetings_make_no_call() -> None:
    llm, script = scripted_llm({})
    calls = TurnCalls(llm)
    assert (await plan_query(calls, HISTORY, TODAY, use_llm=False)).how == "heuristic"
    hello = [ChatMessage("user", "hello!")]
    assert not (await plan_query(calls, hello, TODAY, use_llm=True)).search
    assert script.calls == []


def test_schema_requires_every_field() -> None:
    assert set(SCHEMA["required"]) == {"search", "query", "time", "year"}
