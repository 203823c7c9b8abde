"""The optional posts file: joined on tweetId, or the note-only regime without it."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from pathlib import Path

import pytest

from freshwiki.changes.notes import (
    LabelledNote,
    NotesFormatError,
    load_notes,
    parse_post_date,
    read_jsonl,
    read_posts,
    write_jsonl,
)

from .builders import write_scenario


def by_id(records: list[LabelledNote]) -> dict[str, LabelledNote]:
    return {r.note.note_id: r for r in records}


def test_without_posts_every_record_is_note_only(tmp_path: Path) -> None:
    result = load_notes(write_scenario(tmp_path / "dl"))
    assert result.report.regime == "note_only"
    assert result.report.posts is None
    assert {(r.post_text, r.post_date, r.regime) for r in result.records} == {
        (None, None, "note_only")}
    assert all(r.to_dict()["regime"] == "note_only" for r in result.records)


def test_csv_posts_join_on_tweet_id(tmp_path: Path) -> None:
    folder = write_scenario(tmp_path / "dl")
    posts = tmp_path / "posts.csv"
    posts.write_text(
        "tweetId,text,created_at\n"
        '9001,"Protest photo, taken today!",2024-05-02T08:00:00Z\n'
        "9002,Breaking: the moon is cheese,2024-05-19 10:30:00\n"
        "9005,Taxes doubled last year,\n"
        "9999,A post no note is about,2024-01-01T00:00:00Z\n",
        encoding="utf-8")
    result = load_notes(folder, posts)
    records = by_id(result.records)
    assert result.report.regime == "with_post"
    assert records["101"].post_text == "Protest photo, taken today!"
    assert records["101"].post_date == dt.datetime(2024, 5, 2, 8, tzinfo=dt.UTC)
    assert records["101"].regime == "with_post"
    assert records["102"].post_date == dt.datetime(2024, 5, 19, 10, 30, tzinfo=dt.UTC)
    assert records["105"].post_text == "Taxes doubled last year"
    assert records["105"].post_date is None
    # 104 and 107 have no post in the file: note-only records, and a warning says so.
    assert records["104"].post_text is None and records["104"].regime == "note_only"
    assert result.report.warnings == [
        "2 of 5 labelled notes have no post in the posts file (those records are note-only)"]
    assert result.report.posts is not None
    assert result.report.posts.format == "csv"
    assert result.report.posts.rows == 4
    assert result.report.posts.kept == 3  # the unrelated post 9999 is not kept


def test_jsonl_posts_with_api_v1_dates(tmp_path: Path) -> None:
    folder = write_scenario(tmp_path / "dl")
    posts = tmp_path / "tweets.jsonl"
    lines = [
        {"id": 9004, "full_text": "He never said that.",
         "created_at": "Sun Jun 02 09:15:00 +0000 2024"},
        {"id": "9007", "full_text": "Inflation is 20%", "created_at": 1717500000000},
        "not an object",
    ]
    posts.write_text("\n".join(json.dumps(x) for x in lines) + "\n{broken\n", encoding="utf-8")
    result = load_notes(folder, posts)
    records = by_id(result.records)
    assert records["104"].post_text == "He never said that."
    assert records["104"].post_date == dt.datetime(2024, 6, 2, 9, 15, tzinfo=dt.UTC)
    # 1717500000000 ms = 2024-06-04T11:20:00Z
    assert records["107"].post_date == dt.datetime(2024, 6, 4, 11, 20, tzinfo=dt.UTC)
    report = result.report.posts
    assert report is not None and report.format == "jsonl"
    assert report.columns == {"id": "id", "text": "full_text", "date": "created_at",
                              "lang": None, "media": None}
    assert dict(report.skipped) == {"line is not a JSON object": 1,
                                    "line is not valid JSON": 1}


def test_gzip_tsv_posts_and_bad_dates(tmp_path: Path) -> None:
    posts = tmp_path / "posts.gz"
    posts.write_bytes(gzip.compress(
        b"postId\ttext\tcreatedAtMillis\n9001\tfirst\t1714636800000\n9002\tsecond\tyesterday\n"))
    found, report = read_posts(posts)
    assert report.format == "tsv"
    assert found["9001"].created_at == dt.datetime(2024, 5, 2, 8, tzinfo=dt.UTC)
    assert "9002" not in found
    assert dict(report.skipped) == {"unparseable date": 1}


def test_posts_without_text_column_is_an_error(tmp_path: Path) -> None:
    posts = tmp_path / "posts.csv"
    posts.write_text("tweetId,created_at\n9001,2024-05-02\n", encoding="utf-8")
    with pytest.raises(NotesFormatError, match=r"posts\.csv: no text column among "
                       r"tweetId, created_at"):
        load_notes(write_scenario(tmp_path / "dl"), posts)


def test_missing_posts_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(NotesFormatError, match="does not exist"):
        load_notes(write_scenario(tmp_path / "dl"), tmp_path / "nope.csv")


def test_posts_file_inside_the_download_folder_is_not_read_as_a_table(tmp_path: Path) -> None:
    folder = write_scenario(tmp_path / "dl")
    posts = folder / "posts.tsv"
    posts.write_text("tweetId\ttext\tdate\n9001\thello\t2024-05-02\n", encoding="utf-8")
    result = load_notes(folder, posts)
    assert by_id(result.records)["101"].post_text == "hello"
    assert all(Path(f.name).name != "posts.tsv" for f in result.report.files)


def test_post_date_shapes() -> None:
    utc = dt.UTC
    assert parse_post_date("2024-05-02T08:00:00+02:00") == dt.datetime(2024, 5, 2, 6, tzinfo=utc)
    assert parse_post_date("1714636800") == dt.datetime(2024, 5, 2, 8, tzinfo=utc)
    assert parse_post_date(1714636800000) == dt.datetime(2024, 5, 2, 8, tzinfo=utc)
    assert parse_post_date("") is None
    with pytest.raises(ValueError):
        parse_post_date("next Tuesday")


def test_jsonl_round_trip_keeps_post_and_votes(tmp_path: Path) -> None:
    posts = tmp_path / "posts.csv"
    posts.write_text("tweetId,text,created_at\n9001,the post,2024-05-02T08:00:00Z\n",
                     encoding="utf-8")
    records = load_notes(write_scenario(tmp_path / "dl"), posts).records
    path = tmp_path / "out" / "labelled.jsonl"
    assert write_jsonl(records, path) == 5
    assert read_jsonl(path) == records
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert first == {
        "note_id": "101", "post_id": "9001", "created_at": "2024-05-03T12:00:00+00:00",
        "classification": "MISINFORMED_OR_POTENTIALLY_MISLEADING",
        "summary": "The photo is from 2019, not from this week.", "author_id": "AUTHOR101",
        "misleading_reasons": ["misleadingFactualError"], "not_misleading_reasons": [],
        "trustworthy_sources": True, "is_media_note": False, "label": "helpful",
        "status": "CURRENTLY_RATED_HELPFUL", "status_source": "noteStatusHistory",
        "votes": {"helpful": 3, "somewhat_helpful": 1, "not_helpful": 1, "no_answer": 0,
                  "total": 5},
        "post_text": "the post", "post_date": "2024-05-02T08:00:00+00:00",
        "post_lang": None, "post_has_media": None, "regime": "with_post",
    }
