"""Constructed downloads: the current columns, compression, and bad input."""

from __future__ import annotations

import gzip
import zipfile
from pathlib import Path

import pytest

from freshwiki.changes.notes import (
    LoadResult,
    NotesFormatError,
    classify,
    counts_by_period,
    load_notes,
)
from freshwiki.errors import FreshwikiError

from .builders import (
    CRH,
    NOTES,
    NOTES_HEADER,
    RATINGS,
    RATINGS_HEADER,
    SCORED,
    SCORED_HEADER,
    STATUS_HEADER,
    STATUSES,
    millis,
    note_row,
    rating_row,
    status_row,
    tsv,
    write,
    write_scenario,
)


def labels(result: LoadResult) -> dict[str, str]:
    return {r.note.note_id: r.label for r in result.records}


def check_scenario(result: LoadResult, *, rating_rows: int = 8) -> None:
    assert labels(result) == {"101": "helpful", "102": "not_helpful", "104": "helpful",
                              "105": "not_helpful", "107": "not_helpful"}
    sources = {r.note.note_id: r.status_source for r in result.records}
    assert sources == {"101": "noteStatusHistory", "102": "noteStatusHistory",
                       "104": "scoredNotes", "105": "noteStatusHistory",
                       "107": "scoredNotes"}
    report = result.report
    assert report.notes == 7
    assert dict(report.excluded) == {"needs more ratings": 1, "no status": 1}
    assert dict(report.status_sources) == {"noteStatusHistory": 4, "scoredNotes": 2}
    votes = {r.note.note_id: r.votes for r in result.records}
    assert (votes["101"].helpful, votes["101"].somewhat_helpful, votes["101"].not_helpful,
            votes["101"].total) == (3, 1, 1, 5)
    assert (votes["102"].not_helpful, votes["102"].total) == (0 + 2, 2)
    assert votes["104"].total == votes["105"].total == votes["107"].total == 0
    assert report.ratings == rating_rows and report.ratings_counted == 7
    assert counts_by_period(result.records) == {
        "2024-05": {"helpful": 1, "not_helpful": 1},
        "2024-06": {"helpful": 1, "not_helpful": 2},
    }
    # Records come in creation order.
    assert [r.note.note_id for r in result.records] == ["101", "102", "104", "105", "107"]


def test_current_format_scenario(tmp_path: Path) -> None:
    result = load_notes(write_scenario(tmp_path / "dl"))
    check_scenario(result)
    files = {Path(f.name).name: f for f in result.report.files}
    assert {name: f.kind for name, f in files.items()} == {
        "a.tsv": "notes", "b.tsv": "ratings", "c.tsv": "noteStatusHistory",
        "d.tsv": "scoredNotes"}
    assert dict(files["c.tsv"].skipped) == {"empty status": 1}
    assert dict(files["d.tsv"].skipped) == {"status already given by noteStatusHistory": 1}
    assert "isCollaborativeNote" in files["a.tsv"].extra_columns
    note = next(r.note for r in result.records if r.note.note_id == "104")
    assert note.author_id == "AUTHOR104"
    assert note.is_media_note is True
    assert note.misleading_reasons == ("misleadingFactualError",)
    assert next(r.note for r in result.records
                if r.note.note_id == "102").classification == "NOT_MISLEADING"


def test_gzip_files_under_any_name(tmp_path: Path) -> None:
    folder = write_scenario(tmp_path / "dl", gz=True)
    for path in folder.iterdir():
        path.rename(path.with_name(path.stem + ".data"))
    check_scenario(load_notes(folder))


