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
