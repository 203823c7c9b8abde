"""GrowOVER's RiLM analyses as report sections: the paper's Table 7 and Table 3 (Ko et al., 2024).

**Table 7** asks where the decision gate and adaptive re-retrieval (ARR) help: it scores the
answers at each stage of RiLM, per instance type. Rows: answers the gate *adopted*; the
*not adopted* ones before ARR (the first pass's answer), after ARR (the second pass's answer)
and after the final selection (whichever of the two the gate rated more reliable); and the
final answer over all. The paper averages over its evaluation months; we show every
evaluation snapshot and all of them pooled, since a gate trained on one month may hold for the
next and fail two years later. QA is scored with F1 and EM, dialogue with BLEU.

**Table 3** asks whether the answer helps re-retrieval: on the not-adopted samples, the share
whose re-retrieved top k holds the evidence, for the paper's ω (Eq. 2) against the query alone
(ω = 0) and the answer always appended (ω = 1).

Design (the cheapest honest one): **one rilm run gives all three Table 3 rows.** The first
pass, and so the set of not-adopted samples, does not depend on the ARR mode, and the system
records the top k of all three modes on every not-adopted sample (``trace["arr"]``); the
GrowOVER hit scorer checks each against the evidence. What one run cannot give is the
*answers* after the other two modes' re-retrievals: runs with ``--option arr=query`` or
``arr=append`` have their own Table 7, whose "after ARR" row is that mode's (each section
names its run's mode).

The stage scores come from the GrowOVER scorers (``data["rilm"]``, see
``freshwiki.benchmarks.growover``'s ``_scorers``): this module only counts. Each cell has its
n and a 95 % interval: percentile bootstrap (``freshwiki.stats.bootstrap_ci``) for F1 and BLEU,
Wilson (``freshwiki.stats.wilson_ci``) for EM and retrieval hits, which are 0/1.

Everything is read from the generic stored rows (each score's ``data``), so the runner and
the store know nothing of it; :class:`GrowOverAnalysis` offers it to reports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from freshwiki.results import ReportSection, RunResults, ScoredItem, natural_key
from freshwiki.stats import Interval, bootstrap_ci, wilson_ci

GROWOVER = "growover"
"""The benchmark's registry name: only its runs have RiLM stages to count."""
HIT = "growover-hit"
QA_SCORERS = ("growover-f1", "growover-em")
DIALOGUE_SCORERS = ("growover-bleu",)
RILM_SCORERS = (*QA_SCORERS, *DIALOGUE_SCORERS, HIT)
"""The scorers whose ``data["rilm"]`` holds stage scores (names as the benchmark registers)."""
BINARY = frozenset({"growover-em", HIT})
"""0/1 scorers: Wilson intervals instead of the bootstrap."""
TYPE_ORDER = ("new", "changed", "unchanged", "initial")
"""Instance types as the paper orders its columns (``initial`` only on snapshot 0)."""
ALL = "all"

STAGE_ROWS: tuple[tuple[str, str], ...] = (
    ("adopted", "Adopted"),
    ("before", "Not adopted: before ARR"),
    ("after", "Not adopted: after ARR"),
    ("selected", "Not adopted: final selection"),
    ("final", "All: final answer"),
)
"""Table 7's rows: key and heading."""
MODE_ROWS: tuple[tuple[str, str], ...] = (
    ("query", "Query only (ω = 0)"),
    ("append", "Always append (ω = 1)"),
    ("paper", "ARR (ω = P_τ(reliable), Eq. 2)"),
)
"""Table 3's rows, in the paper's order: key and heading."""


@dataclass(frozen=True)
class RiLMSample:
    """One answer of GrowOVER's ``rilm`` system with each stage scored (Tables 7 and 3).

    Attributes:
        sample_id: The sample's stable id.
        template: Template id.
        metadata: The sample's metadata (``snapshot``, ``type``, ``kind``).
        scores: Per scorer (``growover-f1``, ``-em``, ``-bleu``): ``final`` (the returned
            answer's value), ``first`` and ``second`` (each pass's answer; ``None`` when
            there was no such pass), ``adopted`` and ``chosen`` (the pass returned).
        arr: Whether each re-retrieval mode (``paper``, ``query``, ``append``) found the
            evidence; empty when the gate adopted the first answer.
        adopted: Whether the gate adopted the first answer.
    """

    sample_id: str
    template: str
    metadata: Mapping[str, Any]
    scores: Mapping[str, Mapping[str, Any]]
    arr: Mapping[str, float]
    adopted: bool


