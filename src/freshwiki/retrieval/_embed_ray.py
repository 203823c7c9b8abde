"""Embed an index's passages on a Ray cluster: an actor pool fills the embedding cache.

Embedding is the part of ``index build`` that grows with the corpus (see
:mod:`freshwiki.retrieval._embed`); everything else runs at thousands of passages a second on
one machine. So only embedding goes out: the driver streams the passages, skips those whose
vector is already cached (by passage id and a digest of the text), cuts the rest into shards
and hands each to an actor. Every actor loads the embedder once, of the runtime the index is
built with, and returns the shard's vectors; the driver writes each shard into the cache, one
transaction, as it comes back. The index is then built by the local path, which finds every
vector in the cache: the same code builds the same index, and the cluster run differs from a
local one only in where the vectors were computed (for the ONNX runtimes not even in a bit,
since each text is embedded alone; PyTorch pads batches, so its vectors agree to rounding).

**Resuming.** A shard is either in the cache or not: a build killed half-way (or a lost
node that Ray cannot recover) leaves the finished shards stored, and running it again embeds
only the rest. The build then checks that every passage has its vector before indexing.

**Why actors and a window of shards, not Ray Data.** The passages come from one store read
on the driver, filtered against the driver's cache; Ray Data has no source fed from a
driver-side iterator (``from_items`` materialises everything first), and its readers run on
the workers, which cannot see the driver's SQLite files. The corpus engine's reasoning is the
same (``freshwiki.corpus._ray_engine``). A window bounds what is in flight: two shards per
actor, one running and one queued, so memory stays flat whatever the corpus size.

Point it at a cluster with ``address`` (or ``RAY_ADDRESS``); every node needs freshwiki
installed with the same pinned versions (the embedder's weights come with it).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from freshwiki.records import Passage
from freshwiki.retrieval._embed import EmbeddingCache, Vectors
from freshwiki.retrieval._errors import RetrievalError

SHARD = 256
"""Passages per actor call: about 3 s of work at the float embedder's per-core rate, against
a few milliseconds of Ray's own cost per call and a 400 KB result."""
IN_FLIGHT_PER_ACTOR = 2

Progress = Callable[[int, int | None], None]
"""Called with (passages whose vector is now cached, passages seen so far or None)."""


def _require_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise RetrievalError(
            "embedding on Ray needs Ray, which is not installed",
            hint="install the cluster extra: pip install 'freshwiki[cluster]' "
            "(or build with --engine local).",
        ) from exc
    return ray


class _Worker:
    """One actor: an embedder of the build's runtime, loaded once, without a cache."""

    def __init__(self, runtime: str, models_dir: str, threads: int) -> None:
        from freshwiki.retrieval._embed import Embedder

        self.embedder = Embedder(None, runtime=runtime, models_dir=Path(models_dir),
                                 threads=threads)

    def embed(self, texts: list[str]) -> Vectors:
        return self.embedder.encode(texts)


def _shards(passages: Iterable[Passage], cache: EmbeddingCache, size: int,
            seen: list[int]) -> Iterator[list[Passage]]:
    """Shards of the passages whose vector the cache lacks; ``seen[0]`` counts all read."""
    pending: list[Passage] = []
    chunk: list[Passage] = []

    def missing(batch: list[Passage]) -> list[Passage]:
        hits = cache.get([p.id for p in batch], [p.indexed_text for p in batch])
        return [p for i, p in enumerate(batch) if i not in hits]

    for passage in passages:
        seen[0] += 1
        chunk.append(passage)
        if len(chunk) == 2048:
            pending.extend(missing(chunk))
            chunk = []
        while len(pending) >= size:
            yield pending[:size]
            pending = pending[size:]
    pending.extend(missing(chunk))
    for start in range(0, len(pending), size):
        yield pending[start:start + size]


