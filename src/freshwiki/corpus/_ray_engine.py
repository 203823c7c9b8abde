"""Run the per-revision work as a Ray Data pipeline, locally or on a cluster.

The function is the same :func:`~freshwiki.corpus.ingest.process_revision` the local engine
runs; only the executor changes. The driver streams revisions from the source (reading is
several times faster than cleaning, so it is not the bottleneck) and hands them to Ray in
chunks; each chunk is one Ray Data pipeline whose ``map_batches`` fans the cleaning out over
every CPU of the cluster, with input order preserved so the store sees revisions in dump
order. One chunk is in flight at a time, so driver memory is bounded by the chunk size.

Point it at a cluster with ``address`` (or ``RAY_ADDRESS``); without one, a local Ray
instance is started with this machine's cores.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    from freshwiki.corpus._process import IngestOptions, Processed
    from freshwiki.records import Revision

DEFAULT_CHUNK = 2000


def _require_ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise FreshwikiError(
            "the ray engine needs Ray, which is not installed",
            hint="install the cluster extra: pip install 'freshwiki[cluster]' "
            "(or use --engine local).",
        ) from exc
    return ray


def _process_rows(batch: dict[str, Any], options: IngestOptions) -> dict[str, Any]:
    import numpy as np

    from freshwiki.corpus._process import process_revision

    processed = [process_revision(r, options) for r in batch["revision"]]
    column = np.empty(len(processed), dtype=object)
    column[:] = processed
    return {"processed": column}


def process_all_ray(
    revisions: Iterable[Revision],
    options: IngestOptions,
    *,
    batch_size: int = 64,
    chunk_size: int = DEFAULT_CHUNK,
    address: str | None = None,
) -> Iterator[list[Processed]]:
    """Yield processed batches in input order, computed by Ray Data ``map_batches``."""
    ray = _require_ray()
    started_here = False
    if not ray.is_initialized():
        ray.init(
            address=address or os.environ.get("RAY_ADDRESS") or None,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
        started_here = True
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    try:
        chunk: list[Revision] = []
        for revision in revisions:
            chunk.append(revision)
            if len(chunk) >= chunk_size:
                yield from _run_chunk(ray, chunk, options, batch_size)
                chunk = []
        if chunk:
            yield from _run_chunk(ray, chunk, options, batch_size)
    finally:
        if started_here:
            ray.shutdown()


def _run_chunk(
    ray: Any, chunk: list[Revision], options: IngestOptions, batch_size: int
) -> Iterator[list[Processed]]:
    dataset = ray.data.from_items([{"revision": r} for r in chunk])
    mapped = dataset.map_batches(
        _process_rows,
        fn_kwargs={"options": options},
        batch_size=batch_size,
        batch_format="numpy",
    )
    for batch in mapped.iter_batches(batch_size=batch_size, batch_format="numpy"):
        yield list(batch["processed"])
