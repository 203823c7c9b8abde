"""Stage 3: what the model would answer on its own, before any evidence (WikiChat's draft).

The draft is not shown to the user. Its role is recall: claims the model "knows" are
checked against the corpus in stages 4-5, and only supported ones reach the reply, so the
pipeline answers better than retrieval alone when the question's wording misses the passage,
without letting the model's hallucinations through.

- ``draft`` (``wikichat``): a plain reply to the conversation, as the bare LLM would give it.
- ``draft_claims``: stages 3 and 4 fused into one JSON call that answers directly as at most
  three self-contained claims. No chat mode uses it any more; it makes the closed-book
  drafts of the claim benchmark (``experiments/qa_data.py``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from freshwiki.chat._calls import TurnCalls, messages_for, prompt
from freshwiki.chat._evidence import strip_markers, transcript
from freshwiki.chat._types import ChatMessage
from freshwiki.chat.claims import clean_claims
from freshwiki.llm import Message

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "claims": {"type": "array", "items": {"type": "string", "maxLength": 300},
                   "maxItems": 3},
    },
    "required": ["claims"],
    "additionalProperties": False,
}


async def draft_answer(
    calls: TurnCalls, history: Sequence[ChatMessage], today: dt.date
) -> str:
    """The model's own answer to the last message (recent turns as chat turns)."""
    messages = [Message.system(prompt("draft_system", today=today.isoformat()))]
    for message in list(history)[-6:]:
        text = strip_markers(message.content)
        messages.append(Message(message.role, text))
    return await calls.text("draft", messages, max_tokens=160)


async def draft_claims(
    calls: TurnCalls, history: Sequence[ChatMessage], today: dt.date
) -> list[str]:
    """The model's own answer as self-contained claims (may be empty)."""
    parsed = await calls.json(
        "draft+claims",
        messages_for(
            prompt("draft_claims_system"),
            prompt("draft_claims_user", today=today.isoformat(),
                   conversation=transcript(history[:-1]), message=history[-1].content),
        ),
        SCHEMA,
        max_tokens=200,
    )
    if not isinstance(parsed, dict):
        return []
    return clean_claims(parsed["claims"], limit=3)
