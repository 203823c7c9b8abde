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
  ``verify_batch``);
* ``probe``: the learned verifier head (:mod:`freshwiki.chat.probe`): no generation, a
  logistic probe on the model's state after the passage, the question and the claim. It reads
  ``--option probe=PATH`` (default the committed probe of the default model) and refuses a
  model whose features it was not trained on when the system is built.

Options: ``verifier`` (default ``cloze-fast``), ``today`` (ISO date the claims are judged
on; default the real date, so pin it for a run you will resume another day) and ``probe``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from freshwiki.chat import ClaimCheck, Evidence, PassageBook, TurnCalls
from freshwiki.chat.probe import ProbeError, VerifierProbe, probe_check
from freshwiki.llm import LLM, Usage
from freshwiki.seams import Output, System, Task
from freshwiki.systems._options import SystemSetupError, read_options

if TYPE_CHECKING:
    from freshwiki.chat.facts import EmbeddingScorer
    from freshwiki.config import Settings

VERIFIERS = ("cloze-fast", "legacy-fast", "cloze-full", "legacy-full", "probe")
"""The verifier names, as ``--option verifier=NAME`` takes them."""
DEFAULTS: Mapping[str, Any] = {"verifier": "cloze-fast", "today": "", "probe": ""}


class ClaimVerifierSystem:
    """Judges each task's claim against its one passage with one chat verifier.

    Args:
        llm: The model the verifier calls.
        verifier: One of :data:`VERIFIERS`.
        today: The date the claims are judged on.
        scorer: A sentence scorer for the cloze check and the evidence block (tests); default
            the index's sentence embedder, loaded on first use.
        probe: The trained probe of the ``probe`` verifier (required for it, unused else).
    """

    name = "claim-verifier"

    def __init__(self, llm: LLM, *, verifier: str = "cloze-fast",
                 today: dt.date | None = None, scorer: EmbeddingScorer | None = None,
                 probe: VerifierProbe | None = None) -> None:
        if verifier not in VERIFIERS:
            raise SystemSetupError(f"system 'claim-verifier': no verifier {verifier!r}",
                                   hint=f"pass --option verifier= one of {', '.join(VERIFIERS)}.")
        if verifier == "probe" and probe is None:
            raise SystemSetupError("system 'claim-verifier': the probe verifier needs a probe",
                                   hint="pass --option probe=PATH (or use the default).")
        self.llm = llm
        self.verifier = verifier
        self.today = today or dt.date.today()
        self._scorer = scorer
        self.probe = probe if verifier == "probe" else None

    def describe(self) -> Mapping[str, Any]:
        """The verifier and the date (and the probe's hash): what decides the verdicts."""
        described: dict[str, Any] = {"verifier": self.verifier, "today": self.today.isoformat()}
        if self.probe is not None:
            text = json.dumps(self.probe.to_dict(), sort_keys=True)
            described["probe"] = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        return described

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

        if self.verifier == "probe":
            return await self._probe(claim, question, passage)
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

    async def _probe(self, claim: str, question: str, passage: Evidence) -> ClaimCheck:
        """The learned head's verdict: one hidden-state reading, no generation, no LLM call.

        The reading goes through the llm layer's feature cache, not :class:`TurnCalls`, so
        the output's ``calls`` count is 0.
        """
        assert self.probe is not None
        return await probe_check(self.llm, self.probe, claim, passage, question=question)

    async def aclose(self) -> None:
        """Holds nothing to close; the LLM belongs to the caller."""


def claim_verifier_system(llm: LLM, settings: Settings, options: Mapping[str, Any]) -> System:
    """``claim-verifier``: options verifier (one of :data:`VERIFIERS`), today (ISO date), probe.

    Raises:
        SystemSetupError: an unknown option or verifier, a date that is not ISO, or a probe
            that cannot be read or was trained on another model's features.
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
    probe = _probe_for(llm, str(values["probe"])) if values["verifier"] == "probe" else None
    return ClaimVerifierSystem(llm, verifier=str(values["verifier"]), today=today, probe=probe)


def _probe_for(llm: LLM, path: str) -> VerifierProbe:
    """The probe at ``path`` (default the committed one), checked against ``llm``'s features."""
    from pathlib import Path

    try:
        probe = VerifierProbe.load(Path(path) if path else None)
        probe.check(llm.feature_kind, llm.backend.model_id, llm.feature_dim(),
                    source=f"model {llm.backend.model_id!r}'s features")
    except ProbeError as exc:
        raise SystemSetupError(f"system 'claim-verifier': {exc.message}", hint=exc.hint) from exc
    return probe
