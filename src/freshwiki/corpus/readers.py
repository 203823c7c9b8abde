"""Streaming readers: MediaWiki XML dumps and extracted-text corpora → :class:`Revision`.

Sources
    * MediaWiki XML exports, ``pages-articles`` (one revision per page) and
      ``pages-meta-history`` (every revision), schema 0.3 to 0.11, plain or compressed with
      bz2 (multistream included), gzip or xz: :func:`iter_revisions`, :func:`iter_pages`,
      :func:`iter_latest`; random access into ``-multistream`` dumps with
      :class:`MultistreamIndex` and :func:`read_page_at`.
    * Already-clean text: WikiExtractor ``--json`` output (folders of ``AA/wiki_00``),
      plain JSONL ``{title, text, timestamp?}`` (:func:`iter_jsonl`) and ``{title: text}``
      topics files (:func:`iter_topics`).
    * :func:`read_source` detects which of these a path is and reads it.

Design: scan bytes for page and revision boundaries, parse each element alone
    Dumps are tens of GB and a bad byte must not cost the rest of the file, so the reader
    does not hand the whole stream to one XML parser. It reads the decompressed stream in
    1 MiB chunks and finds element boundaries with one precompiled regular expression for
    ``<page``, ``</page>``, ``<revision``, ``</revision>``, ``<siteinfo`` and
    ``<mediawiki``. That is sound for MediaWiki exports because every ``<`` inside text,
    titles and comments is escaped as ``&lt;``: a literal ``<`` only ever starts markup, and
    markup inside a page is a small fixed vocabulary. Each page header (``<page>`` up to its
    first ``<revision>``) and each ``<revision>`` is then parsed on its own with
    ``lxml.etree.fromstring`` (``huge_tree=True``, so a 50 MB revision parses).

    This gives, compared with one ``iterparse`` over the stream:

    * Memory: O(one revision), not O(one page): a page's history is never held, and the
      buffer only keeps bytes from the start of the element being read. ``iter_latest``
      keeps the last revision's raw bytes and parses only that one at ``</page>``.
    * Fault isolation: a malformed or mis-encoded element fails alone. The scanner also
      notices structure faults (a ``<page>`` with no ``</page>`` before the next ``<page>``,
      a ``<revision>`` left open), so the next page is found and read. One ``iterparse``
      stops for good at the first error.
    * Exact offsets: every element's byte offset in the decompressed stream is known, so
      every error names it.
    * Speed: the regex runs over text in C looking for ``<`` (text has none), lxml parses
      small documents, and there are no namespace lookups: a page parsed without its
      ``<mediawiki xmlns=...>`` root has plain tag names, whatever the schema version.
      Namespace-filtered pages are skipped at the scanner without being parsed.

Faults
    Every error is a :class:`DumpReadError` naming the file, the page (id, title) and byte
    offset where known, and saying what to do. Every revision before the fault has already
    been yielded. With ``skip_bad_pages=True`` a page with a malformed or mis-encoded
    element is skipped from that element on, recorded in the :class:`ReadReport`, and
    reading goes on. Truncated or corrupt compressed data and a truncated document end the
    read with an error even then (recorded as :attr:`ReadReport.failure`): nothing after
    that point can be trusted, and an incomplete download must never look like a small dump.
    For the same reason a 0-byte file is an error (it is what a failed download leaves),
    while a well-formed ``<mediawiki>`` with no pages simply yields nothing. A missing path
    fails when the reader is called, before the first ``next()``.

Data conventions (what the dumps say, mapped onto :mod:`freshwiki.records`)
    * Timestamps are timezone-aware UTC datetimes.
    * ``<text deleted="deleted"/>`` (suppressed revision) gives ``text=""`` and, since the
      dump then says ``bytes="-1"``, ``size=None``; a blanked page gives ``""`` and ``0``.
      ``<contributor deleted="deleted"/>`` gives ``contributor=None``; a deleted or empty
      comment gives ``comment=None``; an empty ``<sha1/>`` gives ``sha1=None``.
    * ``PageRef.redirect`` comes from ``<redirect title=...>``. Schema 0.3 dumps mark
      redirects with a bare ``<redirect/>``; the target is then unknown and left ``None``.
    * Dumps before schema 0.6 have no ``<ns>``: the namespace is derived from the title's
      prefix using the ``<siteinfo>`` namespace names.
    * ``namespaces`` defaults to ``{0}`` (articles). Talk and user pages, as in the
      simplewiki history sample, need ``namespaces=None`` (all) or their numbers.
"""

from __future__ import annotations

import bz2
import datetime as dt
import gzip
import hashlib
import io
import json
import lzma
import os
import re
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final, Literal, cast
from xml.sax.saxutils import unescape as _xml_unescape

from lxml import etree

from freshwiki.errors import FreshwikiError
from freshwiki.records import Contributor, PageRef, Revision

__all__ = [
    "ARTICLE_NAMESPACES",
    "SYNTHETIC_ID_BASE",
    "DumpReadError",
    "IndexEntry",
    "MultistreamIndex",
    "PageFault",
    "ReadReport",
    "SourceFormat",
    "detect_format",
    "is_synthetic_id",
    "iter_jsonl",
    "iter_latest",
    "iter_pages",
    "iter_revisions",
    "iter_topics",
    "read_page_at",
    "read_source",
    "synthetic_id",
]

