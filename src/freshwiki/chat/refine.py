"""Stage 7 (``wikichat``): judge the composed reply on four criteria, then rewrite it accordingly.

WikiChat's stage 7 (paper §3.2, its Table 23) asks the model for feedback on the draft reply
on relevance, naturalness, non-repetition and temporal correctness, each with its reasoning
and a score out of 100, and then for the reply revised by that feedback; the revision is
told to edit only and never add information. The reference implementation keeps the
original reply when every score is 100, or when the feedback cannot be read. That is the
default here (``refine="feedback"``), in **two calls**:

1. ``refine-feedback``: the four criteria, each ``{"feedback": one line, "score": 0-100}``,
   as JSON under a schema (the paper writes the feedback as free text and parses a
   "N/100" off each line; a schema makes the scores exact for a small model too);
2. ``refine``: the rewrite, shown the reply and that feedback, made only when a criterion
   scored below 100.

Why two calls where the paper's prompt generates feedback and revision in one go: the
revision is conditioned on the feedback either way (the second call reads the first one's
output verbatim, which is what the paper's chain of thought does); but in one call the
revised reply would have to be written inside the schema-constrained JSON (its quotes and
``[n]`` markers escaped, and a reply cut at the token cap would lose the scores with it),
and a full-score reply would still pay for a rewrite the reference implementation throws
away. Both calls start with the same system prompt and the same conversation and reply
(:file:`refine_feedback_user.j2`), so llama.cpp evaluates that prefix once and the rewrite
costs little more than continuing the first generation would.

The rewrite is plain text and takes the same path as before: through the sentence guard,
then stage 8. ``refine="plain"`` keeps the earlier single call that rewrites by the same
criteria without scoring them (one call fewer on a CPU).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from freshwiki.chat._calls import TurnCalls, messages_for, prompt
from freshwiki.chat._evidence import transcript
from freshwiki.chat._types import ChatMessage, CriterionFeedback
from freshwiki.llm import Message

RefineWay = Literal["feedback", "plain"]
REFINE_WAYS: tuple[RefineWay, ...] = ("feedback", "plain")
CRITERIA: tuple[str, ...] = ("relevant", "natural", "non_repetitive", "temporally_correct")
"""The paper's four stage-7 criteria, in its order."""
FULL_SCORE = 100
FEEDBACK_TOKENS = 260
"""Four lines of feedback and their scores as JSON: ~150-200 tokens from the local models."""
_FEEDBACK_CHARS = 240
_REPLY_TAGS = re.compile(r"</?reply>", re.IGNORECASE)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        name: {
            "type": "object",
            # Feedback before score: the reasoning comes first, as on the paper's lines.
            "properties": {"feedback": {"type": "string", "maxLength": _FEEDBACK_CHARS},
                           "score": {"type": "integer", "minimum": 0,
                                     "maximum": FULL_SCORE}},
            "required": ["feedback", "score"],
            "additionalProperties": False,
        }
        for name in CRITERIA
    },
    "required": list(CRITERIA),
    "additionalProperties": False,
}


def refine_messages(history: Sequence[ChatMessage], reply: str, today: dt.date
                    ) -> list[Message]:
    """The ``plain`` way's one ``refine`` prompt for ``reply`` (with its raw ``[n]`` markers)."""
    return messages_for(
        prompt("refine_system"),
        prompt("refine_user", today=today.isoformat(), conversation=transcript(history[:-1]),
               message=history[-1].content, reply=reply),
    )


def feedback_messages(history: Sequence[ChatMessage], reply: str, today: dt.date,
                      feedback: Sequence[CriterionFeedback] | None = None) -> list[Message]:
    """The ``feedback`` way's prompts: scoring (``feedback=None``), else the rewrite.

    Both share everything up to the reply, so the rewrite reuses the scoring call's prefix.
    """
    items = None if feedback is None else [
        {"criterion": f.criterion, "score": f.score, "feedback": f.feedback} for f in feedback]
    return messages_for(
        prompt("refine_feedback_system"),
        prompt("refine_feedback_user", today=today.isoformat(),
               conversation=transcript(history[:-1]), message=history[-1].content,
               reply=reply, feedback=items),
    )


def read_feedback(parsed: Any) -> tuple[CriterionFeedback, ...] | None:
    """The four criteria from the scoring call's JSON, or ``None`` when it is unusable.

    Scores are clamped to 0-100 (a server that ignores the schema's bounds must not make a
    reply "better than perfect"); feedback is one line.
    """
    if not isinstance(parsed, Mapping):
        return None
    out = []
    for name in CRITERIA:
        item = parsed.get(name)
        if not isinstance(item, Mapping):
            return None
        try:
            score = int(item.get("score"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None
        line = " ".join(str(item.get("feedback") or "").split())[:_FEEDBACK_CHARS]
        out.append(CriterionFeedback(name, min(max(score, 0), FULL_SCORE), line))
    return tuple(out)


async def score_reply(calls: TurnCalls, history: Sequence[ChatMessage], reply: str,
                      today: dt.date) -> tuple[CriterionFeedback, ...] | None:
    """The ``refine-feedback`` call: a score and a line of feedback per criterion.

    ``None`` when the model never produced usable JSON (the call's record says why).
    """
    parsed = await calls.json("refine-feedback", feedback_messages(history, reply, today),
                              SCHEMA, max_tokens=FEEDBACK_TOKENS)
    return read_feedback(parsed)


def clean_rewrite(text: str) -> str:
    """The rewrite without the ``<reply>`` tags its prompt wraps the reply in.

    Qwen2.5-Coder-1.5B, asked for the revised reply, returned it still inside
    ``<reply>...</reply>``; those tags must never reach the user.
    """
    return _REPLY_TAGS.sub("", text).strip()


def same_text(a: str, b: str) -> bool:
    """Whether two replies are the same text but for spacing (a rewrite that changed nothing)."""
    return a.split() == b.split()


def needs_rewrite(feedback: Sequence[CriterionFeedback]) -> bool:
    """Whether any criterion scored below 100 (the reference implementation's rule)."""
    return any(f.score < FULL_SCORE for f in feedback)
