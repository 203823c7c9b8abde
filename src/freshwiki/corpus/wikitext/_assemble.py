"""Stage 4: the item stream becomes paragraphs, with tag positions as sentence offsets.

The stream is cut at blank lines, list boundaries, headings and tables; what removed markup
left behind (stray spaces, empty parentheses, doubled commas) is tidied, and each tag sentinel
becomes an offset into the final text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final

from freshwiki.corpus.wikitext._sentinels import (
    _BR,
    _GAP,
    _SENT,
    _SENT_OPEN,
    _SENT_RE,
    _sentinel_index,
)
from freshwiki.corpus.wikitext._shared import BOILERPLATE_SECTIONS
from freshwiki.corpus.wikitext._stream import _Block, _Heading, _Item, _ListMark, _TagInfo
from freshwiki.records import MaintenanceTag, Paragraph


def _squash(text: str) -> str:
    """Collapse runs of spaces (not newlines) and strip."""
    return _collapse_spaces(text.replace(_GAP, "")).strip()


_WS_RE: Final = re.compile(r"[ \t\r\f\v\xa0\u1680\u2000-\u200a\u202f\u205f\u3000]+")


_ODD_SPACE_RE: Final = re.compile(r"[\t\r\f\v\xa0\u1680\u2000-\u200a\u202f\u205f\u3000]")


_TRAIL_HINT_RE: Final = re.compile(r"[,;:]\s*\)")


_PUNCT_HINT_RE: Final = re.compile(" [,.;:!?)\\]\ue000]")


_ZERO_WIDTH_RE: Final = re.compile("[\u200b\u200e\u200f\ufeff\u00ad\ue002]")


_EMPTY_PARENS_RE: Final = re.compile(rf"\((?:[\s,;:]|{_SENT})*\)")


_PAREN_LEAD_RE: Final = re.compile(r"\(\s*[,;:]+\s*")


_PAREN_TRAIL_RE: Final = re.compile(r"\s*[,;:]+\s*\)")


_SPACE_BEFORE_SENT_RE: Final = re.compile(rf" +(?={_SENT})")


_SPACE_BEFORE_PUNCT_RE: Final = re.compile(rf" +(?={_SENT}*[,.;:!?)\]](?:[\s\ue000]|$))")


_SPACE_AFTER_OPEN_RE: Final = re.compile(r"([(\[]) +")


_BR_SPACES_RE: Final = re.compile("[ ]*\u2028[\u2028 ]*")


_HR_RE: Final = re.compile(r"-{4,}")


_MULTI_SPACE_RE: Final = re.compile(" {2,}")


_REPEATED_COMMA_RE: Final = re.compile(r",(?: ?,)+")


def _keep_sentinels(match: re.Match[str]) -> str:
    return "".join(_SENT_RE.findall(match.group(0)))


def _collapse_spaces(text: str) -> str:
    """``_WS_RE.sub(" ", text)``, without the substitution where it would change nothing.

    Every single space matches ``_WS_RE``, and replacing each by itself cost more than the
    two quick scans that say no run needs changing (true of nine paragraphs in ten).
    """
    if "  " in text or _ODD_SPACE_RE.search(text):
        return _WS_RE.sub(" ", text)
    return text


def _tidy(text: str, br: str) -> str:
    """Whitespace and punctuation left behind by removed markup; sentinels stay put.

    The passes run in this order, each on what the last left. A pass whose pattern cannot
    match is skipped after a cheaper test that is true wherever it can (a substring, or a
    pattern that starts with a rare character instead of a space): most paragraphs need
    few passes, and each full pass over the text took as long as the whole test.
    """
    text = _ZERO_WIDTH_RE.sub("", text)
    text = _collapse_spaces(text)
    if "(" in text:
        text = _EMPTY_PARENS_RE.sub(_keep_sentinels, text)
        text = _PAREN_LEAD_RE.sub("(", text)
        if _TRAIL_HINT_RE.search(text):
            text = _PAREN_TRAIL_RE.sub(")", text)
    if _BR in text:
        text = _BR_SPACES_RE.sub(_BR, text)
    if "  " in text:
        text = _MULTI_SPACE_RE.sub(" ", text)
    if ", ," in text or ",," in text:
        text = _REPEATED_COMMA_RE.sub(",", text)
    if _SENT_OPEN in text:
        text = _SPACE_BEFORE_SENT_RE.sub("", text)
    if _PUNCT_HINT_RE.search(text):
        text = _SPACE_BEFORE_PUNCT_RE.sub("", text)
    if "( " in text or "[ " in text:
        text = _SPACE_AFTER_OPEN_RE.sub(r"\1", text)
    return text.replace(_BR, br)


def _take_sentinels(text: str) -> tuple[str, list[tuple[int, int, bool]]]:
    """Remove sentinels; return the clean, stripped text and (tag, offset, leading) each."""
    if _SENT_OPEN not in text:
        return text.strip(), []
    pieces: list[str] = []
    found: list[tuple[int, int, bool]] = []
    length = 0
    seen_text = False
    pos = 0
    for m in _SENT_RE.finditer(text):
        piece = text[pos:m.start()]
        if not seen_text:
            piece = piece.lstrip()
        if piece:
            seen_text = True
        pieces.append(piece)
        length += len(piece)
        found.append((_sentinel_index(m.group(0)), length, not seen_text))
        pos = m.end()
    tail = text[pos:]
    pieces.append(tail if seen_text else tail.lstrip())
    clean = "".join(pieces).rstrip()
    end = len(clean)
    return clean, [(i, min(off, end), lead) for i, off, lead in found]


class _Assembler:
    """Cuts the rendered stream into paragraphs and anchors tags."""

    def __init__(self, tags: Sequence[_TagInfo], *, keep_lists: bool) -> None:
        self.tags = tags
        self.keep_lists = keep_lists
        self.paragraphs: list[Paragraph] = []
        self.sections: list[tuple[int, str]] = []
        self.skip_level: int | None = None
        self.pending: list[MaintenanceTag] = []
        self.pending_level = 0
        self.pending_path: tuple[str, ...] = ()
        self.line_marks = ""
        self.line_parts: list[str] = []
        self.par_kind: str | None = None
        self.par_lines: list[str] = []

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(title for _, title in self.sections)

    @property
    def level(self) -> int:
        return self.sections[-1][0] if self.sections else 0

    # -- input -------------------------------------------------------------------------------

    def feed(self, item: _Item) -> None:
        if isinstance(item, str):
            if "\n" not in item:
                self.line_parts.append(item)
                return
            lines = item.split("\n")
            for line in lines[:-1]:
                self.line_parts.append(line)
                self.end_line()
            self.line_parts.append(lines[-1])
        elif isinstance(item, _ListMark):
            if "".join(self.line_parts).strip():
                if item.marker == ":":  # "; term : definition"
                    self.line_parts.append(": ")
            else:
                self.line_marks += item.marker
        elif isinstance(item, _Heading):
            self.end_line()
            self.flush()
            self.heading(item)
        else:
            self.end_line()
            self.flush()
            self.block(item)

    def finish(self) -> list[Paragraph]:
        self.end_line()
        self.flush()
        self.flush_pending()
        return self.paragraphs

    # -- lines and paragraphs ----------------------------------------------------------------

    def end_line(self) -> None:
        line = "".join(self.line_parts)
        marks = self.line_marks
        self.line_parts = []
        self.line_marks = ""
        if self.skip_level is not None:
            return
        bare = (_SENT_RE.sub("", line) if _SENT_OPEN in line else line).replace(_GAP, "").strip()
        if not marks:
            if not bare or _HR_RE.fullmatch(bare):
                ids = [_sentinel_index(t) for t in _SENT_RE.findall(line)]
                if not ids:
                    self.flush()
                elif all(self.tags[i].family == "block" for i in ids):
                    self.flush()  # a banner line ends the paragraph above it
                    self.add_pending(self.tags[i].finish("block", None) for i in ids)
                else:
                    self.add_line("text", line)
                return
            self.add_line("text", line)
        elif marks[0] == ":" and self.par_kind not in ("list", "dropped"):
            self.add_line("indent", line)
        elif self.keep_lists:
            if bare or _SENT_OPEN in line:
                self.add_line("list", line)
        else:  # lists not kept: drop the line, and the ":" lines that continue it
            self.flush()
            self.par_kind = "dropped"

    def add_line(self, kind: str, line: str) -> None:
        if self.par_kind != kind:
            self.flush()
            self.par_kind = kind
        self.par_lines.append(line)

    def flush(self) -> None:
        if not self.par_lines:
            self.par_kind = None
            return
        kind, lines = self.par_kind, self.par_lines
        self.par_kind, self.par_lines = None, []
        if kind == "text":
            raw = _tidy(" ".join(lines), "\n")
            out_kind = "text"
        else:
            raw = "\n".join(t for t in (_tidy(line, " ").strip() for line in lines) if t)
            out_kind = "list" if kind == "list" else "text"
        self.emit(raw, out_kind, attach_pending=True)

    def emit(self, raw: str, kind: str, *, attach_pending: bool) -> None:
        text, found = _take_sentinels(raw)
        block: list[MaintenanceTag] = []
        inline: list[MaintenanceTag] = []
        for index, offset, leading in found:
            info = self.tags[index]
            if not text or (leading and info.family == "block"):
                block.append(info.finish("block", None))
            else:
                inline.append(info.finish("inline", offset))
        if not text:
            self.add_pending(block)
            return
        tags = [*block, *inline]
        if attach_pending:
            tags = [*self.pending, *tags]
            self.pending = []
        self.paragraphs.append(Paragraph(self.path, text, tuple(tags), kind))

    def add_pending(self, tags: Iterable[MaintenanceTag]) -> None:
        new = list(tags)
        if not new:
            return
        if not self.pending:
            self.pending_level = self.level
            self.pending_path = self.path
        self.pending.extend(new)

    def flush_pending(self) -> None:
        if self.pending:
            self.paragraphs.append(Paragraph(self.pending_path, "", tuple(self.pending)))
            self.pending = []

    # -- headings and blocks -----------------------------------------------------------------

    def heading(self, item: _Heading) -> None:
        title_raw = _tidy(item.title.replace("\n", " "), " ")
        title, found = _take_sentinels(title_raw)
        while self.sections and self.sections[-1][0] >= item.level:
            self.sections.pop()
        if self.skip_level is not None and item.level > self.skip_level:
            return
        self.skip_level = None
        if self.pending and item.level <= self.pending_level:
            self.flush_pending()
        if title.casefold() in BOILERPLATE_SECTIONS:
            self.flush_pending()
            self.skip_level = item.level
            return
        self.sections.append((item.level, title))
        self.add_pending(self.tags[i].finish("block", None) for i, _, _ in found)

    def block(self, item: _Block) -> None:
        if self.skip_level is not None:
            return
        raw = "\n".join(t for t in (_tidy(line, " ").strip() for line in item.text.split("\n"))
                        if t)
        text, found = _take_sentinels(raw)
        if not text:
            return
        tags = [self.tags[i].finish("inline", off) for i, off, _ in found]
        if not item.infobox:
            tags = [*self.pending, *tags]
            self.pending = []
        self.paragraphs.append(Paragraph(self.path, text, tuple(tags), "table"))
