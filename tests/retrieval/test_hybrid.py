from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from freshwiki.records import Passage
from freshwiki.retrieval import (
    Embedder,
    HybridIndex,
    IndexConfig,
    IndexNotFoundError,
    RetrievalError,
    SearchHit,
)

MURDOCH = "steam engine erector for ten years"  # verbatim from William Murdoch's lead
STRIDOR = "noisy whistling when breathing in"  # no word in common with Stridor's lead
QUERIES = [MURDOCH, STRIDOR, "website for torrent files seized by the government",
           "mixed drink of gin and champagne", "UFC fight results"]


def summary(hits: list[SearchHit]) -> list[tuple[str, int, float, int | None, int | None]]:
    return [(h.id, h.rank, h.score, h.bm25_rank, h.dense_rank) for h in hits]


def titles(hits: list[SearchHit]) -> list[str]:
    return [h.title for h in hits]


# -- relevance ---------------------------------------------------------------------------


def test_distinctive_phrase_ranks_its_article_first(topic_index: HybridIndex) -> None:
    for method in ("bm25", "hybrid", "dense"):
        hits = topic_index.search(MURDOCH, 5, method=method)
        assert hits[0].title == "William Murdoch", method
    hybrid = topic_index.search(MURDOCH, 5)
    assert hybrid[0].bm25_rank == 1 and hybrid[0].dense_rank == 1
    assert [h.rank for h in hybrid] == [1, 2, 3, 4, 5]
    assert [h.score for h in hybrid] == sorted((h.score for h in hybrid), reverse=True)


def test_paraphrase_is_found_by_dense_where_bm25_cannot(topic_index: HybridIndex) -> None:
    assert topic_index.search(STRIDOR, 1, method="dense")[0].title == "Stridor"
    assert "Stridor" not in titles(topic_index.search(STRIDOR, 100, method="bm25"))
    hybrid = topic_index.search(STRIDOR, 5)
    assert "Stridor" in titles(hybrid)
    stridor = next(h for h in hybrid if h.title == "Stridor")
    assert stridor.bm25_rank is None and stridor.dense_rank == 1


def test_hits_carry_the_indexed_passage(
    topic_index: HybridIndex, topic_passages: list[Passage]
) -> None:
    by_id = {p.id: p for p in topic_passages}
    for hit in topic_index.search(MURDOCH, 5):
        assert hit.passage == by_id[hit.id]
    first = topic_passages[0]
    assert topic_index.passage(first.id) == first
    assert topic_index.passage("no-such-id") is None


# -- persistence and incremental adds -----------------------------------------------------


def test_save_then_load_gives_identical_results(
    topic_index: HybridIndex, embedder: Embedder
) -> None:
    loaded = HybridIndex.load(topic_index.directory, embedder=embedder)
    try:
        assert len(loaded) == len(topic_index) and loaded.config == topic_index.config
        for query in QUERIES:
            for kwargs in ({}, {"method": "bm25"}, {"method": "dense"},
                           {"time_intent": "recent"}, {"time_intent": "year=2016"},
                           {"since": dt.date(2019, 1, 1)}):
                assert summary(loaded.search(query, 8, **kwargs)) == summary(
                    topic_index.search(query, 8, **kwargs)
                )
    finally:
        loaded.close()


@pytest.fixture(scope="module")
def grown(
    topic_passages: list[Passage], embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[HybridIndex, list[Passage]]]:
    """An index built from the first 250 pages, then grown by an add of the rest."""
    first = [p for p in topic_passages if p.page_id <= 250]
    rest = [p for p in topic_passages if p.page_id > 250]
    index = HybridIndex.build(first, tmp_path_factory.mktemp("grown") / "idx",
                              embedder=embedder)
    assert index.add(rest) == len(rest)
    yield index, rest
    index.close()


def test_incremental_add_finds_new_passages(grown: tuple[HybridIndex, list[Passage]]) -> None:
    index, rest = grown
    target = rest[5]
    phrase = " ".join(target.text.split()[:12])
    assert index.search(phrase, 1)[0].id == target.id
    assert index.search(phrase, 1, method="bm25")[0].id == target.id


def test_incremental_add_equals_a_build_over_the_union(
    grown: tuple[HybridIndex, list[Passage]], topic_index: HybridIndex
) -> None:
    index, rest = grown
    assert len(index) == len(topic_index)
    for query in [*QUERIES, " ".join(rest[0].text.split()[:8])]:
        for method in ("hybrid", "bm25", "dense"):
            assert summary(index.search(query, 10, method=method)) == summary(
                topic_index.search(query, 10, method=method)
            )


