"""Paragraph views of revisions, the changes between two of them, and how much was undone.

A revision is seen as its clean paragraphs grouped by section path (:class:`ArticleView`).
Two views are compared section by section: within a section, the paragraph sequences are
aligned with :class:`difflib.SequenceMatcher` and every non-equal run is a :class:`Hunk` (one
edited paragraph is a ``replace`` of one paragraph by one; a new paragraph an ``insert``).
Comparing within a section, not across the article, is what makes "the section of an edit"
well defined, and a heading that occurs twice is recorded as ambiguous instead of guessed.

Undoing is measured on words, not paragraphs, because real reverts are often partial or mixed
with other changes: :meth:`SectionChange.undone_by` is the share of the words the edit added
that are gone, and of the words it removed that are back, in a later version of the section.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final, Literal

from freshwiki.corpus import clean_wikitext
from freshwiki.records import Revision

__all__ = [
    "FRAGMENT_SEPARATOR",
    "ArticleView",
    "Hunk",
    "SectionChange",
    "Substance",
    "changed_text",
    "contains_run",
    "diff_views",
    "judge_substance",
    "only_urls_changed",
    "text_digest",
    "words",
]

FRAGMENT_SEPARATOR: Final = " … "
"""Joins separate deleted (or added) fragments of one edit."""

_TOKEN_RE: Final = re.compile(r"\s+|\w+|[^\w\s]")
_WORD_RE: Final = re.compile(r"\w+")
_URL_RE: Final = re.compile(
    r"(?:\bhttps?:|(?<![^\s\[(]))//[^\s\]|<>\"]+|\bwww\.[^\s\]|<>\"]+", re.IGNORECASE
)
"""http(s) URLs, protocol-relative ``//host`` ones (not ``a//b`` inside a word), ``www.``."""

Section = tuple[str, ...]


def text_digest(text: str) -> str:
    """A digest of the raw wikitext: equal digests are what an identity revert means.

    Computed here rather than taken from ``<sha1>``, because old dumps have none and the API
    gives base-16 where dumps give base-36; one digest for all sources keeps them comparable.
    """
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def words(text: str) -> Counter[str]:
    """The multiset of words of a text, the unit undo fractions count in."""
    return Counter(_WORD_RE.findall(text))


@dataclass(frozen=True)
class ArticleView:
    """One revision as clean paragraphs grouped by section.

    Attributes:
        digest: :func:`text_digest` of the wikitext.
        sections: Paragraph texts of each section path, in page order; a path whose
            heading occurs in several places holds the paragraphs of all of them.
        ambiguous: Section paths whose heading occurs in more than one place.
        paragraph_count: Non-empty paragraphs in the whole article (Lp).
    """

    digest: str
    sections: dict[Section, tuple[str, ...]]
    ambiguous: frozenset[Section]
    paragraph_count: int
    _words: dict[Section, Counter[str]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, revision: Revision) -> ArticleView:
        """Clean a revision's wikitext and group its paragraphs.

        A heading is ambiguous when its path appears in two runs separated by another
        section: wikitext cannot return to a section after a later heading, so that only
        happens when the same heading is written twice.
        """
        if revision.text_format == "plain":
            paragraphs = [p for p in revision.text.split("\n\n") if p.strip()]
            grouped: dict[Section, list[str]] = {(): [p.strip() for p in paragraphs]}
            return cls(text_digest(revision.text), {k: tuple(v) for k, v in grouped.items()},
                       frozenset(), len(paragraphs))
        grouped = {}
        ambiguous: set[Section] = set()
        last: Section | None = None
        count = 0
        for paragraph in clean_wikitext(revision.text, title=revision.page.title):
            text = paragraph.text.strip()
            if not text:
                continue
            path = paragraph.section_path
            if path != last and path in grouped:
                ambiguous.add(path)
            grouped.setdefault(path, []).append(text)
            last = path
            count += 1
        return cls(
            digest=text_digest(revision.text),
            sections={k: tuple(v) for k, v in grouped.items()},
            ambiguous=frozenset(ambiguous),
            paragraph_count=count,
        )

    def section(self, path: Section) -> tuple[str, ...]:
        """The section's paragraphs; empty when the section is absent."""
        return self.sections.get(path, ())

    def section_words(self, path: Section) -> Counter[str]:
        """Words of the section, computed once per view and section."""
        cached = self._words.get(path)
        if cached is None:
            cached = words("\n".join(self.section(path)))
            self._words[path] = cached
        return cached

    @cached_property
    def all_paragraphs(self) -> tuple[str, ...]:
        """Every paragraph of the article, section after section.

        The labeller falls back on these when an edit's section is no longer found by its
        heading (a renamed or re-levelled heading, a reorganised page): the edit's text may
        still be on the page, and an absent section would read as everything removed.
        """
        return tuple(p for paragraphs in self.sections.values() for p in paragraphs)

    @cached_property
    def paragraph_set(self) -> frozenset[str]:
        """The article's paragraphs as a set, to ask quickly whether one is on the page."""
        return frozenset(self.all_paragraphs)

    @cached_property
    def all_words(self) -> Counter[str]:
        """Words of the whole article (for the same fallback), computed once per view."""
        return words("\n".join(self.all_paragraphs))


