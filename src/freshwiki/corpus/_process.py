"""The pure per-revision work of ingest: clean, segment, cut into passages.

Kept apart from :mod:`freshwiki.corpus.ingest` because every engine runs it: the local
process pool in ``ingest`` and the Ray pipeline in ``_ray_engine``. Both import it from here,
so neither engine imports the other's module to reach it.
"""

from __future__ import annotations

from dataclasses import dataclass

from freshwiki.corpus.segment import DEFAULT_MAX_WORDS, make_passages
from freshwiki.corpus.wikitext import clean_wikitext
from freshwiki.records import Paragraph, Passage, Revision

Processed = tuple[Revision, list[Passage]]


@dataclass(frozen=True)
class IngestOptions:
    """What to keep from each revision."""

    max_words: int = DEFAULT_MAX_WORDS
    keep_tables: bool = False
    keep_infobox: bool = False
    keep_text: bool = True
    skip_redirects: bool = True


def is_redirect(revision: Revision) -> bool:
    """A redirect by the dump's flag, or by its text (old dumps may carry no target)."""
    return revision.page.redirect is not None or (
        revision.text_format == "wikitext"
        and revision.text.lstrip()[:9].upper() == "#REDIRECT"
    )


def plain_paragraphs(text: str) -> list[Paragraph]:
    """Already-clean text (WikiExtractor, JSONL, topics): one paragraph per non-empty line."""
    return [Paragraph((), line.strip()) for line in text.splitlines() if line.strip()]


def process_revision(revision: Revision, options: IngestOptions) -> Processed:
    """Clean, segment and cut one revision into passages. Pure: safe in any worker."""
    if revision.text_format == "plain":
        paragraphs = plain_paragraphs(revision.text)
    else:
        paragraphs = clean_wikitext(
            revision.text,
            title=revision.page.title,
            keep_tables=options.keep_tables,
            keep_infobox=options.keep_infobox,
        )
    passages = make_passages(
        paragraphs,
        page_id=revision.page.id,
        revision_id=revision.id,
        title=revision.page.title,
        timestamp=revision.timestamp if revision.dated else None,
        max_words=options.max_words,
    )
    return revision, passages
