from __future__ import annotations

import json
from pathlib import Path

import bm25s
import numpy as np
import pytest

from freshwiki.records import Passage
from freshwiki.retrieval import BM25Index, RetrievalError
from freshwiki.retrieval._bm25 import top_k, top_k_positive

QUERIES = ["steam engine erector", "torrent directory seized by the government",
           "UFC fight night", "list of episodes", "zzzz unknownword"]


@pytest.fixture(scope="module")
def texts(topic_passages: list[Passage]) -> list[str]:
    return [p.indexed_text for p in topic_passages]


def test_scores_equal_bm25s_lucene(texts: list[str]) -> None:
    index = BM25Index(stemmer=None)
    index.add(texts)
    reference = bm25s.BM25(method="lucene")
    reference.index(bm25s.tokenize(texts, stopwords="en", show_progress=False),
                    show_progress=False)
    for query in QUERIES[:4]:
        tokens = [t for t in index.tokenize(query) if t in reference.vocab_dict]
        expected = reference.get_scores(tokens)
        assert np.allclose(index.scores(query), expected, rtol=1e-5, atol=1e-6)


def test_distinctive_phrase_finds_its_article(texts: list[str]) -> None:
    index = BM25Index()
    index.add(texts)
    (key, score), *_ = index.search("steam engine erector for ten years", 3)
    assert texts[key].startswith("William Murdoch\n")
    assert score > 0
    assert index.search("zzzz unknownword", 3) == []  # no query term in the vocabulary


def test_incremental_adds_score_exactly_like_one_build(texts: list[str]) -> None:
    whole = BM25Index()
    whole.add(texts)
    parts = BM25Index(merge_fraction=100.0)  # never merge: three segments
    for chunk in (texts[:200], texts[200:260], texts[260:]):
        parts.add(chunk)
    assert parts.segments == 3
    for query in QUERIES:
        assert np.array_equal(parts.scores(query), whole.scores(query))
        assert parts.search(query, 20) == whole.search(query, 20)
    parts.merge()
    assert parts.segments == 1
    for query in QUERIES:
        assert np.array_equal(parts.scores(query), whole.scores(query))


def test_segments_merge_when_the_delta_grows(texts: list[str]) -> None:
    index = BM25Index(merge_fraction=0.25)
    index.add(texts[:200])
    index.add(texts[200:210])  # small delta: kept apart
    assert index.segments == 2
    index.add(texts[210:])  # deltas now exceed 25% of the main segment
    assert index.segments == 1
    assert len(index) == len(texts)


def test_allowed_mask_restricts_results(texts: list[str]) -> None:
    index = BM25Index()
    index.add(texts)
    allowed = np.zeros(len(texts), dtype=bool)
    allowed[1::2] = True
    hits = index.search("list of episodes", 50, allowed)
    assert hits and all(key % 2 == 1 for key, _ in hits)
    unfiltered = [h for h in index.search("list of episodes", 500) if h[0] % 2 == 1]
    assert hits == unfiltered[:50]


def test_save_and_load_round_trip(texts: list[str], tmp_path: Path) -> None:
    index = BM25Index(merge_fraction=100.0)
    index.add(texts[:250])
    index.add(texts[250:])
    index.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25")
    assert loaded.segments == 2 and len(loaded) == len(texts)
    for query in QUERIES:
        assert loaded.search(query, 10) == index.search(query, 10)
    loaded.add(["A brand new passage about quokkas"])
    [(key, _)] = loaded.search("quokkas", 1)
    assert key == len(texts)


def test_an_index_built_with_a_missing_stemmer_refuses_to_load(tmp_path: Path) -> None:
    index = BM25Index(stemmer=None)
    index.add(["one passage"])
    index.save(tmp_path)
    config = json.loads((tmp_path / "bm25.json").read_text())
    config["stemmer"] = "english"
    (tmp_path / "bm25.json").write_text(json.dumps(config))
    try:
        import Stemmer  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        with pytest.raises(RetrievalError, match="PyStemmer"):
            BM25Index.load(tmp_path)
    else:  # pragma: no cover - PyStemmer is not a dependency
        assert BM25Index.load(tmp_path).tokenize.stemmer_name == "english"


def test_top_k_breaks_ties_by_smaller_key() -> None:
    keys = np.arange(6, dtype=np.int64)
    scores = np.array([1.0, 3.0, 2.0, 3.0, 2.0, 2.0])
    assert top_k(keys, scores, 4) == [(1, 3.0), (3, 3.0), (2, 2.0), (4, 2.0)]


def test_group_max_selection_equals_full_ranking() -> None:
    rng = np.random.default_rng(0)
    cases = ((100_000, 100, 0.5), (50_000, 1, 0.5), (8_193, 50, 0.5), (100_000, 5_000, 0.5),
             (100_063, 100, 0.5), (100_000, 100, 0.9995), (1_000_000, 100, 0.9))
    for n, k, zeros in cases:  # tails of up to 63 scores; fewer positive groups than k
        scores = np.round(rng.exponential(size=n), 1)  # many ties
        scores[rng.random(n) < zeros] = 0.0
        positive = np.flatnonzero(scores > 0).astype(np.int64)
        assert top_k_positive(scores, k) == top_k(positive, scores[positive], k)
    assert top_k_positive(np.zeros(100_000), 10) == []
    tail_best = np.ones(100_063)
    tail_best[-1] = 2.0  # the last 63 scores are in no group: they are checked apart
    assert top_k_positive(tail_best, 3) == [(100_062, 2.0), (0, 1.0), (1, 1.0)]
