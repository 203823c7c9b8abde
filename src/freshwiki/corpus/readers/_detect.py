"""Which reader a path needs, and reading any supported path with it.

A source is recognised by its content (first bytes after decompression), then its suffix; a
folder is read file by file in a stable order.
"""

from __future__ import annotations

import datetime as dt
import json
import lzma
import os
import re
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Final, Literal

from freshwiki.corpus.readers._errors import (
    _HINT_CORRUPT,
    _HINT_FORMATS,
    _HINT_TRUNCATED,
    DumpReadError,
    ReadReport,
    _fail,
)
from freshwiki.corpus.readers._stream import _check_file, _close, _compression_of, _open_stream
from freshwiki.corpus.readers.dump import ARTICLE_NAMESPACES, iter_revisions
from freshwiki.corpus.readers.extracted import iter_jsonl, iter_topics
from freshwiki.records import Revision

SourceFormat = Literal["mediawiki-xml", "jsonl", "topics-json", "directory"]


_SNIFF: Final = 1 << 16


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
