"""A log of every LLM call, so runs and reports can say what they cost.

One row per call through the client: model, tokens, latency, cache hit, attempts, outcome and
an optional tag (a run id, a pipeline stage). :meth:`CallLog.summary` aggregates it.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    tag TEXT,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cached_prompt_tokens INTEGER NOT NULL DEFAULT 0,
    latency_s REAL NOT NULL,
    cache_hit INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    error TEXT
)
"""


_ADDED_COLUMNS = {"cached_prompt_tokens": "INTEGER NOT NULL DEFAULT 0"}
"""Columns added after the first release of the log, with their DDL, for in-place upgrade."""


@dataclass(frozen=True)
class CallRecord:
    """One LLM call as logged."""

    backend: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cache_hit: bool
    attempts: int
    cached_prompt_tokens: int = 0
    error: str | None = None
    tag: str | None = None


@dataclass(frozen=True)
class CallSummary:
    """Aggregate of logged calls for one (backend, model)."""

    backend: str
    model: str
    calls: int
    cache_hits: int
    errors: int
    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int
    mean_latency_s: float
    total_latency_s: float


class CallLog:
    """Append-only SQLite log of calls."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(path, check_same_thread=False, timeout=30.0)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(_SCHEMA)
        self._add_missing_columns()
        self._conn.commit()

    def _add_missing_columns(self) -> None:
        """Upgrade a log written by an older freshwiki: add the columns it lacks.

        The log outlives upgrades in ``FRESHWIKI_HOME``; without this, the first call after an
        upgrade that added a column would fail on the INSERT.
        """
        present = {row[1] for row in self._conn.execute("PRAGMA table_info(calls)")}
        for name, ddl in _ADDED_COLUMNS.items():
            if name not in present:
                self._conn.execute(f"ALTER TABLE calls ADD COLUMN {name} {ddl}")

    def record(self, rec: CallRecord) -> None:
        """Append one call."""
        with self._lock:
            self._conn.execute(
                "INSERT INTO calls (ts, backend, model, tag, prompt_tokens, completion_tokens,"
                " cached_prompt_tokens, latency_s, cache_hit, attempts, error)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    time.time(),
                    rec.backend,
                    rec.model,
                    rec.tag,
                    rec.prompt_tokens,
                    rec.completion_tokens,
                    rec.cached_prompt_tokens,
                    rec.latency_s,
                    int(rec.cache_hit),
                    rec.attempts,
                    rec.error,
                ),
            )
            self._conn.commit()

    def summary(self, *, tag: str | None = None, since: float | None = None) -> list[CallSummary]:
        """Aggregate calls per (backend, model), optionally for one tag or since a time.

        Token totals count only calls that reached the model (cache hits cost nothing).
        """
        where: list[str] = ["1=1"]
        args: list[str | float] = []
        if tag is not None:
            where.append("tag = ?")
            args.append(tag)
        if since is not None:
            where.append("ts >= ?")
            args.append(since)
        query = (
            "SELECT backend, model, COUNT(*), SUM(cache_hit), SUM(error IS NOT NULL),"
            " SUM(CASE WHEN cache_hit = 0 THEN prompt_tokens ELSE 0 END),"
            " SUM(CASE WHEN cache_hit = 0 THEN completion_tokens ELSE 0 END),"
            " SUM(CASE WHEN cache_hit = 0 THEN cached_prompt_tokens ELSE 0 END),"
            " AVG(latency_s), SUM(latency_s)"
            f" FROM calls WHERE {' AND '.join(where)}"
            " GROUP BY backend, model ORDER BY backend, model"
        )
        with self._lock:
            rows = self._conn.execute(query, args).fetchall()
        return [
            CallSummary(b, m, n, int(h), int(e), int(p), int(c), int(k), float(avg), float(tot))
            for b, m, n, h, e, p, c, k, avg, tot in rows
        ]

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()