ARTICLE_NAMESPACES: Final[frozenset[int]] = frozenset({0})
"""The default namespace filter: main-namespace pages (articles and their redirects)."""

SYNTHETIC_ID_BASE: Final = 1 << 62
"""Synthesized ids are in ``[2**62, 2**63)``: above any real MediaWiki id, within int64."""

SourceFormat = Literal["mediawiki-xml", "jsonl", "topics-json", "directory"]

_CHUNK = 1 << 20  # bytes per read; tests shrink it to split tags across reads
_DECODED_TEXT: Final = "decoded text"
_SNIFF: Final = 1 << 16

_HINT_SKIP: Final = (
    "re-download the file if it should be intact; or pass skip_bad_pages=True "
    "(--skip-bad-pages) to skip broken pages, each recorded in the ReadReport, and continue"
)
_HINT_TRUNCATED: Final = (
    "the file is incomplete (an interrupted download or copy): re-download it and check it "
    "against the dump's sha1sums/md5sums file. Every page before this point was read; "
    "skip_bad_pages cannot continue past missing data"
)
_HINT_CORRUPT: Final = (
    "the compressed data is damaged: re-download the file and check it against the dump's "
    "sha1sums/md5sums file"
)
_HINT_FORMATS: Final = (
    "pass a MediaWiki XML export (.xml, .xml.bz2, .xml.gz, .xml.xz), a JSONL file or a "
    "WikiExtractor --json output folder, or a {title: text} .json topics file"
)


# --------------------------------------------------------------------------- reports, errors


@dataclass(frozen=True)
class PageFault:
    """One page that could not be read: why, and where, as precisely as known.

    Attributes:
        path: The file.
        error: What was wrong, in words.
        page_id: The page's id, when its header could be read.
        title: The page's title, when its header could be read.
        offset: Byte offset of the faulty element, in the stream ``offset_in`` names.
        offset_in: Which byte stream ``offset`` counts in: ``"file"`` (plain files),
            ``"decompressed XML"``, ``"bz2 stream at byte N"`` (multistream reads), or
            ``"decoded text"`` (JSON objects, counted in characters).
        compressed_offset: For compressed files, how far into the file the decompressor had
            read when the fault was met. Exact for truncation (it is where the file ends);
            otherwise the place to look, since bz2 decompresses whole ~900 kB blocks.
        revisions_yielded: Revisions of this page already yielded before the fault.
    """

    path: str
    error: str
    page_id: int | None = None
    title: str | None = None
    offset: int | None = None
    offset_in: str = "file"
    compressed_offset: int | None = None
    revisions_yielded: int = 0

    def __str__(self) -> str:
        parts = [f"{self.path}: {self.error}"]
        if self.page_id is not None or self.title is not None:
            ident = " ".join(
                x for x in (
                    f"id {self.page_id}" if self.page_id is not None else "",
                    repr(self.title) if self.title is not None else "",
                ) if x
            )
            parts.append(f"page {ident}")
        if self.offset is not None:
            unit = "character" if self.offset_in == _DECODED_TEXT else "byte"
            parts.append(f"at {unit} {self.offset:,} of the {self.offset_in}")
        if self.compressed_offset is not None:
            parts.append(f"compressed input read to byte ~{self.compressed_offset:,}")
        if self.revisions_yielded:
            parts.append(f"{self.revisions_yielded} earlier revision(s) of it were yielded")
        return "; ".join(parts)


@dataclass
class ReadReport:
    """Running counts of one read, filled in as it goes (so they are valid after an error).

    Pass one instance to a reader (or to several, e.g. across the files of a folder) and
    inspect it afterwards.

    Attributes:
        files: Files opened.
        pages: Pages read completely and yielded (in the selected namespaces).
        revisions: Revisions yielded.
        pages_filtered: Pages passed over because of the namespace filter (not faults).
        bytes_read: Decompressed bytes consumed.
        compressed_bytes_read: Bytes of compressed files consumed.
        skipped: Pages skipped with ``skip_bad_pages=True``, with the reason.
        failure: The fault that ended the read with an error, if one did.
    """

    files: int = 0
    pages: int = 0
    revisions: int = 0
    pages_filtered: int = 0
    bytes_read: int = 0
    compressed_bytes_read: int = 0
    skipped: list[PageFault] = field(default_factory=list)
    failure: PageFault | None = None

    @property
    def pages_skipped(self) -> int:
        """How many pages were skipped as faulty."""
        return len(self.skipped)

    def summary(self) -> str:
        """One line for logs and the CLI."""
        text = (
            f"{self.pages:,} pages, {self.revisions:,} revisions, "
            f"{self.bytes_read / 1e6:,.1f} MB read from {self.files} file(s); "
            f"{self.pages_filtered:,} pages in other namespaces; "
            f"{self.pages_skipped} skipped as faulty"
        )
        if self.skipped:
            names = [
                s.title or (f"id {s.page_id}" if s.page_id is not None else f"byte {s.offset}")
                for s in self.skipped[:3]
            ]
            text += f" ({', '.join(names)}{', ...' if self.pages_skipped > 3 else ''})"
        if self.failure is not None:
            text += f"; stopped: {self.failure}"
        return text


class DumpReadError(FreshwikiError):
    """A source could not be read: missing, unknown format, malformed, truncated.

    The message names the file and, where known, the page and byte offset; ``fault``
    carries the same facts as fields.
    """

    def __init__(self, fault: PageFault, *, hint: str | None = None) -> None:
        super().__init__(str(fault), hint=hint)
        self.fault = fault

    @property
    def path(self) -> str:
        """The file that could not be read."""
        return self.fault.path


