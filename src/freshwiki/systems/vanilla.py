"""The vanilla system: the LLM alone, no retrieval. The baseline every other system beats."""

from __future__ import annotations

import datetime as dt

from freshwiki.llm import Message
from freshwiki.prompting import render_prompt


def vanilla_messages(question: str, *, today: dt.date | None = None) -> list[Message]:
    """The chat messages that ask the model ``question`` with today's date in context.

    The date matters: questions about changing facts are only answerable relative to "now".
    """
    if not question.strip():
        raise ValueError("the question is empty")
    today = today or dt.date.today()
    return [
        Message.system(render_prompt("systems/prompts/vanilla_system.j2", today=today.isoformat())),
        Message.user(question.strip()),
    ]
