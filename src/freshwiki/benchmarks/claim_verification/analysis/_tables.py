"""Claim verification's figures: per-label precision and recall, wrong drafts caught.

One function (:func:`scores`) computes them from verdict rows and the claims' labels, for the
script's result file and for a report's section alike, so the two cannot count differently.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from freshwiki.benchmarks.claim_verification import LABEL_SET
from freshwiki.results import ReportSection, RunResults
from freshwiki.stats import wilson_ci

SCORER = "claim-verdict"


def share_ci(hits: int, n: int) -> tuple[float, float, float]:
    """Share and its Wilson 95 % interval (z = 1.96, as the committed figures were made)."""
    interval = wilson_ci(hits, n, z=1.96)
    if interval is None:
        return (float("nan"), float("nan"), float("nan"))
    return (hits / n, interval.low, interval.high)


def scores(items: Sequence[Mapping[str, Any]],
           rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-label precision and recall, and the goals' figures, for one verifier.

    Args:
        items: The claims (``id``, ``kind``, ``label``).
        rows: The verifier's verdicts (``id``, ``verdict``, ``seconds``), one per claim.

    "real wrong drafts not SUPPORTS" is the share of real drafts the labels do not support
    that the verifier did not let through: what the check is for.
    """
    gold = {i["id"]: i["label"] for i in items}
    kinds = {i["id"]: i["kind"] for i in items}
    out: dict[str, Any] = {}
    for label in LABEL_SET:
        predicted = [r for r in rows if r["verdict"] == label]
        actual = [r for r in rows if gold[r["id"]] == label]
        tp = sum(gold[r["id"]] == label for r in predicted)
        out[label] = {"precision": share_ci(tp, len(predicted)),
                      "recall": share_ci(tp, len(actual)),
                      "predicted": len(predicted), "gold": len(actual)}
    wrong = [r for r in rows if kinds[r["id"]] == "real-draft" and gold[r["id"]] != "SUPPORTS"]
    out["real wrong drafts not SUPPORTS"] = share_ci(
        sum(r["verdict"] != "SUPPORTS" for r in wrong), len(wrong))
    out["accuracy"] = share_ci(sum(r["verdict"] == gold[r["id"]] for r in rows), len(rows))
    out["seconds per claim"] = round(sum(r["seconds"] for r in rows) / max(len(rows), 1), 2)
    by_kind: dict[str, Any] = {}
    for kind in sorted(set(kinds.values())):
        mine = [r for r in rows if kinds[r["id"]] == kind]
        by_kind[kind] = {label: sum(r["verdict"] == label for r in mine) for label in LABEL_SET}
        by_kind[kind]["n"] = len(mine)
    out["verdicts by kind"] = by_kind
    return out


BASELINE_TIES = ("NOT ENOUGH INFO", "REFUTES", "SUPPORTS")
"""How a tie for the most frequent label is broken: away from SUPPORTS.

The external sets are label-balanced, so every label is "the majority"; the one that never
supports is the fair floor for a verifier whose errors that matter are wrong SUPPORTS (and
"not SUPPORTS" is the binary majority, two thirds of a balanced set)."""


def majority_label(items: Sequence[Mapping[str, Any]]) -> str:
    """The most frequent gold label, ties broken by :data:`BASELINE_TIES`."""
    counts = {label: sum(i["label"] == label for i in items) for label in LABEL_SET}
    return max(BASELINE_TIES, key=lambda label: (counts[label], -BASELINE_TIES.index(label)))


def constant_rows(items: Sequence[Mapping[str, Any]], verdict: str) -> list[dict[str, Any]]:
    """Verdict rows that say ``verdict`` for every claim: a baseline on the same claims."""
    return [{"id": i["id"], "verdict": verdict, "seconds": 0.0} for i in items]