def _fail(path: Path | str, error: str, hint: str) -> DumpReadError:
    return DumpReadError(PageFault(path=str(path), error=error), hint=hint)


def _page_fault(
    info: PageFault, report: ReadReport | None, *, skip: bool, hint: str = _HINT_SKIP
) -> None:
    """Record a fault in ``report``: skipped if ``skip``, else the failure, raised.

    Every reader handles a bad page this one way, so a skip is never silent and a stop
    always leaves :attr:`ReadReport.failure` set.
    """
    if not skip:
        if report is not None:
            report.failure = info
        raise DumpReadError(info, hint=hint)
    if report is not None:
        report.skipped.append(info)


def _count_page(report: ReadReport | None) -> None:
    """One page of one revision (extracted-text sources) read and yielded."""
    if report is not None:
        report.pages += 1
        report.revisions += 1


def _check_file(path: str | os.PathLike[str]) -> Path:
    """Fail now, at call time, not at the first ``next()``: the caller named a bad path."""
    p = Path(path)
    if not p.exists():
        raise _fail(p, "no such file or directory", "check the path")
    if p.is_dir():
        raise _fail(
            p, "is a directory, not a dump file",
            "pass one dump file here, or the folder to read_source() to read every file in it",
        )
    if not os.access(p, os.R_OK):
        raise _fail(p, "is not readable (permission denied)", "check the file's permissions")
    return p


# --------------------------------------------------------------------------- decompression


Compression = Literal["bz2", "gzip", "xz", "none"]

_MAGIC: Final[tuple[tuple[bytes, Compression], ...]] = (
    (b"BZh", "bz2"),
    (b"\x1f\x8b", "gzip"),
    (b"\xfd7zXZ\x00", "xz"),
)
_UNSUPPORTED: Final[tuple[tuple[bytes, str, str], ...]] = (
    (b"7z\xbc\xaf\x27\x1c", "7z", "7z e -so"),
    (b"\x28\xb5\x2f\xfd", "zstd", "zstd -dc"),
)


def _compression_of(path: Path) -> Compression:
    """Decide from the first bytes, not the name: a renamed or misnamed file still reads."""
    with open(path, "rb") as fh:
        head = fh.read(8)
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    for magic, name, command in _UNSUPPORTED:
        if head.startswith(magic):
            raise _fail(
                path, f"is {name}-compressed, which this reader does not decompress",
                f"recompress it as bz2 (`{command} {path.name} | bzip2 > {path.stem}.bz2`) "
                "or decompress it to .xml",
            )
    return "none"


class _StreamBroken(Exception):
    """The decompressor failed: the data ends early or is damaged. Fatal for the file."""

    def __init__(self, problem: str, *, truncated: bool) -> None:
        super().__init__(problem)
        self.problem = problem
        self.truncated = truncated


class _Source:
    """The decompressed bytes of one input, in a sliding buffer addressed by absolute offset.

    ``buf[0]`` is byte ``base`` of the decompressed stream. Bytes before ``keep`` (the start
    of the element being read) are dropped on each refill, which is what keeps memory flat.
    """

    def __init__(
        self,
        path: Path,
        stream: IO[bytes],
        raw: IO[bytes] | None,
        *,
        offset_in: str,
        report: ReadReport | None,
    ) -> None:
        self.path = path
        self.stream = stream
        self.raw = raw
        self.offset_in = offset_in
        self.report = report
        self.buf = bytearray()
        self.base = 0
        self.eof = False
        self._raw_seen = 0

    @property
    def end(self) -> int:
        return self.base + len(self.buf)

    def compressed_pos(self) -> int | None:
        return self.raw.tell() if self.raw is not None else None

    def fill(self, keep: int) -> None:
        if keep > self.base:
            del self.buf[: keep - self.base]
            self.base = keep
        try:
            chunk = self.stream.read(_CHUNK)
        except EOFError as exc:  # bz2/gzip/xz: input ended before the end-of-stream marker
            raise _StreamBroken(f"compressed data ends early ({exc})", truncated=True) from exc
        except (OSError, lzma.LZMAError) as exc:
            raise _StreamBroken(f"compressed data is corrupt ({exc})", truncated=False) from exc
        if not chunk:
            self.eof = True
        self.buf += chunk
        if self.report is not None:
            self.report.bytes_read += len(chunk)
            pos = self.compressed_pos()
            if pos is not None:
                self.report.compressed_bytes_read += pos - self._raw_seen
                self._raw_seen = pos

    def find_marker(self, pos: int, keep: int) -> tuple[int, int, bool, bytes] | None:
        """The next boundary tag at or after ``pos``: (start, end, closing, name)."""
        while True:
            m = _MARKER.search(self.buf, pos - self.base)
            if m is not None:
                start, after_name = m.start() + self.base, m.start(3) + self.base
                if m.start(1) == m.end(1):  # an opening tag: its end is the end of its name
                    return start, after_name, False, m[2]
                if m[3] == b">":
                    return start, after_name + 1, True, m[2]
                gt = self.find(b">", after_name, min(keep, start))  # "</page >": never seen
                return start, (after_name if gt is None else gt + 1), True, m[2]
            if self.eof:
                return None
            pos = max(pos, self.end - _LOOKBACK)
            self.fill(min(keep, pos))

    def find(self, needle: bytes, pos: int, keep: int) -> int | None:
        """Absolute offset of the next ``needle`` at or after ``pos``."""
        while True:
            i = self.buf.find(needle, pos - self.base)
            if i >= 0:
                return i + self.base
            if self.eof:
                return None
            pos = max(pos, self.end - len(needle) + 1)
            self.fill(min(keep, pos))

    def take(self, start: int, end: int) -> bytearray:
        return self.buf[start - self.base : end - self.base]

    def fault(self, error: str, offset: int | None, **kw: Any) -> PageFault:
        return PageFault(
            path=str(self.path), error=error, offset=offset, offset_in=self.offset_in,
            compressed_offset=self.compressed_pos(), **kw,
        )