@dataclass(frozen=True)
class Hunk:
    """One run of changed paragraphs in one section.

    Attributes:
        section_path: The section.
        before: The paragraphs the edit replaced or removed (empty for an insertion).
        after: The paragraphs it put in their place (empty for a deletion).
        ambiguous: The section's heading is not unique in the old or the new revision.
    """

    section_path: Section
    before: tuple[str, ...]
    after: tuple[str, ...]
    ambiguous: bool = False

    @property
    def kind(self) -> Literal["insert", "delete", "replace"]:
        """Whether whole paragraphs were inserted, deleted, or replaced (edited)."""
        if not self.before:
            return "insert"
        if not self.after:
            return "delete"
        return "replace"


def diff_views(old: ArticleView, new: ArticleView) -> list[Hunk]:
    """Every changed run of paragraphs, section by section, in the new page's order."""
    paths = list(new.sections) + [p for p in old.sections if p not in new.sections]
    hunks: list[Hunk] = []
    for path in paths:
        before, after = old.section(path), new.section(path)
        if before == after:
            continue
        ambiguous = path in old.ambiguous or path in new.ambiguous
        matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                hunks.append(Hunk(path, before[i1:i2], after[j1:j2], ambiguous))
    return hunks


def changed_text(before: str, after: str) -> tuple[list[str], list[str]]:
    """Deleted and added fragments between two texts, diffed word by word.

    Tokens keep their whitespace so a fragment reads as it was written. The common head
    and tail are cut off before :class:`difflib.SequenceMatcher` runs: an edit usually
    touches a few words of a long paragraph, and the matcher's cost grows with the
    length of what it is given (whitespace tokens repeat a lot), so this is most of the
    labeller's speed.
    """
    old, new = _TOKEN_RE.findall(before), _TOKEN_RE.findall(after)
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    old, new = old[head : len(old) - tail], new[head : len(new) - tail]
    deleted: list[str] = []
    added: list[str] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("delete", "replace"):
            piece = "".join(old[i1:i2]).strip()
            if piece:
                deleted.append(piece)
        if tag in ("insert", "replace"):
            piece = "".join(new[j1:j2]).strip()
            if piece:
                added.append(piece)
    return deleted, added


Substance = Literal["ok", "too_short", "url_only", "markup_only"]


def judge_substance(before: str, after: str, *, min_chars: int = 50) -> tuple[Substance, int]:
    """Whether a change is substantial, and how many characters of text it changed.

    URLs are removed from both texts before they are diffed (a word diff would cut a
    changed URL into fragments that no longer look like one). The change is ``url_only``
    when nothing is left of it, ``markup_only`` when what is left has no letter or digit
    (stray brackets, quotes, pipes that survive cleaning), and ``too_short`` when
    ``min_chars`` or fewer characters of it remain.
    """
    deleted, added = changed_text(_URL_RE.sub("", before), _URL_RE.sub("", after))
    pieces = (*deleted, *added)
    chars = sum(len(piece) for piece in pieces)
    if not pieces:
        return ("url_only" if before != after else "markup_only"), 0
    if not any(ch.isalnum() for piece in pieces for ch in piece):
        return "markup_only", chars
    if chars <= min_chars:
        return "too_short", chars
    return "ok", chars


def only_urls_changed(old_wikitext: str, new_wikitext: str) -> bool:
    """Whether the raw wikitext changed in nothing but URLs.

    For revisions whose clean paragraphs are equal (cleaning drops bare and bracketed
    URLs), this tells a link edit from other markup. Whitespace around a URL is not
    counted as a change of its own.
    """
    def without_urls(text: str) -> str:
        return " ".join(_URL_RE.sub(" ", text).split())

    return old_wikitext != new_wikitext and without_urls(old_wikitext) == without_urls(
        new_wikitext)


def contains_run(paragraphs: tuple[str, ...], run: tuple[str, ...]) -> bool:
    """Whether ``run`` occurs in ``paragraphs`` contiguously and in order."""
    if not run:
        return True
    size = len(run)
    first = run[0]
    return any(
        paragraphs[i : i + size] == run
        for i, text in enumerate(paragraphs[: len(paragraphs) - size + 1])
        if text == first
    )


@dataclass(frozen=True)
class SectionChange:
    """What an edit did to the words of its section, to measure undoing later.

    Attributes:
        after: Words of the section right after the edit.
        added: Words the edit added to the section.
        removed: Words the edit removed from it.
    """

    after: Counter[str]
    added: Counter[str]
    removed: Counter[str]

    @classmethod
    def between(cls, before: Counter[str], after: Counter[str]) -> SectionChange:
        """The change from one version of a section's words to another."""
        return cls(after=after, added=after - before, removed=before - after)

    @property
    def size(self) -> int:
        """Words added plus words removed."""
        return self.added.total() + self.removed.total()

    def undone_by(self, later: Counter[str]) -> float:
        """Share of the change undone in ``later``: added words gone plus removed words back.

        1.0 means the section's words are as before the edit (as far as the edit touched
        them); 0.0 that nothing the edit did was taken back. An edit that only reorders
        words has no size and is never counted as undone.
        """
        if not self.size:
            return 0.0
        gone = self.after - later
        back = later - self.after
        undone = (self.added & gone).total() + (self.removed & back).total()
        return undone / self.size
