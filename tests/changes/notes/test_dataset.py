"""Balanced per-period datasets and record (de)serialisation."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

import pytest

from freshwiki.changes.notes import (
    LabelledNote,
    Note,
    NotesFormatError,
    NotesRecordError,
    VoteCounts,
    build_balanced,
    counts_by_period,
    period_key,
    read_jsonl,
    write_jsonl,
)


def make(note_id: int, when: dt.datetime, label: str) -> LabelledNote:
    note = Note(note_id=str(note_id), post_id=str(note_id + 1000), created_at=when,
                classification="NOT_MISLEADING", summary=f"note {note_id}")
    status = "CURRENTLY_RATED_HELPFUL" if label == "helpful" else "CURRENTLY_RATED_NOT_HELPFUL"
    return LabelledNote(note=note, label=label, status=status,  # type: ignore[arg-type]
                        status_source="noteStatusHistory", votes=VoteCounts(helpful=note_id))


def day(month: int, d: int) -> dt.datetime:
    return dt.datetime(2024, month, d, tzinfo=dt.UTC)


# January: 7 helpful, 3 not helpful. February: 2 helpful, 5 not helpful. March: helpful only.
RECORDS = (
    [make(i, day(1, i + 1), "helpful") for i in range(1, 8)]
    + [make(i, day(1, i), "not_helpful") for i in range(11, 14)]
    + [make(i, day(2, i - 20), "helpful") for i in range(21, 23)]
    + [make(i, day(2, i - 20), "not_helpful") for i in range(31, 36)]
    + [make(41, day(3, 1), "helpful"), make(42, day(3, 2), "helpful")]
)


def test_each_period_has_equal_labels_and_the_smaller_class_whole() -> None:
    dataset = build_balanced(RECORDS, period="month", seed=7)
    assert [(p.period, p.helpful, p.not_helpful, p.kept_per_label) for p in dataset.periods] == [
        ("2024-01", 7, 3, 3), ("2024-02", 2, 5, 2), ("2024-03", 2, 0, 0)]
    assert counts_by_period(dataset.records) == {
        "2024-01": {"helpful": 3, "not_helpful": 3},
        "2024-02": {"helpful": 2, "not_helpful": 2},
    }
    ids = {r.note.note_id for r in dataset.records}
    assert {"11", "12", "13", "21", "22"} <= ids  # smaller classes kept in full


def test_one_label_periods_are_reported_not_silently_dropped() -> None:
    dataset = build_balanced(RECORDS, period="month", seed=0)
    assert [p.period for p in dataset.unbalanced_periods] == ["2024-03"]
    assert dataset.summary()["unbalanced_periods"] == ["2024-03"]
    assert all(r.period() != "2024-03" for r in dataset.records)


def test_same_seed_same_dataset_whatever_the_input_order() -> None:
    first = build_balanced(RECORDS, seed=5)
    shuffled = list(RECORDS)
    random.Random(99).shuffle(shuffled)
    again = build_balanced(shuffled, seed=5)
    assert again.records == first.records
    # Records come out in creation order.
    times = [r.note.created_at for r in first.records]
    assert times == sorted(times)


def test_other_seeds_choose_other_notes() -> None:
    chosen = {tuple(sorted(r.note.note_id for r in build_balanced(RECORDS, seed=s).records
                           if r.label == "helpful" and r.period() == "2024-01"))
              for s in range(10)}
    assert len(chosen) > 1  # C(7,3) = 35 possible subsets


def test_adding_a_month_does_not_reshuffle_earlier_months() -> None:
    base = build_balanced(RECORDS, seed=3)
    later = [*RECORDS, make(51, day(4, 1), "helpful"), make(52, day(4, 2), "not_helpful")]
    grown = build_balanced(later, seed=3)
    assert [r for r in grown.records if r.period() < "2024-04"] == base.records


def test_week_and_year_periods() -> None:
    assert period_key(day(1, 1), "week") == "2024-W01"
    assert period_key(dt.datetime(2021, 1, 3, tzinfo=dt.UTC), "week") == "2020-W53"
    dataset = build_balanced(RECORDS, period="year", seed=0)
    assert [(p.period, p.helpful, p.not_helpful) for p in dataset.periods] == [
        ("2024", 11, 8)]
    assert len(dataset.records) == 16
    with pytest.raises(NotesRecordError, match="unknown period 'day'"):
        build_balanced(RECORDS, period="day")


def test_period_uses_utc() -> None:
    late = dt.datetime(2024, 1, 31, 23, 30, tzinfo=dt.timezone(dt.timedelta(hours=-5)))
    assert period_key(late, "month") == "2024-02"


def test_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    write_jsonl(RECORDS[:2], path)
    good = path.read_text(encoding="utf-8")
    bad = dict(json.loads(good.splitlines()[0]), label="maybe")
    path.write_text(good + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(NotesFormatError, match=r"x\.jsonl, line 3: .*'label'"):
        read_jsonl(path)
    with pytest.raises(NotesFormatError, match="no labelled notes file"):
        read_jsonl(tmp_path / "missing.jsonl")


def test_votes_answered_and_total() -> None:
    votes = VoteCounts(helpful=4, somewhat_helpful=2, not_helpful=1, no_answer=3)
    assert (votes.answered, votes.total) == (7, 10)
    assert VoteCounts.from_dict(votes.to_dict()) == votes
