"""A static leaderboard site over every run in a results store: who leads, and does it last?

Freshness benchmarks are about time: a system that leads on last year's snapshot may not lead
on this month's. So the leaderboard is laid out by period: per benchmark (and dataset), one
row per run (system x model, with its options), one column per period, each cell the mean of
the headline scorer with its 95 % bootstrap CI and how many answers it rests on, plus a line
plot over the periods and the consistency of the ranking from one period to the next.

The site is plain files (HTML with inline CSS and SVG, no script, nothing fetched), so it
works from ``file://`` on a machine without network, can be copied anywhere, and is what
``freshwiki serve`` shows at ``/leaderboard``. Each run links to its full report
(:func:`~freshwiki.evaluation._report.write_report`), written into the site.

Rules, and why:

* **Boards.** Runs are grouped by benchmark name *and* dataset identity: everything the
  benchmark recorded about its data in the run config (``config["dataset"]``: content hash,
  kind, snapshots, ...) except the file's path, which differs between machines holding the same
  file. Runs of one benchmark on different datasets answered different questions, so they get
  separate boards, each saying so on the page and on the index; they are never ranked together.
* **Periods.** A sample's period is its metadata ``snapshot`` (GrowOVER) or ``period``
  (HelloFresh: month or week), the first of :data:`PERIOD_KEYS` the board's samples carry;
  a benchmark without either (WikiContradict) has one pooled column and says it has no
  periods. Periods a run config declares (GrowOVER's ``snapshots``) and months or ISO weeks
  missing between the first and last are shown too: such a period with no scored answer is an
  empty cell with a note, never a 0, and breaks the plotted line.
* **n scored / n total**, as run reports count them: scored = answers (sample x template)
  the headline scorer scored; total = scored + failed (generating the answer failed, or the
  headline scorer did). A cell also flags when counting the failed answers as incorrect
  would move the mean outside its CI. A failed sample that no run ever answered has no known
  period, so it counts only in the pooled column (and the page says how many).
* **Headline scorer.** The first scorer of the board's earliest run's configuration that has
  scores (a benchmark lists its main scorer first), unless the caller chooses one.
* **Ranking consistency.** Within each period with data, runs are ranked by mean (1 = best;
  equal means share their average rank). Consecutive such periods are compared with Kendall's
  τ-b over the runs ranked in both (τ-b corrects for ties; a run missing from either period is
  left out of that pair, and the pair shows how many runs it compared). Undefined with fewer
  than two common runs or when one side is all ties. Periods without data are skipped, so the
  comparison jumps over them. One run alone has no ranking over time, and the page says so.

Everything is computed here into view objects; the Jinja2 templates only lay them out. The
site is built in a temporary folder beside the target and swapped in, so a reader never sees
half a site; the same store gives the same bytes (fixed bootstrap seed, no build time shown).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import re
import shutil
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from itertools import pairwise
from pathlib import Path
from typing import Any

import jinja2

from freshwiki import __version__
from freshwiki.errors import FreshwikiError
from freshwiki.evaluation._report import (
    ATTRIBUTION,
    HTML_NAME,
    PALETTE,
    PLOT_HEIGHT,
    PLOT_LEFT,
    PLOT_TOP,
    BarChart,
    bar_chart,
    fmt_estimate,
    fmt_interval,
    fmt_number,
    layout_chart,
    value_y,
    write_report,
)
from freshwiki.evaluation._stats import (
    Accounting,
    GroupSummary,
    account,
    failed_keys,
    natural_key,
    summarize,
)
from freshwiki.evaluation._store import ResultsStore
from freshwiki.evaluation._types import RunResults, ScoredItem
from freshwiki.stats import kendall_tau_b, ranks

PERIOD_KEYS = ("snapshot", "period")
"""Sample-metadata keys that name a sample's period, in order of preference."""
MARKER = ".freshwiki-leaderboard"
"""File in a site's root: only a folder holding it is ever replaced by a new build."""
INDEX = "index.html"
DATA = "leaderboard.json"
ALL = "all"

_DOMAIN = (0.0, 1.0)
_MAX_STEP = 180.0
_MIN_STEP = 26.0
_WIDE = 820.0
_EDGE = 26.0
_LABEL_PX = 64.0
_MAX_FILLED = 520
_DASHES = ("", "7 4", "2 3")
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_YEAR = re.compile(r"^\d{4}$")

Progress = Callable[[str, int, int], None]
"""Called with (what, done, total) while the site is written."""


class LeaderboardError(FreshwikiError):
    """A leaderboard that cannot be built as asked (unknown scorer, unsafe output folder)."""


