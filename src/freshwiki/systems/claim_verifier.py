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
* ``predicate``: the checked mode's rules alone, no model call (:func:`predicate_verdict`):
  SUPPORTS when the passage states the claim's values with its subject and its relation,
  else NOT ENOUGH INFO (it never refutes);
* ``checked``: the default chat mode's whole check of one answer sentence
  (:func:`checked_verdict`): the rules, then one reading call for what they leave pending,
  then release; SUPPORTS when released as written, REFUTES when corrected or dropped because
  the reading gave another value, NOT ENOUGH INFO when dropped for want of a statement.
* ``probe``: the learned verifier head (:mod:`freshwiki.chat.probe`): no generation, a
  logistic probe on the model's state after the passage, the question and the claim. It reads
  ``--option probe=PATH`` (default the committed probe of the default model) and refuses a
  model whose features it was not trained on when the system is built.

A task whose query is the claim itself (a public set with no question) is checked with no
question: every name, date and number of the claim is then a value to find, where a question
would have given some of them.

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

VERIFIERS = ("cloze-fast", "legacy-fast", "cloze-full", "legacy-full", "predicate", "checked",
             "probe")
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
        # The claim as its own query asks nothing: its values are all to be found.
        question = task.query if task.query.strip() != task.sample.input.strip() else None
        check = await self._check(calls, task.sample.input, question, passage)
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

    async def _check(self, calls: TurnCalls, claim: str, question: str | None,
                     passage: Evidence) -> ClaimCheck:
        from freshwiki.chat.facts import evidence_block, select_sentences
        from freshwiki.chat.verify import check_batch, check_each, hidden
        from freshwiki.chat.verify_legacy import verify_batch, verify_each

        if self.verifier == "probe":
            return await self._probe(claim, question, passage)
        book = PassageBook()
        book.add(passage)
        if self.verifier == "predicate":
            return predicate_verdict(claim, question, passage, book)
        if self.verifier == "checked":
            return await checked_verdict(calls, claim, question, passage, book, self.today)
        if self.verifier == "legacy-full":
            [check] = await verify_each(calls, [claim], [[passage]], book, self.today)
            return check
        scorer = self._sentence_scorer()
        if self.verifier == "cloze-full":
            [check] = await check_each(calls, [claim], [[passage]], book, self.today, scorer,
                                       question=question)
            return check
        selections = select_sentences(question or claim, [passage], scorer)
        block = evidence_block(selections, [hidden(claim, question)], [[passage]], book, scorer)
        if self.verifier == "legacy-fast":
            [check] = await verify_batch(calls, [claim], [[passage]], book,
                                         block.answer + block.extra, block.shown, self.today)
            return check
        [check] = await check_batch(calls, [claim], [[passage]], book,
                                    block.answer + block.extra, self.today, question=question)
        return check

    async def _probe(self, claim: str, question: str | None,
                     passage: Evidence) -> ClaimCheck:
        """The learned head's verdict: one hidden-state reading, no generation, no LLM call.

        The reading goes through the llm layer's feature cache, not :class:`TurnCalls`, so
        the output's ``calls`` count is 0.
        """
        assert self.probe is not None
        return await probe_check(self.llm, self.probe, claim, passage, question=question)

    async def aclose(self) -> None:
        """Holds nothing to close; the LLM belongs to the caller."""


def predicate_verdict(claim: str, question: str | None, passage: Evidence,
                      book: PassageBook) -> ClaimCheck:
    """The checked mode's rules on one claim, no model call: SUPPORTS or NOT ENOUGH INFO.

    Each sentence of the claim (:func:`~freshwiki.chat.checked.split_answer`) goes through
    :func:`~freshwiki.chat.checked.apply_rules`. It counts as stated when it is a sentence of
    the passage word for word, or when the predicate check finds an evidence sentence with
    every value and the subject (``spans``), the relation in the passage's words (``holds``), no
    other doer, no strong relation paraphrased and no contrary one. What the chat would
    leave to its reading call (a single value, a relation in other words) is not stated by
    the rules, so it is NOT ENOUGH INFO here: without a reading nothing is refuted.
    """
    from freshwiki.chat.checked import apply_rules, split_answer
    from freshwiki.chat.predicate import contrary

    asked = question or ""
    checks = split_answer(claim, asked)
    apply_rules(checks, asked, [passage], book)
    reasons = []
    stated = bool(checks)
    for check in checks:
        found = check.statement
        if check.status == "copied":
            reasons.append(f"{check.text!r}: a sentence of the passage")
            continue
        ok = (check.status == "pending" and not check.unstated and found is not None
              and found.holds and not found.strong_missing
              and not contrary(found, check.claim))
        stated = stated and ok
        reasons.append(f"{check.text!r}: " + (
            "values, subject and relation stated together" if ok else
            check.reason or ("relation not stated in full (missing "
                             f"{', '.join(found.missing) or 'its doer'})" if found is not None
                             else "no evidence sentence states it")))
    return ClaimCheck(claim, "SUPPORTS" if stated else "NOT ENOUGH INFO",
                      (passage,), "; ".join(reasons) or "no sentence to check")


async def checked_verdict(calls: TurnCalls, claim: str, question: str | None,
                          passage: Evidence, book: PassageBook, today: dt.date) -> ClaimCheck:
    """The default chat mode's check on one claim, the passage its only evidence.

    As the checked mode treats an answer it wrote: the claim's sentences through the rules
    (:func:`~freshwiki.chat.checked.apply_rules`), one reading call over the passage for the
    values still pending (:func:`~freshwiki.chat.checked.read_lines`), then
    :func:`~freshwiki.chat.checked.settle`. No premise or second-passage line: there is no
    question to doubt and no second passage. A sentence released as written (or copied)
    SUPPORTS; corrected, or dropped while the reading gave another value, REFUTES; dropped
    otherwise (or an abstention), NOT ENOUGH INFO. The claim's verdict is its worst sentence's:
    any REFUTES, else SUPPORTS only if every sentence SUPPORTS.
    """
    from freshwiki.chat.checked import (
        MAX_LINES,
        apply_rules,
        passage_entries,
        read_lines,
        settle,
        split_answer,
        value_lines,
    )
    from freshwiki.chat.verify import misread, same_value

    asked = question or ""
    checks = split_answer(claim, asked)
    if not checks:
        return ClaimCheck(claim, "NOT ENOUGH INFO", (passage,), "no sentence to check")
    apply_rules(checks, asked, [passage], book)
    lines = value_lines(checks, asked)[:MAX_LINES]
    read = await read_lines(calls, passage_entries([passage], book), today, lines)
    settle(checks, lines, read, asked, [passage], book)
    verdicts, reasons, corrections = [], [], []
    for check in checks:
        other = any(value and not same_value(span, value) and not misread(span, value,
                                                                           check.claim)
                    for span, value in check.answers.items())
        if check.status in ("copied", "released"):
            verdict = "SUPPORTS"
        elif check.status == "corrected" or (check.status == "dropped" and other):
            verdict = "REFUTES"
        else:
            verdict = "NOT ENOUGH INFO"
        verdicts.append(verdict)
        reasons.append(f"{check.text!r}: {check.status} ({check.reason})")
        if check.correction:
            corrections.append(check.correction)
    final = ("REFUTES" if "REFUTES" in verdicts else
             "SUPPORTS" if all(v == "SUPPORTS" for v in verdicts) else "NOT ENOUGH INFO")
    return ClaimCheck(claim, final, (passage,), "; ".join(reasons),  # type: ignore[arg-type]
                      correction=" ".join(corrections))


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
