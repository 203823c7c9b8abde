"""The machinery under :mod:`.dump`: the boundary scanner and the per-element lxml parsing.

Private to the readers package: ``dump`` exposes it as revision iterators, ``multistream``
reads one stream of a dump with it, and ``extracted`` shares its timestamp parsing.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Final
from xml.sax.saxutils import unescape as _xml_unescape

from lxml import etree

from freshwiki.corpus.readers._errors import (
    _HINT_CORRUPT,
    _HINT_FORMATS,
    _HINT_SKIP,
    _HINT_TRUNCATED,
    ReadReport,
    _page_fault,
)
from freshwiki.corpus.readers._stream import (
    _check_file,
    _close,
    _compression_of,
    _open_stream,
    _Source,
    _StreamBroken,
)
from freshwiki.records import Contributor, PageRef, Revision

_TITLE_RE: Final = re.compile(rb"<title>([^<]*)</title>")


_ID_RE: Final = re.compile(rb"<id>\s*(\d+)\s*</id>")


_SITEINFO, _HEADER, _REVISION, _PAGE_END, _FAULT, _FATAL, _NOT_A_DUMP = range(7)


_OUTSIDE, _IN_HEADER, _IN_PAGE, _SKIPPING = range(4)


# (kind, byte offset, element bytes or None, problem or None)
_Event = tuple[int, int, bytearray | None, str | None]


class _Scanner:
    """Splits the byte stream into siteinfo, page-header and revision elements.

    It yields events and never parses; structure faults (an element not closed before the
    next boundary) become ``_FAULT`` events, after which it skips to the next page. The
    reader sets ``skip_page`` to pass over the rest of the current page (filtered or faulty).
    """

    def __init__(self, src: _Source, *, fragment: bool) -> None:
        self.src = src
        self.fragment = fragment
        self.skip_page = False

    def events(self) -> Iterator[_Event]:
        src = self.src
        state = _OUTSIDE
        pos = page_start = 0
        root_seen = root_closed = False
        pages_seen = 0
        src.fill(0)
        if not self.fragment:
            head = bytes(src.buf[:64]).lstrip(b"\xef\xbb\xbf \t\r\n")
            if src.eof and not head:
                what = "is empty (0 bytes)" if src.end == 0 else "contains only whitespace"
                yield _NOT_A_DUMP, 0, None, f"{what}: not a MediaWiki XML dump"
                return
            if not head.startswith(b"<"):
                yield _NOT_A_DUMP, 0, None, f"is not XML (it starts with {head[:20]!r})"
                return
        while True:
            if self.skip_page:
                self.skip_page = False
                if state == _IN_PAGE:
                    state = _SKIPPING
            found = src.find_marker(pos, page_start if state == _IN_HEADER else pos)
            if found is None:
                if state != _OUTSIDE:
                    start_bytes = (
                        src.take(page_start, page_start + 4096) if state == _IN_HEADER else None
                    )
                    yield _FATAL, page_start, start_bytes, (
                        "the data ends inside a page (the file is truncated)"
                    )
                elif self.fragment:
                    pass
                elif not root_seen and not pages_seen:
                    yield _NOT_A_DUMP, 0, None, "contains no MediaWiki XML (<mediawiki> or <page>)"
                elif root_seen and not root_closed:
                    yield _FATAL, src.end, None, (
                        "the data ends before </mediawiki> (the file is truncated)"
                    )
                return
            start, end, closing, name = found
            if state == _OUTSIDE:
                if name == b"page" and not closing:
                    state, page_start, pos = _IN_HEADER, start, end
                    pages_seen += 1
                elif name == b"mediawiki":
                    if closing:
                        root_closed, pos = True, end
                    else:
                        gt = src.find(b">", end, start)
                        if gt is None:
                            yield _FATAL, start, None, "the data ends inside <mediawiki>"
                            return
                        root_seen, pos = True, gt + 1
                        root_closed = src.take(gt - 1, gt) == b"/"  # <mediawiki ... />
                elif name == b"siteinfo" and not closing:
                    close = src.find(b"</siteinfo>", end, start)
                    if close is None:
                        yield _FATAL, start, None, "the data ends inside <siteinfo>"
                        return
                    pos = close + len(b"</siteinfo>")
                    yield _SITEINFO, start, src.take(start, pos), None
                else:
                    tag = f"<{'/' if closing else ''}{name.decode()}>"
                    yield _FAULT, start, None, f"unexpected {tag} outside any page"
                    pos = end
            elif state == _IN_HEADER:
                if name == b"revision" and not closing:
                    state, pos = _IN_PAGE, start
                    yield _HEADER, page_start, src.take(page_start, start) + b"</page>", None
                elif name == b"page" and closing:
                    state, pos = _OUTSIDE, end
                    yield _HEADER, page_start, src.take(page_start, end), None
                    self.skip_page = False
                    yield _PAGE_END, end, None, None
                else:
                    tag = f"<{'/' if closing else ''}{name.decode()}>"
                    start_bytes = src.take(page_start, min(start, page_start + 4096))
                    state, pos = _OUTSIDE, start
                    yield _FAULT, page_start, start_bytes, (
                        f"malformed page: no </page> before {tag} at byte {start:,}"
                    )
            elif state == _IN_PAGE:
                if name == b"revision" and not closing:
                    nxt = src.find_marker(end, start)
                    if nxt is None:
                        yield _FATAL, start, None, (
                            "the data ends inside a revision (the file is truncated)"
                        )
                        return
                    s2, e2, c2, n2 = nxt
                    if n2 == b"revision" and c2:
                        pos = e2
                        yield _REVISION, start, src.take(start, e2), None
                    else:
                        tag = f"<{'/' if c2 else ''}{n2.decode()}>"
                        state, pos = _SKIPPING, s2
                        yield _FAULT, start, None, (
                            f"malformed revision: no </revision> before {tag} at byte {s2:,}"
                        )
                elif name == b"page" and closing:
                    state, pos = _OUTSIDE, end
                    yield _PAGE_END, end, None, None
                elif name == b"revision":  # a stray </revision>
                    state, pos = _SKIPPING, end
                    yield _FAULT, start, None, "malformed page: unexpected </revision>"
                else:  # <page>, <mediawiki>, <siteinfo>: this page was never closed
                    tag = f"<{'/' if closing else ''}{name.decode()}>"
                    state, pos = _OUTSIDE, start
                    yield _FAULT, start, None, f"malformed page: no </page> before {tag}"
                    yield _PAGE_END, start, None, None
            else:  # _SKIPPING: the reader does not want the rest of this page
                if name == b"page" and closing:
                    state, pos = _OUTSIDE, end
                    yield _PAGE_END, end, None, None
                elif name == b"page" or name in (b"mediawiki", b"siteinfo"):
                    state, pos = _OUTSIDE, start
                    yield _PAGE_END, start, None, None
                else:
                    pos = end


class _BadElement(Exception):
    """One page header or revision could not be parsed (a page-level fault)."""

    def __init__(self, problem: str, offset: int) -> None:
        super().__init__(problem)
        self.problem = problem
        self.offset = offset


def _new_parser() -> Any:
    # resolve_entities=False: dumps declare none, and a stray DTD must not expand anything.
    return etree.XMLParser(
        huge_tree=True, resolve_entities=False, no_network=True,
        remove_comments=True, remove_pis=True,
    )


def _parse(chunk: bytearray, offset: int, parser: Any, what: str) -> Any:
    try:
        return etree.fromstring(chunk, parser)
    except etree.XMLSyntaxError as exc:
        line, col = exc.position if exc.position else (1, 1)
        line_start = 0
        for _ in range(max(line - 1, 0)):  # lxml gives line/column; turn them into a byte
            nl = chunk.find(b"\n", line_start)
            if nl < 0:
                break
            line_start = nl + 1
        at = offset + min(line_start + max(col - 1, 0), len(chunk))
        raise _BadElement(f"{what} is not well-formed XML: {exc.msg}", at) from None


def _local(tag: str) -> str:
    return tag.rpartition("}")[2] if tag[:1] == "{" else tag


def _namespace_names(chunk: bytearray, parser: Any) -> dict[str, int]:
    """Namespace prefix → number from ``<siteinfo>``, for dumps without ``<ns>``."""
    names: dict[str, int] = {}
    try:
        root = etree.fromstring(chunk, parser)
    except etree.XMLSyntaxError:
        return names  # only needed for pre-0.6 dumps; a broken siteinfo loses nothing else
    for el in root.iter():
        if isinstance(el.tag, str) and _local(el.tag) == "namespace" and el.text:
            try:
                names[el.text.strip()] = int(el.get("key", ""))
            except ValueError:
                continue
    return names


def _parse_header(
    chunk: bytearray, offset: int, parser: Any, ns_names: dict[str, int]
) -> PageRef:
    root = _parse(chunk, offset, parser, "page header")
    title: str | None = None
    page_id: int | None = None
    ns: int | None = None
    redirect: str | None = None
    try:
        for el in root:
            tag = _local(el.tag)
            if tag == "title":
                title = el.text or ""
            elif tag == "id":
                page_id = int(el.text)
            elif tag == "ns":
                ns = int(el.text)
            elif tag == "redirect":
                redirect = el.get("title") or None
    except (TypeError, ValueError) as exc:
        raise _BadElement(f"page header has a bad number ({exc})", offset) from None
    if title is None or page_id is None:
        raise _BadElement("page header has no <title> or no <id>", offset)
    if ns is None:
        prefix, colon, _ = title.partition(":")
        ns = ns_names.get(prefix.replace("_", " "), 0) if colon else 0
    return PageRef(id=page_id, title=title, namespace=ns, redirect=redirect)


def _parse_timestamp(text: str) -> dt.datetime:
    stamp = dt.datetime.fromisoformat(text.strip())
    if stamp.tzinfo is None:
        return stamp.replace(tzinfo=dt.UTC)
    return stamp.astimezone(dt.UTC)


def _parse_revision(chunk: bytearray, offset: int, parser: Any, page: PageRef) -> Revision:
    root = _parse(chunk, offset, parser, "revision")
    rev_id: int | None = None
    parent_id: int | None = None
    stamp: dt.datetime | None = None
    contributor: Contributor | None = None
    comment: str | None = None
    sha1: str | None = None
    size: int | None = None
    minor = False
    text = ""
    try:
        for el in root:
            tag = _local(el.tag)
            if tag == "id":
                rev_id = int(el.text)
            elif tag == "timestamp":
                stamp = _parse_timestamp(el.text or "")  # <timestamp/>: None, not ""
            elif tag == "contributor":
                if el.get("deleted") is None:
                    contributor = _parse_contributor(el)
            elif tag == "text":
                text = el.text or ""
                nbytes = el.get("bytes")
                if nbytes is not None and (n := int(nbytes)) >= 0:
                    size = n
            elif tag == "parentid":
                parent_id = int(el.text)
            elif tag == "comment":
                comment = (el.text or None) if el.get("deleted") is None else None
            elif tag == "sha1":
                sha1 = (el.text or "").strip() or None
            elif tag == "minor":
                minor = True
    except (TypeError, ValueError, OverflowError) as exc:  # Overflow: past year 9999 in UTC
        raise _BadElement(f"revision has a bad number or timestamp ({exc})", offset) from None
    if rev_id is None or stamp is None:
        raise _BadElement("revision has no <id> or no <timestamp>", offset)
    return Revision(
        page=page, id=rev_id, timestamp=stamp, text=text, parent_id=parent_id,
        contributor=contributor, comment=comment, sha1=sha1, size=size, minor=minor,
    )


def _parse_contributor(el: Any) -> Contributor | None:
    username: str | None = None
    user_id: int | None = None
    ip: str | None = None
    for child in el:
        tag = _local(child.tag)
        if tag == "username":
            username = child.text or ""
        elif tag == "id":
            user_id = int(child.text)
        elif tag == "ip":
            ip = child.text or None
    if username is None and user_id is None and ip is None:
        return None
    return Contributor(username=username, user_id=user_id, ip=ip)


@dataclass(frozen=True)
class _PageEnd:
    """Internal marker between pages, so grouping readers know where a page stops."""

    page: PageRef
    complete: bool


def _read_dump(
    src: _Source,
    *,
    namespaces: AbstractSet[int] | None,
    skip_bad_pages: bool,
    report: ReadReport | None,
    latest_only: bool = False,
    fragment: bool = False,
) -> Iterator[Revision | _PageEnd]:
    """Yield revisions in dump order, with a :class:`_PageEnd` after each selected page."""
    scanner = _Scanner(src, fragment=fragment)
    events = scanner.events()
    parser = _new_parser()
    ns_names: dict[str, int] = {}
    page: PageRef | None = None
    wanted = aborted = False
    yielded = 0
    last: tuple[int, bytearray] | None = None

    def fault(error: str, offset: int | None, *, fatal: bool, head: bytearray | None = None,
              hint: str = _HINT_SKIP) -> None:
        """Record a fault; raise unless it is a page fault and the caller skips those."""
        page_id, title = (page.id, page.title) if page is not None else _identity(head)
        info = src.fault(error, offset, page_id=page_id, title=title, revisions_yielded=yielded)
        _page_fault(info, report, skip=skip_bad_pages and not fatal, hint=hint)

    while True:
        try:
            kind, offset, data, problem = next(events)
        except StopIteration:
            return
        except _StreamBroken as exc:
            fault(exc.problem, src.end, fatal=True,
                  hint=_HINT_TRUNCATED if exc.truncated else _HINT_CORRUPT)
            return  # unreachable: fatal faults raise
        if kind == _REVISION:
            assert data is not None and page is not None
            if latest_only:
                last = (offset, data)
                continue
            try:
                revision = _parse_revision(data, offset, parser, page)
            except _BadElement as exc:
                fault(exc.problem, exc.offset, fatal=False)
                aborted, scanner.skip_page = True, True
                continue
            yielded += 1
            if report is not None:
                report.revisions += 1
            yield revision
        elif kind == _HEADER:
            assert data is not None
            yielded, last, aborted = 0, None, False
            try:
                page = _parse_header(data, offset, parser, ns_names)
            except _BadElement as exc:
                page = None
                fault(exc.problem, exc.offset, fatal=False, head=data)
                wanted, scanner.skip_page = False, True
                continue
            wanted = namespaces is None or page.namespace in namespaces
            if not wanted:
                scanner.skip_page = True
                if report is not None:
                    report.pages_filtered += 1
        elif kind == _PAGE_END:
            if page is not None and wanted and not aborted:
                if last is not None:
                    try:
                        revision = _parse_revision(last[1], last[0], parser, page)
                    except _BadElement as exc:
                        fault(exc.problem, exc.offset, fatal=False)
                        page = None
                        continue
                    if report is not None:
                        report.revisions += 1
                    yield revision
                if report is not None:
                    report.pages += 1
                yield _PageEnd(page, complete=True)
            elif page is not None and wanted and aborted:
                yield _PageEnd(page, complete=False)
            page, last, yielded = None, None, 0
        elif kind == _FAULT:
            assert problem is not None
            fault(problem, offset, fatal=False, head=data)
            if page is not None:
                aborted = True
        elif kind in (_FATAL, _NOT_A_DUMP):
            assert problem is not None
            hint = _HINT_TRUNCATED if kind == _FATAL else _HINT_FORMATS
            fault(problem, offset, fatal=True, head=data, hint=hint)
        elif kind == _SITEINFO:
            assert data is not None
            ns_names = _namespace_names(data, parser)


def _identity(head: bytearray | None) -> tuple[int | None, str | None]:
    """Best-effort page id and title from raw page bytes that did not parse."""
    if not head:
        return None, None
    m_title = _TITLE_RE.search(head)
    m_id = _ID_RE.search(head)
    title = (
        _xml_unescape(m_title[1].decode("utf-8", "replace"), {"&quot;": '"', "&#039;": "'"})
        if m_title else None
    )
    return (int(m_id[1]) if m_id else None), title


def _dump_events(
    path: str | os.PathLike[str],
    *,
    namespaces: AbstractSet[int] | None,
    skip_bad_pages: bool,
    report: ReadReport | None,
    latest_only: bool = False,
) -> Iterator[Revision | _PageEnd]:
    checked = _check_file(path)
    compression = _compression_of(checked)

    def run() -> Iterator[Revision | _PageEnd]:
        stream, raw = _open_stream(checked, compression)
        try:
            if report is not None:
                report.files += 1
            src = _Source(
                checked, stream, raw, report=report,
                offset_in="file" if raw is None else "decompressed XML",
            )
            yield from _read_dump(
                src, namespaces=namespaces, skip_bad_pages=skip_bad_pages, report=report,
                latest_only=latest_only,
            )
        finally:
            _close(stream, raw)

    return run()
