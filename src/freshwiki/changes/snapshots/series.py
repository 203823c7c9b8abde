"""Snapshots from dumps: a series sliced from one history dump, and pairs across two dumps.

One ``pages-meta-history`` dump holds every revision, so it yields the article as it stood at
any date: the last revision saved at or before that date. The dump is streamed once; per page
only the revisions current at some cut date are kept (at most one per cut), never the page's
whole history, and a page's series is handed out as soon as its last revision has been read.

Dates: a bare date means the *end* of that day (UTC), so ``--to 2002-08-31`` includes that
day's edits; a datetime is used as given (naive ones are UTC).
"""

from __future__ import annotations

import bisect
import datetime as dt
import os
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from freshwiki.changes.snapshots._align import Aligner
from freshwiki.changes.snapshots._text import snapshot_of
from freshwiki.changes.snapshots._types import Alignment, Skip, Snapshot, SnapshotError
from freshwiki.corpus import ARTICLE_NAMESPACES, iter_latest, iter_revisions
from freshwiki.records import PageRef, Revision

Path = str | os.PathLike[str]


def parse_cut(value: str | dt.date | dt.datetime) -> dt.datetime:
    """A cut instant (UTC) from ``YYYY-MM-DD``, an ISO datetime, a date or a datetime.

    Raises:
        SnapshotError: The string is neither a date nor an ISO datetime.
    """
    if isinstance(value, str):
        text = value.strip()
        try:
            if len(text) == 10:
                return parse_cut(dt.date.fromisoformat(text))
            return parse_cut(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))
        except ValueError as exc:
            raise SnapshotError(
                f"{value!r} is not a date", hint="write YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS."
            ) from exc
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    return dt.datetime.combine(value, dt.time.max, tzinfo=dt.UTC)


