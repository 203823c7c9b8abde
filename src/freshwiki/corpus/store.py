"""The on-disk corpus: pages, revisions and passages in one SQLite file.

Revisions are keyed by revision id, so re-ingesting a dump is idempotent (a revision already
stored is skipped, passages and all) and several snapshots of one page coexist, each with its
timestamp; "the article as it stood on a date" is the latest revision at or before it.
Writes happen in batches inside one transaction, so a crash loses at most the batch in flight
and never leaves half a revision.

Each stored revision's regex fallbacks (the chunks of its wikitext the cleaner's parser failed
on, :class:`~freshwiki.corpus.wikitext.Fallback`) are kept beside it, written in the same
transaction. So what :meth:`CorpusStore.fallback_summary` reports is a fact about the
revisions the store holds, not a tally of ingest runs: re-ingesting a page adds nothing,
since its revision is skipped before it is cleaned.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from freshwiki.corpus.wikitext import Fallback
from freshwiki.records import Contributor, MaintenanceTag, PageRef, Passage, Revision

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    namespace INTEGER NOT NULL,
    redirect TEXT
);
CREATE INDEX IF NOT EXISTS pages_title ON pages(title);
CREATE TABLE IF NOT EXISTS revisions (
    id INTEGER PRIMARY KEY,
    page_id INTEGER NOT NULL REFERENCES pages(id),
    parent_id INTEGER,
    timestamp TEXT NOT NULL,
    username TEXT,
    user_id INTEGER,
    ip TEXT,
    comment TEXT,
    sha1 TEXT,
    size INTEGER,
    minor INTEGER NOT NULL,
    text TEXT
);
CREATE INDEX IF NOT EXISTS revisions_page_time ON revisions(page_id, timestamp);
CREATE TABLE IF NOT EXISTS passages (
    rowid INTEGER PRIMARY KEY,
    id TEXT UNIQUE NOT NULL,
    page_id INTEGER NOT NULL,
    revision_id INTEGER NOT NULL REFERENCES revisions(id),
    title TEXT NOT NULL,
    section_path TEXT NOT NULL,
    text TEXT NOT NULL,
    timestamp TEXT,
    sentences TEXT NOT NULL,
    tags TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS passages_revision ON passages(revision_id);
CREATE TABLE IF NOT EXISTS sources (
    path TEXT NOT NULL,
    ingested_at TEXT NOT NULL,
    report TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS fallbacks (
    revision_id INTEGER NOT NULL REFERENCES revisions(id),
    chunk INTEGER NOT NULL,
    reason TEXT NOT NULL,
    chunk_chars INTEGER NOT NULL,
    PRIMARY KEY (revision_id, chunk)
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""
_UNCOUNTED: Final = "fallbacks_uncounted_revisions"
"""``meta`` key: revisions a store held before it recorded fallbacks (their count is unknown)."""


def _iso(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(value: str | None) -> dt.datetime | None:
    if value is None:
        return None
    return dt.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)


_JSON: Final = json.JSONEncoder(ensure_ascii=False)
"""What ``json.dumps(..., ensure_ascii=False)`` builds on every call, built once."""
_json_str: Final[Callable[[str], str]] = json.encoder.encode_basestring


def _strings_json(items: Sequence[str]) -> str:
    """``json.dumps(list(items), ensure_ascii=False)``, the same text, several times faster.

    Each passage stores two lists of strings; encoding them was a third of ``add``. The
    string encoder is the one ``json`` itself uses (in C) and the separator is its default.
    """
    return "[" + ", ".join(map(_json_str, items)) + "]"


def _tags_json(tags: Sequence[MaintenanceTag]) -> str:
    if not tags:
        return "[]"
    return _JSON.encode([dataclasses.asdict(t) for t in tags])


def _tags_from(raw: str) -> tuple[MaintenanceTag, ...]:
    return tuple(MaintenanceTag(**item) for item in json.loads(raw))


@dataclasses.dataclass(frozen=True)
class AddResult:
    """What one :meth:`CorpusStore.add` call wrote."""

    added: int
    skipped: int
    """Revisions already stored (re-ingest), left untouched."""
    passages: int
    fallbacks: dict[int, tuple[Fallback, ...]] = dataclasses.field(default_factory=dict)
    """The regex fallbacks stored, by revision id: only revisions this call added, and only
    those with at least one."""


@dataclasses.dataclass(frozen=True)
class FallbackSummary:
    """How much of what a store holds was cleaned by the regex fallback.

    Counts are over the revisions stored, each counted once however often its source was
    ingested (a revision already stored is skipped before cleaning). A history ingest stores
    every revision, so one page whose text always nests too deep counts once per revision.
    """

    revisions: int
    """Stored revisions with at least one chunk regex-stripped."""
    chunks: int
    """Chunks regex-stripped, over those revisions (a page is one chunk or a few)."""
    chunk_chars: int
    """Characters in those chunks (sanitized wikitext)."""
    reasons: dict[str, int]
    """Chunks per reason: ``TOO_DEEP`` or the exception's type name."""
    uncounted_revisions: int = 0
    """Revisions stored before the store recorded fallbacks: not counted, as not known."""

    def as_dict(self) -> dict[str, object]:
        """JSON-friendly form, for ``corpus info --json``."""
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class StoredFallback:
    """One stored revision whose wikitext fell back, with the page it belongs to."""

    revision_id: int
    page_id: int
    title: str
    fallbacks: tuple[Fallback, ...]