def test_zip_archive_members(tmp_path: Path) -> None:
    folder = tmp_path / "dl"
    write(folder / "notes.tsv", tsv(NOTES_HEADER, NOTES))
    with zipfile.ZipFile(folder / "rest.zip", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("ratings-00000.tsv", tsv(RATINGS_HEADER, RATINGS))
        archive.writestr("noteStatusHistory-00000.tsv", tsv(STATUS_HEADER, STATUSES))
        archive.writestr("scoredNotes.tsv", tsv(SCORED_HEADER, SCORED))
    result = load_notes(folder)
    check_scenario(result)
    assert any(f.name.endswith("rest.zip:ratings-00000.tsv") for f in result.report.files)


def test_ratings_split_over_files_add_up(tmp_path: Path) -> None:
    folder = write_scenario(tmp_path / "dl")
    write(folder / "b.tsv", tsv(RATINGS_HEADER, RATINGS[:3]))
    write(folder / "b2.tsv.gz", tsv(RATINGS_HEADER, RATINGS[3:]), gz=True)
    check_scenario(load_notes(folder))


def test_progress_reaches_each_file_total(tmp_path: Path) -> None:
    folder = write_scenario(tmp_path / "dl", gz=True)
    seen: dict[str, tuple[int, int]] = {}
    load_notes(folder, on_progress=lambda name, done, total: seen.__setitem__(name,
                                                                             (done, total)))
    assert {Path(n).name for n in seen} == {"a.tsv", "b.tsv", "c.tsv", "d.tsv"}
    for name, (done, total) in seen.items():
        assert done == total == Path(name).stat().st_size


def test_classify_by_header() -> None:
    assert classify(tuple(NOTES_HEADER)) == "notes"
    assert classify(tuple(RATINGS_HEADER)) == "ratings"
    assert classify(tuple(STATUS_HEADER)) == "status_history"
    assert classify(tuple(SCORED_HEADER)) == "scored_notes"
    assert classify(("participantId", "enrollmentState", "modelingPopulation")) == \
        "user_enrollment"
    assert classify(("postId", "text", "date")) is None


def test_quoted_summary_keeps_its_tab(tmp_path: Path) -> None:
    folder = write_scenario(tmp_path / "dl")
    rows = [note_row(101, millis(2024, 5, 3), 9001, "PLACEHOLDER"), *NOTES[1:]]
    text = tsv(NOTES_HEADER, rows).replace("PLACEHOLDER", '"left\tright ""quoted"""')
    write(folder / "a.tsv", text)
    record = next(r for r in load_notes(folder).records if r.note.note_id == "101")
    assert record.note.summary == 'left\tright "quoted"'


def test_notes_missing_columns_is_an_error_naming_file_and_columns(tmp_path: Path) -> None:
    folder = write_scenario(tmp_path / "dl")
    keep = [i for i, name in enumerate(NOTES_HEADER)
            if name not in ("summary", "noteAuthorParticipantId")]
    header = [NOTES_HEADER[i] for i in keep]
    write(folder / "a.tsv", tsv(header, [[row[i] for i in keep] for row in NOTES]))
    with pytest.raises(NotesFormatError) as info:
        load_notes(folder)
    message = info.value.message
    assert "a.tsv" in message and "notes file" in message
    assert "noteAuthorParticipantId or participantId" in message and "summary" in message
    assert isinstance(info.value, FreshwikiError) and info.value.hint


def test_ratings_without_any_helpfulness_column_is_an_error(tmp_path: Path) -> None:
    folder = write_scenario(tmp_path / "dl")
    keep = [i for i, name in enumerate(RATINGS_HEADER)
            if name not in ("helpful", "notHelpful", "helpfulnessLevel")]
    write(folder / "b.tsv", tsv([RATINGS_HEADER[i] for i in keep],
                                [[row[i] for i in keep] for row in RATINGS]))
    with pytest.raises(NotesFormatError, match=r"b\.tsv.*ratings.*helpfulnessLevel or "
                       r"helpful and notHelpful"):
        load_notes(folder)


def test_status_history_without_current_status_is_an_error(tmp_path: Path) -> None:
    folder = write_scenario(tmp_path / "dl")
    keep = [i for i, name in enumerate(STATUS_HEADER) if name != "currentStatus"]
    write(folder / "c.tsv", tsv([STATUS_HEADER[i] for i in keep],
                                [[row[i] for i in keep] for row in STATUSES]))
    with pytest.raises(NotesFormatError, match=r"c\.tsv.*noteStatusHistory.*currentStatus"):
        load_notes(folder)


def test_extra_columns_are_read_around(tmp_path: Path) -> None:
    folder = write_scenario(tmp_path / "dl")
    # A future download: a new column in the middle of each file.
    for name, header, rows in (("a.tsv", NOTES_HEADER, NOTES), ("b.tsv", RATINGS_HEADER,
                                                                RATINGS),
                               ("c.tsv", STATUS_HEADER, STATUSES)):
        write(folder / name, tsv([header[0], "newColumn2030", *header[1:]],
                                 [[row[0], "x", *row[1:]] for row in rows]))
    result = load_notes(folder)
    check_scenario(result)
    assert all("newColumn2030" in f.extra_columns for f in result.report.files
               if Path(f.name).name in ("a.tsv", "b.tsv", "c.tsv"))


def test_bad_rows_are_skipped_and_counted(tmp_path: Path) -> None:
    folder = write_scenario(tmp_path / "dl")
    notes = [*NOTES, [*note_row(108, millis(2024, 6, 6), 9008, "extra field"), "surplus"],
             note_row(109, millis(2024, 6, 6), 9009, "short")[:-3],
             ["abc", *note_row(110, 0, 9010, "bad id")[1:]],
             note_row(101, millis(2024, 6, 7), 9011, "duplicate of 101")]
    write(folder / "a.tsv", tsv(NOTES_HEADER, notes) + "\n")
    ratings = [*RATINGS, rating_row(101, "R9", level="VERY_HELPFUL"),
               rating_row(101, "R10", helpful="1", not_helpful="1")]
    write(folder / "b.tsv", tsv(RATINGS_HEADER, ratings))
    result = load_notes(folder)
    check_scenario(result, rating_rows=10)
    files = {Path(f.name).name: f for f in result.report.files}
    assert dict(files["a.tsv"].skipped) == {"wrong number of fields": 2, "blank line": 1,
                                            "noteId is not a number": 1,
                                            "duplicate noteId (first row kept)": 1}
    assert dict(files["b.tsv"].skipped) == {"unknown helpfulnessLevel 'VERY_HELPFUL'": 1,
                                            "helpful/notHelpful '1'/'1'": 1}


def test_unrelated_files_are_ignored_with_a_note(tmp_path: Path) -> None:
    folder = write_scenario(tmp_path / "dl")
    write(folder / "README.txt", "These are my downloads.\n")
    write(folder / "users.tsv", tsv(["participantId", "enrollmentState", "modelingGroup"],
                                    [["P1", "earnedIn", "1"]]))
    write(folder / "other.tsv", tsv(["foo", "bar"], [["1", "2"]]))
    (folder / "bin.tsv").write_bytes(b"\xff\xfe\x00binary\tjunk")
    result = load_notes(folder)
    check_scenario(result)
    notes = {Path(f.name).name: f.note for f in result.report.files if f.note}
    assert notes == {
        "README.txt": "ignored: not tab-separated text with a header row",
        "bin.tsv": "ignored: not tab-separated text with a header row",
        "other.tsv": "ignored: header matches no Community Notes download",
        "users.tsv": "ignored: not needed for labels",
    }


def test_no_status_file_is_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "dl"
    write(folder / "notes.tsv", tsv(NOTES_HEADER, NOTES))
    write(folder / "ratings.tsv", tsv(RATINGS_HEADER, RATINGS))
    with pytest.raises(NotesFormatError, match="no noteStatusHistory or scoredNotes file"):
        load_notes(folder)


def test_no_notes_file_is_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "dl"
    write(folder / "status.tsv", tsv(STATUS_HEADER, [status_row(101, CRH)]))
    with pytest.raises(NotesFormatError, match=r"no notes file \(found noteStatusHistory\)"):
        load_notes(folder)


def test_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(NotesFormatError, match="is not a folder"):
        load_notes(tmp_path / "nowhere")


def test_without_ratings_votes_are_zero_and_warned(tmp_path: Path) -> None:
    folder = write_scenario(tmp_path / "dl")
    (folder / "b.tsv").unlink()
    result = load_notes(folder)
    assert all(r.votes.total == 0 for r in result.records)
    assert result.report.warnings == ["no ratings file: every vote count is zero"]


def test_early_status_spelling_in_scored_notes(tmp_path: Path) -> None:
    folder = tmp_path / "dl"
    write(folder / "notes.tsv", tsv(NOTES_HEADER, NOTES[:2]))
    write(folder / "scored.tsv", tsv(SCORED_HEADER, [
        ["101", "0.4", "0.0", "Currently Rated Helpful", "", "", "", "", "", "0"],
        ["102", "0.4", "0.0", "Currently Rated Not Helpful", "", "", "", "", "", "0"],
    ]))
    assert labels(load_notes(folder)) == {"101": "helpful", "102": "not_helpful"}


def test_gzip_that_is_truncated_is_reported(tmp_path: Path) -> None:
    folder = write_scenario(tmp_path / "dl")
    whole = gzip.compress(tsv(RATINGS_HEADER, RATINGS * 200).encode())
    (folder / "b.tsv").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(NotesFormatError, match=r"b\.tsv: unreadable after \d+ rows"):
        load_notes(folder)