def _open_stream(
    path: Path, compression: Compression, *, buffered: bool = False
) -> tuple[IO[bytes], IO[bytes] | None]:
    """(decompressed stream, raw file or None for plain files).

    Plain files are unbuffered for the dump scanner (it reads 1 MiB at a time itself) and
    buffered for line readers.
    """
    if compression == "none":
        return open(path, "rb", buffering=-1 if buffered else 0), None
    raw = open(path, "rb")  # noqa: SIM115 - closed with the stream by the caller
    try:
        stream: IO[bytes]
        if compression == "bz2":
            stream = bz2.BZ2File(raw)  # reads concatenated (multistream) bz2 streams too
        elif compression == "gzip":
            stream = cast(IO[bytes], gzip.GzipFile(fileobj=raw))
        else:
            stream = lzma.LZMAFile(raw)  # noqa: SIM115 - closed by the caller
    except BaseException:
        raw.close()
        raise
    return stream, raw


def _close(stream: IO[bytes], raw: IO[bytes] | None) -> None:
    """Close what :func:`_open_stream` opened (the raw file too: the stream does not own it)."""
    stream.close()
    if raw is not None:
        raw.close()


# --------------------------------------------------------------------------- the scanner

# Boundary tags. Group 3 keeps "<page" from matching "<pageid>" and friends.
_MARKER: Final = re.compile(rb"<(/?)(page|revision|siteinfo|mediawiki)([\s/>])")
_LOOKBACK: Final = 16  # > len(b"</mediawiki>"): a tag split across two chunks is found
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


# --------------------------------------------------------------------------- element parsing


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
                stamp = _parse_timestamp(el.text)
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
    except (TypeError, ValueError) as exc:
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


# --------------------------------------------------------------------------- the dump reader


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


def iter_revisions(
    path: str | os.PathLike[str],
    *,
    namespaces: AbstractSet[int] | None = ARTICLE_NAMESPACES,
    skip_bad_pages: bool = False,
    report: ReadReport | None = None,
) -> Iterator[Revision]:
    """Every revision of a MediaWiki XML dump, in dump order, in constant memory.

    For a ``pages-meta-history`` dump revisions come one at a time: a page's history is
    never held. Memory is O(largest single revision).

    Args:
        path: ``.xml``, or bz2 (multistream too), gzip or xz compressed XML; the compression
            is recognised from the file's first bytes.
        namespaces: Keep pages in these namespaces; ``None`` keeps all. Default: articles.
        skip_bad_pages: Skip malformed or mis-encoded pages (recorded in ``report``) instead
            of raising. Truncated or corrupt input still raises.
        report: Filled in with counts and faults as the read goes.

    Raises:
        DumpReadError: At call time for a missing or unreadable path; during iteration for
            malformed, truncated or non-dump input.
    """
    events = _dump_events(
        path, namespaces=namespaces, skip_bad_pages=skip_bad_pages, report=report
    )
    return (item for item in events if isinstance(item, Revision))


def iter_pages(
    path: str | os.PathLike[str],
    *,
    namespaces: AbstractSet[int] | None = ARTICLE_NAMESPACES,
    skip_bad_pages: bool = False,
    report: ReadReport | None = None,
) -> Iterator[tuple[PageRef, list[Revision]]]:
    """Each page with all its revisions, in dump order.

    Memory is O(one page's full history): use :func:`iter_revisions` for history dumps
    with long histories unless the whole history is needed at once. With
    ``skip_bad_pages=True``, a page with a bad element is left out entirely (a partial
    history would look complete). Pages with no revision are not yielded.

    Args and raises: as :func:`iter_revisions`.
    """
    events = _dump_events(
        path, namespaces=namespaces, skip_bad_pages=skip_bad_pages, report=report
    )

    def group() -> Iterator[tuple[PageRef, list[Revision]]]:
        revisions: list[Revision] = []
        for item in events:
            if isinstance(item, Revision):
                revisions.append(item)
            else:
                if item.complete and revisions:
                    yield item.page, revisions
                revisions = []

    return group()


def iter_latest(
    path: str | os.PathLike[str],
    *,
    namespaces: AbstractSet[int] | None = ARTICLE_NAMESPACES,
    skip_bad_pages: bool = False,
    report: ReadReport | None = None,
) -> Iterator[Revision]:
    """Each page's last revision (in dump order, i.e. the current one), in constant memory.

    Earlier revisions are only scanned, not parsed: only the last one's bytes are kept and
    parsed at ``</page>``, so this is much faster than filtering :func:`iter_revisions`
    (and a malformed earlier revision, never parsed, does not cost the page). On a
    ``pages-articles`` dump it yields the same as :func:`iter_revisions`.

    Args and raises: as :func:`iter_revisions`.
    """
    events = _dump_events(
        path, namespaces=namespaces, skip_bad_pages=skip_bad_pages, report=report,
        latest_only=True,
    )
    return (item for item in events if isinstance(item, Revision))


