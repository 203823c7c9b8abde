"""The hybrid index: BM25 + dense + fusion + time-aware rerank, persisted, incremental.

A query runs BM25 and dense retrieval over the same passages (both restricted by the
filters), fuses their top ``depth`` (100) lists, optionally reorders the top ``pool`` (50) by
time intent (:mod:`freshwiki.retrieval._time`), and returns the top ``k`` as
hits (:class:`SearchHit`) carrying whole passages.

Fusion default, measured: ``minmax`` with BM25 weighted 0.7 (``experiments/retrieval.py``
has the command and every variant). Corpus: the 10,419 WikiChat topic leads plus the
WikiContradict paragraphs, 11,237 passages. Article-level recall@1 / recall@10 / MRR@10:

=====================  =====================  =====================  =====================
method                 WikiContradict (253)   topic titles (1,000)   paraphrases (30)
=====================  =====================  =====================  =====================
bm25                   .964 / .996 / .976     .986 / .999 / .992     .467 / .867 / .583
dense                  .968 / .996 / .979     .972 / .999 / .982     .800 / 1.00 / .881
rrf (k=60)             .988 / .996 / .991     .982 / .999 / .990     .733 / 1.00 / .836
weighted rrf, bm25 .5  .984 / 1.00 / .990     .983 / .999 / .990     .833 / 1.00 / .889
minmax, bm25 1.0       .992 / 1.00 / .995     .990 / 1.00 / .995     .733 / 1.00 / .850
minmax, bm25 .7 (dflt) .996 / 1.00 / .998     .990 / .999 / .994     .767 / 1.00 / .872
=====================  =====================  =====================  =====================

Every fusion reaches the best single method's recall@10 on all three sets; RRF, the usual
default, ranks worse than min-max at the top (recall@1, MRR) on the two large sets, because
ranks discard how far ahead a clear winner is. Min-max beats RRF even unweighted; the 0.7
weight was picked on these same sets (there is no held-out one), and is the best of the
weights tried across all three. Recall@10 is near 1 on the two real sets because their
queries name their article; the hand-written paraphrases are where dense retrieval matters.

Latency (``experiments/retrieval.py``: one query at a time, 2 cores shared with other work,
both sizes interleaved in one process; p50 / p99 ms). At 11,237 passages: BM25 0.8 / 4.9,
dense 13.7 / 25.2, hybrid 14.6 / 25.7. At a million (the real passages repeated with
perturbation, vectors derived from the real ones): BM25 3.0 / 7.6, dense 14.5 / 26.8,
hybrid 17.7 / 31.3, with a broad time filter 20.0 / 33.0. Encoding the query is 12.2 ms of
each (the same at both sizes), so the index itself costs 2.3 ms at 11k and 5.5 ms at 1M.
The query is encoded once per search; fusion and the time rerank see at most ``depth``
candidates per list whatever the size, and only the final ``k`` passages are read from
SQLite. Building with every vector cached: 6,000-10,000 passages/s at 11k (~3,300 before
year extraction was sped up); at 1M 2,300/s (HNSW insertion 3,100/s, the passage table
13,800/s, BM25 28,000/s), 4.5 GB peak RSS, 2.9 GB on disk; serving it takes 2.2 GB.
Embedding is the cold-cache bottleneck: 61 passages/s on an idle machine (see
:mod:`freshwiki.retrieval._embed`).

Filters are applied *before* ranking (each component only ever sees allowed passages), so a
filtered search returns ``k`` hits whenever ``k`` allowed passages match, however selective
the filter; see :mod:`freshwiki.retrieval._dense` for how FAISS honours that.

On disk, a folder holds ``index.json`` (the manifest: settings, passage count, the current
generation), ``passages.sqlite`` (the passage table) and one ``gen-NNNNNN`` folder with the
BM25, dense and table arrays. :meth:`HybridIndex.save` writes a new generation and then
replaces the manifest atomically, so a crash mid-save leaves the previous index intact. The
manifest also carries the index's content digest (:mod:`freshwiki.retrieval._content`), which
run identities record instead of the index's name or path (:func:`index_content`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Literal

import numpy as np

from freshwiki.config import Settings, load_settings
from freshwiki.records import Passage
from freshwiki.retrieval._bm25 import BM25Index, Hits
from freshwiki.retrieval._content import (
    EMPTY_CHAIN,
    cached_content,
    content_record,
    embedder_identity,
    embedder_weights,
    extend_chain,
)
from freshwiki.retrieval._dense import DenseIndex
from freshwiki.retrieval._embed import Embedder
from freshwiki.retrieval._errors import IndexNotFoundError, RetrievalError
from freshwiki.retrieval._fusion import FUSION_METHODS, Fused, FusionMethod, fuse
from freshwiki.retrieval._table import PassageTable
from freshwiki.retrieval._time import DEFAULT_TIME_WEIGHT, TimeIntent, rerank_order, time_scores

FORMAT_VERSION = 1
MANIFEST = "index.json"
TABLE_DB = "passages.sqlite"

Method = Literal["hybrid", "bm25", "dense"]
METHODS: tuple[str, ...] = ("hybrid", "bm25", "dense")

Progress = Callable[[str, int, "int | None"], None]
"""Called with (stage, done, total or None when unknown). Stages: ``embed``, ``bm25``."""


@dataclass(frozen=True)
class IndexConfig:
    """Settings of a hybrid index, saved in its manifest.

    Attributes:
        fusion: Default fusion method (``rrf``, ``weighted_rrf``, ``minmax``).
        bm25_weight: Weight of BM25 relative to dense (1) for the weighted methods.
        rrf_k: Rank offset of RRF.
        depth: Hits taken from each component before fusion.
        pool: Fused candidates the time rerank may reorder.
        time_weight: Share of the time match in the rerank blend.
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
        stemmer: PyStemmer algorithm, ``None``, or ``auto`` (English if installed).
        flat_max: Largest dense index kept exact before switching to HNSW.
    """

    fusion: FusionMethod = "minmax"
    bm25_weight: float = 0.7
    rrf_k: int = 60
    depth: int = 100
    pool: int = 50
    time_weight: float = DEFAULT_TIME_WEIGHT
    k1: float = 1.5
    b: float = 0.75
    stemmer: str | None = "auto"
    flat_max: int = 50_000

    def __post_init__(self) -> None:
        if self.fusion not in FUSION_METHODS:
            raise RetrievalError(
                f"unknown fusion method {self.fusion!r}",
                hint=f"use one of {', '.join(FUSION_METHODS)}.",
            )


@dataclass(frozen=True)
class SearchHit:
    """One search result.

    Attributes:
        passage: The passage itself (text, heading, page, revision, timestamp, tags).
        score: The score the results are ordered by: the fused (or single-method) score, or
            the time-blended score when a time intent applied.
        rank: 1-based position in the results.
        key: The passage's row in the index.
        fused_score: The fused (or single-method) retrieval score before any time rerank.
        bm25_rank: Position in the BM25 list (1-based), ``None`` if not in its top ``depth``
            or BM25 was not run.
        dense_rank: Same for the dense list.
        bm25_score: BM25 score, when ranked by BM25.
        dense_score: Cosine similarity, when ranked by dense retrieval.
        time_score: How well the passage's dates match the time intent, in [0, 1];
            ``None`` without an intent.
    """

    passage: Passage
    score: float
    rank: int
    key: int
    fused_score: float
    bm25_rank: int | None = None
    dense_rank: int | None = None
    bm25_score: float | None = None
    dense_score: float | None = None
    time_score: float | None = None

    @property
    def id(self) -> str:
        """The passage id."""
        return self.passage.id

    @property
    def title(self) -> str:
        """The article title."""
        return self.passage.title


def default_index_dir(settings: Settings, name: str = "main") -> Path:
    """The conventional folder of a named index: ``home/indexes/NAME``."""
    return settings.home / "indexes" / name


def index_content(directory: Path) -> dict[str, Any]:
    """The content record of the index saved in ``directory``; its ``digest`` identifies it.

    Read from the manifest, where :meth:`HybridIndex.save` writes it; for an index saved
    before manifests carried one, computed once from the passage table and cached beside the
    manifest (:func:`~freshwiki.retrieval._content.cached_content`). Never loads the index.

    Raises:
        IndexNotFoundError: ``directory`` holds no saved index.
    """
    path = directory / MANIFEST
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise IndexNotFoundError(
            f"no index in {directory} (no {MANIFEST})",
            hint="build one first with HybridIndex.build(passages, directory).",
        ) from exc
    manifest = json.loads(raw)
    content = manifest.get("content")
    if isinstance(content, dict) and "digest" in content:
        return dict(content)
    return cached_content(directory, raw, manifest, directory / TABLE_DB)


def _batches(items: Iterable[Passage], size: int) -> Iterator[list[Passage]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def _generation_dir(directory: Path, generation: int) -> Path:
    return directory / f"gen-{generation:06d}"


class HybridIndex:
    """BM25 + dense passage index with fusion, time rerank and filters.

    Create one with :meth:`build` or open one with :meth:`load`; :meth:`add` passages, then
    :meth:`save`. Searches may run from several threads at once; ``add`` and ``save`` must
    not run concurrently with anything else on the same index.
    """

    def __init__(
        self,
        directory: Path,
        *,
        config: IndexConfig,
        bm25: BM25Index,
        dense: DenseIndex,
        table: PassageTable,
        embedder: Embedder | None,
        generation: int = 0,
        embedder_name: str = Embedder.name,
    ) -> None:
        self.directory = directory
        self._embedder_name = embedder.name if embedder is not None else embedder_name
        self.config = config
        self._bm25 = bm25
        self._dense = dense
        self._table = table
        self._embedder = embedder
        self._generation = generation
        self._content: dict[str, Any] | None = None

    # -- lifecycle -------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        passages: Iterable[Passage],
        directory: Path,
        *,
        embedder: Embedder | None = None,
        config: IndexConfig | None = None,
        progress: Progress | None = None,
        overwrite: bool = False,
        batch_size: int = 4096,
    ) -> HybridIndex:
        """Index ``passages`` into a new index in ``directory`` and save it.

        Args:
            passages: Any iterable (e.g. ``CorpusStore.passages(latest_only=True)``); it is
                consumed in batches, so memory does not grow with a streamed corpus beyond
                the index itself. Passages whose id repeats are indexed once.
            directory: Folder for the index (created).
            embedder: The embedder (default: all-MiniLM-L6-v2 with the embedding cache under
                ``Settings.home``, so a rebuild re-embeds nothing).
            config: Index settings (default :class:`IndexConfig`).
            progress: Progress callback, see :data:`Progress`.
            overwrite: Replace an index already in ``directory``; otherwise that is an error.
            batch_size: Passages read, embedded and stored at a time.
        """
        config = config or IndexConfig()
        if (directory / MANIFEST).exists() or (directory / TABLE_DB).exists():
            if not overwrite:
                raise RetrievalError(
                    f"{directory} already holds an index",
                    hint="load it with HybridIndex.load and add() to it, or pass "
                    "overwrite=True to rebuild it from scratch.",
                )
            cls._remove(directory)
        directory.mkdir(parents=True, exist_ok=True)
        embedder = embedder or Embedder.default(load_settings().settings)
        index = cls(
            directory,
            config=config,
            bm25=BM25Index(k1=config.k1, b=config.b, stemmer=config.stemmer),
            dense=DenseIndex(embedder.dimension, flat_max=config.flat_max),
            table=PassageTable(directory / TABLE_DB),
            embedder=embedder,
        )
        index.add(passages, progress=progress, batch_size=batch_size)
        index.save()
        return index

    @staticmethod
    def _remove(directory: Path) -> None:
        for name in (MANIFEST, TABLE_DB, f"{TABLE_DB}-wal", f"{TABLE_DB}-shm"):
            (directory / name).unlink(missing_ok=True)
        for child in directory.glob("gen-*"):
            shutil.rmtree(child)

    @classmethod
    def load(cls, directory: Path, *, embedder: Embedder | None = None) -> HybridIndex:
        """Open a saved index.

        Args:
            directory: The index folder.
            embedder: Used for dense queries and adds; loaded lazily (default embedder, with
                the cache under ``Settings.home``) when not given, so a BM25-only user never
                pays for loading the model.

        Raises:
            IndexNotFoundError: When ``directory`` holds no saved index.
        """
        manifest_path = directory / MANIFEST
        if not manifest_path.is_file():
            raise IndexNotFoundError(
                f"no index in {directory} (no {MANIFEST})",
                hint="build one first with HybridIndex.build(passages, directory).",
            )
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT_VERSION:
            raise RetrievalError(
                f"{manifest_path} has index format {manifest.get('format')!r}, this freshwiki"
                f" reads format {FORMAT_VERSION}",
                hint="rebuild the index (embeddings are cached, so it is quick).",
            )
        if embedder is not None and (
            embedder.name != manifest["embedder"]["name"]
            or embedder.dimension != manifest["embedder"]["dimension"]
        ):
            raise RetrievalError(
                f"index {directory} was built with {manifest['embedder']}, not "
                f"{embedder.name} ({embedder.dimension}-d)",
                hint="load it with the embedder it was built with, or rebuild it.",
            )
        generation = int(manifest["generation"])
        gen = _generation_dir(directory, generation)
        index = cls(
            directory,
            config=IndexConfig(**manifest["config"]),
            bm25=BM25Index.load(gen / "bm25"),
            dense=DenseIndex.load(gen / "dense"),
            table=PassageTable.load(directory / TABLE_DB, gen / "table"),
            embedder=embedder,
            generation=generation,
            embedder_name=str(manifest["embedder"]["name"]),
        )
        content = manifest.get("content")
        index._content = dict(content) if isinstance(content, dict) else None
        if not len(index._bm25) == len(index._dense) == len(index._table) == manifest[
            "passages"
        ]:
            raise RetrievalError(
                f"index {directory} is inconsistent: manifest says {manifest['passages']} "
                f"passages, BM25 has {len(index._bm25)}, dense {len(index._dense)}, table "
                f"{len(index._table)}",
                hint="rebuild it with HybridIndex.build(..., overwrite=True).",
            )
        return index

    def save(self) -> None:
        """Write the index as a new generation, then switch the manifest to it atomically."""
        generation = self._generation + 1
        gen = _generation_dir(self.directory, generation)
        if gen.exists():
            shutil.rmtree(gen)
        self._bm25.save(gen / "bm25")
        self._dense.save(gen / "dense")
        self._table.save(gen / "table")
        content = self._next_content()
        manifest = {
            "format": FORMAT_VERSION,
            "generation": generation,
            "passages": len(self),
            "embedder": {"name": self.embedder_name, "dimension": self._dense.dimension},
            "config": dataclasses.asdict(self.config),
            "saved_at": dt.datetime.now(dt.UTC).isoformat(),
            "content": content,
        }
        tmp = self.directory / f"{MANIFEST}.tmp"
        tmp.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        os.replace(tmp, self.directory / MANIFEST)
        self._generation = generation
        self._content = content
        for old in self.directory.glob("gen-*"):
            if old != gen:
                shutil.rmtree(old, ignore_errors=True)

    def _next_content(self) -> dict[str, Any]:
        """The content record of what is about to be saved, extending the saved chain."""
        previous = self._content
        count = len(self)
        if previous is not None and int(previous.get("passages", -1)) <= count:
            start, chain = int(previous["passages"]), str(previous["passages_chain"])
        else:
            start, chain = 0, EMPTY_CHAIN
        chain = extend_chain(self._table.path, chain, start, count)
        if self._embedder is not None:
            weights = getattr(self._embedder, "weights_identity", None)
            embedder = embedder_identity(self._embedder.name, self._dense.dimension,
                                         weights() if callable(weights) else None)
        elif previous is not None:
            embedder = dict(previous["embedder"])
        else:
            packaged = embedder_weights() if self._embedder_name == Embedder.name else None
            embedder = embedder_identity(self._embedder_name, self._dense.dimension, packaged)
        return content_record(count, chain, embedder, dataclasses.asdict(self.config))

    @property
    def content(self) -> dict[str, Any]:
        """What this index holds, as recorded at its last save (see :func:`index_content`)."""
        if self._content is None:
            self._content = index_content(self.directory)
        return self._content

    def close(self) -> None:
        """Close the passage table (not the embedder, which the caller may share)."""
        self._table.close()

    def __enter__(self) -> HybridIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self._table)

    @property
    def embedder(self) -> Embedder:
        """The embedder, created on first use when the index was loaded without one."""
        if self._embedder is None:
            # the embedder the passages were embedded with, whatever the setting says now
            self._embedder = Embedder.named(self._embedder_name, load_settings().settings)
        return self._embedder

    @property
    def embedder_name(self) -> str:
        """Name of the embedding model the dense index was built with."""
        return self._embedder_name if self._embedder is None else self._embedder.name

    @property
    def dense_kind(self) -> str:
        """``flat`` (exact) or ``hnsw``."""
        return self._dense.kind

    @property
    def bm25_segments(self) -> int:
        """BM25 segments (1 after a merge)."""
        return self._bm25.segments

    # -- adding ----------------------------------------------------------------------------

    def add(
        self,
        passages: Iterable[Passage],
        *,
        progress: Progress | None = None,
        batch_size: int = 4096,
    ) -> int:
        """Index more passages; ids already indexed (or repeated) are skipped.

        New passages become searchable when this returns; call :meth:`save` to keep them.

        Returns:
            How many passages were added.
        """
        total = len(passages) if isinstance(passages, Sequence) else None
        added = seen = 0
        try:
            for batch in _batches(passages, batch_size):
                known = self._table.known([p.id for p in batch])
                fresh: list[Passage] = []
                for p in batch:
                    if p.id not in known:
                        known.add(p.id)
                        fresh.append(p)
                done_before = seen

                def report(done: int, _total: int, base: int = done_before) -> None:
                    if progress is not None:
                        progress("embed", base + done, total)

                if fresh:
                    vectors = self.embedder.embed_passages(fresh, progress=report)
                    self._table.add(fresh)
                    self._dense.add(vectors)
                    self._bm25.stage(p.indexed_text for p in fresh)
                    added += len(fresh)
                seen += len(batch)
                if progress is not None:
                    progress("embed", seen, total)
        finally:
            # Even when a later batch fails, what the table and the dense index hold is made
            # searchable in BM25 too, so the three always agree.
            if progress is not None:
                progress("bm25", 0, added)
            self._bm25.commit()
            if progress is not None:
                progress("bm25", added, added)
        return added

    # -- searching -------------------------------------------------------------------------

    def search(
        self,
        query: str,
        k: int = 5,
        *,
        method: Method = "hybrid",
        time_intent: TimeIntent | str | None = None,
        titles: Iterable[str] | str | None = None,
        since: dt.datetime | dt.date | None = None,
        until: dt.datetime | dt.date | None = None,
        fusion: FusionMethod | None = None,
    ) -> list[SearchHit]:
        """Find the ``k`` passages that best answer ``query``.

        Args:
            query: Free text.
            k: Number of hits (fewer only when fewer passages pass the filters, or, for
                ``bm25``, contain a query term).
            method: ``hybrid`` (default), ``bm25`` or ``dense``.
            time_intent: ``recent``, ``year=YYYY``, ``none``/``None``, or a
                :class:`TimeIntent`: reorders the top candidates, never filters.
            titles: Only passages of these articles (one title or several).
            since: Only passages whose revision timestamp is at or after this.
            until: Only passages whose revision timestamp is at or before this (a date
                includes its whole day).
            fusion: Override the index's fusion method for this query.

        Raises:
            RetrievalError: For an unknown method, fusion or time intent, or ``k < 1``.
        """
        intent = TimeIntent.parse(time_intent)
        if method not in METHODS:
            raise RetrievalError(
                f"unknown search method {method!r}", hint=f"use one of {', '.join(METHODS)}."
            )
        fusion = fusion or self.config.fusion
        if fusion not in FUSION_METHODS:
            raise RetrievalError(
                f"unknown fusion method {fusion!r}",
                hint=f"use one of {', '.join(FUSION_METHODS)}.",
            )
        if k < 1:
            raise RetrievalError(f"k must be at least 1, got {k}")
        if len(self) == 0:
            return []
        if isinstance(titles, str):
            titles = [titles]
        allowed = self._table.allowed(titles, since, until)
        if allowed is not None and not allowed.any():
            return []
        pool = max(self.config.pool, k)
        depth = max(self.config.depth, pool)

        # Sequential on purpose: running BM25 in a thread while the query is encoded was
        # measured no faster (torch already keeps both cores busy) and a worker thread
        # makes the encoder itself 2-3 ms slower.
        bm25_hits: Hits = []
        if method in ("hybrid", "bm25"):
            bm25_hits = self._bm25.search(query, depth, allowed)
        dense_hits: Hits = []
        if method in ("hybrid", "dense"):
            vector = self.embedder.embed_query(query)
            dense_hits = self._dense.search(vector, depth, allowed)

        if method == "hybrid":
            weights = (self.config.bm25_weight, 1.0)
            fused = fuse([bm25_hits, dense_hits], fusion, weights, rrf_k=self.config.rrf_k,
                         depth=depth)
        elif method == "bm25":
            fused = [Fused(key, score, (rank, None), (score, None))
                     for rank, (key, score) in enumerate(bm25_hits, start=1)]
        else:
            fused = [Fused(key, score, (None, rank), (None, score))
                     for rank, (key, score) in enumerate(dense_hits, start=1)]
        return self._finish(fused, k, pool, intent)

    def search_vector(
        self,
        vector: Sequence[float] | np.ndarray[Any, Any],
        k: int = 5,
        *,
        exclude: Iterable[int] = (),
    ) -> list[SearchHit]:
        """The ``k`` passages whose dense vectors have the largest inner product with ``vector``.

        For callers that score documents by a mix of embeddings no text query expresses
        (RiLM's re-retrieval ranks the whole index by ``(1 - ω)·cos(q, d) + ω·cos(q ⊕ a, d)``,
        which is the inner product of ``d`` with ``(1 - ω)·e(q) + ω·e(q ⊕ a)``). The vector
        need not be of unit length: only the order matters.

        Args:
            vector: A vector of the index's embedding dimension.
            k: Number of hits.
            exclude: Index keys (:attr:`SearchHit.key`) never to return, e.g. the documents a
                first search already gave.

        Raises:
            RetrievalError: ``k < 1`` or a vector of the wrong dimension.
        """
        if k < 1:
            raise RetrievalError(f"k must be at least 1, got {k}")
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != self._dense.dimension:
            raise RetrievalError(
                f"a {query.shape[0]}-d vector cannot search this {self._dense.dimension}-d "
                "dense index", hint="embed with the index's own embedder (index.embedder).")
        if len(self) == 0:
            return []
        skip = set(exclude)
        hits = [(key, score) for key, score in self._dense.search(query, k + len(skip))
                if key not in skip][:k]
        fused = [Fused(key, score, (None, rank), (None, score))
                 for rank, (key, score) in enumerate(hits, start=1)]
        return self._finish(fused, k, k, TimeIntent.parse(None))

    def _finish(
        self, fused: list[Fused], k: int, pool: int, intent: TimeIntent
    ) -> list[SearchHit]:
        if not fused:
            return []
        time: list[float | None] = [None] * len(fused)
        final = [f.score for f in fused]
        if intent.kind != "none":
            candidates = fused[:pool]
            keys = np.asarray([f.key for f in candidates], dtype=np.int64)
            match = time_scores(
                intent, self._table.stamp_years(keys), self._table.mentioned_years(keys)
            )
            order, blended = rerank_order(
                np.asarray([f.score for f in candidates], dtype=np.float64),
                match, self.config.time_weight, exhaustive=len(fused) < pool,
            )
            fused = [candidates[i] for i in order]
            final = [float(blended[i]) for i in order]
            time = [float(match[i]) for i in order]
        top = fused[:k]
        passages = self._table.get([f.key for f in top])
        return [
            SearchHit(
                passage=passage, score=final[i], rank=i + 1, key=f.key, fused_score=f.score,
                bm25_rank=f.ranks[0], dense_rank=f.ranks[1],
                bm25_score=f.scores[0], dense_score=f.scores[1], time_score=time[i],
            )
            for i, (f, passage) in enumerate(zip(top, passages, strict=True))
        ]

    def passage(self, passage_id: str) -> Passage | None:
        """An indexed passage by id."""
        key = self._table.key_of(passage_id)
        return None if key is None else self._table.get([key])[0]

    def stats(self) -> dict[str, Any]:
        """Sizes and structure, for reports."""
        return {
            "passages": len(self),
            "titles": len(self._table.titles),
            "bm25_segments": self._bm25.segments,
            "bm25_vocabulary": len(self._bm25.vocab),
            "dense_kind": self._dense.kind,
            "embedder": self.embedder_name,
            "fusion": self.config.fusion,
            "generation": self._generation,
        }
