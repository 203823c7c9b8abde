"""The chat accuracy tables: outcome shares per kind, the check's effect, paired differences.

One set of functions computes them from reply rows (the replies file the script keeps, or a
run's stored outputs turned into rows by :func:`reply_row`) and an outcome per item, so the
script's result file and a report's section cannot disagree on how a share is counted. The
script places replies with the current hand labels; a report uses the outcome the run's
``chat-accuracy`` scorer stored.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from freshwiki.benchmarks.chat_accuracy import ABSENT, ANSWERABLE, KINDS, parts_stated
from freshwiki.results import ReportSection, RunResults
from freshwiki.stats import bootstrap_ci, sign_flip_p, wilson_ci

SCORER = "chat-accuracy"
"""The scorer whose stored outcome a report reads."""
KIND_HEADINGS = {"answerable": "answerable", "two_part": "two-part", "followup": "follow-up",
                 "absent_subject": "absent subject", "absent_fact": "absent fact",
                 "false_premise": "false premise", "conflict": "conflicts",
                 "falseqa": "FalseQA"}
_NOTE = re.compile(r"(?i)\b(?:sources|passages) disagree\b")
_MARKER = re.compile(r"\[(\d+)\]")

Row = Mapping[str, Any]
Item = Mapping[str, Any]


def share(hits: int, n: int) -> list[float] | None:
    """Share with its Wilson 95 % interval, rounded: ``[share, low, high]``."""
    interval = wilson_ci(hits, n)
    if interval is None:
        return None
    return [round(hits / n, 4), round(interval.low, 4), round(interval.high, 4)]


def cited_titles(text: str, trace: Mapping[str, Any]) -> list[str]:
    """Titles of the passages the reply cites ([n] of rag's passages, or chat citations)."""
    if "citations" in trace:
        return sorted({c["evidence"]["title"] for c in trace.get("citations") or ()})
    retrieved = trace.get("retrieved") or []
    return sorted({retrieved[int(n) - 1]["title"] for n in _MARKER.findall(text)
                   if 1 <= int(n) <= len(retrieved)})


def reply_row(text: str, trace: Mapping[str, Any], *, latency_s: float | None = None,
              cache_hit: bool = False) -> dict[str, Any]:
    """One stored output as the script's reply row (the replies file's format).

    ``draft`` and ``checks`` are the grounded chat's answer before its check and each
    sentence's verdict: what the check removed or corrected, to measure how often it was
    right to.
    """
    chat = trace.get("chat") or {}
    seconds = trace.get("seconds", latency_s if latency_s is not None else 0.0)
    return {"reply": text, "first_reply": trace.get("first_reply") or "",
            "grounded": bool(trace.get("grounded", True)),
            "draft": chat.get("draft"),
            "checks": [[c["verdict"], c["claim"], c["rationale"], c["correction"]]
                       for c in chat.get("reply_checks") or ()],
            "cited_titles": cited_titles(text, trace),
            "conflict_note": bool(chat.get("conflicts")) or bool(_NOTE.search(text)),
            "llm_calls": chat.get("llm_calls"),
            "seconds": round(float(seconds), 2),
            "first_text_s": (chat.get("timings") or {}).get("first_text"),
            "cache_hit": cache_hit}


def summarise(items: Sequence[Item], rows: Mapping[str, Row],
              outcomes: Mapping[str, str]) -> dict[str, Any]:
    """One system's outcome shares per kind, contradicted citations, conflict notes, seconds.

    A contradicted citation is a wrong or affirming reply that cites the item's own lead
    (which states otherwise); a conflict note outside the conflict items is a false alarm.
    """
    by_kind: dict[str, Any] = {}
    for kind in KINDS:
        mine = [i for i in items if i["kind"] == kind]
        if not mine:
            continue
        count = collections.Counter(outcomes[i["id"]] for i in mine)
        entry: dict[str, Any] = {"n": len(mine), "counts": dict(sorted(count.items()))}
        entry["shares"] = {k: share(v, len(mine)) for k, v in sorted(count.items())}
        entry["unread"] = count.get("other", 0)
        contradicted = [i["id"] for i in mine if outcomes[i["id"]] in ("wrong", "affirmed")
                        and set(i.get("titles") or ()) & set(rows[i["id"]]["cited_titles"])]
        entry["contradicted_citations"] = len(contradicted)
        entry["contradicted_ids"] = contradicted
        entry["conflict_notes"] = sum(bool(rows[i["id"]]["conflict_note"]) for i in mine)
        by_kind[kind] = entry
    answerable = [i for i in items if i["kind"] in ANSWERABLE]
    seconds = [rows[i["id"]]["seconds"] for i in items]
    return {
        "check_effect": check_effect(answerable, rows, outcomes),
        "n": len(items),
        "by_kind": by_kind,
        "answerable_correct": share(sum(outcomes[i["id"]] == "correct" for i in answerable),
                                    len(answerable)) if answerable else None,
        "contradicted_citations": sum(e["contradicted_citations"] for e in by_kind.values()),
        "conflict_notes_outside_conflicts": sum(
            e["conflict_notes"] for k, e in by_kind.items() if k != "conflict"),
        "mean_seconds": round(sum(seconds) / max(len(seconds), 1), 2),
        "by_set": {s: share(sum(outcomes[i["id"]] == "correct" for i in answerable
                                if i.get("set") == s),
                            sum(i.get("set") == s for i in answerable))
                   for s in ("head", "tail", "recent")
                   if any(i.get("set") == s for i in answerable)},
    }


def check_effect(items: Sequence[Item], rows: Mapping[str, Row],
                 outcomes: Mapping[str, str]) -> dict[str, Any] | None:
    """What the check did to the checked mode's own answers (answerable kinds, by rule).

    The answer before the check (the trace's draft) either states every part of the gold
    answer or not; the reply after it is correct or not. A right answer the check did not let
    through is its false alarm; a wrong one it corrected, or withheld, is what it is for.
    """
    with_draft = [i for i in items if rows[i["id"]].get("draft") is not None]
    if not with_draft:
        return None
    right = [i for i in with_draft
             if all(parts_stated(rows[i["id"]]["draft"], i["answers"]))]
    wrong = [i for i in with_draft if i not in right]
    kept = sum(outcomes[i["id"]] == "correct" for i in right)
    corrected = sum(outcomes[i["id"]] == "correct" for i in wrong)
    withheld = sum(outcomes[i["id"]] == "dont_know" for i in wrong)
    return {"answers_right": len(right), "kept_right": kept,
            "right_kept_share": share(kept, len(right)),
            "answers_not_right": len(wrong), "corrected": corrected,
            "withheld": withheld, "neither": len(wrong) - corrected - withheld}


def paired(a: str, b: str, items: Sequence[Item],
           outcomes: Mapping[str, Mapping[str, str]]) -> dict[str, Any] | None:
    """``a`` minus ``b`` on correct (1/0), paired by answerable question.

    The interval is a bootstrap over questions and the p-value a sign-flip test
    (:mod:`freshwiki.stats`); ``None`` when either system or every answerable item is missing.
    """
    answerable = [i for i in items if i["kind"] in ANSWERABLE
                  and i["id"] in outcomes.get(a, {}) and i["id"] in outcomes.get(b, {})]
    if not answerable:
        return None
    diff = [float(outcomes[a][i["id"]] == "correct") - float(outcomes[b][i["id"]] == "correct")
            for i in answerable]
    interval = bootstrap_ci(diff)
    p_value, _ = sign_flip_p(diff)
    return {"n": len(diff), "mean_difference": round(sum(diff) / len(diff), 4),
            "ci95": [round(interval.low, 4), round(interval.high, 4)] if interval else None,
            "p_value": round(p_value, 4),
            f"{a}_only": sum(d > 0 for d in diff), f"{b}_only": sum(d < 0 for d in diff)}


def headline(summary: Mapping[str, Any]) -> dict[str, list[float] | None]:
    """The shares a table row shows, each with its Wilson interval.

    Answerable kinds correct, two-part correct, absent abstained, premise corrected or
    rejected, conflicts with both values, FalseQA corrected, rejected or abstained.
    """
    kinds = summary["by_kind"]
    absent = [kinds[k] for k in ABSENT if k in kinds]
    abstained = sum(e["counts"].get("abstained", 0) for e in absent)
    fp = kinds.get("false_premise")
    conflict = kinds.get("conflict")
    fqa = kinds.get("falseqa")

    def fixed(entry: Mapping[str, Any], *names: str) -> list[float] | None:
        return share(sum(entry["counts"].get(n, 0) for n in names), entry["n"])

    return {
        "answerable": summary["answerable_correct"],
        "two_part": (fixed(kinds["two_part"], "correct") if "two_part" in kinds else None),
        "absent": share(abstained, sum(e["n"] for e in absent)) if absent else None,
        "false_premise": fixed(fp, "corrected", "rejected") if fp else None,
        "conflict": fixed(conflict, "both") if conflict else None,
        "falseqa": fixed(fqa, "corrected", "rejected", "abstained") if fqa else None,
    }


@dataclass(frozen=True)
class SystemRow:
    """One run's line of the report table."""

    label: str
    shares: Mapping[str, list[float] | None]
    contradicted: int
    false_notes: int
    unread: int
    n: int


@dataclass(frozen=True)
class PairedRow:
    """One run's paired difference vs the baseline (see :func:`paired`)."""

    label: str
    n: int
    mean_difference: float
    ci95: list[float] | None
    p_value: float
    only_this: int
    only_baseline: int


@dataclass(frozen=True)
class ChatAccuracyView:
    """The report section's data: one row per run, then each run's paired difference vs rag."""

    rows: tuple[SystemRow, ...]
    paired: tuple[PairedRow, ...]
    baseline: str | None


def run_outcomes(run: RunResults) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]],
                                           dict[str, str]]:
    """A run's items (sample metadata), reply rows and stored outcomes, by sample id.

    An output not scored by ``chat-accuracy`` is placed by the rules' scorer if it has one,
    else reported as unread (``other``).
    """
    items: list[dict[str, Any]] = []
    rows: dict[str, dict[str, Any]] = {}
    for sample_id, _template, metadata, text, trace in run.traces():
        items.append({**metadata, "id": sample_id})
        rows[sample_id] = reply_row(text, trace)
    placed: dict[str, str] = {}
    for item in run.items:
        if item.scorer == SCORER and item.label:
            placed[item.sample_id] = item.label
        elif item.scorer == "chat-accuracy-rules" and item.label:
            placed.setdefault(item.sample_id, item.label)
    outcomes = {i["id"]: placed.get(i["id"], "other") for i in items}
    return items, rows, outcomes


