"""Stored runs as analyses read them, and the hook that brings an analysis to reports.

The runner stores rows that mean the same for every benchmark: one output per sample x
template (text, sample metadata, the system's trace) and one score per scorer (value, label,
explanation, the scorer's data). :class:`RunResults` is those rows, loaded. A benchmark or a
system that wants more than means in its reports (the paper's tables, a pipeline's
breakdown) provides an :class:`Analysis`, registered by name beside its factory
(``freshwiki.benchmarks.register_analysis``, ``freshwiki.systems.register_analysis``): it
reads the rows and returns :class:`ReportSection` s, each a pair of Jinja2 templates in its
own package plus what they show. The report lays those out without knowing whose they are,
so adding a benchmark with its own report section is one folder.

A layer beside :mod:`freshwiki.seams` (below systems, benchmarks and evaluation), and apart
from it on purpose: run ids fingerprint the code a benchmark imports, and no benchmark or
system imports this module at run time, so the report side can change without starting
every run anew.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from freshwiki.stats import Interval


def natural_key(text: str | None) -> tuple[Any, ...]:
    """Sort key putting ``"5"`` before ``"5.1"`` and ``"10"``, and ``None`` last.

    Template ids are version-like strings; plain string order would put "10" before "2".
    """
    if text is None:
        return (1,)
    parts = re.split(r"(\d+)", text)
    return (0, *((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p))


@dataclass(frozen=True)
class RunInfo:
    """A run's identity and configuration.

    Attributes:
        run_id: Short stable id derived from the configuration (same command → same run).
        benchmark: Benchmark name.
        system: System name.
        model: Model spec as given (``local:qwen2.5-coder-1.5b``).
        config: Everything that determines outputs: templates, system options, generation
            parameters, judge model, scorers, dataset path and hash.
        code_version: freshwiki version plus git commit (with ``+dirty`` when modified).
        model_hashes: Model identities (sha256 of local weights, or server URL + name) of the
            system's model and the judge's.
        created_at: When the run was first started (UTC).
        updated_at: When a result was last committed (UTC).
        label: Human-friendly name for reports (defaults to ``system/model``).
    """

    run_id: str
    benchmark: str
    system: str
    model: str
    config: Mapping[str, Any]
    code_version: str
    model_hashes: Mapping[str, str]
    created_at: dt.datetime
    updated_at: dt.datetime
    label: str = ""


@dataclass(frozen=True)
class ScoredItem:
    """One committed sample x template x scorer result.

    Attributes:
        sample_id: The sample's stable id.
        template: Template id.
        scorer: Scorer name.
        value: Score in [0, 1].
        label: Class label when the scorer classifies.
        explanation: The scorer's reason.
        metadata: The sample's metadata (for breakdowns such as explicit/implicit).
        output: The system's answer text (for reports' examples).
        data: What the scorer stored beside the score (``Score.data``): per-stage scores,
            matched answers, a judge's raw reply. Analyses read it; means do not.
    """

    sample_id: str
    template: str
    scorer: str
    value: float
    label: str | None = None
    explanation: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    output: str = ""
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FailedItem:
    """A sample x template (x scorer, if scoring failed) that raised, with its cause.

    Attributes:
        sample_id: The sample's stable id.
        template: Template id.
        stage: ``respond`` or ``score``.
        scorer: Scorer name when ``stage`` is ``score``.
        error_type: Exception class name.
        message: The error message.
    """

    sample_id: str
    template: str
    stage: str
    error_type: str
    message: str
    scorer: str | None = None


StoredOutput = tuple[str, str, Mapping[str, Any], str, Mapping[str, Any]]
"""``(sample_id, template, metadata, text, trace)`` of one stored output."""


class Outputs(Protocol):
    """Where a run's stored outputs are read from, on demand (traces can be large)."""

    def traces(self, key: str | None = None) -> Iterator[StoredOutput]:
        """Every output in sample order.

        With ``key``, only those whose trace holds that key at some depth (the store tests
        the JSON text before decoding it, so other traces are never parsed).
        """
        ...


@dataclass(frozen=True)
class OutputList:
    """Outputs held in memory: a run built by hand, or none at all."""

    outputs: tuple[StoredOutput, ...] = ()

    def traces(self, key: str | None = None) -> Iterator[StoredOutput]:
        """As :meth:`Outputs.traces`, ``key`` matched by the same JSON-text test."""
        needle = None if key is None else json.dumps(key) + ":"
        for output in self.outputs:
            if needle is None or needle in json.dumps(output[4]):
                yield output


@dataclass(frozen=True)
class RunResults:
    """Everything a report needs about one run: its info and its stored rows.

    Attributes:
        info: Identity and configuration.
        items: Every score, with its output's text and sample metadata.
        failures: What failed and has not succeeded since.
        outputs: The outputs with their traces, read when an analysis asks.
    """

    info: RunInfo
    items: tuple[ScoredItem, ...]
    failures: tuple[FailedItem, ...] = ()
    outputs: Outputs = field(default_factory=OutputList, compare=False, repr=False)

    def traces(self, key: str | None = None) -> Iterator[StoredOutput]:
        """The run's stored outputs (see :meth:`Outputs.traces`)."""
        return self.outputs.traces(key)


# -- what an analysis gives a report -----------------------------------------------------------


@dataclass(frozen=True)
class ChartValue:
    """One bar of a chart: a mean with its interval and what it rests on."""

    mean: float | None
    ci: Interval | None
    n: int


@dataclass(frozen=True)
class ChartSpec:
    """A grouped bar chart as data; the report turns it into SVG geometry.

    Attributes:
        title: Shown above the plot.
        groups: Groups along the x axis, in order.
        series: Bars within each group, in order (the legend).
        values: The bar for (group, series); missing ones get none.
        domain: The y axis range.
        x_label: Axis caption.
    """

    title: str
    groups: tuple[str, ...]
    series: tuple[str, ...]
    values: Mapping[tuple[str, str], ChartValue | None]
    domain: tuple[float, float] = (0.0, 1.0)
    x_label: str = "template"


@dataclass(frozen=True)
class ReportSection:
    """A part of a report that an analysis adds.

    Attributes:
        package: The package whose ``templates/`` folder holds the two templates.
        html: The HTML template's file name (rendered with autoescape).
        markdown: The Markdown template's file name.
        context: The variables both templates read.

    The templates are rendered with the report's filters (``num``, ``ci``, ``est``, ``p``,
    ``md``, ``coord``), can import the report's ``_macros.html.j2`` (``chart`` draws a
    :class:`ChartSpec`), and may not share a name with the report's own templates.
    """

    package: str
    html: str
    markdown: str
    context: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Analysis(Protocol):
    """What a benchmark or a system adds to reports, computed from its runs' stored rows."""

    def report_sections(self, runs: Sequence[RunResults],
                        labels: Sequence[str]) -> Sequence[ReportSection]:
        """Sections about these runs together, shown after the comparisons.

        Args:
            runs: The report's runs this analysis is registered for, in report order.
            labels: Each run's display name in the report.
        """
        ...

    def run_sections(self, run: RunResults, breakdown: str | None) -> Sequence[ReportSection]:
        """Sections inside one run's part of the report.

        Args:
            run: The run.
            breakdown: The report's first breakdown key for this run, if any.
        """
        ...


AnalysisFactory = Callable[[], Analysis]
"""Builds an analysis (a class taking no arguments will do), registered by name."""

