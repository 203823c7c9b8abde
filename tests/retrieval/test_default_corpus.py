"""The default corpus: built once from the topic files into its own store, then loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from freshwiki.config import load_settings
from freshwiki.corpus.store import CorpusStore
from freshwiki.errors import FreshwikiError
from freshwiki.retrieval import (
    DEFAULT_INDEX,
    USER_INDEX,
    HybridIndex,
    default_corpus_path,
    default_index_dir,
    has_index,
    open_search_index,
    resolve_index_name,
)
from freshwiki.retrieval import _default_corpus as default_corpus


def test_builds_once_from_all_three_topic_files_then_loads(
    small_data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings().settings
    assert resolve_index_name(settings) == DEFAULT_INDEX
    stages: list[str] = []
    with open_search_index(settings, progress=lambda s, d, t: stages.append(s)) as index:
        titles = {hit.passage.title for hit in index.search("cricketer", 12, method="bm25")}
    assert "Cecil Lowell" in titles
    assert [s for s in stages if s.startswith("reading")] == [
        "reading head_articles_en.json", "reading tail_articles_en.json",
        "reading recent_articles_en.json"]
    with CorpusStore(default_corpus_path(settings)) as store:
        assert store.counts()["pages"] == 12  # 4 real leads from each file
    assert has_index(settings, DEFAULT_INDEX)
    # The user's corpus store stays untouched.
    assert not settings.corpus_path.exists()

    def no_ingest(*args: object, **kwargs: object) -> None:
        raise AssertionError("the default corpus was ingested again")

    monkeypatch.setattr(default_corpus, "ingest", no_ingest)
    with open_search_index(settings) as again:
        assert again.search("liverwort", 1)[0].passage.title == "Clasmatocolea fasciculata"


def test_an_interrupted_build_is_rebuilt_next_time(
    small_data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings().settings
    real_build = HybridIndex.build

    def crash(*args: object, **kwargs: object) -> HybridIndex:
        raise KeyboardInterrupt

    monkeypatch.setattr(HybridIndex, "build", crash)
    with pytest.raises(KeyboardInterrupt):
        open_search_index(settings)
    assert not has_index(settings, DEFAULT_INDEX)
    monkeypatch.setattr(HybridIndex, "build", real_build)
    with open_search_index(settings) as index:
        assert index.search("March Engineering race car", 1)[0].passage.title == "March 77S"


def test_the_users_main_index_wins_when_built(small_data_dir: Path) -> None:
    settings = load_settings().settings
    with open_search_index(settings) as default:
        passages = [default.passage(h.passage.id) for h in default.search("cricketer", 1)]
    assert all(p is not None for p in passages)
    HybridIndex.build([p for p in passages if p], default_index_dir(settings, USER_INDEX)).close()
    assert resolve_index_name(settings) == USER_INDEX
    with open_search_index(settings) as mine:
        assert len(mine) == 1


def test_missing_topic_files_name_the_folder_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FRESHWIKI_DATA_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(FreshwikiError) as caught:
        open_search_index(load_settings().settings)
    assert "head_articles_en.json" in caught.value.message
    assert str(tmp_path / "nowhere" / "wikipedia" / "topics") in caught.value.message
    assert caught.value.hint and "FRESHWIKI_DATA_DIR" in caught.value.hint


def test_a_named_index_that_does_not_exist_says_how_to_build_it() -> None:
    with pytest.raises(FreshwikiError) as caught:
        open_search_index(load_settings().settings, "papers")
    assert caught.value.hint and "freshwiki index build --name papers" in caught.value.hint
