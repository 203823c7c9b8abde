"""Measure the retrieval layer on real data: build rate, query latency, recall by method.

Not a test (pytest does not collect it): run it by hand, it takes a few minutes the first
time (embedding ~11k passages) and a few minutes afterwards (the embeddings are cached)::

    .venv/bin/python -m tests.retrieval.measure --work /tmp/fw-measure

Corpus: the 10,419 WikiChat topic leads (head, tail, recent) cut into passages the way the
corpus layer cuts topics files, plus the WikiContradict paragraphs (none of the
WikiContradict articles is a topic title, so they are added to make its questions
answerable). Query sets, each with gold article titles:

- ``wikicontradict``: the 253 human-written WikiContradict questions; gold = the article(s)
  of the question's two paragraphs;
- ``titles``: 1,000 topic titles drawn at random (seed 0); gold = that article;
- ``paraphrase``: 30 descriptions of topic articles written by hand in other words
  (``PARAPHRASE_QUERIES`` in ``data.py``), the one set where lexical overlap is low.

Metrics are article-level: recall@k counts a query when any of the top k passages belongs
to a gold article; MRR@10 averages 1/rank of the first such passage (0 beyond 10). Fusion
variants are computed from the same two component lists (top 100 each) that
``HybridIndex.search`` fuses, so they differ only in the fusion function.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from freshwiki.retrieval import DenseIndex, Embedder, HybridIndex, fuse
from freshwiki.retrieval._bm25 import Hits
from freshwiki.retrieval._fusion import FusionMethod
from tests.conftest import SHARED_DATA
from tests.retrieval.data import (
    PARAPHRASE_QUERIES,
    passages_of,
    topic_leads,
    wikicontradict,
    wikicontradict_articles,
    wikicontradict_questions,
)

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


def _p(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def recall_table(
    index: HybridIndex, queries: list[tuple[str, set[str]]]
) -> dict[str, dict[str, float]]:
    """Recall@1, recall@10 and MRR@10 per method and fusion variant (article level)."""
    ranks: dict[str, list[int | None]] = {}
    titles: dict[int, str] = {}

    def hit(name: str, keys: list[int], gold: set[str]) -> None:
        first = next((i for i, key in enumerate(keys[:10], 1) if titles[key] in gold), None)
        ranks.setdefault(name, []).append(first)

    for query, gold in queries:
        lists: list[Hits] = []
        for method in ("bm25", "dense"):
            hits = index.search(query, 100, method=method)
            titles.update((h.key, h.title) for h in hits)
            lists.append([(h.key, h.fused_score) for h in hits])
            hit(method, [h.key for h in hits], gold)
        for name, method, weight in VARIANTS:
            fused = fuse(lists, method, (weight, 1.0), depth=100)
            hit(name, [f.key for f in fused], gold)
        default = index.search(query, 10)  # the real hybrid path, as a cross-check
        titles.update((h.key, h.title) for h in default)
        hit("hybrid (default)", [h.key for h in default], gold)
    return {
        name: {
            "recall@1": round(sum(r == 1 for r in found) / len(found), 3),
            "recall@10": round(sum(r is not None for r in found) / len(found), 3),
            "mrr@10": round(sum(1 / r for r in found if r) / len(found), 3),
        }
        for name, found in ranks.items()
    }


def latency(
    index: HybridIndex, queries: Sequence[str], embedder: Embedder
) -> dict[str, dict[str, float]]:
    """p50/p90 milliseconds per method, cold query-vector cache for each method."""
    out: dict[str, dict[str, float]] = {}
    index.search("warm up the query path", 5)
    timed: list[tuple[str, Callable[[str], object]]] = [
        ("encode query", embedder.embed_query),
        ("bm25", lambda q: index.search(q, 5, method="bm25")),
        ("dense", lambda q: index.search(q, 5, method="dense")),
        ("hybrid", lambda q: index.search(q, 5)),
        ("hybrid+recent", lambda q: index.search(q, 5, time_intent="recent")),
    ]
    for name, run in timed:
        embedder.clear_query_cache()
        samples = []
        for query in queries:
            start = time.perf_counter()
            run(query)
            samples.append((time.perf_counter() - start) * 1000)
        out[name] = {"p50_ms": round(statistics.median(samples), 2),
                     "p90_ms": round(_p(samples, 0.9), 2)}
    return out


def hnsw_vs_flat(index: HybridIndex, queries: Sequence[str], embedder: Embedder
                 ) -> dict[str, float]:
    """Build an HNSW index over the same vectors; its speed and top-10 agreement with exact."""
    exact = index._dense
    vectors = np.array(exact.vectors())
    start = time.perf_counter()
    hnsw = DenseIndex(vectors.shape[1], flat_max=0)
    hnsw.add(vectors)
    build = time.perf_counter() - start
    overlap, flat_ms, hnsw_ms = [], [], []
    for query in queries:
        vector = embedder.embed_query(query)
        t0 = time.perf_counter()
        truth = {key for key, _ in exact.search(vector, 10)}
        t1 = time.perf_counter()
        found = {key for key, _ in hnsw.search(vector, 10)}
        t2 = time.perf_counter()
        overlap.append(len(truth & found) / 10)
        flat_ms.append((t1 - t0) * 1000)
        hnsw_ms.append((t2 - t1) * 1000)
    return {
        "vectors": len(vectors), "hnsw_build_s": round(build, 2),
        "hnsw_recall@10_vs_exact": round(float(np.mean(overlap)), 4),
        "flat_p50_ms": round(statistics.median(flat_ms), 3),
        "hnsw_p50_ms": round(statistics.median(hnsw_ms), 3),
    }


def main() -> None:
    """Build (twice: cold and warm embedding cache), then measure latency and recall."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/fw-measure"))
    parser.add_argument("--titles", type=int, default=1000)
    parser.add_argument("--latency-queries", type=int, default=300)
    parser.add_argument("--skip-latency", action="store_true")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)

    leads = topic_leads(SHARED_DATA)
    entries = wikicontradict(SHARED_DATA)
    contradict = wikicontradict_articles(entries)
    passages = passages_of(leads) + passages_of(contradict, first_page_id=len(leads) + 1)
    report: dict[str, object] = {"passages": len(passages), "articles": len(leads) +
                                 len(contradict)}

    embedder = Embedder(args.work / "embeddings.sqlite")
    cached_before = len(embedder.cache) if embedder.cache is not None else 0
    for run in ("build", "rebuild"):
        start = time.perf_counter()
        before = embedder.embedded
        index = HybridIndex.build(passages, args.work / "index", embedder=embedder,
                                  overwrite=True)
        seconds = time.perf_counter() - start
        report[f"build_{run}"] = {
            "seconds": round(seconds, 1),
            "passages_per_s": round(len(passages) / seconds, 1),
            "embedded": embedder.embedded - before,
            "cached_before": cached_before if run == "build" else len(passages),
        }
        index.close()
        print(json.dumps(report, indent=2), flush=True)

    index = HybridIndex.load(args.work / "index", embedder=embedder)
    report["stats"] = index.stats()
    questions = wikicontradict_questions(entries)
    rng = random.Random(0)
    title_queries = [(t, {t}) for t in rng.sample(sorted(leads), args.titles)]
    lat_queries = [q for q, _ in questions][: args.latency_queries // 2] + [
        q for q, _ in title_queries
    ][: args.latency_queries - min(len(questions), args.latency_queries // 2)]
    if not args.skip_latency:
        report["latency"] = latency(index, lat_queries, embedder)
        print(json.dumps(report["latency"], indent=2), flush=True)
        report["dense_index"] = hnsw_vs_flat(index, lat_queries, embedder)
        print(json.dumps(report["dense_index"], indent=2), flush=True)
    paraphrases = [(q, {gold}) for q, gold in PARAPHRASE_QUERIES]
    report["quality"] = {
        f"wikicontradict ({len(questions)} q)": recall_table(index, questions),
        f"titles ({len(title_queries)} q)": recall_table(index, title_queries),
        f"paraphrase ({len(paraphrases)} q, hand-written)": recall_table(index, paraphrases),
    }
    index.close()
    print(json.dumps(report, indent=2))
    (args.work / "report.json").write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
