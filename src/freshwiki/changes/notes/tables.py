"""Opening Community Notes download files and telling them apart by their header row.

Users rename downloads (``notes-00000.tsv`` becomes ``notes-2024-05.tsv``), compress them, and
mix in the scorer's ``scoredNotes.tsv``, so a file's kind comes from its columns, never its
name, and its compression from its first bytes. Columns are read by name because the format
drifts: columns are added (``isMediaNote`` 2023, ``isCollaborativeNote`` 2026), renamed
(``participantId`` became ``noteAuthorParticipantId``/``raterParticipantId``) and deprecated
(``helpful``/``notHelpful`` gave way to ``helpfulnessLevel`` in June 2021).
"""

from __future__ import annotations

import csv
import gzip
import io
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final, Literal, cast

from freshwiki.errors import FreshwikiError

TableKind = Literal["notes", "ratings", "status_history", "scored_notes", "user_enrollment"]


class NotesFormatError(FreshwikiError):
    """A Community Notes input file cannot be read as the table it appears to be."""


UNREADABLE: Final = (UnicodeDecodeError, OSError, EOFError, zipfile.BadZipFile,
                     NotImplementedError, zlib.error)
"""What reading a damaged download raises: bad UTF-8, a truncated or corrupt gzip
(``BadGzipFile`` is an ``OSError``, a cut one ends in ``EOFError``), a damaged zip (its
member's compression method unknown: ``NotImplementedError``; its deflate data: ``zlib.error``)."""


_MISLEADING = (
    "misleadingOther", "misleadingFactualError", "misleadingManipulatedMedia",
    "misleadingOutdatedInformation", "misleadingMissingImportantContext",
    "misleadingUnverifiedClaimAsFact", "misleadingSatire",
)
_NOT_MISLEADING = (
    "notMisleadingOther", "notMisleadingFactuallyCorrect",
    "notMisleadingOutdatedButNotWhenWritten", "notMisleadingClearlySatire",
    "notMisleadingPersonalOpinion",
)
MISLEADING_COLUMNS = _MISLEADING
NOT_MISLEADING_COLUMNS = _NOT_MISLEADING

# Columns that only one kind of file has: a header is that kind whose set it overlaps most.
_SIGNATURES: dict[TableKind, frozenset[str]] = {
    "notes": frozenset({
        "tweetId", "summary", "trustworthySources", "isMediaNote", "isCollaborativeNote",
        "believable", "harmful", "validationDifficulty", *_MISLEADING, *_NOT_MISLEADING,
    }),
    "ratings": frozenset({
        "raterParticipantId", "helpfulnessLevel", "helpful", "notHelpful", "agree", "disagree",
        "helpfulOther", "helpfulClear", "helpfulGoodSources", "notHelpfulOther",
        "notHelpfulIncorrect", "ratedOnTweetId", "ratingSourceBucketed",
    }),
    "status_history": frozenset({
        "currentStatus", "firstNonNMRStatus", "timestampMillisOfFirstNonNMRStatus",
        "timestampMillisOfCurrentStatus", "latestNonNMRStatus", "mostRecentNonNMRStatus",
        "timestampMillisOfLatestNonNMRStatus", "lockedStatus", "timestampMillisOfStatusLock",
        "currentCoreStatus", "currentExpansionStatus", "currentGroupStatus",
    }),
    "scored_notes": frozenset({
        "ratingStatus", "finalRatingStatus", "noteIntercept", "noteFactor1", "firstTag",
        "secondTag", "activeRules", "activeFilterTags", "coreNoteIntercept", "decidedBy",
    }),
    "user_enrollment": frozenset({
        "enrollmentState", "successfulRatingNeededToEarnIn", "timestampOfLastStateChange",
        "timestampOfLastEarnOut", "modelingPopulation", "modelingGroup",
    }),
}

