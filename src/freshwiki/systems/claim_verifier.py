"""``claim-verifier``: one of the chat's claim verifiers, given a claim and its passage.

Not a question-answering system: it is how the ``claim_verification`` benchmark runs the
chat's verifiers through the runner, so their verdicts are stored, resumed and exported like
any answer. The task's sample carries the claim (``input``), the question it answered
(``query``) and the one passage to judge it against (``documents[0]``); the output's text is
the verdict (SUPPORTS, REFUTES or NOT ENOUGH INFO), its trace the rationale and correction.

The four verifiers are the chat's, called as the chat calls them for one claim:

* ``cloze-full`` / ``legacy-full``: the full mode's per-claim check (cloze reading,
  :func:`freshwiki.chat.verify.check_each`; the earlier verdict prompt,
  :func:`freshwiki.chat.verify_legacy.verify_each`);
* ``cloze-fast`` / ``legacy-fast``: the fast mode's one-call check over an evidence block
  built from the passage's sentences chosen for the question (``check_batch`` /
  ``verify_batch``).

Options: ``verifier`` (default ``cloze-fast``) and ``today`` (ISO date the claims are judged
on; default the real date, so pin it for a run you will resume another day).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from freshwiki.chat import ClaimCheck, Evidence, PassageBook, TurnCalls
from freshwiki.llm import LLM, Usage
from freshwiki.seams import Output, System, Task
from freshwiki.systems._options import SystemSetupError, read_options

if TYPE_CHECKING:
    from freshwiki.chat.facts import EmbeddingScorer
    from freshwiki.config import Settings

VERIFIERS = ("cloze-fast", "legacy-fast", "cloze-full", "legacy-full")
"""The verifier names, as ``--option verifier=NAME`` takes them."""
DEFAULTS: Mapping[str, Any] = {"verifier": "cloze-fast", "today": ""}


class ClaimVerifierSystem:
    """Judges each task's claim against its one passage with one chat verifier.

    Args:
        llm: The model the verifier calls.
        verifier: One of :data:`VERIFIERS`.
        today: The date the claims are judged on.
        scorer: A sentence scorer for the cloze check and the evidence block (tests); default
            the index's sentence embedder, loaded on first use.
    """

    name = "claim-verifier"

    def __init__(self, llm: LLM, *, verifier: str = "cloze-fast",
                 today: dt.date | None = None, scorer: EmbeddingScorer | None = None) -> None:
        if verifier not in VERIFIERS:
            raise SystemSetupError(f"system 'claim-verifier': no verifier {verifier!r}",
                                   hint=f"pass --option verifier= one of {', '.join(VERIFIERS)}.")
        self.llm = llm
        self.verifier = verifier
        self.today = today or dt.date.today()
        self._scorer = scorer

    def describe(self) -> Mapping[str, Any]:
        """The verifier and the date: what decides the calls."""
        return {"verifier": self.verifier, "today": self.today.isoformat()}

    def _sentence_scorer(self) -> EmbeddingScorer:
        if self._scorer is None:
            from freshwiki.chat.facts import EmbeddingScorer
            from freshwiki.retrieval import Embedder

            self._scorer = EmbeddingScorer(Embedder())
        return self._scorer

    async def respond(self, task: Task) -> Output:
        """The verdict on ``task.sample.input`` against ``task.sample.documents[0]``."""
        if not task.sample.documents:
            raise SystemSetupError("system 'claim-verifier': the task has no passage",
                                   hint="run it on the claim_verification benchmark.")
        doc = task.sample.documents[0]
        passage = Evidence(passage_id=doc.source or doc.title, title=doc.title, section=(),
                           text=doc.text)
        calls = TurnCalls(self.llm)
        started = time.perf_counter()
        check = await self._check(calls, task.sample.input, task.query, passage)
        seconds = time.perf_counter() - started
        usage = Usage(prompt_tokens=sum(r.prompt_tokens for r in calls.records),
                      completion_tokens=sum(r.completion_tokens for r in calls.records),
                      cached_prompt_tokens=sum(r.cached_prompt_tokens for r in calls.records))
        hits = sum(r.cache_hit for r in calls.records)
        return Output(
            text=check.verdict, usage=usage, latency_s=seconds,
            cache_hit=bool(calls.records) and hits == len(calls.records),
            model=self.llm.backend.model_id,
            trace={"verdict": check.verdict, "rationale": check.rationale,
                   "correction": check.correction, "seconds": round(seconds, 3),
                   "calls": len(calls.records), "cache_hits": hits})

    async def _check(self, calls: TurnCalls, claim: str, question: str,
                     passage: Evidence) -> ClaimCheck:
        from freshwiki.chat.facts import evidence_block, select_sentences
        from freshwiki.chat.verify import check_batch, check_each, hidden
        from freshwiki.chat.verify_legacy import verify_batch, verify_each

        book = PassageBook()
        book.add(passage)
        if self.verifier == "legacy-full":
            [check] = await verify_each(calls, [claim], [[passage]], book, self.today)
            return check
        scorer = self._sentence_scorer()
        if self.verifier == "cloze-full":
            [check] = await check_each(calls, [claim], [[passage]], book, self.today, scorer,
                                       question=question)
            return check
        selections = select_sentences(question, [passage], scorer)
        block = evidence_block(selections, [hidden(claim, question)], [[passage]], book, scorer)
        if self.verifier == "legacy-fast":
            [check] = await verify_batch(calls, [claim], [[passage]], book,
                                         block.answer + block.extra, block.shown, self.today)
            return check
        [check] = await check_batch(calls, [claim], [[passage]], book,
                                    block.answer + block.extra, self.today, question=question)
        return check

    async def aclose(self) -> None:
        """Holds nothing to close; the LLM belongs to the caller."""


def claim_verifier_system(llm: LLM, settings: Settings, options: Mapping[str, Any]) -> System:
    """``claim-verifier``: options verifier (one of :data:`VERIFIERS`) and today (ISO date).

    Raises:
        SystemSetupError: an unknown option or verifier, or a date that is not ISO.
    """
    values = read_options("claim-verifier", options, DEFAULTS)
    today = None
    if values["today"]:
        try:
            today = dt.date.fromisoformat(str(values["today"]))
        except ValueError as exc:
            raise SystemSetupError(
                f"system 'claim-verifier': today={values['today']!r} is not an ISO date",
                hint="pass e.g. --option today=2026-11-24.") from exc
    return ClaimVerifierSystem(llm, verifier=str(values["verifier"]), today=today)