# ----------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class BoardRun:
    """One run as the leaderboard reads it.

    Attributes:
        results: Its scored items and failures.
        answered: The sample metadata of every committed output, by (sample, template),
            scored or not: what the run attempted besides its failures.
    """

    results: RunResults
    answered: Mapping[tuple[str, str], Mapping[str, Any]]


def load_runs(store: ResultsStore) -> list[BoardRun]:
    """Every run of ``store`` with what the leaderboard needs, oldest first."""
    ids = [o.info.run_id for o in store.list_runs()]
    runs = [BoardRun(store.load_run(i), store.output_metadata(i)) for i in ids]
    return sorted(runs, key=lambda r: (r.results.info.created_at, r.results.info.run_id))


SERIES_KEYS = ("series", "kind", "templates")
"""What identifies a snapshot series' dataset on a board (see :func:`dataset_identity`)."""


_LOCATION_KEYS = frozenset({"path", "data_dir", "source"})
"""Keys that said where data lived in runs stored before paths left run identities (the
dataset's path, simulated chat's ``data_dir``, WikiContradict's ``revisions.source``): left
out of a board's dataset fingerprint, so old and new runs on the same data share a board."""


def _without_locations(value: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k): _without_locations(v) if isinstance(v, Mapping) else v
            for k, v in value.items() if k not in _LOCATION_KEYS}


def dataset_identity(config: Mapping[str, Any]) -> tuple[str, str, str]:
    """``(fingerprint, file name, content hash)`` of the dataset a run config records.

    The fingerprint covers everything recorded but where the data lived
    (:data:`_LOCATION_KEYS`); ``("", "", "")`` when the config records no dataset (such runs
    share one board per benchmark, marked as unrecorded).
    """
    dataset = config.get("dataset")
    if not isinstance(dataset, Mapping) or not dataset:
        return "", "", ""
    if "series" in dataset:
        # A benchmark that builds its data as a series of snapshots (GrowOVER) says which
        # build it is apart from which snapshots a run took: runs on a subset of the same
        # build answer the same questions per snapshot and share a board.
        ident = {str(k): v for k, v in dataset.items() if k in SERIES_KEYS}
    else:
        ident = _without_locations(dataset)
    canonical = json.dumps(ident, sort_keys=True, separators=(",", ":"), default=str)
    fingerprint = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]
    # Runs from before paths left the identity record the path in ``dataset``; newer ones
    # beside it, under ``data_location``.
    location = config.get("data_location")
    path = dataset.get("path") or (location.get("path") if isinstance(location, Mapping) else None)
    content = (dataset.get("series") or dataset.get("dataset_hash") or dataset.get("sha256")
               or "")
    return fingerprint, Path(str(path)).name if path else "", str(content)[:12]


# ----------------------------------------------------------------------------- view model


@dataclass(frozen=True)
class Cell:
    """One run in one period (or all periods pooled).

    Attributes:
        summary: Mean and CI of the headline scorer; ``None`` without a scored answer.
        accounting: Scored / total and the mean with failures counted as incorrect, as
            run reports show them (:class:`~freshwiki.evaluation._stats.Accounting`).
        rank: Rank among the runs with a mean here (1 = best), ``None`` when unranked.
    """

    summary: GroupSummary | None
    accounting: Accounting
    rank: float | None

    @property
    def n_scored(self) -> int:
        """Answers (sample x template) the headline scorer scored."""
        return self.accounting.n_scored

    @property
    def n_total(self) -> int:
        """Answers scored plus answers whose generation or headline scoring failed."""
        return self.accounting.n_total


@dataclass(frozen=True)
class Entry:
    """One row: a run (system x model with its options).

    Attributes:
        run_id: Its id.
        label: Its display name (``system/model`` unless labelled; the id when repeated).
        system: System name.
        model: Model spec.
        cells: One per period of the board, in order.
        overall: All periods pooled.
        unplaced: Failed answers whose sample has no known period.
        other: Every scorer of the board with this run's pooled mean.
        report: Link to the run's report, relative to a board page (``""``: none written).
        colour: Its colour in the plot.
        dash: Its stroke dash pattern (``""``: solid), so more runs than colours stay apart.
        code_version: The code version(s) the run was made with.
        created: First result time (UTC, minutes).
        updated: Last result time (UTC, minutes).
    """

    run_id: str
    label: str
    system: str
    model: str
    cells: tuple[Cell, ...]
    overall: Cell
    unplaced: int
    other: tuple[tuple[str, GroupSummary | None], ...]
    report: str
    colour: str
    dash: str
    code_version: str
    created: str
    updated: str


