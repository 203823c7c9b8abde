"""Ingest a source (dump, history, JSONL, topics) into the corpus store.

The per-revision work (wikitext cleaning, segmentation) is a pure function of one revision,
:func:`process_revision`, so it can run anywhere: in this process, in a local process pool,
or as Ray tasks on a cluster. Work is sent out in batches with a bounded number in flight,
so memory stays flat however large the dump is, and results are written in input order in
one transaction per batch: a crash loses at most the batches in flight. Both engines send a
worker only what cleaning needs (:class:`~freshwiki.corpus._process.CleanJob`) and get back
only the passages, with the chunks the cleaner had to regex-strip; the revisions themselves
never leave this process.

**Fallbacks.** When the wikitext parser fails on a chunk of a page, the cleaner strips that
chunk with regexes instead so the page keeps its text (:mod:`freshwiki.corpus.wikitext`).
That is silent in the text, so it is counted: each revision's fallbacks come back with its
passages, are stored with it (:meth:`CorpusStore.add`), and are summed in
:class:`IngestReport`, exactly, whichever engine and however many workers cleaned.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from freshwiki.corpus._process import (
    Cleaned,
    CleanJob,
    IngestOptions,
    Processed,
    batched,
    clean_batch,
    is_redirect,
    plain_paragraphs,
    process_revision,
    stream_batches,
)
from freshwiki.corpus._ray_engine import process_all_ray
from freshwiki.corpus.readers import DumpReadError, ReadReport, read_source
from freshwiki.corpus.store import CorpusStore
from freshwiki.corpus.wikitext import Fallback
from freshwiki.errors import FreshwikiError
from freshwiki.records import Revision

__all__ = [
    "IngestOptions",
    "IngestReport",
    "Processed",
    "ingest",
    "is_redirect",
    "plain_paragraphs",
    "process_all",
    "process_revision",
]

@dataclass
class IngestReport:
    """What an ingest did, for the CLI's summary and the store's source log."""

    source: str
    revisions_added: int = 0
    revisions_skipped_existing: int = 0
    redirects_skipped: int = 0
    passages: int = 0
    read: ReadReport | None = None
    bad_pages: list[str] = field(default_factory=list)
    fallback_revisions: int = 0
    """Revisions added by this ingest with at least one chunk of their wikitext cleaned by
    the regex fallback because the parser failed on it. Revisions skipped as already stored
    are not cleaned, so not counted: ingesting the same pages again adds 0."""
    fallback_chunks: int = 0
    """Chunks of those revisions the regex fallback cleaned (a revision has one or a few)."""
    fallback_reasons: dict[str, int] = field(default_factory=dict)
    """Fallback chunks per reason: ``TOO_DEEP`` or the exception's type name."""
    fallback_pages: list[str] = field(default_factory=list)
    """``"Title (revision N): k chunk(s), reason"`` for each such revision, in input order."""

    def add_fallbacks(self, revision: Revision, fallbacks: tuple[Fallback, ...]) -> None:
        """Count one added revision's fallbacks."""
        self.fallback_revisions += 1
        self.fallback_chunks += len(fallbacks)
        for f in fallbacks:
            self.fallback_reasons[f.reason] = self.fallback_reasons.get(f.reason, 0) + 1
        reasons = ", ".join(sorted({f.reason for f in fallbacks}))
        self.fallback_pages.append(f"{revision.page.title} (revision {revision.id}): "
                                   f"{len(fallbacks)} chunk(s), {reasons}")

    def as_dict(self) -> dict[str, object]:
        """JSON-friendly summary."""
        return {
            "source": self.source,
            "revisions_added": self.revisions_added,
            "revisions_skipped_existing": self.revisions_skipped_existing,
            "redirects_skipped": self.redirects_skipped,
            "passages": self.passages,
            "bad_pages": self.bad_pages,
            "fallback_revisions": self.fallback_revisions,
            "fallback_chunks": self.fallback_chunks,
            "fallback_reasons": self.fallback_reasons,
            "fallback_pages": self.fallback_pages,
        }