def rilm_samples(items: Iterable[ScoredItem]) -> tuple[RiLMSample, ...]:
    """Join the scored items of a run by answer, from each GrowOVER score's ``data["rilm"]``.

    Args:
        items: The run's scored items (value, metadata and data per sample x template x
            scorer).

    Returns:
        One record per (sample, template) that some scorer recorded RiLM stages for, in the
        items' order; empty for runs of other systems.
    """
    scores: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    arr: dict[tuple[str, str], dict[str, float]] = {}
    adopted: dict[tuple[str, str], bool] = {}
    meta: dict[tuple[str, str], Mapping[str, Any]] = {}
    for item in items:
        key = (item.sample_id, item.template)
        if item.scorer not in RILM_SCORERS:
            continue
        stages = item.data.get("rilm")
        if not isinstance(stages, Mapping):
            continue
        meta.setdefault(key, item.metadata)
        adopted[key] = bool(stages.get("adopted"))
        if item.scorer == HIT:
            arr[key] = {str(m): float(v) for m, v in (stages.get("arr") or {}).items()}
        else:
            scores.setdefault(key, {})[item.scorer] = {**stages, "final": item.value}
    return tuple(RiLMSample(sample_id=k[0], template=k[1], metadata=meta[k],
                            scores=scores.get(k, {}), arr=arr.get(k, {}), adopted=adopted[k])
                 for k in meta)


@dataclass(frozen=True)
class Cell:
    """One mean with its interval and the answers behind it.

    Attributes:
        mean: Mean score in [0, 1]; ``None`` for an empty cell.
        ci: 95 % interval (bootstrap or Wilson, see the module docstring).
        n: Answers in the cell.
    """

    mean: float | None
    ci: Interval | None
    n: int


@dataclass(frozen=True)
class StageTable:
    """Rows x (snapshot, type) columns of one scorer.

    Attributes:
        title: What the table shows.
        scorer: The scorer counted.
        groups: Column groups: each evaluation snapshot, then ``all`` (pooled), with their
            number of columns.
        columns: ``(snapshot or "all", type or "all")`` per column, in order.
        rows: ``(row key, heading, cells)`` in the table's order.
    """

    title: str
    scorer: str
    groups: tuple[tuple[str, int], ...]
    columns: tuple[tuple[str, str], ...]
    rows: tuple[tuple[str, str, tuple[Cell, ...]], ...]

    def cell(self, row: str, snapshot: str, kind: str) -> Cell:
        """The cell of ``row`` under ``(snapshot, kind)`` (``"all"`` for pooled)."""
        (cells,) = [c for key, _, c in self.rows if key == row]
        return cells[self.columns.index((snapshot, kind))]


@dataclass(frozen=True)
class RiLMSection:
    """The Table 7 and Table 3 views of one rilm run.

    Attributes:
        run: The run's display label.
        run_id: Its id.
        kind: ``qa`` or ``dialogue``.
        arr: The run's re-retrieval mode (``paper``, ``query`` or ``append``).
        n: Answers with a first pass (those the tables count).
        n_adopted: Of those, adopted by the gate.
        table7: One table per scorer (QA: F1 then EM; dialogue: BLEU).
        table3: Retrieval accuracy per ARR mode; ``None`` when nothing was re-retrieved.
    """

    run: str
    run_id: str
    kind: str
    arr: str
    n: int
    n_adopted: int
    table7: tuple[StageTable, ...]
    table3: StageTable | None


def _cell(values: Sequence[float], binary: bool) -> Cell:
    if not values:
        return Cell(None, None, 0)
    mean = sum(values) / len(values)
    ci = (wilson_ci(sum(1 for v in values if v >= 0.5), len(values)) if binary
          else bootstrap_ci(values))
    return Cell(mean, ci, len(values))


def _layout(samples: Sequence[RiLMSample]
            ) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, str], ...]]:
    snapshots = sorted({str(s.metadata.get("snapshot", "")) for s in samples}, key=natural_key)
    types = [t for t in TYPE_ORDER if any(s.metadata.get("type") == t for s in samples)]
    types += sorted({str(s.metadata.get("type")) for s in samples} - set(types))
    per_group = [*types, ALL]
    groups = tuple((g, len(per_group)) for g in [*snapshots, ALL])
    columns = tuple((g, t) for g, _ in groups for t in per_group)
    return groups, columns