@dataclass(frozen=True)
class Tau:
    """Kendall's τ-b between the rankings of two consecutive periods with data."""

    before: str
    after: str
    tau: float | None
    n: int
    note: str


@dataclass(frozen=True)
class LinePoint:
    """One plotted mean with its CI whisker, in SVG user units."""

    x: float
    y: float
    y_low: float | None
    y_high: float | None
    period: str
    title: str


@dataclass(frozen=True)
class LineSeries:
    """One run's line: polylines between periods with data (broken at gaps), and points."""

    label: str
    colour: str
    dash: str
    paths: tuple[str, ...]
    points: tuple[LinePoint, ...]


@dataclass(frozen=True)
class LineChart:
    """Everything the line-plot SVG draws, already in user units."""

    title: str
    width: float
    height: float
    plot_left: float
    plot_right: float
    plot_top: float
    plot_bottom: float
    ticks: tuple[tuple[float, str], ...]
    x_ticks: tuple[tuple[float, str, bool], ...]
    empty: tuple[tuple[float, float], ...]
    series: tuple[LineSeries, ...]
    legend_x: float
    legend: tuple[tuple[float, str, str, str], ...]
    x_label: str


@dataclass(frozen=True)
class Board:
    """One benchmark on one dataset: its table, plot and ranking consistency.

    Attributes:
        slug: File name stem of its page.
        benchmark: Benchmark name.
        dataset_name: The dataset's file name (``""`` if unrecorded).
        dataset_hash: Its content hash, shortened (``""`` if unrecorded).
        fingerprint: The dataset identity (see :func:`dataset_identity`).
        split: Boards of the same benchmark on other datasets (their slugs).
        period_key: The metadata key periods come from (``None``: no periods).
        period_kind: What a period is: ``snapshot``, ``month``, ``week``, ...
        periods: In order, including declared or missing ones without data.
        empty: Periods where no run has a scored answer.
        scorer: The headline scorer (``None``: nothing scored yet).
        scorer_note: How it was chosen.
        scorers: Every scorer with scores on this board.
        entries: Rows, best pooled mean first.
        taus: Consecutive periods with data, compared.
        mean_tau: Mean of the defined τ values.
        tau_note: Why there is no comparison over time (one run, one period), else ``""``.
        line: The plot over periods (``None`` without periods).
        bars: Pooled means as bars (boards without periods).
        notes: Everything a reader must know to read the numbers right.
        last_result: Latest result time among the runs (UTC, minutes).
    """

    slug: str
    benchmark: str
    dataset_name: str
    dataset_hash: str
    fingerprint: str
    split: tuple[str, ...]
    period_key: str | None
    period_kind: str
    periods: tuple[str, ...]
    empty: frozenset[str]
    scorer: str | None
    scorer_note: str
    scorers: tuple[str, ...]
    entries: tuple[Entry, ...]
    taus: tuple[Tau, ...]
    mean_tau: float | None
    tau_note: str
    line: LineChart | None
    bars: BarChart | None
    notes: tuple[str, ...]
    last_result: str

    @property
    def leaders(self) -> tuple[Entry, ...]:
        """The runs sharing the best pooled rank (several when their means tie)."""
        best = min((e.overall.rank for e in self.entries if e.overall.rank is not None),
                   default=None)
        return tuple(e for e in self.entries if best is not None and e.overall.rank == best)

    @property
    def title(self) -> str:
        """The benchmark, with its dataset when the benchmark has several boards."""
        if not self.split:
            return self.benchmark
        return f"{self.benchmark} ({self.dataset_name or 'dataset'} {self.dataset_hash})".strip()


@dataclass(frozen=True)
class LeaderboardSite:
    """What :func:`write_leaderboard` wrote.

    Attributes:
        root: The site folder.
        index: Its ``index.html``.
        boards: The boards, in index order.
        runs: Runs shown.
        reports: Run reports written.
    """

    root: Path
    index: Path
    boards: tuple[Board, ...]
    runs: int
    reports: int