# Columns each kind must have, as groups of alternatives: one alternative of each group must be
# present in full. The alternatives cover early and current spellings.
_REQUIRED: dict[TableKind, tuple[tuple[tuple[str, ...], ...], ...]] = {
    "notes": (
        (("noteId",),),
        (("noteAuthorParticipantId",), ("participantId",)),
        (("createdAtMillis",),),
        (("tweetId",),),
        (("classification",),),
        (("summary",),),
    ),
    "ratings": (
        (("noteId",),),
        (("helpfulnessLevel",), ("helpful", "notHelpful")),
    ),
    "status_history": (
        (("noteId",),),
        (("currentStatus",),),
    ),
    "scored_notes": (
        (("noteId",),),
        (("finalRatingStatus",), ("ratingStatus",)),
    ),
    "user_enrollment": (),
}

# Everything freshwiki reads from each kind; a file's other columns are reported as extra.
_READ: dict[TableKind, frozenset[str]] = {
    "notes": frozenset({
        "noteId", "noteAuthorParticipantId", "participantId", "createdAtMillis", "tweetId",
        "classification", "summary", "trustworthySources", "isMediaNote",
        *_MISLEADING, *_NOT_MISLEADING,
    }),
    "ratings": frozenset({"noteId", "helpfulnessLevel", "helpful", "notHelpful"}),
    "status_history": frozenset({"noteId", "currentStatus"}),
    "scored_notes": frozenset({"noteId", "finalRatingStatus", "ratingStatus"}),
    "user_enrollment": frozenset(),
}

KIND_NAMES: dict[TableKind, str] = {
    "notes": "notes",
    "ratings": "ratings",
    "status_history": "noteStatusHistory",
    "scored_notes": "scoredNotes",
    "user_enrollment": "userEnrollment",
}


@dataclass(frozen=True)
class Source:
    """One readable table: a file, or one member of a zip archive."""

    path: Path
    member: str | None = None

    @property
    def name(self) -> str:
        """How messages name it: ``file`` or ``archive.zip:member.tsv``."""
        return f"{self.path}:{self.member}" if self.member else str(self.path)


@dataclass(frozen=True)
class Table:
    """A source with its header, and what kind of download that header says it is.

    Attributes:
        source: Where the table lives.
        header: The column names, in file order.
        kind: The download it is, or ``None`` when no kind's columns match.
        extra_columns: Columns freshwiki does not read (newer or unrelated fields).
    """

    source: Source
    header: tuple[str, ...]
    kind: TableKind | None
    extra_columns: tuple[str, ...] = ()

    def index(self) -> dict[str, int]:
        """Column name to position, for reading rows by name."""
        return {name: i for i, name in enumerate(self.header)}


def _compression(path: Path) -> Literal["gzip", "zip", "plain"]:
    with path.open("rb") as fh:
        magic = fh.read(4)
    if magic[:2] == b"\x1f\x8b":
        return "gzip"
    if magic == b"PK\x03\x04":
        return "zip"
    return "plain"


def sources_in(path: Path) -> list[Source]:
    """The tables a file holds: itself, or each file member of a zip archive."""
    if _compression(path) != "zip":
        return [Source(path)]
    try:
        with zipfile.ZipFile(path) as archive:
            members = [info.filename for info in archive.infolist() if not info.is_dir()]
    except zipfile.BadZipFile as exc:
        raise NotesFormatError(
            f"{path}: not a readable zip archive ({exc})",
            hint="re-download the file, or unzip it and pass the folder of .tsv files.",
        ) from exc
    return [Source(path, member) for member in sorted(members)
            if not Path(member).name.startswith((".", "__MACOSX"))]