def supports_scores(items: Sequence[Mapping[str, Any]],
                    rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The figures that say whether a SUPPORTS can be trusted, each with its interval.

    SUPPORTS precision and recall, REFUTES recall, the share of the claims the labels do not
    support that were called SUPPORTS (the error a checked reply must not make), accuracy, and
    the verdicts counted by gold label. Rows whose claim is not in ``items`` are ignored.
    """
    gold = {i["id"]: i["label"] for i in items}
    rows = [r for r in rows if r["id"] in gold]
    called = [r for r in rows if r["verdict"] == "SUPPORTS"]
    supported = [r for r in rows if gold[r["id"]] == "SUPPORTS"]
    refuted = [r for r in rows if gold[r["id"]] == "REFUTES"]
    unsupported = [r for r in rows if gold[r["id"]] != "SUPPORTS"]
    hits = sum(gold[r["id"]] == "SUPPORTS" for r in called)
    confusion = {label: {v: sum(gold[r["id"]] == label and r["verdict"] == v for r in rows)
                         for v in LABEL_SET} for label in LABEL_SET}
    return {
        "n": len(rows),
        "SUPPORTS precision": share_ci(hits, len(called)),
        "SUPPORTS recall": share_ci(hits, len(supported)),
        "REFUTES recall": share_ci(sum(r["verdict"] == "REFUTES" for r in refuted),
                                   len(refuted)),
        "not supported called SUPPORTS": share_ci(
            sum(r["verdict"] == "SUPPORTS" for r in unsupported), len(unsupported)),
        "accuracy": share_ci(sum(r["verdict"] == gold[r["id"]] for r in rows), len(rows)),
        "called SUPPORTS": len(called),
        "verdicts by gold label": confusion,
        "seconds per claim": round(sum(float(r.get("seconds", 0.0)) for r in rows)
                                   / max(len(rows), 1), 2),
    }


def verdict_row(sample_id: str, text: str, trace: Mapping[str, Any]) -> dict[str, Any]:
    """One stored output as the script's verdict row (its verdicts file's format)."""
    return {"id": sample_id, "verdict": str(trace.get("verdict") or text),
            "rationale": trace.get("rationale", ""), "correction": trace.get("correction", ""),
            "seconds": trace.get("seconds", 0.0), "calls": trace.get("calls", 0),
            "cache_hits": trace.get("cache_hits", 0)}


def run_rows(run: RunResults) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A run's claims (from the stored sample metadata) and its verdict rows."""
    items, rows = [], []
    for sample_id, _template, metadata, text, trace in run.traces():
        items.append({**metadata, "id": sample_id})
        rows.append(verdict_row(sample_id, text, trace))
    return items, rows


@dataclass(frozen=True)
class VerifierRow:
    """One run's line of the report table: P and R per label, wrong drafts, accuracy."""

    label: str
    n: int
    cells: tuple[tuple[float, float, float] | None, ...]
    wrong_drafts: tuple[float, float, float] | None
    accuracy: tuple[float, float, float] | None


def _point(v: tuple[float, float, float]) -> tuple[float, float, float] | None:
    return None if math.isnan(v[0]) else v


def verifier_rows(runs: Sequence[RunResults], labels: Sequence[str]) -> list[VerifierRow]:
    """Each run's row; its name is the report's label plus the verifier it ran."""
    out = []
    for run, label in zip(runs, labels, strict=True):
        items, rows = run_rows(run)
        if not rows:
            continue
        s = scores(items, rows)
        verifier = run.info.config.get("system_config", {}).get("verifier")
        cells = tuple(_point(s[name][part]) for name in LABEL_SET
                      for part in ("precision", "recall"))
        out.append(VerifierRow(f"{label} ({verifier})" if verifier else label, len(rows), cells,
                               _point(s["real wrong drafts not SUPPORTS"]),
                               _point(s["accuracy"])))
    return out


class ClaimVerificationAnalysis:
    """Per-label precision and recall of each run's verifier, as a report section."""

    def report_sections(self, runs: Sequence[RunResults],
                        labels: Sequence[str]) -> list[ReportSection]:
        """One table over every claim_verification run of the report."""
        rows = verifier_rows(runs, labels)
        if not rows:
            return []
        return [ReportSection(__package__ or "", "claim_verification.html.j2",
                              "claim_verification.md.j2", {"verifiers": rows})]

    def run_sections(self, run: RunResults, breakdown: str | None) -> list[ReportSection]:
        """Nothing inside a run's own part: the table compares runs."""
        return []