def embed_on_ray(
    passages: Iterable[Passage],
    cache: EmbeddingCache,
    *,
    runtime: str,
    models_dir: Path,
    address: str | None = None,
    actors: int | None = None,
    threads_per_actor: int = 1,
    shard_size: int = SHARD,
    progress: Progress | None = None,
) -> tuple[int, int]:
    """Put a vector for every passage in ``cache``, computing the missing ones on Ray.

    Uses the Ray instance this process is connected to, if any (and leaves it running);
    otherwise connects to ``address`` and disconnects at the end.

    Args:
        passages: The index's passages (streamed once).
        cache: The embedding cache of the runtime the index is built with.
        runtime: ``torch``, ``onnx`` or ``onnx-int8``.
        models_dir: Where each node keeps (and, once, exports) the ONNX models.
        address: Ray cluster address (default: ``RAY_ADDRESS``, else Ray's own choice).
        actors: Embedding actors (default: one per ``threads_per_actor`` cluster CPUs).
        threads_per_actor: CPUs each actor claims and embeds with.
        shard_size: Passages per actor call.
        progress: See :data:`Progress`.

    Returns:
        (vectors computed, passages read): the difference was cached already.

    Raises:
        RetrievalError: Ray is missing, the cluster has no CPUs, or a shard was lost.
    """
    ray = _require_ray()
    started_here = False
    if not ray.is_initialized():
        ray.init(address=address or os.environ.get("RAY_ADDRESS") or None,
                 include_dashboard=False, log_to_driver=False, configure_logging=False)
        started_here = True
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if cpus < threads_per_actor:
            raise RetrievalError(
                f"the Ray cluster has {cpus} CPUs, fewer than one actor's {threads_per_actor}",
                hint="start worker nodes with CPUs (ray start --address HEAD:PORT), or "
                "build with --engine local.",
            )
        count = actors or max(1, cpus // threads_per_actor)
        worker = ray.remote(num_cpus=threads_per_actor, max_restarts=2,
                            max_task_retries=2)(_Worker)
        pool = [worker.remote(runtime, str(models_dir), threads_per_actor)
                for _ in range(count)]
        return _drive(ray, pool, passages, cache, shard_size, progress)
    finally:
        if started_here:
            ray.shutdown()


def _drive(ray: Any, pool: list[Any], passages: Iterable[Passage], cache: EmbeddingCache,
           shard_size: int, progress: Progress | None) -> tuple[int, int]:
    """Keep every actor busy with a bounded window of shards; store each as it returns."""
    from ray.exceptions import RayError, RayTaskError

    seen = [0]
    computed = 0
    window: deque[tuple[Any, list[Passage]]] = deque()
    free = deque(actor for actor in pool for _ in range(IN_FLIGHT_PER_ACTOR))
    owner: dict[Any, Any] = {}

    def store(ref: Any, shard: list[Passage]) -> None:
        nonlocal computed
        try:
            vectors = np.asarray(ray.get(ref), dtype=np.float32)
        except RayTaskError as exc:
            raise exc.cause from exc
        except RayError as exc:
            raise RetrievalError(
                f"the Ray cluster lost an embedding shard ({type(exc).__name__}: {exc})",
                hint="the shards stored so far are kept in the embedding cache; run the "
                "build again to embed the rest.",
            ) from exc
        cache.put([p.id for p in shard], [p.indexed_text for p in shard], vectors)
        computed += len(shard)
        free.append(owner.pop(ref))
        if progress is not None:
            progress(computed, seen[0])

    try:
        for shard in _shards(passages, cache, shard_size, seen):
            if not free:
                done, _ = ray.wait([ref for ref, _ in window], num_returns=1)
                index = next(i for i, (ref, _) in enumerate(window) if ref == done[0])
                ref, finished = window[index]
                del window[index]
                store(ref, finished)
            actor = free.popleft()
            ref = actor.embed.remote([p.indexed_text for p in shard])
            owner[ref] = actor
            window.append((ref, shard))
        while window:
            ref, finished = window.popleft()
            store(ref, finished)
    except BaseException:
        for ref, _ in window:
            ray.cancel(ref)
        raise
    return computed, seen[0]
