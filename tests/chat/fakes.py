"""Test doubles for the chat pipeline: a word-overlap index and a stage-routing LLM script.

The index ranks real passages by shared content words (no embedder, instant, deterministic).
The script answers each LLM call according to the stage its prompt belongs to, so tests do
not depend on the order concurrent stages reach the backend, and it records which stage
each call was and when it ran, to check concurrency.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from freshwiki.chat._evidence import content_words
from freshwiki.llm import LLM, Completion, GenerationParams, Message
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.records import Passage
from freshwiki.retrieval import SearchHit

MARKERS = {
    "You plan searches": "query",
    "You extract facts": "facts",
    "You are a knowledgeable, concise assistant": "draft",
    "You answer questions from your own knowledge": "draft+claims",
    "You split an assistant's draft": "claims",
    "You are a fact checker": "verify",
    "You read Wikipedia sentences and fill in blanks": "verify",
    "You are a helpful assistant that answers from verified notes": "compose",
    "You edit an assistant's reply": "refine",
    "You are a friendly assistant": "smalltalk",
}


def stage_of(messages: Sequence[Message]) -> str:
    """Which stage a prompt belongs to (by its system prompt, and its task line)."""
    system = messages[0].content
    user = "\n".join(m.content for m in messages if m.role == "user")  # (+ a repair turn)
    if "Wikipedia passages found for this question" in user:  # the checked mode
        return "check" if "Fill each blank (___)" in user else "answer"
    for marker, stage in MARKERS.items():
        if system.startswith(marker):
            return stage
    if system.startswith("You are a careful assistant that works only"):
        user = "\n".join(m.content for m in messages if m.role == "user")  # (+ a repair turn)
        if "Task: FILL" in user and "\nReply sentences:" in user:
            return "fast-check"  # stage 8 (see DEFAULTS)
        if "Task: FACT-CHECK" in user or "Task: FILL" in user:
            return "fast-verify"
        if "Task: REPLY" in user or "Task: CONTINUE" in user:
            return "fast-compose"
    if system.startswith("You review an assistant's reply"):  # stage 7, the paper's way
        user = "\n".join(m.content for m in messages if m.role == "user")  # (+ a repair turn)
        if "Task: FEEDBACK" in user:
            return "refine-feedback"
        if "Task: REVISE" in user:
            return "refine"
    raise AssertionError(f"unknown prompt: {system[:80]!r}")


Reply = str | Callable[[Sequence[Message]], str]


def _reads_nothing(messages: Sequence[Message]) -> str:
    """A cloze answer leaving every blank empty: stage 8 then keeps every sentence."""
    items = re.findall(r"^\d+\. ", messages[-1].content.split("Reply sentences:", 1)[-1],
                       flags=re.MULTILINE)
    return json.dumps({"answers": [""] * len(items)})


def feedback(**scores: int) -> str:
    """A ``refine-feedback`` reply: every criterion 100 unless given (``natural=70``)."""
    criteria = ("relevant", "natural", "non_repetitive", "temporally_correct")
    out = {}
    for c in criteria:
        score = scores.get(c, 100)
        out[c] = {"feedback": f"{c} is {'fine' if score == 100 else 'weak'}.", "score": score}
    return json.dumps(out)


DEFAULTS: dict[str, Reply] = {"fast-check": _reads_nothing,
                              "refine-feedback": feedback(natural=90)}
"""Replies for stages a script need not mention: stage 8's check reads no value unless a
test scripts ``fast-check`` itself; stage 7's feedback finds the reply could read more
naturally (90/100), so the rewrite a test scripts as ``refine`` is made."""


@dataclass
class Call:
    """One LLM call the script answered."""

    stage: str
    messages: tuple[Message, ...]
    started: float = 0.0
    ended: float = 0.0

    @property
    def system(self) -> str:
        return self.messages[0].content

    @property
    def user(self) -> str:
        return self.messages[-1].content


@dataclass
class StageScript:
    """Answers per stage; a list of replies is consumed one per call of that stage."""

    replies: dict[str, Reply | list[Reply]]
    calls: list[Call] = field(default_factory=list)

    def answer(self, messages: Sequence[Message]) -> str:
        stage = stage_of(messages)
        reply = self.replies.get(stage, DEFAULTS.get(stage))
        if reply is None:
            raise AssertionError(f"the script has no reply for stage {stage!r}")
        if isinstance(reply, list):
            if not reply:
                raise AssertionError(f"no reply left for stage {stage!r}")
            reply = reply.pop(0)
        return reply(messages) if callable(reply) else reply

    def stages(self) -> list[str]:
        return [c.stage for c in self.calls]

    def of(self, stage: str) -> list[Call]:
        return [c for c in self.calls if c.stage == stage]


class RoutingBackend(ScriptedBackend):
    """A scripted backend that routes every call through a :class:`StageScript`."""

    def __init__(self, script: StageScript, *, delay_s: float = 0.0) -> None:
        super().__init__([script.answer] * 200, delay_s=delay_s)
        self.script = script

    async def complete(self, messages: Sequence[Message], params: GenerationParams
                       ) -> Completion:
        call = Call(stage_of(messages), tuple(messages), started=time.perf_counter())
        self.script.calls.append(call)
        try:
            return await super().complete(messages, params)
        finally:
            call.ended = time.perf_counter()

    async def stream(self, messages: Sequence[Message], params: GenerationParams
                     ) -> Any:
        call = Call(stage_of(messages), tuple(messages), started=time.perf_counter())
        self.script.calls.append(call)
        async for item in super().stream(messages, params):
            yield item
        call.ended = time.perf_counter()


def scripted_llm(replies: dict[str, Reply | list[Reply]], *, delay_s: float = 0.0
                 ) -> tuple[LLM, StageScript]:
    script = StageScript(replies)
    return LLM(RoutingBackend(script, delay_s=delay_s)), script


def js(value: Any) -> str:
    return json.dumps(value)


@dataclass
class FakeIndex:
    """Ranks passages by shared content words with the query; records every search."""

    passages: list[Passage]
    searches: list[tuple[str, int, str | None]] = field(default_factory=list)

    def search(self, query: str, k: int = 5, *, time_intent: str | None = None
               ) -> list[SearchHit]:
        self.searches.append((query, k, time_intent))
        wanted = set(content_words(query))
        scored = []
        for key, passage in enumerate(self.passages):
            words = set(content_words(f"{passage.title} {passage.text}"))
            overlap = len(wanted & words)
            if overlap:
                scored.append((overlap / (len(wanted) or 1), key, passage))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [
            SearchHit(passage=p, score=s, rank=r, key=key, fused_score=s)
            for r, (s, key, p) in enumerate(scored[:k], start=1)
        ]


def overlapping(a: Iterable[Call], b: Iterable[Call]) -> bool:
    """Whether some call of ``a`` ran while some call of ``b`` ran."""
    return any(x.started < y.ended and y.started < x.ended for x in a for y in b)

