"""Chat latency's figures: seconds per turn and the ratio to rag's turn on the same questions.

One function (:func:`latency_row`) turns per-question timings into the row the script writes
and a report shows, so the two cannot compute a ratio differently. The ratio is of means, its
95 % interval a paired bootstrap over questions (:func:`freshwiki.stats.ratio_bootstrap_ci`).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from freshwiki.results import ReportSection, RunResults
from freshwiki.stats import ratio_bootstrap_ci


@dataclass
class Tally:
    """Per-turn measurements of one system, in question order."""

    ids: list[str] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    first_text: list[float] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)
    prompt_tokens: list[int] = field(default_factory=list)
    completion_tokens: list[int] = field(default_factory=list)
    reused_tokens: list[int] = field(default_factory=list)
    cache_hits: int = 0

    def add_trace(self, sample_id: str, trace: Mapping[str, Any], cache_hit: bool = False
                  ) -> None:
        """One turn as the benchmark stored it (no first text: it came at the turn's end)."""
        seconds = float(trace["seconds"])
        self.ids.append(sample_id)
        self.seconds.append(seconds)
        self.first_text.append(float(trace.get("first_text_s") or seconds))
        self.calls.append(int(trace.get("calls") or 1))
        self.prompt_tokens.append(int(trace.get("prompt_tokens") or 0))
        self.completion_tokens.append(int(trace.get("completion_tokens") or 0))
        self.reused_tokens.append(int(trace.get("reused_prompt_tokens") or 0))
        self.cache_hits += int(cache_hit)

    def only(self, ids: Sequence[str]) -> Tally:
        """The same measurements for ``ids`` only, in that order (to pair two systems)."""
        at = {i: n for n, i in enumerate(self.ids)}
        out = Tally(cache_hits=self.cache_hits)
        for i in ids:
            n = at[i]
            out.ids.append(i)
            out.seconds.append(self.seconds[n])
            out.first_text.append(self.first_text[n])
            out.calls.append(self.calls[n])
            out.prompt_tokens.append(self.prompt_tokens[n])
            out.completion_tokens.append(self.completion_tokens[n])
            out.reused_tokens.append(self.reused_tokens[n])
        return out


def latency_row(tally: Tally, anchor: Sequence[float]) -> dict[str, Any]:
    """Mean and median seconds, first text, calls, tokens, and the ratios to ``anchor``.

    ``anchor`` is rag's seconds on the same questions, in the same order.
    """
    mean = statistics.fmean(tally.seconds)
    low, high = ratio_bootstrap_ci(tally.seconds, anchor)
    first_low, first_high = ratio_bootstrap_ci(tally.first_text, anchor)
    return {
        "mean_s": round(mean, 2), "median_s": round(statistics.median(tally.seconds), 2),
        "first_text_s": round(statistics.fmean(tally.first_text), 2),
        "calls": round(statistics.fmean(tally.calls), 2),
        "prompt_tokens": round(statistics.fmean(tally.prompt_tokens)),
        "completion_tokens": round(statistics.fmean(tally.completion_tokens)),
        "reused_prompt_tokens": round(statistics.fmean(tally.reused_tokens)),
        "x_rag": round(mean / statistics.fmean(anchor), 3),
        "x_rag_95": [round(low, 3), round(high, 3)],
        "first_text_x_rag": round(statistics.fmean(tally.first_text)
                                  / statistics.fmean(anchor), 3),
        "first_text_x_rag_95": [round(first_low, 3), round(first_high, 3)],
    }


def run_tally(run: RunResults) -> Tally:
    """A run's timed turns, in sample order (outputs without a timing are left out)."""
    tally = Tally()
    for sample_id, _template, _metadata, _text, trace in run.traces("seconds"):
        if "seconds" in trace:
            tally.add_trace(sample_id, trace, bool(trace.get("cache_hit", False)))
    return tally


@dataclass(frozen=True)
class LatencyView:
    """The report section's data: each run's row against the first rag run's questions."""

    anchor: str
    rows: tuple[tuple[str, int, Mapping[str, Any]], ...]


def latency_view(runs: Sequence[RunResults], labels: Sequence[str]) -> LatencyView | None:
    """Each run's row on the questions it shares with the first rag run (none without one)."""
    tallies = [(label, run.info.system, run_tally(run))
               for run, label in zip(runs, labels, strict=True)]
    anchor = next(((label, t) for label, system, t in tallies if system == "rag" and t.ids),
                  None)
    if anchor is None:
        return None
    rows = []
    for label, _system, tally in tallies:
        shared = [i for i in anchor[1].ids if i in set(tally.ids)]
        if not shared:
            continue
        rows.append((label, len(shared), latency_row(
            tally.only(shared), anchor[1].only(shared).seconds)))
    return LatencyView(anchor[0], tuple(rows))


class ChatLatencyAnalysis:
    """Seconds per turn and the ratio to rag's turn, as a report section."""

    def report_sections(self, runs: Sequence[RunResults],
                        labels: Sequence[str]) -> list[ReportSection]:
        """One table over every chat_latency run of the report (needs a rag run)."""
        view = latency_view(runs, labels)
        if view is None:
            return []
        return [ReportSection(__package__ or "", "chat_latency.html.j2", "chat_latency.md.j2",
                              {"latency": view})]

    def run_sections(self, run: RunResults, breakdown: str | None) -> list[ReportSection]:
        """Nothing inside a run's own part: the table compares runs."""
        return []
