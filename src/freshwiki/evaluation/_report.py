"""Self-contained HTML and Markdown reports of evaluation runs.

A report is read long after the run, often by someone who did not run it, and often offline or
as an attachment: so the HTML is one file with inline CSS and inline SVG charts drawn here (no
CDN, no JavaScript), and every number comes with its interval and n so a reader can tell a
difference from noise. The Markdown summary carries the key tables for pull requests and notes.

The module computes everything (summaries, chart geometry) into plain view objects; the Jinja2
templates in ``templates/`` only lay them out. Output is deterministic: the same runs give the
same bytes (fixed bootstrap seed, no "generated at" time).

What a particular benchmark or system adds (a paper's tables, a pipeline's breakdown) is not
known here: the analysis registered for the run's benchmark or system name
(:func:`freshwiki.benchmarks.benchmark_analysis`, :func:`freshwiki.systems.system_analysis`)
returns :class:`~freshwiki.results.ReportSection` s, rendered from that analysis's own
templates with this module's filters and chart macro, and placed after the comparisons
(sections about runs together) or inside a run's part (sections about one run).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from itertools import combinations
from pathlib import Path
from typing import Any, Protocol

import jinja2
from markupsafe import Markup

from freshwiki import __version__
from freshwiki.benchmarks import benchmark_analysis
from freshwiki.errors import FreshwikiError
from freshwiki.evaluation._stats import (
    Accounting,
    Agreement,
    GroupSummary,
    PairedComparison,
    account,
    classifying_scorers,
    failed_keys,
    label_agreement,
    natural_key,
    paired_comparison,
    summarize,
)
from freshwiki.evaluation._types import FailedItem, RunInfo, RunResults, ScoredItem
from freshwiki.results import Analysis, AnalysisFactory, ChartSpec, ReportSection
from freshwiki.stats import Interval
from freshwiki.systems import system_analysis

ATTRIBUTION = "Text from Wikipedia, CC BY-SA 4.0."
HTML_NAME = "report.html"
MARKDOWN_NAME = "report.md"
ALL = "all"
"""Column/row/group name for the pooled value (all breakdown values, all templates)."""
MISSING = "(missing)"
"""Shown for items whose sample lacks a breakdown key."""

# Chart geometry in SVG user units. Public so tests can derive where a value must be drawn:
# a value v in domain (lo, hi) is at y = PLOT_TOP + (hi - v) / (hi - lo) * PLOT_HEIGHT.
PLOT_TOP = 34.0
PLOT_HEIGHT = 180.0
PLOT_LEFT = 52.0
BAR_WIDTH = 18.0
BAR_GAP = 2.0
GROUP_GAP = 22.0
CAP_HALF_WIDTH = 4.0
# Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442")
POOLED_COLOUR = "#999999"

_MAX_INFERRED_VALUES = 6
_EXAMPLES_PER_LABEL = 3
_EXAMPLE_CHARS = 800
_FAILURE_ROWS = 50


# ----------------------------------------------------------------------------- charts


@dataclass(frozen=True)
class Whisker:
    """A CI whisker: a vertical line from ``y_high`` (top) to ``y_low`` with end caps."""

    x: float
    y_low: float
    y_high: float
    cap: float


@dataclass(frozen=True)
class Bar:
    """One bar: the rectangle, its whisker and the hover text (SVG ``<title>``)."""

    x: float
    y: float
    width: float
    height: float
    colour: str
    group: str
    series: str
    title: str
    whisker: Whisker | None


@dataclass(frozen=True)
class BarChart:
    """Everything the SVG template draws, already in user units."""

    title: str
    width: float
    height: float
    plot_left: float
    plot_right: float
    plot_top: float
    plot_bottom: float
    baseline: float
    ticks: tuple[tuple[float, str], ...]
    groups: tuple[tuple[float, str], ...]
    bars: tuple[Bar, ...]
    legend_x: float
    legend: tuple[tuple[float, str, str], ...]
    x_label: str


def value_y(value: float, domain: tuple[float, float]) -> float:
    """Where ``value`` is drawn: linear in ``domain``, top of the plot at the domain's top."""
    lo, hi = domain
    clamped = min(max(value, lo), hi)
    return PLOT_TOP + (hi - clamped) / (hi - lo) * PLOT_HEIGHT