class CorpusStore:
    """A SQLite corpus. Use as a context manager, or call :meth:`close`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, timeout=60.0)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        tables = {row[0] for row in self._conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        self._conn.executescript(_SCHEMA)
        if "revisions" in tables and "fallbacks" not in tables:
            # A store from before fallbacks were recorded: say how many revisions predate
            # counting rather than let them look clean.
            with self._conn:
                held = self._conn.execute("SELECT COUNT(*) FROM revisions").fetchone()[0]
                self._conn.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)",
                                   (_UNCOUNTED, str(held)))
        self._conn.commit()

    def __enter__(self) -> CorpusStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Commit and close."""
        self._conn.commit()
        self._conn.close()

    # -- writing -------------------------------------------------------------------------

    def add(
        self,
        items: Iterable[tuple[Revision, Sequence[Passage]]],
        *,
        keep_text: bool = True,
        fallbacks: Mapping[int, Sequence[Fallback]] | None = None,
    ) -> AddResult:
        """Store revisions with their passages in one transaction.

        Args:
            items: (revision, its passages) pairs.
            keep_text: Store each revision's wikitext.
            fallbacks: The regex fallbacks of some of these revisions, by revision id; each
                is stored with its revision (in the same transaction) and only if the
                revision is added, so a revision already stored is never counted twice.
        """
        fallbacks = fallbacks or {}
        stored: dict[int, tuple[Fallback, ...]] = {}
        added = skipped = n_passages = 0
        with self._conn:
            for revision, passages in items:
                if self.has_revision(revision.id):
                    skipped += 1
                    continue
                page = revision.page
                self._conn.execute(
                    "INSERT INTO pages (id, title, namespace, redirect) VALUES (?,?,?,?)"
                    " ON CONFLICT(id) DO UPDATE SET title=excluded.title,"
                    " namespace=excluded.namespace, redirect=excluded.redirect",
                    (page.id, page.title, page.namespace, page.redirect),
                )
                who = revision.contributor or Contributor()
                self._conn.execute(
                    "INSERT INTO revisions VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        revision.id, page.id, revision.parent_id, _iso(revision.timestamp),
                        who.username, who.user_id, who.ip, revision.comment, revision.sha1,
                        revision.size, int(revision.minor),
                        revision.text if keep_text else None,
                    ),
                )
                self._conn.executemany(
                    "INSERT INTO passages (id, page_id, revision_id, title, section_path, text,"
                    " timestamp, sentences, tags) VALUES (?,?,?,?,?,?,?,?,?)",
                    [
                        (
                            p.id, p.page_id, p.revision_id, p.title,
                            _strings_json(p.section_path), p.text,
                            _iso(p.timestamp), _strings_json(p.sentences), _tags_json(p.tags),
                        )
                        for p in passages
                    ],
                )
                fell_back = tuple(fallbacks.get(revision.id, ()))
                if fell_back:
                    self._conn.executemany(
                        "INSERT INTO fallbacks VALUES (?,?,?,?)",
                        [(revision.id, i, f.reason, f.chunk_chars)
                         for i, f in enumerate(fell_back)],
                    )
                    stored[revision.id] = fell_back
                added += 1
                n_passages += len(passages)
        return AddResult(added, skipped, n_passages, stored)

    def has_revision(self, revision_id: int) -> bool:
        """Whether a revision is stored: ingest asks before cleaning, so a rerun is cheap."""
        row = self._conn.execute("SELECT 1 FROM revisions WHERE id = ?", (revision_id,))
        return row.fetchone() is not None

    def record_source(self, path: Path, report: dict[str, Any]) -> None:
        """Remember that a source was ingested, with its counts, for `corpus info`."""
        with self._conn:
            self._conn.execute(
                "INSERT INTO sources VALUES (?,?,?)",
                (str(path), _iso(dt.datetime.now(dt.UTC)), json.dumps(report, default=str)),
            )

    # -- reading -------------------------------------------------------------------------

    def fallback_summary(self) -> FallbackSummary:
        """How many stored revisions (and chunks) the regex fallback cleaned, for `corpus info`."""
        revisions, chunks, chars = self._conn.execute(
            "SELECT COUNT(DISTINCT revision_id), COUNT(*), COALESCE(SUM(chunk_chars), 0)"
            " FROM fallbacks"
        ).fetchone()
        reasons = dict(self._conn.execute(
            "SELECT reason, COUNT(*) FROM fallbacks GROUP BY reason ORDER BY COUNT(*) DESC,"
            " reason"))
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?",
                                 (_UNCOUNTED,)).fetchone()
        return FallbackSummary(int(revisions), int(chunks), int(chars),
                               {str(k): int(v) for k, v in reasons.items()},
                               int(row[0]) if row else 0)

    def fallbacks(self) -> Iterator[StoredFallback]:
        """Every stored revision that fell back, by revision id: the pages to look at."""
        rows = self._conn.execute(
            "SELECT f.revision_id, r.page_id, p.title, f.reason, f.chunk_chars"
            " FROM fallbacks f JOIN revisions r ON r.id = f.revision_id"
            " JOIN pages p ON p.id = r.page_id ORDER BY f.revision_id, f.chunk"
        )
        current: tuple[int, int, str] | None = None
        found: list[Fallback] = []
        for revision_id, page_id, title, reason, chars in rows:
            if current is not None and current[0] != revision_id:
                yield StoredFallback(*current, tuple(found))
                found = []
            current = (revision_id, page_id, title)
            found.append(Fallback(reason, chars))
        if current is not None:
            yield StoredFallback(*current, tuple(found))

    def counts(self) -> dict[str, int]:
        """Rows per table."""
        return {
            table: int(self._conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
            for table in ("pages", "revisions", "passages", "sources")
        }

    def page(self, title: str) -> PageRef | None:
        """A page by exact title."""
        row = self._conn.execute(
            "SELECT id, title, namespace, redirect FROM pages WHERE title = ?", (title,)
        ).fetchone()
        return PageRef(*row) if row else None

    def revisions(self, page_id: int) -> list[Revision]:
        """Every stored revision of a page, oldest first."""
        return list(self._revisions("WHERE r.page_id = ? ORDER BY r.timestamp, r.id", (page_id,)))

    def snapshot(self, page_id: int, at: dt.datetime | None = None) -> Revision | None:
        """The page as it stood at ``at`` (latest revision at or before it), or the latest."""
        query = "WHERE r.page_id = ?"
        args: list[Any] = [page_id]
        if at is not None:
            query += " AND r.timestamp <= ?"
            args.append(_iso(at))
        query += " ORDER BY r.timestamp DESC, r.id DESC LIMIT 1"
        found = list(self._revisions(query, args))
        return found[0] if found else None

    def _revisions(self, where: str, args: Sequence[Any]) -> Iterator[Revision]:
        rows = self._conn.execute(
            "SELECT r.id, r.parent_id, r.timestamp, r.username, r.user_id, r.ip, r.comment,"
            " r.sha1, r.size, r.minor, r.text, p.id, p.title, p.namespace, p.redirect"
            f" FROM revisions r JOIN pages p ON p.id = r.page_id {where}",
            args,
        )
        for (rid, parent, ts, username, user_id, ip, comment, sha1, size, minor, text,
             pid, title, ns, redirect) in rows:
            who = (
                Contributor(username, user_id, ip)
                if (username or user_id is not None or ip)
                else None
            )
            stamp = _parse_time(ts)
            assert stamp is not None
            yield Revision(
                page=PageRef(pid, title, ns, redirect), id=rid, timestamp=stamp,
                text=text or "", parent_id=parent, contributor=who, comment=comment,
                sha1=sha1, size=size, minor=bool(minor),
            )

    def passages(
        self,
        *,
        revision_id: int | None = None,
        latest_only: bool = False,
        since: dt.datetime | None = None,
        until: dt.datetime | None = None,
    ) -> Iterator[Passage]:
        """Stream passages in storage order.

        Optionally only those of one revision, only each page's latest revision, or those
        whose revision timestamp lies within ``[since, until]``.
        """
        where: list[str] = ["1=1"]
        args: list[Any] = []
        if revision_id is not None:
            where.append("revision_id = ?")
            args.append(revision_id)
        if latest_only:
            where.append(
                "revision_id IN (SELECT r.id FROM revisions r WHERE r.timestamp ="
                " (SELECT MAX(r2.timestamp) FROM revisions r2 WHERE r2.page_id = r.page_id))"
            )
        if since is not None:
            where.append("timestamp >= ?")
            args.append(_iso(since))
        if until is not None:
            where.append("timestamp <= ?")
            args.append(_iso(until))
        rows = self._conn.execute(
            "SELECT id, page_id, revision_id, title, section_path, text, timestamp, sentences,"
            f" tags FROM passages WHERE {' AND '.join(where)} ORDER BY rowid",
            args,
        )
        for pid, page_id, rev_id, title, section, text, ts, sentences, tags in rows:
            yield Passage(
                id=pid, page_id=page_id, revision_id=rev_id, title=title,
                section_path=tuple(json.loads(section)), text=text, timestamp=_parse_time(ts),
                sentences=tuple(json.loads(sentences)), tags=_tags_from(tags),
            )