def test_re_adding_known_passages_is_a_no_op(
    grown: tuple[HybridIndex, list[Passage]], topic_passages: list[Passage]
) -> None:
    index, _ = grown
    before = len(index)
    assert index.add(topic_passages[:30] + topic_passages[:30]) == 0
    assert len(index) == before


def test_unsaved_adds_are_dropped_on_load(
    topic_passages: list[Passage], embedder: Embedder, tmp_path: Path
) -> None:
    index = HybridIndex.build(topic_passages[:40], tmp_path / "idx", embedder=embedder)
    index.add(topic_passages[40:60])  # never saved: as if the process died here
    assert len(index) == 60
    index.close()
    reopened = HybridIndex.load(tmp_path / "idx", embedder=embedder)
    assert len(reopened) == 40
    assert reopened.passage(topic_passages[50].id) is None
    assert reopened.add(topic_passages[40:60]) == 20  # and they can be added again
    reopened.save()
    reopened.close()
    assert len(HybridIndex.load(tmp_path / "idx", embedder=embedder)) == 60


def test_hnsw_above_flat_max_keeps_results(
    topic_passages: list[Passage], topic_index: HybridIndex, embedder: Embedder,
    tmp_path: Path,
) -> None:
    index = HybridIndex.build(topic_passages, tmp_path / "idx", embedder=embedder,
                              config=IndexConfig(flat_max=100))
    assert index.dense_kind == "hnsw" and topic_index.dense_kind == "flat"
    for query in (MURDOCH, STRIDOR):
        assert index.search(query, 1)[0].id == topic_index.search(query, 1)[0].id
    index.save()
    assert HybridIndex.load(tmp_path / "idx", embedder=embedder).dense_kind == "hnsw"


# -- filters ------------------------------------------------------------------------------


def test_titles_filter(topic_index: HybridIndex, topic_passages: list[Passage]) -> None:
    hits = topic_index.search(MURDOCH, 5, titles=["KickassTorrents"])
    assert titles(hits) == ["KickassTorrents"]  # its only passage, however poor a match
    assert titles(topic_index.search(MURDOCH, 5, titles="William_Murdoch"))[:1] == [
        "William Murdoch"
    ]
    assert topic_index.search(MURDOCH, 5, titles=["No Such Article"]) == []
    chosen = sorted({p.title for p in topic_passages})[:8]
    for method in ("hybrid", "dense"):
        hits = topic_index.search("cocktail", 5, method=method, titles=chosen)
        assert len(hits) == 5 and set(titles(hits)) <= set(chosen)


def test_time_range_filters_return_k_hits_or_every_match(
    topic_index: HybridIndex, topic_passages: list[Passage]
) -> None:
    since = dt.datetime(2021, 1, 1, tzinfo=dt.UTC)
    for method in ("hybrid", "dense", "bm25"):
        hits = topic_index.search("list of episodes", 10, method=method, since=since)
        assert len(hits) == 10
        assert all(h.passage.timestamp is not None and h.passage.timestamp >= since
                   for h in hits)
    # One day (a date means the whole day): every passage stamped then, however irrelevant.
    day = dt.date(2016, 2, 1)
    expected = {p.id for p in topic_passages
                if p.timestamp is not None and p.timestamp.date() == day}
    assert 0 < len(expected) < 20
    hits = topic_index.search(MURDOCH, 20, since=day, until=day)
    assert {h.id for h in hits} == expected
    naive_until = dt.datetime(2016, 2, 1, 11, 59)  # naive = UTC; stamps are at 12:00
    assert {h.id for h in topic_index.search(MURDOCH, 20, since=day, until=naive_until)} \
        == set()
    other_day = next(p for p in topic_passages
                     if p.timestamp is not None and p.timestamp.date() != day)
    both = topic_index.search(MURDOCH, 20, since=day, until=day,
                              titles=[other_day.title, hits[0].title])
    assert titles(both) == [hits[0].title]


# -- time intent ----------------------------------------------------------------------------