class Plotted(Protocol):
    """What a bar is drawn from: a mean, its interval and its n."""

    @property
    def mean(self) -> float | None: ...

    @property
    def ci(self) -> Interval | None: ...

    @property
    def n(self) -> int: ...


def bar_chart(title: str, groups: Sequence[str], series: Sequence[str],
              values: Mapping[tuple[str, str], Plotted | None], *,
              domain: tuple[float, float] = (0.0, 1.0), x_label: str = "template",
              colours: Mapping[str, str] | None = None) -> BarChart:
    """Lay out a grouped bar chart of means with CI whiskers.

    Args:
        title: Shown above the plot.
        groups: Groups along the x axis (templates), in order.
        series: Bars within each group (breakdown values, runs), in order; also the legend.
        values: The summary drawn for (group, series); missing or empty ones get no bar.
        domain: The y axis range; scores live in [0, 1], differences in [-1, 1].
        x_label: Axis caption.
        colours: Colour per series; others take the palette in order.

    Returns:
        The chart geometry. Bars grow from 0 (or the domain edge nearest 0).
    """
    lo, hi = domain
    colours = dict(colours or {})
    palette = iter(PALETTE * (1 + len(series) // len(PALETTE)))
    colour = {s: colours[s] if s in colours else next(palette) for s in series}
    group_width = len(series) * BAR_WIDTH + (len(series) - 1) * BAR_GAP
    plot_right = PLOT_LEFT + len(groups) * (group_width + GROUP_GAP)
    baseline = value_y(min(max(0.0, lo), hi), domain)
    bars: list[Bar] = []
    centres: list[tuple[float, str]] = []
    for g, group in enumerate(groups):
        start = PLOT_LEFT + GROUP_GAP / 2 + g * (group_width + GROUP_GAP)
        centres.append((start + group_width / 2, group))
        for s, name in enumerate(series):
            summary = values.get((group, name))
            if summary is None or summary.mean is None:
                continue
            x = start + s * (BAR_WIDTH + BAR_GAP)
            top = value_y(summary.mean, domain)
            whisker = None
            if summary.ci is not None:
                whisker = Whisker(x=x + BAR_WIDTH / 2, y_low=value_y(summary.ci.low, domain),
                                  y_high=value_y(summary.ci.high, domain), cap=CAP_HALF_WIDTH)
            bars.append(Bar(
                x=x, y=min(top, baseline), width=BAR_WIDTH, height=abs(baseline - top),
                colour=colour[name], group=group, series=name, whisker=whisker,
                title=f"{name}, {x_label} {group}: {fmt_estimate(summary.mean, summary.ci)}, "
                      f"n={summary.n}",
            ))
    step = 0.25 if hi - lo <= 1 else 0.5
    count = round((hi - lo) / step)
    ticks = tuple((value_y(lo + k * step, domain), f"{lo + k * step:g}")
                  for k in range(count + 1))
    legend_x = plot_right + 16
    legend = tuple((PLOT_TOP + 16.0 * k, name, colour[name]) for k, name in enumerate(series))
    longest = max((len(s) for s in series), default=0)
    width = legend_x + 16 + 6.5 * longest + 8 if len(series) > 1 else plot_right + 12
    width = max(width, PLOT_LEFT + 7.0 * len(title) + 8, 240.0)  # room for the title
    return BarChart(
        title=title, width=width, height=PLOT_TOP + PLOT_HEIGHT + 44,
        plot_left=PLOT_LEFT, plot_right=plot_right, plot_top=PLOT_TOP,
        plot_bottom=PLOT_TOP + PLOT_HEIGHT, baseline=baseline, ticks=ticks,
        groups=tuple(centres), bars=tuple(bars), legend_x=legend_x,
        legend=legend if len(series) > 1 else (), x_label=x_label,
    )


# ----------------------------------------------------------------------------- formatting


def fmt_number(value: float | None, digits: int = 3) -> str:
    """A value with fixed decimals, or an em dash when there is none."""
    return "—" if value is None else f"{value:.{digits}f}"


def fmt_interval(ci: Interval | None, digits: int = 3) -> str:
    """``[low, high]``, or empty when there is no interval."""
    return "" if ci is None else f"[{ci.low:.{digits}f}, {ci.high:.{digits}f}]"


def fmt_estimate(mean: float | None, ci: Interval | None, digits: int = 3) -> str:
    """``mean [low, high]``: how every mean in a report is printed."""
    text = fmt_number(mean, digits)
    return f"{text} {fmt_interval(ci, digits)}" if ci is not None else text


def fmt_p(p: float | None) -> str:
    """A p-value to two significant digits, ``<0.001`` below that."""
    if p is None:
        return "—"
    return "<0.001" if p < 0.001 else f"{p:.2g}"


def _md(text: object) -> str:
    """Text safe inside a Markdown table cell."""
    return re.sub(r"\s+", " ", str(text)).replace("|", "\\|").strip()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "x"


# ----------------------------------------------------------------------------- view model


@dataclass(frozen=True)
class ScoreTable:
    """Means of one scorer by template (rows) x one breakdown's values (columns).

    The last column pools the breakdown values, the last row pools the templates.
    """

    scorer: str
    breakdown: str | None
    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[GroupSummary | None, ...]], ...]
    chart: BarChart


