"""From a folder of Community Notes downloads to labelled notes.

Order matters for memory, not for results: statuses are read first (a small value per note),
then notes, keeping the full text only of notes that get a label, then ratings, counting votes
only for those notes. The ratings download runs to tens of gigabytes over many files, so it is
streamed row by row with a counter per labelled note and nothing else kept.

Every row that is not used is counted with its reason, per file, so a user can see that a
download was read in full or why it was not.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from freshwiki.changes.notes.posts import PostsReport, read_posts
from freshwiki.changes.notes.records import (
    HELPFUL,
    NOT_HELPFUL,
    Label,
    LabelledNote,
    Note,
    Post,
    Regime,
    StatusSource,
    VoteCounts,
)
from freshwiki.changes.notes.tables import (
    KIND_NAMES,
    MISLEADING_COLUMNS,
    NOT_MISLEADING_COLUMNS,
    UNREADABLE,
    NotesFormatError,
    Table,
    TableKind,
    inspect,
    open_text,
    rows,
    sources_in,
)

ProgressFn = Callable[[str, int, int], None]
"""Called as ``(file name, bytes done, bytes total)`` while a file is read."""

CURRENTLY_RATED_HELPFUL = "CURRENTLY_RATED_HELPFUL"
CURRENTLY_RATED_NOT_HELPFUL = "CURRENTLY_RATED_NOT_HELPFUL"
NEEDS_MORE_RATINGS = "NEEDS_MORE_RATINGS"

STATUS_LABELS: dict[str, Label] = {
    CURRENTLY_RATED_HELPFUL: HELPFUL,
    CURRENTLY_RATED_NOT_HELPFUL: NOT_HELPFUL,
}

EXCLUDED_NMR = "needs more ratings"
EXCLUDED_NO_STATUS = "no status"

_LEVELS = {"HELPFUL": 0, "SOMEWHAT_HELPFUL": 1, "NOT_HELPFUL": 2}
_NO_ANSWER = 3
_PROGRESS_EVERY = 1 << 15
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@dataclass
class FileReport:
    """What one table contributed.

    Attributes:
        name: The file (or ``archive.zip:member``).
        kind: The download kind recognised from its header (``None``: not a Community Notes
            table, ignored).
        rows: Data rows read.
        used: Rows that fed the result (statuses stored, notes parsed, votes counted).
        skipped: Rows not used, by reason.
        extra_columns: Columns present but not read.
        note: Why a whole file was ignored, if it was.
    """

    name: str
    kind: str | None
    rows: int = 0
    used: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    extra_columns: tuple[str, ...] = ()
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"name": self.name, "kind": self.kind, "rows": self.rows, "used": self.used,
                "skipped": dict(self.skipped), "extra_columns": list(self.extra_columns),
                "note": self.note}


@dataclass
class LoadReport:
    """Counts behind a load, for the CLI table and the report file written beside the dataset.

    Attributes:
        folder: The folder read.
        files: One report per table found.
        notes: Distinct notes read.
        status_sources: Notes that found any status (helpful, not helpful, needs more ratings,
            other), by the file kind it came from.
        excluded: Notes left unlabelled, by reason (needs more ratings, no status, other
            status values).
        labels: Labelled notes per label.
        ratings: Rating rows read, over all ratings files.
        ratings_counted: Rating rows counted into a labelled note's votes.
        posts: What the posts file gave, when one was passed.
        regime: ``with_post`` when a posts file was passed, else ``note_only``.
        warnings: Conditions that make the result weaker without making it wrong.
    """

    folder: Path
    files: list[FileReport] = field(default_factory=list)
    notes: int = 0
    status_sources: Counter[str] = field(default_factory=Counter)
    excluded: Counter[str] = field(default_factory=Counter)
    labels: Counter[str] = field(default_factory=Counter)
    ratings: int = 0
    ratings_counted: int = 0
    posts: PostsReport | None = None
    regime: Regime = "note_only"
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        posts = None
        if self.posts is not None:
            posts = {"path": str(self.posts.path), "format": self.posts.format,
                     "columns": self.posts.columns, "rows": self.posts.rows,
                     "kept": self.posts.kept, "skipped": dict(self.posts.skipped)}
        return {
            "folder": str(self.folder),
            "files": [f.to_dict() for f in self.files],
            "notes": self.notes,
            "status_sources": dict(self.status_sources),
            "excluded": dict(self.excluded),
            "labels": {label: self.labels.get(label, 0) for label in (HELPFUL, NOT_HELPFUL)},
            "ratings": self.ratings,
            "ratings_counted": self.ratings_counted,
            "posts": posts,
            "regime": self.regime,
            "warnings": list(self.warnings),
        }


@dataclass
class LoadResult:
    """Labelled notes in creation order, and the report of how they were obtained."""

    records: list[LabelledNote]
    report: LoadReport


def normalise_status(value: str) -> str:
    """``Currently Rated Helpful`` and ``CURRENTLY_RATED_HELPFUL`` alike, as the enum name."""
    return "_".join(value.strip().upper().replace("-", " ").split())


def _note_id(value: str) -> int | None:
    value = value.strip()
    # isdigit() alone also accepts "²" and other digits int() refuses: ASCII digits only.
    return int(value) if value.isascii() and value.isdigit() else None


def _created_at(value: str) -> dt.datetime | None:
    """``createdAtMillis`` as a UTC time; ``None`` when not a whole number of a real date."""
    value = value.strip()
    digits = value[1:] if value.startswith("-") else value
    if not (digits.isascii() and digits.isdigit()):
        return None
    try:
        return _EPOCH + dt.timedelta(milliseconds=int(value))
    except OverflowError:  # beyond the years 1-9999 a datetime can hold
        return None


class _Reader:
    """Streams tables row by row, counting skips and reporting progress."""

    def __init__(self, on_progress: ProgressFn | None) -> None:
        self.on_progress = on_progress

    def scan(self, table: Table, report: FileReport,
             handle: Callable[[list[str], FileReport], None]) -> None:
        width = len(table.header)
        try:
            with open_text(table.source) as (text, position, total):
                for count, (_, row) in enumerate(rows(table, text), start=1):
                    report.rows += 1
                    if len(row) != width:
                        reason = "blank line" if not row else "wrong number of fields"
                        report.skipped[reason] += 1
                    else:
                        handle(row, report)
                    if self.on_progress is not None and count % _PROGRESS_EVERY == 0:
                        self.on_progress(table.source.name, position(), total)
                if self.on_progress is not None:
                    self.on_progress(table.source.name, total, total)
        except UNREADABLE as exc:
            raise NotesFormatError(
                f"{table.source.name}: unreadable after {report.rows} rows ({exc})",
                hint="the file is truncated, corrupt or not UTF-8; download it again.",
            ) from exc


def _flag(row: list[str], index: int | None) -> bool | None:
    if index is None:
        return None
    value = row[index].strip()
    if value in ("1", "true", "True"):
        return True
    if value in ("0", "false", "False"):
        return False
    return None


def discover(folder: Path, exclude: Path | None = None) -> tuple[list[Table], list[FileReport]]:
    """Every table in ``folder`` (not its subfolders) with its kind, plus ignored files.

    Raises:
        NotesFormatError: The folder does not exist, or a recognised file lacks columns.
    """
    if not folder.is_dir():
        raise NotesFormatError(
            f"{folder} is not a folder",
            hint="pass the folder holding the Community Notes downloads (notes, ratings, "
            "noteStatusHistory or scoredNotes files).",
        )
    skip = exclude.resolve() if exclude is not None else None
    tables: list[Table] = []
    ignored: list[FileReport] = []
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.name.startswith(".") or path.resolve() == skip:
            continue
        for source in sources_in(path):
            table = inspect(source)
            if table.kind is None:
                why = ("not tab-separated text with a header row" if not table.header
                       else "header matches no Community Notes download")
                ignored.append(FileReport(source.name, None, note=f"ignored: {why}"))
            elif table.kind == "user_enrollment":
                ignored.append(FileReport(source.name, KIND_NAMES[table.kind],
                                          note="ignored: not needed for labels"))
            else:
                tables.append(table)
    return tables, ignored


def load_notes(folder: Path, posts: Path | None = None, *,
               on_progress: ProgressFn | None = None) -> LoadResult:
    """Read a folder of downloads and label every note that has a final status.

    A note is ``helpful`` when currently rated helpful and ``not_helpful`` when currently rated
    not helpful; notes needing more ratings, with another status, or with none are excluded and
    counted by reason. A note's status comes from noteStatusHistory when that file lists it
    with a status, else from the scorer's scoredNotes output.

    Args:
        folder: Folder of downloads: notes, ratings, noteStatusHistory and/or scoredNotes,
            each .tsv, gzip or zip, under any name.
        posts: Optional posts file (CSV, TSV or JSONL: post id, text, date) joined on the
            note's tweetId. Without it every record is in the note-only regime.
        on_progress: Called while files are read, for a progress bar.

    Raises:
        NotesFormatError: No notes file or no status file, a recognised file lacking required
            columns, broken quoting, or an unreadable posts file.
    """
    tables, ignored = discover(folder, exclude=posts)
    report = LoadReport(folder=folder, regime="with_post" if posts is not None else "note_only")
    by_kind: dict[TableKind, list[Table]] = {}
    for table in tables:
        assert table.kind is not None
        by_kind.setdefault(table.kind, []).append(table)
    found = ", ".join(sorted({KIND_NAMES[t.kind] for t in tables if t.kind})) or "nothing"
    if not by_kind.get("notes"):
        raise NotesFormatError(
            f"{folder}: no notes file (found {found})",
            hint="a notes file has the columns noteId, createdAtMillis, tweetId, "
            "classification and summary; download it from the Community Notes data page.",
        )
    if not by_kind.get("status_history") and not by_kind.get("scored_notes"):
        raise NotesFormatError(
            f"{folder}: no noteStatusHistory or scoredNotes file, so no note has a status "
            f"(found {found})",
            hint="add the noteStatusHistory download (column currentStatus) or the scorer's "
            "scoredNotes output (column ratingStatus) to the folder.",
        )
    if not by_kind.get("ratings"):
        report.warnings.append("no ratings file: every vote count is zero")
    reader = _Reader(on_progress)
    file_reports: dict[Table, FileReport] = {}

    def file_report(table: Table) -> FileReport:
        assert table.kind is not None
        rep = FileReport(table.source.name, KIND_NAMES[table.kind],
                         extra_columns=table.extra_columns)
        file_reports[table] = rep
        return rep

    # 1. Statuses: noteStatusHistory first, scoredNotes only for notes it does not cover.
    statuses: dict[int, tuple[str, StatusSource]] = {}
    interned: dict[str, str] = {}
    status_kinds: list[tuple[TableKind, tuple[str, ...], StatusSource]] = [
        ("status_history", ("currentStatus",), "noteStatusHistory"),
        ("scored_notes", ("finalRatingStatus", "ratingStatus"), "scoredNotes"),
    ]
    for kind, column_options, source_name in status_kinds:
        seen: set[int] = set()  # per kind: a note listed twice keeps its first status
        for table in by_kind.get(kind, []):
            index = table.index()
            id_at = index["noteId"]
            status_at = next(index[c] for c in column_options if c in index)

            def status_row(row: list[str], rep: FileReport, *, id_at: int = id_at,
                           status_at: int = status_at, seen: set[int] = seen,
                           source: StatusSource = source_name) -> None:
                note_id = _note_id(row[id_at])
                if note_id is None:
                    rep.skipped["noteId is not a number"] += 1
                    return
                status = normalise_status(row[status_at])
                if not status:
                    rep.skipped["empty status"] += 1
                    return
                if note_id in seen:
                    rep.skipped["duplicate noteId (first row kept)"] += 1
                    return
                seen.add(note_id)
                if note_id in statuses:  # only scoredNotes rows get here: NSH came first
                    rep.skipped["status already given by noteStatusHistory"] += 1
                    return
                statuses[note_id] = (interned.setdefault(status, status), source)
                rep.used += 1

            reader.scan(table, file_report(table), status_row)

    # 2. Notes: keep the full note only when its status gives a label.
    pending: dict[int, tuple[Note, Label, str, StatusSource]] = {}
    seen_notes: set[int] = set()
    for table in by_kind["notes"]:
        index = table.index()
        cols = _NoteColumns(index)

        def note_row(row: list[str], rep: FileReport, cols: _NoteColumns = cols) -> None:
            note_id = _note_id(row[cols.note_id])
            if note_id is None:
                rep.skipped["noteId is not a number"] += 1
                return
            if note_id in seen_notes:
                rep.skipped["duplicate noteId (first row kept)"] += 1
                return
            created = _created_at(row[cols.created])
            if created is None:
                rep.skipped["createdAtMillis is not a number"] += 1
                return
            post_id = row[cols.tweet_id].strip()
            if not post_id:
                rep.skipped["empty tweetId"] += 1
                return
            if not row[cols.summary].strip():
                # Real rows do this (a note of " "): nothing to classify or search from.
                rep.skipped["empty summary (the note has no text)"] += 1
                return
            seen_notes.add(note_id)
            rep.used += 1
            report.notes += 1
            found_status = statuses.get(note_id)
            if found_status is None:
                report.excluded[EXCLUDED_NO_STATUS] += 1
                return
            status, source = found_status
            report.status_sources[source] += 1
            label = STATUS_LABELS.get(status)
            if label is None:
                reason = EXCLUDED_NMR if status == NEEDS_MORE_RATINGS else f"status {status}"
                report.excluded[reason] += 1
                return
            report.labels[label] += 1
            pending[note_id] = (cols.note(row, str(note_id), created, post_id),
                                label, status, source)

        reader.scan(table, file_report(table), note_row)
    statuses.clear()  # free it before the ratings, the longest read

    # 3. Ratings: one counter per labelled note, nothing else kept.
    votes: dict[int, list[int]] = {note_id: [0, 0, 0, 0] for note_id in pending}
    for table in by_kind.get("ratings", []):
        index = table.index()
        id_at = index["noteId"]
        level_at = index.get("helpfulnessLevel")
        helpful_at = index.get("helpful")
        not_helpful_at = index.get("notHelpful")

        def rating_row(row: list[str], rep: FileReport, *, id_at: int = id_at,
                       level_at: int | None = level_at, helpful_at: int | None = helpful_at,
                       not_helpful_at: int | None = not_helpful_at) -> None:
            report.ratings += 1
            note_id = _note_id(row[id_at])
            if note_id is None:
                rep.skipped["noteId is not a number"] += 1
                return
            counts = votes.get(note_id)
            if counts is None:
                return
            level = row[level_at].strip() if level_at is not None else ""
            if level:
                slot = _LEVELS.get(level)
                if slot is None:
                    rep.skipped[f"unknown helpfulnessLevel {level[:40]!r}"] += 1
                    return
            else:
                pair = (row[helpful_at].strip() if helpful_at is not None else "",
                        row[not_helpful_at].strip() if not_helpful_at is not None else "")
                if pair == ("1", "0"):
                    slot = 0
                elif pair == ("0", "1"):
                    slot = 2
                elif pair in (("0", "0"), ("", ""), ("0", ""), ("", "0")):
                    slot = _NO_ANSWER
                else:
                    rep.skipped[f"helpful/notHelpful {pair[0]!r}/{pair[1]!r}"] += 1
                    return
            counts[slot] += 1
            rep.used += 1
            report.ratings_counted += 1

        reader.scan(table, file_report(table), rating_row)

    # 4. Posts, only those the labelled notes point at.
    post_map: dict[str, Post] = {}
    if posts is not None:
        wanted = {note.post_id for note, *_ in pending.values()}
        post_map, report.posts = read_posts(posts, wanted)

    records = []
    for note_id, (note, label, status, source) in pending.items():
        helpful, somewhat, not_helpful, no_answer = votes[note_id]
        post = post_map.get(note.post_id)
        records.append(LabelledNote(
            note=note, label=label, status=status, status_source=source,
            votes=VoteCounts(helpful, somewhat, not_helpful, no_answer),
            post_text=post.text if post else None,
            post_date=post.created_at if post else None,
            post_lang=post.lang if post else None,
            post_has_media=post.has_media if post else None,
        ))
    records.sort(key=lambda r: (r.note.created_at, int(r.note.note_id)))
    report.files = [file_reports[t] for t in tables if t in file_reports] + ignored
    if report.posts is not None:
        missing = sum(1 for r in records if r.post_text is None)
        if missing:
            report.warnings.append(
                f"{missing} of {len(records)} labelled notes have no post in the posts file "
                "(those records are note-only)")
    return LoadResult(records, report)


class _NoteColumns:
    """Positions of the notes columns in one file's header (early or current)."""

    def __init__(self, index: dict[str, int]) -> None:
        self.note_id = index["noteId"]
        self.author = index.get("noteAuthorParticipantId", index.get("participantId"))
        self.created = index["createdAtMillis"]
        self.tweet_id = index["tweetId"]
        self.classification = index["classification"]
        self.summary = index["summary"]
        self.trustworthy = index.get("trustworthySources")
        self.media = index.get("isMediaNote")
        self.misleading = [(name, index[name]) for name in MISLEADING_COLUMNS if name in index]
        self.not_misleading = [(name, index[name]) for name in NOT_MISLEADING_COLUMNS
                               if name in index]

    def note(self, row: list[str], note_id: str, created_at: dt.datetime, post_id: str
             ) -> Note:
        return Note(
            note_id=note_id,
            post_id=post_id,
            created_at=created_at,
            classification=row[self.classification].strip(),
            summary=row[self.summary],
            author_id=row[self.author].strip() if self.author is not None else "",
            misleading_reasons=tuple(n for n, i in self.misleading if row[i].strip() == "1"),
            not_misleading_reasons=tuple(n for n, i in self.not_misleading
                                         if row[i].strip() == "1"),
            trustworthy_sources=_flag(row, self.trustworthy),
            is_media_note=_flag(row, self.media),
        )
