"""Balanced datasets: per period, as many accepted as rejected edits, reproducible by seed.

Most edits are kept, so an unbalanced stream rewards a model that always answers "kept".
Each period (day, ISO week, month, year, or the whole stream) is balanced on its own by
sampling the larger class down to the size of the smaller, so a living benchmark can be cut
at any period and stay balanced. The sampling uses a :class:`random.Random` seeded by the
seed *and the period*, over the period's edits sorted by (timestamp, revision id): the same
seed gives the same dataset whatever order the records were read in, and adding a new week
does not reshuffle the old ones.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Final, Literal

from freshwiki.changes.edits.records import LabelledEdit
from freshwiki.errors import FreshwikiError

__all__ = ["PERIODS", "BalancedDataset", "Period", "build_balanced", "period_key",
           "write_balanced"]

Period = Literal["day", "week", "month", "year", "all"]
PERIODS: Final[tuple[Period, ...]] = ("day", "week", "month", "year", "all")

BalancedDataset = dict[str, list[LabelledEdit]]
"""Period key → its balanced edits, sorted by time; keys in time order."""


def period_key(edit: LabelledEdit, period: Period) -> str:
    """The period an edit falls in: ``2008-02-10``, ``2008-W06`` (ISO week), ``2008-02``..."""
    stamp = edit.edit.timestamp
    if period == "day":
        return stamp.strftime("%Y-%m-%d")
    if period == "week":
        year, week, _ = stamp.isocalendar()
        return f"{year}-W{week:02d}"
    if period == "month":
        return stamp.strftime("%Y-%m")
    if period == "year":
        return stamp.strftime("%Y")
    if period == "all":
        return "all"
    raise FreshwikiError(f"unknown period {period!r}", hint=f"use one of {', '.join(PERIODS)}")


def _order(edit: LabelledEdit) -> tuple[str, int, int]:
    return edit.edit.timestamp.isoformat(), edit.edit.revision_id, edit.edit.page_id


def build_balanced(
    labelled: Iterable[LabelledEdit], *, period: Period = "week", seed: int = 0
) -> BalancedDataset:
    """Per period, all edits of the smaller class and as many sampled from the larger.

    Periods with no edit of one class contribute nothing (they cannot be balanced).
    Duplicated records (the same page, revision and label read twice) count once.
    """
    groups: dict[str, dict[str, dict[tuple[int, int], LabelledEdit]]] = {}
    for item in labelled:
        key = period_key(item, period)
        by_label = groups.setdefault(key, {"accepted": {}, "rejected": {}})
        by_label[item.label].setdefault((item.edit.page_id, item.edit.revision_id), item)
    dataset: BalancedDataset = {}
    for key in sorted(groups):
        accepted = sorted(groups[key]["accepted"].values(), key=_order)
        rejected = sorted(groups[key]["rejected"].values(), key=_order)
        size = min(len(accepted), len(rejected))
        if not size:
            continue
        rng = random.Random(f"{seed}:{period}:{key}")
        chosen = (rng.sample(accepted, size) if len(accepted) > size else accepted) + (
            rng.sample(rejected, size) if len(rejected) > size else rejected)
        dataset[key] = sorted(chosen, key=_order)
    return dataset


def write_balanced(
    dataset: BalancedDataset, path: str | os.PathLike[str], *, period: Period, seed: int
) -> int:
    """Write a balanced dataset as JSONL: each labelled record plus ``period``, ``seed``."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    count = 0
    with open(partial, "w", encoding="utf-8") as fh:
        for key, items in dataset.items():
            for item in items:
                record = {**item.to_dict(), "period": key, "period_kind": period, "seed": seed}
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
                count += 1
    partial.replace(target)
    return count