@dataclass(frozen=True)
class Headline:
    """The one number a reader looks at first: the primary scorer pooled over templates."""

    scorer: str
    summary: GroupSummary | None
    n_templates: int
    accounting: Accounting | None = None


@dataclass(frozen=True)
class Example:
    """One answer shown as an example of a label."""

    sample_id: str
    template: str
    value: float
    output: str
    explanation: str


@dataclass(frozen=True)
class SideBySide:
    """Every scorer's mean per template next to each other, with two scorers' agreement.

    WikiContradict is scored three ways (LLM judge, deterministic match, and how often they
    agree); reading them in one row shows at once whether a template's result depends on
    who scored it.
    """

    scorers: tuple[str, ...]
    agreement_of: tuple[str, str] | None
    rows: tuple[tuple[str, tuple[GroupSummary | None, ...], Agreement | None], ...]
    chart: BarChart


@dataclass(frozen=True)
class RenderedSection:
    """An analysis's section, rendered for both outputs (see :class:`ReportSection`)."""

    html: Markup
    markdown: str


@dataclass(frozen=True)
class RunView:
    """Everything shown about one run."""

    results: RunResults
    label: str
    anchor: str
    headline: Headline
    header: tuple[tuple[str, str], ...]
    judge: str
    config_json: str
    breakdowns: tuple[str, ...]
    scorers: tuple[str, ...]
    templates: tuple[str, ...]
    n_samples: int
    tables: tuple[ScoreTable, ...]
    by_template: Mapping[str, Mapping[str, GroupSummary]]
    overall: Mapping[str, GroupSummary | None]
    agreements: tuple[Agreement, ...]
    side_by_side: SideBySide | None
    failure_counts: tuple[tuple[str, str, str, int], ...]
    failure_rows: tuple[FailedItem, ...]
    accounting: tuple[Accounting, ...]
    warnings: tuple[str, ...]
    examples: tuple[tuple[str, tuple[tuple[str, tuple[Example, ...]], ...]], ...]
    sections: tuple[RenderedSection, ...] = ()
    """What the analyses of the run's benchmark and system show inside its part."""


@dataclass(frozen=True)
class ComparisonView:
    """Paired comparisons of two runs, per shared scorer, by template and pooled."""

    a: RunView
    b: RunView
    scorers: tuple[tuple[str, tuple[PairedComparison, ...], BarChart], ...]


def run_label(results: RunResults) -> str:
    """The run's human name: its label, or ``system/model``."""
    info = results.info
    return info.label or f"{info.system}/{info.model}"


def _is_breakdown_value(value: Any) -> bool:
    return isinstance(value, str | bool | int) and not isinstance(value, float)


def infer_breakdowns(items: Sequence[ScoredItem]) -> tuple[str, ...]:
    """Metadata keys worth grouping by when the run does not name any.

    A key qualifies when every value is a plain string/bool/int, it takes 2 to 6 distinct
    values, and fewer distinct values than there are samples (so ids and titles don't).
    """
    seen: dict[str, set[Any]] = defaultdict(set)
    unusable: set[str] = set()
    for item in items:
        for key, value in item.metadata.items():
            if _is_breakdown_value(value):
                seen[key].add(value)
            else:
                unusable.add(key)
    n_samples = len({i.sample_id for i in items})
    return tuple(sorted(
        key for key, values in seen.items()
        if key not in unusable and 2 <= len(values) <= _MAX_INFERRED_VALUES
        and len(values) < n_samples
    ))


