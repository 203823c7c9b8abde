"""End to end: a real topics file → ``freshwiki.corpus.ingest`` → CorpusStore → index."""

from __future__ import annotations

import json
from pathlib import Path

from freshwiki.corpus import CorpusStore, ingest
from freshwiki.retrieval import Embedder, HybridIndex


def test_index_built_from_an_ingested_store(
    head_leads: dict[str, str], embedder: Embedder, tmp_path: Path
) -> None:
    leads = list(head_leads.items())
    first = tmp_path / "topics-1.json"
    first.write_text(json.dumps(dict(leads[:40])), encoding="utf-8")
    with CorpusStore(tmp_path / "corpus.sqlite") as store:
        report = ingest(first, store, workers=1)
        assert report.revisions_added == 40
        stored = {p.id: p for p in store.passages(latest_only=True)}
        index = HybridIndex.build(store.passages(latest_only=True), tmp_path / "index",
                                  embedder=embedder, batch_size=16)
        assert len(index) == len(stored)

        hits = index.search("steam engine erector for ten years", 3)
        assert hits[0].title == "William Murdoch"
        assert hits[0].passage == stored[hits[0].id]  # the store's passage, field for field
        assert index.search("torrent site", 3, titles=["Taya Kyle"])[0].title == "Taya Kyle"

        # A later ingest of more articles: add() indexes only what is new.
        second = tmp_path / "topics-2.json"
        second.write_text(json.dumps(dict(leads[:60])), encoding="utf-8")
        assert ingest(second, store, workers=1).revisions_added == 20
        added = index.add(store.passages(latest_only=True))
        assert added == store.counts()["passages"] - len(stored)
        newcomer = leads[55][0]
        assert index.search(leads[55][1][:80], 1)[0].title == newcomer
        index.save()
        index.close()

    reloaded = HybridIndex.load(tmp_path / "index", embedder=embedder)
    assert reloaded.search(leads[55][1][:80], 1)[0].title == newcomer
    reloaded.close()