def chat_accuracy_view(runs: Sequence[RunResults], labels: Sequence[str]
                       ) -> ChatAccuracyView | None:
    """The per-kind table over ``runs``; pairs each run with the first rag run on shared items."""
    if not runs:
        return None
    table: list[SystemRow] = []
    by_label: dict[str, dict[str, str]] = {}
    all_items: dict[str, dict[str, Any]] = {}
    baseline = None
    for run, label in zip(runs, labels, strict=True):
        items, rows, outcomes = run_outcomes(run)
        if not items:
            continue
        summary = summarise(items, rows, outcomes)
        table.append(SystemRow(label, headline(summary), summary["contradicted_citations"],
                               summary["conflict_notes_outside_conflicts"],
                               sum(e["unread"] for e in summary["by_kind"].values()),
                               summary["n"]))
        by_label[label] = outcomes
        all_items.update({i["id"]: i for i in items})
        if baseline is None and run.info.system == "rag":
            baseline = label
    if not table:
        return None
    comparisons: list[PairedRow] = []
    if baseline is not None:
        for label in by_label:
            if label == baseline:
                continue
            c = paired(label, baseline, list(all_items.values()), by_label)
            if c is not None:
                comparisons.append(PairedRow(label, c["n"], c["mean_difference"], c["ci95"],
                                             c["p_value"], c[f"{label}_only"],
                                             c[f"{baseline}_only"]))
    return ChatAccuracyView(tuple(table), tuple(comparisons), baseline)


class ChatAccuracyAnalysis:
    """The per-kind table and the paired differences vs rag, as a report section."""

    def report_sections(self, runs: Sequence[RunResults],
                        labels: Sequence[str]) -> list[ReportSection]:
        """One table over every chat_accuracy run of the report."""
        view = chat_accuracy_view(runs, labels)
        if view is None:
            return []
        return [ReportSection(__package__ or "", "chat_accuracy.html.j2",
                              "chat_accuracy.md.j2",
                              {"chat": view, "kinds": ("answerable", "two_part", "absent",
                                                       "false_premise", "conflict", "falseqa")})]

    def run_sections(self, run: RunResults, breakdown: str | None) -> list[ReportSection]:
        """Nothing inside a run's own part: the table compares runs."""
        return []
