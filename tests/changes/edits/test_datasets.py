"""Balanced datasets per period and the JSONL round trip."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from freshwiki.changes.edits import (
    Discarded,
    Edit,
    EditRecordError,
    LabelledEdit,
    build_balanced,
    period_key,
    read_jsonl,
    write_balanced,
    write_jsonl,
)


def labelled(rev: int, day: dt.date, label: str) -> LabelledEdit:
    edit = Edit(page_id=1, title="Widget", revision_id=rev, parent_id=rev - 1,
                timestamp=dt.datetime(day.year, day.month, day.day, 9, tzinfo=dt.UTC),
                comment="c", user_type="ip", user="192.0.2.1", section_path=("History",),
                paragraph_before="Old text.", paragraph_after="Old text. New ünïcode text.",
                deleted_text="", added_text="New ünïcode text.", kind="replace",
                chars_changed=17, article_paragraphs=4)
    if label == "accepted":
        return LabelledEdit(edit, "accepted", 2, rev + 2)
    return LabelledEdit(edit, "rejected", 2, rev + 3, reverting_revision_id=rev + 1,
                        signals=("identity_revert",), undo_fraction=1.0)


# ISO week 2024-W10 is Mon 4 March .. Sun 10 March; W11 starts Mon 11 March.
W10 = dt.date(2024, 3, 4)
ITEMS = (
    [labelled(100 + i, W10 + dt.timedelta(days=i % 7), "accepted") for i in range(6)]
    + [labelled(200 + i, W10 + dt.timedelta(days=i), "rejected") for i in range(2)]
    + [labelled(300, dt.date(2024, 3, 11), "accepted")]  # W11: no rejected -> left out
)


def test_period_keys() -> None:
    item = labelled(1, dt.date(2024, 3, 10), "accepted")
    assert period_key(item, "week") == "2024-W10"
    assert period_key(item, "day") == "2024-03-10"
    assert period_key(item, "month") == "2024-03"
    assert period_key(labelled(1, dt.date(2024, 12, 30), "accepted"), "week") == "2025-W01"


def test_balanced_per_week_reproducible_by_seed() -> None:
    data = build_balanced(ITEMS, period="week", seed=1)
    assert list(data) == ["2024-W10"]
    week = data["2024-W10"]
    assert sum(i.label == "accepted" for i in week) == 2
    assert sum(i.label == "rejected" for i in week) == 2
    assert {i.edit.revision_id for i in week if i.label == "rejected"} == {200, 201}
    # same seed, shuffled input: same dataset
    again = build_balanced(list(reversed(ITEMS)), period="week", seed=1)
    assert again == data
    # 15 possible pairs of 6 accepted: some seed among a few picks another pair
    picks = {tuple(i.edit.revision_id for i in build_balanced(ITEMS, seed=s)["2024-W10"]
                   if i.label == "accepted") for s in range(10)}
    assert len(picks) > 1


def test_month_period_and_writing(tmp_path: Path) -> None:
    data = build_balanced(ITEMS, period="month", seed=0)
    assert [len(v) for v in data.values()] == [4]
    path = tmp_path / "b.jsonl"
    assert write_balanced(data, path, period="month", seed=0) == 4
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert {r["period"] for r in rows} == {"2024-03"}
    assert all(r["seed"] == 0 and r["record"] == "labelled" for r in rows)


def test_jsonl_round_trip(tmp_path: Path) -> None:
    dropped = Discarded(1, "Widget", 9, "too_short", "1 changed run(s) of paragraphs")
    records = [*ITEMS[:2], ITEMS[6], dropped]
    path = tmp_path / "out" / "labelled.jsonl"
    assert write_jsonl(records, path) == 4
    assert list(read_jsonl(path)) == records
    line = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    # what a benchmark shows a model is all in the record
    for key in ("title", "section", "paragraph_before", "deleted_text", "added_text",
                "comment", "timestamp", "user_type", "label"):
        assert key in line
    assert line["timestamp"] == "2024-03-04T09:00:00Z"
    assert "ünïcode" in path.read_text(encoding="utf-8")


def test_read_jsonl_rejects_other_files(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"title": "Pear", "text": "fruit"}\n')
    with pytest.raises(EditRecordError, match=r"x.jsonl: line 1 is not an edit record"):
        list(read_jsonl(path))
    with pytest.raises(EditRecordError, match="no edit records"):
        read_jsonl(tmp_path / "missing.jsonl")
