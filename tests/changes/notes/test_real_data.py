"""The real early Birdwatch download in ../shared/data/communitynotes.

Every expected number here was counted independently of freshwiki with awk over the TSVs
(``awk -F'\\t'`` joins of notes-00000.tsv with scoredNotes.tsv on noteId, and sums of the
helpful/notHelpful columns of ratings-00000.tsv for one noteId).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from freshwiki.changes.notes import (
    LabelledNote,
    LoadResult,
    build_balanced,
    counts_by_period,
    load_notes,
)


@pytest.fixture(scope="module")
def real(shared_data: Path) -> LoadResult:
    return load_notes(shared_data / "communitynotes")


def by_id(result: LoadResult, note_id: str) -> LabelledNote:
    return next(r for r in result.records if r.note.note_id == note_id)


def test_files_recognised_by_header(real: LoadResult) -> None:
    kinds = {Path(f.name).name: f.kind for f in real.report.files}
    assert kinds == {"notes-00000.tsv": "notes", "ratings-00000.tsv": "ratings",
                     "scoredNotes.tsv": "scoredNotes"}
    # Two real notes are a blank summary (checked in the TSV by hand: 1370127588799229957,
    # without a status, and 1370130359644459012, rated not helpful in 2021-03, 9 ratings).
    skipped = {Path(f.name).name: dict(f.skipped) for f in real.report.files}
    assert skipped == {"notes-00000.tsv": {"empty summary (the note has no text)": 2},
                       "ratings-00000.tsv": {}, "scoredNotes.tsv": {}}


def test_note_and_status_counts(real: LoadResult) -> None:
    report = real.report
    assert report.notes == 4878  # 4,880 rows, two of them blank
    # 889 of the 4,878 notes appear in scoredNotes (any status); there is no noteStatusHistory.
    assert dict(report.status_sources) == {"scoredNotes": 889}
    assert dict(report.excluded) == {"needs more ratings": 771, "no status": 3989}
    assert dict(report.labels) == {"helpful": 97, "not_helpful": 21}
    assert len(real.records) == 118
    assert report.regime == "note_only"


def test_counts_per_month(real: LoadResult) -> None:
    assert counts_by_period(real.records, "month") == {
        "2021-01": {"helpful": 24, "not_helpful": 6},
        "2021-02": {"helpful": 53, "not_helpful": 11},
        "2021-03": {"helpful": 20, "not_helpful": 4},
    }


def test_ratings_counted_only_for_labelled_notes(real: LoadResult) -> None:
    assert real.report.ratings == 13559
    assert real.report.ratings_counted == 1282  # 1,291 before the blank note's 9 were dropped
    assert sum(r.votes.total for r in real.records) == 1282


def test_one_note_in_full(real: LoadResult) -> None:
    record = by_id(real, "1355230055060926464")
    assert record.label == "helpful"
    assert record.status == "CURRENTLY_RATED_HELPFUL"
    assert record.status_source == "scoredNotes"
    # 20 rating rows: 16 helpful=1, 3 notHelpful=1, 1 with both 0 (no answer).
    assert (record.votes.helpful, record.votes.somewhat_helpful, record.votes.not_helpful,
            record.votes.no_answer, record.votes.total) == (16, 0, 3, 1, 20)
    note = record.note
    assert note.post_id == "1355198214626963457"
    assert note.author_id == "9940C053E01CFA19B9F4285112EDAD3C"
    assert note.created_at == dt.datetime(2021, 1, 29, 19, 3, 18, 741000, tzinfo=dt.UTC)
    assert note.classification == "MISINFORMED_OR_POTENTIALLY_MISLEADING"
    assert note.misleading_reasons == ("misleadingUnverifiedClaimAsFact",)
    assert note.not_misleading_reasons == ()
    assert note.trustworthy_sources is True
    assert note.is_media_note is None  # column added in 2023
    assert note.summary.startswith("https://twitter.com/mtgreenee/status/1355218876506591232")
    assert "Rep. Greene also posted a video" in note.summary
    assert record.post_text is None and record.regime == "note_only"


def test_not_helpful_note_votes(real: LoadResult) -> None:
    record = by_id(real, "1354600130578624514")
    assert record.label == "not_helpful"
    assert record.votes.to_dict() == {"helpful": 0, "somewhat_helpful": 0, "not_helpful": 13,
                                      "no_answer": 0, "total": 13}


def test_balanced_months_on_real_data(real: LoadResult) -> None:
    dataset = build_balanced(real.records, period="month", seed=0)
    assert [(p.period, p.kept_per_label) for p in dataset.periods] == [
        ("2021-01", 6), ("2021-02", 11), ("2021-03", 4)]
    assert len(dataset.records) == 42
    assert counts_by_period(dataset.records) == {
        "2021-01": {"helpful": 6, "not_helpful": 6},
        "2021-02": {"helpful": 11, "not_helpful": 11},
        "2021-03": {"helpful": 4, "not_helpful": 4},
    }
    # The smaller class is kept whole.
    assert {r.note.note_id for r in dataset.records if r.label == "not_helpful"} == {
        r.note.note_id for r in real.records if r.label == "not_helpful"}
    other = build_balanced(real.records, period="month", seed=1)
    assert ({r.note.note_id for r in other.records}
            != {r.note.note_id for r in dataset.records})
