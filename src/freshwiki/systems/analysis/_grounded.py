"""WikiChat's analysis of its own pipeline (§7.4-7.5, Appendix C), from a run's turn traces.

The paper is Semnani et al. (2023), "WikiChat: Stopping the hallucination of large language
model chatbots by few-shot grounding on Wikipedia".

A run of the ``grounded`` system keeps each chat turn's whole trace in its output (one turn
per output for a question benchmark, ``trace["turns"]`` for a simulated conversation), so the
paper's questions about where a reply comes from can be answered without running anything:

* **"I don't know" turns** (its Table 11): turns answered by the "I don't know" template, i.e.
  nothing relevant was retrieved and no draft claim survived fact-checking
  (``grounded=False``).
* **Facts from retrieval and claims from the draft per turn** (Table 12, "IR" and "LLM"):
  stage 2's facts (WikiChat's bullet points) and stage 4's claims, averaged over all turns.
* **Draft claims verified** (Table 12, "Verified"): stage 5's verdicts over all draft claims
  pooled: SUPPORTS, REFUTES, NOT ENOUGH INFO.
* **Share from the draft** (§7.5): the paper reports what share of the final reply's content
  comes from fact-checked LLM claims rather than retrieval, and its figures are exactly
  verified claims ÷ (retrieved facts + verified claims), pooled over turns (for WikiChat G4,
  2.4 * 61.7 % ÷ (4.0 + 2.4 * 61.7 %) = 27.0 %): the curated notes stage 6 writes from.
  That is the first measure here. The second reads the reply itself: each cited sentence
  (cut as the sentence guard cuts, :func:`freshwiki.chat.guard.pieces`) counts as
  *retrieval* when one of its citations points at a passage stage 2 took a fact from, else
  as *draft* when one points at the evidence of a draft claim stage 5 verified (or
  corrected), else as *other*. A passage that both retrieval and a claim's evidence found
  counts as retrieval: only what retrieval alone would not have shown is credited to the
  draft, which is the paper's point (what retrieve-then-generate systems cannot produce).
* **Reply claims per turn** (Table 13) and **seconds per reply claim** (Table 2): from the
  ``chat-factuality`` scorer's claims when the run has them (the judge splits each reply
  into claims; the pipeline's trace does not).
* **Stage 7**: mean score per criterion and the share of replies the rewrite replaced, for
  full-mode turns refined with feedback (our addition), and the paper's Table 14: corpus
  BLEU (sacrebleu, 0-100) of the replies stage 7 passed on against the replies before it,
  over every turn stage 7 ran on (a kept reply counts as unchanged, as in the paper, where
  every reply goes through refinement); the lower, the more refinement changed. Its Table 15
  (conversationality before and after refinement) would need the judge to score both
  versions of every reply, which the stored runs do not have.
* **Latency per stage** (Table 2 gives only totals): mean and median seconds of each stage's
  timing over the turns where the stage ran (``TurnTrace.timings``; concurrent stages
  overlap, so stages add up to more than ``total``).

Columns: every turn ("all"), then one per value of the run's breakdown key (for simulated
chat, the topic category: head, tail, recent, as the paper's tables).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from freshwiki.chat import Reply
from freshwiki.chat.conversations import reply_from_dict
from freshwiki.chat.guard import pieces
from freshwiki.results import ReportSection, RunResults, StoredOutput

ALL = "all"
VERDICTS: tuple[str, ...] = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
STAGE_ORDER: tuple[str, ...] = (
    "total", "query", "retrieve", "facts", "draft", "claims", "draft+claims", "verify",
    "compose", "refine", "compose+refine", "check")
"""Latency rows in pipeline order; stages not listed follow, alphabetically."""
FACTUALITY = "chat-factuality"
_MARKER = re.compile(r"\[(\d+)\]")


@dataclass(frozen=True)
class TurnStats:
    """What the analysis needs of one grounded chat turn, read from its stored trace.

    Attributes:
        sample_id: The sample (conversation or question) it belongs to.
        template: Its template.
        turn: 1-based position in the conversation.
        metadata: The sample's metadata (for breakdowns).
        grounded: ``False`` for an "I don't know" reply.
        facts: Stage 2's facts.
        verdicts: Stage 5's verdict per draft claim.
        sentences: Cited reply sentences by origin (``retrieval``, ``draft``, ``other``),
            and ``uncited``.
        timings: Seconds per stage (and ``total``).
        refinement: Stage 7's scores per criterion when refined with feedback.
        rewritten: Whether stage 7's rewrite replaced the reply (``None``: no stage 7).
        reply_claims: Claims the factuality scorer found in the reply (``None``: not scored).
        before_refinement: The reply stage 7 was given, and ``after_refinement`` the one it
            passed on (both empty without stage 7, or in traces stored before they were).
    """

    sample_id: str
    template: str
    turn: int
    metadata: Mapping[str, Any]
    grounded: bool
    facts: int
    verdicts: tuple[str, ...]
    sentences: Mapping[str, int]
    timings: Mapping[str, float]
    refinement: Mapping[str, int] = field(default_factory=dict)
    rewritten: bool | None = None
    reply_claims: int | None = None
    before_refinement: str = ""
    after_refinement: str = ""


def turn_stats(reply: Reply, *, sample_id: str, template: str, turn: int,
               metadata: Mapping[str, Any], reply_claims: int | None = None) -> TurnStats:
    """The statistics of one turn (see the module docstring for each definition)."""
    trace = reply.trace
    retrieval = {f.source.passage_id for f in trace.facts}
    draft = {e.passage_id for c in trace.claims
             if c.verdict == "SUPPORTS" or (c.verdict == "REFUTES" and c.correction)
             for e in c.evidence}
    cited = {c.number: c.evidence.passage_id for c in reply.citations}
    origins: Counter[str] = Counter()
    for sentence in pieces(reply.text):
        if not sentence.strip():
            continue
        ids = {cited[int(n)] for n in _MARKER.findall(sentence) if int(n) in cited}
        if not ids:
            origins["uncited"] += 1
        elif ids & retrieval:
            origins["retrieval"] += 1
        elif ids & draft:
            origins["draft"] += 1
        else:
            origins["other"] += 1
    refinement = trace.refinement
    return TurnStats(
        sample_id=sample_id, template=template, turn=turn, metadata=dict(metadata),
        grounded=reply.grounded, facts=len(trace.facts),
        verdicts=tuple(c.verdict for c in trace.claims), sentences=dict(origins),
        timings=dict(trace.timings),
        refinement={f.criterion: f.score for f in refinement.feedback} if refinement else {},
        rewritten=refinement.rewritten if refinement else None,
        reply_claims=reply_claims,
        before_refinement=refinement.composed if refinement else "",
        after_refinement=refinement.refined if refinement else "",
    )


@dataclass(frozen=True)
class ChatTurn:
    """One grounded chat turn found in a run's outputs, its reply rebuilt from the trace.

    Attributes:
        sample_id: The sample (conversation or question).
        template: Its template.
        turn: 1-based position in the conversation (1 for a question benchmark).
        metadata: The sample's metadata.
        reply: The reply with its whole :class:`~freshwiki.chat.TurnTrace`.
    """

    sample_id: str
    template: str
    turn: int
    metadata: Mapping[str, Any]
    reply: Reply


def grounded_turns(outputs: Iterable[StoredOutput]) -> Iterator[ChatTurn]:
    """Every turn of the grounded system in ``outputs``, in order.

    The grounded system stores ``{"grounded", "citations", "chat": TurnTrace}`` as an
    output's trace; a dialogue benchmark keeps one such trace per turn under
    ``trace["turns"][i]["trace"]`` with the reply beside it. Turns of other systems (no
    ``chat`` key) are skipped.
    """
    for sample_id, template, metadata, text, trace in outputs:
        turns = trace.get("turns")
        if isinstance(turns, list):  # a dialogue: one output, many turns
            found = [(i, str(t.get("reply", "")), t.get("trace") or {})
                     for i, t in enumerate(turns, start=1) if isinstance(t, Mapping)]
        else:
            found = [(1, text, trace)]
        for number, reply_text, turn_trace in found:
            if not isinstance(turn_trace.get("chat"), Mapping):
                continue
            reply = reply_from_dict({"text": reply_text, "trace": turn_trace["chat"],
                                     "citations": turn_trace.get("citations") or (),
                                     "grounded": turn_trace.get("grounded", True)})
            yield ChatTurn(sample_id, template, number, metadata, reply)


def chat_turns(outputs: Iterable[StoredOutput],
               factuality: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
               ) -> Iterator[TurnStats]:
    """The statistics of every grounded chat turn in a run's outputs.

    Args:
        outputs: The run's stored outputs.
        factuality: The ``chat-factuality`` score data per ``(sample_id, template)``; its
            per-turn claims give :attr:`TurnStats.reply_claims`.
    """
    for found in grounded_turns(outputs):
        claims = _reply_claims((factuality or {}).get((found.sample_id, found.template)))
        yield turn_stats(found.reply, sample_id=found.sample_id, template=found.template,
                         turn=found.turn, metadata=found.metadata,
                         reply_claims=claims[found.turn - 1] if found.turn <= len(claims)
                         else None)


def _reply_claims(data: Mapping[str, Any] | None) -> list[int]:
    """Claims per turn from a ``chat-factuality`` score's data (empty when absent)."""
    if not data or not isinstance(data.get("turns"), list):
        return []
    return [len(t.get("claims") or ()) if isinstance(t, Mapping) else 0 for t in data["turns"]]


