"""Typed records every layer shares: pages and revisions, cleaned paragraphs, passages.

These are plain frozen dataclasses with no behaviour beyond small derived properties, so any
layer can create or consume them without importing another layer.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Contributor:
    """Who made a revision: a registered user, or an IP address for anonymous edits."""

    username: str | None = None
    user_id: int | None = None
    ip: str | None = None

    @property
    def is_anonymous(self) -> bool:
        """Whether the edit came from an IP address rather than an account."""
        return self.ip is not None and self.username is None


@dataclass(frozen=True)
class PageRef:
    """A page's identity, shared by all its revisions."""

    id: int
    title: str
    namespace: int = 0
    redirect: str | None = None
    """Target title when the page is a redirect."""


@dataclass(frozen=True)
class Revision:
    """One revision of one page, as a dump or an export records it."""

    page: PageRef
    id: int
    timestamp: dt.datetime
    text: str
    parent_id: int | None = None
    contributor: Contributor | None = None
    comment: str | None = None
    sha1: str | None = None
    size: int | None = None
    """Size in bytes as the dump states it (of the wikitext, UTF-8)."""
    minor: bool = False
    text_format: str = "wikitext"
    """``wikitext`` (dumps) or ``plain`` (already-clean text: WikiExtractor, JSONL, topics)."""
    dated: bool = True
    """``False`` when the source gave no time: ``timestamp`` is then only the file's
    modification time (kept so revisions still sort), and the passages cut from the revision
    carry no date, so no one is shown a file's mtime as the date of an article."""


@dataclass(frozen=True)
class MaintenanceTag:
    """A Wikipedia maintenance template kept as a structured annotation.

    Attributes:
        name: Canonical name (``Inconsistent``, ``Citation needed``, ``Dubious``...).
        template: The template name exactly as written (``cn``, ``Self-contradictory``...).
        params: Every parameter, named ones by name and positional ones by "1", "2"...
        date: The ``date=`` parameter, when given (e.g. "March 2021").
        reason: ``reason=`` (or ``talk=``/``discuss=`` text) explaining the tag.
        scope: ``inline`` (attached to the sentence before it) or ``block`` (to the paragraph
            or section after it).
        sentence_offset: For inline tags, the character offset in the paragraph text where
            the tag stood (right after the sentence it qualifies); ``None`` for block tags.
    """

    name: str
    template: str
    params: dict[str, str] = field(default_factory=dict)
    date: str | None = None
    reason: str | None = None
    scope: str = "inline"
    sentence_offset: int | None = None


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of clean text with the headings above it."""

    section_path: tuple[str, ...]
    """Headings from the top level down; empty for the lead section."""
    text: str
    tags: tuple[MaintenanceTag, ...] = ()
    kind: str = "text"
    """``text``, ``list`` (bulleted items joined), or ``table`` (rows as text)."""


@dataclass(frozen=True)
class Passage:
    """A retrieval unit: at most ~120 words of one section, with provenance and time.

    Following WikiChat, the text a retriever sees is prefixed with the article title and the
    section path, so a passage is self-describing out of context.
    """

    id: str
    page_id: int
    revision_id: int
    title: str
    section_path: tuple[str, ...]
    text: str
    timestamp: dt.datetime | None
    sentences: tuple[str, ...] = ()
    tags: tuple[MaintenanceTag, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def heading(self) -> str:
        """``Title > Section > Subsection``."""
        return " > ".join((self.title, *self.section_path))

    @property
    def indexed_text(self) -> str:
        """The text retrievers index: heading, then content."""
        return f"{self.heading}\n{self.text}"
