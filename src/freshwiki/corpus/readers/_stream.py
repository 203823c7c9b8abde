"""Opening a source: the path checked, the compression detected, the bytes decompressed.

Compression is recognised by magic bytes, not by the file name, and a stream that ends early
or is corrupt raises a typed error the readers turn into a :class:`DumpReadError`, so a
truncated download never looks like a small dump.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
import zlib
from pathlib import Path
from typing import IO, Any, Final, Literal, cast

from freshwiki.corpus.readers._errors import PageFault, ReadReport, _fail

_CHUNK = 1 << 20  # bytes per read; tests shrink it to split tags across reads


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
        except (OSError, lzma.LZMAError, zlib.error) as exc:  # zlib.error: gzip's deflate data
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


# Boundary tags. Group 3 keeps "<page" from matching "<pageid>" and friends.
_MARKER: Final = re.compile(rb"<(/?)(page|revision|siteinfo|mediawiki)([\s/>])")


_LOOKBACK: Final = 16  # > len(b"</mediawiki>"): a tag split across two chunks is found