@contextmanager
def open_text(source: Source) -> Iterator[tuple[IO[str], Callable[[], int], int]]:
    """Open a table as text, streaming, whatever its compression.

    Yields:
        The text stream, a function giving the bytes consumed so far, and the total bytes
        (compressed size for plain and gzip files, member size for zip members), so a progress
        bar can follow a file of tens of gigabytes without knowing its row count.
    """
    with ExitStack() as stack:
        raw = stack.enter_context(source.path.open("rb"))
        binary: IO[bytes]
        if source.member is not None:
            archive = stack.enter_context(zipfile.ZipFile(raw))
            info = archive.getinfo(source.member)
            if info.flag_bits & 0x1:  # zipfile would raise a bare RuntimeError on open
                raise NotesFormatError(
                    f"{source.path}: member {source.member!r} is encrypted",
                    hint="the Community Notes downloads are not encrypted: download the file "
                    "again, or unpack it with its password and pass the folder.",
                )
            member = stack.enter_context(archive.open(info))
            binary, position, total = member, member.tell, info.file_size
        elif _compression(source.path) == "gzip":
            gz = gzip.GzipFile(fileobj=raw, mode="rb")
            stack.callback(gz.close)
            binary = cast(IO[bytes], gz)
            position, total = raw.tell, source.path.stat().st_size
        else:
            binary, position, total = raw, raw.tell, source.path.stat().st_size
        text = io.TextIOWrapper(binary, encoding="utf-8-sig", newline="")
        try:
            yield text, position, total
        finally:
            text.detach()


def classify(header: tuple[str, ...]) -> TableKind | None:
    """The download kind whose distinctive columns the header overlaps most, if any."""
    columns = set(header)
    scores = {kind: len(columns & sig) for kind, sig in _SIGNATURES.items()}
    best = max(scores.values())
    if best == 0:
        return None
    return next(kind for kind, score in scores.items() if score == best)


def missing_columns(kind: TableKind, header: tuple[str, ...]) -> list[str]:
    """Required columns of ``kind`` the header lacks, alternatives spelled out."""
    columns = set(header)
    missing: list[str] = []
    for group in _REQUIRED[kind]:
        if any(set(option) <= columns for option in group):
            continue
        missing.append(" or ".join(" and ".join(option) for option in group))
    return missing


def read_header(source: Source) -> tuple[str, ...] | None:
    """The first line split on tabs, or ``None`` when the file is not tab-separated text."""
    try:
        with open_text(source) as (text, _, _):
            line = text.readline(1 << 16)
    except UNREADABLE:
        return None
    line = line.rstrip("\r\n")
    if "\t" not in line:
        return None
    return tuple(name.strip() for name in line.split("\t"))


def inspect(source: Source) -> Table:
    """Read a source's header and decide its kind, failing on a recognised but incomplete one.

    Raises:
        NotesFormatError: The header is a Community Notes kind with required columns missing;
            reading it anyway would label notes wrongly or count votes as zero.
    """
    header = read_header(source)
    if header is None:
        return Table(source, (), None)
    kind = classify(header)
    if kind is None:
        return Table(source, header, None, header)
    missing = missing_columns(kind, header)
    if missing:
        raise NotesFormatError(
            f"{source.name}: looks like a {KIND_NAMES[kind]} file but lacks column(s) "
            f"{', '.join(missing)}",
            hint=f"pass the {KIND_NAMES[kind]} file as downloaded (its header row intact), "
            "or move this file out of the folder.",
        )
    extra = tuple(name for name in header if name not in _READ[kind])
    return Table(source, header, kind, extra)


def rows(table: Table, text: IO[str]) -> Iterator[tuple[int, list[str]]]:
    """Data rows after the header with their line numbers, as the official scorer parses them.

    The scorer reads these files with pandas' default TSV dialect (``"`` quotes a field), so
    the same dialect here keeps a quoted note text with a tab or newline in one field.

    Raises:
        NotesFormatError: The file's quoting is broken (a field grew past the csv limit, which
            an unbalanced quote causes by swallowing the rest of the file).
    """
    reader = csv.reader(text, delimiter="\t")
    try:
        next(reader, None)
        for row in reader:
            yield reader.line_num, row
    except csv.Error as exc:
        raise NotesFormatError(
            f"{table.source.name}, line {reader.line_num}: {exc}",
            hint="the file's quoting is broken (an unmatched \" in a text field?); "
            "re-download it or fix that line.",
        ) from exc
