"""``GroundedChat``: the grounded chat, one turn at a time, in one of two modes.

``checked`` (the default) answers the way retrieve-then-answer does and then checks every
sentence before it is shown (:mod:`freshwiki.chat.checked`)::

    plan ─► retrieve k ─► subject covered? ── no ─► "I don't know" (no model call)
                          │ yes
                          ▼
             answer call (passages + question) ─► rules per sentence (copied? values stated
             with their subject? an earlier reply's sentence for another question?) ─► one
             check call on the same prefix (cloze reading of each value, the question's
             premises, another passage of the same article) ─► release / correct / drop each
             sentence ─► premise note, conflict note ─► nothing released: "I don't know",
             naming the passages found, then a sentence of theirs that touches the question
             and is new to the conversation, quoted (if one is)

Two calls for a first question (a follow-up adds the query call that resolves it), both on
the same system prompt and passages, so llama.cpp evaluates the evidence once. Sentences are
released as soon as they have passed, in the answer's order, in word-sized pieces: a
sentence copied word for word from its passage needs no model call and can be released while
the answer is still being written.

``wikichat`` is WikiChat's staged pipeline (the paper's reference, for figures comparable with
its tables)::

    ┌ 1 query (plan) ─► retrieve k ─► 2 facts ┐   two branches, run concurrently
    └ 3 draft ───────► 4 claims ──────────────┘
          ─► 5 retrieve per claim + verify ─► conflicts ─► 6 compose ─► 7 refine
          ─► sentence guard ─► 8 reply check ─► citation renumbering ─► reply

Stage 2 writes its summaries with the model, as the paper does (``facts="llm"``, kept only when
faithful to their passage); ``facts="extractive"`` copies the passages' best sentences
instead. Stage 7 is WikiChat's refinement with feedback (``refine="feedback"``, see
:mod:`freshwiki.chat.refine`); ``refine="plain"`` is one rewrite call without scores. Stage 8
(:mod:`freshwiki.chat.reply_check`) withholds reply sentences that echo the question or that
their evidence refutes. A correction of a refuted claim is used only once it has passed the
same check itself.

Mode names of earlier versions still work, with a notice: ``fast`` is ``checked``, ``full``
is ``wikichat`` (:func:`resolve_mode`).

Outcomes: a cited reply (``grounded=True``); small talk (no retrieval wanted, no claim): a
short polite reply without facts or citations (``grounded=True``: it claims nothing); "I
don't know", naming the closest passages (``grounded=False``, a template, not model text).

Every turn returns a :class:`TurnTrace`: queries, all passages (by their turn number, which is
also what the prompts call them), facts, the draft (checked mode: the answer before its
check), claims and sentence checks with verdicts and evidence, conflicts, one
:class:`StageRecord` per LLM call, seconds per stage (``first_text``: until the first
released text), and withheld sentences. LLM-call latencies include waiting for the client's
concurrency slot (one at a time for local models).
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

from freshwiki.chat import checked as ck
from freshwiki.chat._calls import TurnCalls
from freshwiki.chat._evidence import (
    PassageBook,
    SearchIndex,
    content_words,
    neutralise,
    to_evidence,
)
from freshwiki.chat._types import (
    ChatMessage,
    ClaimCheck,
    Conflict,
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
    compose_messages,
    conflict_entries,
    dont_know,
    extractive_reply,
    notes,
    smalltalk_messages,
)
from freshwiki.chat.conflicts import Finding, conflict_note, detect_conflicts, stated
from freshwiki.chat.conversations import check_message
from freshwiki.chat.coverage import coverage
from freshwiki.chat.draft import draft_answer
from freshwiki.chat.facts import (
    EmbeddingScorer,
    LexicalScorer,
    Selection,
    SentenceScorer,
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
from freshwiki.chat.verify import check_each_corrected, focus_of, key_spans
from freshwiki.chat.verify import stated as states
from freshwiki.chat.verify_legacy import verify_each
from freshwiki.corpus import numbers_in, split_sentences
from freshwiki.errors import FreshwikiError
from freshwiki.llm import LLM, Message
from freshwiki.retrieval import HybridIndex

MODES: tuple[Mode, ...] = ("checked", "wikichat")
MODE_ALIASES: dict[str, Mode] = {"fast": "checked", "full": "wikichat"}
DEFAULT_K: dict[Mode, int] = {"checked": 3, "wikichat": 5}
"""Passages retrieved for the question. The checked mode reads whole passages in one call:
three hold the answer as often as five on 245 development questions (the asked article was
within the first three for 242, fourth or fifth for 1), cost a third less prompt, and a
small model picks the right sentence out of fewer ("When did the Israel-Hamas war begin, and
where is it being fought?" got both parts from three passages, the date alone from five).
WikiChat's pipeline summarises each passage first, as the paper does with five."""
"""Names of earlier versions: ``fast`` answered through a fused draft-verify-compose chain,
``full`` ran every stage on its own (today's ``wikichat``)."""
Verifier = Literal["cloze", "legacy"]
VERIFIERS: tuple[Verifier, ...] = ("cloze", "legacy")
FactsWay = Literal["llm", "extractive"]
FACTS_WAYS: tuple[FactsWay, ...] = ("llm", "extractive")


class ChatError(FreshwikiError):
    """A chat turn cannot start (empty conversation, bad date, bad option)."""


def resolve_mode(name: str) -> tuple[Mode, str]:
    """The mode a name means, and a notice when it is an old name (``""`` otherwise).

    Raises:
        ChatError: an unknown name.
    """
    if name in MODES:
        return name, ""
    if name in MODE_ALIASES:
        mode = MODE_ALIASES[name]
        what = ("answers first, then checks each sentence" if mode == "checked"
                else "WikiChat's staged pipeline")
        return mode, f"mode {name!r} is now called {mode!r} ({what})"
    raise ChatError(f"unknown chat mode {name!r}",
                    hint="use 'checked' (the default) or 'wikichat' "
                         "('fast' and 'full' are their old names).")


@dataclass
class _Turn:
    """The state of one turn while it runs (the engine itself is shared and stateless)."""

    history: tuple[ChatMessage, ...]
    today: dt.date
    calls: TurnCalls
    started: float = field(default_factory=time.perf_counter)
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
    corrections: list[ClaimCheck] = field(default_factory=list)
    reply_checks: list[ClaimCheck] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    rewriter: CitationRewriter = field(default_factory=lambda: CitationRewriter(_nowhere))
    guard: SentenceGuard = field(default_factory=lambda: SentenceGuard(()))
    grounded: bool = True
    text: list[str] = field(default_factory=list)
    refinement: Refinement | None = None
    removed: list[str] = field(default_factory=list)

    def timed(self, stage: str, started: float) -> None:
        """Add the seconds since ``started`` to ``stage``."""
        self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - started

    def emit(self, text: str) -> str:
        """Keep ``text`` as part of the reply and return it (for ``yield``)."""
        if text and "first_text" not in self.timings and text.strip():
            self.timings["first_text"] = time.perf_counter() - self.started
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
    """Answers from the corpus; see the module docstring.

    One engine serves any number of conversations and concurrent turns: all per-turn
    state lives in the turn.

    Args:
        llm: The model for every call.
        index: The passages to answer from (a :class:`HybridIndex`, or anything with its
            ``search``).
        mode: ``checked`` (answer, then check; the default) or ``wikichat`` (the staged
            pipeline). ``fast`` and ``full``, the old names, are accepted (see
            :func:`resolve_mode`; :attr:`notice` says so).
        k: Passages retrieved for the question (default: :data:`DEFAULT_K` of the mode).
        today: ISO date used when a call gives none (default: the real date, per turn).
        claim_k: Passages retrieved per claim (``wikichat``; default 3).
        scorer: How sentences are scored for relevance (default: the index's embedder, else
            word overlap).
        verifier: ``wikichat``'s stage 5: ``cloze`` (the model reads values off evidence
            sentences, rules compare them with the claim; :mod:`freshwiki.chat.verify`) or
            ``legacy`` (the model's own verdict on whole passages;
            :mod:`freshwiki.chat.verify_legacy`).
        refine: ``wikichat``'s stage 7: ``feedback`` (scores and feedback per criterion, then
            a rewrite applying them) or ``plain`` (one rewrite call, no scores).
        facts: ``wikichat``'s stage 2: ``llm`` (summaries written by the model, as the paper
            does) or ``extractive`` (the passages' best sentences, copied).

    Raises:
        ChatError: for an unknown mode, verifier, refine or facts way, ``k`` or ``claim_k``
            below 1, or a bad date.
    """

    def __init__(
        self,
        llm: LLM,
        index: SearchIndex,
        *,
        mode: str = "checked",
        k: int | None = None,
        today: str | None = None,
        claim_k: int | None = None,
        scorer: SentenceScorer | None = None,
        verifier: Verifier = "cloze",
        refine: RefineWay = "feedback",
        facts: FactsWay = "llm",
    ) -> None:
        resolved, self.notice = resolve_mode(mode)
        k = DEFAULT_K[resolved] if k is None else k
        if k < 1 or (claim_k is not None and claim_k < 1):
            raise ChatError(f"k and claim_k must be at least 1, got k={k}, claim_k={claim_k}")
        if verifier not in VERIFIERS:
            raise ChatError(f"unknown verifier {verifier!r}", hint="use 'cloze' or 'legacy'.")
        if refine not in REFINE_WAYS:
            raise ChatError(f"unknown refine way {refine!r}", hint="use 'feedback' or 'plain'.")
        if facts not in FACTS_WAYS:
            raise ChatError(f"unknown facts way {facts!r}", hint="use 'llm' or 'extractive'.")
        self.verifier: Verifier = verifier
        self.refine: RefineWay = refine
        self.facts: FactsWay = facts
        self.llm = llm
        self.index = index
        self.mode: Mode = resolved
        self.k = k
        self.claim_k = claim_k or 3
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
        heuristic = heuristic_plan(turn.history, turn.today)
        if not heuristic.search:  # small talk: nothing to retrieve, answer or check
            turn.plan = heuristic
            async for delta in self._smalltalk(turn):
                yield delta
        elif self.mode == "checked":
            async for delta in self._checked_turn(turn):
                yield delta
        else:
            async for delta in self._wikichat_turn(turn, heuristic):
                yield delta
        turn.rewriter.finish()
        turn.timings["total"] = time.perf_counter() - turn.started
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
                removed=tuple([*turn.removed, *turn.guard.removed]),
                reply_checks=tuple(turn.reply_checks),
                refinement=turn.refinement,
            ),
            grounded=turn.grounded,
        )

    async def _smalltalk(self, turn: _Turn) -> AsyncIterator[str]:
        started = time.perf_counter()
        conversation = [m.content for m in turn.history] + [turn.today.isoformat()]
        turn.guard = SentenceGuard(conversation)
        async for delta in self._streamed(
            turn, "compose", smalltalk_messages(turn.history, turn.today), 80
        ):
            yield delta
        turn.timed("compose", started)

    # -- checked mode --------------------------------------------------------------------

    async def _checked_turn(self, turn: _Turn) -> AsyncIterator[str]:
        """Answer, then check (see :mod:`freshwiki.chat.checked`)."""
        started = time.perf_counter()
        turn.plan = plan = await plan_query(turn.calls, turn.history, turn.today,
                                            use_llm=len(turn.history) > 1)
        turn.timed("query", started)
        if not plan.search:
            async for delta in self._smalltalk(turn):
                yield delta
            return
        message = turn.history[-1].content.strip()
        # A follow-up's stand-alone form names what "it" was (or the subject carried over
        # from an earlier turn, :func:`~freshwiki.chat.query.carry_subject`): the checks
        # read that.
        question = (plan.query if (plan.how == "llm" or plan.carried) and len(turn.history) > 1
                    else message)
        started = time.perf_counter()
        passages = await self._search(turn, plan.query, self.k, plan.time_intent, "answer")
        turn.answer_passages = passages
        turn.timed("retrieve", started)
        turn.rewriter = CitationRewriter(turn.book.get)
        if not passages:
            yield self._abstain(turn, "no_passages", question, (), ())
            return
        covered = coverage(question, passages)
        if not covered.covered:
            yield self._abstain(turn, "subject", question, covered.missing, passages)
            return
        earlier = ck.earlier_turns(turn.history)
        # The model reads every passage, but a sentence is checked only against the passages
        # about the question's subject: asked what led to the Zoli Cabinet, it copied three
        # sentences of the Guyana-Venezuela crisis, and as copies they were released, cited.
        about = covered.about
        entries = ck.passage_entries(passages, turn.book)
        premises = ck.premise_spans(question, covered)
        checks: list[ck.SentenceCheck] = []
        released = 0
        # The answer streams in; each finished sentence goes through the rules at once, and
        # the ones they settle (copied, or dropped) are released or skipped while the model
        # is still writing, unless a premise is in doubt (its note must come first).
        started = time.perf_counter()
        answer: list[str] = []
        async for delta in turn.calls.stream("answer", ck.answer_messages(
                turn.history, entries, turn.today), max_tokens=ck.ANSWER_TOKENS):
            answer.append(delta)
            if premises:
                continue
            done = ck.split_answer("".join(answer), question)[:-1]  # the last may go on
            for check in done[len(checks):]:
                ck.apply_rules([check], question, about, turn.book, earlier)
                checks.append(check)
            while released < len(checks) and checks[released].status != "pending":
                for piece in self._release(turn, checks[released]):
                    yield piece
                released += 1
        turn.draft = "".join(answer).strip()
        turn.timed("answer", started)
        final = ck.split_answer(turn.draft, question)
        # Sentences seen while the answer was written stand as seen when the finished text
        # splits the same way; from the first that does not (a cut moved as text came in),
        # the finished split is checked instead. Released ones are never taken back.
        same = next((n for n, (early, late) in enumerate(zip(checks, final, strict=False))
                     if early.raw != late.raw), min(len(checks), len(final)))
        checks = checks[:max(same, released)]
        for check in final[len(checks):]:
            ck.apply_rules([check], question, about, turn.book, earlier)
            checks.append(check)
        started = time.perf_counter()
        lines = [*ck.value_lines(checks, question),
                 *ck.premise_lines(question, covered, checks),
                 *ck.other_line(checks, question, about, turn.book)][:ck.MAX_LINES]
        read = await ck.read_lines(turn.calls, entries, turn.today, lines)
        ck.settle(checks, lines, read, question, about, turn.book)
        premise = (ck.refuted_premise(lines, read, question, covered)
                   or ck.opposed_premise(checks, question))
        turn.timed("check", started)
        turn.reply_checks = [c.as_check() for c in checks]
        if premise is not None:
            turn.checks.append(ClaimCheck(
                f"the question assumes {premise.assumed!r}", "REFUTES", (premise.evidence,),
                f"the passage gives {premise.found!r}", correction=premise.found))
            for check in checks[released:]:  # answer sentences built on the false premise
                if check.status in ("released", "corrected") and states(
                        premise.assumed, check.released) and not states(
                        premise.found, check.released):
                    check.status, check.reason = "dropped", "restates the refuted premise"
            if released == 0:
                for piece in self._pieces(turn, ck.premise_note(premise, turn.book) + "."):
                    yield piece
        if released == 0 and premise is None and not ck.answers_asked(checks, question):
            # True sentences about the subject, none of them what was asked ("born on July
            # 5, 1957" for "where was he born?"): the passages do not say it.
            for check in checks:
                if check.status in ("copied", "released", "corrected"):
                    check.status, check.reason = "dropped", ck.OFF_TARGET
            turn.reply_checks = [c.as_check() for c in checks]
        for check in checks[released:]:
            for piece in self._release(turn, check):
                yield piece
        for check in checks:
            if check.status in ("dropped", "abstain"):
                turn.removed.append(check.raw)
        if not "".join(turn.text).strip():
            quoted = ck.fallback_quote(checks, question, turn.book, earlier)
            if quoted is None:
                yield self._abstain(turn, "fact", question, ck.unmentioned(question, passages),
                                    covered.about)
                related = ck.related_quote(question, covered.about, earlier, turn.book)
                if related is not None:
                    turn.reply_checks.append(related.as_check())
                    yield turn.emit(" ")  # the rewriter drops a space its stream starts with
                    for piece in self._release(turn, related):
                        yield piece
                return
            turn.reply_checks.append(quoted.as_check())
            for piece in self._release(turn, quoted):
                yield piece
        for note in self._conflict_notes(turn, checks, lines, read, question, covered.about):
            for piece in self._pieces(turn, note):
                yield piece

    def _release(self, turn: _Turn, check: ck.SentenceCheck) -> list[str]:
        """The pieces to show for a settled sentence (none if it was not released)."""
        if check.status not in ("copied", "released", "corrected") or not check.released:
            return []
        gap = " " if "".join(turn.text).strip() else ""
        return self._pieces(turn, gap + check.released)

    @staticmethod
    def _pieces(turn: _Turn, text: str) -> list[str]:
        """``text`` through the citation rewriter, in word-sized pieces (each emitted)."""
        out = []
        for word in re.findall(r"\s*\S+", text):
            shown = turn.rewriter.feed(word)
            if shown:
                out.append(turn.emit(shown))
        return out

    def _abstain(self, turn: _Turn, reason: Literal["no_passages", "subject", "fact"],
                 question: str, missing: Sequence[str], passages: Sequence[Evidence]) -> str:
        """The "I don't know" reply (a template), emitted whole."""
        turn.grounded = False
        before = [m.content for m in turn.history[:-1] if m.role == "assistant"]
        again = bool(before) and ck.is_abstention(before[-1])
        return turn.emit(ck.abstain_text(reason, question, missing, passages, again=again,
                                         said=before))

    def _conflict_notes(self, turn: _Turn, checks: Sequence[ck.SentenceCheck],
                        lines: Sequence[ck.Line], read: Sequence[str], question: str,
                        about: Sequence[Evidence]) -> list[str]:
        """Notes giving both values when passages about the subject disagree on what was asked.

        Two ways to find a disagreement: the check call's reading of a second passage of the
        same article (names, phrases, anything), and the date and number detector
        (:mod:`freshwiki.chat.conflicts`) over the sentences of the passages about the subject
        that share a word with the question.
        """
        wanted = set(content_words(question))
        turn.facts = [Fact(s.text, e) for e in list(about)[:3]
                      for s in split_sentences(e.text) if wanted & set(content_words(s.text))]
        turn.findings = detect_conflicts(turn.facts, question)
        notes_out = []
        found = ck.disagreement(checks, lines, read)
        if found is not None:
            notes_out.append("\n\n" + ck.disagreement_note(found, turn.book))
            turn.facts += [Fact(found.value, found.evidence), Fact(found.other_value, found.other)]
            turn.findings.append(Finding(
                _conflict(len(turn.facts) - 2, len(turn.facts) - 1, question),
                (found.value, found.other_value), (frozenset(), frozenset())))
            return notes_out
        # A date or number the passages give two ways matters when the reply gave one of
        # them: measured on development questions, a note on two speed records (480 and 444
        # km/h) was added to "On which lake was Donald Campbell killed?".
        said = numbers_in(re.sub(r"\[[\d,;\s]+\]", " ", turn.rewriter.raw))
        turn.findings = [f for f in turn.findings
                         if f.numbers[0] <= said or f.numbers[1] <= said]
        for finding in turn.findings:
            i, j = finding.conflict.facts
            pair = (turn.book.number(turn.facts[i].source), turn.book.number(turn.facts[j].source))
            if not stated(finding, turn.rewriter.raw, pair):
                notes_out.append("\n\n" + conflict_note(finding, pair))
        return notes_out

    # -- wikichat mode -------------------------------------------------------------------

    async def _wikichat_turn(self, turn: _Turn, heuristic: QueryPlan) -> AsyncIterator[str]:
        await _together(self._evidence_branch(turn), self._draft_branch(turn))
        await self._verify(turn)
        turn.findings = detect_conflicts(turn.facts, _question(turn))
        plan = turn.plan or heuristic
        if not plan.search and not turn.claims:
            async for delta in self._smalltalk(turn):
                yield delta
            return
        if not turn.facts and not self._usable(turn):
            turn.grounded = False
            turn.rewriter = CitationRewriter(_nowhere)
            yield turn.emit(turn.rewriter.rewrite(
                dont_know(turn.history[-1].content, turn.answer_passages)))
            return
        async for delta in self._compose_wikichat(turn):
            yield delta

    @staticmethod
    def _supported(turn: _Turn) -> list[ClaimCheck]:
        return [c for c in turn.checks if c.verdict == "SUPPORTS"]

    @classmethod
    def _usable(cls, turn: _Turn) -> list[ClaimCheck]:
        """Supported claims, then corrections of refuted ones that passed their own check."""
        return cls._supported(turn) + list(turn.corrections)

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

    async def _evidence_branch(self, turn: _Turn) -> None:
        """Stages 1-2."""
        started = time.perf_counter()
        turn.plan = await plan_query(turn.calls, turn.history, turn.today, use_llm=True)
        turn.timed("query", started)
        if not turn.plan.search:
            return
        started = time.perf_counter()
        turn.answer_passages = await self._search(turn, turn.plan.query, self.k,
                                                  turn.plan.time_intent, "answer")
        turn.timed("retrieve", started)
        started = time.perf_counter()
        if self.facts == "llm":
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
        turn.draft = await draft_answer(turn.calls, turn.history, turn.today)
        turn.timed("draft", started)
        started = time.perf_counter()
        turn.claims = await split_claims(turn.calls, turn.history, turn.draft, turn.today)
        turn.timed("claims", started)

    async def _search(self, turn: _Turn, query: str, k: int, intent: str, purpose: str
                      ) -> list[Evidence]:
        turn.queries.append(SearchQuery(query, intent, purpose))
        hits = await asyncio.to_thread(self.index.search, query, k, time_intent=intent)
        found = [to_evidence(h) for h in hits]
        for evidence in found:
            turn.book.add(evidence)
        return found

    async def _verify(self, turn: _Turn) -> None:
        """Stage 5: evidence per claim, verdicts, then the corrections' own check."""
        if not turn.claims:
            return
        started = time.perf_counter()
        for claim in turn.claims:
            turn.claim_evidence.append(await self._search(
                turn, claim, self.claim_k, time_intent_of(claim, turn.today), "verify"))
        question = turn.history[-1].content
        if self.verifier == "legacy":
            turn.checks = await verify_each(turn.calls, turn.claims, turn.claim_evidence,
                                            turn.book, turn.today)
        else:
            # A refuted claim's correction ("... won by Australia") is itself a claim: it is
            # used only once the same check supports it (it used to be handed on unchecked).
            judged = await check_each_corrected(
                turn.calls, turn.claims, turn.claim_evidence, turn.book, turn.today,
                self.scorer, question=question)
            turn.checks = [check for check, _ in judged]
            turn.corrections = [
                ClaimCheck(again.claim, "SUPPORTS", again.evidence, f"corrects: {check.claim}")
                for check, again in judged if again is not None and again.verdict == "SUPPORTS"]
        turn.timed("verify", started)

    async def _compose_wikichat(self, turn: _Turn) -> AsyncIterator[str]:
        """Stages 6-8, streamed through guard and rewriter."""
        started = time.perf_counter()
        conversation = [m.content for m in turn.history] + [turn.today.isoformat()]
        supported = self._usable(turn)
        refuted = self._refuted(turn)
        said = [m.content for m in turn.history[:-1] if m.role == "assistant"]
        conflicts = conflict_entries(turn.findings, turn.facts, turn.book)
        evidence = [f.text for f in turn.facts] + [c.claim for c in supported]
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
        if not "".join(turn.text).strip():
            # Every sentence withheld: quote the evidence, through the same check (a fact
            # of stage 2 is the model's summary, not the passage's words).
            fallback = extractive_reply(turn.facts, self._supported(turn), turn.book)
            async for delta in self._checked(turn, fallback.removeprefix("From the sources: "),
                                             entries):
                yield delta
        if not "".join(turn.text).strip():
            turn.grounded = False
            yield turn.emit(turn.rewriter.rewrite(
                dont_know(turn.history[-1].content, turn.answer_passages)))
            return
        for finding in turn.findings:
            i, j = finding.conflict.facts
            pair = (turn.book.number(turn.facts[i].source),
                    turn.book.number(turn.facts[j].source))
            if not stated(finding, turn.rewriter.raw, pair):
                note = turn.rewriter.feed("\n\n" + conflict_note(finding, pair))
                yield turn.emit(note)

    async def _refined(self, turn: _Turn, composed: str) -> str:
        """Stage 7: the rewrite through the guard, or ``""`` to keep ``composed``.

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
            checked = await check_reply(turn.calls, text, turn.history[-1].content,
                                        turn.book, block, turn.today)
            turn.guard.removed.extend(checked.removed)
            turn.reply_checks.extend(checked.checks)
            text = checked.text
        turn.timed("check", started)
        out = turn.rewriter.feed(text)
        if out:
            yield turn.emit(out)

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


def _conflict(i: int, j: int, question: str) -> Conflict:
    """The trace's record of a disagreement between facts ``i`` and ``j``."""
    return Conflict(about=f"the answer to {question.strip()!r}", facts=(i, j))


def _question(turn: _Turn) -> str:
    """What facts are selected for: the user's words, plus the rewritten query if any."""
    message = turn.history[-1].content.strip()
    plan = turn.plan
    if plan is not None and plan.query and plan.query != message:
        return f"{message} ({plan.query})"
    return message


def _names_only_its_source(fact: Fact) -> bool:
    """Whether a model-written fact names only what its passage names (wikichat, stage 2).

    Asked "Who won the 2024 Russian presidential election?" and shown the US election's
    lead, the model wrote the "fact" "Joe Biden won the 2024 Russian presidential election";
    from a passage on Tadeu Schmidt, "Antoni Malczyk's brother is named Tadeu Schmidt". Most
    of their words are in the passage, but one name of each is not ("Russian", "Antoni
    Malczyk"): every name, date and number of a fact must be.
    """
    source = fact.source.titled
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
