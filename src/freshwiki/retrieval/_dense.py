"""Dense retrieval with FAISS: exact while small, HNSW when large, exact under filters.

Index choice, by size (384-d float32, one query at a time, 2 cores):

- up to ``flat_max`` (50,000) vectors, ``IndexFlatIP``: exact, no training; 0.33 ms p50 at
  11k real passages. Exact search reads every vector (it is memory-bound), so it grows
  linearly: a probe with random vectors took ~5 ms at 50k and ~40 ms at 100k, so it cannot
  serve a million passages in a 20 ms budget;
- above, ``IndexHNSWFlat`` (M=32, efConstruction=80, inner product). It takes incremental
  adds with no training step (IVF would need k-means training, and its centroids would go
  stale as passages are added). The switch happens inside :meth:`DenseIndex.add` when the
  size crosses ``flat_max``: the graph is built once from the stored vectors.

efSearch is 512 (raised to ``k`` when ``k`` is larger), chosen with ``experiments/
retrieval.py`` (the dense index asked for 100 hits, as the hybrid search asks, against
exact search over the same vectors). On the 11k real passages, 128 already finds 99.4% of
the exact top 10. On the million-passage scaled index (real passages repeated, vectors
derived from the real ones plus noise, so clustered), 128 found 85% of the exact top 10,
94% counting a copy as its original, with some queries finding none of the right passages;
512 finds 93% (99.3%) in 1.3 ms instead of 0.4 ms, and 2048 96% (99.8%) in 5.4 ms. A
hybrid query spends ~12 ms encoding itself anyway, so ~1 ms buys the dense half
robustness. One title query of 500 ("The Stork Said Yes") is missed at any efSearch (its
nodes are hard to reach in the graph): BM25 ranks the article first, but the fused list
then only has it 7th. Building costs ~3,100 vectors/s on 2
cores (5.4 minutes per million), most of building an index once vectors are cached.

Filters (``allowed`` masks) must never make a search return fewer than ``k`` hits when ``k``
allowed passages exist, which approximate search under a selector cannot promise. So:

- a selective filter (at most ``exact_max`` allowed vectors, or any filter on a flat index)
  is searched exactly over the allowed rows only (see :meth:`DenseIndex._exact`);
- a broad filter on HNSW searches the graph with a FAISS ``IDSelectorBitmap`` and, if that
  returns too few hits, falls back to exact search over the allowed rows.

Exact search over scattered allowed rows of a large index is memory-bound at ~1 µs per
allowed vector (measured at 1M: 11 ms for 10k allowed, 26 ms for 50k), so a filter
allowing 1-5% of a million passages is the slow case (HNSW under such a filter mostly finds
too few and falls back).

The vectors are read in place from the FAISS index's own storage (no second copy), and the
index is saved with ``faiss.write_index``. Keys are row numbers 0..n-1 in add order.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import faiss as _faiss
import numpy as np
import numpy.typing as npt

from freshwiki.retrieval._bm25 import Hits, top_k
from freshwiki.retrieval._errors import RetrievalError

FLAT_MAX = 50_000
EXACT_MAX = 50_000
GATHER_MAX = 2_048
EF_SEARCH = 512

# FAISS ships partial type hints that miss most of its SWIG API; treat it as untyped.
faiss: Any = _faiss


@contextmanager
def _omp_threads(n: int) -> Iterator[None]:
    previous = faiss.omp_get_max_threads()
    if previous == n:
        yield
        return
    faiss.omp_set_num_threads(n)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(previous)


# Searches run on one OpenMP thread (set per call, so importing this module changes no
# process-wide setting). A single query gains nothing from more, and FAISS's OpenMP threads
# keep spinning after a search, competing with the next query encoding (torch shares the
# OpenMP runtime): with two threads a dense query took ~16 ms instead of ~10 ms (measured).
# Building (HNSW insertion) is parallel and uses every core, see ``DenseIndex.add``.
_SEARCH_THREADS = 1


class DenseIndex:
    """Inner-product search over unit vectors (see the module doc for the index choice).

    Args:
        dimension: Vector size (384 for all-MiniLM-L6-v2).
        flat_max: Largest size kept in an exact flat index.
        exact_max: Largest allowed-set size searched exactly under a filter on HNSW.
        hnsw_m: HNSW graph degree.
        ef_construction: HNSW build-time beam width.
        ef_search: HNSW query-time beam width (raised to ``k`` when ``k`` is larger).
    """

    def __init__(
        self,
        dimension: int,
        *,
        flat_max: int = FLAT_MAX,
        exact_max: int = EXACT_MAX,
        hnsw_m: int = 32,
        ef_construction: int = 80,
        ef_search: int = EF_SEARCH,
    ) -> None:
        self.dimension = dimension
        self.flat_max = flat_max
        self.exact_max = exact_max
        self.hnsw_m = hnsw_m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self._index: Any = faiss.IndexFlatIP(dimension)

    def __len__(self) -> int:
        return int(self._index.ntotal)

    @property
    def kind(self) -> str:
        """``flat`` or ``hnsw``."""
        return "flat" if isinstance(self._index, faiss.IndexFlat) else "hnsw"

    def vectors(self) -> npt.NDArray[np.float32]:
        """A read-only view of every stored vector, row = key (valid until the next add)."""
        n = len(self)
        if n == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        storage = self._index if self.kind == "flat" else faiss.downcast_index(
            self._index.storage
        )
        view: npt.NDArray[np.float32] = faiss.rev_swig_ptr(
            storage.get_xb(), n * self.dimension
        ).reshape(n, self.dimension)
        view.flags.writeable = False
        return view

    def add(self, vectors: npt.NDArray[np.float32]) -> None:
        """Append vectors as the next keys; switches to HNSW when crossing ``flat_max``."""
        if vectors.ndim != 2 or vectors.shape[1] != self.dimension:
            raise RetrievalError(
                f"dense index expects vectors of shape (n, {self.dimension}), got "
                f"{vectors.shape}"
            )
        if len(vectors) == 0:
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        with _omp_threads(os.cpu_count() or 1):
            if self.kind == "flat" and len(self) + len(vectors) > self.flat_max:
                hnsw = faiss.IndexHNSWFlat(
                    self.dimension, self.hnsw_m, faiss.METRIC_INNER_PRODUCT
                )
                hnsw.hnsw.efConstruction = self.ef_construction
                hnsw.hnsw.efSearch = self.ef_search
                hnsw.add(np.array(self.vectors()))
                self._index = hnsw
            self._index.add(vectors)

    def _exact(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        keys: npt.NDArray[np.int64],
        allowed: npt.NDArray[np.bool_],
    ) -> Hits:
        """The exact top ``k`` among the allowed rows, ties to the smaller key.

        Never a numpy matrix product over many rows: that goes to OpenBLAS, whose threads
        measured 20x slower than one thread (23 ms against 1 ms for 11k rows) on the shared
        2-core machine. A few rows are gathered and dotted in numpy's own loop; more are
        scanned by FAISS's flat search under a bitmap selector, on one thread, computing
        only the allowed rows' products.
        """
        if len(keys) <= GATHER_MAX:
            scores = np.einsum("ij,j->i", self.vectors()[keys], query)
            return top_k(keys, scores.astype(np.float64), k)
        flat = self._index if self.kind == "flat" else faiss.downcast_index(
            self._index.storage
        )
        bits = np.packbits(allowed, bitorder="little")
        params = faiss.SearchParameters(sel=faiss.IDSelectorBitmap(len(self),
                                                                   faiss.swig_ptr(bits)))
        with _omp_threads(_SEARCH_THREADS):
            scores, ids = flat.search(query[None, :], min(k, len(keys)), params=params)
        found = ids[0] >= 0
        order = np.lexsort((ids[0][found], -scores[0][found]))
        return [(int(ids[0][found][i]), float(scores[0][found][i])) for i in order]

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        allowed: npt.NDArray[np.bool_] | None = None,
    ) -> Hits:
        """The ``k`` passages whose vectors have the largest inner product with ``query``.

        Args:
            query: A unit vector of the index's dimension.
            k: How many to return (fewer only when fewer passages are allowed).
            allowed: Optional mask over keys; passages outside it are never returned.
        """
        n = len(self)
        if n == 0 or k <= 0:
            return []
        query = np.ascontiguousarray(query, dtype=np.float32).reshape(self.dimension)
        if allowed is None:
            # Per-call parameters, not index state, so concurrent searches do not interfere.
            params = (
                faiss.SearchParametersHNSW(efSearch=max(self.ef_search, k))
                if self.kind == "hnsw" else None
            )
            with _omp_threads(_SEARCH_THREADS):
                scores, ids = self._index.search(query[None, :], min(k, n), params=params)
            return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True)
                    if i >= 0]
        keys = np.flatnonzero(allowed).astype(np.int64)
        if self.kind == "flat" or len(keys) <= self.exact_max:
            return self._exact(query, k, keys, allowed)
        bits = np.packbits(allowed, bitorder="little")
        selector = faiss.IDSelectorBitmap(n, faiss.swig_ptr(bits))
        params = faiss.SearchParametersHNSW(sel=selector, efSearch=max(self.ef_search, k))
        with _omp_threads(_SEARCH_THREADS):
            scores, ids = self._index.search(query[None, :], min(k, n), params=params)
        hits = [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]
        if len(hits) < min(k, len(keys)):
            return self._exact(query, k, keys, allowed)
        return hits

    # -- persistence -----------------------------------------------------------------------

    def save(self, directory: Path) -> None:
        """Write the FAISS index and settings into ``directory`` (created)."""
        directory.mkdir(parents=True, exist_ok=True)
        faiss.write_index(self._index, str(directory / "dense.faiss"))
        config = {
            "dimension": self.dimension, "flat_max": self.flat_max,
            "exact_max": self.exact_max, "hnsw_m": self.hnsw_m,
            "ef_construction": self.ef_construction, "ef_search": self.ef_search,
            "kind": self.kind, "passages": len(self),
        }
        (directory / "dense.json").write_text(json.dumps(config), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> DenseIndex:
        """Read an index written by :meth:`save`."""
        config = json.loads((directory / "dense.json").read_text(encoding="utf-8"))
        index = cls(
            config["dimension"], flat_max=config["flat_max"], exact_max=config["exact_max"],
            hnsw_m=config["hnsw_m"], ef_construction=config["ef_construction"],
            ef_search=config["ef_search"],
        )
        index._index = faiss.read_index(str(directory / "dense.faiss"))
        if index.kind == "hnsw":
            index._index.hnsw.efSearch = index.ef_search
        return index
