"""Conversationality: an LLM judge rates every chatbot reply of a conversation.

Per reply, one call under a JSON schema gives a rationale, then relevant / informational /
natural / non-repetitive on 1-5 and temporally correct yes/no (WikiChat's human-rating
dimensions). Five scorers report one dimension each, so reports show each with its own mean
and confidence interval; they share one :class:`ConversationJudge`, which makes a single
call per reply whichever scorer asks first (and the response cache makes a re-run free).

A rating the judge cannot give as JSON, even after the client's repair call, is asked once more
with sampling (temperature :data:`RETRY_TEMPERATURE`, seeded by the turn, so a re-run gets the
same reply): the local 1.5B judge sometimes loops on one character until its token cap (the
Free spectral range conversation of the 15-topic run), and greedy decoding repeats that loop on
every run. The retried rating is marked ``retried`` in the score data. A second failure is
raised as before: the runner records it and the conversation stays unrated.

Scores are means over the conversation's replies. A 1-5 rating maps to ``(r - 1) / 4`` so
that every score lies in [0, 1] like all others; the raw 1-5 mean is in the explanation and
the data. The judge's rationale per reply is kept in ``Score.data``.

Two judges (the benchmark's ``ratings`` option):

* ``rubric`` (default, the paper's way): one call per reply with the whole rubric;
* ``per-question``: :class:`QuestionJudge`. Checked against two readers on the pilot's 60
  turns, the local 1.5B model rating everything in one call agreed with them at chance level
  (kappa -.08 to .11): it gave most replies one score on every quality. This judge asks one
  quality per call, as a choice among anchored options, and computes non-repetition from the
  words a reply shares with the earlier replies instead of asking for it. A reply that only
  says it does not know is rated without a call on the qualities the rubric fixes for it
  (on topic but not answering: relevant 3; no information: informational 1).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from freshwiki.benchmarks.simulated_chat._simulator import PROMPTS
from freshwiki.chat import only_abstains
from freshwiki.llm import LLM, LLMOutputError, Message
from freshwiki.prompting import render_prompt
from freshwiki.retrieval import Tokenizer
from freshwiki.seams import Output, Score, Task

RATINGS: tuple[str, ...] = ("relevant", "informational", "natural", "non_repetitive")
"""The 1-5 dimensions, in display order."""

STYLES: tuple[str, ...] = ("rubric", "per-question")
"""The judges (the benchmark's ``ratings`` option); the first is the default."""

RETRY_TEMPERATURE = 0.7
"""Sampling temperature of the one retry after a rating that is not usable JSON."""

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
    retried: bool = False
    """Whether the greedy reply was unusable and this rating came from the sampled retry."""


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
        return [await self.rate_turn(turns[:i], turn, today) for i, turn in enumerate(turns)]

    async def rate_turn(self, before: Sequence[Turn], turn: Turn, today: dt.date) -> Rating:
        """The rating of ``turn``'s reply, after the exchanges ``before`` it, on ``today``."""
        shown: list[dict[str, str]] = []
        for t in before:
            shown += [{"role": "User", "content": t.user}, {"role": "Chatbot", "content": t.reply}]
        shown.append({"role": "User", "content": turn.user})
        messages = [
            Message.system(render_prompt(f"{PROMPTS}/judge_system.j2")),
            Message.user(render_prompt(f"{PROMPTS}/judge_user.j2", today=today.isoformat(),
                                       turns=shown, reply=turn.reply)),
        ]
        retried = False
        try:
            result = await self.llm.chat(messages, json_schema=SCHEMA, schema_name="rating",
                                         max_tokens=400, tag="eval:chat-judge")
        except LLMOutputError:
            retried = True
            result = await self.llm.chat(messages, json_schema=SCHEMA, schema_name="rating",
                                         max_tokens=400, temperature=RETRY_TEMPERATURE,
                                         seed=len(before), tag="eval:chat-judge")
        parsed = result.parsed
        return Rating(
            rationale=str(parsed["rationale"]).strip(),
            scores={name: int(parsed[name]) for name in RATINGS},
            temporally_correct=bool(parsed["temporally_correct"]),
            retried=retried,
        )


OPTIONS: Mapping[str, Mapping[str, int | bool]] = {
    "relevant": {"yes": 5, "partly": 3, "no": 1},
    "natural": {"yes": 4, "stiff": 3, "no": 2},
    "temporal": {"fine": True, "wrong": False},
}
"""Each question's options and the rating each stands for. The 1-5 values follow the rubric's
anchors (5 answers exactly, 3 on topic but missing the question, 1 off topic); "most replies
deserve 3 or 4", so a fluent reply is a 4."""

INFORMATION_LEVELS: tuple[int, int, int] = (2, 3, 4)
"""Informational from the count of specific facts (see :func:`specific_facts`): none is 2 (a
general answer), one is 3, two or more are 4 (a reply that only abstains is 1)."""

_NAME = re.compile(r"[A-Z][\w'’.-]*(?:\s+(?:[A-Z][\w'’.-]*|of|de|von|van|the))*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_MARKERS = re.compile(r"\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\]")
_NOT_NAMES = frozenset({
    "according", "sorry", "yes", "however", "also", "currently", "today", "her", "his", "its",
    "their", "she", "he", "it", "they", "this", "that", "these", "those", "there", "we", "you",
    "my", "our", "your", "as", "in", "on", "at", "the", "a", "an", "what", "which", "who"})
"""Capitalised words that are not names (sentence openers), beside the stop words."""

REPEATED_LEVELS: tuple[tuple[float, int], ...] = ((0.85, 1), (0.7, 2), (0.55, 3), (0.4, 4))
"""Non-repetition from the repeated share (see :func:`repeated_share`): at least 0.85 is 1
(mostly repeats), ... below 0.4 is 5 (says nothing already said)."""

_TOKENS = Tokenizer()


def repeated_share(before: Sequence[Turn], turn: Turn) -> float:
    """The share of the reply's words that earlier replies already used.

    Words (lower-cased, stop words out) of the user's own message are left out: naming what
    was asked is not repeating information. A reply with no word left repeats nothing (0).
    """
    words = set(_TOKENS(turn.reply)) - set(_TOKENS(turn.user))
    if not words:
        return 0.0
    earlier: set[str] = set()
    for t in before:
        earlier |= set(_TOKENS(t.reply))
    return len(words & earlier) / len(words)


def specific_facts(reply: str, user: str) -> int:
    """How many names, dates and numbers ``reply`` gives that the user's message did not.

    A run of capitalised words is one name ("New York City"); a number is one fact
    (citation markers are not); a word the user already wrote, or a capitalised stop word
    ("The", "She"), is not. The rubric's informational scale counts exactly these: names,
    dates, numbers and places.
    """
    text = _MARKERS.sub(" ", reply)
    asked = {w.casefold() for w in re.findall(r"\w+", user)}
    found = 0
    for match in _NAME.finditer(text):
        words = [w for w in re.findall(r"\w+", match.group()) if w[:1].isupper()]
        new = [w for w in words if w.casefold() not in asked
               and w.casefold() not in _NOT_NAMES and _TOKENS(w)]  # (no stop word)
        found += bool(new)
    found += len(_NUMBER.findall(text))
    return found


def information_level(facts: int) -> int:
    """The 1-5 informational rating of a reply giving ``facts`` specific facts."""
    return INFORMATION_LEVELS[min(facts, 2)]


def repetition_level(share: float) -> int:
    """The 1-5 non-repetition rating of a repeated share (:data:`REPEATED_LEVELS`)."""
    for floor, level in REPEATED_LEVELS:
        if share >= floor:
            return level
    return 5


class QuestionJudge(ConversationJudge):
    """One quality per call, non-repetition computed (the ``per-question`` judge)."""

    async def rate_turn(self, before: Sequence[Turn], turn: Turn, today: dt.date) -> Rating:
        abstains = only_abstains(turn.reply)
        asked = ("natural",) if abstains else ("relevant", "natural", "temporal")
        picked = {q: await self._ask(q, before, turn, today) for q in asked}
        share = repeated_share(before, turn)
        facts = specific_facts(turn.reply, turn.user)
        scores = {
            "relevant": 3 if abstains else int(OPTIONS["relevant"][picked["relevant"]]),
            "informational": 1 if abstains else information_level(facts),
            "natural": int(OPTIONS["natural"][picked["natural"]]),
            "non_repetitive": repetition_level(share),
        }
        rationale = "; ".join([*(f"{q}: {a}" for q, a in picked.items()),
                               *(["only says it does not know"] if abstains
                                 else [f"{facts} specific facts"]),
                               f"repeated share {share:.2f}"])
        return Rating(rationale=rationale, scores=scores,
                      temporally_correct=abstains or bool(OPTIONS["temporal"][picked["temporal"]]))

    async def _ask(self, question: str, before: Sequence[Turn], turn: Turn,
                   today: dt.date) -> str:
        previous = before[-1] if before else None
        options = list(OPTIONS[question])
        messages = [
            Message.system(render_prompt(f"{PROMPTS}/judge_question_system.j2",
                                         dimension=question, today=today.isoformat())),
            Message.user(render_prompt(
                f"{PROMPTS}/judge_question_user.j2", user=turn.user, reply=turn.reply,
                previous=None if previous is None
                else {"user": previous.user, "reply": previous.reply})),
        ]
        schema = {"type": "object", "properties": {"answer": {"type": "string",
                                                               "enum": options}},
                  "required": ["answer"], "additionalProperties": False}
        result = await self.llm.chat(messages, json_schema=schema, schema_name=question,
                                     max_tokens=20, tag="eval:chat-judge")
        return str(result.parsed["answer"])


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
                     "temporally_correct": r.temporally_correct,
                     **({"retried": True} if r.retried else {})} for r in ratings]
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


def conversationality_scorers(llm: LLM, style: str = STYLES[0]) -> list[RatingScorer]:
    """The five dimension scorers, sharing one judge of ``style`` (:data:`STYLES`)."""
    if style not in STYLES:
        raise ValueError(f"unknown ratings judge {style!r}; one of {', '.join(STYLES)}")
    judge = QuestionJudge(llm) if style == "per-question" else ConversationJudge(llm)
    return [RatingScorer(d, judge) for d in (*RATINGS, "temporally_correct")]
