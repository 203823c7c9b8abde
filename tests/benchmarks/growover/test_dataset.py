"""Building, resuming and evaluating a dataset from a constructed history dump."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from freshwiki.benchmarks.growover import (
    Dataset,
    DatasetError,
    GrowOver,
    QAInstance,
    SnapshotIndexes,
    build_dataset,
    growover_benchmark,
    growover_retriever,
    update_dataset,
)
from freshwiki.config import load_settings
from freshwiki.evaluation import ResultsStore, evaluate
from freshwiki.llm import LLM, Message, ScriptExhaustedError
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.retrieval import Embedder
from freshwiki.systems.ralm import RalmSystem
from freshwiki.systems.vanilla import VanillaSystem
from tests.benchmarks.growover.helpers import HEAD, Encoder, answering, page, revision

ALPHA_1 = ("Alpha is a town in Spain with 100 inhabitants and a long history of farming along "
           "the river valley.")
ALPHA_1B = ALPHA_1.replace("100", "120")
ALPHA_REST = ("The town hall was built in 1850 by local masons who used stone from the nearby "
              "quarry at Cerro Alto, which is still open. The annual fair draws about 3000 "
              "visitors every September, most of them from the surrounding villages.")
ALPHA_NEW = "A new bridge over the river opened in 2019."
GAMMA = ("Gamma is a river in Portugal that is 45 kilometres long and flows into the Atlantic "
         "near a small fishing port. Its basin covers 800 square kilometres of hills and pine "
         "forest, and the water is used by 12 mills. Trout fishing is popular in spring, when "
         "anglers come from Lisbon and Porto for the opening of the season.")
DELTA = ("Delta is a lake in Italy that lies 300 metres above sea level in a basin carved by "
         "glaciers during the last ice age. The lake is 7 kilometres long and its deepest "
         "point reaches 90 metres below the surface. Ferries have crossed it since 1905, "
         "linking the villages on the northern and southern shores of the lake.")
CUTS = [dt.datetime(2020, 1, 31, 23, 59, tzinfo=dt.UTC),
        dt.datetime(2020, 2, 29, 23, 59, tzinfo=dt.UTC)]


@pytest.fixture
def history(tmp_path: Path) -> Path:
    path = tmp_path / "history.xml"
    path.write_text(HEAD + "".join([
        page(10, "Alpha",
             revision(101, "2020-01-05T10:00:00Z", f"{ALPHA_1} {ALPHA_REST}"),
             revision(102, "2020-02-10T10:00:00Z", f"{ALPHA_1B} {ALPHA_REST} {ALPHA_NEW}")),
        page(11, "Gamma",
             revision(201, "2020-01-07T08:00:00Z", GAMMA),
             revision(202, "2020-02-12T08:00:00Z", "#REDIRECT [[Alpha]]")),
        page(12, "Delta", revision(301, "2020-02-01T00:00:00Z", DELTA)),
    ]) + "</mediawiki>", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Embedder]:
    emb = Embedder(tmp_path_factory.mktemp("emb") / "vectors.sqlite", threads=1)
    yield emb
    emb.close()


def encoder() -> Encoder:
    return Encoder(pairs=[(ALPHA_1, ALPHA_1B, 0.95)])


def build(root: Path, history: Path, embedder: Embedder, steps: Sequence[object],
          cuts: Sequence[dt.datetime] = CUTS) -> Dataset:
    llm = LLM(ScriptedBackend(list(steps), model_id="scripted-gen"))  # type: ignore[arg-type]
    return asyncio.run(build_dataset(root, [history], llm=llm, model_spec="scripted",
                                     encoder=encoder(), cuts=cuts, embedder=embedder))


def test_build_generates_then_maintains_with_every_drop_recorded(
        tmp_path: Path, history: Path, embedder: Embedder) -> None:
    dataset = build(tmp_path / "ds", history, embedder, [answering()] * 40)
    first, second = dataset.snapshots
    assert (first.label, second.label, first.complete, second.complete) == (
        "2020-01-31", "2020-02-29", True, True)
    # Snapshot 0: Alpha and Gamma, one paragraph each -> one QA and one dialogue each;
    # Delta did not exist yet.
    s0 = dataset.instances(first)
    assert sorted((i.page_id, i.kind, i.type) for i in s0) == [
        (10, "dialogue", "initial"), (10, "qa", "initial"),
        (11, "dialogue", "initial"), (11, "qa", "initial")]
    assert any(s.page_id == 12 and "did not exist yet at 2020-01-31" in s.reason
               for s in dataset.skips(first))
    # Snapshot 1, by hand: Alpha's QA cited sentence 0 (100 -> 120: changed) -> dropped; its
    # dialogue's turns cite sentences 0, 1, 2 -> turn 1 dropped, turns 2-3 kept; one changed
    # question and one changed dialogue (sentence 0 alone: 1-2 between it and sentence 3 are
    # unchanged); sentence 3 is new -> one new QA and one new dialogue. Gamma became a
    # redirect -> dropped. Delta appeared -> generated as new.
    s1 = dataset.instances(second)
    summary = sorted((i.page_id, i.kind, i.type) for i in s1)
    assert summary == [
        (10, "dialogue", "changed"), (10, "dialogue", "new"), (10, "dialogue", "unchanged"),
        (10, "qa", "changed"), (10, "qa", "new"), (12, "dialogue", "new"), (12, "qa", "new")]
    carried = next(i for i in s1 if i.type == "unchanged")
    assert [t.number for t in carried.turns] == [2, 3]  # type: ignore[union-attr]
    changed = next(i for i in s1 if i.type == "changed")
    assert isinstance(changed, QAInstance)
    assert (changed.old_answer, changed.answer) == ("100", "120")
    reasons = [s.reason for s in dataset.skips(second)]
    assert "evidence sentence 0 was changed" in reasons
    assert any(r.startswith("the article is a redirect to 'Alpha' at 2020-02-29: its 2 "
                            "instance(s) are dropped") for r in reasons)
    manifest = json.loads((dataset.root / "manifest.json").read_text())
    assert manifest["model"] == {"spec": "scripted", "id": "scripted-gen"}
    assert manifest["snapshots"][1]["counts"]["qa_changed"] == 1

    # The snapshot index holds that snapshot's passages, with sentence maps.
    bench = GrowOver(dataset)
    sample = next(s for s in bench.samples() if s.metadata["type"] == "changed")
    assert sample.id == f"2020-02-29:{changed.id}"
    assert sample.targets == ("120",) and sample.metadata["old_answer"] == "100"
    index = growover_retriever(sample, SnapshotIndexes(embedder))
    (evidence_passage,) = sample.metadata["evidence_passages"]
    found = index.passage(evidence_passage)
    assert found is not None and 0 in found.meta["sentences"] and "120" in found.text
    # Dialogue samples carry their turn's own type: the changed dialogue's turns are Changed.
    turns = [s for s in GrowOver(dataset, kind="dialogue").samples()
             if s.metadata["snapshot"] == "2020-02-29" and s.metadata["type"] == "changed"]
    assert turns and all(s.metadata["snapshot_type"] == "2020-02-29 changed" for s in turns)
    assert all(s.metadata["evidence"] == [0] for s in turns)


def test_a_crash_mid_build_loses_nothing_already_generated(
        tmp_path: Path, history: Path, embedder: Embedder) -> None:
    # Alpha needs 2 calls; the script ends during Gamma's, so the build stops there.
    with pytest.raises(ScriptExhaustedError):
        build(tmp_path / "ds", history, embedder, [answering()] * 3)
    done = [json.loads(x) for x in (tmp_path / "ds/snapshots/00-2020-01-31/pages.jsonl")
            .read_text().splitlines()]
    assert [d["page_id"] for d in done] == [10]
    calls: list[str] = []

    def counting(messages: Sequence[Message]) -> str:
        calls.append(messages[-1].content)
        return answering()(messages)

    dataset = build(tmp_path / "ds", history, embedder, [counting] * 40, cuts=CUTS[:1])
    assert not any("Alpha" in c for c in calls)  # Alpha was not generated again
    assert sorted((i.page_id, i.kind) for i in dataset.instances(dataset.snapshots[0])) == [
        (10, "dialogue"), (10, "qa"), (11, "dialogue"), (11, "qa")]


def test_update_adds_a_later_cut_and_refuses_an_earlier_one(
        tmp_path: Path, history: Path, embedder: Embedder) -> None:
    build(tmp_path / "ds", history, embedder, [answering()] * 10, cuts=CUTS[:1])
    llm = LLM(ScriptedBackend([answering()] * 20, model_id="scripted-gen"))
    info = asyncio.run(update_dataset(tmp_path / "ds", "2020-02-29", llm=llm, encoder=encoder(),
                                      embedder=embedder))
    assert (info.number, info.label, info.counts["qa_changed"]) == (1, "2020-02-29", 1)
    with pytest.raises(DatasetError, match="is not after the last snapshot 2020-02-29"):
        asyncio.run(update_dataset(tmp_path / "ds", "2020-02-15", llm=llm, encoder=encoder()))
    other = LLM(ScriptedBackend([], model_id="another-model"))
    with pytest.raises(DatasetError, match="generated with model scripted-gen"):
        asyncio.run(update_dataset(tmp_path / "ds", "2020-03-31", llm=other, encoder=encoder()))


def answer_120(_messages: Sequence[Message]) -> str:
    return "120"


@pytest.mark.parametrize("system_name", ["vanilla", "ralm"])
def test_runner_scores_every_sample_per_type(
        tmp_path: Path, history: Path, embedder: Embedder, system_name: str,
        settings: object) -> None:
    dataset = build(tmp_path / "ds", history, embedder, [answering()] * 40)
    bench = GrowOver(dataset)
    samples = list(bench.samples())
    llm = LLM(ScriptedBackend([answer_120] * len(samples), model_id="sut"))
    system = (VanillaSystem(llm) if system_name == "vanilla" else
              RalmSystem(llm, settings, k=5, indexes=SnapshotIndexes(embedder)))  # type: ignore[arg-type]
    with ResultsStore(tmp_path / "runs.sqlite") as store:
        summary = asyncio.run(evaluate(bench, system, llm=llm, store=store,
                                       scorers=bench.scorers(None), model_spec="scripted"))
        items = store.load_run(summary.info.run_id).items
    assert summary.complete == len(samples) == 2 + 3 and not summary.failures
    f1 = {i.sample_id: i.value for i in items if i.scorer == "growover-f1"}
    # The system always says "120": right only for the changed question (new answer 120).
    assert f1 == {s.id: float(s.targets[0] == "120") for s in samples}
    assert sum(f1.values()) == 1.0
    hits = [i for i in items if i.scorer == "growover-hit"]
    assert len(hits) == len(samples)
    if system_name == "vanilla":
        assert {i.label for i in hits} == {"no-retrieval"}
    else:
        # At most 3 passages per snapshot index and k = 5: every evidence passage is retrieved.
        assert {(i.label, i.value) for i in hits} == {("hit", 1.0)}
    assert {i.metadata["type"] for i in items} == {"initial", "changed", "new"}


def test_per_type_caps_each_snapshot_and_type_and_grows_as_a_superset(
        tmp_path: Path, history: Path, embedder: Embedder) -> None:
    dataset = build(tmp_path / "ds", history, embedder, [answering()] * 40)

    def counts(bench: GrowOver) -> dict[tuple[str, str], int]:
        out: dict[tuple[str, str], int] = {}
        for s in bench.samples():
            key = (str(s.metadata["snapshot"]), str(s.metadata["type"]))
            out[key] = out.get(key, 0) + 1
        return out

    # Uncapped (by hand, see the test above): two initial QAs, then changed 1 and new 2.
    assert counts(GrowOver(dataset)) == {("2020-01-31", "initial"): 2,
                                         ("2020-02-29", "changed"): 1,
                                         ("2020-02-29", "new"): 2}
    one = GrowOver(dataset, per_type=1)
    assert counts(one) == {("2020-01-31", "initial"): 1, ("2020-02-29", "changed"): 1,
                           ("2020-02-29", "new"): 1}
    assert one.describe()["per_type"] == 1 and "per_type" not in GrowOver(dataset).describe()
    # A larger cap keeps a superset, and the seed decides which ones a cap keeps.
    two = {s.id for s in GrowOver(dataset, per_type=2).samples()}
    assert {s.id for s in one.samples()} <= two
    kept = [{s.id for s in GrowOver(dataset, per_type=1, seed=seed).samples()}
            for seed in range(8)]
    assert len({frozenset(k) for k in kept}) > 1
    with pytest.raises(DatasetError, match="per_type=0"):
        GrowOver(dataset, per_type=0)


def test_per_type_option_must_be_a_whole_number(tmp_path: Path) -> None:
    settings = load_settings({"home": str(tmp_path)}).settings
    with pytest.raises(DatasetError, match="per_type='many' is not a whole number"):
        growover_benchmark(settings, {"path": str(tmp_path), "per_type": "many"})


def test_progress_has_a_total_for_merged_histories(
        tmp_path: Path, history: Path, embedder: Embedder) -> None:
    # Several history files are merged in memory, so the first snapshot knows how many
    # pages it will build (a single streamed file does not, until a snapshot exists).
    extra = tmp_path / "extra.xml"
    extra.write_text(HEAD + page(13, "Epsilon", revision(
        401, "2020-01-20T00:00:00Z", DELTA.replace("Delta", "Epsilon"))) + "</mediawiki>",
        encoding="utf-8")
    calls: list[tuple[str, int, int | None]] = []
    llm = LLM(ScriptedBackend([answering()] * 60, model_id="scripted-gen"))
    asyncio.run(build_dataset(
        tmp_path / "ds", [history, extra], llm=llm, model_spec="scripted", encoder=encoder(),
        cuts=CUTS, embedder=embedder,
        progress=lambda what, done, total: calls.append((what, done, total))))
    first = [c for c in calls if c[0] == "2020-01-31"]
    # Alpha, Gamma and Delta (not there yet on the first cut, still a page to go through)
    # from the history fixture, and Epsilon from the second file
    assert [c[1] for c in first] == [1, 2, 3, 4] and {c[2] for c in first} == {4}
    assert {c[2] for c in calls if c[0] == "2020-02-29"} == {4}
