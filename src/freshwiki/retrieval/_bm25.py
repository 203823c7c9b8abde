r"""BM25 over segments of raw term frequencies, with exact incremental adds.

bm25s (the project's BM25 library) builds an index by precomputing every posting's final
score, which bakes corpus-wide statistics (each term's idf, the average passage length) into
the stored numbers; it has no incremental add, and two indexes built separately do not
score on one scale. So we keep bm25s's tokenisation conventions (its ``\w\w+`` token
pattern, lower-casing and English stopword list) and its Lucene BM25 formula::

    score(q, d) = sum_{t in q} idf(t) * tf(t, d) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

but store only raw term frequencies, in term-major (CSC) *segments*, and evaluate the formula
at query time with the statistics of the whole index (N, df, avgdl). Consequences:

- ``add`` builds a new small segment from the new passages only and never touches older
  ones; scores are the same as a from-scratch build over the union, to the last bit (a test
  checks it, and another checks the scores against ``bm25s.BM25(method="lucene")``).
- Segments are merged when the delta segments together hold more than ``merge_fraction``
  (25%) of the main segment's postings, or there are more than ``max_segments`` of them, so
  a query touches few arrays. Merging concatenates sorted runs (a stable sort of presorted
  runs is linear-ish), far cheaper than re-tokenising.
- The query-time formula costs a gather and three vector operations per posting; that buys
  exact incremental adds. On the million-passage scaled index of ``experiments/retrieval.py``
  (31M postings; real questions touching 122k postings on average) a query takes 1.5 ms
  p50 on its own (3.0 ms between query encodings, which evict its arrays from the caches):
  ~0.6 ms gathering postings, ~1 ms summing them per passage, ~0.5 ms ranking, which uses
  a group-maximum bound (:func:`top_k_positive`) instead of partitioning a million scores
  (5 ms alone). Segments do not multiply the cost: the same million passages added in
  eight segments answered in 2.7 ms p50 against 2.3 ms as one (same results).

Stemming: English Snowball via PyStemmer when it is installed (it is not a dependency, so by
default there is none). The choice is saved with the index: an index built with a stemmer
refuses to load without it, rather than silently mis-tokenising queries.

Keys are dense integers 0..n-1 in add order; the hybrid index maps them to passages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from bm25s.stopwords import STOPWORDS_EN

from freshwiki.retrieval._errors import RetrievalError

_TOKEN = re.compile(r"(?u)\b\w\w+\b")
STOPWORDS: frozenset[str] = frozenset(STOPWORDS_EN)

Hits = list[tuple[int, float]]
"""(key, score) pairs, best first."""


def _make_stemmer(name: str | None) -> Any:
    if name is None:
        return None
    try:
        import Stemmer  # type: ignore[import-not-found]
    except ImportError as exc:
        raise RetrievalError(
            f"this BM25 index was built with the {name!r} stemmer, but PyStemmer is missing",
            hint="install PyStemmer, or rebuild the index without stemming.",
        ) from exc
    return Stemmer.Stemmer(name)


def stemmer_available() -> bool:
    """Whether PyStemmer can be imported (the ``auto`` stemming choice uses it then)."""
    try:
        import Stemmer  # noqa: F401
    except ImportError:
        return False
    return True


class Tokenizer:
    r"""Lower-case ``\w\w+`` tokens minus English stopwords, optionally stemmed."""

    def __init__(self, stemmer: str | None = None) -> None:
        self.stemmer_name = stemmer
        self._stemmer = _make_stemmer(stemmer)

    def __call__(self, text: str) -> list[str]:
        """The tokens of ``text`` in order (duplicates kept: they are term frequencies)."""
        tokens = [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]
        if self._stemmer is not None:
            tokens = list(self._stemmer.stemWords(tokens))
        return tokens


@dataclass
class _Segment:
    """Postings of keys ``base .. base + n - 1``, term-major (CSC)."""

    base: int
    n: int
    indptr: npt.NDArray[np.int64]
    """Length ``vocab_at_build + 1``: term t's postings are ``[indptr[t], indptr[t+1])``."""
    docs: npt.NDArray[np.int32]
    """Local document numbers (key - base), ascending within a term."""
    tf: npt.NDArray[np.float32]

    @property
    def postings(self) -> int:
        return len(self.docs)