def _breakdowns(results: RunResults, by: Sequence[str] | None) -> tuple[str, ...]:
    keys = {k for i in results.items for k in i.metadata}
    if by is not None:
        unknown = [b for b in by if b not in keys and b not in ("scorer", "template")]
        if unknown:
            raise FreshwikiError(
                f"run {results.info.run_id}: no sample metadata key {', '.join(unknown)} to "
                "break results down by",
                hint=f"use one of: {', '.join(sorted(keys)) or '(the run has no metadata)'}.",
            )
        return tuple(b for b in by if b not in ("scorer", "template"))
    configured = results.info.config.get("breakdowns")
    if isinstance(configured, list | tuple) and all(isinstance(b, str) for b in configured):
        return tuple(b for b in configured if b in keys)
    return infer_breakdowns(results.items)


def _primary_scorer(results: RunResults, scorers: Sequence[str]) -> str | None:
    configured = results.info.config.get("scorers")
    if isinstance(configured, list | tuple):
        for name in configured:
            if isinstance(name, str) and name in scorers:
                return name
    return scorers[0] if scorers else None


def _score_table(run: str, scorer: str, items: Sequence[ScoredItem],
                 breakdown: str | None, templates: Sequence[str],
                 by_template: Mapping[str, GroupSummary],
                 overall: GroupSummary | None) -> ScoreTable:
    cells: dict[tuple[str, str], GroupSummary | None] = {}
    for t in templates:
        cells[(t, ALL)] = by_template.get(t)
    cells[(ALL, ALL)] = overall
    columns: list[str] = []
    if breakdown is not None:
        for s in summarize(items, by=("template", breakdown)):
            value = s.key[1] if s.key[1] is not None else MISSING
            cells[(str(s.key[0]), value)] = s
        for s in summarize(items, by=(breakdown,)):
            value = s.key[0] if s.key[0] is not None else MISSING
            cells[(ALL, value)] = s
            columns.append(value)
    columns.append(ALL)
    row_names = [*templates, ALL]
    rows = tuple((t, tuple(cells.get((t, c)) for c in columns)) for t in row_names)
    # The run's name is in the title so a chart copied out of the report still says whose it is.
    title = f"{run}: {scorer} by template" + (f" x {breakdown}" if breakdown else "")
    chart = bar_chart(title, row_names, columns, cells, colours={ALL: POOLED_COLOUR}
                      if len(columns) > 1 else None)
    return ScoreTable(scorer=scorer, breakdown=breakdown, columns=tuple(columns), rows=rows,
                      chart=chart)


def _examples(items: Sequence[ScoredItem]) -> tuple[tuple[str, tuple[Example, ...]], ...]:
    by_label: dict[str, list[ScoredItem]] = defaultdict(list)
    for item in sorted(items, key=lambda i: (natural_key(i.sample_id), natural_key(i.template))):
        by_label[item.label if item.label is not None else f"value {item.value:g}"].append(item)

    def order(label: str) -> tuple[float, str]:
        group = by_label[label]
        return -math.fsum(i.value for i in group) / len(group), label

    shown = []
    for label in sorted(by_label, key=order):
        picked: list[ScoredItem] = []
        # Spread the examples over templates before taking a second one from any template.
        for item in by_label[label]:
            if len(picked) < _EXAMPLES_PER_LABEL and item.template not in {
                    p.template for p in picked}:
                picked.append(item)
        for item in by_label[label]:
            if len(picked) < _EXAMPLES_PER_LABEL and item not in picked:
                picked.append(item)
        shown.append((label, tuple(Example(
            sample_id=i.sample_id, template=i.template, value=i.value,
            output=_clip(i.output), explanation=_clip(i.explanation),
        ) for i in picked)))
    return tuple(shown)


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _EXAMPLE_CHARS else text[:_EXAMPLE_CHARS].rstrip() + " …"


