"""Factuality: the share of a conversation's claims that the corpus supports.

Every chatbot reply is split into self-contained claims and each claim is checked against
passages retrieved for it from the corpus, exactly as the grounded pipeline checks its own
drafts (the same claim-splitting and verification prompts, ``freshwiki.chat.claims`` and
``freshwiki.chat.verify``: one verdict call per claim with a reason first, and a SUPPORTS
whose numbers appear in none of the evidence downgraded). Here the judge model makes those
calls, whatever system wrote the reply, so every system is checked by the same referee.

The score is supported claims / all claims over the conversation (micro average, as WikiChat
reports factual accuracy). A conversation whose replies make no claim at all ("I don't know")
scores 1.0 with the label ``no_claims``: it said nothing false. That is why factuality is
reported beside *informational*, which such a conversation fails.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Sequence
from typing import Any, Protocol

from freshwiki.benchmarks.simulated_chat._conversationality import (
    conversation_turns,
    today_of,
)
from freshwiki.chat import ChatMessage, ClaimCheck, check_reply
from freshwiki.llm import LLM
from freshwiki.retrieval import SearchHit
from freshwiki.seams import Output, Score, Task

EVIDENCE_K = 5
"""Passages retrieved per claim."""


class Searcher(Protocol):
    """What factuality needs of an index (a :class:`~freshwiki.retrieval.HybridIndex`)."""

    def search(self, query: str, k: int = ..., *, time_intent: str = ...) -> list[SearchHit]:
        """The top ``k`` passages for ``query``."""
        ...


class IndexSource(Protocol):
    """Gives the index on first use (opening it is slow and not always needed)."""

    async def get(self) -> Searcher:
        """The open index."""
        ...


class FactualityScorer:
    """``chat-factuality``: see the module docstring.

    Args:
        judge: The model that splits replies into claims and verifies them.
        index: Where evidence comes from (opened on first use).
    """

    name = "chat-factuality"

    def __init__(self, judge: LLM, index: IndexSource, *, owns_index: bool = False) -> None:
        self.judge = judge
        self.index = index
        self.owns_index = owns_index

    async def aclose(self) -> None:
        """Close the evidence index when this scorer opened it (built by name)."""
        close = getattr(self.index, "close", None)
        if self.owns_index and callable(close):
            close()

    async def score(self, task: Task, output: Output) -> Score:
        """Supported claims over all claims of the conversation's replies."""
        today = today_of(output)
        turns = conversation_turns(output)
        index = await self.index.get()
        history: list[ChatMessage] = []
        per_turn: list[dict[str, Any]] = []
        checks_all: list[ClaimCheck] = []
        for turn in turns:
            history.append(ChatMessage("user", turn.user))
            checks = await self._check_reply(index, history, turn.reply, today)
            history.append(ChatMessage("assistant", turn.reply))
            checks_all += checks
            per_turn.append({"claims": [
                {"claim": c.claim, "verdict": c.verdict, "rationale": c.rationale,
                 "evidence": [e.passage_id for e in c.evidence]} for c in checks]})
        supported = sum(c.verdict == "SUPPORTS" for c in checks_all)
        total = len(checks_all)
        if total == 0:
            return Score(value=1.0, label="no_claims",
                         explanation="the replies make no factual claim",
                         data={"supported": 0, "claims": 0, "turns": per_turn})
        refuted = sum(c.verdict == "REFUTES" for c in checks_all)
        return Score(
            value=supported / total,
            label=f"{supported}/{total}",
            explanation=f"{supported} of {total} claims supported by the corpus, "
            f"{refuted} refuted, {total - supported - refuted} without enough evidence",
            data={"supported": supported, "refuted": refuted, "claims": total,
                  "turns": per_turn},
        )

    async def _check_reply(self, index: Searcher, history: Sequence[ChatMessage], reply: str,
                           today: dt.date) -> list[ClaimCheck]:
        async def search(claim: str, time_intent: str) -> list[SearchHit]:
            return await asyncio.to_thread(index.search, claim, EVIDENCE_K,
                                           time_intent=time_intent)

        return await check_reply(self.judge, history, reply, today, search)
