"""Fact-check a finished reply against the corpus, claim by claim (WikiChat's factuality).

The chat pipeline verifies its own draft; an evaluation must verify *any* system's reply with
the same stages. This is that entry point: split the reply into claims (stage 4), search
evidence for each claim with the claim's own time intent, and verify each claim (stage 5,
as ``wikichat`` does). It is public so that scorers use the stages without reaching into the chat
package's private modules.

A reply that only says it does not know makes no claim about the world, so it is not split:
the claim splitter, shown such a reply, turned it into a claim it then judged refuted (or
invented a claim from the topic), which scored an honest abstention as a falsehood. For the
same reason a claim that is itself an abstention ("the passages do not say who produced it")
is dropped: it is a statement about the evidence, not about the world.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Awaitable, Callable, Sequence

from freshwiki.chat._calls import TurnCalls
from freshwiki.chat._evidence import PassageBook, strip_markers, to_evidence
from freshwiki.chat._types import ChatMessage, ClaimCheck, Evidence
from freshwiki.chat.checked import is_abstention
from freshwiki.chat.claims import split_claims
from freshwiki.chat.query import time_intent_of
from freshwiki.chat.verify_legacy import verify_each
from freshwiki.corpus import split_sentences
from freshwiki.llm import LLM
from freshwiki.retrieval import SearchHit

Search = Callable[[str, str], Awaitable[Sequence[SearchHit]]]
"""``search(claim, time_intent)``: the passages to check ``claim`` against."""

_ABOUT_EVIDENCE = re.compile(r"(?i)\b(?:i|passages?|sources?|wikipedia|information|text)\b")
"""An abstention speaks of the speaker or the evidence; "X does not include Y" alone may be a
fact about the world (a treaty that does not provide for ...), so it must name one of these."""


def abstains(text: str) -> bool:
    """Whether ``text`` (a sentence or a claim) only says the answer was not found."""
    plain = strip_markers(text)
    return is_abstention(plain) and bool(_ABOUT_EVIDENCE.search(plain))


def only_abstains(reply: str) -> bool:
    """Whether every sentence of ``reply`` is an abstention (an empty reply is not)."""
    sentences = [s.text for s in split_sentences(strip_markers(reply)) if s.text.strip()]
    return bool(sentences) and all(abstains(s) for s in sentences)


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
    if only_abstains(reply):
        return []
    calls = TurnCalls(llm)
    claims = [c for c in await split_claims(calls, history, reply, today) if not abstains(c)]
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
