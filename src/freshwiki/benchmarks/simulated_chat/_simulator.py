"""The simulated user: an LLM that knows a topic's title and first sentence and asks about it.

WikiChat drives its evaluation with such a user. Ours is prompted (``prompts/user_*.j2``) to
write one short message that continues the conversation — a question or a follow-up on what
the chatbot just said — and never to answer itself. Greedy decoding keeps it reproducible:
the same topic opens with the same question for every system, so systems are compared on the
same first turn (and the response cache makes that turn free after the first system).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

from freshwiki.llm import LLM, Message, Usage
from freshwiki.prompting import render_prompt
from freshwiki.seams import Sample

PROMPTS = "benchmarks/simulated_chat/prompts"
MAX_TOKENS = 80

_SPEAKER = re.compile(r"^\s*(?:\*\*)?(?:user|me|human|you)(?:\*\*)?\s*:\s*", re.IGNORECASE)
_ASSISTANT_TAIL = re.compile(r"\n\s*(?:assistant|chatbot|bot)\s*:.*", re.IGNORECASE | re.DOTALL)


def clean_user_message(text: str) -> str:
    """The message without a ``User:`` prefix, wrapping quotes, or an invented bot reply."""
    text = _ASSISTANT_TAIL.sub("", text.strip())
    text = _SPEAKER.sub("", text).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'“”":
        text = text[1:-1].strip()
    return " ".join(text.split())


def user_messages(sample: Sample, history: Sequence[Message], today: dt.date) -> list[Message]:
    """The simulator's prompt for its next message, given the conversation so far."""
    meta = sample.metadata
    system = render_prompt(f"{PROMPTS}/user_system.j2", title=meta["title"],
                           first_sentence=meta["first_sentence"], today=today.isoformat())
    turns = [{"role": "User" if m.role == "user" else "Chatbot", "content": m.content}
             for m in history if m.role in ("user", "assistant")]
    user = render_prompt(f"{PROMPTS}/user_turn.j2", title=meta["title"], turns=turns)
    return [Message.system(system), Message.user(user)]


async def next_user_message(
    simulator: LLM, sample: Sample, history: Sequence[Message], today: dt.date
) -> tuple[str, Usage]:
    """The simulated user's next message and the tokens it cost.

    An empty or unusable output falls back to a plain question about the topic, so one bad
    generation cannot end a conversation early (the fallback is visible in the transcript); a
    question the user already asked is asked afresh once.
    """
    messages = user_messages(sample, history, today)
    asked = {_normal(m.content) for m in history if m.role == "user"}
    result = await simulator.chat(messages, max_tokens=MAX_TOKENS, tag="eval:user-simulator")
    usage = result.usage
    text = clean_user_message(result.text)
    if _normal(text) in asked:
        # Greedy decoding tends to ask the same thing again; one sampled retry (seeded by the
        # turn, so still reproducible) usually finds a new question.
        retry = await simulator.chat(messages, max_tokens=MAX_TOKENS, temperature=0.8,
                                     seed=len(history), tag="eval:user-simulator")
        usage = Usage(prompt_tokens=usage.prompt_tokens + retry.usage.prompt_tokens,
                      completion_tokens=usage.completion_tokens + retry.usage.completion_tokens)
        text = clean_user_message(retry.text)
    if len(text.split()) < 2:
        text = f"Can you tell me about {sample.metadata['title']}?"
    return text, usage


def _normal(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))
