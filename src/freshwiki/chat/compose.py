"""Stage 6 (``wikichat``): write the reply from the notes, every statement cited.

- ``compose``: the model sees *notes* only (the facts of stage 2 and the claims that stage 5
  supported, each followed by its ``[n]`` citation) plus the conversation, and writes a reply
  that uses them and nothing else. Refinement (stage 7) follows.
- Small talk (both modes) (no retrieval needed, no factual claim): a short polite reply told not to
  state facts (``compose``), so greetings are answered instead of "I don't know".
- Nothing to go on (``wikichat``: nothing relevant retrieved, no claim supported): a fixed
  template, no LLM call: a model told to answer without facts still invents some. It names the topic
  and the closest articles found, so it reads as an answer to *this* question.

Disagreements found by :mod:`freshwiki.chat.conflicts` are listed in the prompt with both
citations and the instruction to state both values.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from freshwiki.chat._calls import messages_for, prompt
from freshwiki.chat._evidence import PassageBook, quote_data, strip_markers, transcript
from freshwiki.chat._types import ChatMessage, ClaimCheck, Evidence, Fact
from freshwiki.chat.conflicts import Finding
from freshwiki.llm import Message


def cite(book: PassageBook, passages: Sequence[Evidence], limit: int = 2) -> str:
    """``[3][5]``: the markers for ``passages``."""
    return "".join(f"[{book.number(e)}]" for e in list(passages)[:limit])


def notes(facts: Sequence[Fact], supported: Sequence[ClaimCheck], book: PassageBook
          ) -> list[dict[str, str]]:
    """The notes: facts in order, then supported claims not already among them."""
    out = [{"text": quote_data(f.text), "cite": cite(book, [f.source])} for f in facts]
    known = {n["text"].lower() for n in out}
    for check in supported:
        if check.claim.lower() not in known:
            out.append({"text": quote_data(check.claim), "cite": cite(book, check.evidence)})
    return out


def conflict_entries(findings: Sequence[Finding], facts: Sequence[Fact], book: PassageBook
                     ) -> list[dict[str, str]]:
    """The disagreements as the compose prompts list them."""
    out = []
    for finding in findings:
        i, j = finding.conflict.facts
        out.append({
            "about": finding.conflict.about,
            "a": str(book.number(facts[i].source)), "b": str(book.number(facts[j].source)),
            "value_a": finding.values[0], "value_b": finding.values[1],
        })
    return out


def compose_messages(
    history: Sequence[ChatMessage],
    note_list: Sequence[dict[str, str]],
    conflicts: Sequence[dict[str, str]],
    today: dt.date,
) -> list[Message]:
    """The ``compose`` prompt."""
    return messages_for(
        prompt("compose_system"),
        prompt("compose_user", today=today.isoformat(), conversation=transcript(history[:-1]),
               message=history[-1].content, notes=note_list, conflicts=conflicts),
    )


def smalltalk_messages(history: Sequence[ChatMessage], today: dt.date) -> list[Message]:
    """A polite reply to small talk that states no facts."""
    messages = [Message.system(prompt("smalltalk_system", today=today.isoformat()))]
    for message in list(history)[-4:]:
        messages.append(Message(message.role, strip_markers(message.content)))
    return messages


def extractive_reply(facts: Sequence[Fact], supported: Sequence[ClaimCheck],
                     book: PassageBook, limit: int = 3) -> str:
    """A reply quoting the evidence itself, with raw markers.

    Used when every sentence the model wrote was withheld. The facts of stage 2 are the
    model's summaries of their passages, so the quote goes through stage 8 like the reply
    did before it is shown.
    """
    items = [f"{f.text.strip()} {cite(book, [f.source])}" for f in facts[:limit]]
    items += [f"{c.claim.strip()} {cite(book, c.evidence)}"
              for c in supported[: max(limit - len(items), 0)]]
    return "From the sources: " + " ".join(items)


def dont_know(message: str, passages: Sequence[Evidence]) -> str:
    """The "I don't know" reply (template, no LLM call), naming the user's own words.

    Not the query plan's: ``wikichat``'s plan is the model's rewrite, and held out it once
    read "Albert Fuller studied harpsichord at the University of Cambridge", a false
    statement the template then repeated as if the user had asked it.
    """
    subject = " ".join(message.split())
    if len(subject) > 120:
        subject = subject[:119].rstrip() + "…"
    titles: list[str] = []
    for evidence in passages:
        if evidence.title not in titles:
            titles.append(evidence.title)
    return prompt("dont_know", subject=subject, titles=titles[:3])