@dataclass(frozen=True)
class Cell:
    """One measure over one column's turns.

    Attributes:
        value: The measure (a share in [0, 1], a mean, or mean seconds); ``None`` when there
            is nothing to measure (e.g. no draft claims).
        n: What it is over (turns, claims or sentences).
        median: Median seconds (latency rows only).
    """

    value: float | None
    n: int
    median: float | None = None


@dataclass(frozen=True)
class Row:
    """One line of the analysis: a measure in every column.

    Attributes:
        key: Stable name (JSON, tests).
        label: What a reader sees.
        unit: ``share`` (shown as %), ``mean`` (per turn), ``score`` (0-100), ``seconds``
            or ``count``.
        over: What ``n`` counts (``turns``, ``claims``, ``sentences``).
        cells: One per column.
    """

    key: str
    label: str
    unit: str
    over: str
    cells: tuple[Cell, ...]

    def shown(self) -> tuple[str, ...]:
        """Each cell as printed: ``12.5 %``, ``2.40``, ``87.5``, ``3.10 / 2.95``, or ``—``."""
        return tuple(_show(cell, self.unit) for cell in self.cells)


def _show(cell: Cell, unit: str) -> str:
    if cell.value is None:
        return "—"
    if unit == "share":
        return f"{100 * cell.value:.1f} %"
    if unit == "score":
        return f"{cell.value:.1f}"
    if unit == "count":
        return str(round(cell.value))
    if unit == "seconds":
        return f"{cell.value:.2f} / {cell.median:.2f}" if cell.median is not None else "—"
    return f"{cell.value:.2f}"