def _run_view(results: RunResults, label: str, by: Sequence[str] | None) -> RunView:
    info = results.info
    items = results.items
    scorers = sorted({i.scorer for i in items}, key=natural_key)
    primary = _primary_scorer(results, scorers)
    if primary is not None:
        scorers.remove(primary)
        scorers.insert(0, primary)
    templates = tuple(sorted({i.template for i in items}, key=natural_key))
    breakdowns = _breakdowns(results, by)
    tables: list[ScoreTable] = []
    by_template: dict[str, dict[str, GroupSummary]] = {}
    overall: dict[str, GroupSummary | None] = {}
    for scorer in scorers:
        mine = [i for i in items if i.scorer == scorer]
        by_template[scorer] = {str(s.key[0]): s for s in summarize(mine, by=("template",))}
        overall[scorer] = next(iter(summarize(mine, by=())), None)
        for breakdown in breakdowns or (None,):
            tables.append(_score_table(label, scorer, mine, breakdown, templates,
                                       by_template[scorer], overall[scorer]))
    labelled = classifying_scorers(items)
    agreements = tuple(label_agreement(items, a, b) for a, b in combinations(
        [s for s in scorers if s in labelled], 2))
    side_by_side = None
    if len(scorers) > 1:
        side_by_side = _side_by_side(label, scorers, templates, items, by_template, overall,
                                     agreements[0] if agreements else None)
    accounting, warnings = _accounting(results, scorers, templates, by_template, overall)
    counts = Counter((f.stage, f.scorer or "", f.error_type) for f in results.failures)
    failure_counts = tuple((*key, n) for key, n in sorted(counts.items(),
                                                          key=lambda kv: (-kv[1], kv[0])))
    failure_rows = tuple(sorted(results.failures, key=lambda f: (
        natural_key(f.sample_id), natural_key(f.template), f.stage))[:_FAILURE_ROWS])
    header = (
        ("run id", info.run_id), ("benchmark", info.benchmark), ("system", info.system),
        ("model", info.model), ("judge", judge_line(info)), ("code version", info.code_version),
        *((f"model hash: {name}", value) for name, value in sorted(info.model_hashes.items())),
        ("created", info.created_at.isoformat(timespec="seconds")),
        ("last result", info.updated_at.isoformat(timespec="seconds")),
        ("answers scored", str(len({(i.sample_id, i.template) for i in items}))),
        ("failures", str(len(results.failures))),
    )
    return RunView(
        results=results, label=label, anchor=f"run-{_slug(info.run_id)}",
        headline=Headline(scorer=primary or "", summary=overall.get(primary or ""),
                          n_templates=len(templates),
                          accounting=next((a for a in accounting
                                           if a.scorer == primary and a.template is None),
                                          None)),
        header=header,
        judge=judge_line(info),
        config_json=json.dumps(info.config, indent=2, sort_keys=True, default=str),
        breakdowns=breakdowns, scorers=tuple(scorers), templates=templates,
        n_samples=len({i.sample_id for i in items}), tables=tuple(tables),
        by_template=by_template, overall=overall, agreements=agreements,
        side_by_side=side_by_side,
        failure_counts=failure_counts, failure_rows=failure_rows,
        accounting=accounting, warnings=warnings,
        examples=tuple((s, _examples([i for i in items if i.scorer == s])) for s in scorers),
        sections=tuple(render_section(s) for analysis in _analyses(results)
                       for s in analysis.run_sections(
                           results, breakdowns[0] if breakdowns else None)),
    )


def judge_line(info: RunInfo) -> str:
    """Who judged the run, and a plain warning when it was the model under test.

    Compared by model identity (the weights' hash, or server and model name), not by spec, so
    a named model and a path to the same file count as one model.
    """
    judge = info.model_hashes.get("judge")
    if judge is None:
        return "none"
    spec = info.config.get("judge_spec") or judge
    if judge == info.model_hashes.get("model"):
        return f"{spec}: the model under test, grading its own answers"
    return str(spec)


def _accounting(results: RunResults, scorers: Sequence[str], templates: Sequence[str],
                by_template: Mapping[str, Mapping[str, GroupSummary]],
                overall: Mapping[str, GroupSummary | None],
                ) -> tuple[tuple[Accounting, ...], tuple[str, ...]]:
    """Scored / total and both means per scorer x template and pooled; warnings to show.

    Scorers that only failed (no score at all) and templates that only failed are included:
    a cell where everything failed is the one a reader most needs to see.
    """
    names = list(scorers) + sorted({f.scorer for f in results.failures
                                    if f.stage == "score" and f.scorer
                                    and f.scorer not in scorers}, key=natural_key)
    all_templates = list(templates) + sorted(
        {f.template for f in results.failures} - set(templates), key=natural_key)
    rows: list[Accounting] = []
    warnings: list[str] = []
    for scorer in names:
        failed = failed_keys(results.failures, scorer)
        for template in all_templates:
            rows.append(account(by_template.get(scorer, {}).get(template),
                                sum(1 for _, t in failed if t == template), scorer, template))
        pooled = account(overall.get(scorer), len(failed), scorer, None)
        rows.append(pooled)
        for row in (r for r in rows if r.scorer == scorer and r.differs):
            where = f"template {row.template}" if row.template is not None else "all templates"
            warnings.append(
                f"{scorer}, {where}: {row.n_failed} of {row.n_total} items failed; counted as "
                f"incorrect the mean is {fmt_number(row.mean_with_failures)}, outside the "
                f"scored mean's CI {fmt_interval(row.ci) if row.ci else '(none)'}.")
    return tuple(rows), tuple(warnings)