OLD = Passage(
    id="9001-1-0", page_id=9001, revision_id=1, title="Springfield Bridge", section_path=(),
    text="As of 2015, the Springfield Bridge is the longest bridge in Springfield County, "
    "spanning 400 metres over the Blue River.",
    timestamp=dt.datetime(2015, 6, 1, tzinfo=dt.UTC),
)
NEW = Passage(
    id="9001-2-0", page_id=9001, revision_id=2, title="Springfield Bridge", section_path=(),
    text="In 2023 the crossing over the Blue River was extended to 410 metres, and it "
    "remains the county's longest.",
    timestamp=dt.datetime(2023, 6, 1, tzinfo=dt.UTC),
)
BRIDGE = "Which is the longest bridge in Springfield County?"


@pytest.fixture(scope="module")
def bridge_index(
    topic_passages: list[Passage], embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[HybridIndex]:
    index = HybridIndex.build([*topic_passages[:60], OLD, NEW],
                              tmp_path_factory.mktemp("bridge") / "idx", embedder=embedder)
    yield index
    index.close()


def test_no_intent_keeps_the_fused_order(bridge_index: HybridIndex) -> None:
    plain = bridge_index.search(BRIDGE, 5)
    assert [h.id for h in plain[:2]] == [OLD.id, NEW.id]  # the old one matches the words
    assert summary(bridge_index.search(BRIDGE, 5, time_intent="none")) == summary(plain)
    assert all(h.time_score is None and h.score == h.fused_score for h in plain)


def test_recent_ranks_the_newer_passage_first(bridge_index: HybridIndex) -> None:
    hits = bridge_index.search(BRIDGE, 5, time_intent="recent")
    assert [h.id for h in hits[:2]] == [NEW.id, OLD.id]
    assert hits[0].time_score is not None and hits[1].time_score is not None
    assert hits[0].time_score > hits[1].time_score
    assert hits[1].fused_score > hits[0].fused_score  # reordered, not re-scored


def test_year_intent_ranks_the_passage_about_that_year_first(
    bridge_index: HybridIndex,
) -> None:
    assert bridge_index.search(BRIDGE, 2, time_intent="year=2015")[0].id == OLD.id
    assert bridge_index.search(BRIDGE, 2, time_intent="year=2023")[0].id == NEW.id


def test_time_intent_reorders_within_the_filters(bridge_index: HybridIndex) -> None:
    hits = bridge_index.search(BRIDGE, 5, time_intent="recent", titles=["Springfield Bridge"])
    assert [h.id for h in hits] == [NEW.id, OLD.id]
    hits = bridge_index.search(BRIDGE, 5, time_intent="recent", until=dt.date(2020, 1, 1))
    assert OLD.id in [h.id for h in hits] and NEW.id not in [h.id for h in hits]


# -- errors ---------------------------------------------------------------------------------


def test_bad_arguments_are_clear_errors(topic_index: HybridIndex) -> None:
    with pytest.raises(RetrievalError, match="'soon'"):
        topic_index.search(MURDOCH, time_intent="soon")
    with pytest.raises(RetrievalError, match="'fuzzy'"):
        topic_index.search(MURDOCH, method="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(RetrievalError, match="'magic'"):
        topic_index.search(MURDOCH, fusion="magic")  # type: ignore[arg-type]
    with pytest.raises(RetrievalError, match="k must be"):
        topic_index.search(MURDOCH, k=0)
    with pytest.raises(RetrievalError, match="fusion"):
        IndexConfig(fusion="magic")  # type: ignore[arg-type]


def test_build_refuses_to_overwrite_unless_asked(
    topic_passages: list[Passage], embedder: Embedder, tmp_path: Path
) -> None:
    HybridIndex.build(topic_passages[:5], tmp_path / "idx", embedder=embedder).close()
    with pytest.raises(RetrievalError, match="already holds an index"):
        HybridIndex.build(topic_passages[:5], tmp_path / "idx", embedder=embedder)
    index = HybridIndex.build(topic_passages[5:8], tmp_path / "idx", embedder=embedder,
                              overwrite=True)
    assert len(index) == 3 and index.passage(topic_passages[0].id) is None
    index.close()
    assert len(list((tmp_path / "idx").glob("gen-*"))) == 1


def test_load_errors(tmp_path: Path, topic_index: HybridIndex) -> None:
    with pytest.raises(IndexNotFoundError, match="no index in"):
        HybridIndex.load(tmp_path / "nothing")
    manifest = json.loads((topic_index.directory / "index.json").read_text())
    assert manifest["passages"] == len(topic_index)
    assert manifest["embedder"] == {"name": "all-MiniLM-L6-v2", "dimension": 384}
