"""A scripted ChatEngine for interface tests: real passages from a real index, canned wording.

It answers "<title> is what the corpus says [1]." citing the top hits of a real search for the
last user message, with a trace that has queries, facts, claims (one SUPPORTS, one REFUTES),
a conflict and two stage records. Knobs per test: fail (e.g. LLM down) before or after some
deltas, or hold the stream half-way on a gate the test opens.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from freshwiki.chat import (
    ChatMessage,
    Citation,
    ClaimCheck,
    Conflict,
    Evidence,
    Fact,
    Reply,
    SearchQuery,
    StageRecord,
    TurnTrace,
)
from freshwiki.llm import LLMUnavailableError
from freshwiki.retrieval import HybridIndex

FALLBACK = (
    Evidence("p1", "Clasmatocolea fasciculata", ("Distribution",),
             "Clasmatocolea fasciculata is a species of liverwort. It is known from South "
             "Africa.", "2024-03-01T00:00:00+00:00", 1.0),
    Evidence("p2", "Cecil Lowell", (), "Cecil Lowell was a South African cricketer.",
             None, 0.5),
)


def llm_down() -> LLMUnavailableError:
    return LLMUnavailableError("gave up after 5 attempts: connection refused", backend="openai",
                               model="m", attempts=5, cause="connection refused")


def make_reply(question: str, evidence: Sequence[Evidence], *, today: str = "2026-11-21",
               grounded: bool = True) -> Reply:
    """A reply citing ``evidence`` in order, with a full trace."""
    if not grounded or not evidence:
        text = "I could not find this in the corpus, so I don't know."
        return Reply(text, (), TurnTrace("checked", today, (SearchQuery(question),)),
                     grounded=False)
    first = evidence[0]
    text = f"{first.title} is what the corpus says about that [1]."
    if len(evidence) > 1:
        text += f" See also {evidence[1].title} [2]."
    citations = tuple(Citation(n, e) for n, e in enumerate(evidence[:2], start=1))
    facts = tuple(Fact(f"{e.title}: {e.text[:60]}", e) for e in evidence[:2])
    claims: tuple[ClaimCheck, ...] = (
        ClaimCheck(f"The corpus describes {first.title}.", "SUPPORTS", (first,),
                   "the passage says so"),)
    if len(evidence) > 1:
        claims += (ClaimCheck("Both passages are about the same thing.", "REFUTES",
                              (evidence[1],), "they describe different things"),)
    stages = (
        StageRecord("query", "Write search queries.", question, f'{{"queries": ["{question}"]}}',
                    0.5, 40, 5, 0, False),
        StageRecord("draft+claims", "Answer from the facts.", f"Q: {question}", text,
                    1.25, 300, 30, 120, True),
    )
    trace = TurnTrace(
        mode="checked", today=today, queries=(SearchQuery(question, "recent"),),
        passages=tuple(evidence), facts=facts, draft=text, claims=claims,
        conflicts=(Conflict("what it is", (0, 1)),) if len(facts) > 1 else (),
        stages=stages, timings={"query": 0.5, "draft+claims": 1.25, "total": 1.75})
    return Reply(text, citations, trace, grounded=True)


@dataclass
class _Stream:
    engine: ScriptedEngine
    history: tuple[ChatMessage, ...]
    today: str | None
    _reply: Reply | None = None

    async def _deltas(self) -> AsyncIterator[str]:
        engine = self.engine
        if engine.fail_after is None and engine.failure is not None:
            raise engine.failure
        reply = await engine.respond(self.history, today=self.today, _record=False)
        words = reply.text.split(" ")
        pieces = [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
        for i, piece in enumerate(pieces):
            if engine.failure is not None and i == engine.fail_after:
                raise engine.failure
            if engine.gate is not None and i == len(pieces) // 2:
                engine.held.set()
                await asyncio.to_thread(engine.gate.wait, 30)
            await asyncio.sleep(engine.delay_s)
            yield piece
        self._reply = reply

    def __aiter__(self) -> AsyncIterator[str]:
        self.engine.histories.append(self.history)
        return self._deltas()

    @property
    def reply(self) -> Reply:
        assert self._reply is not None, "stream not consumed"
        return self._reply


@dataclass
class ScriptedEngine:
    """See the module docstring. ``histories`` records what each turn was asked."""

    index: HybridIndex | None = None
    k: int = 2
    delay_s: float = 0.0
    failure: Exception | None = None
    fail_after: int | None = None
    """With ``failure``: raise it after this many deltas (``None``: before any)."""
    gate: threading.Event | None = None
    """When set, the stream pauses half-way (``held`` is set) until the gate opens."""
    held: threading.Event = field(default_factory=threading.Event)
    histories: list[tuple[ChatMessage, ...]] = field(default_factory=list)
    todays: list[str | None] = field(default_factory=list)

    def reset(self) -> None:
        self.delay_s, self.failure, self.fail_after, self.gate = 0.0, None, None, None
        self.held = threading.Event()
        self.histories.clear()
        self.todays.clear()

    def evidence(self, question: str) -> list[Evidence]:
        if self.index is None:
            return list(FALLBACK)
        return [Evidence(h.passage.id, h.passage.title, h.passage.section_path, h.passage.text,
                         h.passage.timestamp.isoformat() if h.passage.timestamp else None,
                         h.score)
                for h in self.index.search(question, self.k)]

    async def respond(self, history: Sequence[ChatMessage], *, today: str | None = None,
                      _record: bool = True) -> Reply:
        if _record:
            self.histories.append(tuple(history))
        self.todays.append(today)
        if self.failure is not None and self.fail_after is None:
            raise self.failure
        question = history[-1].content
        grounded = "nonsense" not in question
        return make_reply(question, self.evidence(question) if grounded else [],
                          today=today or "2026-11-21", grounded=grounded)

    def stream(self, history: Sequence[ChatMessage], *, today: str | None = None) -> _Stream:
        return _Stream(self, tuple(history), today)
