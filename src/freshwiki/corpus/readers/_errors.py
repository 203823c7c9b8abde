"""How readers fail and what they report: the error, the per-page faults, the hints.

Every reader raises :class:`DumpReadError` naming the file, the page and the byte offset where
known, with a hint saying what to do; with ``skip_bad_pages`` a bad page is recorded in the
:class:`ReadReport` instead and reading goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from freshwiki.errors import FreshwikiError

_DECODED_TEXT: Final = "decoded text"


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