# --------------------------------------------------------------------------- multistream


@dataclass(frozen=True)
class IndexEntry:
    """One line of a multistream index: the page and the bz2 stream that holds it."""

    offset: int
    """Byte offset in the ``.xml.bz2`` of the bz2 stream holding the page."""
    page_id: int
    title: str


class MultistreamIndex:
    """A ``...-multistream-index.txt[.bz2]`` file, read lazily line by line.

    Each line is ``offset:page_id:title``: the stream at ``offset`` holds up to 100 pages.
    The enwiki index has ~25 M lines, so nothing is loaded up front; lookups scan. To look
    up many titles, build a dict once from iteration (``{e.title: e for e in index}``).
    Titles are XML-escaped in the file (``AT&amp;T``) and unescaped here.
    """

    def __init__(self, index_path: str | os.PathLike[str]) -> None:
        self.path = _check_file(index_path)
        self._compression = _compression_of(self.path)

    def __iter__(self) -> Iterator[IndexEntry]:
        stream, raw = _open_stream(self.path, self._compression, buffered=True)
        try:
            lines = io.TextIOWrapper(stream, encoding="utf-8", newline="\n")
            for number, line in enumerate(lines, 1):
                line = line.rstrip("\r\n")
                if not line:
                    continue
                offset, _, rest = line.partition(":")
                page_id, _, title = rest.partition(":")
                try:
                    entry = IndexEntry(int(offset), int(page_id), _unescape_title(title))
                except ValueError:
                    raise _fail(
                        self.path, f"line {number} is not offset:page_id:title: {line[:80]!r}",
                        "pass the -multistream-index.txt(.bz2) that belongs to the dump",
                    ) from None
                yield entry
        except (EOFError, OSError) as exc:
            raise _fail(self.path, f"cannot be read to the end ({exc})", _HINT_TRUNCATED) from exc
        finally:
            _close(stream, raw)

    def find(self, title: str) -> IndexEntry | None:
        """The entry for ``title`` (exact, as in the dump), or None. Scans the file."""
        return next((e for e in self if e.title == title), None)

    def find_id(self, page_id: int) -> IndexEntry | None:
        """The entry for a page id, or None. Scans the file."""
        return next((e for e in self if e.page_id == page_id), None)

    def offsets(self) -> Iterator[int]:
        """Each stream's offset once, in file order: the units for parallel reading."""
        previous = -1
        for entry in self:
            if entry.offset != previous:
                previous = entry.offset
                yield entry.offset


def _unescape_title(title: str) -> str:
    return _xml_unescape(title, {"&quot;": '"', "&#039;": "'", "&apos;": "'"})


def read_page_at(
    dump_path: str | os.PathLike[str],
    offset: int,
    *,
    namespaces: AbstractSet[int] | None = None,
    report: ReadReport | None = None,
) -> list[Revision]:
    """The revisions in the one bz2 stream at ``offset`` of a multistream dump.

    A multistream dump is a concatenation of bz2 streams of up to 100 ``<page>`` elements
    each (without the ``<mediawiki>`` root, which sits in the first and last streams).
    Only that stream is read and decompressed; the scanner needs no root, so the pages
    are parsed as they are.

    Args:
        dump_path: The ``-multistream.xml.bz2`` file.
        offset: A stream offset from its :class:`MultistreamIndex`.
        namespaces: Keep pages in these namespaces; ``None`` (default) keeps all, since the
            caller asked for this stream by position.
        report: Filled in with counts.

    Raises:
        DumpReadError: The offset is not the start of a bz2 stream, the stream is cut
            short, or a page in it is malformed.
    """
    path = _check_file(dump_path)
    size = path.stat().st_size
    if not 0 <= offset < size:
        raise _fail(path, f"offset {offset:,} is outside the file ({size:,} bytes)",
                    "use an offset from the dump's own -multistream-index file")
    with open(path, "rb") as fh:
        fh.seek(offset)
        decompressor = bz2.BZ2Decompressor()
        parts: list[bytes] = []
        first = True
        while not decompressor.eof:
            block = fh.read(1 << 16)
            if first and not block.startswith(b"BZh"):
                raise _fail(path, f"no bz2 stream starts at byte {offset:,}",
                            "use an offset from the dump's own -multistream-index file")
            first = False
            if not block:
                raise DumpReadError(PageFault(
                    path=str(path), error="the bz2 stream ends early (the file is truncated)",
                    offset=fh.tell(), offset_in="file"), hint=_HINT_TRUNCATED)
            try:
                parts.append(decompressor.decompress(block))
            except OSError as exc:
                raise DumpReadError(PageFault(
                    path=str(path), error=f"compressed data is corrupt ({exc})",
                    offset=fh.tell(), offset_in="file"), hint=_HINT_CORRUPT) from exc
    if report is not None:
        report.files += 1
        report.compressed_bytes_read += size - offset - len(decompressor.unused_data)
    src = _Source(path, io.BytesIO(b"".join(parts)), None, report=report,
                  offset_in=f"bz2 stream at byte {offset:,}")
    events = _read_dump(src, namespaces=namespaces, skip_bad_pages=False, report=report,
                        fragment=True)
    return [item for item in events if isinstance(item, Revision)]


