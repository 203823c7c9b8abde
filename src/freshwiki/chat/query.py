"""Stage 1: does the turn need retrieval, with which query, with which time intent?

Two ways to decide, so the checked mode can avoid an LLM call where one adds nothing:

- **Heuristics** (no call). Greetings, thanks and goodbyes need no retrieval. Otherwise the
  query is the user's message itself, which is what a search box gets from a person and
  what the hybrid index is tuned for; the time intent comes from explicit cues: a year
  ("in 2019" → ``year=2019``), a relative year ("last year" → today's year - 1) or a
  recency word ("current", "now", "latest"... → ``recent``).
- **One small JSON call** (``query``): the model sees the recent conversation and rewrites
  the message into a stand-alone query, resolving co-references ("when did *it* close?"
  after a turn about a shop) and judging whether Wikipedia is needed at all. Explicit cues
  found by the heuristics still win over the model's time intent: they are certain, the
  model's reading of them is not.

``wikichat`` always asks the model (except for greetings); the checked mode only asks it
for follow-ups, where co-references make the raw message a poor query.

**A follow-up that names nothing keeps the conversation's subject** (:func:`carry_subject`).
The small model leaves definite descriptions as they are: after a first turn on the 2023
International Championship, "What was the main event of the tournament?" became the query
"main event of the tournament", which found a chess tournament and tennis tours; four turns
in a row were refused naming them, or "supported" by a doubles draw (held-out WikiChat topic
21). When the stand-alone query names nothing and does not hold the words of the subject the
user named last, that subject is added to it, in brackets, so the search and the checks both
read it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from freshwiki.chat._calls import TurnCalls, messages_for, prompt
from freshwiki.chat._evidence import content_words, strip_markers, transcript
from freshwiki.chat._types import ChatMessage
from freshwiki.chat.coverage import subject_units

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "search": {"type": "boolean"},
        "query": {"type": "string", "maxLength": 200},
        "time": {"enum": ["none", "recent", "year"]},
        "year": {"type": "integer"},
    },
    "required": ["search", "query", "time", "year"],
    "additionalProperties": False,
}

_CHITCHAT = re.compile(
    r"^\W*(?:(?:hi|hello|hey|hiya|howdy|yo|greetings|good (?:morning|afternoon|evening|night)"
    r"|thanks|thank you|thank you (?:so|very) much|thx|cheers|ok(?:ay)?|cool|great|nice|"
    r"awesome|bye|goodbye|see you|see ya|how are you(?: doing)?(?: today)?|who are you|"
    r"what can you do)(?:\s+(?:there|again|a lot|everyone|all))?[\s,]*)+\W*$",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_RECENT = re.compile(
    r"\b(?:now|current(?:ly)?|latest|recent(?:ly)?|today|nowadays|as of|these days|"
    r"at (?:the )?(?:moment|present)|right now|still|newest|most recent|so far|yet)\b",
    re.IGNORECASE,
)
_RELATIVE_YEAR = re.compile(r"\b(this|last|next) year\b", re.IGNORECASE)


@dataclass(frozen=True)
class QueryPlan:
    """What stage 1 decided.

    Attributes:
        search: Whether to retrieve at all.
        query: The stand-alone search query.
        time_intent: ``none``, ``recent`` or ``year=YYYY`` (the index's time intents).
        how: ``heuristic``, ``llm``, or ``fallback`` (the model's output was unusable).
        carried: The conversation's subject, when it was added to a query that named
            nothing (:func:`carry_subject`), else empty.
    """

    search: bool
    query: str
    time_intent: str = "none"
    how: Literal["heuristic", "llm", "fallback"] = "heuristic"
    carried: str = ""


def is_chitchat(text: str) -> bool:
    """Whether ``text`` is only a greeting, thanks, goodbye or similar small talk."""
    return bool(_CHITCHAT.match(text.strip())) if len(text) <= 80 else False


def time_intent_of(text: str, today: dt.date) -> str:
    """The time intent explicit in ``text``, or ``none``.

    One distinct year wins; several years ("between 2010 and 2015") are a range, which the
    index has no intent for, so they give ``none``.
    """
    relative = _RELATIVE_YEAR.search(text)
    if relative:
        offset = {"this": 0, "last": -1, "next": 1}[relative.group(1).lower()]
        return f"year={today.year + offset}"
    years = set(_YEAR.findall(text))
    if len(years) == 1:
        return f"year={years.pop()}"
    if years:
        return "none"
    return "recent" if _RECENT.search(text) else "none"


def heuristic_plan(history: Sequence[ChatMessage], today: dt.date) -> QueryPlan:
    """Stage 1 without a model call (see the module docstring)."""
    message = history[-1].content.strip()
    if is_chitchat(message):
        return QueryPlan(search=False, query="", time_intent="none")
    return QueryPlan(search=True, query=message, time_intent=time_intent_of(message, today))


async def plan_query(
    calls: TurnCalls, history: Sequence[ChatMessage], today: dt.date, *, use_llm: bool
) -> QueryPlan:
    """Decide retrieval for the last user message of ``history``.

    Args:
        calls: The turn's call recorder.
        history: The conversation, ending with the user's message.
        today: Today's date, to resolve "last year" and to tell the model.
        use_llm: Ask the model (else heuristics only; greetings never ask it).
    """
    fallback = heuristic_plan(history, today)
    if not fallback.search:
        return fallback
    if not use_llm:
        return carry_subject(fallback, history)
    message = history[-1].content.strip()
    parsed = await calls.json(
        "query",
        messages_for(
            prompt("query_system"),
            prompt("query_user", today=today.isoformat(),
                   conversation=transcript(history[:-1]), message=message),
        ),
        SCHEMA,
        max_tokens=120,
    )
    if not isinstance(parsed, dict):
        return carry_subject(QueryPlan(fallback.search, fallback.query, fallback.time_intent,
                                       how="fallback"), history)
    query = " ".join(str(parsed["query"]).split()) or message
    intent = time_intent_of(message, today)
    if intent == "none" and not _YEAR.search(message):
        intent = _model_intent(parsed, today)
    return carry_subject(QueryPlan(search=bool(parsed["search"]), query=query,
                                   time_intent=intent, how="llm"), history)


_NOT_A_NAME = re.compile(r"I(?:['’](?:m|ve|d|ll))?|Tell|Give|Show|Explain|Describe|List|Name|"
                         r"Please|Let|Can|Could|Would|Do|Does|Did|Ok(?:ay)?|Thanks|Sure")
"""Capitalised openers of a user message that name nothing: "I'm curious", "Tell me about"."""
_JOINER = re.compile(r"^(?:\s*(?:,|&|and|the|of|de|von)\s*)*$|^\s+$", re.IGNORECASE)


def conversation_subject(history: Sequence[ChatMessage]) -> str:
    """The subject the user named last before the latest message, or ``""``.

    The names of the latest earlier user message that names any; names standing next to
    each other, or joined by "and the", "of", a comma, count as one ("Jerusalem and the
    Middle East Church Association", "Kamorta, Nancowry"), and the first such group is the
    subject ("the Greenfield Ministry's role in the 5th Alberta Legislature": the ministry).
    A possessive ending is dropped. User messages only: the assistant's replies name
    everything they mention, not what the conversation is about.
    """
    for message in reversed(history[:-1]):
        if message.role != "user":
            continue
        text = strip_markers(message.content)
        located: list[tuple[int, int]] = []
        for unit in subject_units(text):
            if _NOT_A_NAME.fullmatch(unit):
                continue  # "Tell me about ...": a capitalised word, not a name
            at = text.find(unit)
            if at >= 0:
                located.append((at, at + len(unit)))
        if not located:
            continue
        located.sort()
        start, end = located[0]
        for u_start, u_end in located[1:]:
            if u_start <= end or _JOINER.match(text[end:u_start]):
                end = max(end, u_end)
            else:
                break
        return re.sub(r"['’]s$", "", text[start:end].strip())
    return ""


def carry_subject(plan: QueryPlan, history: Sequence[ChatMessage]) -> QueryPlan:
    """``plan`` with the conversation's subject added when its query names nothing.

    Only for a follow-up that searches, whose query has no name, date or edition of its own
    (:func:`~freshwiki.chat.coverage.subject_units`) and lacks a word of the subject
    ("pyrophosphate in pyrosequencing" already holds the subject "Pyrosequencing", in lower
    case): see the module docstring for why.
    """
    if len(history) < 2 or not plan.search or subject_units(plan.query):
        return plan
    subject = conversation_subject(history)
    if not subject:
        return plan
    need = set(content_words(subject))
    if not need or need <= set(content_words(plan.query)):
        return plan
    return replace(plan, query=f"{plan.query} ({subject})", carried=subject)


def _model_intent(parsed: dict[str, Any], today: dt.date) -> str:
    if parsed["time"] == "recent":
        return "recent"
    year = parsed["year"]
    if parsed["time"] == "year" and isinstance(year, int) and 1000 <= year <= today.year + 5:
        return f"year={year}"
    return "none"