@dataclass(frozen=True)
class ChatAnalysis:
    """The analysis of one run's grounded chat turns, ready to print or lay out.

    Attributes:
        columns: ``all``, then each value of :attr:`breakdown` in the run's sample order.
        breakdown: The sample-metadata key the columns split by, if any.
        turns: Turns per column.
        sections: ``(title, rows)``: the pipeline analysis, stage 7, latency per stage.
    """

    columns: tuple[str, ...]
    breakdown: str | None
    turns: tuple[int, ...]
    sections: tuple[tuple[str, tuple[Row, ...]], ...]

    def row(self, key: str) -> Row:
        """The row named ``key`` (raises ``KeyError`` when the run has none)."""
        for _, rows in self.sections:
            for row in rows:
                if row.key == key:
                    return row
        raise KeyError(key)

    def as_json(self) -> dict[str, Any]:
        """Plain data: columns, turns, and each row's values, ``n`` and medians."""
        return {
            "columns": list(self.columns), "breakdown": self.breakdown,
            "turns": list(self.turns),
            "sections": [{"title": title, "rows": [
                {"key": r.key, "label": r.label, "unit": r.unit, "over": r.over,
                 "cells": [{"value": c.value, "n": c.n, "median": c.median}
                           for c in r.cells]} for r in rows]}
                for title, rows in self.sections],
        }