def _in(sample: RiLMSample, column: tuple[str, str]) -> bool:
    snapshot, kind = column
    return ((snapshot == ALL or sample.metadata.get("snapshot") == snapshot)
            and (kind == ALL or sample.metadata.get("type") == kind))


def _stage_value(sample: RiLMSample, scorer: str, row: str) -> float | None:
    """The value ``sample`` contributes to Table 7's ``row`` (``None``: not in that row)."""
    stages = sample.scores.get(scorer)
    if stages is None:
        return None
    value: Any
    if row == "final":
        value = stages["final"]
    elif row == "adopted":
        value = stages["final"] if sample.adopted else None
    elif sample.adopted:
        return None
    else:
        value = {"before": stages.get("first"), "after": stages.get("second"),
                 "selected": stages["final"]}[row]
    return None if value is None else float(value)


def _table7(samples: Sequence[RiLMSample], scorer: str) -> StageTable:
    groups, columns = _layout(samples)
    rows = []
    for key, heading in STAGE_ROWS:
        cells = []
        for column in columns:
            values = [v for s in samples if _in(s, column)
                      if (v := _stage_value(s, scorer, key)) is not None]
            cells.append(_cell(values, scorer in BINARY))
        rows.append((key, heading, tuple(cells)))
    return StageTable(f"{scorer} by RiLM stage (Table 7)", scorer, groups, columns, tuple(rows))


def _table3(samples: Sequence[RiLMSample]) -> StageTable | None:
    re_retrieved = [s for s in samples if not s.adopted and s.arr]
    if not re_retrieved:
        return None
    groups, columns = _layout(re_retrieved)
    rows = []
    for key, heading in MODE_ROWS:
        cells = tuple(_cell([s.arr[key] for s in re_retrieved if _in(s, c) and key in s.arr],
                            True) for c in columns)
        rows.append((key, heading, cells))
    return StageTable("Re-retrieval accuracy on the not-adopted answers (Table 3)", HIT,
                      groups, columns, tuple(rows))


def rilm_sections(results: Sequence[RunResults],
                  labels: Sequence[str]) -> tuple[RiLMSection, ...]:
    """Table 7 and Table 3 of every run among ``results`` that recorded RiLM stages.

    Args:
        results: The runs of a report, in order; runs without RiLM records are left out.
        labels: Each run's display name (same order).

    Returns:
        One section per rilm run and kind (a run normally holds one kind).
    """
    sections = []
    for run, label in zip(results, labels, strict=True):
        rilm = rilm_samples(run.items) if run.info.benchmark == GROWOVER else ()
        if not rilm:
            continue
        arr = str((run.info.config.get("system_config") or {}).get("arr", "paper"))
        kinds = sorted({str(s.metadata.get("kind") or "qa") for s in rilm})
        for kind in kinds:
            samples = [s for s in rilm if str(s.metadata.get("kind") or "qa") == kind]
            scorers = QA_SCORERS if kind == "qa" else DIALOGUE_SCORERS
            present = [sc for sc in scorers if any(sc in s.scores for s in samples)]
            sections.append(RiLMSection(
                run=label, run_id=run.info.run_id, kind=kind, arr=arr, n=len(samples),
                n_adopted=sum(1 for s in samples if s.adopted),
                table7=tuple(_table7(samples, sc) for sc in present),
                table3=_table3(samples)))
    return tuple(sections)


class GrowOverAnalysis:
    """GrowOVER's report sections: Tables 7 and 3 for its rilm runs.

    Registered as ``growover``'s analysis in ``freshwiki.benchmarks``.
    """

    def report_sections(self, runs: Sequence[RunResults],
                        labels: Sequence[str]) -> list[ReportSection]:
        """One section holding every rilm run's tables, when there is one."""
        sections = rilm_sections(runs, labels)
        if not sections:
            return []
        return [ReportSection(__package__ or "", "growover_rilm.html.j2",
                              "growover_rilm.md.j2", {"rilm": sections, "all": ALL})]

    def run_sections(self, run: RunResults, breakdown: str | None) -> list[ReportSection]:
        """Nothing inside a run's own part: the tables compare runs."""
        return []
