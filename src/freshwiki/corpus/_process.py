"""The pure per-revision work of ingest, and what every engine shares to run it.

Kept apart from :mod:`freshwiki.corpus.ingest` because every engine runs it: the local
process pool in ``ingest`` and the Ray tasks in ``_ray_engine``. Both import it from here,
so neither engine imports the other's module to reach it.

What an engine sends a worker is a :class:`CleanJob`, not the :class:`Revision`: the
wikitext and the four fields the passages carry. Contributor, comment, sha1 and the rest
stay with the reader, which needs them to write the store anyway, and a worker returns only
a :class:`Cleaned`: the passages, and the chunks the cleaner had to regex-strip because its
parser failed on them. So the bytes that cross a process or network boundary are the text
going out and the passages coming back, once each; and since the fallbacks travel with each
revision's passages, they are counted exactly, in order, whichever engine and however many
workers did the cleaning.
"""

from __future__ import annotations

import datetime as dt
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

from freshwiki.corpus.segment import DEFAULT_MAX_WORDS, make_passages
from freshwiki.corpus.wikitext import Fallback, clean_wikitext_result
from freshwiki.records import Paragraph, Passage, Revision

Handle = TypeVar("Handle")
"""An engine's reference to one submitted batch (a ``Future``, a Ray ``ObjectRef``)."""


@dataclass(frozen=True)
class IngestOptions:
    """What to keep from each revision."""

    max_words: int = DEFAULT_MAX_WORDS
    keep_tables: bool = False
    keep_infobox: bool = False
    keep_text: bool = True
    skip_redirects: bool = True


class CleanJob(NamedTuple):
    """Everything cleaning one revision needs, and nothing else: what a worker is sent.

    A tuple, so it pickles as its values and one class reference.
    """

    text: str
    text_format: str
    title: str
    page_id: int
    revision_id: int
    timestamp: dt.datetime | None
    """``None`` when the source gave no date (the passages then carry none)."""


class Cleaned(NamedTuple):
    """What a worker sends back for one :class:`CleanJob`."""

    passages: list[Passage]
    fallbacks: tuple[Fallback, ...] = ()
    """Chunks of the wikitext the regex fallback cleaned (none for plain text)."""


class Processed(NamedTuple):
    """One revision, cleaned: what the engines hand the store, in input order."""

    revision: Revision
    passages: list[Passage]
    fallbacks: tuple[Fallback, ...] = ()
    """As :attr:`Cleaned.fallbacks`."""


def clean_job(revision: Revision) -> CleanJob:
    """The part of ``revision`` a worker needs."""
    return CleanJob(
        revision.text,
        revision.text_format,
        revision.page.title,
        revision.page.id,
        revision.id,
        revision.timestamp if revision.dated else None,
    )


def is_redirect(revision: Revision) -> bool:
    """A redirect by the dump's flag, or by its text (old dumps may carry no target)."""
    return revision.page.redirect is not None or (
        revision.text_format == "wikitext"
        and revision.text.lstrip()[:9].upper() == "#REDIRECT"
    )


def plain_paragraphs(text: str) -> list[Paragraph]:
    """Already-clean text (WikiExtractor, JSONL, topics): one paragraph per non-empty line."""
    return [Paragraph((), line.strip()) for line in text.splitlines() if line.strip()]


def clean_one(job: CleanJob, options: IngestOptions) -> Cleaned:
    """Clean, segment and cut one revision's text into passages. Pure: safe in any worker."""
    fallbacks: tuple[Fallback, ...] = ()
    if job.text_format == "plain":
        paragraphs = plain_paragraphs(job.text)
    else:
        cleaned = clean_wikitext_result(
            job.text,
            title=job.title,
            keep_tables=options.keep_tables,
            keep_infobox=options.keep_infobox,
        )
        paragraphs, fallbacks = cleaned.paragraphs, cleaned.fallbacks
    passages = make_passages(
        paragraphs,
        page_id=job.page_id,
        revision_id=job.revision_id,
        title=job.title,
        timestamp=job.timestamp,
        max_words=options.max_words,
    )
    return Cleaned(passages, fallbacks)


def clean_batch(jobs: Sequence[CleanJob], options: IngestOptions) -> list[Cleaned]:
    """A worker's unit of work, in every engine: what each job gives, in order."""
    return [clean_one(job, options) for job in jobs]


def process_revision(revision: Revision, options: IngestOptions) -> Processed:
    """Clean, segment and cut one revision into passages. Pure: safe in any worker."""
    return Processed(revision, *clean_one(clean_job(revision), options))


def batched(items: Iterable[Revision], size: int) -> Iterator[list[Revision]]:
    """Batches of ``size``, the unit every engine sends out and the store writes.

    If the source fails, the partial batch is still yielded before the error propagates, so
    every revision read before a fault reaches the store, whichever engine runs.
    """
    batch: list[Revision] = []
    try:
        for item in items:
            batch.append(item)
            if len(batch) == size:
                yield batch
                batch = []
    except Exception:
        if batch:
            yield batch
        raise
    if batch:
        yield batch


def stream_batches(
    revisions: Iterable[Revision],
    *,
    batch_size: int,
    max_in_flight: int,
    submit: Callable[[list[CleanJob]], Handle],
    ready: Callable[[Handle], bool],
    result: Callable[[Handle], list[Cleaned]],
    cancel: Callable[[Handle], object],
) -> Iterator[list[Processed]]:
    """The driver loop of every parallel engine: a bounded, ordered window of batches.

    Each batch is submitted as soon as it is read, so reading overlaps the work; at most
    ``max_in_flight`` batches are out, so the reader never runs further ahead of the store
    than that and memory is flat in the input size. Batches are handed over from the head
    of the window, in input order however they finish; a head that is ``ready`` is handed
    over at once rather than when the window is full, so storing keeps pace.

    Faults: a source fault hands over every batch already submitted, then propagates, so
    every revision read before it reaches the store. A failed batch propagates its error
    at once: the store then holds exactly the batches before it. Batches still out when
    the consumer stops early (or on an error) are cancelled.
    """
    pending: deque[tuple[list[Revision], Handle]] = deque()

    def done() -> list[Processed]:
        batch, handle = pending.popleft()
        return [Processed(revision, *cleaned)
                for revision, cleaned in zip(batch, result(handle), strict=True)]

    source = batched(revisions, batch_size)
    try:
        while True:
            try:
                batch = next(source)
            except StopIteration:
                break
            except Exception:
                while pending:
                    yield done()
                raise
            pending.append((batch, submit([clean_job(r) for r in batch])))
            while pending and (len(pending) >= max_in_flight or ready(pending[0][1])):
                yield done()
        while pending:
            yield done()
    finally:
        for _, handle in pending:
            cancel(handle)