# --------------------------------------------------------------------------- extracted text


def synthetic_id(key: str) -> int:
    """A stable id for a source that has none: 62 bits of BLAKE2b of ``key``, plus 2**62.

    Stable across runs, machines and Python versions (unlike ``hash()``), and never equal to
    a real MediaWiki id (those are far below 2**62). Page ids hash the title, so the same
    title in two files is the same page; revision ids hash title and text, so identical
    content gets the same revision id and changed content a new one.
    """
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    return SYNTHETIC_ID_BASE | (int.from_bytes(digest, "big") >> 2)


def is_synthetic_id(value: int) -> bool:
    """Whether an id was made by :func:`synthetic_id` rather than read from a source."""
    return value >= SYNTHETIC_ID_BASE


def _file_time(path: Path) -> dt.datetime:
    return dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.UTC)


def _plain_revision(
    title: str, text: str, stamp: dt.datetime, *, page_id: int | None = None,
    rev_id: int | None = None,
) -> Revision:
    page = PageRef(id=page_id if page_id is not None else synthetic_id(title), title=title)
    return Revision(
        page=page,
        id=rev_id if rev_id is not None else synthetic_id(f"{title}\n{text}"),
        timestamp=stamp,
        text=text,
        text_format="plain",
    )


def _optional_int(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"not an id: {value!r}")
    return int(value)


def iter_jsonl(
    path: str | os.PathLike[str],
    *,
    timestamp: dt.datetime | None = None,
    skip_bad_pages: bool = False,
    report: ReadReport | None = None,
) -> Iterator[Revision]:
    """Records of a JSON-lines file: WikiExtractor ``--json`` output or plain JSONL.

    Each line is an object with ``title`` and ``text`` (already-clean text, so revisions
    get ``text_format="plain"``) and optionally ``id`` and ``revid`` (WikiExtractor gives
    both, as strings of digits), ``timestamp`` (ISO-8601; a naive one is taken as UTC;
    numbers are Unix seconds) and ``url`` (ignored). Blank lines are skipped. The file may
    be bz2/gzip/xz compressed (WikiExtractor ``--compress``).

    Missing ids are synthesized with :func:`synthetic_id`. A missing timestamp becomes
    ``timestamp`` if given, else the file's modification time (UTC): an extraction is no
    older than the dump it came from, so pass the dump's date when it is known.

    Raises:
        DumpReadError: Missing file; with ``skip_bad_pages=False``, a line that is not JSON,
            not UTF-8 or lacks ``title``/``text``; corrupt or truncated compression.
    """
    checked = _check_file(path)
    compression = _compression_of(checked)

    def run() -> Iterator[Revision]:
        default_stamp = timestamp if timestamp is not None else _file_time(checked)
        stream, raw = _open_stream(checked, compression, buffered=True)
        offset_in = "file" if raw is None else "decompressed data"
        offset = 0
        if report is not None:
            report.files += 1
        try:
            for number, line in enumerate(_lines(stream, checked), 1):
                here, offset = offset, offset + len(line)
                if report is not None:
                    report.bytes_read += len(line)
                if not line.strip():
                    continue
                try:
                    revision = _jsonl_revision(line, default_stamp)
                except ValueError as exc:
                    info = PageFault(
                        path=str(checked), error=f"line {number}: {exc}", offset=here,
                        offset_in=offset_in, title=_title_guess(line),
                    )
                    _page_fault(info, report, skip=skip_bad_pages)
                    continue
                _count_page(report)
                yield revision
        finally:
            if raw is not None and report is not None:
                report.compressed_bytes_read += raw.tell()
            _close(stream, raw)

    return run()


def _lines(stream: IO[bytes], path: Path) -> Iterator[bytes]:
    try:
        yield from stream
    except EOFError as exc:
        raise _fail(path, f"compressed data ends early ({exc})", _HINT_TRUNCATED) from exc
    except (OSError, lzma.LZMAError) as exc:
        raise _fail(path, f"compressed data is corrupt ({exc})", _HINT_CORRUPT) from exc


