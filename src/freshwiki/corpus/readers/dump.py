"""MediaWiki XML exports (``pages-articles`` and ``pages-meta-history``) as revisions.

A scanner finds ``<page>`` and ``<revision>`` boundaries in the decompressed bytes and each
element is parsed on its own with lxml: memory stays at one revision and a malformed element
fails alone (see the package docstring).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from typing import Final

from freshwiki.corpus.readers._errors import (
    ReadReport,
)
from freshwiki.corpus.readers._xml import _dump_events
from freshwiki.records import PageRef, Revision

ARTICLE_NAMESPACES: Final[frozenset[int]] = frozenset({0})
"""The default namespace filter: main-namespace pages (articles and their redirects)."""


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
