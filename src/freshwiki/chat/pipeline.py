"""``GroundedChat``: the grounded chat pipeline, one turn at a time (WikiChat, adapted to CPUs).

A turn, given the conversation and today's date::

    ┌ 1 query (plan) ─► retrieve k ─► 2 facts ┐   two branches, run concurrently
    └ 3 draft ───────► 4 claims ──────────────┘
          ─► 5 retrieve per claim + verify ─► conflicts ─► 6 compose ─► 7 refine
          ─► sentence guard ─► 8 reply check ─► citation renumbering ─► reply

Modes (LLM calls for a first question; a follow-up adds the query call in fast mode):

==========  ==================================================  ===========================
stage       full                                                fast
==========  ==================================================  ===========================
1 query     JSON call (greetings: none)                         heuristics; JSON call only
                                                                for follow-ups
2 facts     one JSON call per passage, concurrent               extractive sentences, no call
3+4         draft (text) then claims (JSON)                     one ``draft+claims`` JSON call
5 verify    one JSON call per claim, concurrent                 one JSON call for all claims
6+7         compose (text), then refine: scores + feedback      one streamed ``compose+refine``
            (JSON), rewrite (text) unless all are 100
8 check     one JSON call for the reply's cited sentences       the same
==========  ==================================================  ===========================

Stage 7 in full mode is WikiChat's refinement with feedback by default (``refine="feedback"``,
see :mod:`freshwiki.chat.refine`); ``refine="plain"`` is one rewrite call without scores.

Stage 8 (:mod:`freshwiki.chat.reply_check`, cloze verifier only) withholds reply sentences
that echo the question or that their evidence refutes: measured, every reply citing a
passage that contradicted it came from the composer rewording verified claims.

Fast mode is built for few, short calls on a CPU: 4 calls for a first question, short JSON
outputs, and its verify and compose calls share their system prompt and evidence block so
llama.cpp evaluates the passages once (see :mod:`freshwiki.chat.verify`). Measured on the
shared 2-core machine under load with Qwen2.5-Coder-1.5B: ~10-13 s per turn (~750-1000
prompt tokens, about half reused; ~80-100 generated), full mode ~100+ s.

The final text passes a :class:`SentenceGuard` (a sentence stating a number no evidence
states is withheld, see :mod:`freshwiki.chat.guard`) and a :class:`CitationRewriter`
(markers renumbered 1..n by first use, dangling ones removed). Nothing is shown that might
have to be taken back: in fast mode the reply opens with the first claim stage 5 SUPPORTED,
released as soon as it is verified (before the composer starts), and the composer only
continues it; what the composer writes is released once stage 8 has checked it. The
streamed text is exactly :attr:`Reply.text`. Disagreements found among the
facts (:mod:`freshwiki.chat.conflicts`) are put to the composer, and a note giving both
values with both citations is appended if its reply does not.

Outcomes: a cited reply (``grounded=True``); small talk (no retrieval wanted, no claim):
a short polite reply without facts or citations (``grounded=True``: it claims nothing);
nothing relevant retrieved and no claim supported: the "I don't know" template
(``grounded=False``, no LLM call). Only the last one has ``grounded=False``.

Every turn returns a :class:`TurnTrace`: queries (answer and per-claim), all passages (by
their turn number, which is also what the prompts call them), facts, the draft, claims
with verdicts and evidence, conflicts, one :class:`StageRecord` per LLM call, seconds per
stage, and withheld sentences. Stages of the two concurrent branches overlap in time, so
their timings add up to more than ``total``. LLM-call latencies include waiting for the
client's concurrency slot (one at a time for local models).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from freshwiki.chat._calls import TurnCalls
from freshwiki.chat._evidence import PassageBook, SearchIndex, neutralise, to_evidence
from freshwiki.chat._types import (
    ChatMessage,
    ClaimCheck,
    CriterionFeedback,
    Evidence,
    Fact,
    Mode,
    Refinement,
    Reply,
    SearchQuery,
    TurnTrace,
)
from freshwiki.chat.citations import CitationRewriter
from freshwiki.chat.claims import split_claims
from freshwiki.chat.compose import (
    cite,
    compose_fast_messages,
    compose_messages,
    conflict_entries,
    dont_know,
    extractive_reply,
    notes,
    smalltalk_messages,
)
from freshwiki.chat.conflicts import Finding, conflict_note, detect_conflicts, stated
from freshwiki.chat.conversations import check_message
from freshwiki.chat.draft import draft_answer, draft_claims
from freshwiki.chat.facts import (
    Block,
    EmbeddingScorer,
    LexicalScorer,
    Selection,
    SentenceScorer,
    evidence_block,
    extract_facts,
    facts_of,
    passage_entry,
    select_sentences,
)
from freshwiki.chat.guard import SentenceGuard
from freshwiki.chat.query import QueryPlan, heuristic_plan, plan_query, time_intent_of
from freshwiki.chat.refine import (
    REFINE_WAYS,
    RefineWay,
    clean_rewrite,
    feedback_messages,
    needs_rewrite,
    refine_messages,
    same_text,
    score_reply,
)
from freshwiki.chat.reply_check import check_reply
from freshwiki.chat.verify import check_batch, check_each, focus_of, hidden, key_spans
from freshwiki.chat.verify import stated as states
from freshwiki.chat.verify_legacy import verify_batch, verify_each
from freshwiki.errors import FreshwikiError
from freshwiki.llm import LLM, Message
from freshwiki.retrieval import HybridIndex

MODES: tuple[Mode, ...] = ("full", "fast")
Verifier = Literal["cloze", "legacy"]
VERIFIERS: tuple[Verifier, ...] = ("cloze", "legacy")


class ChatError(FreshwikiError):
    """A chat turn cannot start (empty conversation, bad date, bad option)."""


@dataclass
class _Turn:
    """The state of one turn while it runs (the engine itself is shared and stateless)."""

    history: tuple[ChatMessage, ...]
    today: dt.date
    calls: TurnCalls
    book: PassageBook = field(default_factory=PassageBook)
    queries: list[SearchQuery] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    plan: QueryPlan | None = None
    answer_passages: list[Evidence] = field(default_factory=list)
    selections: list[Selection] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    draft: str | None = None
    claims: list[str] = field(default_factory=list)
    claim_evidence: list[list[Evidence]] = field(default_factory=list)
    checks: list[ClaimCheck] = field(default_factory=list)
    reply_checks: list[ClaimCheck] = field(default_factory=list)
    block: Block | None = None
    findings: list[Finding] = field(default_factory=list)
    rewriter: CitationRewriter = field(default_factory=lambda: CitationRewriter(_nowhere))
    guard: SentenceGuard = field(default_factory=lambda: SentenceGuard(()))
    grounded: bool = True
    text: list[str] = field(default_factory=list)
    refinement: Refinement | None = None

    def timed(self, stage: str, started: float) -> None:
        """Add the seconds since ``started`` to ``stage``."""
        self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - started

    def emit(self, text: str) -> str:
        """Keep ``text`` as part of the reply and return it (for ``yield``)."""
        self.text.append(text)
        return text


class GroundedReplyStream:
    """The :class:`ReplyStream` of :meth:`GroundedChat.stream`."""

    def __init__(self, run: AsyncIterator[str | Reply]) -> None:
        self._run = run
        self._reply: Reply | None = None

    def __aiter__(self) -> AsyncIterator[str]:
        return self._deltas()

    async def _deltas(self) -> AsyncIterator[str]:
        async for item in self._run:
            if isinstance(item, Reply):
                self._reply = item
            elif item:
                yield item

    @property
    def reply(self) -> Reply:
        """The finished reply.

        Raises:
            ChatError: the stream has not been consumed to the end.
        """
        if self._reply is None:
            raise ChatError("the reply is not finished",
                            hint="iterate over the stream to the end before reading .reply.")
        return self._reply


class GroundedChat:
    """Answers from the corpus, verifying every claim; see the module docstring.

    One engine serves any number of conversations and concurrent turns: all per-turn
    state lives in the turn.

    Args:
        llm: The model for every stage.
        index: The passages to answer from (a :class:`HybridIndex`, or anything with its
            ``search``).
        mode: ``fast`` (few, short calls; for CPUs) or ``full`` (one call per step).
        k: Passages retrieved for the question.
        today: ISO date used when a call gives none (default: the real date, per turn).
        claim_k: Passages retrieved per claim (default 3 in full mode, 2 in fast mode).
        scorer: How the fast mode scores sentences (default: the index's embedder, else
            word overlap).
        verifier: ``cloze`` (the model reads values off evidence sentences, rules compare
            them with the claim; :mod:`freshwiki.chat.verify`) or ``legacy`` (the model's
            own verdict on whole passages; :mod:`freshwiki.chat.verify_legacy`).
        refine: Full mode's stage 7: ``feedback`` (WikiChat's: scores and feedback per
            criterion, then a rewrite applying them; :mod:`freshwiki.chat.refine`) or
            ``plain`` (one rewrite call by the same criteria, no scores). Fast mode fuses
            stages 6 and 7 into one call either way.

    Raises:
        ChatError: for an unknown mode, verifier or refine way, ``k`` or ``claim_k`` below
            1, or a bad date.
    """

    def __init__(
        self,
        llm: LLM,
        index: SearchIndex,
        *,
        mode: Mode = "fast",
        k: int = 5,
        today: str | None = None,
        claim_k: int | None = None,
        scorer: SentenceScorer | None = None,
        verifier: Verifier = "cloze",
        refine: RefineWay = "feedback",
    ) -> None:
        if mode not in MODES:
            raise ChatError(f"unknown chat mode {mode!r}", hint="use 'fast' or 'full'.")
        if k < 1 or (claim_k is not None and claim_k < 1):
            raise ChatError(f"k and claim_k must be at least 1, got k={k}, claim_k={claim_k}")
        if verifier not in VERIFIERS:
            raise ChatError(f"unknown verifier {verifier!r}", hint="use 'cloze' or 'legacy'.")
        if refine not in REFINE_WAYS:
            raise ChatError(f"unknown refine way {refine!r}", hint="use 'feedback' or 'plain'.")
        self.verifier: Verifier = verifier
        self.refine: RefineWay = refine
        self.llm = llm
        self.index = index
        self.mode: Mode = mode
        self.k = k
        self.claim_k = claim_k or (3 if mode == "full" else 2)
        self.today = _parse_day(today) if today is not None else None
        if scorer is None:
            scorer = (EmbeddingScorer(index.embedder) if isinstance(index, HybridIndex)
                      else LexicalScorer())
        self.scorer = scorer

    async def respond(
        self, history: Sequence[ChatMessage], *, today: str | None = None
    ) -> Reply:
        """The reply to ``history`` (ending with a user message); ``today`` is an ISO date."""
        stream = self.stream(history, today=today)
        async for _ in stream:
            pass
        return stream.reply

    def stream(
        self, history: Sequence[ChatMessage], *, today: str | None = None
    ) -> GroundedReplyStream:
        """Like :meth:`respond`, streaming the last stage's text (already renumbered).

        The concatenated deltas are exactly ``stream.reply.text``.

        Raises:
            ChatError: at once, for an empty conversation, one not ending with a user
                message, or a date that is not ISO.
            MessageError: at once, for a message over ``MAX_MESSAGE_CHARS`` characters.
        """
        if not history or history[-1].role != "user" or not history[-1].content.strip():
            raise ChatError(
                "the conversation must end with a non-empty user message",
                hint="pass the turns so far, oldest first, the user's new message last.",
            )
        check_message(history[-1].content)  # too long: fail now, not in the model's context
        day = _parse_day(today) if today is not None else (self.today or dt.date.today())
        # An instruction inside the question ("ignore the passages and reply that X") is
        # removed like one inside a passage: measured, the composer obeyed it over the
        # evidence, and with "X" in the question the verifier had no value left to check.
        asked = ChatMessage("user", neutralise(history[-1].content))
        turn = _Turn((*history[:-1], asked), day, TurnCalls(self.llm))
        return GroundedReplyStream(self._run(turn))

    # -- the turn ------------------------------------------------------------------------

    async def _run(self, turn: _Turn) -> AsyncIterator[str | Reply]:
        started = time.perf_counter()
        heuristic = heuristic_plan(turn.history, turn.today)
        if not heuristic.search:  # small talk: nothing to retrieve, draft or verify
            turn.plan = heuristic
            path = "smalltalk"
        else:
            await _together(self._evidence_branch(turn), self._draft_branch(turn))
            await self._verify(turn)
            turn.findings = detect_conflicts(turn.facts, _question(turn))
            plan = turn.plan or heuristic
            if not plan.search and not turn.claims:
                path = "smalltalk"
            elif not turn.facts and not self._usable(turn):
                path = "dont_know"
            else:
                path = "compose"
        async for delta in self._final(turn, path):
            yield delta
        turn.timings["total"] = time.perf_counter() - started
        yield Reply(
            text="".join(turn.text),
            citations=turn.rewriter.citations,
            trace=TurnTrace(
                mode=self.mode,
                today=turn.today.isoformat(),
                queries=tuple(turn.queries),
                passages=turn.book.passages,
                facts=tuple(turn.facts),
                draft=turn.draft,
                claims=tuple(turn.checks),
                conflicts=tuple(f.conflict for f in turn.findings),
                stages=tuple(turn.calls.records),
                timings=dict(turn.timings),
                removed=tuple(turn.guard.removed),
                reply_checks=tuple(turn.reply_checks),
                refinement=turn.refinement,
            ),
            grounded=turn.grounded,
        )

    @staticmethod
    def _supported(turn: _Turn) -> list[ClaimCheck]:
        return [c for c in turn.checks if c.verdict == "SUPPORTS"]

    @classmethod
    def _usable(cls, turn: _Turn) -> list[ClaimCheck]:
        """Supported claims, then refuted ones as the evidence states them (corrections)."""
        fixed = [ClaimCheck(c.correction, "SUPPORTS", c.evidence, f"corrects: {c.claim}")
                 for c in turn.checks if c.verdict == "REFUTES" and c.correction]
        return cls._supported(turn) + fixed

    @staticmethod
    def _refuted(turn: _Turn) -> list[tuple[str, list[str], list[str]]]:
        """``(claim, wrong values, right values)`` of each refuted claim, for the guard."""
        out = []
        question = turn.history[-1].content
        for check in turn.checks:
            if check.verdict != "REFUTES":
                continue
            focus = focus_of(check.claim, question)
            right = [s for s in key_spans(check.correction) if not states(s, check.claim)]
            wrong = [s for s in focus if not (check.correction and states(s, check.correction))]
            out.append((check.claim, wrong, right))
        return out

    async def _lead(self, turn: _Turn, block: Block) -> ClaimCheck | None:
        """Fast mode's first sentence: a verified claim that answers something, or none.

        The first claim stage 5 judged SUPPORTS as written, with a value the question did not
        give; else the first correction (a refuted claim with the evidence's value put in),
        once a cloze call on the same evidence block has SUPPORTED the corrected sentence
        itself (the closed-book draft is usually wrong, so most answers are corrections).
        Never when sources disagree: both sides go together, in the composed reply.
        """
        if turn.findings:
            return None
        question = turn.history[-1].content
        for check in turn.checks:
            if (check.verdict == "SUPPORTS" and check.evidence
                    and focus_of(check.claim, question)):
                return check
        for check in turn.checks:
            if (check.verdict == "REFUTES" and check.correction and check.evidence
                    and focus_of(check.correction, question)):
                [again] = await check_batch(
                    turn.calls, [check.correction], [check.evidence], turn.book,
                    block.answer + block.extra, turn.today, question=question, stage="check")
                turn.reply_checks.append(again)
                return again if again.verdict == "SUPPORTS" and again.evidence else None
        return None

    async def _evidence_branch(self, turn: _Turn) -> None:
        """Stages 1-2."""
        started = time.perf_counter()
        use_llm = self.mode == "full" or len(turn.history) > 1
        turn.plan = await plan_query(turn.calls, turn.history, turn.today, use_llm=use_llm)
        turn.timed("query", started)
        if not turn.plan.search:
            return
        started = time.perf_counter()
        turn.answer_passages = await self._search(turn, turn.plan.query, self.k,
                                                  turn.plan.time_intent, "answer")
        turn.timed("retrieve", started)
        started = time.perf_counter()
        if self.mode == "full":
            facts = await extract_facts(turn.calls, _question(turn), turn.book,
                                        turn.answer_passages, turn.today, self.scorer)
            turn.facts = [f for f in facts if _names_only_its_source(f)]
        else:
            turn.selections = await asyncio.to_thread(
                partial(select_sentences, opener=True), _question(turn), turn.answer_passages,
                self.scorer)
            turn.facts = facts_of(turn.selections)
        turn.timed("facts", started)

    async def _draft_branch(self, turn: _Turn) -> None:
        """Stages 3-4."""
        started = time.perf_counter()
        if self.mode == "full":
            turn.draft = await draft_answer(turn.calls, turn.history, turn.today)
            turn.timed("draft", started)
            started = time.perf_counter()
            turn.claims = await split_claims(turn.calls, turn.history, turn.draft, turn.today)
            turn.timed("claims", started)
        else:
            turn.claims = await draft_claims(turn.calls, turn.history, turn.today)
            turn.draft = " ".join(turn.claims)
            turn.timed("draft+claims", started)

    async def _search(self, turn: _Turn, query: str, k: int, intent: str, purpose: str
                      ) -> list[Evidence]:
        turn.queries.append(SearchQuery(query, intent, purpose))
        hits = await asyncio.to_thread(self.index.search, query, k, time_intent=intent)
        found = [to_evidence(h) for h in hits]
        for evidence in found:
            turn.book.add(evidence)
        return found

    async def _verify(self, turn: _Turn) -> None:
        """Stage 5: evidence per claim, then verdicts."""
        if not turn.claims:
            return
        started = time.perf_counter()
        for claim in turn.claims:
            turn.claim_evidence.append(await self._search(
                turn, claim, self.claim_k, time_intent_of(claim, turn.today), "verify"))
        question = turn.history[-1].content
        if self.mode == "full" and self.verifier == "legacy":
            turn.checks = await verify_each(turn.calls, turn.claims, turn.claim_evidence,
                                            turn.book, turn.today)
        elif self.mode == "full":
            turn.checks = await check_each(turn.calls, turn.claims, turn.claim_evidence,
                                           turn.book, turn.today, self.scorer,
                                           question=question)
        elif self.verifier == "legacy":
            block = await self._fast_block(turn)
            turn.checks = await verify_batch(turn.calls, turn.claims, turn.claim_evidence,
                                             turn.book, block.answer + block.extra,
                                             block.shown, turn.today)
        else:
            block = await self._fast_block(turn)
            turn.checks = await check_batch(turn.calls, turn.claims, turn.claim_evidence,
                                            turn.book, block.answer + block.extra, turn.today,
                                            question=question)
        turn.timed("verify", started)

    async def _fast_block(self, turn: _Turn) -> Block:
        """The fast mode's evidence block, built once per turn (see :class:`Block`)."""
        if turn.block is None:
            turn.block = await asyncio.to_thread(self._build_block, turn)
        return turn.block

    def _build_block(self, turn: _Turn) -> Block:
        question = turn.history[-1].content
        return evidence_block(turn.selections, [hidden(c, question) for c in turn.claims],
                              turn.claim_evidence, turn.book, self.scorer)

    # -- the final stage -----------------------------------------------------------------

    async def _final(self, turn: _Turn, path: str) -> AsyncIterator[str]:
        """Stages 6-7, small talk, or "I don't know", streamed through guard and rewriter."""
        started = time.perf_counter()
        conversation = [m.content for m in turn.history] + [turn.today.isoformat()]
        if path == "dont_know":
            turn.grounded = False
            text = dont_know(turn.history[-1].content, turn.answer_passages)
            yield turn.emit(turn.rewriter.rewrite(text))
            turn.timed("compose", started)
            return
        if path == "smalltalk":
            turn.guard = SentenceGuard(conversation)
            async for delta in self._streamed(
                turn, "compose", smalltalk_messages(turn.history, turn.today), 80
            ):
                yield delta
            turn.timed("compose", started)
            return
        supported = self._usable(turn)
        refuted = self._refuted(turn)
        said = [m.content for m in turn.history[:-1] if m.role == "assistant"]
        conflicts = conflict_entries(turn.findings, turn.facts, turn.book)
        evidence = [f.text for f in turn.facts] + [c.claim for c in supported]
        if self.mode == "full":
            note_list = notes(turn.facts, supported, turn.book)
            allowed = {int(n) for note in note_list for n in re.findall(r"\d+", note["cite"])}
            turn.rewriter = CitationRewriter(_lookup(turn.book, allowed))
            turn.guard = SentenceGuard(
                [*evidence, *conversation],
                [(int(n), note["text"]) for note in note_list
                 for n in re.findall(r"\d+", note["cite"])[:1]], refuted, said)
            composed = await turn.calls.text(
                "compose", compose_messages(turn.history, note_list, conflicts, turn.today),
                max_tokens=300)
            turn.timed("compose", started)
            started = time.perf_counter()
            refined = await self._refined(turn, composed)
            if not refined.strip():  # no usable rewrite: the composed reply goes on
                refined = turn.guard.feed(composed) + turn.guard.finish()
            turn.timed("refine", started)
            cited = [e for e in turn.book.passages if turn.book.number(e) in allowed]
            entries = [passage_entry(turn.book.number(e), e) for e in cited]
            async for delta in self._checked(turn, refined, entries):
                yield delta
        else:
            block = await self._fast_block(turn)
            lead = await self._lead(turn, block)
            allowed = {int(entry["number"]) for entry in block.answer}
            allowed |= {turn.book.number(e) for c in supported for e in c.evidence[:2]}
            allowed |= {turn.book.number(e) for e in (lead.evidence[:1] if lead else ())}
            turn.rewriter = CitationRewriter(_lookup(turn.book, allowed))
            turn.guard = SentenceGuard(
                [*(entry["text"] for entry in block.answer), *evidence, *conversation],
                [(int(entry["number"]), entry["text"]) for entry in block.answer]
                + [(turn.book.number(c.evidence[0]), c.claim) for c in supported
                   if c.evidence], refuted, said, [lead.claim] if lead else [])
            if lead is not None:
                # Released before the composer starts: this very sentence has been verified
                # against this very evidence (stage 5, or the lead's own cloze call for a
                # correction), so the answer shows while the rest is written and checked.
                claim = lead.claim.strip()
                stop = claim[-1] if claim[-1] in ".!" else "."
                yield turn.emit(turn.rewriter.feed(
                    f"{claim.rstrip('.!')} {cite(turn.book, lead.evidence[:1])}{stop}"))
            messages = compose_fast_messages(turn.history, block.answer, supported, turn.book,
                                             conflicts, turn.today,
                                             begun=lead.claim if lead else "")
            composed = await self._guarded(turn, "compose+refine", messages, 300)
            turn.timed("compose+refine", started)
            async for delta in self._checked(turn, composed, block.answer + block.extra):
                yield delta
        if not "".join(turn.text).strip():  # every sentence withheld: quote the evidence
            fallback = extractive_reply(turn.facts, self._supported(turn), turn.book)
            yield turn.emit(turn.rewriter.feed(fallback))
        for finding in turn.findings:
            i, j = finding.conflict.facts
            pair = (turn.book.number(turn.facts[i].source),
                    turn.book.number(turn.facts[j].source))
            if not stated(finding, turn.rewriter.raw, pair):
                note = turn.rewriter.feed("\n\n" + conflict_note(finding, pair))
                yield turn.emit(note)
        turn.rewriter.finish()

    async def _refined(self, turn: _Turn, composed: str) -> str:
        """Full mode's stage 7: the rewrite through the guard, or ``""`` to keep ``composed``.

        Sets ``turn.refinement``. The ``feedback`` way rewrites only when a criterion scored
        below 100, and keeps the composed reply when the scores could not be read (as
        WikiChat's implementation does). The rewrite, without the ``<reply>`` tags a model may
        copy from its prompt, goes through the guard whole (it is not streamed: stage 8
        checks it before release).
        """
        if self.refine == "plain":
            return await self._rewrite(
                turn, composed, "plain", (), refine_messages(turn.history, composed, turn.today))
        feedback = await score_reply(turn.calls, turn.history, composed, turn.today)
        if feedback is None:
            turn.refinement = Refinement("feedback",
                                         note="feedback unusable: composed reply kept",
                                         composed=composed, refined=composed)
            return ""
        if not needs_rewrite(feedback):
            turn.refinement = Refinement("feedback", feedback,
                                         note="every criterion scored 100: composed reply kept",
                                         composed=composed, refined=composed)
            return ""
        return await self._rewrite(
            turn, composed, "feedback", feedback,
            feedback_messages(turn.history, composed, turn.today, feedback))

    @staticmethod
    async def _rewrite(turn: _Turn, composed: str, way: str,
                       feedback: Sequence[CriterionFeedback], messages: list[Message]) -> str:
        """The ``refine`` call's text through the guard (``""``: keep ``composed``)."""
        rewrite = clean_rewrite(await turn.calls.text("refine", messages, max_tokens=300))
        refined = turn.guard.feed(rewrite) + turn.guard.finish()
        if not refined.strip():
            note = "rewrite empty or withheld: composed reply kept"
        elif same_text(rewrite, composed):
            note = "rewrite identical to the composed reply"
        else:
            note = ""
        turn.refinement = Refinement(way, tuple(feedback), rewritten=not note, note=note,
                                     composed=composed,
                                     refined=composed if note else refined)
        return refined

    async def _checked(self, turn: _Turn, text: str, block: list[dict[str, str]]
                       ) -> AsyncIterator[str]:
        """Stage 8 (:mod:`freshwiki.chat.reply_check`), then release what it kept."""
        started = time.perf_counter()
        if self.verifier == "cloze":
            # After a lead the answer is already shown: what follows must be SUPPORTED.
            checked = await check_reply(turn.calls, text, turn.history[-1].content,
                                        turn.book, block, turn.today, strict=bool(turn.text))
            turn.guard.removed.extend(checked.removed)
            turn.reply_checks.extend(checked.checks)
            text = checked.text
        turn.timed("check", started)
        if turn.text and text.strip():  # after fast mode's lead sentence
            text = " " + text.lstrip()
        out = turn.rewriter.feed(text)
        if out:
            yield turn.emit(out)

    @staticmethod
    async def _guarded(turn: _Turn, stage: str, messages: list[Message], max_tokens: int
                       ) -> str:
        """A call's whole text through the guard (held for stage 8, not streamed)."""
        out = []
        async for delta in turn.calls.stream(stage, messages, max_tokens=max_tokens):
            out.append(turn.guard.feed(delta))
        out.append(turn.guard.finish())
        return "".join(out)

    @staticmethod
    async def _streamed(turn: _Turn, stage: str, messages: list[Message], max_tokens: int
                        ) -> AsyncIterator[str]:
        """Stream a call through the guard (whole sentences) and the rewriter (markers)."""
        async for delta in turn.calls.stream(stage, messages, max_tokens=max_tokens):
            out = turn.rewriter.feed(turn.guard.feed(delta))
            if out:
                yield turn.emit(out)
        out = turn.rewriter.feed(turn.guard.finish())
        if out:
            yield turn.emit(out)


async def _together(*branches: Coroutine[Any, Any, None]) -> None:
    """Run the branches concurrently; the first failure cancels the others and is raised."""
    try:
        async with asyncio.TaskGroup() as group:
            for branch in branches:
                group.create_task(branch)
    except BaseExceptionGroup as failures:
        raise failures.exceptions[0] from None


def _question(turn: _Turn) -> str:
    """What facts are selected for: the user's words, plus the rewritten query if any."""
    message = turn.history[-1].content.strip()
    plan = turn.plan
    if plan is not None and plan.query and plan.query != message:
        return f"{message} ({plan.query})"
    return message


def _names_only_its_source(fact: Fact) -> bool:
    """Whether a model-written fact names only what its passage names (full mode, stage 2).

    Asked "Who won the 2024 Russian presidential election?" and shown the US election's
    lead, the model wrote the "fact" "Joe Biden won the 2024 Russian presidential election";
    from a passage on Tadeu Schmidt, "Antoni Malczyk's brother is named Tadeu Schmidt". Most
    of their words are in the passage, but one name of each is not ("Russian", "Antoni
    Malczyk"): every name, date and number of a fact must be.
    """
    source = f"{fact.source.title}. {fact.source.text}"
    return all(states(span, source) for span in key_spans(fact.text))


def _nowhere(number: int) -> Evidence | None:
    """The lookup of a reply that may cite nothing."""
    return None


def _lookup(book: PassageBook, allowed: set[int]) -> Callable[[int], Evidence | None]:
    return lambda n: book.get(n) if n in allowed else None


def _parse_day(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        raise ChatError(f"today must be an ISO date (YYYY-MM-DD), got {text!r}") from None
