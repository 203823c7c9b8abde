"""Indexes of article snapshots, opened once per folder and shared by whoever searches them.

A benchmark that evaluates each snapshot against the Wikipedia of that moment (GrowOVER) keeps
one :class:`~freshwiki.retrieval.HybridIndex` folder per snapshot and names it in each sample;
the systems that answer those samples (``ralm``, ``rilm``) open it from there. Both sides need
the same cache, and it is a retrieval concern, so it lives here rather than in the benchmark
(systems sit below benchmarks and must not import them).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from freshwiki.retrieval._embed import Embedder
from freshwiki.retrieval._hybrid import HybridIndex

if TYPE_CHECKING:
    from freshwiki.config import Settings


class SnapshotIndexes:
    """Snapshot indexes opened once per path and shared, with one embedder for all.

    Thread-safe: systems search from worker threads. The embedder is created on first use
    (the default one, caching under ``settings.home``, default: the environment's settings)
    unless one is given.
    """

    def __init__(self, embedder: Embedder | None = None, *,
                 settings: Settings | None = None) -> None:
        self._embedder = embedder
        self._settings = settings
        self._open: dict[Path, HybridIndex] = {}
        self._lock = threading.Lock()

    def get(self, path: Path | str) -> HybridIndex:
        """The index in ``path``, loaded on first use.

        Raises:
            IndexNotFoundError: No index there.
        """
        from freshwiki.config import load_settings

        key = Path(path).resolve()
        with self._lock:
            if key not in self._open:
                if self._embedder is None:
                    self._embedder = Embedder.default(self._settings
                                                      or load_settings().settings)
                self._open[key] = HybridIndex.load(key, embedder=self._embedder)
            return self._open[key]

    def close(self) -> None:
        """Close every opened index (the embedder stays usable)."""
        with self._lock:
            for index in self._open.values():
                index.close()
            self._open.clear()


_SHARED = SnapshotIndexes()


def shared_snapshot_indexes() -> SnapshotIndexes:
    """The process-wide cache (what ``growover_retriever`` uses when given none)."""
    return _SHARED
