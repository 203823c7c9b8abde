"""Already-clean text: WikiExtractor ``--json`` output, plain JSONL and topics files.

These sources have no revision ids, so each page gets a synthetic id derived from its key;
:func:`is_synthetic_id` tells them apart from real MediaWiki ids.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import lzma
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Final

from freshwiki.corpus.readers._errors import (
    _DECODED_TEXT,
    _HINT_CORRUPT,
    _HINT_FORMATS,
    _HINT_TRUNCATED,
    DumpReadError,
    PageFault,
    ReadReport,
    _count_page,
    _fail,
    _page_fault,
)
from freshwiki.corpus.readers._stream import (
    _CHUNK,
    _check_file,
    _close,
    _compression_of,
    _open_stream,
)
from freshwiki.corpus.readers._xml import _parse_timestamp
from freshwiki.records import PageRef, Revision

SYNTHETIC_ID_BASE: Final = 1 << 62
"""Synthesized ids are in ``[2**62, 2**63)``: above any real MediaWiki id, within int64."""


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
    rev_id: int | None = None, dated: bool = True,
) -> Revision:
    page = PageRef(id=page_id if page_id is not None else synthetic_id(title), title=title)
    return Revision(
        page=page,
        id=rev_id if rev_id is not None else synthetic_id(f"{title}\n{text}"),
        timestamp=stamp,
        text=text,
        text_format="plain",
        dated=dated,
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
    ``timestamp`` if given (pass the dump's date when it is known); else the revision is
    undated (``Revision.dated`` false: its passages carry no date) and sorts by the file's
    modification time.

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
                    revision = _jsonl_revision(line, default_stamp, timestamp is not None)
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


def _jsonl_revision(line: bytes, default_stamp: dt.datetime, default_dated: bool = True
                    ) -> Revision:
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
        dated = True
        if raw_stamp is None or raw_stamp == "":
            stamp, dated = default_stamp, default_dated
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
    return _plain_revision(title, text, stamp, page_id=page_id, rev_id=rev_id, dated=dated)


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
    if given, else the revision is undated (``Revision.dated`` false: the file gives no date,
    so its passages carry none; the file's modification time only orders revisions). Texts
    are plain (``text_format``).

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
                yield _plain_revision(title, value, stamp, dated=timestamp is not None)
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
