"""The records of the edit stream: edits, labelled edits, discarded revisions, and JSONL I/O.

A labelled record must be enough, alone, to show the edit to a model and score its answer:
the benchmark that asks "will this edit be kept?" loads these files without the dump. So an
:class:`Edit` carries the article title, section, the paragraph as it was, the deleted and
added text, the comment, time and user type, besides the ids that trace it back to the dump.

Every JSONL line is one object with a ``"record"`` key (``"labelled"`` or ``"discarded"``) so
a reader can tell the two apart and reject a file of something else with a clear message.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final, Literal, cast

from freshwiki.errors import FreshwikiError

__all__ = [
    "DISCARD_REASONS",
    "Discarded",
    "Edit",
    "EditRecordError",
    "Label",
    "LabelledEdit",
    "RecordWriter",
    "UserType",
    "read_jsonl",
    "write_jsonl",
]

Label = Literal["accepted", "rejected"]
UserType = Literal["registered", "ip", "unknown"]
HunkKind = Literal["insert", "delete", "replace"]

DISCARD_REASONS: Final[dict[str, str]] = {
    # the revision is not an edit that can be diffed
    "duplicate_revision": "the same revision id was already read for this page",
    "text_deleted": "the revision's text is deleted or suppressed in the dump",
    "page_creation": "first revision of the page: nothing to diff against",
    "missing_parent": "the parent revision is not in the input",
    "parent_text_deleted": "the parent revision's text is deleted or suppressed",
    "out_of_order_timestamp": "the revision is dated before the revision it follows",
    # the edit is not substantial
    "no_change": "the wikitext is identical to the parent's (a null revision)",
    "markup_only": "only markup changed: the clean paragraphs are the same",
    "url_only": "only URLs changed",
    "too_short": "50 characters or fewer of text changed",
    "several_changes": "more than one separate substantial change in the revision",
    "ambiguous_section": "the section heading is not unique in the edited or a later revision",
    # the label is undecided
    "changed_before_stable": "the paragraph changed (not a revert) before N later edits",
    "changed_after_revert": "after the revert the paragraph changed again within N edits",
    "history_ended": "the history ends before the label could be decided",
}
"""Every reason a revision yields no labelled edit, with what it means."""


class EditRecordError(FreshwikiError):
    """A JSONL line is not an edit record this version can read."""


def _stamp(value: dt.datetime) -> str:
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def _parse_stamp(value: str) -> dt.datetime:
    stamp = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=dt.UTC)


@dataclass(frozen=True)
class Edit:
    """One substantial change to one place (a run of paragraphs) of one section of an article.

    Attributes:
        page_id: The page.
        title: The article title, as the model will be shown it.
        revision_id: The revision that made the edit.
        parent_id: The revision it changed (from the dump, or the preceding revision when
            an old dump gives no ``<parentid>``).
        timestamp: When the edit was saved (UTC).
        comment: The edit summary; ``None`` when empty or deleted.
        user_type: ``registered``, ``ip`` (anonymous) or ``unknown`` (contributor deleted).
        user: Username or IP address, for tracing; ``None`` when deleted.
        section_path: Headings above the paragraph, top level first; empty for the lead.
        paragraph_before: The changed paragraph(s) before the edit, clean text, joined by a
            blank line; empty when the edit inserts new paragraphs.
        paragraph_after: The same place after the edit; empty when the edit deletes it.
        deleted_text: Text the edit removed (word-level diff); separate fragments joined by
            `` … ``.
        added_text: Text the edit added, fragments joined the same way.
        kind: ``insert``, ``delete`` or ``replace`` (of whole paragraphs).
        chars_changed: Characters deleted plus added, URLs excluded: what the 50-character
            threshold is applied to.
        article_paragraphs: Lp, the number of paragraphs of the article after the edit.
        minor: Whether the editor flagged the edit minor.
    """

    page_id: int
    title: str
    revision_id: int
    parent_id: int | None
    timestamp: dt.datetime
    comment: str | None
    user_type: UserType
    user: str | None
    section_path: tuple[str, ...]
    paragraph_before: str
    paragraph_after: str
    deleted_text: str
    added_text: str
    kind: HunkKind
    chars_changed: int
    article_paragraphs: int
    minor: bool = False

    @property
    def section(self) -> str:
        """``Section > Subsection``, or ``(lead)`` for the lead section."""
        return " > ".join(self.section_path) if self.section_path else "(lead)"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; the timestamp as ISO 8601 UTC with ``Z``."""
        return {
            "page_id": self.page_id,
            "title": self.title,
            "revision_id": self.revision_id,
            "parent_id": self.parent_id,
            "timestamp": _stamp(self.timestamp),
            "comment": self.comment,
            "user_type": self.user_type,
            "user": self.user,
            "section_path": list(self.section_path),
            "section": self.section,
            "paragraph_before": self.paragraph_before,
            "paragraph_after": self.paragraph_after,
            "deleted_text": self.deleted_text,
            "added_text": self.added_text,
            "kind": self.kind,
            "chars_changed": self.chars_changed,
            "article_paragraphs": self.article_paragraphs,
            "minor": self.minor,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Edit:
        """Inverse of :meth:`to_dict` (``section`` is derived, so it is ignored)."""
        return cls(
            page_id=int(data["page_id"]),
            title=str(data["title"]),
            revision_id=int(data["revision_id"]),
            parent_id=None if data.get("parent_id") is None else int(data["parent_id"]),
            timestamp=_parse_stamp(str(data["timestamp"])),
            comment=data.get("comment"),
            user_type=cast(UserType, data["user_type"]),
            user=data.get("user"),
            section_path=tuple(str(s) for s in data["section_path"]),
            paragraph_before=str(data["paragraph_before"]),
            paragraph_after=str(data["paragraph_after"]),
            deleted_text=str(data["deleted_text"]),
            added_text=str(data["added_text"]),
            kind=cast(HunkKind, data["kind"]),
            chars_changed=int(data["chars_changed"]),
            article_paragraphs=int(data["article_paragraphs"]),
            minor=bool(data.get("minor", False)),
        )


@dataclass(frozen=True)
class LabelledEdit:
    """An edit with its label and the evidence for it.

    Attributes:
        edit: The edit.
        label: ``accepted`` (the paragraph stayed unchanged for N later edits) or
            ``rejected`` (the edit was reverted and stayed reverted for N later edits).
        later_edits_required: N = 2 + Lp // 10.
        decided_at: The revision after which the label was certain.
        reverting_revision_id: For ``rejected``: the revision that undid the edit.
        signals: For ``rejected``: what showed the revert, among ``identity_revert`` (the
            text equals a revision from before the edit), ``text_undo`` (the edit's added
            words are gone and its deleted words are back) and ``revert_comment`` (the
            reverting edit's summary says so; supporting evidence only).
        undo_fraction: For ``rejected``: the share of the edit's changed words undone by
            the reverting revision (1.0 = completely).
    """

    edit: Edit
    label: Label
    later_edits_required: int
    decided_at: int
    reverting_revision_id: int | None = None
    signals: tuple[str, ...] = ()
    undo_fraction: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the edit's fields flattened, then the label and evidence."""
        return {
            "record": "labelled",
            **self.edit.to_dict(),
            "label": self.label,
            "later_edits_required": self.later_edits_required,
            "decided_at": self.decided_at,
            "reverting_revision_id": self.reverting_revision_id,
            "signals": list(self.signals),
            "undo_fraction": self.undo_fraction,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LabelledEdit:
        """Inverse of :meth:`to_dict`."""
        label = data["label"]
        if label not in ("accepted", "rejected"):
            raise ValueError(f"label must be accepted or rejected, not {label!r}")
        undo = data.get("undo_fraction")
        reverting = data.get("reverting_revision_id")
        return cls(
            edit=Edit.from_dict(data),
            label=cast(Label, label),
            later_edits_required=int(data["later_edits_required"]),
            decided_at=int(data["decided_at"]),
            reverting_revision_id=None if reverting is None else int(reverting),
            signals=tuple(str(s) for s in data.get("signals", ())),
            undo_fraction=None if undo is None else float(undo),
        )


@dataclass(frozen=True)
class Discarded:
    """A revision (or its edit) that yields no label, and why.

    Attributes:
        page_id: The page.
        title: The page title.
        revision_id: The revision.
        reason: A key of :data:`DISCARD_REASONS`.
        detail: Specifics for a person checking the decision (which later revision, ...).
        edit: The edit, when the revision was a substantial edit whose label is undecided.
    """

    page_id: int
    title: str
    revision_id: int
    reason: str
    detail: str = ""
    edit: Edit | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``edit`` nested (or null)."""
        return {
            "record": "discarded",
            "page_id": self.page_id,
            "title": self.title,
            "revision_id": self.revision_id,
            "reason": self.reason,
            "detail": self.detail,
            "edit": None if self.edit is None else self.edit.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Discarded:
        """Inverse of :meth:`to_dict`."""
        edit = data.get("edit")
        return cls(
            page_id=int(data["page_id"]),
            title=str(data["title"]),
            revision_id=int(data["revision_id"]),
            reason=str(data["reason"]),
            detail=str(data.get("detail", "")),
            edit=None if edit is None else Edit.from_dict(edit),
        )


class RecordWriter:
    """Write records to a JSONL file, one JSON object a line (UTF-8, non-ASCII kept).

    Lines go to ``NAME.partial`` and the file takes its final name only when the writer
    closes without an error, so an interrupted run never leaves a half-written dataset that
    looks complete. Use as a context manager.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._partial = self.path.with_name(self.path.name + ".partial")
        self._fh: IO[str] = open(self._partial, "w", encoding="utf-8")  # noqa: SIM115
        self.count = 0

    def write(self, record: LabelledEdit | Discarded) -> None:
        """Append one record."""
        self._fh.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")
        self.count += 1

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self._fh.close()
        if kind is None:
            self._partial.replace(self.path)
        else:
            self._partial.unlink(missing_ok=True)


def write_jsonl(
    records: Iterable[LabelledEdit | Discarded], path: str | os.PathLike[str]
) -> int:
    """Write records as JSONL (atomically, see :class:`RecordWriter`); return how many."""
    with RecordWriter(path) as writer:
        for record in records:
            writer.write(record)
    return writer.count


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[LabelledEdit | Discarded]:
    """Records of a file :func:`write_jsonl` wrote, streamed.

    Raises:
        EditRecordError: Missing file, or a line that is not a labelled or discarded record
            (naming the file and line).
    """
    source = Path(path)
    if not source.is_file():
        raise EditRecordError(
            f"no edit records at {source}",
            hint="make them with `freshwiki edits label PATH...` (or pass --input).",
        )

    def run() -> Iterator[LabelledEdit | Discarded]:
        with open(source, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                    kind = data.get("record") if isinstance(data, dict) else None
                    if kind == "labelled":
                        yield LabelledEdit.from_dict(data)
                    elif kind == "discarded":
                        yield Discarded.from_dict(data)
                    else:
                        raise ValueError('no "record": "labelled" | "discarded" key')
                except (ValueError, KeyError, TypeError) as exc:
                    raise EditRecordError(
                        f"{source}: line {number} is not an edit record ({exc})",
                        hint="pass a labelled.jsonl written by `freshwiki edits label`.",
                    ) from None

    return run()
