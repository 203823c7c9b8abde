"""Random access into ``-multistream`` dumps through their index file.

Each bz2 stream of such a dump holds about a hundred pages; the index maps a title to the
byte offset of its stream, so one page is read without decompressing what comes before it.
"""

from __future__ import annotations

import bz2
import io
import os
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from xml.sax.saxutils import unescape as _xml_unescape

from freshwiki.corpus.readers._errors import (
    _HINT_CORRUPT,
    _HINT_TRUNCATED,
    DumpReadError,
    PageFault,
    ReadReport,
    _fail,
)
from freshwiki.corpus.readers._stream import (
    _check_file,
    _close,
    _compression_of,
    _open_stream,
    _Source,
)
from freshwiki.corpus.readers._xml import _read_dump
from freshwiki.records import Revision


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
