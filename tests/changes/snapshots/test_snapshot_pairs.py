"""Real-pairs evaluation of snapshot alignment (experiments/snapshot_pairs.py, snapshot_diff.py).

Three parts, each checked by hand: the pair extraction on the real Pear history (which
sentences an edit touched, and that nothing of the ovos package is stored), the agreement
report on a five-sentence example, and the LLM path of both methods with a scripted backend
(the aligner asks only its ambiguous pairs, the GrowOVER method every pair of a chunk).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import pytest

from freshwiki.changes.snapshots import BatchLLMJudge, LLMJudge
from freshwiki.config import Settings
from freshwiki.llm import Message, open_llm
from freshwiki.llm.backends.scripted import ScriptedBackend
from tests.changes.snapshots.helpers import FakeEncoder, snap

EXPERIMENTS = Path(__file__).resolve().parents[3] / "experiments"


def _load(name: str) -> ModuleType:
    if str(EXPERIMENTS) not in sys.path:
        sys.path.insert(0, str(EXPERIMENTS))  # the scripts import _provenance and each other
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, EXPERIMENTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sp() -> ModuleType:
    return _load("snapshot_pairs")


@pytest.fixture(scope="module")
def sd() -> ModuleType:
    return _load("snapshot_diff")


def test_history_pairs_touch_only_what_the_real_edits_touched(sp: ModuleType,
                                                              shared_data: Path) -> None:
    pairs = {p.pair_id: p for p in sp.history_pairs(shared_data / "wikipedia")}
    # Pear, 31 August 2002, 02:16 -> 03:27: the see-also line was reworded, nothing else.
    pear = pairs["cons:185241-185408"]
    assert pear.source == "history-consecutive" and pear.title == "Pear"
    assert list(sp.touched(pear)) == [
        ("old", 13, "propagating apples and other fruit trees"),
        ("new", 13, "Fruit tree propagation")]
    # The February version against the end of August: a month-end pair of its own.
    month = pairs["month:185185-188924"]
    assert month.source == "history-monthly"
    assert list(sp.touched(month)) == [("new", 13, "Fruit tree propagation")]
    # The 2002 and 2014 exports of Pear, and a talk page of the simplewiki history.
    assert pairs["dumps:188924-638548877"].new.revision_id == 638548877
    assert any(p.title == "Talk:Cristiano Ronaldo" for p in pairs.values())
    # Redirect revisions (all of Pyrus but one) never form a pair.
    assert not any(p.title == "Pyrus" for p in pairs.values())


def test_sample_is_seeded_and_keeps_package_text_out(sp: ModuleType, shared_data: Path) -> None:
    summary = ("Pears are a genus of trees in the family Rosaceae. "
               "They are grown in every temperate region.")
    pairs = [p for p in sp.cross_source_pairs(shared_data / "wikipedia", {"Pear": summary})]
    assert [p.pair_id for p in pairs] == ["history-ovos:638548877"]
    rows = sp.sample(pairs, seed=13)
    again = sp.sample(pairs, seed=13)
    assert rows == again and rows
    for row in rows:
        if row["side"] == "new":
            assert row["text"] is None  # the package's sentence: a hash only
            assert row["sha256"] in {sp.sha(t) for t in pairs[0].new.texts}
        else:
            assert row["text"] in pairs[0].old.texts
            assert row["text"] not in pairs[0].new.texts  # touched
    assert sp.check(rows, pairs)
    broken = [dict(rows[0], sha256="0" * 64)]
    with pytest.raises(sp.PairsDataError, match="no longer matches"):
        sp.check(broken, pairs)


def test_committed_labels_cover_every_stored_sentence(sp: ModuleType) -> None:
    rows = sp.read_jsonl(sp.PAIRS)
    labels = {r["id"]: r for r in sp.read_jsonl(sp.LABELS)}
    assert len(rows) >= 150 and {r["id"] for r in rows} == set(labels)
    assert {r["label"] for r in labels.values()} == {"unchanged", "changed", "new", "deleted"}
    assert all(r["reason"] and r["labeller"].startswith("read by") for r in labels.values())
    # Nothing from the ovos package is stored: its side is a hash.
    assert all(r["text"] is None for r in rows if r["side"] == "new" and r["source"].endswith(
        "-ovos"))
    assert json.dumps(rows).count("Pears are a genus of trees") == 0


def test_agreement_report_on_a_hand_checked_example(sd: ModuleType) -> None:
    truth = ["unchanged", "unchanged", "changed", "new", "deleted"]
    predicted = ["unchanged", "changed", "changed", "new", "unchanged"]
    rep = sd.agreement_report(truth, predicted)
    assert rep["accuracy"]["hits"] == 3 and rep["accuracy"]["n"] == 5
    # Wilson 95 % for 3/5: centre (0.6 + 1.9208/5) / 1.76832 = 0.5566, half-width 0.3258.
    assert rep["accuracy"]["ci95"] == (0.2307, 0.8824)
    per = rep["per_label"]
    assert (per["unchanged"]["correct"], per["unchanged"]["true"],
            per["unchanged"]["predicted"]) == (1, 2, 2)
    assert per["changed"]["recall"] == 1.0 and per["changed"]["precision"] == 0.5
    assert per["deleted"]["recall"] == 0.0 and per["deleted"]["precision"] is None
    assert rep["confusion_truth_by_predicted"]["deleted"]["unchanged"] == 1
    assert sd.share_ci(0, 4) == (0.0, 0.4899)  # z^2 / (n + z^2) = 3.8416 / 7.8416


def _contradiction(messages: Sequence[Message]) -> str:
    return '{"reason": "scripted", "relation": "contradiction"}'


def _contradictions(messages: Sequence[Message]) -> str:
    shown = messages[-1].content.count("\nNEW: ")
    return json.dumps({"relations": ["contradiction"] * shown})


def test_llm_path_asks_the_aligner_less_than_the_growover_method(
        sp: ModuleType, sd: ModuleType, settings: Settings) -> None:
    a1, b1 = "The mill closed after the flood of that spring.", "Floods shut the old works."
    a2, b2 = "Its owner moved to the coast.", "The family left for the seaside town."
    old = snap(["The town lies on a river.", a1, a2], title="Millbrook")
    new = snap(["The town lies on a river.", b1, b2], title="Millbrook")
    pair = sp.ArticlePair("t:1-2", "test", "Millbrook", old, new, {}, {})
    backend = ScriptedBackend([_contradictions] + [_contradiction] * 8)
    llm = open_llm(settings=settings, backend=backend, cache=False)
    encoder = FakeEncoder([(a1, b1, 0.75), (a2, b2, 0.65)])
    judges = {"aligner (LLM, batch 8, positional)": BatchLLMJudge(llm, batch_size=8,
                                                                  shape="positional"),
              "growover (LLM NLI)": LLMJudge(llm)}
    ours, base = asyncio.run(sd.run_methods([pair], encoder, judges))
    # Ours: only the two ambiguous pairs (0.75 and 0.65) go to the LLM, in one call; both
    # contradict at >= 0.6, so both are changed.
    assert ours.nli_pairs == 2 and ours.llm["calls"] == 1 and ours.llm["requests"] == 1
    assert [ours.predicted[f"t:1-2#new{j}"] for j in range(3)] == [
        "unchanged", "changed", "changed"]
    # GrowOVER: all 2 x 2 pairs of the chunk, then the 2 x 2 reverse checks of the
    # contradiction candidates (max similarity >= 0.6 on both sides): 8 calls, one per pair.
    assert base.nli_pairs == 8 and base.llm["calls"] == 8
    assert [base.predicted[f"t:1-2#new{j}"] for j in range(3)] == [
        "unchanged", "changed", "changed"]
    assert len(backend.requests) == 9
    assert [r.params.schema_name for r in backend.requests] == ["nli_batch"] + ["nli"] * 8
    assert ours.seconds >= 0 and base.seconds >= 0
    assert ours.cost()["llm_calls"] == 1 and base.cost()["llm_requests"] == 8


def test_batch_specs_and_method_names(sd: ModuleType) -> None:
    assert sd.parse_batches("1, 4,8r,16k,16p") == [
        (1, False, "numbered"), (4, False, "numbered"), (8, True, "numbered"),
        (16, False, "keyed"), (16, False, "positional")]
    with pytest.raises(ValueError, match="at least 1"):
        sd.parse_batches("0")
    with pytest.raises(ValueError, match="unknown letter"):
        sd.parse_batches("8x")
    assert sd.batch_name(1, False) == "aligner (LLM, one pair per call)"
    assert sd.batch_name(8, True) == "aligner (LLM, batch 8, with reasons)"
    assert sd.batch_name(16, False, "keyed") == "aligner (LLM, batch 16, keyed)"