def analyse_chat(turns: Sequence[TurnStats], breakdown: str | None = None
                 ) -> ChatAnalysis | None:
    """The analysis of ``turns`` (``None`` when there is none: not a grounded run).

    Args:
        turns: The run's grounded chat turns (:func:`chat_turns`).
        breakdown: A metadata key to add one column per value of (turns without it are
            only in "all").
    """
    if not turns:
        return None
    columns = [ALL]
    if breakdown is not None:
        for stats in turns:
            value = stats.metadata.get(breakdown)
            if value is not None and str(value) not in columns:
                columns.append(str(value))
    groups = [list(turns)] + [[t for t in turns if breakdown is not None
                               and t.metadata.get(breakdown) is not None
                               and str(t.metadata[breakdown]) == c] for c in columns[1:]]

    def rows(key: str, label: str, unit: str, over: str,
             measure: Any) -> Row:
        return Row(key, label, unit, over, tuple(measure(g) for g in groups))

    pipeline = (
        rows("turns", "turns", "count", "turns", lambda g: Cell(float(len(g)), len(g))),
        rows("dont_know", '"I don\'t know" turns', "share", "turns",
             lambda g: _share(sum(not t.grounded for t in g), len(g))),
        rows("facts_per_turn", "facts from retrieval per turn (stage 2)", "mean", "turns",
             lambda g: _mean([t.facts for t in g])),
        rows("claims_per_turn", "claims in the draft per turn (stage 4)", "mean", "turns",
             lambda g: _mean([len(t.verdicts) for t in g])),
        *(rows(f"verdict_{v.lower().replace(' ', '_')}", f"draft claims: {v}", "share",
               "claims", lambda g, v=v: _share(sum(t.verdicts.count(v) for t in g),
                                               sum(len(t.verdicts) for t in g)))
          for v in VERDICTS),
        rows("notes_from_draft", "notes from the draft: verified claims ÷ (facts + verified "
             "claims)", "share", "notes",
             lambda g: _share(sum(t.verdicts.count("SUPPORTS") for t in g),
                              sum(t.facts + t.verdicts.count("SUPPORTS") for t in g))),
        rows("sentences_from_retrieval", "cited reply sentences from retrieval", "share",
             "sentences", lambda g: _origin(g, "retrieval")),
        rows("sentences_from_draft", "cited reply sentences from the draft only", "share",
             "sentences", lambda g: _origin(g, "draft")),
        rows("reply_claims_per_turn", "claims in the reply per turn (chat-factuality)",
             "mean", "turns", lambda g: _mean([t.reply_claims for t in g
                                               if t.reply_claims is not None])),
        rows("seconds_per_reply_claim", "seconds per reply claim", "mean", "claims",
             _per_claim),
    )
    sections: list[tuple[str, tuple[Row, ...]]] = [("Where replies come from", pipeline)]
    refined = [t for t in turns if t.rewritten is not None]
    if refined:
        criteria = list(dict.fromkeys(c for t in refined for c in t.refinement))
        sections.append(("Stage 7: refinement", (
            *(rows(f"refine_{c}", f"score: {c.replace('_', ' ')}", "score", "turns",
                   lambda g, c=c: _mean([t.refinement[c] for t in g if c in t.refinement]))
              for c in criteria),
            rows("refine_rewritten", "replies replaced by the rewrite", "share", "turns",
                 lambda g: _share(sum(bool(t.rewritten) for t in g if t.rewritten is not None),
                                  sum(t.rewritten is not None for t in g))),
            rows("refine_bleu", "BLEU of the refined reply against the reply before it",
                 "score", "turns", _refinement_bleu),
        )))
    stages = sorted({s for t in turns for s in t.timings},
                    key=lambda s: (STAGE_ORDER.index(s) if s in STAGE_ORDER
                                   else len(STAGE_ORDER), s))
    sections.append(("Latency per stage (seconds, mean / median)", tuple(
        rows(f"latency_{s}", s, "seconds", "turns",
             lambda g, s=s: _latency([t.timings[s] for t in g if s in t.timings]))
        for s in stages)))
    return ChatAnalysis(columns=tuple(columns), breakdown=breakdown,
                        turns=tuple(len(g) for g in groups), sections=tuple(sections))