def process_all(
    revisions: Iterable[Revision],
    options: IngestOptions,
    *,
    workers: int = 1,
    batch_size: int = 16,
    max_in_flight: int | None = None,
) -> Iterator[list[Processed]]:
    """Yield processed batches in input order, using ``workers`` processes (1: in-process).

    The window is :func:`~freshwiki.corpus._process.stream_batches`, shared with the Ray
    engine: at most ``max_in_flight`` batches (default: 2 per worker) are queued, so the
    reader never runs ahead of the workers by more than that and memory is flat in the
    input size. A worker is sent each revision's :class:`CleanJob` and returns its
    passages; the revisions stay in this process, which writes them, so their metadata is
    never pickled and their text only one way.

    Batches are small because a worker's last batch is the tail the others wait for: with
    64, two workers on the 106-article sample dump split the work 64/42 and took 1.19 s;
    with 16, 0.99 s. Per-batch overhead (pickling, one transaction) stays far below that.
    """
    if workers <= 1:
        for batch in batched(revisions, batch_size):
            yield [process_revision(r, options) for r in batch]
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:

        def submit(jobs: list[CleanJob]) -> Future[list[Cleaned]]:
            return pool.submit(clean_batch, jobs, options)

        yield from stream_batches(
            revisions,
            batch_size=batch_size,
            max_in_flight=max_in_flight or 2 * workers,
            submit=submit,
            ready=Future.done,
            result=Future.result,
            cancel=Future.cancel,
        )


def ingest(
    source: Path,
    store: CorpusStore,
    *,
    options: IngestOptions | None = None,
    workers: int | None = None,
    skip_bad_pages: bool = False,
    namespaces: set[int] | None = frozenset({0}),  # type: ignore[assignment]
    on_progress: Callable[[int, int], None] | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    max_in_flight: int | None = None,
) -> IngestReport:
    """Read ``source``, process every revision and store it with its passages.

    Args:
        source: A dump (.xml, .bz2, .gz), history dump, JSONL, WikiExtractor folder or a
            ``{title: text}`` topics file.
        store: Where revisions and passages go. Revisions already stored are skipped, so
            running the same ingest twice changes nothing.
        options: What to keep.
        workers: Processes for the per-revision work (default: one per core).
        skip_bad_pages: Skip pages that cannot be read, reporting each, instead of stopping.
        namespaces: Namespaces to keep (default: articles only); ``None`` keeps all.
        on_progress: Called with (revisions done, bytes read) after each batch.
        engine: ``local`` (process pool) or ``ray`` (Ray tasks, local or on a cluster).
        ray_address: Ray cluster address for ``engine="ray"`` (default: ``RAY_ADDRESS``, else
            a local Ray instance).
        max_in_flight: Batches sent out and not yet stored, at most (default: 2 per worker
            process, or per CPU of the Ray cluster). Bounds memory: the reader never runs
            further ahead of the store than this.
    """
    if engine not in ("local", "ray"):
        raise FreshwikiError(f"unknown engine {engine!r}", hint="use 'local' or 'ray'.")
    options = options or IngestOptions()
    read_report = ReadReport()
    report = IngestReport(source=str(source), read=read_report)
    wanted = read_source(
        source,
        namespaces=set(namespaces) if namespaces is not None else None,
        skip_bad_pages=skip_bad_pages,
        report=read_report,
    )

    def keep(revision: Revision) -> bool:
        if options.skip_redirects and is_redirect(revision):
            report.redirects_skipped += 1
            return False
        # Checked before cleaning, not only when storing: rerunning an ingest that stopped
        # at a fault (or re-reading a dump) then costs a read, not a second cleaning.
        if store.has_revision(revision.id):
            report.revisions_skipped_existing += 1
            return False
        return True

    kept = (r for r in wanted if keep(r))
    if engine == "ray":
        batches = process_all_ray(kept, options, address=ray_address,
                                  max_in_flight=max_in_flight)
    else:
        batches = process_all(kept, options, workers=workers or os.cpu_count() or 1,
                              max_in_flight=max_in_flight)
    done = 0
    try:
        for batch in batches:
            result = store.add(
                [(p.revision, p.passages) for p in batch], keep_text=options.keep_text,
                fallbacks={p.revision.id: p.fallbacks for p in batch if p.fallbacks},
            )
            report.revisions_added += result.added
            report.revisions_skipped_existing += result.skipped
            report.passages += result.passages
            fell_backs = dict(result.fallbacks)  # popped: a revision id twice counts once
            for p in batch:
                fell_back = fell_backs.pop(p.revision.id, None)
                if fell_back:
                    report.add_fallbacks(p.revision, fell_back)
            done += len(batch)
            if on_progress:
                on_progress(done, read_report.bytes_read)
    except DumpReadError as exc:
        # Say what is safe: everything read before the fault is stored, and a rerun
        # (with --skip-bad-pages, or on a repaired file) skips it instead of redoing it.
        stored = (f"The {report.revisions_added} revision(s) read before it are stored; "
                  "a rerun skips them")
        hint = f"{exc.hint}. {stored}" if exc.hint else stored
        raise DumpReadError(exc.fault, hint=hint) from exc
    report.bad_pages = [str(s) for s in read_report.skipped]
    store.record_source(source, report.as_dict())
    return report
