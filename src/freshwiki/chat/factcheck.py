"""Fact-check a finished reply against the corpus, claim by claim (WikiChat's factuality).

The chat pipeline verifies its own draft; an evaluation must verify *any* system's reply with
the same stages. This is that entry point: split the reply into claims (stage 4), search
evidence for each claim with the claim's own time intent, and verify each claim (stage 5,
as ``wikichat`` does). It is public so that scorers use the stages without reaching into the chat
package's private modules.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Sequence

from freshwiki.chat._calls import TurnCalls
from freshwiki.chat._evidence import PassageBook, to_evidence
from freshwiki.chat._types import ChatMessage, ClaimCheck, Evidence
from freshwiki.chat.claims import split_claims
from freshwiki.chat.query import time_intent_of
from freshwiki.chat.verify_legacy import verify_each
from freshwiki.llm import LLM
from freshwiki.retrieval import SearchHit

Search = Callable[[str, str], Awaitable[Sequence[SearchHit]]]
"""``search(claim, time_intent)``: the passages to check ``claim`` against."""


async def check_reply(llm: LLM, history: Sequence[ChatMessage], reply: str, today: dt.date,
                      search: Search) -> list[ClaimCheck]:
    """Every factual claim of ``reply`` with its verdict (empty when it makes none).

    Args:
        llm: The model that splits and verifies (an evaluation's judge).
        history: The conversation up to and including the user turn ``reply`` answers.
        reply: The reply to check.
        today: The date the conversation is held on (resolves "this year", "recently").
        search: Finds evidence for one claim; called once per claim, in claim order.
    """
    calls = TurnCalls(llm)
    claims = await split_claims(calls, history, reply, today)
    if not claims:
        return []
    book = PassageBook()
    evidence: list[list[Evidence]] = []
    for claim in claims:
        found = [to_evidence(h) for h in await search(claim, time_intent_of(claim, today))]
        for e in found:
            book.add(e)
        evidence.append(found)
    return await verify_each(calls, claims, evidence, book, today)