def _segment_from_tokens(
    docs_terms: Sequence[npt.NDArray[np.int64]], base: int, vocab_size: int
) -> _Segment:
    n = len(docs_terms)
    lengths = np.fromiter((len(d) for d in docs_terms), dtype=np.int64, count=n)
    if lengths.sum() == 0:
        return _Segment(
            base, n, np.zeros(vocab_size + 1, dtype=np.int64),
            np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32),
        )
    terms = np.concatenate(docs_terms)
    local = np.repeat(np.arange(n, dtype=np.int64), lengths)
    pairs, counts = np.unique(terms * n + local, return_counts=True)  # term-major, doc asc
    pair_terms = pairs // n
    indptr = np.zeros(vocab_size + 1, dtype=np.int64)
    np.cumsum(np.bincount(pair_terms, minlength=vocab_size), out=indptr[1:])
    return _Segment(
        base, n, indptr, (pairs % n).astype(np.int32), counts.astype(np.float32)
    )


def _merge(segments: Sequence[_Segment], vocab_size: int) -> _Segment:
    """One segment holding every posting of ``segments`` (which must be contiguous)."""
    base = segments[0].base
    terms = np.concatenate([
        np.repeat(np.arange(len(s.indptr) - 1, dtype=np.int64), np.diff(s.indptr))
        for s in segments
    ])
    docs = np.concatenate([s.docs.astype(np.int64) + (s.base - base) for s in segments])
    tf = np.concatenate([s.tf for s in segments])
    # Each segment is term-major with ascending docs and segments are in key order, so a
    # stable sort by term keeps docs ascending within each term.
    order = np.argsort(terms, kind="stable")
    indptr = np.zeros(vocab_size + 1, dtype=np.int64)
    np.cumsum(np.bincount(terms, minlength=vocab_size), out=indptr[1:])
    return _Segment(
        base, sum(s.n for s in segments), indptr, docs[order].astype(np.int32), tf[order]
    )


def top_k(
    keys: npt.NDArray[np.int64], scores: npt.NDArray[np.float64], k: int
) -> Hits:
    """The ``k`` best (key, score) pairs, best first; ties go to the smaller key.

    ``keys`` must be ascending, so that among equal scores the smallest keys win, which
    makes results independent of how the index was assembled.
    """
    if k <= 0 or len(keys) == 0:
        return []
    if len(keys) > k:
        threshold = np.partition(scores, len(scores) - k)[len(scores) - k]
        above = scores > threshold
        ties = np.flatnonzero(scores == threshold)[: k - int(above.sum())]
        chosen = np.concatenate([np.flatnonzero(above), ties])
        keys, scores = keys[chosen], scores[chosen]
    order = np.lexsort((keys, -scores))
    return [(int(keys[i]), float(scores[i])) for i in order]


_GROUPS = 64


def top_k_positive(scores: npt.NDArray[np.float64], k: int) -> Hits:
    """The ``k`` best positive entries of a score-per-key array, as :func:`top_k` ranks them.

    Ranking a million scores outright (a partition, ~5 ms) would be most of a BM25 query at
    that size. So the scores are seen as 64 rows of ``n // 64`` and the column maxima taken
    (an element-wise maximum of rows, ~0.2 ms; contiguous blocks' maxima took ~1.5 ms): each
    column is a group of 64 scores whose maximum is a real score, so the k-th largest
    maximum is a lower bound of the true k-th score. Only the scores at or above it, all in
    columns whose maximum reaches it (usually a few hundred scores), are ranked exactly, so
    the result is the same as ranking everything.
    """
    n = len(scores)
    width = n // _GROUPS
    if n > 64 * _GROUPS and k * _GROUPS < n:
        maxima = scores[: _GROUPS * width].reshape(_GROUPS, width).max(axis=0)
        positive = maxima[maxima > 0]  # partitioning many equal zeros is slow
        if len(positive) >= k:
            bound = positive[np.argpartition(positive, len(positive) - k)[len(positive) - k]]
            hot = np.flatnonzero(maxima >= bound)
            candidates = (np.arange(_GROUPS, dtype=np.int64)[:, None] * width + hot).ravel()
            candidates = candidates[scores[candidates] >= bound]
            tail = np.flatnonzero(scores[_GROUPS * width :] >= bound) + _GROUPS * width
            keys = np.sort(np.concatenate([candidates, tail]))  # top_k wants them ascending
            return top_k(keys, scores[keys], k)
    candidates = np.flatnonzero(scores > 0).astype(np.int64)
    return top_k(candidates, scores[candidates], k)


