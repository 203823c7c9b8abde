#!/usr/bin/env python
"""Benchmark the retrieval layer: build rate, query latency and QPS, recall, at 10k and 1M.

Run from the repository root::

    .venv/bin/python experiments/retrieval.py [--work DIR] [--scale N] [--quick] [--reuse]

The first run embeds the 11,237 real passages (~3 minutes on 2 cores); the vectors are
cached in ``WORK/embeddings.sqlite``, so later runs embed nothing. The million-passage
index takes ~10 minutes to build; ``--reuse`` keeps one built earlier with the same
``--scale``/``--noise``/``--seed`` (its build figures are reused too).

**Real (10k).** Corpus: the 10,419 WikiChat topic leads (head, tail, recent) cut into
passages the way the corpus layer cuts topics files, plus the WikiContradict paragraphs
(none of the WikiContradict articles is a topic title, so they are added to make its
questions answerable): 11,237 passages. Query sets, each with gold article titles:

- ``wikicontradict``: the 253 human-written WikiContradict questions; gold = the article(s)
  of the question's two paragraphs;
- ``titles``: 1,000 topic titles drawn at random (seed 0); gold = that article;
- ``paraphrase``: 30 descriptions of topic articles written by hand in other words
  (``PARAPHRASE_QUERIES`` in ``tests/retrieval/data.py``), the one set where lexical
  overlap is low.

Recall is article-level: recall@k counts a query when any of the top k passages belongs to
a gold article; MRR@10 averages 1/rank of the first such passage (0 beyond 10). The fusion
variants are computed from the same two component lists (top 100 each) that
``HybridIndex.search`` fuses, so they differ only in the fusion function; ``hybrid`` is the
real default search path.

**Scaled (``--scale``, default 1M).** The real passages repeated with perturbation until
there are ``--scale`` of them: copy c of a passage gets its own page, revision and passage
id, the title suffixed with ``~c`` and a revision time of its own, its sentences shuffled
and each word dropped with probability 0.1. Embedding a million passages would take ~4.5
hours here, so a copy's vector is **not** embedded: it is the cached vector of its real
passage plus seeded Gaussian noise (``--noise`` per dimension), renormalised. The report
gives the resulting cosine between copy and original beside the real nearest-neighbour
cosine, so the clustering this creates is visible. That is fine for latency and memory;
the article recall of such a corpus would mean little, so at scale the dense index is
judged instead by its agreement with exact search over the same vectors (recall@10 and
@100 of HNSW against a brute-force top k), for several ``efSearch`` values.

The scaled index is built in one subprocess and queried in another, so each peak RSS
(``VmHWM``) is that phase's own. Build time is split by component (passage table, BM25,
dense index; generating the copies and deriving their vectors are timed apart and not
counted in the index's build rate).

**Latency.** One query at a time, the same real queries at both sizes: the 283
natural-language ones (WikiContradict questions, then paraphrases; titles only if
``--latency-queries`` asks for more), each timed ``--rounds`` times. Both indexes are
loaded in the query-phase process and measured interleaved: each query runs through every
row of both sizes (in an order rotated per query) before the next, so load from other work
on the shared 2-core machine falls on all rows and both sizes alike. The query-vector cache
is cleared before every timed query, so every dense and hybrid query pays for encoding it,
except in the row that says the vector is cached. Reported: p50 / p99 wall milliseconds
(nearest rank), QPS = queries / total seconds for that single client, and the p50 of the
query's CPU time on its thread (where all of it runs), which stands for a dedicated machine
when others load this one. The load average is printed. Nothing is asserted; the goals
(hybrid p50 <= 20 ms at the scaled size; hybrid recall@10 >= the best single method on
every set) are reported as met or not. Results go to ``experiments/results/retrieval.json``
(``--quick``: into ``WORK``).

**HNSW against exact.** ``--ann-queries`` queries (questions, paraphrases, then titles);
the dense index asked for 100 hits as the hybrid search asks it, against a brute-force
top 100 over the same vectors, for several ``efSearch`` values. At 10k the graph is built
for this over the real vectors (the index itself is exact there).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from _provenance import data_provenance, write_result
from freshwiki.records import Passage
from freshwiki.retrieval import (
    BM25Index,
    DenseIndex,
    Embedder,
    HybridIndex,
    IndexConfig,
    fuse,
)
from freshwiki.retrieval.parts import (
    TABLE_DB,
    EmbedProgress,
    FusionMethod,
    Hits,
    PassageTable,
    Vectors,
)
from freshwiki.stats import percentile

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
# ../shared/data beside the checkout (DEVELOPERS.md): read there, never copied.
SHARED_DATA = REPO.parent / "shared" / "data"
RESULTS_PATH = ROOT / "results" / "retrieval.json"
DEFAULT_WORK = Path("/tmp/fw-bench-retrieval")
DEFAULT_SCALE = 1_000_000
QUICK_SCALE = 60_000  # past the 50k flat limit, so the quick run still exercises HNSW
GOAL_P50_MS = 20.0
DROPOUT = 0.1
ID_STRIDE = 1_000_000  # copy c of page p becomes page p + c * ID_STRIDE
SINCE = dt.date(2021, 1, 1)  # a broad time filter: about a third of the passages
EF_SEARCH = (128, 256, 512, 1024, 2048)
DEPTH = 100  # HybridIndex's default component depth: what the dense index is asked for
COPY_SUFFIX = re.compile(r" ~\d+$")

console = Console(width=140)

VARIANTS: list[tuple[str, FusionMethod, float]] = [
    ("rrf", "rrf", 1.0),
    ("weighted_rrf bm25=0.5", "weighted_rrf", 0.5),
    ("weighted_rrf bm25=0.7", "weighted_rrf", 0.7),
    ("weighted_rrf bm25=1.5", "weighted_rrf", 1.5),
    ("minmax bm25=0.5", "minmax", 0.5),
    ("minmax bm25=0.7", "minmax", 0.7),
    ("minmax bm25=1.0", "minmax", 1.0),
    ("minmax bm25=1.5", "minmax", 1.5),
]


# -- small helpers ----------------------------------------------------------------------------


def log(msg: str) -> None:
    console.print(f"  .. {msg}", highlight=False)


def p99_ms(samples: Sequence[float]) -> float:
    """The nearest-rank 99th percentile of ``samples`` (seconds, at least one) in ms."""
    value = percentile(samples, 0.99)
    if value is None:
        raise ValueError("no timings")
    return round(value * 1000, 2)


def proc_status_mb(field_name: str) -> float:
    """A ``/proc/self/status`` memory field (``VmHWM`` = peak RSS, ``VmRSS``) in MB.

    ``VmHWM`` rather than ``ru_maxrss``: Linux carries ``ru_maxrss`` across ``exec``, so a
    subprocess of this benchmark would start at the parent's peak.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field_name}:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:  # pragma: no cover - not Linux
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def dir_mb(path: Path) -> float:
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1)