def _side_by_side(run: str, scorers: Sequence[str], templates: Sequence[str],
                  items: Sequence[ScoredItem],
                  by_template: Mapping[str, Mapping[str, GroupSummary]],
                  overall: Mapping[str, GroupSummary | None],
                  agreement: Agreement | None) -> SideBySide:
    rows = []
    values: dict[tuple[str, str], GroupSummary | None] = {}
    for t in [*templates, ALL]:
        cells = tuple(overall[s] if t == ALL else by_template[s].get(t) for s in scorers)
        values.update({(t, s): c for s, c in zip(scorers, cells, strict=True)})
        agreed = None
        if agreement is not None:
            agreed = agreement if t == ALL else label_agreement(
                [i for i in items if i.template == t], agreement.scorer_a, agreement.scorer_b)
        rows.append((t, cells, agreed))
    pair = (agreement.scorer_a, agreement.scorer_b) if agreement is not None else None
    chart = bar_chart(f"{run}: scorers side by side", [*templates, ALL], scorers, values)
    return SideBySide(scorers=tuple(scorers), agreement_of=pair, rows=tuple(rows), chart=chart)


def _comparison(a: RunView, b: RunView) -> ComparisonView:
    shared = [s for s in a.scorers if s in b.scorers]
    per_scorer = []
    for scorer in shared:
        templates = sorted({i.template for i in a.results.items if i.scorer == scorer}
                           & {i.template for i in b.results.items if i.scorer == scorer},
                           key=natural_key)
        rows = tuple(paired_comparison(a.results, b.results, scorer, t)
                     for t in [*templates, None])
        values = {((c.template or ALL), "A - B"): _difference_summary(c) for c in rows}
        chart = bar_chart(f"{scorer}: A - B, paired", [*templates, ALL],
                          ["A - B"], values, domain=(-1.0, 1.0))
        per_scorer.append((scorer, rows, chart))
    return ComparisonView(a=a, b=b, scorers=tuple(per_scorer))


def _share_samples(a: RunResults, b: RunResults) -> bool:
    return not {i.sample_id for i in a.items}.isdisjoint(i.sample_id for i in b.items)


def _difference_summary(c: PairedComparison) -> GroupSummary | None:
    if c.difference is None:
        return None
    return GroupSummary(by=("template",), key=(c.template,), n=c.n_paired, n_samples=0,
                        mean=c.difference, ci=c.ci, label_counts={})


def _runs_chart(views: Sequence[RunView], scorer: str) -> BarChart:
    having = [v for v in views if scorer in v.scorers]
    templates = sorted({t for v in having for t in v.by_template[scorer]}, key=natural_key)
    values: dict[tuple[str, str], GroupSummary | None] = {}
    for v in having:
        for t in templates:
            values[(t, v.label)] = v.by_template[scorer].get(t)
        values[(ALL, v.label)] = v.overall[scorer]
    return bar_chart(f"{scorer} by template, all runs", [*templates, ALL],
                     [v.label for v in having], values)


def _labels(results: Sequence[RunResults]) -> list[str]:
    labels = [run_label(r) for r in results]
    repeated = {name for name, n in Counter(labels).items() if n > 1}
    return [f"{name} [{r.info.run_id}]" if name in repeated else name
            for name, r in zip(labels, results, strict=True)]


def _analyses(results: RunResults) -> list[Analysis]:
    """The analyses registered for the run's benchmark and its system, in that order."""
    found = [benchmark_analysis(results.info.benchmark), system_analysis(results.info.system)]
    return [factory() for factory in found if factory is not None]