def _minutes(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M")


def _labels(runs: Sequence[BoardRun]) -> list[str]:
    names = [r.results.info.label or f"{r.results.info.system}/{r.results.info.model}"
             for r in runs]
    repeated = {n for n, c in Counter(names).items() if c > 1}
    return [f"{n} [{r.results.info.run_id}]" if n in repeated else n
            for n, r in zip(names, runs, strict=True)]


def _period_key(runs: Sequence[BoardRun]) -> str | None:
    for key in PERIOD_KEYS:
        if any(key in meta for r in runs for meta in r.answered.values()) or any(
                key in i.metadata for r in runs for i in r.results.items):
            return key
    return None


def _period_of(metadata: Mapping[str, Any], key: str | None) -> str | None:
    if key is None or metadata.get(key) is None:
        return None
    return str(metadata[key])


def _declared(runs: Sequence[BoardRun], key: str | None) -> set[str]:
    """Periods run configs name even if no answer fell in them (GrowOVER's snapshots)."""
    if key != "snapshot":
        return set()
    found: set[str] = set()
    for r in runs:
        dataset = r.results.info.config.get("dataset")
        snapshots = dataset.get("snapshots") if isinstance(dataset, Mapping) else None
        if isinstance(snapshots, list):
            found |= {str(s) for s in snapshots if isinstance(s, str | int)}
    return found


def _fill_gaps(periods: set[str]) -> set[str]:
    """Months or ISO weeks missing between the first and the last (when all are such)."""
    if len(periods) < 2:
        return periods
    if all(_MONTH.match(p) for p in periods):
        months = sorted(int(p[:4]) * 12 + int(p[5:7]) - 1 for p in periods)
        if months[-1] - months[0] < _MAX_FILLED:
            return {f"{m // 12:04d}-{m % 12 + 1:02d}" for m in range(months[0], months[-1] + 1)}
    if all(_WEEK.match(p) for p in periods):
        try:
            mondays = sorted(dt.date.fromisocalendar(int(p[:4]), int(p[6:8]), 1)
                             for p in periods)
        except ValueError:
            return periods
        weeks = (mondays[-1] - mondays[0]).days // 7
        if weeks < _MAX_FILLED:
            filled = set()
            for k in range(weeks + 1):
                year, week, _ = (mondays[0] + dt.timedelta(weeks=k)).isocalendar()
                filled.add(f"{year:04d}-W{week:02d}")
            return filled
    return periods


def _kind(key: str | None, periods: Sequence[str]) -> str:
    if key is None:
        return ""
    if key == "snapshot":
        return "snapshot"
    for name, pattern in (("month", _MONTH), ("week", _WEEK), ("day", _DAY), ("year", _YEAR)):
        if periods and all(pattern.match(p) for p in periods):
            return name
    return key


def _headline(runs: Sequence[BoardRun], scored: Sequence[str],
              wanted: str | None) -> tuple[str | None, str]:
    if wanted is not None and wanted in scored:
        return wanted, f"headline scorer {wanted}, as chosen"
    default: str | None = None
    for r in runs:  # oldest first
        configured = r.results.info.config.get("scorers")
        if isinstance(configured, list | tuple):
            default = next((s for s in configured if isinstance(s, str) and s in scored), None)
            if default is not None:
                break
    if default is None and scored:
        default = scored[0]
    if default is None:
        return None, "no scored answers yet"
    if wanted is not None:
        return default, (f"this board has no scores from {wanted}: headline scorer {default} "
                         "(the benchmark's first)")
    return default, f"headline scorer {default} (the benchmark's first; --scorer picks another)"


def _cell(items: Sequence[ScoredItem], failed: int, scorer: str | None) -> Cell:
    summary = next(iter(summarize(items, by=())), None)
    return Cell(summary=summary, accounting=account(summary, failed, scorer or "", None),
                rank=None)


def _ranked(cells: Sequence[Cell]) -> list[Cell]:
    ranks_ = ranks({str(k): c.summary.mean if c.summary is not None else None
                  for k, c in enumerate(cells)})
    return [Cell(c.summary, c.accounting, ranks_.get(str(k))) for k, c in enumerate(cells)]


def _taus(periods: Sequence[str], per_period: Sequence[Sequence[Cell]]) -> list[Tau]:
    """τ-b between consecutive periods that have at least one ranked run."""
    with_data = [(p, cells) for p, cells in zip(periods, per_period, strict=True)
                 if any(c.rank is not None for c in cells)]
    out = []
    for (a, ca), (b, cb) in pairwise(with_data):
        common = [k for k in range(len(ca)) if ca[k].rank is not None and cb[k].rank is not None]
        x = [float(ca[k].rank or 0.0) for k in common]
        y = [float(cb[k].rank or 0.0) for k in common]
        tau = kendall_tau_b(x, y) if len(common) >= 2 else None
        if len(common) < 2:
            note = f"only {len(common)} run{'s' if len(common) != 1 else ''} ranked in both"
        elif tau is None:
            note = "all runs tie in one of the periods"
        else:
            note = ""
        out.append(Tau(a, b, tau, len(common), note))
    return out


def _line_chart(title: str, kind: str, periods: Sequence[str], empty: frozenset[str],
                entries: Sequence[Entry]) -> LineChart:
    """One line per run over the periods; whiskers are 95 % CIs, gaps break the line."""
    n = len(periods)
    step = min(_MAX_STEP, max(_MIN_STEP, _WIDE / max(n - 1, 1)))
    xs = [PLOT_LEFT + _EDGE + k * step for k in range(n)]
    plot_right = (xs[-1] if xs else PLOT_LEFT) + _EDGE
    every = max(1, math.ceil(_LABEL_PX / step))
    dodge = min(6.0, step / (len(entries) + 2)) if len(entries) > 1 else 0.0
    series = []
    for s, entry in enumerate(entries):
        shift = (s - (len(entries) - 1) / 2) * dodge
        points: list[LinePoint] = []
        paths: list[str] = []
        run: list[str] = []
        for k, (period, cell) in enumerate(zip(periods, entry.cells, strict=True)):
            summary = cell.summary
            if summary is None or summary.mean is None:
                if len(run) > 1:
                    paths.append(" ".join(run))
                run = []
                continue
            x, y = xs[k] + shift, value_y(summary.mean, _DOMAIN)
            ci = summary.ci
            points.append(LinePoint(
                x=x, y=y, y_low=value_y(ci.low, _DOMAIN) if ci else None,
                y_high=value_y(ci.high, _DOMAIN) if ci else None, period=period,
                title=f"{entry.label}, {kind} {period}: {fmt_estimate(summary.mean, ci)}, "
                      f"{cell.n_scored}/{cell.n_total} scored"))
            run.append(f"{x:.2f},{y:.2f}")
        if len(run) > 1:
            paths.append(" ".join(run))
        series.append(LineSeries(entry.label, entry.colour, entry.dash, tuple(paths),
                                 tuple(points)))
    ticks = tuple((value_y(v / 4, _DOMAIN), f"{v / 4:g}") for v in range(5))
    x_ticks = tuple((x, p, k % every == 0 or k == n - 1) for k, (x, p) in
                    enumerate(zip(xs, periods, strict=True)))
    band = step * 0.8
    gaps = tuple((x - band / 2, band) for x, p in zip(xs, periods, strict=True) if p in empty)
    legend_x = plot_right + 18
    legend = tuple((PLOT_TOP + 18.0 * k, e.label, e.colour, e.dash)
                   for k, e in enumerate(entries))
    longest = max((len(e.label) for e in entries), default=0)
    width = max(legend_x + 34 + 6.6 * longest, PLOT_LEFT + 7.0 * len(title) + 8, 320.0)
    height = max(PLOT_TOP + PLOT_HEIGHT + 48, PLOT_TOP + 18.0 * len(entries) + 10)
    return LineChart(
        title=title, width=width, height=height, plot_left=PLOT_LEFT, plot_right=plot_right,
        plot_top=PLOT_TOP, plot_bottom=PLOT_TOP + PLOT_HEIGHT, ticks=ticks, x_ticks=x_ticks,
        empty=gaps, series=tuple(series), legend_x=legend_x, legend=legend, x_label=kind)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.") or "board"


def build_boards(runs: Sequence[BoardRun], *, scorer: Mapping[str, str] | None = None,
                 report_href: Callable[[str], str] | None = None) -> list[Board]:
    """Group runs into boards and compute everything the pages show (no files written).

    Args:
        runs: The runs, oldest first (see :func:`load_runs`).
        scorer: Headline scorer per benchmark name; the key ``"*"`` applies to every
            benchmark not named. A board without scores from the chosen scorer falls back to
            its default and says so.
        report_href: The link to a run's report from a board page, by run id.

    Raises:
        LeaderboardError: a named benchmark has no runs, or a chosen scorer scored nothing on
            any board it applies to.
    """
    chosen = dict(scorer or {})
    groups: dict[tuple[str, str], list[BoardRun]] = defaultdict(list)
    for r in runs:
        groups[(r.results.info.benchmark, dataset_identity(r.results.info.config)[0])].append(r)
    benchmarks = sorted({b for b, _ in groups}, key=natural_key)
    _check_choice(chosen, groups, benchmarks)
    per_benchmark: dict[str, list[str]] = defaultdict(list)
    slugs: dict[tuple[str, str], str] = {}
    for benchmark, fingerprint in sorted(groups, key=lambda g: (natural_key(g[0]), g[1])):
        per_benchmark[benchmark].append(fingerprint)
    for benchmark, prints in per_benchmark.items():
        # Several datasets: name each board by its content hash (what the page shows) when
        # those differ, else by the whole dataset identity.
        shown = {f: _shown_hash(groups[(benchmark, f)]) for f in prints}
        unique = len(set(shown.values())) == len(prints) and all(shown.values())
        for fingerprint in prints:
            suffix = shown[fingerprint] if unique else fingerprint or "unrecorded"
            slugs[(benchmark, fingerprint)] = _slug(benchmark) if len(prints) == 1 else \
                f"{_slug(benchmark)}-{suffix}"
    boards = []
    for benchmark in benchmarks:
        named = sorted((slugs[(benchmark, f)], f) for f in per_benchmark[benchmark])
        for slug, fingerprint in named:
            others = tuple(s for s, f in named if f != fingerprint)
            boards.append(_board(
                groups[(benchmark, fingerprint)], slug, others,
                chosen.get(benchmark, chosen.get("*")), report_href))
    return boards


def _shown_hash(runs: Sequence[BoardRun]) -> str:
    fingerprint, _, content = dataset_identity(runs[0].results.info.config)
    return content or fingerprint


def _check_choice(chosen: Mapping[str, str], groups: Mapping[tuple[str, str], list[BoardRun]],
                  benchmarks: Sequence[str]) -> None:
    for name, wanted in chosen.items():
        if name != "*" and name not in benchmarks:
            raise LeaderboardError(
                f"--scorer {name}={wanted}: no run of benchmark {name!r}",
                hint="benchmarks with runs: " + (", ".join(benchmarks) or "(none)") + ".")
        applies = [runs for (b, _), runs in groups.items()
                   if b == name or (name == "*" and b not in chosen)]
        scored = {i.scorer for runs in applies for r in runs for i in r.results.items}
        if applies and wanted not in scored:
            where = f"benchmark {name}" if name != "*" else "any benchmark"
            raise LeaderboardError(
                f"--scorer {wanted}: no run of {where} has scores from it",
                hint="scorers with scores: " + (", ".join(sorted(scored)) or "(none)") + ".")


def _board(runs: Sequence[BoardRun], slug: str, split: tuple[str, ...], wanted: str | None,
           report_href: Callable[[str], str] | None) -> Board:
    first = runs[0].results.info
    fingerprint, dataset_name, dataset_hash = dataset_identity(first.config)
    key = _period_key(runs)
    seen = {p for r in runs for m in r.answered.values()
            if (p := _period_of(m, key)) is not None}
    seen |= {p for r in runs for i in r.results.items
             if (p := _period_of(i.metadata, key)) is not None}
    periods = tuple(sorted(_fill_gaps(seen | _declared(runs, key)), key=natural_key))
    scored_by = sorted({i.scorer for r in runs for i in r.results.items}, key=natural_key)
    headline, scorer_note = _headline(runs, scored_by, wanted)
    # Where each sample falls, from any run's answer to it: places failures of other runs.
    where = {s: p for r in runs for (s, _), m in r.answered.items()
             if (p := _period_of(m, key)) is not None}
    labels = _labels(runs)
    raw: list[tuple[BoardRun, str, list[Cell], Cell, int]] = []
    for r, label in zip(runs, labels, strict=True):
        items = [i for i in r.results.items if i.scorer == headline]
        failed = failed_keys(r.results.failures, headline or "")
        cells = [_cell([i for i in items if _period_of(i.metadata, key) == period],
                       sum(1 for s, _ in failed if where.get(s) == period), headline)
                 for period in periods]
        unplaced = sum(1 for s, _ in failed if where.get(s) is None) if key else 0
        raw.append((r, label, cells, _cell(items, len(failed), headline), unplaced))
    # Ranks within each period and pooled, then rows ordered by the pooled mean.
    by_period = [_ranked([row[2][k] for row in raw]) for k in range(len(periods))]
    pooled = _ranked([row[3] for row in raw])
    order = sorted(range(len(raw)), key=lambda k: (
        pooled[k].rank if pooled[k].rank is not None else math.inf, natural_key(raw[k][1])))
    entries = []
    for position, k in enumerate(order):
        r, label, _, _, unplaced = raw[k]
        info = r.results.info
        other = tuple((s, next(iter(summarize(
            [i for i in r.results.items if i.scorer == s], by=())), None)) for s in scored_by)
        entries.append(Entry(
            run_id=info.run_id, label=label, system=info.system, model=info.model,
            cells=tuple(by_period[p][k] for p in range(len(periods))), overall=pooled[k],
            unplaced=unplaced, other=other,
            report=report_href(info.run_id) if report_href is not None else "",
            colour=PALETTE[position % len(PALETTE)],
            dash=_DASHES[min(position // len(PALETTE), len(_DASHES) - 1)],
            code_version=info.code_version, created=_minutes(info.created_at),
            updated=_minutes(info.updated_at)))
    per_period = [[by_period[p][k] for k in order] for p in range(len(periods))]
    empty = frozenset(p for p, cells in zip(periods, per_period, strict=True)
                      if all(c.summary is None for c in cells))
    taus = _taus(periods, per_period) if len(entries) > 1 else []
    defined = [t.tau for t in taus if t.tau is not None]
    kind = _kind(key, periods)
    title = first.benchmark if not split else \
        f"{first.benchmark} ({dataset_name or 'dataset'} {dataset_hash})".strip()
    if len(entries) == 1:
        tau_note = "one run: no ranking over time"
    elif key is None:
        tau_note = "no periods: the samples of this benchmark carry no snapshot or period"
    elif len(periods) - len(empty) < 2:
        tau_note = f"fewer than two {kind}s with scored answers: no ranking over time"
    else:
        tau_note = ""
    line = None
    bars = None
    if key is not None and periods and headline is not None:
        line = _line_chart(f"{title}: {headline} by {kind}", kind, periods, empty, entries)
    elif headline is not None:
        bars = bar_chart(f"{title}: {headline}, all answers", [ALL],
                         [e.label for e in entries],
                         {(ALL, e.label): e.overall.summary for e in entries},
                         x_label="pooled", colours={e.label: e.colour for e in entries})
    notes = _notes(runs, entries, split, key, kind, empty, fingerprint)
    last = max(r.results.info.updated_at for r in runs)
    return Board(
        slug=slug, benchmark=first.benchmark, dataset_name=dataset_name,
        dataset_hash=dataset_hash or fingerprint, fingerprint=fingerprint, split=split,
        period_key=key, period_kind=kind, periods=periods, empty=empty, scorer=headline,
        scorer_note=scorer_note, scorers=tuple(scored_by), entries=tuple(entries),
        taus=tuple(taus), mean_tau=math.fsum(defined) / len(defined) if defined else None,
        tau_note=tau_note, line=line, bars=bars, notes=tuple(notes),
        last_result=_minutes(last))


def _notes(runs: Sequence[BoardRun], entries: Sequence[Entry], split: tuple[str, ...],
           key: str | None, kind: str, empty: frozenset[str], fingerprint: str) -> list[str]:
    benchmark = runs[0].results.info.benchmark
    notes = []
    if split:
        notes.append(
            f"Runs of {benchmark} used {len(split) + 1} different datasets; each has its own "
            "board, and runs on different datasets are never ranked together. Other boards: "
            + ", ".join(split) + ".")
    if not fingerprint:
        notes.append("These runs record no dataset identity: they are grouped by benchmark "
                     "name alone.")
    if key is None:
        notes.append(f"{benchmark} has no periods (its samples carry no snapshot or period): "
                     "one pooled column.")
    if empty:
        notes.append(f"No scored answers in {kind} {', '.join(sorted(empty, key=natural_key))}: "
                     "shown empty, not as 0, and left out of the plot and the ranking.")
    if len(entries) == 1:
        notes.append("One run: no ranking over time.")
    unplaced = sum(e.unplaced for e in entries)
    if unplaced:
        notes.append(f"{unplaced} failed answer{'s' if unplaced != 1 else ''} of samples no "
                     f"run answered have no known {kind}: counted in the pooled column only.")
    totals = {e.overall.n_total for e in entries}
    if len(totals) > 1:
        notes.append("The runs attempted different numbers of answers (n total differs), so "
                     "pooled means rest on different samples; compare two runs answer by "
                     "answer with `freshwiki report ID ID`.")
    return notes


# ----------------------------------------------------------------------------- rendering


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    root = resources.files("freshwiki.evaluation") / "templates"
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(root)), undefined=jinja2.StrictUndefined,
        autoescape=True, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(num=fmt_number, ci=fmt_interval, est=fmt_estimate,
                       coord=lambda v: f"{v:.2f}", layout=layout_chart,
                       rank=lambda r: "" if r is None else f"{r:g}")
    return env


def _render(name: str, **context: Any) -> str:
    return _environment().get_template(name).render(
        version=__version__, attribution=ATTRIBUTION, **context)


def _summary_json(cell: Cell) -> dict[str, Any]:
    s = cell.summary
    return {"mean": None if s is None else s.mean,
            "ci": None if s is None or s.ci is None else [s.ci.low, s.ci.high],
            "n_scored": cell.n_scored, "n_total": cell.n_total, "rank": cell.rank}


def _data(boards: Sequence[Board]) -> dict[str, Any]:
    """The numbers of every board, for scripts (``leaderboard.json``)."""
    return {"freshwiki": __version__, "boards": [{
        "slug": b.slug, "benchmark": b.benchmark, "dataset": b.dataset_name,
        "dataset_hash": b.dataset_hash, "fingerprint": b.fingerprint,
        "period_key": b.period_key, "period_kind": b.period_kind, "periods": list(b.periods),
        "empty_periods": sorted(b.empty, key=natural_key), "scorer": b.scorer,
        "runs": [{"run_id": e.run_id, "label": e.label, "system": e.system, "model": e.model,
                  "overall": _summary_json(e.overall),
                  "periods": {p: _summary_json(c) for p, c in zip(b.periods, e.cells,
                                                                  strict=True)}}
                 for e in b.entries],
        "kendall_tau": [{"from": t.before, "to": t.after, "tau": t.tau, "n": t.n}
                        for t in b.taus],
        "notes": list(b.notes)} for b in boards]}


def _check_target(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise LeaderboardError(f"{out} is a file, not a folder",
                               hint="choose a folder for the site with --out.")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
        raise LeaderboardError(
            f"{out} already holds files that are not a freshwiki leaderboard; nothing was "
            "written", hint="choose an empty or new folder with --out (a leaderboard folder is "
            "replaced as a whole on every build).")


def write_leaderboard(store: ResultsStore, out: Path, *,
                      scorer: Mapping[str, str] | None = None, reports: bool = True,
                      progress: Progress | None = None) -> LeaderboardSite:
    """Build the leaderboard site of every run in ``store`` into the folder ``out``.

    Layout: ``index.html`` (the boards), ``boards/SLUG.html`` (one per benchmark and
    dataset), ``runs/RUN_ID/report.html`` (each run's full report), ``leaderboard.json`` (the
    numbers). The site is written into a temporary folder beside ``out`` and swapped in, so
    ``out`` always holds a whole site, old or new; a folder that is not a leaderboard is never
    replaced.

    Args:
        store: The results store.
        out: The site folder.
        scorer: Headline scorer per benchmark (``"*"``: every other benchmark).
        reports: Write each run's report into the site (``False``: no report links).
        progress: Called with (what, done, total) per page written.

    Raises:
        LeaderboardError: ``out`` is not a leaderboard folder, or a chosen scorer or
            benchmark has no scores.
    """
    _check_target(Path(out))
    return write_site(load_runs(store), out, scorer=scorer, reports=reports,
                      progress=progress)


def write_site(runs: Sequence[BoardRun], out: Path, *,
               scorer: Mapping[str, str] | None = None, reports: bool = True,
               progress: Progress | None = None) -> LeaderboardSite:
    """:func:`write_leaderboard` for runs already loaded (none: a page saying so)."""
    out = Path(out)
    _check_target(out)
    boards = build_boards(runs, scorer=scorer,
                          report_href=(lambda i: f"../runs/{i}/{HTML_NAME}") if reports
                          else None)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    total = 1 + len(boards) + (len(runs) if reports else 0)
    done = 0

    def step(what: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(what, done, total)

    try:
        (tmp / MARKER).write_text("A freshwiki leaderboard; rebuilt as a whole by "
                                  "`freshwiki leaderboard`.\n", encoding="utf-8")
        if reports:
            for r in runs:
                write_report([r.results], tmp / "runs" / r.results.info.run_id)
                step(f"report {r.results.info.run_id}")
        (tmp / "boards").mkdir()
        for board in boards:
            (tmp / "boards" / f"{board.slug}.html").write_text(
                _render("leaderboard_board.html.j2", board=board, reports=reports,
                        all=ALL), encoding="utf-8")
            step(f"board {board.slug}")
        last = max((r.results.info.updated_at for r in runs), default=None)
        (tmp / INDEX).write_text(_render(
            "leaderboard_index.html.j2", boards=boards, n_runs=len(runs),
            last_result=_minutes(last) if last else ""), encoding="utf-8")
        (tmp / DATA).write_text(json.dumps(_data(boards), indent=1, sort_keys=True) + "\n",
                                encoding="utf-8")
        step("index")
        tmp.chmod(0o755)
        _swap(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return LeaderboardSite(root=out, index=out / INDEX, boards=tuple(boards), runs=len(runs),
                           reports=len(runs) if reports else 0)


def _swap(new: Path, out: Path) -> None:
    """Put the finished site ``new`` at ``out``, replacing an old site there.

    Two renames: the old site is moved aside, the new one moved in, the old one removed. A
    reader sees the old site or the new one, never a mixture (a crash between the renames
    leaves the old site beside ``out`` under a ``.old`` name).
    """
    if not out.exists():
        os.replace(new, out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
    old.rmdir()
    os.replace(out, old)
    os.replace(new, out)
    shutil.rmtree(old, ignore_errors=True)
