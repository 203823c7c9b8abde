"""Conversationality: an LLM judge rates every chatbot reply of a conversation.

Per reply, one call under a JSON schema gives a rationale, then relevant / informational /
natural / non-repetitive on 1-5 and temporally correct yes/no (WikiChat's human-rating
dimensions). Five scorers report one dimension each, so reports show each with its own mean
and confidence interval; they share one :class:`ConversationJudge`, which makes a single
call per reply whichever scorer asks first (and the response cache makes a re-run free).

Scores are means over the conversation's replies. A 1-5 rating maps to ``(r - 1) / 4`` so
that every score lies in [0, 1] like all others; the raw 1-5 mean is in the explanation and
the data. The judge's rationale per reply is kept in ``Score.data``.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from freshwiki.benchmarks.simulated_chat._simulator import PROMPTS
from freshwiki.llm import LLM, Message
from freshwiki.prompting import render_prompt
from freshwiki.seams import Output, Score, Task

RATINGS: tuple[str, ...] = ("relevant", "informational", "natural", "non_repetitive")
"""The 1-5 dimensions, in display order."""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rationale": {"type": "string", "maxLength": 600},
        **{name: {"type": "integer", "enum": [1, 2, 3, 4, 5]} for name in RATINGS},
        "temporally_correct": {"type": "boolean"},
    },
    "required": ["rationale", *RATINGS, "temporally_correct"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Turn:
    """One exchange of a simulated conversation, as the dialogue recorded it."""

    user: str
    reply: str


def conversation_turns(output: Output) -> list[Turn]:
    """The turns a dialogue output holds in ``trace["turns"]``.

    Raises:
        ValueError: the output is not a conversation (scored with a single-turn benchmark?).
    """
    turns = output.trace.get("turns")
    if not isinstance(turns, list) or not turns:
        raise ValueError("output has no conversation turns (trace['turns']); these scorers "
                         "only score simulated-chat outputs")
    return [Turn(str(t["user"]), str(t["reply"])) for t in turns]


@dataclass(frozen=True)
class Rating:
    """The judge's verdict on one reply."""

    rationale: str
    scores: Mapping[str, int]
    temporally_correct: bool


def today_of(output: Output) -> dt.date:
    """The date the conversation was held on (recorded by the dialogue), else today."""
    raw = output.trace.get("today")
    return dt.date.fromisoformat(raw) if isinstance(raw, str) else dt.date.today()


class ConversationJudge:
    """Rates the replies of a conversation, once per reply however many scorers ask."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self._memo: dict[str, asyncio.Future[list[Rating]]] = {}

    async def rate(self, output: Output) -> list[Rating]:
        """One :class:`Rating` per reply of ``output``, in turn order."""
        key = hashlib.sha256(json.dumps(output.trace.get("turns"), sort_keys=True,
                                        default=str).encode()).hexdigest()
        future = self._memo.get(key)
        if future is None:
            future = self._memo[key] = asyncio.ensure_future(self._rate(output))
        try:
            return await asyncio.shield(future)
        except BaseException:
            # A failed rating is not memoised: the runner retries it on the next run.
            self._memo.pop(key, None)
            raise

    async def _rate(self, output: Output) -> list[Rating]:
        today = today_of(output)
        turns = conversation_turns(output)
        return [await self._rate_reply(turns[:i], turn, today) for i, turn in enumerate(turns)]

    async def _rate_reply(self, before: Sequence[Turn], turn: Turn, today: dt.date) -> Rating:
        shown: list[dict[str, str]] = []
        for t in before:
            shown += [{"role": "User", "content": t.user}, {"role": "Chatbot", "content": t.reply}]
        shown.append({"role": "User", "content": turn.user})
        messages = [
            Message.system(render_prompt(f"{PROMPTS}/judge_system.j2")),
            Message.user(render_prompt(f"{PROMPTS}/judge_user.j2", today=today.isoformat(),
                                       turns=shown, reply=turn.reply)),
        ]
        result = await self.llm.chat(messages, json_schema=SCHEMA, schema_name="rating",
                                     max_tokens=400, tag="eval:chat-judge")
        parsed = result.parsed
        return Rating(
            rationale=str(parsed["rationale"]).strip(),
            scores={name: int(parsed[name]) for name in RATINGS},
            temporally_correct=bool(parsed["temporally_correct"]),
        )


class RatingScorer:
    """One conversationality dimension, averaged over the conversation's replies.

    Args:
        dimension: One of :data:`RATINGS`, or ``temporally_correct``.
        judge: The shared judge.
    """

    def __init__(self, dimension: str, judge: ConversationJudge) -> None:
        if dimension not in (*RATINGS, "temporally_correct"):
            raise ValueError(f"unknown conversationality dimension {dimension!r}")
        self.dimension = dimension
        self.name = "chat-" + dimension.replace("_", "-")
        self.judge = judge

    async def score(self, task: Task, output: Output) -> Score:
        """The mean over replies, in [0, 1] (see the module docstring)."""
        ratings = await self.judge.rate(output)
        per_turn = [{"rationale": r.rationale, **r.scores,
                     "temporally_correct": r.temporally_correct} for r in ratings]
        if self.dimension == "temporally_correct":
            values = [1.0 if r.temporally_correct else 0.0 for r in ratings]
            value = sum(values) / len(values)
            return Score(value=value, label="yes" if value == 1.0 else "no",
                         explanation=f"{sum(values):.0f} of {len(values)} replies temporally "
                         "correct", data={"turns": per_turn})
        raw = [r.scores[self.dimension] for r in ratings]
        mean = sum(raw) / len(raw)
        return Score(value=(mean - 1) / 4, label=f"{mean:.1f}",
                     explanation=f"{self.dimension.replace('_', '-')} {mean:.2f}/5 over "
                     f"{len(raw)} replies: {', '.join(map(str, raw))}",
                     data={"mean_1_to_5": mean, "ratings": raw, "turns": per_turn})


def conversationality_scorers(llm: LLM) -> list[RatingScorer]:
    """The five dimension scorers, sharing one judge."""
    judge = ConversationJudge(llm)
    return [RatingScorer(d, judge) for d in (*RATINGS, "temporally_correct")]
