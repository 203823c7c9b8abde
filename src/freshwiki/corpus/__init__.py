"""The corpus layer: dumps and extracted text → revisions → clean text → passages; store."""

from freshwiki.corpus.ingest import IngestOptions, IngestReport, ingest, process_revision
from freshwiki.corpus.readers import (
    ARTICLE_NAMESPACES,
    DumpReadError,
    MultistreamIndex,
    PageFault,
    ReadReport,
    iter_latest,
    iter_pages,
    iter_revisions,
    read_page_at,
    read_source,
)
from freshwiki.corpus.segment import make_passages, split_sentences
from freshwiki.corpus.store import AddResult, CorpusStore, FallbackSummary, StoredFallback
from freshwiki.corpus.wikitext import (
    TOO_DEEP,
    CleanResult,
    Fallback,
    WikitextError,
    clean_wikitext,
    clean_wikitext_result,
    extract_tags,
)

__all__ = [
    "ARTICLE_NAMESPACES",
    "TOO_DEEP",
    "AddResult",
    "CleanResult",
    "CorpusStore",
    "DumpReadError",
    "Fallback",
    "FallbackSummary",
    "IngestOptions",
    "IngestReport",
    "MultistreamIndex",
    "PageFault",
    "ReadReport",
    "StoredFallback",
    "WikitextError",
    "clean_wikitext",
    "clean_wikitext_result",
    "extract_tags",
    "ingest",
    "iter_latest",
    "iter_pages",
    "iter_revisions",
    "make_passages",
    "process_revision",
    "read_page_at",
    "read_source",
    "split_sentences",
]