def _title_guess(line: bytes) -> str | None:
    m = re.search(rb'"title"\s*:\s*"((?:[^"\\]|\\.)*)"', line[:4096])
    if m is None:
        return None
    try:
        value = json.loads(b'"' + m[1] + b'"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _jsonl_revision(line: bytes, default_stamp: dt.datetime) -> Revision:
    try:
        record = json.loads(line)  # UnicodeDecodeError is a ValueError too
    except ValueError as exc:
        raise ValueError(f"not valid JSON ({exc})") from None
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object, got {type(record).__name__}")
    title, text = record.get("title"), record.get("text")
    if not isinstance(title, str) or not isinstance(text, str):
        raise ValueError('needs string "title" and "text" fields')
    raw_stamp = record.get("timestamp")
    try:
        if raw_stamp is None or raw_stamp == "":
            stamp = default_stamp
        elif isinstance(raw_stamp, int | float) and not isinstance(raw_stamp, bool):
            stamp = dt.datetime.fromtimestamp(raw_stamp, tz=dt.UTC)
        elif isinstance(raw_stamp, str):
            stamp = _parse_timestamp(raw_stamp)
        else:
            raise ValueError(f"bad timestamp {raw_stamp!r}")
        page_id = _optional_int(record.get("id"))
        rev_id = _optional_int(record.get("revid"))
    except (TypeError, ValueError, OverflowError, OSError) as exc:
        raise ValueError(f"bad id or timestamp ({exc})") from None
    return _plain_revision(title, text, stamp, page_id=page_id, rev_id=rev_id)


def iter_topics(
    path: str | os.PathLike[str],
    *,
    timestamp: dt.datetime | None = None,
    skip_bad_pages: bool = False,
    report: ReadReport | None = None,
) -> Iterator[Revision]:
    """Entries of a ``{title: text}`` JSON object (WikiChat's topics files), streamed.

    The object is decoded one entry at a time, so a file of any size reads in memory
    O(one entry). Ids are synthesized (:func:`synthetic_id`); the timestamp is ``timestamp``
    if given, else the file's modification time (UTC). Texts are plain (``text_format``).

    Raises:
        DumpReadError: Missing file, not a JSON object, truncated or invalid JSON (the
            offset is a character offset into the decoded text). With ``skip_bad_pages``,
            an entry whose value is not a string is skipped and reported.
    """
    checked = _check_file(path)
    compression = _compression_of(checked)

    def run() -> Iterator[Revision]:
        stamp = timestamp if timestamp is not None else _file_time(checked)
        stream, raw = _open_stream(checked, compression, buffered=True)
        if report is not None:
            report.files += 1
        try:
            text = io.TextIOWrapper(stream, encoding="utf-8-sig")
            for title, value, at in _json_object_items(text, checked):
                if not isinstance(value, str):
                    info = PageFault(
                        path=str(checked), title=title, offset=at, offset_in=_DECODED_TEXT,
                        error=f"value is {type(value).__name__}, not a string",
                    )
                    _page_fault(info, report, skip=skip_bad_pages)
                    continue
                _count_page(report)
                yield _plain_revision(title, value, stamp)
        finally:
            if report is not None and not stream.closed:
                report.bytes_read += stream.tell()
                if raw is not None:
                    report.compressed_bytes_read += raw.tell()
            _close(stream, raw)

    return run()


_WS: Final = re.compile(r"\s*")


def _json_object_items(text: IO[str], path: Path) -> Iterator[tuple[str, Any, int]]:
    """(key, value, char offset) of a top-level JSON object, read incrementally.

    ``json`` has no streaming API, so this reads chunks and calls ``raw_decode`` on each
    key and value, reading more when one is cut by the chunk end.
    """
    decoder = json.JSONDecoder()
    buf = ""
    base = 0  # char offset of buf[0]
    eof = False

    def more(pos: int) -> int:
        nonlocal buf, base, eof
        try:
            chunk = text.read(max(_CHUNK, len(buf) - pos))  # grow geometrically for big values
        except UnicodeDecodeError as exc:
            raise _fail(path, f"is not UTF-8 text ({exc})", "convert the file to UTF-8") from None
        except EOFError as exc:
            raise _fail(path, f"compressed data ends early ({exc})", _HINT_TRUNCATED) from exc
        except OSError as exc:
            raise _fail(path, f"compressed data is corrupt ({exc})", _HINT_CORRUPT) from exc
        if not chunk:
            eof = True
        buf, base = buf[pos:] + chunk, base + pos
        return 0

    def skip_ws(pos: int) -> int:
        while True:
            m = _WS.match(buf, pos)
            assert m is not None
            pos = m.end()
            if pos < len(buf) or eof:
                return pos
            pos = more(pos)

    def bad(pos: int, what: str) -> DumpReadError:
        info = PageFault(path=str(path), error=what, offset=base + pos,
                         offset_in=_DECODED_TEXT)
        hint = _HINT_TRUNCATED if eof and pos >= len(buf) else _HINT_FORMATS
        return DumpReadError(info, hint=hint)

    def decode(pos: int) -> tuple[Any, int]:
        while True:
            try:
                value, end = decoder.raw_decode(buf, pos)
            except json.JSONDecodeError as exc:
                # Only an error at the buffer's end (or a string still open) may be a value
                # cut by the chunk; anything else is bad JSON, reported without reading on.
                cut = exc.msg.startswith("Unterminated string") or exc.pos >= len(buf) - 6
                if eof or not cut:
                    raise bad(exc.pos, f"invalid JSON: {exc.msg}") from None
                pos = more(pos)
                continue
            if end >= len(buf) and not eof:  # a number cut at the chunk's end
                pos = more(pos)
                continue
            return value, end

    pos = skip_ws(more(0))
    if buf[pos : pos + 1] != "{":
        raise bad(pos, "is not a JSON object ({title: text})")
    pos += 1
    first = True
    while True:
        pos = skip_ws(pos)
        if buf[pos : pos + 1] == "}":
            return
        if not first:
            if buf[pos : pos + 1] != ",":
                raise bad(pos, "expected ',' or '}' between entries")
            pos = skip_ws(pos + 1)
        first = False
        at = base + pos
        key, pos = decode(pos)
        if not isinstance(key, str):
            raise bad(pos, "expected a string key")
        pos = skip_ws(pos)
        if buf[pos : pos + 1] != ":":
            raise bad(pos, "expected ':' after a key")
        value, pos = decode(skip_ws(pos + 1))
        yield key, value, at
        if pos > _CHUNK:  # drop what has been read
            buf, base, pos = buf[pos:], base + pos, 0


# --------------------------------------------------------------------------- detection


_JSONL_SUFFIXES: Final = (".jsonl", ".ndjson")
_COMPRESSED_SUFFIXES: Final = (".bz2", ".gz", ".xz")


def detect_format(path: str | os.PathLike[str]) -> SourceFormat:
    """What kind of source ``path`` is, from its content (and its name where that is clear).

    A folder is ``directory``. Otherwise the first bytes (after decompression) decide:
    ``<mediawiki`` / ``<page`` → ``mediawiki-xml``; a ``.jsonl``/``.ndjson`` name, or a
    first line that is a whole JSON object with ``title`` and ``text`` → ``jsonl``
    (WikiExtractor's ``wiki_00`` files have no extension); any other JSON object →
    ``topics-json``.

    Raises:
        DumpReadError: Missing, empty, or none of the above (e.g. WikiExtractor output
            without ``--json``).
    """
    p = Path(path)
    if p.is_dir():
        return "directory"
    checked = _check_file(p)
    name = checked.name.lower()
    for suffix in _COMPRESSED_SUFFIXES:
        name = name.removesuffix(suffix)
    if name.endswith(_JSONL_SUFFIXES):
        return "jsonl"
    stream, raw = _open_stream(checked, _compression_of(checked))
    try:
        head = stream.read(_SNIFF)
    except EOFError as exc:  # a small file cut short: say so, as the readers do
        raise _fail(checked, f"compressed data ends early ({exc})", _HINT_TRUNCATED) from exc
    except (OSError, lzma.LZMAError) as exc:
        raise _fail(checked, f"cannot be decompressed ({exc})", _HINT_CORRUPT) from exc
    finally:
        _close(stream, raw)
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not start:
        what = "is empty (0 bytes)" if not head else "contains only whitespace"
        raise _fail(checked, what, _HINT_FORMATS)
    if start.startswith(b"<"):
        if start.startswith(b"<doc "):
            raise _fail(checked, "is WikiExtractor's <doc> output, which is not read",
                        "re-run WikiExtractor with --json")
        if re.search(rb"<(mediawiki|page)[\s>]", start[:_SNIFF]):
            return "mediawiki-xml"
        raise _fail(checked, "is XML but not a MediaWiki export (no <mediawiki> or <page>)",
                    _HINT_FORMATS)
    if start.startswith(b"{"):
        first_line = start.split(b"\n", 1)[0]
        try:
            record = json.loads(first_line)
        except ValueError:
            return "topics-json"  # a multi-line (pretty-printed) object
        if isinstance(record, dict) and "title" in record and "text" in record:
            return "jsonl"
        return "topics-json"
    raise _fail(checked, f"is not a known source format (it starts with {start[:20]!r})",
                _HINT_FORMATS)


def read_source(
    path: str | os.PathLike[str],
    *,
    namespaces: AbstractSet[int] | None = ARTICLE_NAMESPACES,
    skip_bad_pages: bool = False,
    report: ReadReport | None = None,
    timestamp: dt.datetime | None = None,
) -> Iterator[Revision]:
    """Every revision of any supported source: the one entry point for ingestion.

    Dispatches on :func:`detect_format`. A folder is walked recursively in sorted path
    order (WikiExtractor's ``AA/wiki_00``, ``AA/wiki_01``, ``AB/...``), skipping hidden
    files; every file in it must be a supported source.

    Args:
        path: A file or folder.
        namespaces: For XML dumps, the namespaces to keep (``None``: all). Extracted-text
            sources carry no namespace; their pages are namespace 0 and are filtered alike.
        skip_bad_pages: Skip bad pages, lines or entries (and, in a folder, files of unknown
            format), recording each in ``report``, instead of raising.
        report: Filled in across all files.
        timestamp: For sources without timestamps (JSONL without one, topics): the time to
            give their revisions; default: each file's modification time.

    Raises:
        DumpReadError: At call time for a missing path or a file of unknown format; during
            iteration as the individual readers do.
    """
    fmt = detect_format(path)
    keep_plain = namespaces is None or 0 in namespaces
    if fmt == "mediawiki-xml":
        return iter_revisions(
            path, namespaces=namespaces, skip_bad_pages=skip_bad_pages, report=report
        )
    if fmt == "jsonl":
        if not keep_plain:
            return iter([])
        return iter_jsonl(path, timestamp=timestamp, skip_bad_pages=skip_bad_pages,
                          report=report)
    if fmt == "topics-json":
        if not keep_plain:
            return iter([])
        return iter_topics(path, timestamp=timestamp, skip_bad_pages=skip_bad_pages,
                           report=report)
    files = _walk(Path(path))
    if not files:
        raise _fail(Path(path), "is a folder with no files to read", _HINT_FORMATS)
    return _read_folder(files, namespaces=namespaces, skip_bad_pages=skip_bad_pages,
                        report=report, timestamp=timestamp)


def _walk(folder: Path) -> list[Path]:
    found: list[Path] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(Path(root) / f for f in sorted(files) if not f.startswith("."))
    return found


def _read_folder(
    files: list[Path],
    *,
    namespaces: AbstractSet[int] | None,
    skip_bad_pages: bool,
    report: ReadReport | None,
    timestamp: dt.datetime | None,
) -> Iterator[Revision]:
    for file in files:
        try:
            revisions = read_source(file, namespaces=namespaces, skip_bad_pages=skip_bad_pages,
                                    report=report, timestamp=timestamp)
        except DumpReadError as exc:
            if not skip_bad_pages:
                raise
            if report is not None:
                report.skipped.append(exc.fault)
            continue
        yield from revisions