def _refinement_bleu(group: Sequence[TurnStats]) -> Cell:
    """Corpus BLEU of stage 7's output against its input (the paper's Table 14)."""
    pairs = [(t.after_refinement, t.before_refinement) for t in group
             if t.rewritten is not None and t.before_refinement.strip()]
    if not pairs:
        return Cell(None, 0)
    import sacrebleu

    hypotheses, references = zip(*pairs, strict=True)
    return Cell(float(sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score),
                len(pairs))


def _share(part: int, whole: int) -> Cell:
    return Cell(part / whole if whole else None, whole)


def _mean(values: Sequence[float]) -> Cell:
    return Cell(sum(values) / len(values) if values else None, len(values))


def _origin(group: Sequence[TurnStats], origin: str) -> Cell:
    cited = sum(t.sentences.get(o, 0) for t in group for o in ("retrieval", "draft", "other"))
    return _share(sum(t.sentences.get(origin, 0) for t in group), cited)


def _per_claim(group: Sequence[TurnStats]) -> Cell:
    """Seconds of whole turns per claim they made (turns scored for factuality only)."""
    scored = [t for t in group if t.reply_claims is not None and "total" in t.timings]
    claims = sum(t.reply_claims or 0 for t in scored)
    return Cell(sum(t.timings["total"] for t in scored) / claims if claims else None, claims)


def _latency(values: Sequence[float]) -> Cell:
    if not values:
        return Cell(None, 0)
    return Cell(statistics.fmean(values), len(values), statistics.median(values))


def run_turns(run: RunResults) -> tuple[TurnStats, ...]:
    """The statistics of every grounded chat turn of a stored run.

    Read from its outputs' traces and the ``chat-factuality`` scores' data; empty for a run
    of another system.
    """
    factuality = {(i.sample_id, i.template): i.data for i in run.items if i.scorer == FACTUALITY}
    return tuple(chat_turns(run.traces("chat"), factuality))


class GroundedChatAnalysis:
    """The grounded system's report section: WikiChat's analysis of its turns.

    Shown inside each run's part of the report; registered as ``grounded``'s analysis in
    ``freshwiki.systems``.
    """

    def report_sections(self, runs: Sequence[RunResults],
                        labels: Sequence[str]) -> list[ReportSection]:
        """Nothing across runs: the analysis is per run."""
        return []

    def run_sections(self, run: RunResults, breakdown: str | None) -> list[ReportSection]:
        """The table of the run's turns, when it has any."""
        analysis = analyse_chat(run_turns(run), breakdown)
        if analysis is None:
            return []
        return [ReportSection(__package__ or "", "grounded_chat.html.j2", "grounded_chat.md.j2",
                              {"ca": analysis, "run_id": run.info.run_id})]
