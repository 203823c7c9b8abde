"""The stream stage 3 renders into and stage 4 assembles: text, headings, list marks, blocks.

Kept apart so the parser-based renderer and the regex fallback produce the same items.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from freshwiki.corpus.wikitext._shared import _EXT_DROP
from freshwiki.corpus.wikitext._tags import (
    _DATE_LIKE_RE,
    _LATE_REASON_KEYS,
    _REASON_KEYS,
    _SCOPE_WORDS,
    TagSpec,
)
from freshwiki.records import MaintenanceTag


@dataclass(frozen=True, slots=True)
class _Heading:
    level: int
    title: str


@dataclass(frozen=True, slots=True)
class _ListMark:
    marker: str


@dataclass(frozen=True, slots=True)
class _Block:
    text: str
    infobox: bool


_Item = str | _Heading | _ListMark | _Block


@dataclass
class _TagInfo:
    """A maintenance tag before its scope and offset are known."""

    name: str
    template: str
    params: dict[str, str]
    date: str | None
    reason: str | None
    family: str

    def finish(self, scope: str, offset: int | None) -> MaintenanceTag:
        return MaintenanceTag(self.name, self.template, dict(self.params), self.date,
                              self.reason, scope, offset)


_MAGIC_WORD_RE: Final = re.compile(
    r"__(?:NOTOC|FORCETOC|TOC|NOEDITSECTION|NEWSECTIONLINK|NONEWSECTIONLINK|NOGALLERY|"
    r"HIDDENCAT|INDEX|NOINDEX|STATICREDIRECT|NOTITLECONVERT|NOTC|NOCONTENTCONVERT|NOCC|"
    r"DISAMBIG|EXPECTUNUSEDCATEGORY|NOGLOBAL|EXPECTED_UNCONNECTED_PAGE|ARCHIVEDTALK|"
    r"NOTALK)__"
)


_QUOTES_RE: Final = re.compile(r"'{2,}")


_INTERWIKI_LANG_RE: Final = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]+)*|simple")


_HIDDEN_NAMESPACES: Final = frozenset({"file", "image", "category", "media"})


_DROP_TAG_CONTENT: Final = frozenset({*_EXT_DROP, "math", "style",
                                      "script"})


def _quotes(match: re.Match[str]) -> str:
    n = len(match.group(0))
    if n == 4:
        return "'"
    return "'" * (n - 5) if n > 5 else ""


def _make_tag_info(
    written: str, spec: TagSpec, params: dict[str, str], rendered: Mapping[str, str]
) -> _TagInfo:
    """Pick ``date`` and ``reason`` out of a tag's parameters.

    ``date`` is ``date=``, else a positional argument that looks like a date
    (``{{inconsistent|April 2019}}``). ``reason`` is the first non-empty of ``reason=``,
    ``about=``, ``text=``, the first positional argument (the other article for
    Contradict-other, the talk section for Dubious/Disputed, free text editors put there)
    unless it is a scope word like ``section`` or a date, then ``talk=``, ``discuss=``,
    ``article=``.
    """
    date = rendered.get("date", "").strip() or None
    positional = [rendered[k].strip() for k in sorted(
        (k for k in rendered if k.isdigit()), key=int)]
    if date is None:
        date = next((p for p in positional if _DATE_LIKE_RE.fullmatch(p)), None)
    reason = next((rendered[k].strip() for k in _REASON_KEYS if rendered.get(k, "").strip()),
                  None)
    if reason is None and positional:
        first = positional[0]
        if first and first.casefold() not in _SCOPE_WORDS and not _DATE_LIKE_RE.fullmatch(
                first):
            reason = first
    if reason is None:
        reason = next(
            (rendered[k].strip() for k in _LATE_REASON_KEYS if rendered.get(k, "").strip()),
            None)
    return _TagInfo(spec.name, written, params, date, reason, spec.scope)
