"""Persistent response cache: identical requests are answered from SQLite, for free.

The key covers backend kind, model identity, messages and every generation parameter, so a
hit is only ever the answer the same model gave to the same request. WAL mode lets several
processes (a CLI run and a server, or parallel evaluation workers) share one cache file.

Certainty features (``LLM.features``) are kept in a second table, keyed the same way by
backend, model, messages and answer: RiLM's gate reads the same (question, document) prompt
in several places (training, ``ralm-best``, each re-retrieval mode), and a local hidden
state costs a full prompt evaluation each time. Vectors are stored as float64 bytes, so a
cached vector is exactly the computed one.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from freshwiki.llm._features import FeatureVector
from freshwiki.llm._types import Completion, GenerationParams, Message, Usage

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    text TEXT NOT NULL,
    finish_reason TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    refusal TEXT,
    created REAL NOT NULL
)
"""
_FEATURES_SCHEMA = """
CREATE TABLE IF NOT EXISTS features (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    vector BLOB NOT NULL,
    names TEXT NOT NULL,
    detail TEXT NOT NULL,
    created REAL NOT NULL
)
"""


COLUMNS: tuple[str, ...] = ("key", "backend", "model", "request", "text", "finish_reason",
                            "prompt_tokens", "completion_tokens", "refusal", "created")
"""The columns of a stored response, in table order (what an exported cache file holds)."""

FEATURES_FORMAT = 1
"""Part of every features key: raise it when a backend's way of computing features changes,
so vectors computed the old way are not served."""


def features_key(backend: str, model_id: str, messages: Sequence[Message], answer: str) -> str:
    """The sha256 key of a features request (a different space from :func:`request_key`'s)."""
    request = json.dumps(
        {"features": FEATURES_FORMAT, "backend": backend, "model": model_id,
         "messages": [m.to_dict() for m in messages], "answer": answer},
        sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(request.encode("utf-8")).hexdigest()


def request_key(
    backend: str, model_id: str, messages: Sequence[Message], params: GenerationParams
) -> tuple[str, str]:
    """Return (sha256 key, canonical request JSON) for a request."""
    request = json.dumps(
        {
            "backend": backend,
            "model": model_id,
            "messages": [m.to_dict() for m in messages],
            "params": params.to_dict(),
        },
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(request.encode("utf-8")).hexdigest(), request


class ResponseCache:
    """A SQLite-backed map from request key to completion."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(path, check_same_thread=False, timeout=30.0)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(_SCHEMA)
        self._conn.execute(_FEATURES_SCHEMA)
        self._conn.commit()

    def get(self, key: str) -> Completion | None:
        """The stored completion for ``key``, if any."""
        with self._lock:
            row = self._conn.execute(
                "SELECT text, finish_reason, prompt_tokens, completion_tokens, refusal, model"
                " FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        text, finish, p_tok, c_tok, refusal, model = row
        return Completion(
            text=text,
            finish_reason=finish,
            usage=Usage(prompt_tokens=p_tok, completion_tokens=c_tok),
            refusal=refusal,
            model=model,
        )

    def put(self, key: str, backend: str, request: str, completion: Completion) -> None:
        """Store a completion. Later writes of the same key replace earlier ones."""
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    key,
                    backend,
                    completion.model,
                    request,
                    completion.text,
                    completion.finish_reason,
                    completion.usage.prompt_tokens,
                    completion.usage.completion_tokens,
                    completion.refusal,
                    time.time(),
                ),
            )
            self._conn.commit()

    def get_features(self, key: str) -> FeatureVector | None:
        """The stored feature vector for ``key``, if any."""
        with self._lock:
            row = self._conn.execute(
                "SELECT model, kind, vector, names, detail FROM features WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        model, kind, blob, names, detail = row
        values = array("d")
        values.frombytes(blob)
        return FeatureVector(values=tuple(values), kind=kind, model=model,
                             names=tuple(json.loads(names)), detail=json.loads(detail))

    def put_features(self, key: str, backend: str, vector: FeatureVector) -> None:
        """Store a feature vector. Later writes of the same key replace earlier ones."""
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO features VALUES (?,?,?,?,?,?,?,?)",
                (key, backend, vector.model, vector.kind, array("d", vector.values).tobytes(),
                 json.dumps(list(vector.names)), json.dumps(vector.detail), time.time()),
            )
            self._conn.commit()

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(count)

    def rows(self, model: str | None = None) -> list[dict[str, Any]]:
        """Every stored response as a dict of :data:`COLUMNS`, oldest first.

        ``model``: only responses of models whose id starts with it (``qwen2.5-coder-1.5b``
        matches ``qwen2.5-coder-1.5b@cc324af070c2``).
        """
        sql = f"SELECT {', '.join(COLUMNS)} FROM responses"
        args: tuple[int | str, ...] = ()
        if model is not None:
            sql += " WHERE substr(model, 1, ?) = ?"
            args = (len(model), model)
        with self._lock:
            found = self._conn.execute(sql + " ORDER BY created, key", args).fetchall()
        return [dict(zip(COLUMNS, row, strict=True)) for row in found]

    def add_rows(self, rows: Sequence[dict[str, Any]]) -> tuple[int, int]:
        """Store ``rows`` (dicts of :data:`COLUMNS`) not stored yet, all in one transaction.

        Returns (added, already present). A key already here keeps its stored answer: the
        same key is the same request, so both answers came from the same model and settings.
        """
        with self._lock, self._conn:
            before = self._conn.total_changes
            self._conn.executemany(
                f"INSERT OR IGNORE INTO responses ({', '.join(COLUMNS)}) "
                f"VALUES ({', '.join('?' for _ in COLUMNS)})",
                [tuple(row[c] for c in COLUMNS) for row in rows],
            )
            added = self._conn.total_changes - before
        return added, len(rows) - added

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()