def progress_bar() -> Progress:
    return Progress(
        TextColumn("  {task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), console=console, transient=True,
    )


def ratio(a: float, b: float) -> float:
    return round(a / b, 2) if b > 0 else float("nan")


# -- real data --------------------------------------------------------------------------------


@dataclass
class RealData:
    """The real passages and query sets (see the module doc)."""

    passages: list[Passage]
    articles: int
    query_sets: dict[str, list[tuple[str, set[str]]]]
    queries: list[str] = field(default_factory=list)
    """Every query: WikiContradict questions, paraphrases, then titles."""


def load_real(titles: int) -> RealData:
    """Build the real corpus and query sets from ``../shared/data``."""
    sys.path.insert(0, str(REPO))  # the shared real-data builders live with the tests
    from tests.retrieval.data import (
        PARAPHRASE_QUERIES,
        passages_of,
        topic_leads,
        wikicontradict,
        wikicontradict_articles,
        wikicontradict_questions,
    )

    leads = topic_leads(SHARED_DATA)
    entries = wikicontradict(SHARED_DATA)
    contradict = wikicontradict_articles(entries)
    passages = passages_of(leads) + passages_of(contradict, first_page_id=len(leads) + 1)
    questions = wikicontradict_questions(entries)
    rng = random.Random(0)
    title_queries = [(t, {t}) for t in rng.sample(sorted(leads), titles)]
    paraphrases = [(q, {gold}) for q, gold in PARAPHRASE_QUERIES]
    sets = {
        f"wikicontradict ({len(questions)} q)": questions,
        f"titles ({len(title_queries)} q)": title_queries,
        f"paraphrase ({len(paraphrases)} q, hand-written)": paraphrases,
    }
    pool = [q for q, _ in questions] + [q for q, _ in paraphrases]
    pool += [q for q, _ in title_queries]
    return RealData(passages, len(leads) + len(contradict), sets, pool)


# -- measurements shared by both sizes -------------------------------------------------------


def summary_ms(samples: Sequence[float], cpu: Sequence[float] | None = None) -> dict[str, float]:
    """p50/p99 in ms and single-client QPS (queries / total seconds) of timed samples.

    ``cpu``: the same queries' CPU time on the calling thread, which is where every part
    of a query runs (the encoder and FAISS on one thread each, numpy): unlike wall time it
    barely grows when other work shares the cores, so it stands for a dedicated machine.
    """
    out = {
        "p50_ms": round(statistics.median(samples) * 1000, 2),
        "p99_ms": p99_ms(samples),
        "qps": round(len(samples) / sum(samples), 1),
        "queries": len(samples),
    }
    if cpu is not None:
        out["cpu_p50_ms"] = round(statistics.median(cpu) * 1000, 2)
    return out


def timed_queries(
    run: Callable[[str], object], queries: Sequence[str]
) -> dict[str, float]:
    """p50/p99 ms and single-client QPS of ``run`` over ``queries``."""
    samples = []
    for query in queries:
        start = time.perf_counter()
        run(query)
        samples.append(time.perf_counter() - start)
    return summary_ms(samples)


def latency_rows(
    indexes: dict[str, HybridIndex], embedder: Embedder, queries: Sequence[str], rounds: int
) -> dict[str, dict[str, dict[str, float]]]:
    """Latency of each search method and variant at each size, cold query vectors.

    Interleaved: each query runs through every row of every index (in an order rotated
    from one query to the next) before the next query, so a change in the load other work
    puts on the shared machine falls on all rows and both sizes alike.
    """
    def cold(_: str) -> None:
        embedder.clear_query_cache()

    def cached(query: str) -> None:
        embedder.embed_query(query)

    rows: list[tuple[str, str, Callable[[str], object], Callable[[str], None]]] = []
    for size, index in indexes.items():
        index.search("warm up the query path", 5)
        index.search("warm up the filters", 5, since=SINCE, time_intent="recent")
        rows += [
            (size, "encode query", embedder.embed_query, cold),
            (size, "bm25", partial(index.search, k=5, method="bm25"), cold),
            (size, "dense", partial(index.search, k=5, method="dense"), cold),
            (size, "hybrid", partial(index.search, k=5), cold),
            (size, "hybrid, query vector cached", partial(index.search, k=5), cached),
            (size, "hybrid + time intent recent",
             partial(index.search, k=5, time_intent="recent"), cold),
            (size, f"hybrid + since {SINCE}", partial(index.search, k=5, since=SINCE), cold),
        ]
    wall: dict[tuple[str, str], list[float]] = {(size, name): [] for size, name, _, _ in rows}
    cpu: dict[tuple[str, str], list[float]] = {key: [] for key in wall}
    turn = 0
    with progress_bar() as bar:
        task = bar.add_task("latency", total=rounds * len(queries))
        for _ in range(rounds):
            for query in queries:
                turn += 1
                for size, name, run, before in rows[turn % len(rows):] + rows[: turn % len(rows)]:
                    before(query)
                    start, start_cpu = time.perf_counter(), time.thread_time()
                    run(query)
                    wall[size, name].append(time.perf_counter() - start)
                    cpu[size, name].append(time.thread_time() - start_cpu)
                bar.advance(task)
    out: dict[str, dict[str, dict[str, float]]] = {size: {} for size in indexes}
    for size, name in wall:
        out[size][name] = summary_ms(wall[size, name], cpu[size, name])
        log(f"{size} {name}: {out[size][name]}")
    return out


def exact_top(
    vectors: npt.NDArray[np.float32], queries: npt.NDArray[np.float32], k: int
) -> list[list[int]]:
    """The exact top-``k`` keys by inner product for each query, best first (brute force)."""
    out: list[list[int]] = []
    with progress_bar() as bar:
        task = bar.add_task("exact search", total=len(queries))
        for start in range(0, len(queries), 16):
            scores = vectors @ queries[start : start + 16].T  # (n, chunk)
            for j in range(scores.shape[1]):
                top = np.argpartition(-scores[:, j], k - 1)[:k]
                out.append(top[np.argsort(-scores[top, j], kind="stable")].tolist())
            bar.advance(task, scores.shape[1])
    return out


def ann_agreement(
    dense: DenseIndex,
    query_vectors: npt.NDArray[np.float32],
    exact: list[list[int]],
    originals: int,
) -> list[dict[str, float]]:
    """HNSW recall against exact search and its latency, per ``efSearch`` (index cost only).

    The dense index is asked for ``DEPTH`` hits, as the hybrid search asks it: recall@10 is
    its top 10 against the exact top 10, recall@100 its 100 against the exact 100.
    ``source recall@10`` counts real passages instead of keys (key ``i`` is a copy of real
    passage ``i % originals``): scaled copies differ from their original by random noise,
    so which copies are the exact top 10 is partly chance, while finding the right real
    passages is what retrieval needs.
    """
    rows = []
    default = dense.ef_search
    for ef in EF_SEARCH:
        dense.ef_search = ef
        samples, r10, r100, s10 = [], [], [], []
        for vector, ranked in zip(query_vectors, exact, strict=True):
            top10, top100 = set(ranked[:10]), set(ranked)
            start = time.perf_counter()
            hits = dense.search(vector, DEPTH)
            samples.append(time.perf_counter() - start)
            keys = [key for key, _ in hits]
            r10.append(len(top10 & set(keys[:10])) / 10)
            r100.append(len(top100 & set(keys)) / len(top100))
            sources = {key % originals for key in top10}
            s10.append(len(sources & {key % originals for key in keys[:10]}) / len(sources))
        rows.append({
            "ef_search": ef, "recall@10": round(float(np.mean(r10)), 3),
            "min_recall@10": round(float(np.min(r10)), 2),
            "source_recall@10": round(float(np.mean(s10)), 3),
            "min_source_recall@10": round(float(np.min(s10)), 2),
            "recall@100": round(float(np.mean(r100)), 3),
            "p50_ms": round(statistics.median(samples) * 1000, 2),
            "p99_ms": p99_ms(samples),
            "default": ef == default,
        })
        log(f"HNSW efSearch={ef}: {rows[-1]}")
    dense.ef_search = default
    return rows


def query_vectors(embedder: Embedder, queries: Sequence[str]) -> npt.NDArray[np.float32]:
    return np.stack([embedder.embed_query(q) for q in queries])


# -- the real 10k corpus ----------------------------------------------------------------------


def recall_table(
    index: HybridIndex,
    queries: list[tuple[str, set[str]]],
    bar: Progress,
    task: Any,
    *,
    variants: bool = True,
    article: Callable[[str], str] = str,
) -> dict[str, dict[str, float]]:
    """Recall@1, recall@10 and MRR@10 per method (and fusion variant), article level.

    ``article`` maps a hit's title to the article it stands for (at scale a copy's title
    ``T ~c`` stands for ``T``).
    """
    ranks: dict[str, list[int | None]] = {}
    titles: dict[int, str] = {}

    def hit(name: str, keys: list[int], gold: set[str]) -> None:
        first = next((i for i, key in enumerate(keys[:10], 1) if titles[key] in gold), None)
        ranks.setdefault(name, []).append(first)

    for query, gold in queries:
        lists: list[Hits] = []
        for method in ("bm25", "dense"):
            hits = index.search(query, DEPTH, method=method)
            titles.update((h.key, article(h.title)) for h in hits)
            lists.append([(h.key, h.fused_score) for h in hits])
            hit(method, [h.key for h in hits], gold)
        default = index.search(query, 10)  # the real hybrid path
        titles.update((h.key, article(h.title)) for h in default)
        hit("hybrid", [h.key for h in default], gold)
        for name, method_name, weight in VARIANTS if variants else ():
            fused = fuse(lists, method_name, (weight, 1.0), depth=DEPTH)
            hit(name, [f.key for f in fused], gold)
        bar.advance(task)
    return {
        name: {
            "recall@1": round(sum(r == 1 for r in found) / len(found), 3),
            "recall@10": round(sum(r is not None for r in found) / len(found), 3),
            "mrr@10": round(sum(1 / r for r in found if r) / len(found), 3),
        }
        for name, found in ranks.items()
    }


def copy_article(title: str) -> str:
    """The real article a scaled copy's title ``T ~c`` stands for."""
    return COPY_SUFFIX.sub("", title)


def build_with_bar(
    passages: Sequence[Passage], directory: Path, embedder: Embedder
) -> HybridIndex:
    with progress_bar() as bar:
        tasks: dict[str, Any] = {}

        def report(stage: str, done: int, total: int | None) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        return HybridIndex.build(passages, directory, embedder=embedder, progress=report,
                                 overwrite=True)


def run_real(args: argparse.Namespace, data: RealData) -> dict[str, Any]:
    """Build the real index twice (cache as found, then warm), then HNSW-vs-flat, recall."""
    out: dict[str, Any] = {"passages": len(data.passages), "articles": data.articles}
    embedder = Embedder(args.work / "embeddings.sqlite", query_cache_size=4096)
    sample = [p.indexed_text for p in data.passages[: args.embed_sample]]
    embedder.encode(sample[:8])  # load the model
    start = time.perf_counter()
    embedder.encode(sample)
    seconds = time.perf_counter() - start
    out["embedding"] = {"passages": len(sample),
                        "passages_per_s": round(len(sample) / seconds, 1)}
    log(f"embedding (model only, {len(sample)} passages): {out['embedding']}")
    assert embedder.cache is not None
    for run in ("first", "warm"):
        cached = len(embedder.cache)
        before = embedder.embedded
        start = time.perf_counter()
        index = build_with_bar(data.passages, args.work / "real-index", embedder)
        seconds = time.perf_counter() - start
        out[f"build_{run}"] = {
            "seconds": round(seconds, 1),
            "passages_per_s": round(len(data.passages) / seconds, 1),
            "embedded": embedder.embedded - before,
            "vectors_cached_before": cached,
        }
        index.close()
        log(f"build ({run}): {out[f'build_{run}']}")

    index = HybridIndex.load(args.work / "real-index", embedder=embedder)
    out["stats"] = index.stats()

    # Dense: an HNSW graph over the same vectors against the exact flat index.
    vectors = np.array(index._dense.vectors())
    queries = query_vectors(embedder, data.queries[: args.ann_queries])
    start = time.perf_counter()
    hnsw = DenseIndex(vectors.shape[1], flat_max=0)
    hnsw.add(vectors)
    hnsw_build = time.perf_counter() - start
    flat = timed_queries(lambda q: index._dense.search(embedder.embed_query(q), DEPTH),
                         data.queries[: args.ann_queries])
    out["dense_index"] = {
        "vectors": len(vectors), "hnsw_build_s": round(hnsw_build, 2),
        "flat_exact": {"p50_ms": flat["p50_ms"], "p99_ms": flat["p99_ms"]},
        "hnsw": ann_agreement(hnsw, queries, exact_top(vectors, queries, DEPTH),
                              len(vectors)),
    }
    with progress_bar() as bar:
        task = bar.add_task("recall", total=sum(len(q) for q in data.query_sets.values()))
        out["quality"] = {
            name: recall_table(index, queries_, bar, task)
            for name, queries_ in data.query_sets.items()
        }
    index.close()
    embedder.close()
    return out


# -- the scaled corpus ------------------------------------------------------------------------


def perturbed_copies(
    real: Sequence[Passage], total: int, seed: int
) -> Iterator[Passage]:
    """The real passages, then perturbed copies of them, ``total`` passages in all."""
    sys.path.insert(0, str(REPO))
    from tests.retrieval.data import stamp_for

    rng = random.Random(seed)
    for i in range(total):
        copy, position = divmod(i, len(real))
        p = real[position]
        if copy == 0:
            yield p
            continue
        sentences = list(p.sentences) or [p.text]
        rng.shuffle(sentences)
        kept = []
        for sentence in sentences:
            words = sentence.split()
            dropped = [w for w in words if rng.random() >= DROPOUT] or words[:1]
            kept.append(" ".join(dropped))
        page_id = p.page_id + copy * ID_STRIDE
        revision_id = p.revision_id + copy * ID_STRIDE
        yield Passage(
            id=f"{page_id}-{revision_id}-{p.id.rsplit('-', 1)[1]}",
            page_id=page_id, revision_id=revision_id, title=f"{p.title} ~{copy}",
            section_path=p.section_path, text=" ".join(kept), timestamp=stamp_for(page_id),
            sentences=tuple(kept), meta={"copy_of": p.id},
        )


class Clock:
    """Seconds accumulated over timed sections."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def time(self, fn: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        try:
            return fn()
        finally:
            self.seconds += time.perf_counter() - start


def timed_iter(items: Iterable[Passage], clock: Clock) -> Iterator[Passage]:
    iterator = iter(items)
    while True:
        start = time.perf_counter()
        item = next(iterator, None)
        clock.seconds += time.perf_counter() - start
        if item is None:
            return
        yield item


class DerivedEmbedder(Embedder):
    """Serves copies the cached vector of their real passage plus seeded noise, renormalised.

    Real passages get their own cached vector. Queries are still embedded by the model.
    """

    def __init__(self, base: dict[str, Vectors], noise: float, seed: int) -> None:
        super().__init__(None)
        self.base = base
        self.noise = noise
        self.rng = np.random.default_rng(seed)
        self.clock = Clock()

    def embed_passages(
        self,
        passages: Sequence[Passage],
        *,
        progress: EmbedProgress | None = None,
        chunk_size: int = 512,
    ) -> Vectors:
        def derive() -> Vectors:
            sources = [p.meta.get("copy_of", p.id) for p in passages]
            vectors = np.stack([self.base[s] for s in sources])
            copies = np.asarray([p.id != s for p, s in zip(passages, sources, strict=True)])
            noise = self.rng.standard_normal((int(copies.sum()), vectors.shape[1]),
                                             dtype=np.float32)
            vectors[copies] += noise * np.float32(self.noise)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            return vectors

        vectors: Vectors = self.clock.time(derive)
        if progress is not None:
            progress(len(passages), len(passages))
        return vectors


class TimedTable(PassageTable):
    clock = Clock()

    def add(self, passages: Sequence[Passage]) -> None:
        self.clock.time(lambda: super(TimedTable, self).add(passages))


class TimedBM25(BM25Index):
    clock = Clock()

    def stage(self, texts: Iterable[str]) -> None:
        self.clock.time(lambda: super(TimedBM25, self).stage(texts))

    def commit(self) -> None:
        self.clock.time(super().commit)


class TimedDense(DenseIndex):
    clock = Clock()

    def add(self, vectors: npt.NDArray[np.float32]) -> None:
        self.clock.time(lambda: super(TimedDense, self).add(vectors))


def scaled_key(args: argparse.Namespace) -> dict[str, Any]:
    return {"scale": args.scale, "noise": args.noise, "seed": args.seed}


def phase_build(args: argparse.Namespace) -> dict[str, Any]:
    """Build the scaled index (in its own process, for its own peak RSS)."""
    real = load_real(1).passages
    cache = Embedder(args.work / "embeddings.sqlite")
    base_vectors = cache.embed_passages(real)  # every one cached by the real phase
    if cache.embedded:
        log(f"warning: {cache.embedded} real passages were not cached and were embedded")
    cache.close()
    base = {p.id: v for p, v in zip(real, base_vectors, strict=True)}
    directory = args.work / "scaled-index"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    config = IndexConfig()
    embedder = DerivedEmbedder(base, args.noise, args.seed)
    index = HybridIndex(
        directory, config=config,
        bm25=TimedBM25(k1=config.k1, b=config.b, stemmer=config.stemmer),
        dense=TimedDense(embedder.dimension, flat_max=config.flat_max),
        table=TimedTable(directory / TABLE_DB), embedder=embedder,
    )
    generate = Clock()
    rss_before = proc_status_mb("VmRSS")
    start = time.perf_counter()
    with progress_bar() as bar:
        task = bar.add_task("build scaled index", total=args.scale)

        def report(stage: str, done: int, total: int | None) -> None:
            if stage == "embed":
                bar.update(task, completed=done)
            else:
                bar.update(task, description=f"build scaled index: {stage}")

        index.add(timed_iter(perturbed_copies(real, args.scale, args.seed), generate),
                  progress=report, batch_size=args.batch)
    add_s = time.perf_counter() - start
    save = Clock()
    save.time(index.save)
    stats = index.stats()
    # How close copies are to their originals, against real nearest neighbours.
    sample = np.random.default_rng(0).choice(len(real), 500, replace=False)
    stored = index._dense.vectors()
    copies = stored[sample + len(real)] if len(stored) >= 2 * len(real) else stored[sample]
    originals = base_vectors[sample]
    sims = originals @ base_vectors.T
    sims[np.arange(len(sample)), sample] = -1
    index.close()
    n = args.scale
    index_s = add_s - generate.seconds - embedder.clock.seconds
    return {
        "key": scaled_key(args),
        "passages": n,
        "stats": stats,
        "vectors": {
            "derived": "cached real vector + N(0, noise^2) per dimension, renormalised",
            "noise": args.noise,
            "copy_vs_original_cosine_mean": round(float(np.mean(
                np.sum(copies * originals, axis=1))), 3),
            "real_nearest_neighbour_cosine_median": round(float(np.median(sims.max(1))), 3),
        },
        "seconds": {
            "generate_copies": round(generate.seconds, 1),
            "derive_vectors": round(embedder.clock.seconds, 1),
            "table": round(TimedTable.clock.seconds, 1),
            "bm25": round(TimedBM25.clock.seconds, 1),
            "dense": round(TimedDense.clock.seconds, 1),
            "index_total": round(index_s, 1),
            "save": round(save.seconds, 1),
        },
        "passages_per_s": {
            "table": round(n / TimedTable.clock.seconds),
            "bm25": round(n / TimedBM25.clock.seconds),
            "dense": round(n / TimedDense.clock.seconds),
            "index_total": round(n / index_s),
        },
        "disk_mb": dir_mb(directory),
        "rss_mb": {"before_build": rss_before, "peak_build": proc_status_mb("VmHWM")},
    }


def phase_query(args: argparse.Namespace) -> dict[str, Any]:
    """Load the scaled index and measure queries (in its own process)."""
    inputs = json.loads((args.work / "inputs.json").read_text(encoding="utf-8"))
    queries: list[str] = inputs["latency_queries"]
    rss_start = proc_status_mb("VmRSS")
    embedder = Embedder(args.work / "embeddings.sqlite", query_cache_size=4096)
    embedder.embed_query("load the model")
    real = HybridIndex.load(args.work / "real-index", embedder=embedder)
    rss_before = proc_status_mb("VmRSS")
    start = time.perf_counter()
    index = HybridIndex.load(args.work / "scaled-index", embedder=embedder)
    load_s = time.perf_counter() - start
    rss_loaded = proc_status_mb("VmRSS")
    out: dict[str, Any] = {"load_s": round(load_s, 1), "stats": index.stats()}
    out["latency"] = latency_rows({"10k": real, "scaled": index}, embedder, queries,
                                  args.rounds)
    real.close()
    vectors = query_vectors(embedder, inputs["ann_queries"])
    stored = index._dense.vectors()
    out["dense_index"] = {
        "vectors": len(stored), "kind": index.dense_kind,
        "hnsw": ann_agreement(index._dense, vectors, exact_top(stored, vectors, DEPTH),
                              inputs["originals"]),
    }
    with progress_bar() as bar:
        sets = inputs["query_sets"]
        task = bar.add_task("recall", total=sum(len(q) for q in sets.values()))
        out["quality"] = {
            name: recall_table(index, [(q, set(gold)) for q, gold in queries_], bar, task,
                               variants=False, article=copy_article)
            for name, queries_ in sets.items()
        }
    index.close()
    out["rss_mb"] = {
        "start": rss_start, "model_and_10k_index": rss_before, "index_loaded": rss_loaded,
        "index_alone": round(rss_loaded - rss_before, 1), "peak": proc_status_mb("VmHWM"),
    }
    return out


def run_phase(args: argparse.Namespace, phase: str) -> dict[str, Any]:
    """Run a scaled phase in a fresh interpreter; its JSON lands in ``WORK/PHASE.json``."""
    result = args.work / f"{phase}.json"
    result.unlink(missing_ok=True)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--phase", phase,
           "--work", str(args.work), "--scale", str(args.scale), "--noise", str(args.noise),
           "--seed", str(args.seed), "--batch", str(args.batch),
           "--ann-queries", str(args.ann_queries), "--rounds", str(args.rounds)]
    subprocess.run(cmd, check=True)
    loaded: dict[str, Any] = json.loads(result.read_text(encoding="utf-8"))
    return loaded


# -- report -----------------------------------------------------------------------------------


def summarise(results: dict[str, Any]) -> dict[str, Any]:
    """Ratios against same-run anchors, and the two goals."""
    real, scaled = results["real"], results["scaled"]
    small, large = scaled["query"]["latency"]["10k"], scaled["query"]["latency"]["scaled"]
    out: dict[str, Any] = {"scaled_over_10k": {}, "hybrid_over_components": {}}
    for name in small:
        out["scaled_over_10k"][name] = {
            "p50": ratio(large[name]["p50_ms"], small[name]["p50_ms"]),
            "qps": ratio(large[name]["qps"], small[name]["qps"]),
        }
    for size, lat in (("10k", small), ("scaled", large)):
        out["hybrid_over_components"][size] = {
            "hybrid / (bm25 + dense) p50": ratio(
                lat["hybrid"]["p50_ms"], lat["bm25"]["p50_ms"] + lat["dense"]["p50_ms"]
            ),
            "hybrid - encode query p50 ms": round(
                lat["hybrid"]["p50_ms"] - lat["encode query"]["p50_ms"], 2
            ),
        }
    recall_ok: dict[str, bool] = {}
    for size, quality in (("10k", real["quality"]), ("scaled", scaled["query"]["quality"])):
        for name, table in quality.items():
            best = max(table["bm25"]["recall@10"], table["dense"]["recall@10"])
            recall_ok[f"{size} {name}"] = table["hybrid"]["recall@10"] >= best
    n = scaled["build"]["passages"]
    out["goals"] = {
        f"hybrid p50 <= {GOAL_P50_MS:g} ms at {n:,}, wall time": (
            large["hybrid"]["p50_ms"] <= GOAL_P50_MS
        ),
        f"hybrid p50 <= {GOAL_P50_MS:g} ms at {n:,}, CPU time (a dedicated machine)": (
            large["hybrid"]["cpu_p50_ms"] <= GOAL_P50_MS
        ),
        "hybrid recall@10 >= best single method": recall_ok,
    }
    return out


def print_report(results: dict[str, Any]) -> None:
    real, scaled = results["real"], results["scaled"]
    build = scaled["build"]
    n = build["passages"]
    console.print(f"\n[bold]Retrieval benchmark[/bold] ({results['machine']['cpus']} cores, "
                  f"load {results['machine']['load_start']} -> {results['machine']['load_end']})")

    table = Table(title="Query latency, one query at a time, both sizes interleaved in one "
                  "process (ms; QPS of a single client; cpu = CPU time of the query)")
    table.add_column("method")
    for size in (f"{real['passages']:,}", f"{n:,}"):
        for col in ("p50", "p99", "QPS", "cpu p50"):
            table.add_column(f"{size} {col}", justify="right")
    table.add_column("p50 ratio", justify="right")
    latency = scaled["query"]["latency"]
    for name, row in latency["10k"].items():
        big = latency["scaled"][name]
        table.add_row(name, *(
            value for r in (row, big) for value in (
                f"{r['p50_ms']:.2f}", f"{r['p99_ms']:.2f}", f"{r['qps']:.0f}",
                f"{r['cpu_p50_ms']:.2f}")
        ), f"{big['p50_ms'] / row['p50_ms']:.2f}x")
    console.print(table)

    table = Table(title="Building")
    table.add_column("what")
    table.add_column("passages/s", justify="right")
    table.add_column("seconds", justify="right")
    emb = real["embedding"]
    table.add_row(f"embedding alone (model, {emb['passages']} passages)",
                  f"{emb['passages_per_s']:,.0f}", "")
    for run in ("first", "warm"):
        b = real[f"build_{run}"]
        table.add_row(f"real index, {real['passages']:,} ({run}: embedded {b['embedded']:,})",
                      f"{b['passages_per_s']:,.0f}", f"{b['seconds']}")
    for part in ("table", "bm25", "dense", "index_total"):
        table.add_row(f"scaled {n:,}: {part}", f"{build['passages_per_s'][part]:,}",
                      f"{build['seconds'][part]}")
    table.add_row(f"scaled {n:,}: save", "", f"{build['seconds']['save']}")
    table.add_row(f"scaled {n:,}: load", "", f"{scaled['query']['load_s']}")
    console.print(table)
    vec = build["vectors"]
    console.print(
        f"  Scaled vectors are derived, not embedded: {vec['derived']} (noise {vec['noise']});"
        f" copy/original cosine {vec['copy_vs_original_cosine_mean']}, real nearest-neighbour"
        f" cosine {vec['real_nearest_neighbour_cosine_median']} (median).", highlight=False)
    rss = scaled["query"]["rss_mb"]
    console.print(
        f"  Memory at {n:,}: build peak RSS {build['rss_mb']['peak_build']:,.0f} MB; serving:"
        f" model + 10k index {rss['model_and_10k_index']:,.0f} MB, + {n:,} index"
        f" {rss['index_alone']:,.0f} MB, peak"
        f" {rss['peak']:,.0f} MB; on disk {build['disk_mb']:,.0f} MB.", highlight=False)

    table = Table(title=f"Dense: HNSW against exact search over the same vectors (asked for "
                  f"{DEPTH}, as hybrid asks; index cost only; * = default)")
    for col in ("vectors", "efSearch", "recall@10 (min)", "source r@10 (min)", "recall@100",
                "p50 ms", "p99 ms"):
        table.add_column(col, justify="right")
    for dense in (real["dense_index"], scaled["query"]["dense_index"]):
        for row in dense["hnsw"]:
            table.add_row(
                f"{dense['vectors']:,}", f"{row['ef_search']}{'*' if row['default'] else ''}",
                f"{row['recall@10']:.3f} ({row['min_recall@10']})",
                f"{row['source_recall@10']:.3f} ({row['min_source_recall@10']})",
                f"{row['recall@100']:.3f}", f"{row['p50_ms']}", f"{row['p99_ms']}")
    console.print(table)
    flat = real["dense_index"]["flat_exact"]
    console.print(f"  exact flat index at {real['passages']:,} (index cost only): p50 "
                  f"{flat['p50_ms']} ms, p99 {flat['p99_ms']} ms; HNSW over the real vectors "
                  f"built in {real['dense_index']['hnsw_build_s']} s", highlight=False)

    for title, quality in (
        (f"Recall, real {real['passages']:,} passages", real["quality"]),
        (f"Recall, scaled {n:,} passages (a copy counts as its article)",
         scaled["query"]["quality"]),
    ):
        table = Table(title=f"{title} (article level, recall@1 / recall@10 / MRR@10)")
        table.add_column("method")
        for name in quality:
            table.add_column(name, justify="right")
        for method in next(iter(quality.values())):
            table.add_row(method, *(
                f"{q[method]['recall@1']:.3f} / {q[method]['recall@10']:.3f} / "
                f"{q[method]['mrr@10']:.3f}" for q in quality.values()
            ))
        console.print(table)

    summary = results["summary"]
    console.print("  hybrid over components:", summary["hybrid_over_components"],
                  highlight=False)
    for goal, met in summary["goals"].items():
        ok = all(met.values()) if isinstance(met, dict) else met
        console.print(f"  goal {goal}: [bold]{'MET' if ok else 'NOT MET'}[/bold]"
                      + (f" {met}" if isinstance(met, dict) else ""), highlight=False)


# -- main -------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK,
                        help=f"scratch folder: caches and indexes (default {DEFAULT_WORK})")
    parser.add_argument("--scale", type=int, default=None,
                        help=f"passages in the scaled index (default {DEFAULT_SCALE:,}; "
                        f"--quick {QUICK_SCALE:,})")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: small scaled index, fewer queries")
    parser.add_argument("--reuse", action="store_true",
                        help="reuse a scaled index built earlier with the same settings")
    parser.add_argument("--noise", type=float, default=0.04,
                        help="per-dimension noise of derived vectors (default 0.04)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=4096, help="passages per add batch")
    parser.add_argument("--titles", type=int, default=None, help="title queries (1000)")
    parser.add_argument("--latency-queries", type=int, default=None,
                        help="queries timed (283: every natural-language query; --quick 100)")
    parser.add_argument("--rounds", type=int, default=None,
                        help="times each latency query is timed per row (2; --quick 1)")
    parser.add_argument("--ann-queries", type=int, default=None,
                        help="queries for HNSW-vs-exact (500; --quick 50)")
    parser.add_argument("--embed-sample", type=int, default=None,
                        help="passages embedded to time the model (512; --quick 64)")
    parser.add_argument("--output", type=Path, default=None,
                        help=f"JSON results (default {RESULTS_PATH.relative_to(REPO)}; "
                        "--quick: WORK/retrieval-quick.json)")
    parser.add_argument("--phase", choices=("scaled-build", "scaled-query"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    quick = args.quick
    args.scale = args.scale or (QUICK_SCALE if quick else DEFAULT_SCALE)
    args.titles = args.titles or (100 if quick else 1000)
    args.latency_queries = args.latency_queries or (100 if quick else 283)
    args.rounds = args.rounds or (1 if quick else 2)
    args.ann_queries = args.ann_queries or (50 if quick else 500)
    args.embed_sample = args.embed_sample or (64 if quick else 512)
    args.output = args.output or (
        args.work / "retrieval-quick.json" if quick else RESULTS_PATH
    )
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.phase:
        phase = phase_build if args.phase == "scaled-build" else phase_query
        out = phase(args)
        (args.work / f"{args.phase}.json").write_text(json.dumps(out, indent=2),
                                                      encoding="utf-8")
        return

    results: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_start": loadavg()},
    }
    console.print(f"[bold]Real corpus[/bold] (load {loadavg()})")
    data = load_real(args.titles)
    inputs = {
        "latency_queries": data.queries[: args.latency_queries],
        "ann_queries": data.queries[: args.ann_queries], "originals": len(data.passages),
        "query_sets": {name: [[q, sorted(gold)] for q, gold in queries]
                       for name, queries in data.query_sets.items()},
    }
    (args.work / "inputs.json").write_text(json.dumps(inputs), encoding="utf-8")
    results["real"] = run_real(args, data)

    console.print(f"[bold]Scaled corpus, {args.scale:,} passages[/bold] (load {loadavg()})")
    previous = args.work / "scaled-build.json"
    reused = False
    if args.reuse and previous.is_file() and (args.work / "scaled-index").is_dir():
        build = json.loads(previous.read_text(encoding="utf-8"))
        reused = build.get("key") == scaled_key(args)
    if not reused:
        build = run_phase(args, "scaled-build")
    else:
        log("reusing the scaled index and build figures of an earlier run (--reuse)")
    results["scaled"] = {"build": build, "build_reused": reused,
                         "query": run_phase(args, "scaled-query")}
    results["machine"]["load_end"] = loadavg()
    results["summary"] = summarise(results)
    print_report(results)
    originals = int(inputs["originals"])  # type: ignore[call-overload]
    synthetic = max(0, args.scale - originals) / max(args.scale, 1)
    write_result(args.output, results, data=data_provenance(
        {"real": 1.0}, sample="n/a (no trained part)", figure="measured",
        sources="10k rows: 11,237 real passages (WikiChat topic leads in "
                "../shared/data/wikipedia/topics + WikiContradict paragraphs), real queries",
        scaled={"shares": {"real": round(1 - synthetic, 4), "synthetic": round(synthetic, 4)},
                "what": f"{args.scale:,} passages: the real ones plus perturbed copies whose "
                        "vectors are the real vector plus seeded noise (not embedded); "
                        "latency and memory only, no recall claim"}),
        command=results["command"])
    console.print(f"  results: {args.output}", highlight=False)


if __name__ == "__main__":
    main()
