"""Run the per-revision work as Ray tasks, locally or on a cluster, streaming.

The work is the same :func:`~freshwiki.corpus._process.clean_batch` the process pool runs,
driven by the same loop, :func:`~freshwiki.corpus._process.stream_batches`; only the
executor changes. The driver reads the source, cuts it into the pool's batches and submits
each batch as one task as soon as it is read. At most ``max_in_flight`` batches (default:
2 per CPU of the cluster) are out at a time, so reading on the driver overlaps cleaning on
the workers, and the reader never runs further ahead of the store than that. Results are
taken from the head of the window, so the store sees the batches in dump order however
the tasks finish; a head that is done is handed over at once, without waiting for the
window to fill, so storing on the driver keeps pace with the workers.

**What crosses the wire.** Out: a batch of :class:`~freshwiki.corpus._process.CleanJob`,
the wikitext with the title, ids and date the passages carry. Back: each revision's
passages, with the chunks that fell back to the regex strip (so the fallback count is the
same as in-process, however many tasks cleaned). The
:class:`~freshwiki.records.Revision` objects (contributor, comment, sha1, the text the
store keeps) stay on the driver, which writes them; nothing is sent twice.

**Memory.** The driver holds at most ``max_in_flight`` batches of revisions plus the one
being read; Ray's object store holds at most ``max_in_flight`` batches of jobs and their
passages (arguments and results over 100 KiB go there, smaller ones travel inline). With
the defaults (16 revisions a batch, 2 batches per CPU) that is 32 revisions per cluster CPU
in flight: about 1.7 MB of wikitext per CPU at the sample dump's 54 KB per article, and
its passages, on the driver and in the object store alike.

**Why Ray core tasks, not Ray Data.** The source is one sequential stream read on the
driver (one bz2 file, filtered against the store so a rerun skips what it holds), and the
store must see revisions in that order. Ray Data has no source fed from a driver-side
iterator: ``from_items`` materialises its input before the pipeline starts (the previous
engine here ran one 2,000-revision chunk at a time, so reading and cleaning never
overlapped), and its datasources are read by tasks on the workers, which a single bz2
stream filtered by the driver's store cannot be split into. Order would need
``preserve_order`` across a whole pipeline per chunk, and a cleaning error arrives wrapped
in Ray Data's ``UserCodeException``. A window of task references does exactly what the
process pool does, with the same bound and the same order, and nothing else to configure.

**Failures** look like the local engine's, because the loop is the pool's. An exception
raised in a task is re-raised on the driver as itself (the ``RayTaskError``'s cause), as
``Future.result()`` does in the pool, and the store holds exactly the batches before it. A
fault in the source hands over every batch already sent out, then propagates, so the store
holds every revision read before it; bad pages under ``--skip-bad-pages`` are the reader's
business, on the driver, and so are identical. A worker or node that dies is retried by
Ray (its default ``max_retries``); if that fails too, a
:class:`~freshwiki.errors.FreshwikiError` says so. When the consumer stops early (Ctrl-C,
an error while storing) the tasks still out are cancelled.

Point it at a cluster with ``address`` (or ``RAY_ADDRESS``). Without one, Ray's own rules
apply: the cluster ``ray start`` last started on this machine, else a new local instance
with this machine's cores.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from freshwiki.corpus._process import clean_batch, stream_batches
from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    from freshwiki.corpus._process import Cleaned, CleanJob, IngestOptions, Processed
    from freshwiki.records import Revision

DEFAULT_BATCH = 16
"""Revisions per task: the process pool's batch, so both engines write the same batches.
At ~10 ms of cleaning per article a task runs ~0.2 s, against about a millisecond of Ray's
own per-task cost."""
IN_FLIGHT_PER_CPU = 2
"""Batches out per cluster CPU: one running, one queued behind it, so a worker that
finishes starts its next batch at once while the driver is busy reading or storing."""


def _require_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise FreshwikiError(
            "the ray engine needs Ray, which is not installed",
            hint="install the cluster extra: pip install 'freshwiki[cluster]' "
            "(or use --engine local).",
        ) from exc
    return ray


def process_all_ray(
    revisions: Iterable[Revision],
    options: IngestOptions,
    *,
    batch_size: int = DEFAULT_BATCH,
    max_in_flight: int | None = None,
    address: str | None = None,
) -> Iterator[list[Processed]]:
    """Yield processed batches in input order, cleaned by Ray tasks.

    Uses the Ray instance this process is already connected to, if any (and leaves it
    running); otherwise connects to ``address`` and disconnects at the end.

    Args:
        revisions: What to clean, in the order the store must see it.
        options: What to keep.
        batch_size: Revisions per task.
        max_in_flight: Tasks out at most (default: 2 per CPU of the cluster at the start).
        address: Ray cluster address (default: ``RAY_ADDRESS``, else Ray's own choice).
    """
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
    try:
        yield from _stream(ray, revisions, options, batch_size, max_in_flight)
    finally:
        if started_here:
            ray.shutdown()


def _stream(
    ray: Any,
    revisions: Iterable[Revision],
    options: IngestOptions,
    batch_size: int,
    max_in_flight: int | None,
) -> Iterator[list[Processed]]:
    clean = ray.remote(num_cpus=1)(clean_batch)

    def submit(jobs: list[CleanJob]) -> Any:
        return clean.remote(jobs, options)

    def ready(ref: Any) -> bool:
        done, _ = ray.wait([ref], timeout=0)
        return bool(done)

    yield from stream_batches(
        revisions,
        batch_size=batch_size,
        max_in_flight=max_in_flight or IN_FLIGHT_PER_CPU * _cluster_cpus(ray),
        submit=submit,
        ready=ready,
        result=lambda ref: _result(ray, ref),
        cancel=ray.cancel,
    )


def _cluster_cpus(ray: Any) -> int:
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if cpus < 1:
        raise FreshwikiError(
            "the Ray cluster has no CPUs to clean on",
            hint="start worker nodes with CPUs (ray start --address HEAD:PORT --num-cpus N), "
            "or use --engine local.",
        )
    return cpus


def _result(ray: Any, ref: Any) -> list[Cleaned]:
    """A task's result; its exception re-raised as itself, as the process pool does."""
    from ray.exceptions import RayError, RayTaskError

    try:
        cleaned: list[Cleaned] = ray.get(ref)
    except RayTaskError as exc:
        raise exc.cause from exc
    except RayError as exc:
        raise FreshwikiError(
            f"the Ray cluster lost a cleaning task ({type(exc).__name__}: {exc})",
            hint="revisions stored so far are kept; rerun the ingest to continue (it skips "
            "them).",
        ) from exc
    return cleaned