def monthly_cuts(start: dt.datetime, end: dt.datetime) -> list[dt.datetime]:
    """``start``, the end of every month in between, and ``end``: a monthly series.

    The first and last cuts are the bounds themselves, so the series starts with the article
    as it stood at ``start`` and ends with it as it stood at ``end``.
    """
    cuts = [start]
    year, month = start.year, start.month
    while True:
        nxt = dt.date(year + month // 12, month % 12 + 1, 1)
        month_end = parse_cut(nxt - dt.timedelta(days=1))
        if month_end >= end:
            break
        if month_end > start:
            cuts.append(month_end)
        year, month = nxt.year, nxt.month
    if end > start:
        cuts.append(end)
    return cuts


@dataclass(frozen=True)
class PageSeries:
    """One page as it stood at each cut: ``revisions[k]`` was current at ``cuts[k]``.

    ``None`` where the page did not exist yet at that cut.
    """

    page: PageRef
    cuts: tuple[dt.datetime, ...]
    revisions: tuple[Revision | None, ...]

    def snapshots(self) -> list[Snapshot | None]:
        """Snapshots per cut; a revision current at several cuts is cleaned once."""
        done: dict[int, Snapshot] = {}
        out: list[Snapshot | None] = []
        for cut, rev in zip(self.cuts, self.revisions, strict=True):
            if rev is None:
                out.append(None)
                continue
            if rev.id not in done:
                done[rev.id] = snapshot_of(rev)
            out.append(_with_cut(done[rev.id], cut))
        return out


def _with_cut(snap: Snapshot, cut: dt.datetime) -> Snapshot:
    return Snapshot(snap.page_id, snap.title, snap.revision_id, snap.timestamp, snap.sentences,
                    snap.paragraphs, snap.redirect, cut)


def _by_page(revisions: Iterator[Revision]) -> Iterator[tuple[PageRef, Iterator[Revision]]]:
    """Group a revision stream by page without materialising a page's history."""
    stream = iter(revisions)
    pending: list[Revision] = []
    try:
        pending.append(next(stream))
    except StopIteration:
        return
    while pending:
        first = pending.pop()
        page_id = first.page.id

        def one_page(first: Revision = first, page_id: int = page_id) -> Iterator[Revision]:
            yield first
            for rev in stream:
                if rev.page.id != page_id:
                    pending.append(rev)
                    return
                yield rev

        pages = one_page()
        yield first.page, pages
        for _ in pages:  # drain what the consumer did not read
            pass


def iter_series(
    path: Path,
    cuts: Sequence[dt.datetime],
    *,
    namespaces: AbstractSet[int] | None = ARTICLE_NAMESPACES,
    titles: AbstractSet[str] | None = None,
) -> Iterator[PageSeries]:
    """Each page of a history dump as it stood at each cut, streamed page by page.

    Args:
        path: A ``pages-meta-history`` dump (any compression :func:`iter_revisions` reads).
        cuts: Instants, in any order (sorted in the result); see :func:`parse_cut`.
        namespaces: Pages to keep (default: articles).
        titles: Only pages with these titles.

    Raises:
        SnapshotError: No cut was given.
        DumpReadError: The dump is missing, unreadable or malformed.
    """
    if not cuts:
        raise SnapshotError(f"no cut dates given for {os.fspath(path)}",
                            hint="give at least one date, e.g. --from and --to.")
    ordered = tuple(sorted(parse_cut(c) for c in cuts))
    for page, revisions in _by_page(iter_revisions(path, namespaces=namespaces)):
        if titles is not None and page.title not in titles:
            continue
        kept: list[Revision | None] = [None] * len(ordered)
        last_page = page
        for rev in revisions:
            last_page = rev.page
            first = bisect.bisect_left(ordered, rev.timestamp)
            for k in range(first, len(ordered)):
                current = kept[k]
                if current is None or current.timestamp <= rev.timestamp:
                    kept[k] = rev
        yield PageSeries(last_page, ordered, tuple(kept))


def _skip_reason(snap: Snapshot, side: str, when: str) -> str | None:
    version = f"the {side} version{' ' + when if when else ''} (revision {snap.revision_id})"
    if snap.redirect is not None:
        return f"{version} is a redirect to {snap.redirect!r}"
    if not snap.sentences:
        return f"{version} is empty: no sentences after cleaning"
    return None


def _pair(aligner: Aligner, old: Snapshot, new: Snapshot, old_when: str = "",
          new_when: str = "") -> Alignment | Skip:
    for snap, side, when in ((old, "old", old_when), (new, "new", new_when)):
        reason = _skip_reason(snap, side, when)
        if reason is not None:
            return Skip(new.page_id, new.title, reason, old.revision_id, new.revision_id)
    return aligner.align(old, new)


def diff_series(
    path: Path,
    aligner: Aligner,
    cuts: Sequence[dt.datetime],
    *,
    namespaces: AbstractSet[int] | None = ARTICLE_NAMESPACES,
    titles: AbstractSet[str] | None = None,
) -> Iterator[Alignment | Skip]:
    """Align each page's consecutive snapshots at the cuts (e.g. the end of every month).

    A cut at which the page did not exist yet, was a redirect or had no text gives a
    :class:`Skip` naming the cut, never an alignment with made-up labels.
    """
    for series in iter_series(path, cuts, namespaces=namespaces, titles=titles):
        snaps = series.snapshots()
        for k in range(1, len(snaps)):
            old, new = snaps[k - 1], snaps[k]
            before, after = series.cuts[k - 1], series.cuts[k]
            if old is None or new is None:
                missing = before if old is None else after
                yield Skip(series.page.id, series.page.title,
                           f"the page did not exist yet at {missing:%Y-%m-%d %H:%M}",
                           old.revision_id if old else None, new.revision_id if new else None)
                continue
            yield _pair(aligner, old, new, f"at {before:%Y-%m-%d}", f"at {after:%Y-%m-%d}")


def diff_revisions(
    path: Path,
    aligner: Aligner,
    *,
    start: dt.datetime | None = None,
    end: dt.datetime | None = None,
    namespaces: AbstractSet[int] | None = ARTICLE_NAMESPACES,
    titles: AbstractSet[str] | None = None,
) -> Iterator[Alignment | Skip]:
    """Align every pair of consecutive revisions (saved between ``start`` and ``end``).

    Constant memory: only the previous revision's snapshot of the current page is held.
    """
    lo, hi = (parse_cut(start) if start else None), (parse_cut(end) if end else None)
    for page, revisions in _by_page(iter_revisions(path, namespaces=namespaces)):
        if titles is not None and page.title not in titles:
            continue
        previous: Snapshot | None = None
        for rev in revisions:
            if (lo is not None and rev.timestamp < lo) or (hi is not None and rev.timestamp > hi):
                continue
            snap = snapshot_of(rev)
            if previous is not None:
                yield _pair(aligner, previous, snap)
            previous = snap


def diff_dumps(
    old_path: Path,
    new_path: Path,
    aligner: Aligner,
    *,
    namespaces: AbstractSet[int] | None = ARTICLE_NAMESPACES,
    titles: AbstractSet[str] | None = None,
) -> Iterator[Alignment | Skip]:
    """Align each page's latest revision in an old dump with the same page in a new one.

    Pages are joined by page id in one merge pass (dumps list pages in ascending id order),
    so neither dump is held in memory. A page in only one dump gives a :class:`Skip`.

    Raises:
        SnapshotError: A dump is not in ascending page-id order (the merge would be wrong).
    """

    def ordered(path: Path) -> Iterator[Revision]:
        last = -1
        for rev in iter_latest(path, namespaces=namespaces):
            if rev.page.id <= last:
                raise SnapshotError(
                    f"{os.fspath(path)} lists page {rev.page.id} after page {last}",
                    hint="dumps are expected in ascending page-id order, as Wikimedia "
                    "writes them; sort the pages or diff the two pages' revisions directly.",
                )
            last = rev.page.id
            if titles is None or rev.page.title in titles:
                yield rev

    olds, news = ordered(old_path), ordered(new_path)
    old, new = next(olds, None), next(news, None)
    while old is not None or new is not None:
        if new is None or (old is not None and old.page.id < new.page.id):
            assert old is not None
            yield Skip(old.page.id, old.page.title,
                       f"deleted: the page is not in the new dump {os.fspath(new_path)}",
                       old.id, None)
            old = next(olds, None)
        elif old is None or new.page.id < old.page.id:
            yield Skip(new.page.id, new.page.title,
                       f"created: the page is not in the old dump {os.fspath(old_path)}",
                       None, new.id)
            new = next(news, None)
        else:
            yield _pair(aligner, snapshot_of(old), snapshot_of(new),
                        "in the old dump", "in the new dump")
            old, new = next(olds, None), next(news, None)
