"""The call log keeps working across upgrades of its schema."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from freshwiki.llm import CallLog, CallRecord

# The table as the first release wrote it, before cached_prompt_tokens existed.
OLD_SCHEMA = """
CREATE TABLE calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    tag TEXT,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    cache_hit INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    error TEXT
)
"""


def test_a_log_from_before_cached_prompt_tokens_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "calls.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(OLD_SCHEMA)
        conn.execute("INSERT INTO calls (ts, backend, model, prompt_tokens, completion_tokens,"
                     " latency_s, cache_hit, attempts)"
                     " VALUES (1.0, 'local', 'm', 10, 5, 1.0, 0, 1)")
    log = CallLog(path)
    log.record(CallRecord(backend="local", model="m", prompt_tokens=20, completion_tokens=7,
                          latency_s=2.0, cache_hit=False, attempts=1, cached_prompt_tokens=12))
    (summary,) = log.summary()
    assert (summary.calls, summary.prompt_tokens, summary.cached_prompt_tokens) == (2, 30, 12)
