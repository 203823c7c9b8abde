"""Stage 7 (full mode): polish the composed reply without changing what it claims.

The refiner checks the reply for relevance to the user's message, natural tone, repetition
and temporal correctness (past events in the past tense, "as of" a passage's date for things
that change, no "currently" for facts dated years before today) and rewrites it, keeping
every ``[n]`` marker attached to its statement. It is told not to add facts: anything new
it wrote would be unverified. Streamed (through the sentence guard): it is the last stage,
so the user reads as it is generated. In fast mode its criteria are part of the compose
call instead.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from freshwiki.chat._calls import messages_for, prompt
from freshwiki.chat._evidence import transcript
from freshwiki.chat._types import ChatMessage
from freshwiki.llm import Message


def refine_messages(history: Sequence[ChatMessage], reply: str, today: dt.date
                    ) -> list[Message]:
    """The ``refine`` prompt for ``reply`` (with its raw ``[n]`` markers)."""
    return messages_for(
        prompt("refine_system"),
        prompt("refine_user", today=today.isoformat(), conversation=transcript(history[:-1]),
               message=history[-1].content, reply=reply),
    )
