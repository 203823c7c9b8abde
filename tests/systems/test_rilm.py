"""RiLM: the certainty gate (math by hand, files, refusals) and the answer-gate-re-retrieve flow
with a scripted model, scripted features and a fake snapshot index with hand-set vectors."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from freshwiki.benchmarks import Sample, Task
from freshwiki.config import Settings
from freshwiki.llm import LLM, FeatureVector, Message
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.records import Passage
from freshwiki.retrieval import SearchHit
from freshwiki.systems import SystemSetupError, load_system
from freshwiki.systems.rilm import (
    CertaintyGate,
    GateError,
    GateMismatchError,
    RiLMSystem,
    omega_for,
    rerank,
    train_gate,
)

# -- the gate ---------------------------------------------------------------------------------


def gate3(**overrides: Any) -> CertaintyGate:
    """A hand-made three-class gate on one feature: z = (x - 1) / 2, logits (z, 0, -z)."""
    fields: dict[str, Any] = dict(
        feature_kind="scripted", model="m", classes=("misleading", "reliable", "uncertain"),
        mean=(1.0,), scale=(2.0,), coef=((1.0,), (0.0,), (-1.0,)), intercept=(0.0, 0.0, 0.0))
    return CertaintyGate(**{**fields, **overrides})


def fv(*values: float, kind: str = "scripted", model: str = "m") -> FeatureVector:
    return FeatureVector(tuple(values), kind=kind, model=model)


def test_three_class_probabilities_are_a_softmax_of_standardised_features() -> None:
    # x = 3 -> z = 1 -> logits (1, 0, -1); softmax = (e, 1, 1/e) / (e + 1 + 1/e)
    total = math.e + 1 + 1 / math.e
    probs = gate3().probabilities(fv(3.0))
    assert probs == pytest.approx({"misleading": math.e / total, "reliable": 1 / total,
                                   "uncertain": (1 / math.e) / total})
    assert probs["misleading"] == pytest.approx(0.66524, abs=1e-5)


def test_a_two_class_gate_is_a_sigmoid_and_the_missing_class_gets_zero() -> None:
    gate = CertaintyGate(feature_kind="scripted", model="m", classes=("misleading", "reliable"),
                         mean=(0.0,), scale=(1.0,), coef=((2.0,),), intercept=(0.0,))
    probs = gate.probabilities(fv(0.5))  # logit 2 * 0.5 = 1 for "reliable"
    assert probs["reliable"] == pytest.approx(1 / (1 + math.exp(-1)))  # 0.731059
    assert probs["misleading"] == pytest.approx(1 - 1 / (1 + math.exp(-1)))
    assert probs["uncertain"] == 0.0


def test_evaluate_counts_the_confusion_by_hand() -> None:
    gate = gate3()
    # x=5 -> z=2 -> logits (2, 0, -2): misleading; x=-3 -> z=-2 -> (-2, 0, 2): uncertain.
    x = np.asarray([[5.0], [5.0], [-3.0], [-3.0]])
    report = gate.evaluate(x, ["misleading", "reliable", "uncertain", "uncertain"])
    assert report.n_test == 4 and report.accuracy == pytest.approx(0.75)
    assert report.classes == ("reliable", "misleading", "uncertain")
    # rows/cols in (reliable, misleading, uncertain) order
    assert report.confusion == ((0, 1, 0), (0, 1, 0), (0, 0, 2))
    assert report.recall == {"reliable": 0.0, "misleading": 1.0, "uncertain": 1.0}


def _separable(n: int = 10, seed: int = 1) -> tuple[list[FeatureVector], list[str]]:
    rng = np.random.default_rng(seed)
    centres = {"reliable": (3.0, 0.0), "misleading": (-3.0, 0.0), "uncertain": (0.0, 3.0)}
    features, labels = [], []
    for label, (cx, cy) in centres.items():
        for _ in range(n):
            features.append(fv(cx + rng.normal(0, 0.3), cy + rng.normal(0, 0.3), model="m2"))
            labels.append(label)
    return features, labels


def test_training_separates_clear_clusters_and_reports_the_held_out_split() -> None:
    features, labels = _separable()
    gate, report = train_gate(features, labels, holdout=0.2, seed=0)
    assert (gate.feature_kind, gate.model, gate.dim) == ("scripted", "m2", 2)
    assert gate.classes == ("misleading", "reliable", "uncertain")  # sorted, as sklearn does
    assert (report.n_train, report.n_test) == (24, 6)
    assert report.accuracy == 1.0
    # stratified: two of each class held out
    assert [sum(row) for row in report.confusion] == [2, 2, 2]
    assert report.train_counts == {"reliable": 8, "misleading": 8, "uncertain": 8}
    probs = gate.probabilities(fv(3.0, 0.0, model="m2"))
    assert probs["reliable"] > 0.9 and sum(probs.values()) == pytest.approx(1.0)
    again, _ = train_gate(features, labels, holdout=0.2, seed=0)
    assert again.to_dict() == gate.to_dict()  # seeded: same data, same gate


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    features, labels = _separable()
    gate, _ = train_gate(features, labels, seed=0, extra={"run_id": "r1"})
    path = tmp_path / "gates" / "g.json"
    gate.save(path)
    data = json.loads(path.read_text())
    assert data["format"] == "freshwiki-rilm-gate" and data["version"] == 1
    assert data["feature_kind"] == "scripted" and data["model"] == "m2" and data["dim"] == 2
    assert data["training"]["run_id"] == "r1" and "report" in data["training"]
    loaded = CertaintyGate.load(path)
    assert loaded == gate
    x = fv(0.3, 2.1, model="m2")
    assert loaded.probabilities(x) == gate.probabilities(x)


def test_a_gate_refuses_another_model_kind_or_size() -> None:
    gate = gate3()
    with pytest.raises(GateMismatchError, match=r"model 'other'.*trained on scripted features "
                       r"of 'm'") as info:
        gate.probabilities(fv(1.0, model="other"))
    assert "train-gate" in str(info.value)
    with pytest.raises(GateMismatchError, match="hidden-state"):
        gate.probabilities(fv(1.0, kind="hidden-state"))
    with pytest.raises(GateMismatchError, match="2 values, the gate expects 1"):
        gate.probabilities(fv(1.0, 2.0))


def test_bad_gate_files_are_reported_with_a_remedy(tmp_path: Path) -> None:
    with pytest.raises(GateError, match="no gate file") as info:
        CertaintyGate.load(tmp_path / "missing.json")
    assert "train-gate" in str(info.value)
    (tmp_path / "other.json").write_text('{"hello": 1}')
    with pytest.raises(GateError, match="not a freshwiki RiLM gate"):
        CertaintyGate.load(tmp_path / "other.json")
    damaged = gate3().to_dict()
    damaged["coef"] = [[1.0, 2.0]]
    (tmp_path / "damaged.json").write_text(json.dumps(damaged))
    with pytest.raises(GateError, match="damaged"):
        CertaintyGate.load(tmp_path / "damaged.json")
    newer = {**gate3().to_dict(), "version": 2}
    (tmp_path / "newer.json").write_text(json.dumps(newer))
    with pytest.raises(GateError, match="version 2"):
        CertaintyGate.load(tmp_path / "newer.json")


def test_training_refuses_unusable_data() -> None:
    with pytest.raises(GateError, match="at least one other class"):
        train_gate([fv(1.0), fv(2.0)], ["reliable", "reliable"], holdout=0.0)
    with pytest.raises(GateError, match="'reliable'"):
        train_gate([fv(1.0), fv(2.0)], ["misleading", "uncertain"], holdout=0.0)
    with pytest.raises(GateError, match="different kinds, models"):
        train_gate([fv(1.0), fv(2.0, model="x")], ["reliable", "uncertain"], holdout=0.0)
    with pytest.raises(GateError, match="unknown labels"):
        train_gate([fv(1.0), fv(2.0)], ["reliable", "stale"], holdout=0.0)
    with pytest.raises(GateError, match="holdout"):
        train_gate([fv(1.0), fv(2.0)], ["reliable", "uncertain"], holdout=1.0)


# -- omega and the re-ranking -----------------------------------------------------------------


def test_omega_is_one_minus_p_reliable_scaled_and_capped() -> None:
    assert omega_for(0.2, 1.0) == pytest.approx(0.8)
    assert omega_for(0.2, 0.5) == pytest.approx(0.4)
    assert omega_for(0.2, 2.0) == 1.0  # capped
    assert omega_for(1.0, 1.0) == 0.0


QUERY = "Where is it?"
# Unit vectors in 2-d: the query points along x, query + answer along y.
DOCS = {"d1": (1.0, 0.0), "d2": (0.8, 0.6), "d3": (0.0, 1.0), "d4": (0.6, 0.8)}


def passage(pid: str) -> Passage:
    return Passage(id=pid, page_id=1, revision_id=1, title=f"T{pid}", section_path=(),
                   text=f"text of {pid}", timestamp=None)


def hit(pid: str, rank: int) -> SearchHit:
    return SearchHit(passage=passage(pid), score=1.0 / rank, rank=rank, key=rank,
                     fused_score=1.0 / rank)


class FakeEncoder:
    """Looks texts up in a table of hand-set unit vectors; records what it was asked."""

    def __init__(self, answer_vectors: dict[str, tuple[float, float]]) -> None:
        self.table = {QUERY: (1.0, 0.0), **{f"{QUERY} {a}": v for a, v in answer_vectors.items()},
                      **{passage(p).indexed_text: v for p, v in DOCS.items()}}
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls.append(list(texts))
        return np.asarray([self.table[t] for t in texts], dtype=np.float32)


class FakeIndex:
    """A snapshot index returning d1..d4 in that order."""

    def __init__(self, encoder: FakeEncoder) -> None:
        self.embedder = encoder
        self.searches: list[tuple[str, int]] = []

    def search(self, query: str, k: int) -> list[SearchHit]:
        self.searches.append((query, k))
        return [hit(p, i) for i, p in enumerate(DOCS, start=1)][:k]


def test_rerank_mixes_query_and_answer_similarities_by_omega() -> None:
    encoder = FakeEncoder({"Lyon": (0.0, 1.0)})
    hits = [hit(p, i) for i, p in enumerate(DOCS, start=1)]
    order, sims = rerank(QUERY, "Lyon", hits, 0.8, encoder)
    # score = 0.2 * sim_q + 0.8 * sim_qa:
    # d1 0.2*1 + 0 = 0.2; d2 0.16 + 0.48 = 0.64; d3 0 + 0.8 = 0.8; d4 0.12 + 0.64 = 0.76
    assert sims["sim_q"] == pytest.approx([1.0, 0.8, 0.0, 0.6])
    assert sims["sim_qa"] == pytest.approx([0.0, 0.6, 1.0, 0.8])
    assert sims["score"] == pytest.approx([0.2, 0.64, 0.8, 0.76])
    assert order == [2, 3, 1, 0]
    # Equal scores keep retrieval order.
    order, _ = rerank(QUERY, "Lyon", [hits[0], hits[0]], 0.0, encoder)
    assert order == [0, 1]


# -- the system -------------------------------------------------------------------------------

P_RELIABLE = {"Paris": 0.9, "Lyon": 0.2, "Marseille": 0.6, "Nice": 0.1, "Toulouse": 0.5}


class FakeGate:
    """P(reliable) is the first feature (the scripted features give it per answer)."""

    def probabilities(self, features: FeatureVector) -> dict[str, float]:
        p = features.values[0]
        return {"reliable": p, "misleading": 1.0 - p, "uncertain": 0.0}


def features_of(messages: Sequence[Message], answer: str) -> list[float]:
    return [P_RELIABLE[answer]]


def task() -> Task:
    sample = Sample(id="2015-06-30:x-qa-001", input=QUERY, targets=("Marseille",),
                    metadata={"type": "changed", "kind": "qa"})
    return Task(sample=sample, template="qa", messages=(Message.user(f"Q: {QUERY}"),),
                query=QUERY, max_tokens=32)


def build(answers: list[str], qa_vector: tuple[float, float] = (0.0, 1.0), **options: Any
          ) -> tuple[RiLMSystem, ScriptedBackend, FakeIndex]:
    backend = ScriptedBackend(answers, features=features_of, model_id="fake")
    index = FakeIndex(FakeEncoder({a: qa_vector for a in answers}))
    system = RiLMSystem(LLM(backend), FakeGate(), lambda _task: index, k=2, candidates=4,
                        **options)
    return system, backend, index


def last_user(messages: Sequence[Message]) -> str:
    return [m for m in messages if m.role == "user"][-1].content


async def test_a_reliable_first_answer_is_accepted_without_re_retrieval() -> None:
    system, backend, index = build(["Paris"])
    output = await system.respond(task())
    assert output.text == "Paris"
    assert index.searches == [(QUERY, 4)]  # candidates fetched once
    assert len(backend.requests) == 1 and index.embedder.calls == []
    trace = output.trace
    assert trace["accepted"] is True and trace["chosen"] == "first"
    assert trace["second"] is None and trace["omega"] is None
    assert [r["id"] for r in trace["retrieved"]] == ["d1", "d2"]
    assert trace["p_reliable"] == 0.9
    prompt = last_user(backend.requests[0].messages)
    assert "text of d1" in prompt and "text of d2" in prompt and "text of d3" not in prompt
    # features were computed for exactly the prompt the model saw and its answer
    assert backend.feature_requests == [(backend.requests[0].messages, "Paris")]
    assert trace["messages"] == [m.to_dict() for m in backend.requests[0].messages]


async def test_an_answer_exactly_at_the_threshold_is_accepted() -> None:
    system, backend, _ = build(["Toulouse"], threshold=0.5)
    output = await system.respond(task())
    assert output.trace["accepted"] is True and len(backend.requests) == 1


async def test_an_unreliable_answer_re_retrieves_and_the_more_reliable_answer_wins() -> None:
    system, backend, index = build(["Lyon", "Marseille"])
    output = await system.respond(task())
    trace = output.trace
    # P(reliable) 0.2 < 0.5 -> omega = 1 - 0.2 = 0.8; scores (hand-computed above):
    # d1 0.2, d2 0.64, d3 0.8, d4 0.76 -> new top 2: d3, d4
    assert trace["accepted"] is False
    assert trace["omega"] == pytest.approx(0.8)
    assert trace["rerank"]["score"] == pytest.approx([0.2, 0.64, 0.8, 0.76])
    assert trace["rerank"]["order"] == ["d3", "d4", "d2", "d1"]
    assert index.embedder.calls[0][:2] == [QUERY, f"{QUERY} Lyon"]
    second_prompt = last_user(backend.requests[1].messages)
    assert "text of d3" in second_prompt and "text of d4" in second_prompt
    assert "text of d1" not in second_prompt
    # Marseille (0.6) beats Lyon (0.2)
    assert output.text == "Marseille" and trace["chosen"] == "second"
    assert [r["id"] for r in trace["retrieved"]] == ["d3", "d4"]
    assert [r["id"] for r in trace["first"]["retrieved"]] == ["d1", "d2"]
    assert trace["first"]["answer"] == "Lyon" and trace["second"]["answer"] == "Marseille"
    assert trace["first"]["probabilities"]["reliable"] == 0.2
    assert trace["second"]["probabilities"]["reliable"] == 0.6
    assert trace["p_reliable"] == 0.6
    assert [answer for _, answer in backend.feature_requests] == ["Lyon", "Marseille"]
    # usage is the sum of both calls (scripted: words of prompt / reply)
    first, second = (sum(len(m.content.split()) for m in r.messages) for r in backend.requests)
    assert output.usage.prompt_tokens == first + second
    assert output.usage.completion_tokens == 2


async def test_a_less_reliable_second_answer_loses_to_the_first() -> None:
    system, _, _ = build(["Lyon", "Nice"])
    output = await system.respond(task())
    assert output.text == "Lyon" and output.trace["chosen"] == "first"
    assert [r["id"] for r in output.trace["retrieved"]] == ["d1", "d2"]
    assert output.trace["second"]["answer"] == "Nice"


async def test_omega_scale_changes_the_mix() -> None:
    system, backend, _ = build(["Lyon", "Marseille"], omega_scale=0.5)
    output = await system.respond(task())
    # omega = 0.5 * 0.8 = 0.4: d1 0.6, d2 0.48 + 0.24 = 0.72, d3 0.4, d4 0.36 + 0.32 = 0.68
    assert output.trace["omega"] == pytest.approx(0.4)
    assert output.trace["rerank"]["order"] == ["d2", "d4", "d1", "d3"]
    assert "text of d4" in last_user(backend.requests[1].messages)


async def test_the_same_documents_again_need_no_second_call() -> None:
    # omega_scale 0: ranking by the query alone keeps d1, d2 on top; one scripted answer only,
    # so a second chat call would raise ScriptExhaustedError.
    system, backend, _ = build(["Lyon"], omega_scale=0.0)
    output = await system.respond(task())
    assert output.text == "Lyon" and output.trace["second"] == {"same_documents": True}
    assert output.trace["omega"] == 0.0 and len(backend.requests) == 1


def test_options_are_checked() -> None:
    llm = LLM(ScriptedBackend([]))
    with pytest.raises(SystemSetupError, match="candidates"):
        RiLMSystem(llm, FakeGate(), lambda _t: FakeIndex(FakeEncoder({})), k=5, candidates=3)
    with pytest.raises(SystemSetupError, match="threshold"):
        RiLMSystem(llm, FakeGate(), lambda _t: FakeIndex(FakeEncoder({})), threshold=1.5)


def test_the_registered_system_needs_a_gate_of_its_own_model(
    tmp_path: Path, settings: Settings,
) -> None:
    llm = LLM(ScriptedBackend([], model_id="fake"))
    with pytest.raises(SystemSetupError, match="needs a certainty gate") as info:
        load_system("rilm", llm, settings, {})
    assert "train-gate" in str(info.value)
    other = tmp_path / "other.json"
    gate3(model="another-model").save(other)
    with pytest.raises(SystemSetupError, match="another-model"):
        load_system("rilm", llm, settings, {"gate": str(other)})
    mine = tmp_path / "mine.json"
    gate3(model="fake").save(mine)
    system = load_system("rilm", llm, settings, {"gate": str(mine), "k": "3"})
    described = dict(system.describe())
    assert described["k"] == 3 and described["candidates"] == 12
    assert described["gate"].startswith("mine.json@") and len(described["gate"]) == 26


async def test_rilm_runs_on_a_real_hybrid_index(mini_index: Any) -> None:
    """The Searcher protocol is what HybridIndex offers: real search, real embedder sims."""
    backend = ScriptedBackend(["Lyon", "Marseille"], features=features_of, model_id="fake")
    system = RiLMSystem(LLM(backend), FakeGate(), lambda _task: mini_index, k=2, candidates=6)
    query = "Who won the main event of UFC 245?"
    sample = Sample(id="s", input=query, metadata={"type": "new", "kind": "qa"})
    output = await system.respond(Task(sample=sample, template="qa",
                                       messages=(Message.user(query),), query=query))
    trace = output.trace
    assert trace["omega"] == pytest.approx(0.8) and trace["candidates"] == 6
    expected = [h.passage.id for h in mini_index.search(query, 6)]
    assert trace["rerank"]["ids"] == expected
    assert [r["id"] for r in trace["first"]["retrieved"]] == expected[:2]
    scores = trace["rerank"]["score"]
    for s, q, qa in zip(scores, trace["rerank"]["sim_q"], trace["rerank"]["sim_qa"],
                        strict=True):
        assert -1.0 <= q <= 1.0 and -1.0 <= qa <= 1.0
        assert s == pytest.approx(0.2 * q + 0.8 * qa)
    by_id = dict(zip(trace["rerank"]["ids"], scores, strict=True))
    order = trace["rerank"]["order"]
    assert [by_id[i] for i in order] == sorted(scores, reverse=True)
    # A second answer exactly when the re-ranked top 2 differ from the first pass's.
    same = order[:2] == expected[:2]
    assert (trace["second"] == {"same_documents": True}) == same
    assert len(backend.requests) == (1 if same else 2)
    if not same:
        assert [r["id"] for r in trace["second"]["retrieved"]] == order[:2]
