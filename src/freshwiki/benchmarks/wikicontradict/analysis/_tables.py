"""WikiContradict's result tables as the paper lays them out (Hou et al., 2024, Tables 2 and 5).

The paper does not average its labels: it reports, per prompt template and model, the share of
responses judged correct (C), partially correct (PC) and incorrect (IC), over all instances and
separately over instances whose contradiction is explicit or implicit. A mean with partial
credit hides exactly what the benchmark is about (a model that always gives one answer scores
like one that gives both half the time), so reports show these shares beside the means.

Two layouts of the same numbers, as in the paper:

* **Table 2** (human evaluation): a block of rows per template (C, PC, IC; templates whose
  rule has no partial class, such as 2 and 3, show C and IC only), a group of three columns
  (all / explicit / implicit) per run.
* **Table 5** (the judge on all instances): a row per run (here per template and run, since a
  report may hold several templates), columns C / PC / IC under all, explicit and implicit.

Shares are percentages of the scored responses in the cell, to one decimal as the paper prints
them; ``n`` (the responses behind each column) is shown with them, since the paper's own cells
rest on 17 to 48 instances. Instances without an explicit/implicit label count in "all" only.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from freshwiki.benchmarks.wikicontradict import LABELS, TEMPLATES, WikiContradict
from freshwiki.results import ReportSection, RunResults, natural_key

TYPES: tuple[str, ...] = ("all", "explicit", "implicit")
"""Column groups: every instance, then by ``metadata["contradiction"]``."""
TYPE_HEADINGS: Mapping[str, str] = {"all": "all", "explicit": "exp", "implicit": "imp"}
"""Column headings as the paper abbreviates them."""
SHORT: Mapping[str, str] = {"correct": "C", "partially_correct": "PC", "incorrect": "IC"}
"""Row names as the paper abbreviates them."""


@dataclass(frozen=True)
class LabelShares:
    """How the responses of one cell group (run x template x type) are labelled.

    Attributes:
        n: Scored responses in the group.
        counts: Responses per label.
    """

    n: int
    counts: Mapping[str, int]

    def percent(self, label: str) -> float | None:
        """The share of ``label`` in percent, ``None`` for an empty group."""
        return 100.0 * self.counts.get(label, 0) / self.n if self.n else None


@dataclass(frozen=True)
class ContradictionTable:
    """C / PC / IC shares of one scorer, for every run that has it.

    Attributes:
        scorer: The scorer whose labels are counted.
        runs: Run labels, in report order.
        templates: Templates any of the runs answered, in natural order.
        classes: Per template, the labels its rule can give (best first).
        cells: ``(run, template, type)`` → shares; missing when the run lacks the template.
    """

    scorer: str
    runs: tuple[str, ...]
    templates: tuple[str, ...]
    classes: Mapping[str, tuple[str, ...]]
    cells: Mapping[tuple[str, str, str], LabelShares]

    def cell(self, run: str, template: str, kind: str) -> LabelShares | None:
        """The shares of ``run`` on ``template`` for instance type ``kind``."""
        return self.cells.get((run, template, kind))

    def table5_rows(self) -> tuple[tuple[str, str], ...]:
        """(template, run) pairs with any result, in the order Table 5's layout lists them."""
        return tuple((t, r) for t in self.templates for r in self.runs
                     if (r, t, "all") in self.cells)


def _classes(template: str, seen: set[str]) -> tuple[str, ...]:
    """The template's classes by its rule, plus any other label its answers carry.

    Labels outside the rule come from runs scored under older rules; they are shown, not
    dropped, so every column still sums to 100 %.
    """
    spec = TEMPLATES.get(template)
    allowed = set(spec.classes) if spec is not None else set(LABELS)
    return tuple(label for label in LABELS if label in allowed | seen)


def contradiction_tables(results: Sequence[RunResults],
                         labels: Sequence[str]) -> tuple[ContradictionTable, ...]:
    """One table per classifying scorer of the WikiContradict runs among ``results``.

    Args:
        results: The runs of a report, in order; runs of other benchmarks are left out.
        labels: Each run's display name (same order).

    Returns:
        Tables for every scorer whose labels are all C / PC / IC, in the order the runs
        first list them; empty when no WikiContradict run is given.
    """
    counts: dict[tuple[str, str, str, str], Counter[str]] = defaultdict(Counter)
    scorers: dict[str, None] = {}
    unlabelled: set[str] = set()
    runs_of: dict[str, list[str]] = defaultdict(list)
    for run, label in zip(results, labels, strict=True):
        if run.info.benchmark != WikiContradict.name:
            continue
        for item in run.items:
            if item.label not in LABELS:
                unlabelled.add(item.scorer)
                continue
            scorers.setdefault(item.scorer)
            if label not in runs_of[item.scorer]:
                runs_of[item.scorer].append(label)
            kind = item.metadata.get("contradiction")
            for k in ("all", kind) if kind in TYPES[1:] else ("all",):
                counts[(item.scorer, label, item.template, str(k))][item.label] += 1
    tables = []
    for scorer in scorers:
        if scorer in unlabelled:
            continue
        mine = {key[1:]: c for key, c in counts.items() if key[0] == scorer}
        templates = tuple(sorted({t for _, t, _ in mine}, key=natural_key))
        tables.append(ContradictionTable(
            scorer=scorer, runs=tuple(runs_of[scorer]), templates=templates,
            classes={t: _classes(t, {lab for (_, tt, _), c in mine.items() if tt == t
                                     for lab in c}) for t in templates},
            cells={key: LabelShares(n=sum(c.values()), counts=dict(c))
                   for key, c in mine.items()},
        ))
    return tuple(tables)


_TYPE_TITLES = {"all": "All instances", "explicit": "Explicit contradictions",
                "implicit": "Implicit contradictions"}


class WikiContradictAnalysis:
    """WikiContradict's report section: Tables 2 and 5.

    Registered as ``wikicontradict``'s analysis in ``freshwiki.benchmarks``.
    """

    def report_sections(self, runs: Sequence[RunResults],
                        labels: Sequence[str]) -> list[ReportSection]:
        """The tables of every classifying scorer, when any run has one."""
        tables = contradiction_tables(runs, labels)
        if not tables:
            return []
        return [ReportSection(
            __package__ or "", "wikicontradict_tables.html.j2", "wikicontradict_tables.md.j2",
            {"contradiction": tables, "types": TYPES, "headings": TYPE_HEADINGS,
             "long": _TYPE_TITLES, "short": SHORT, "labels": tuple(SHORT)})]

    def run_sections(self, run: RunResults, breakdown: str | None) -> list[ReportSection]:
        """Nothing inside a run's own part: the tables compare runs."""
        return []