def _report_sections(results: Sequence[RunResults],
                     labels: Sequence[str]) -> list[ReportSection]:
    """Every benchmark analysis's sections over the report's runs of that benchmark.

    One analysis may serve several benchmark names (HelloFresh's notes and edits); it is
    asked once, with all their runs, in the order the runs come.
    """
    groups: dict[AnalysisFactory, tuple[list[RunResults], list[str]]] = {}
    for run, label in zip(results, labels, strict=True):
        factory = benchmark_analysis(run.info.benchmark)
        if factory is not None:
            runs, names = groups.setdefault(factory, ([], []))
            runs.append(run)
            names.append(label)
    return [section for factory, (runs, names) in groups.items()
            for section in factory().report_sections(runs, names)]


# ----------------------------------------------------------------------------- rendering


def layout_chart(chart: BarChart | ChartSpec) -> BarChart:
    """A chart an analysis described as data, laid out as every chart of the report."""
    if isinstance(chart, BarChart):
        return chart
    return bar_chart(chart.title, chart.groups, chart.series, chart.values,
                     domain=chart.domain, x_label=chart.x_label)


@lru_cache(maxsize=32)
def _environment(package: str | None = None) -> jinja2.Environment:
    """The report's Jinja2 environment.

    With ``package``, that package's ``templates/`` folder comes first (an analysis's section
    templates), the report's own after it.
    """
    folders = [] if package is None else [str(resources.files(package) / "templates")]
    folders.append(str(resources.files("freshwiki.evaluation") / "templates"))
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folders),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",),
                                            disabled_extensions=("md.j2",),
                                            default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(num=fmt_number, ci=fmt_interval, est=fmt_estimate, p=fmt_p, md=_md,
                       coord=lambda v: f"{v:.2f}", layout=layout_chart)
    return env


def render_section(section: ReportSection) -> RenderedSection:
    """Render an analysis's section for the HTML and the Markdown report.

    The rendered text replaces the template's place in the report as an include would: its
    last newline is dropped, since the report's own line break follows it.
    """
    env = _environment(section.package)
    html, markdown = (env.get_template(name).render(**section.context)
                      for name in (section.html, section.markdown))
    return RenderedSection(html=Markup(html.removesuffix("\n")),
                           markdown=markdown.removesuffix("\n"))


def _render(name: str, **context: Any) -> str:
    return _environment().get_template(name).render(**context)


def write_report(results: Sequence[RunResults], out_dir: Path | str, *,
                 by: Sequence[str] | None = None) -> tuple[Path, Path]:
    """Write ``report.html`` and ``report.md`` for one or more runs into ``out_dir``.

    Args:
        results: The runs, in the order to show them; with two or more, each pair is compared
            on the answers both have (first against each later one, and so on).
        out_dir: Folder to write into (created if missing; existing reports are replaced).
        by: Sample-metadata keys to break results down by; default: the benchmark's
            ``breakdowns`` from the run config, else keys with few distinct values.

    Returns:
        ``(html_path, markdown_path)``.

    Raises:
        FreshwikiError: no runs were given, or ``by`` names a key the runs' samples lack.
    """
    if not results:
        raise FreshwikiError("no runs to report on",
                             hint="pass one or more run ids; `freshwiki runs` lists them.")
    views = [_run_view(r, label, by) for r, label in zip(results, _labels(results),
                                                          strict=True)]
    # Runs that share no sample (other benchmarks, or one benchmark on two datasets) would
    # only list empty pairs.
    comparisons = [_comparison(a, b) for a, b in combinations(views, 2)
                   if a.results.info.benchmark == b.results.info.benchmark
                   and _share_samples(a.results, b.results)]
    shared = [s for s in views[0].scorers if all(s in v.scorers for v in views[1:])]
    runs_charts = [_runs_chart(views, s) for s in shared] if len(views) > 1 else []
    benchmarks = sorted({r.info.benchmark for r in results})
    context = {
        "sections": [render_section(s) for s in
                     _report_sections(results, [v.label for v in views])],
        "title": f"freshwiki report: {', '.join(benchmarks)}",
        "runs": views,
        "comparisons": comparisons,
        "runs_charts": runs_charts,
        "attribution": ATTRIBUTION,
        "version": __version__,
        "all": ALL,
    }
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    html_path = out / HTML_NAME
    md_path = out / MARKDOWN_NAME
    html_path.write_text(_render("report.html.j2", **context), encoding="utf-8")
    md_path.write_text(_render("report.md.j2", **context), encoding="utf-8")
    return html_path, md_path

