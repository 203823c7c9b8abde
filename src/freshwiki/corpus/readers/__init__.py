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


Layout
    ``dump`` (MediaWiki XML, over the scanner and parser in ``_xml``), ``multistream``
    (random access by index), ``extracted`` (WikiExtractor, JSONL, topics); ``_stream`` opens
    and decompresses any of them, ``_errors`` holds the error, the report and the hints,
    ``_detect`` picks the reader for a path. Only the names re-exported here are public.
"""

from freshwiki.corpus.readers._detect import (
    SourceFormat,
    detect_format,
    read_source,
)
from freshwiki.corpus.readers._errors import (
    DumpReadError,
    PageFault,
    ReadReport,
)
from freshwiki.corpus.readers.dump import (
    ARTICLE_NAMESPACES,
    iter_latest,
    iter_pages,
    iter_revisions,
)
from freshwiki.corpus.readers.extracted import (
    SYNTHETIC_ID_BASE,
    is_synthetic_id,
    iter_jsonl,
    iter_topics,
    synthetic_id,
)
from freshwiki.corpus.readers.multistream import (
    IndexEntry,
    MultistreamIndex,
    read_page_at,
)

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