class BM25Index:
    """Lucene-variant BM25 over segments (see the module doc).

    Args:
        k1: Term-frequency saturation (bm25s's default 1.5).
        b: Length normalisation (0.75).
        stemmer: A PyStemmer algorithm name (``"english"``), ``None`` for no stemming, or
            ``"auto"``: English when PyStemmer is installed, else none.
        merge_fraction: Merge when delta postings exceed this share of the main segment's.
        max_segments: Merge when there are more segments than this.
    """

    def __init__(
        self,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        stemmer: str | None = "auto",
        merge_fraction: float = 0.25,
        max_segments: int = 8,
    ) -> None:
        if stemmer == "auto":
            stemmer = "english" if stemmer_available() else None
        self.k1 = k1
        self.b = b
        self.merge_fraction = merge_fraction
        self.max_segments = max_segments
        self.tokenize = Tokenizer(stemmer)
        self.vocab: dict[str, int] = {}
        self._segments: list[_Segment] = []
        self._df = np.zeros(0, dtype=np.int64)
        self._doc_len = np.zeros(0, dtype=np.int64)
        self._norm = np.zeros(0, dtype=np.float32)
        self._pending: list[npt.NDArray[np.int64]] = []
        self._pending_len: list[int] = []

    # -- building --------------------------------------------------------------------------

    def __len__(self) -> int:
        """Searchable passages (staged ones not included)."""
        return len(self._doc_len)

    @property
    def segments(self) -> int:
        """Current number of segments (1 after a merge)."""
        return len(self._segments)

    def _term_ids(self, tokens: list[str]) -> npt.NDArray[np.int64]:
        vocab = self.vocab
        ids = []
        for token in tokens:
            tid = vocab.get(token)
            if tid is None:
                tid = vocab[token] = len(vocab)
            ids.append(tid)
        return np.asarray(ids, dtype=np.int64)

    def stage(self, texts: Iterable[str]) -> None:
        """Tokenise texts into the next segment without building it yet.

        Lets a caller streaming a large corpus in batches build one segment at the end
        (:meth:`commit`) instead of one per batch. Keys continue from ``len(self)``.
        """
        for text in texts:
            ids = self._term_ids(self.tokenize(text))
            self._pending.append(ids)
            self._pending_len.append(len(ids))

    def commit(self) -> None:
        """Build the staged texts into a segment, merging segments when due."""
        if not self._pending:
            return
        vocab_size = len(self.vocab)
        segment = _segment_from_tokens(self._pending, len(self._doc_len), vocab_size)
        self._pending, lengths = [], self._pending_len
        self._pending_len = []
        self._doc_len = np.concatenate([self._doc_len, np.asarray(lengths, dtype=np.int64)])
        df = np.zeros(vocab_size, dtype=np.int64)
        df[: len(self._df)] = self._df
        df += np.diff(segment.indptr)
        self._df = df
        self._segments.append(segment)
        self._maybe_merge()
        self._update_norm()

    def add(self, texts: Iterable[str]) -> None:
        """Index texts as the next keys (one new segment)."""
        self.stage(texts)
        self.commit()

    def _maybe_merge(self) -> None:
        if len(self._segments) < 2:
            return
        main = self._segments[0].postings
        delta = sum(s.postings for s in self._segments[1:])
        if delta > self.merge_fraction * main or len(self._segments) > self.max_segments:
            self.merge()

    def merge(self) -> None:
        """Merge every segment into one (search results do not change)."""
        if len(self._segments) > 1:
            self._segments = [_merge(self._segments, len(self.vocab))]

    def _update_norm(self) -> None:
        n = len(self._doc_len)
        avgdl = float(self._doc_len.sum()) / n if n else 1.0
        avgdl = avgdl or 1.0
        lengths = self._doc_len.astype(np.float32)
        self._norm = (
            np.float32(self.k1) * (np.float32(1 - self.b) + np.float32(self.b) * lengths
                                   / np.float32(avgdl))
        ).astype(np.float32)

    # -- searching -------------------------------------------------------------------------

    def idf(self, term_ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """Lucene idf of terms, from the whole index's document frequencies."""
        n = float(len(self._doc_len))
        df = self._df[term_ids].astype(np.float64)
        return np.log(1.0 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)

    def _postings(
        self, query: str
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Keys and score contributions of every posting of the query's terms, term-major."""
        term_ids = np.asarray(
            [self.vocab[t] for t in self.tokenize(query) if t in self.vocab], dtype=np.int64
        )
        if len(term_ids) == 0 or len(self._doc_len) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        idf = self.idf(term_ids)
        keys: list[npt.NDArray[np.int64]] = []
        parts: list[npt.NDArray[np.float32]] = []
        for term, weight in zip(term_ids.tolist(), idf.tolist(), strict=True):
            for seg in self._segments:
                if term + 1 >= len(seg.indptr):
                    continue
                start, end = int(seg.indptr[term]), int(seg.indptr[term + 1])
                if start == end:
                    continue
                docs = seg.docs[start:end].astype(np.int64) + seg.base
                tf = seg.tf[start:end]
                parts.append(np.float32(weight) * tf / (tf + self._norm[docs]))
                keys.append(docs)
        if not keys:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        return np.concatenate(keys), np.concatenate(parts)

    def scores(self, query: str) -> npt.NDArray[np.float64]:
        """The BM25 score of every passage (zeros where no query term occurs)."""
        keys, parts = self._postings(query)
        return np.bincount(keys, weights=parts, minlength=len(self._doc_len)).astype(
            np.float64, copy=False
        )

    def search(
        self, query: str, k: int, allowed: npt.NDArray[np.bool_] | None = None
    ) -> Hits:
        """The ``k`` best-scoring passages containing at least one query term.

        Args:
            query: Free text, tokenised like the passages.
            k: How many to return (fewer when fewer passages match).
            allowed: Optional mask over keys; passages outside it are never returned.
        """
        keys, parts = self._postings(query)
        if len(keys) == 0:
            return []
        n = len(self._doc_len)
        if len(keys) * 16 < n:
            # Few postings: sum per distinct key without touching an array of size n.
            uniq, inverse = np.unique(keys, return_inverse=True)
            sums = np.bincount(inverse, weights=parts, minlength=len(uniq)).astype(
                np.float64, copy=False
            )
            if allowed is not None:
                keep = allowed[uniq]
                uniq, sums = uniq[keep], sums[keep]
        else:
            dense = np.bincount(keys, weights=parts, minlength=n).astype(np.float64, copy=False)
            if allowed is not None:
                dense[~allowed] = 0.0
            return top_k_positive(dense, k)
        positive = sums > 0
        return top_k(uniq[positive], sums[positive], k)

    # -- persistence -----------------------------------------------------------------------

    def save(self, directory: Path) -> None:
        """Write the index into ``directory`` (created; staged texts must be committed)."""
        if self._pending:
            raise RetrievalError("BM25 index has staged texts", hint="call commit() first.")
        directory.mkdir(parents=True, exist_ok=True)
        config = {
            "k1": self.k1, "b": self.b, "stemmer": self.tokenize.stemmer_name,
            "merge_fraction": self.merge_fraction, "max_segments": self.max_segments,
            "segments": len(self._segments), "passages": len(self._doc_len),
        }
        (directory / "bm25.json").write_text(json.dumps(config), encoding="utf-8")
        vocab = sorted(self.vocab, key=self.vocab.__getitem__)
        (directory / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False),
                                              encoding="utf-8")
        np.save(directory / "doc_len.npy", self._doc_len)
        for i, seg in enumerate(self._segments):
            np.savez(
                directory / f"segment-{i}.npz",
                meta=np.array([seg.base, seg.n], dtype=np.int64),
                indptr=seg.indptr, docs=seg.docs, tf=seg.tf,
            )

    @classmethod
    def load(cls, directory: Path) -> BM25Index:
        """Read an index written by :meth:`save`."""
        config = json.loads((directory / "bm25.json").read_text(encoding="utf-8"))
        index = cls(
            k1=config["k1"], b=config["b"], stemmer=config["stemmer"],
            merge_fraction=config["merge_fraction"], max_segments=config["max_segments"],
        )
        vocab = json.loads((directory / "vocab.json").read_text(encoding="utf-8"))
        index.vocab = {token: i for i, token in enumerate(vocab)}
        index._doc_len = np.load(directory / "doc_len.npy")
        df = np.zeros(len(vocab), dtype=np.int64)
        for i in range(config["segments"]):
            with np.load(directory / f"segment-{i}.npz") as data:
                base, n = (int(x) for x in data["meta"])
                seg = _Segment(base, n, data["indptr"], data["docs"], data["tf"])
            df[: len(seg.indptr) - 1] += np.diff(seg.indptr)
            index._segments.append(seg)
        index._df = df
        index._update_norm()
        return index
