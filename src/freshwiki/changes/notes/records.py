"""Typed records for Community Notes: a note, its vote counts, and the note with its label.

A :class:`LabelledNote` is what the HelloFresh benchmark shows a model ("will this note be
rated helpful?"), so it carries everything needed to render the question on its own: the note
text, what the writer claimed about the post, the post text when the user supplied one, and the
dates that place it in a monthly slice. Identifiers stay strings because note and post ids are
64-bit integers that JSON readers outside Python silently round.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Literal

from freshwiki.errors import FreshwikiError

Label = Literal["helpful", "not_helpful"]
HELPFUL: Label = "helpful"
NOT_HELPFUL: Label = "not_helpful"
LABELS: tuple[Label, Label] = (HELPFUL, NOT_HELPFUL)

Regime = Literal["with_post", "note_only"]
"""``with_post``: the post text is attached; ``note_only``: a model sees the note alone."""

StatusSource = Literal["noteStatusHistory", "scoredNotes"]

Period = Literal["month", "week", "year"]
PERIODS: tuple[Period, ...] = ("month", "week", "year")


class NotesRecordError(FreshwikiError):
    """A stored record (JSONL line or dict) lacks a field or has a value of the wrong type."""


def period_key(when: dt.datetime, period: str) -> str:
    """The slice a timestamp falls in: ``2021-02`` (month), ``2021-W05`` (ISO week), ``2021``.

    Keys sort chronologically as strings, so reports and datasets can order periods without
    parsing them back.
    """
    when = when.astimezone(dt.UTC)
    if period == "month":
        return f"{when.year:04d}-{when.month:02d}"
    if period == "week":
        year, week, _ = when.isocalendar()
        return f"{year:04d}-W{week:02d}"
    if period == "year":
        return f"{when.year:04d}"
    raise NotesRecordError(
        f"unknown period {period!r}", hint=f"use one of: {', '.join(PERIODS)}."
    )


def _utc_iso(when: dt.datetime | None) -> str | None:
    return None if when is None else when.astimezone(dt.UTC).isoformat()


def _parse_time(value: Any, name: str) -> dt.datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise NotesRecordError(f"field {name!r} must be an ISO 8601 string, got {value!r}")
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError as exc:
        raise NotesRecordError(f"field {name!r}: {exc}") from exc
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed.astimezone(dt.UTC)


def _need(data: dict[str, Any], name: str) -> Any:
    if name not in data:
        raise NotesRecordError(
            f"record lacks field {name!r}",
            hint="regenerate the dataset with `freshwiki notes load`.",
        )
    return data[name]


@dataclass(frozen=True)
class Note:
    """One note as its writer submitted it, from the notes download.

    Attributes:
        note_id: The note's id (decimal string).
        post_id: The id of the post (tweet) the note is attached to.
        created_at: When the note was written, UTC.
        classification: The writer's verdict on the post: ``MISINFORMED_OR_POTENTIALLY_MISLEADING``
            or ``NOT_MISLEADING``.
        summary: The note text shown to readers.
        author_id: The writer's participant id (``noteAuthorParticipantId``, early
            ``participantId``).
        misleading_reasons: Names of the ``misleading*`` boxes the writer ticked.
        not_misleading_reasons: Names of the ``notMisleading*`` boxes the writer ticked.
        trustworthy_sources: Whether the writer said they linked trustworthy sources (``None``
            when the column is absent or empty).
        is_media_note: Whether the note is about the post's media rather than the post
            (column added 2023; ``None`` in earlier files).
    """

    note_id: str
    post_id: str
    created_at: dt.datetime
    classification: str
    summary: str
    author_id: str = ""
    misleading_reasons: tuple[str, ...] = ()
    not_misleading_reasons: tuple[str, ...] = ()
    trustworthy_sources: bool | None = None
    is_media_note: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; times as UTC ISO 8601 strings."""
        return {
            "note_id": self.note_id,
            "post_id": self.post_id,
            "created_at": _utc_iso(self.created_at),
            "classification": self.classification,
            "summary": self.summary,
            "author_id": self.author_id,
            "misleading_reasons": list(self.misleading_reasons),
            "not_misleading_reasons": list(self.not_misleading_reasons),
            "trustworthy_sources": self.trustworthy_sources,
            "is_media_note": self.is_media_note,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Note:
        """Rebuild a note from :meth:`to_dict` output (extra keys are ignored)."""
        created = _parse_time(_need(data, "created_at"), "created_at")
        if created is None:
            raise NotesRecordError("field 'created_at' must not be null")
        return cls(
            note_id=str(_need(data, "note_id")),
            post_id=str(_need(data, "post_id")),
            created_at=created,
            classification=str(_need(data, "classification")),
            summary=str(_need(data, "summary")),
            author_id=str(data.get("author_id", "")),
            misleading_reasons=tuple(data.get("misleading_reasons", ())),
            not_misleading_reasons=tuple(data.get("not_misleading_reasons", ())),
            trustworthy_sources=data.get("trustworthy_sources"),
            is_media_note=data.get("is_media_note"),
        )


@dataclass(frozen=True)
class VoteCounts:
    """How raters answered "Is this note helpful?", counted per note.

    Early ratings answer with the ``helpful``/``notHelpful`` 0/1 pair (no "somewhat"); current
    ones with ``helpfulnessLevel``. Ratings that answered neither count as ``no_answer`` so
    :attr:`total` matches the number of rating rows.
    """

    helpful: int = 0
    somewhat_helpful: int = 0
    not_helpful: int = 0
    no_answer: int = 0

    @property
    def total(self) -> int:
        """Every rating row of the note, answered or not."""
        return self.helpful + self.somewhat_helpful + self.not_helpful + self.no_answer

    @property
    def answered(self) -> int:
        """Ratings that gave a helpfulness answer: the basis for a vote-count quartile."""
        return self.helpful + self.somewhat_helpful + self.not_helpful

    def to_dict(self) -> dict[str, int]:
        """A JSON-ready dict, with the derived total for readers that do not recompute it."""
        return {
            "helpful": self.helpful,
            "somewhat_helpful": self.somewhat_helpful,
            "not_helpful": self.not_helpful,
            "no_answer": self.no_answer,
            "total": self.total,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VoteCounts:
        """Rebuild counts from :meth:`to_dict` output (``total`` is derived, not read)."""
        try:
            return cls(
                helpful=int(data.get("helpful", 0)),
                somewhat_helpful=int(data.get("somewhat_helpful", 0)),
                not_helpful=int(data.get("not_helpful", 0)),
                no_answer=int(data.get("no_answer", 0)),
            )
        except (TypeError, ValueError) as exc:
            raise NotesRecordError(f"vote counts must be integers: {data!r}") from exc


@dataclass(frozen=True)
class Post:
    """A post (tweet) from the user's posts file: the downloads never include post text.

    Attributes:
        post_id: The post's id.
        text: Its text.
        created_at: When it was posted, when the file says.
        lang: Its language code as the file gives it (X's ``lang``: ``en``...), else ``None``.
        has_media: Whether it carries images or video, when the file says, else ``None``.
    """

    post_id: str
    text: str
    created_at: dt.datetime | None = None
    lang: str | None = None
    has_media: bool | None = None


@dataclass(frozen=True)
class LabelledNote:
    """A note with its outcome: the unit of the HelloFresh benchmark.

    Attributes:
        note: The note as written.
        label: ``helpful`` (currently rated helpful) or ``not_helpful`` (currently rated not
            helpful).
        status: The raw status value the label came from (e.g. ``CURRENTLY_RATED_HELPFUL``).
        status_source: The file kind that supplied the status.
        votes: The note's rating counts, kept for the F1-by-vote-count-quartile analysis.
        post_text: The post's text when a posts file supplied it, else ``None``.
        post_date: The post's date when known, UTC.
        post_lang: The post's language code when the posts file gives one.
        post_has_media: Whether the post carries media, when the posts file says.
    """

    note: Note
    label: Label
    status: str
    status_source: StatusSource
    votes: VoteCounts = field(default_factory=VoteCounts)
    post_text: str | None = None
    post_date: dt.datetime | None = None
    post_lang: str | None = None
    post_has_media: bool | None = None

    @property
    def regime(self) -> Regime:
        """Whether a model sees the post with the note, or the note alone."""
        return "with_post" if self.post_text is not None else "note_only"

    def period(self, period: str = "month") -> str:
        """The slice of the note's creation time (see :func:`period_key`)."""
        return period_key(self.note.created_at, period)

    def to_dict(self) -> dict[str, Any]:
        """One flat JSON-ready dict: the note's fields, then label, votes, post and regime."""
        return {
            **self.note.to_dict(),
            "label": self.label,
            "status": self.status,
            "status_source": self.status_source,
            "votes": self.votes.to_dict(),
            "post_text": self.post_text,
            "post_date": _utc_iso(self.post_date),
            "post_lang": self.post_lang,
            "post_has_media": self.post_has_media,
            "regime": self.regime,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LabelledNote:
        """Rebuild a record from :meth:`to_dict` output; ``regime`` is derived, not read."""
        label = _need(data, "label")
        if label not in LABELS:
            raise NotesRecordError(f"field 'label' must be one of {LABELS}, got {label!r}")
        source = _need(data, "status_source")
        if source not in ("noteStatusHistory", "scoredNotes"):
            raise NotesRecordError(f"unknown status_source {source!r}")
        votes = data.get("votes") or {}
        if not isinstance(votes, dict):
            raise NotesRecordError(f"field 'votes' must be an object, got {votes!r}")
        post_text = data.get("post_text")
        post_lang = data.get("post_lang")
        post_media = data.get("post_has_media")
        if post_media is not None and not isinstance(post_media, bool):
            raise NotesRecordError(f"field 'post_has_media' must be true, false or null, got "
                                   f"{post_media!r}")
        return cls(
            note=Note.from_dict(data),
            label=label,
            status=str(_need(data, "status")),
            status_source=source,
            votes=VoteCounts.from_dict(votes),
            post_text=None if post_text is None else str(post_text),
            post_date=_parse_time(data.get("post_date"), "post_date"),
            post_lang=None if post_lang is None else str(post_lang),
            post_has_media=post_media,
        )
