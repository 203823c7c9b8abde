"""The retrieval layer: BM25 + dense + fusion, time-aware rerank, filters; persisted.

Start with :class:`HybridIndex`::

    index = HybridIndex.build(store.passages(latest_only=True), default_index_dir(settings))
    hits = index.search("who coaches the team?", k=5, time_intent="recent")
    hits[0].passage.text, hits[0].bm25_rank, hits[0].dense_rank

    index = HybridIndex.load(default_index_dir(settings))  # later, elsewhere
    index.add(new_passages)  # incremental; then
    index.save()

The component indexes (:class:`BM25Index`, :class:`DenseIndex`) and the :class:`Embedder`
are public for benchmarks and for callers that need only one of them.
"""

from freshwiki.retrieval._bm25 import BM25Index, Tokenizer
from freshwiki.retrieval._dates import extract_years
from freshwiki.retrieval._default_corpus import (
    DEFAULT_INDEX,
    USER_INDEX,
    build_default_index,
    default_corpus_path,
    default_corpus_sources,
    has_index,
    open_search_index,
    resolve_index_name,
)
from freshwiki.retrieval._dense import DenseIndex
from freshwiki.retrieval._embed import (
    DIMENSION,
    MODEL_NAME,
    RUNTIMES,
    Embedder,
    EmbeddingCache,
    default_cache_path,
    model_directory,
    runtime_name,
)
from freshwiki.retrieval._embed_ray import embed_on_ray
from freshwiki.retrieval._errors import IndexNotFoundError, RetrievalError
from freshwiki.retrieval._fusion import FUSION_METHODS, FusionMethod, fuse
from freshwiki.retrieval._hybrid import (
    METHODS,
    HybridIndex,
    IndexConfig,
    Method,
    Progress,
    SearchHit,
    default_index_dir,
    index_content,
)
from freshwiki.retrieval._lazy import LazyIndex
from freshwiki.retrieval._snapshots import SnapshotIndexes, shared_snapshot_indexes
from freshwiki.retrieval._time import TimeIntent, rerank_order, time_scores

__all__ = [
    "DEFAULT_INDEX",
    "DIMENSION",
    "FUSION_METHODS",
    "METHODS",
    "MODEL_NAME",
    "RUNTIMES",
    "USER_INDEX",
    "BM25Index",
    "DenseIndex",
    "Embedder",
    "EmbeddingCache",
    "FusionMethod",
    "HybridIndex",
    "IndexConfig",
    "IndexNotFoundError",
    "LazyIndex",
    "Method",
    "Progress",
    "RetrievalError",
    "SearchHit",
    "SnapshotIndexes",
    "TimeIntent",
    "Tokenizer",
    "build_default_index",
    "default_cache_path",
    "default_corpus_path",
    "default_corpus_sources",
    "default_index_dir",
    "embed_on_ray",
    "extract_years",
    "fuse",
    "has_index",
    "index_content",
    "model_directory",
    "open_search_index",
    "rerank_order",
    "resolve_index_name",
    "runtime_name",
    "shared_snapshot_indexes",
    "time_scores",
]
