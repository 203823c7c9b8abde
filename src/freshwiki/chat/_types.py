"""What a grounded chat turn takes and returns: the seam between the pipeline and its users.

The pipeline (``GroundedChat``) implements :class:`ChatEngine`; the REPL, the HTTP API, the web
page, the distillation export and the chat evaluation only use these types, so each can be built
and tested against a scripted engine.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["user", "assistant"]
Verdict = Literal["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"]
Mode = Literal["checked", "wikichat"]


@dataclass(frozen=True)
class ChatMessage:
    """One turn of the conversation so far."""

    role: Role
    content: str


@dataclass(frozen=True)
class Evidence:
    """A retrieved passage as the chat shows and cites it (Wikipedia text: CC BY-SA 4.0).

    Attributes:
        passage_id: The index's passage id.
        title: Article title.
        section: Section path, outermost first.
        text: The passage text.
        timestamp: ISO 8601 time of the revision it comes from, if known.
        score: Retrieval score.
    """

    passage_id: str
    title: str
    section: tuple[str, ...]
    text: str
    timestamp: str | None = None
    score: float = 0.0

    @property
    def titled(self) -> str:
        """The title, then the text: what a value is looked for in.

        A lead often names its subject only in the title ("Zoli government") or calls it "it".
        """
        return f"{self.title}. {self.text}"


@dataclass(frozen=True)
class SearchQuery:
    """A query the pipeline sent to the index, with the time intent it chose."""

    text: str
    time_intent: str = "none"
    purpose: str = "answer"
    """``answer`` (stage 1) or ``verify`` (stage 5, one per claim)."""


@dataclass(frozen=True)
class Fact:
    """A short statement kept from one retrieved passage (stage 2).

    Attributes:
        text: The fact, self-contained.
        source: The passage it was taken from.
    """

    text: str
    source: Evidence


@dataclass(frozen=True)
class ClaimCheck:
    """One claim of the draft and its verification (stages 4-5).

    Attributes:
        claim: The claim, self-contained.
        verdict: SUPPORTS, REFUTES or NOT ENOUGH INFO.
        evidence: The passages the verdict rests on, the one stating the value first.
        rationale: Why, in words (which value the evidence gives, what is missing).
        correction: For REFUTES, the claim as the evidence states it ("... won by
            Australia."), when every other part of it is stated too, else ``""``. The
            reply may say that, citing ``evidence[0]``; it never says the refuted claim.
    """

    claim: str
    verdict: Verdict
    evidence: tuple[Evidence, ...] = ()
    rationale: str = ""
    correction: str = ""


@dataclass(frozen=True)
class Conflict:
    """Retrieved facts that disagree on something the user asked about.

    Attributes:
        about: What they disagree on, in a few words ("the year it opened").
        facts: Indices into :attr:`TurnTrace.facts` of the disagreeing facts.
    """

    about: str
    facts: tuple[int, ...]


@dataclass(frozen=True)
class StageRecord:
    """One LLM call of one stage: enough to inspect it and to distil a smaller model from it.

    Attributes:
        stage: Stage name (``query``, ``facts``, ``draft``, ``claims``, ``verify``, ``compose``,
            ``refine-feedback``, ``refine``, ``check``; the checked mode's ``answer`` and
            ``check``; or a fused name of earlier versions such as
            ``draft+claims``).
        instruction: The system prompt.
        input: The user-side input the stage saw.
        output: What the model returned (raw text; JSON for schema stages).
        latency_s: Seconds for the call.
        prompt_tokens: Prompt tokens.
        completion_tokens: Generated tokens.
        cached_prompt_tokens: Prompt tokens reused from the KV cache.
        cache_hit: Served from the response cache.
        error: Why the call's output could not be used (e.g. JSON still invalid after the
            repair round), empty when it could; the stage then degraded instead of failing
            the turn.
    """

    stage: str
    instruction: str
    input: str
    output: str
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cache_hit: bool = False
    error: str = ""


@dataclass(frozen=True)
class CriterionFeedback:
    """The refiner's judgement of the composed reply on one criterion (stage 7, ``wikichat``).

    Attributes:
        criterion: ``relevant``, ``natural``, ``non_repetitive`` or ``temporally_correct``.
        score: 0-100; 100 means nothing to improve.
        feedback: One line saying why.
    """

    criterion: str
    score: int
    feedback: str


@dataclass(frozen=True)
class Refinement:
    """What stage 7 did to the composed reply (``wikichat``; the checked mode has no stage 7).

    Attributes:
        way: ``feedback`` (scores and feedback per criterion, then a rewrite that applies
            them: WikiChat's stage 7) or ``plain`` (one rewrite call, no scores).
        feedback: The scores and feedback (``feedback`` way; empty when the call gave no
            usable JSON).
        rewritten: Whether the rewrite replaced the composed reply. ``False`` when every
            criterion scored 100, the feedback was unusable, or the rewrite was empty or
            withheld whole by the guard: the composed reply went on instead.
        note: Why the composed reply was kept, when it was.
        composed: The reply before stage 7 (as the composer wrote it).
        refined: The reply stage 7 passed on: the rewrite through the guard, or ``composed``
            when it was kept. The two are what the paper's Table 14 compares (BLEU of the
            refined reply against the one before refinement).
    """

    way: str
    feedback: tuple[CriterionFeedback, ...] = ()
    rewritten: bool = False
    note: str = ""
    composed: str = ""
    refined: str = ""


@dataclass(frozen=True)
class TurnTrace:
    """Everything that happened in one turn, for ``/trace``, the evidence panel and reports."""

    mode: Mode
    today: str
    queries: tuple[SearchQuery, ...] = ()
    passages: tuple[Evidence, ...] = ()
    facts: tuple[Fact, ...] = ()
    draft: str | None = None
    claims: tuple[ClaimCheck, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    stages: tuple[StageRecord, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)
    """Seconds per stage (and ``total``)."""
    removed: tuple[str, ...] = ()
    """Sentences of the model's final text withheld from the reply: a number or date found
    in no evidence, a restated refuted claim or earlier reply (the guard), an echo of the
    question or a sentence its evidence refutes (stage 8, ``reply_checks``)."""
    reply_checks: tuple[ClaimCheck, ...] = ()
    """Stage 8's verdict on each cited sentence of the composed reply."""
    refinement: Refinement | None = None
    """Stage 7's scores, feedback and outcome (``wikichat`` with a composed reply)."""

    @property
    def llm_calls(self) -> int:
        """LLM calls made in the turn."""
        return len(self.stages)

    @property
    def cache_hits(self) -> int:
        """Calls served from the response cache."""
        return sum(s.cache_hit for s in self.stages)

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens over all calls."""
        return sum(s.prompt_tokens for s in self.stages)

    @property
    def completion_tokens(self) -> int:
        """Generated tokens over all calls."""
        return sum(s.completion_tokens for s in self.stages)


@dataclass(frozen=True)
class Citation:
    """``[number]`` in the reply text refers to this passage."""

    number: int
    evidence: Evidence


@dataclass(frozen=True)
class Reply:
    """The assistant's answer to one turn.

    Attributes:
        text: The reply, with ``[n]`` citation markers.
        citations: What each marker refers to, in number order.
        trace: How the reply was made.
        grounded: False when nothing was retrieved or verified and the reply says it does
            not know.
    """

    text: str
    citations: tuple[Citation, ...]
    trace: TurnTrace
    grounded: bool = True

    def as_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (for the API's extension field and trace export)."""
        import dataclasses

        data = dataclasses.asdict(self)
        data["trace"]["llm_calls"] = self.trace.llm_calls
        data["trace"]["cache_hits"] = self.trace.cache_hits
        data["trace"]["prompt_tokens"] = self.trace.prompt_tokens
        data["trace"]["completion_tokens"] = self.trace.completion_tokens
        return data


class ReplyStream(Protocol):
    """Text deltas of the reply as they are generated; :attr:`reply` once exhausted."""

    def __aiter__(self) -> AsyncIterator[str]:
        """Iterate over text deltas."""
        ...

    @property
    def reply(self) -> Reply:
        """The finished reply (raises if the stream has not been consumed)."""
        ...


@runtime_checkable
class ChatEngine(Protocol):
    """Answers a conversation's last user message, grounded in a corpus."""

    async def respond(
        self, history: Sequence[ChatMessage], *, today: str | None = None
    ) -> Reply:
        """The reply to ``history`` (ending with a user message); ``today`` is ISO date."""
        ...

    def stream(self, history: Sequence[ChatMessage], *, today: str | None = None) -> ReplyStream:
        """Like :meth:`respond`, streaming the final stage's text."""
        ...
