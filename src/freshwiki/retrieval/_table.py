"""The index's passage table: whole passages in SQLite, filter and time columns in numpy.

Why keep the passages themselves (and not only ids to look up in the corpus store): a hit
then carries its :class:`~freshwiki.records.Passage` (text, heading, timestamp, tags), so an
index is usable on its own: built from any iterable of passages, queried by a server that
never opens the corpus, and fetching k passages costs k primary-key reads (~10 µs each).
The price is disk: the text is stored twice (once in the corpus, once here), ~0.6 KB per
passage.

What queries touch for every candidate lives in numpy arrays instead, so filters and the time
rerank never loop over passages in Python:

- ``page_id`` and ``title_code`` (an int per distinct title) for the article filter, with a
  title-sorted permutation so a filter costs O(matches), not O(n);
- ``stamp`` (revision timestamp, POSIX seconds, NaN when unknown) with a time-sorted
  permutation for ``since``/``until``;
- the years each passage mentions (:func:`~freshwiki.retrieval._dates.extract_years`) in
  CSR form (``year_ptr``, ``years``), for the time rerank.

Durability: SQLite rows are written as passages are added, but the arrays are written only by
:meth:`PassageTable.save`, which records how many passages they cover. Rows past that count
(from an add that was never saved, or a crash) are deleted on load, so the table, the arrays
and the BM25/dense indexes always agree.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from freshwiki.records import MaintenanceTag, Passage
from freshwiki.retrieval._dates import extract_years
from freshwiki.retrieval._time import SECONDS_PER_YEAR

_SCHEMA = """
CREATE TABLE IF NOT EXISTS passages (
    key INTEGER PRIMARY KEY,
    id TEXT UNIQUE NOT NULL,
    page_id INTEGER NOT NULL,
    revision_id INTEGER NOT NULL,
    title TEXT NOT NULL,
    section_path TEXT NOT NULL,
    text TEXT NOT NULL,
    timestamp TEXT,
    sentences TEXT NOT NULL,
    tags TEXT NOT NULL,
    meta TEXT NOT NULL
);
"""

_COLUMNS = "key, id, page_id, revision_id, title, section_path, text, timestamp, sentences,"\
    " tags, meta"


def to_utc(value: dt.datetime | dt.date) -> dt.datetime:
    """A timezone-aware UTC datetime; naive values are taken as UTC, dates as midnight."""
    if not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)


def _stamp(value: dt.datetime | None) -> float:
    return float("nan") if value is None else to_utc(value).timestamp()


def _iso(value: dt.datetime | None) -> str | None:
    return None if value is None else to_utc(value).isoformat()


def _row(key: int, p: Passage) -> tuple[Any, ...]:
    return (
        key, p.id, p.page_id, p.revision_id, p.title,
        json.dumps(list(p.section_path), ensure_ascii=False), p.text, _iso(p.timestamp),
        json.dumps(list(p.sentences), ensure_ascii=False),
        json.dumps([dataclasses.asdict(t) for t in p.tags], ensure_ascii=False),
        json.dumps(p.meta, ensure_ascii=False, default=str),
    )


def _passage(row: Sequence[Any]) -> Passage:
    (_, pid, page_id, rev_id, title, section, text, stamp, sentences, tags, meta) = row
    return Passage(
        id=pid, page_id=page_id, revision_id=rev_id, title=title,
        section_path=tuple(json.loads(section)), text=text,
        timestamp=dt.datetime.fromisoformat(stamp) if stamp else None,
        sentences=tuple(json.loads(sentences)),
        tags=tuple(MaintenanceTag(**t) for t in json.loads(tags)),
        meta=json.loads(meta),
    )


class PassageTable:
    """Passages by key, plus the per-passage arrays filters and the time rerank read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(path, timeout=60.0, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(_SCHEMA)
        self.page_id = np.zeros(0, dtype=np.int64)
        self.title_code = np.zeros(0, dtype=np.int32)
        self.stamp = np.zeros(0, dtype=np.float64)
        self.year_ptr = np.zeros(1, dtype=np.int64)
        self.years = np.zeros(0, dtype=np.int16)
        self.titles: list[str] = []
        self._title_codes: dict[str, int] = {}
        self._by_title: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = None
        self._by_time: tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]] | None = None

    def __len__(self) -> int:
        return len(self.page_id)

    # -- writing ---------------------------------------------------------------------------

    def known(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are already in the table."""
        found: set[str] = set()
        with self._lock:
            for start in range(0, len(ids), 500):
                chunk = list(ids[start : start + 500])
                marks = ",".join("?" * len(chunk))
                found.update(
                    row[0] for row in self._conn.execute(
                        f"SELECT id FROM passages WHERE id IN ({marks})", chunk
                    )
                )
        return found

    def add(self, passages: Sequence[Passage]) -> None:
        """Append passages as the next keys (ids must be new: see :meth:`known`)."""
        base = len(self)
        with self._lock, self._conn:
            self._conn.executemany(
                f"INSERT INTO passages ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                [_row(base + i, p) for i, p in enumerate(passages)],
            )
        codes = []
        for p in passages:
            code = self._title_codes.get(p.title)
            if code is None:
                code = self._title_codes[p.title] = len(self.titles)
                self.titles.append(p.title)
            codes.append(code)
        mentioned = [extract_years(p.indexed_text) for p in passages]
        counts = np.fromiter((len(m) for m in mentioned), dtype=np.int64, count=len(mentioned))
        self.page_id = np.concatenate(
            [self.page_id, np.fromiter((p.page_id for p in passages), dtype=np.int64)]
        )
        self.title_code = np.concatenate([self.title_code, np.asarray(codes, dtype=np.int32)])
        self.stamp = np.concatenate(
            [self.stamp, np.fromiter((_stamp(p.timestamp) for p in passages), np.float64)]
        )
        self.year_ptr = np.concatenate([self.year_ptr, self.year_ptr[-1] + np.cumsum(counts)])
        self.years = np.concatenate(
            [self.years, np.fromiter((y for m in mentioned for y in m), dtype=np.int16)]
        )
        self._by_title = self._by_time = None

    # -- reading ---------------------------------------------------------------------------

    def get(self, keys: Sequence[int]) -> list[Passage]:
        """Passages by key, in the order asked."""
        if not keys:
            return []
        marks = ",".join("?" * len(keys))
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_COLUMNS} FROM passages WHERE key IN ({marks})", list(keys)
            ).fetchall()
        by_key = {row[0]: _passage(row) for row in rows}
        return [by_key[k] for k in keys]

    def key_of(self, passage_id: str) -> int | None:
        """The key of a passage id, if indexed."""
        with self._lock:
            row = self._conn.execute(
                "SELECT key FROM passages WHERE id = ?", (passage_id,)
            ).fetchone()
        return int(row[0]) if row and row[0] < len(self) else None

    def mentioned_years(self, keys: npt.NDArray[np.int64]) -> list[npt.NDArray[np.int16]]:
        """The years each passage mentions."""
        return [self.years[self.year_ptr[k] : self.year_ptr[k + 1]] for k in keys.tolist()]

    def stamp_years(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """Revision timestamps as fractional years (NaN when unknown)."""
        result: npt.NDArray[np.float64] = 1970.0 + self.stamp[keys] / SECONDS_PER_YEAR
        return result

    def allowed(
        self,
        titles: Iterable[str] | None,
        since: dt.datetime | dt.date | None,
        until: dt.datetime | dt.date | None,
    ) -> npt.NDArray[np.bool_] | None:
        """The mask of passages passing the filters, or ``None`` when there are none.

        Args:
            titles: Article titles (exact, with ``_`` read as a space as in URLs).
            since: Earliest revision timestamp, inclusive.
            until: Latest revision timestamp, inclusive. A bare date means its whole day.
        """
        n = len(self)
        if titles is None and since is None and until is None:
            return None
        mask = np.ones(n, dtype=bool)
        if titles is not None:
            if self._by_title is None:
                order = np.argsort(self.title_code, kind="stable").astype(np.int64)
                starts = np.searchsorted(
                    self.title_code[order], np.arange(len(self.titles) + 1)
                ).astype(np.int64)
                self._by_title = (order, starts)
            order, starts = self._by_title
            mask[:] = False
            for title in {t.replace("_", " ").strip() for t in titles}:
                code = self._title_codes.get(title)
                if code is not None:
                    mask[order[starts[code] : starts[code + 1]]] = True
        if since is not None or until is not None:
            if self._by_time is None:
                order = np.argsort(self.stamp, kind="stable").astype(np.int64)  # NaN last
                self._by_time = (order, self.stamp[order])
            order, sorted_stamps = self._by_time
            known = int(np.count_nonzero(~np.isnan(sorted_stamps)))
            lo = 0 if since is None else int(
                np.searchsorted(sorted_stamps[:known], to_utc(since).timestamp(), "left")
            )
            hi = known
            if until is not None:
                end = to_utc(until)
                if not isinstance(until, dt.datetime):
                    end += dt.timedelta(days=1) - dt.timedelta(microseconds=1)
                hi = int(np.searchsorted(sorted_stamps[:known], end.timestamp(), "right"))
            in_range = np.zeros(n, dtype=bool)
            in_range[order[lo:hi]] = True
            mask &= in_range
        return mask

    # -- persistence -----------------------------------------------------------------------

    def save(self, directory: Path) -> None:
        """Write the arrays into ``directory`` (the SQLite rows are already on disk)."""
        directory.mkdir(parents=True, exist_ok=True)
        with self._lock:
            self._conn.commit()
        np.savez(
            directory / "table.npz", page_id=self.page_id, title_code=self.title_code,
            stamp=self.stamp, year_ptr=self.year_ptr, years=self.years,
        )
        (directory / "titles.json").write_text(
            json.dumps(self.titles, ensure_ascii=False), encoding="utf-8"
        )

    @classmethod
    def load(cls, path: Path, directory: Path | None) -> PassageTable:
        """Open the SQLite table at ``path`` with arrays from ``directory`` (``None``: empty).

        Rows beyond the saved arrays (an unsaved add) are deleted.
        """
        table = cls(path)
        if directory is not None:
            with np.load(directory / "table.npz") as data:
                table.page_id = data["page_id"]
                table.title_code = data["title_code"]
                table.stamp = data["stamp"]
                table.year_ptr = data["year_ptr"]
                table.years = data["years"]
            table.titles = json.loads((directory / "titles.json").read_text(encoding="utf-8"))
            table._title_codes = {t: i for i, t in enumerate(table.titles)}
        with table._lock, table._conn:
            table._conn.execute("DELETE FROM passages WHERE key >= ?", (len(table),))
        return table

    def close(self) -> None:
        """Commit and close the database."""
        with self._lock:
            self._conn.commit()
            self._conn.close()
