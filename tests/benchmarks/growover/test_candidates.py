"""Counting a history's candidates without a model, distractors in the index, and bad input.

The history is small and written here; every expected count was worked out by reading it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from freshwiki.benchmarks.growover import (
    Dataset,
    DatasetError,
    build_dataset,
    count_candidates,
    summarize_candidates,
)
from freshwiki.llm import LLM
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.retrieval import Embedder, HybridIndex
from tests.benchmarks.growover.helpers import HEAD, Encoder, answering, page, revision

ALPHA_1 = ("Alpha is a town in Spain with 100 inhabitants and a long history of farming along "
           "the river valley.")
ALPHA_1B = ALPHA_1.replace("100", "120")
ALPHA_REST = ("The town hall was built in 1850 by local masons who used stone from the nearby "
              "quarry at Cerro Alto, which is still open. The annual fair draws about 3000 "
              "visitors every September, most of them from the surrounding villages.")
ALPHA_NEW = "A new bridge over the river opened in 2019."
BETA = ("Beta is a hill in Greece that rises 600 metres above the plain and is crowned by the "
        "ruins of a small temple. Shepherds still graze goats on its lower slopes in winter. "
        "A footpath from the village reaches the summit in about two hours of steady walking, "
        "past an old chapel and a spring where walkers fill their bottles.")
CUTS = [dt.datetime(2020, 1, 31, 23, 59, tzinfo=dt.UTC),
        dt.datetime(2020, 2, 29, 23, 59, tzinfo=dt.UTC),
        dt.datetime(2020, 3, 31, 23, 59, tzinfo=dt.UTC)]


@pytest.fixture
def history(tmp_path: Path) -> Path:
    """Alpha changes and grows in February; Beta has a single revision; Gamma is blanked
    (deleted) in February and written again in March."""
    path = tmp_path / "history.xml"
    path.write_text(HEAD + "".join([
        page(10, "Alpha",
             revision(101, "2020-01-05T10:00:00Z", f"{ALPHA_1} {ALPHA_REST}"),
             revision(102, "2020-02-10T10:00:00Z", f"{ALPHA_1B} {ALPHA_REST} {ALPHA_NEW}")),
        page(11, "Beta", revision(201, "2020-01-03T00:00:00Z", BETA)),
        page(12, "Gamma",
             revision(301, "2020-01-07T08:00:00Z", BETA.replace("Beta", "Gamma")),
             revision(302, "2020-02-12T08:00:00Z", ""),
             revision(303, "2020-03-02T08:00:00Z", BETA.replace("Beta", "Gamma"))),
    ]) + "</mediawiki>", encoding="utf-8")
    return path


def test_counts_follow_the_build_rules_including_bad_input(history: Path) -> None:
    rows = count_candidates([history], CUTS, encoder=Encoder(pairs=[(ALPHA_1, ALPHA_1B, 0.95)]))
    by = {(r.title, r.snapshot): r for r in rows}
    # January: every article is new to the dataset, one paragraph each (300-600 characters,
    # 1-4 sentences) -> one selected paragraph each.
    assert [(by[(t, "2020-01-31")].status, by[(t, "2020-01-31")].initial_groups)
            for t in ("Alpha", "Beta", "Gamma")] == [("initial", 1)] * 3
    # February, Alpha: sentence 0 changed (100 -> 120), the bridge sentence is new (one group),
    # the two sentences of ALPHA_REST are unchanged, nothing deleted.
    alpha = by[("Alpha", "2020-02-29")]
    assert (alpha.status, alpha.changed_pairs, alpha.new_groups, alpha.unchanged,
            alpha.deleted) == ("aligned", 1, 1, 2, 0)
    # A history with a single revision: the same text at every later cut, nothing to generate.
    assert [(by[("Beta", c)].status, by[("Beta", c)].unchanged)
            for c in ("2020-02-29", "2020-03-31")] == [("same", 3), ("same", 3)]
    # A page deleted (blanked) mid-series is skipped with the reason, and starts afresh when
    # it comes back, as a build would treat it.
    gamma = by[("Gamma", "2020-02-29")]
    assert gamma.status == "skipped" and "empty at 2020-02-29" in gamma.reason
    assert (by[("Gamma", "2020-03-31")].status, by[("Gamma", "2020-03-31")].initial_groups) == (
        "initial", 1)
    # Snapshots with no change give no candidate at all (March: Alpha and Beta unchanged).
    march = summarize_candidates([r for r in rows if r.title != "Gamma"])["2020-03-31"]["all"]
    assert (march["changed_pairs"], march["new_groups"], march["initial_groups"],
            march["articles_same"]) == (0, 0, 0, 2)


def test_a_single_cut_or_no_article_gives_no_update_and_says_so(history: Path,
                                                                tmp_path: Path) -> None:
    rows = count_candidates([history], CUTS[:1], encoder=Encoder())
    assert {r.status for r in rows} == {"initial"}
    empty = tmp_path / "empty.xml"
    empty.write_text(HEAD + "</mediawiki>", encoding="utf-8")
    assert count_candidates([empty], CUTS, encoder=Encoder()) == []


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Embedder]:
    emb = Embedder(tmp_path_factory.mktemp("emb") / "vectors.sqlite", threads=1)
    yield emb
    emb.close()


def test_distractors_are_indexed_in_every_snapshot_but_never_asked_about(
        history: Path, tmp_path: Path, embedder: Embedder) -> None:
    topics = tmp_path / "topics.json"
    # "Alpha" is one of the dataset's own articles: it must not get a stale twin.
    topics.write_text(json.dumps({
        "Alpha": "Alpha is a village with 50 inhabitants.",
        "Zeta": "Zeta is a glacier in Norway. It is retreating by 20 metres a year.",
        "Eta": "Eta is a letter of the Greek alphabet.",
    }), encoding="utf-8")
    llm = LLM(ScriptedBackend([answering()] * 30, model_id="scripted-gen"))  # type: ignore[list-item]
    root = tmp_path / "ds"
    dataset = asyncio.run(build_dataset(
        root, [history], llm=llm, model_spec="scripted", cuts=CUTS[:2],
        encoder=Encoder(pairs=[(ALPHA_1, ALPHA_1B, 0.95)]), embedder=embedder,
        distractors=[topics]))
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["distractors"]["counts"] == {"articles": 2, "dataset_articles": 1,
                                                 "duplicates": 0, "redirect_or_empty": 0}
    for info in dataset.complete_snapshots:
        assert info.counts["distractor_passages"] == 2
        index = HybridIndex.load(dataset.index_dir(info), embedder=embedder)
        try:
            titles = [h.passage.title for h in index.search("glacier in Norway", 3)]
            assert titles[0] == "Zeta"
            alphas = [h.passage for h in index.search("Alpha inhabitants", 10)
                      if h.passage.title == "Alpha"]
            assert alphas and all(not p.meta.get("distractor") for p in alphas)
        finally:
            index.close()
        assert {i.title for i in dataset.instances(info)} <= {"Alpha", "Beta", "Gamma"}
    # Resuming with other distractors would change the database under the instances.
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"Theta": "Theta is a moon."}), encoding="utf-8")
    with pytest.raises(DatasetError, match="other distractors") as err:
        asyncio.run(build_dataset(root, [history], llm=llm, model_spec="scripted",
                                  cuts=CUTS[:2], encoder=Encoder(), embedder=embedder,
                                  distractors=[other]))
    assert "--distractors" in err.value.hint
    assert Dataset.open(root).manifest["distractors"]["passages"] == 2
