"""Stage 4: split the draft into claims that can each be checked on their own.

A claim must be self-contained because it is verified alone, against passages retrieved for
it alone: "He was born in 1983" cannot be checked, "Ashley Johnson was born in 1983" can. So
the prompt resolves co-references from the conversation and turns relative dates ("last
year", "two months ago") into absolute ones using today's date. Opinions, greetings and
questions are not claims: a draft with none gives an empty list (small talk).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

from freshwiki.chat._calls import TurnCalls, messages_for, prompt
from freshwiki.chat._evidence import looks_like_instruction, strip_markers, transcript, unique
from freshwiki.chat._types import ChatMessage

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "claims": {"type": "array", "items": {"type": "string", "maxLength": 300},
                   "maxItems": 5},
    },
    "required": ["claims"],
    "additionalProperties": False,
}


def clean_claims(items: Iterable[Any], *, limit: int) -> list[str]:
    """Claims without blanks, repeats, citation markers or instruction-like text."""
    texts = unique(strip_markers(str(item)) for item in items)
    return [t for t in texts if len(t.split()) >= 3 and not looks_like_instruction(t)][:limit]


async def split_claims(
    calls: TurnCalls, history: Sequence[ChatMessage], draft: str, today: dt.date
) -> list[str]:
    """The draft's factual claims (empty for small talk or an empty draft)."""
    if not draft.strip():
        return []
    parsed = await calls.json(
        "claims",
        messages_for(
            prompt("claims_system"),
            prompt("claims_user", today=today.isoformat(),
                   conversation=transcript(history[:-1]), message=history[-1].content,
                   draft=strip_markers(draft)),
        ),
        SCHEMA,
        max_tokens=300,
    )
    if not isinstance(parsed, dict):
        return []
    return clean_claims(parsed["claims"], limit=5)
