"""Labelled-note datasets: per-period counts, balanced slices, and the JSONL files.

Helpful notes outnumber not-helpful ones several to one, so a model that always answers
"helpful" would look good on raw data; balancing each period to equal classes makes accuracy
and F1 mean the same in every month and keeps months comparable as the benchmark grows.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from freshwiki.changes.notes.records import (
    HELPFUL,
    LABELS,
    NOT_HELPFUL,
    PERIODS,
    LabelledNote,
    NotesRecordError,
    period_key,
)
from freshwiki.changes.notes.tables import NotesFormatError


def counts_by_period(records: Iterable[LabelledNote],
                     period: str = "month") -> dict[str, dict[str, int]]:
    """Per period (in order), how many records carry each label (zeros included)."""
    counts: dict[str, dict[str, int]] = {}
    for record in records:
        slot = counts.setdefault(record.period(period), {label: 0 for label in LABELS})
        slot[record.label] += 1
    return dict(sorted(counts.items()))


@dataclass(frozen=True)
class PeriodBalance:
    """How one period was balanced.

    Attributes:
        period: The period key (``2021-02``...).
        helpful: Helpful notes available in the period.
        not_helpful: Not-helpful notes available.
        kept_per_label: Notes kept per label (the smaller class's size; 0 when a class is
            empty, which makes the period unbalanceable).
    """

    period: str
    helpful: int
    not_helpful: int
    kept_per_label: int

    @property
    def balanced(self) -> bool:
        """Whether both labels were present, so the period contributes records."""
        return self.kept_per_label > 0


@dataclass
class BalancedDataset:
    """Equal helpful and not-helpful notes per period.

    Attributes:
        records: The kept records, by creation time.
        period: ``month``, ``week`` or ``year``.
        seed: The seed that chose which notes of the larger class were kept.
        periods: One entry per period present in the input, balanced or not.
    """

    records: list[LabelledNote]
    period: str
    seed: int
    periods: list[PeriodBalance] = field(default_factory=list)

    @property
    def unbalanced_periods(self) -> list[PeriodBalance]:
        """Periods dropped because one label had no notes: reported, never silently lost."""
        return [p for p in self.periods if not p.balanced]

    def summary(self) -> dict[str, Any]:
        """A JSON-ready description of the dataset, written beside its records."""
        return {
            "period": self.period,
            "seed": self.seed,
            "records": len(self.records),
            "periods": [
                {"period": p.period, "helpful": p.helpful, "not_helpful": p.not_helpful,
                 "kept_per_label": p.kept_per_label, "balanced": p.balanced}
                for p in self.periods
            ],
            "unbalanced_periods": [p.period for p in self.unbalanced_periods],
        }


def _sort_key(record: LabelledNote) -> tuple[Any, ...]:
    note_id = record.note.note_id
    return (record.note.created_at, len(note_id), note_id)


def build_balanced(labelled: Iterable[LabelledNote], period: str = "month",
                   seed: int = 0) -> BalancedDataset:
    """Downsample the larger label in each period to the size of the smaller one.

    Each period draws from its own ``random.Random`` seeded with ``seed`` and the period key,
    and from its notes sorted by id, so the choice depends on neither input order nor other
    periods: a month's slice stays the same when later months are added to a living benchmark.

    Args:
        labelled: Labelled notes, in any order.
        period: ``month``, ``week`` or ``year``.
        seed: Which random subset of the larger class to keep.

    Raises:
        NotesRecordError: ``period`` is not one of the known periods.
    """
    if period not in PERIODS:
        raise NotesRecordError(f"unknown period {period!r}",
                               hint=f"use one of: {', '.join(PERIODS)}.")
    groups: dict[str, dict[str, list[LabelledNote]]] = {}
    for record in labelled:
        by_label = groups.setdefault(period_key(record.note.created_at, period),
                                     {label: [] for label in LABELS})
        by_label[record.label].append(record)
    kept: list[LabelledNote] = []
    balances: list[PeriodBalance] = []
    for key in sorted(groups):
        helpful = sorted(groups[key][HELPFUL], key=_sort_key)
        not_helpful = sorted(groups[key][NOT_HELPFUL], key=_sort_key)
        size = min(len(helpful), len(not_helpful))
        balances.append(PeriodBalance(key, len(helpful), len(not_helpful), size))
        if size == 0:
            continue
        rng = random.Random(f"{seed}:{key}")
        for members in (helpful, not_helpful):
            kept.extend(rng.sample(members, size) if len(members) > size else members)
    kept.sort(key=_sort_key)
    return BalancedDataset(kept, period, seed, balances)


def write_jsonl(records: Iterable[LabelledNote], path: Path) -> int:
    """Write one record per line, atomically (a reader never sees half a dataset).

    Returns:
        The number of records written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    count = 0
    with tmp.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")
            count += 1
    os.replace(tmp, path)
    return count


def read_jsonl(path: Path) -> list[LabelledNote]:
    """Read records written by :func:`write_jsonl`.

    Raises:
        NotesFormatError: The file is missing, or a line is not a valid record (the message
            gives the line number).
    """
    if not path.is_file():
        raise NotesFormatError(
            f"no labelled notes file at {path}",
            hint="create it with `freshwiki notes load DIR`, or pass its path.",
        )
    records: list[LabelledNote] = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                if not isinstance(data, dict):
                    raise NotesRecordError("line is not a JSON object")
                records.append(LabelledNote.from_dict(data))
            except (json.JSONDecodeError, NotesRecordError) as exc:
                raise NotesFormatError(
                    f"{path}, line {number}: not a labelled note ({exc})",
                    hint="regenerate the file with `freshwiki notes load DIR`.",
                ) from exc
    return records


def write_summary(data: dict[str, Any], path: Path) -> None:
    """Write a report or dataset summary as indented JSON next to the records."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def label_totals(records: Sequence[LabelledNote]) -> dict[str, int]:
    """Records per label, both labels always present."""
    totals: dict[str, int] = {label: 0 for label in LABELS}
    for record in records:
        totals[record.label] += 1
    return totals
