"""RiLM (GrowOVER §4): the certainty gate (math by hand, files, refusals) and the per-document
gate, adaptive re-retrieval and final pick, with a scripted model, scripted features and a
fake snapshot index with hand-set vectors; then once on a real hybrid index."""

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
    GatesByKind,
    RiLMSystem,
    arr_vector,
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
    assert data["format"] == "freshwiki-rilm-gate" and data["version"] == 2
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
    newer = {**gate3().to_dict(), "version": 3}
    (tmp_path / "newer.json").write_text(json.dumps(newer))
    with pytest.raises(GateError, match="version 3"):
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


def test_temperature_flattens_the_softmax_by_hand() -> None:
    # x = 3 -> logits (1, 0, -1); at temperature 2 -> (0.5, 0, -0.5)
    total = math.exp(0.5) + 1 + math.exp(-0.5)
    probs = gate3().probabilities(fv(3.0), temperature=2.0)
    assert probs["reliable"] == pytest.approx(1 / total)
    assert probs["misleading"] == pytest.approx(math.exp(0.5) / total)
    assert probs["reliable"] == pytest.approx(0.30720, abs=1e-5)  # 1 / 3.25525
    with pytest.raises(ValueError, match="temperature"):
        gate3().probabilities(fv(3.0), temperature=0.0)


def test_a_version_1_gate_is_refused_with_the_reason(tmp_path: Path) -> None:
    old = gate3().to_dict() | {"version": 1}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    with pytest.raises(GateError, match="version 1") as info:
        CertaintyGate.load(path)
    assert "train-gate" in (info.value.hint or "")


# -- the system -------------------------------------------------------------------------------

QUERY = "Where is it?"
# Unit vectors in 2-d: the query points along x, query + answer along y.
DOCS = {"d1": (1.0, 0.0), "d2": (0.8, 0.6), "d3": (0.0, 1.0), "d4": (0.6, 0.8),
        "d5": (0.28, 0.96), "d6": (0.96, 0.28)}
KEYS = {pid: i for i, pid in enumerate(DOCS, start=1)}


def passage(pid: str) -> Passage:
    return Passage(id=pid, page_id=1, revision_id=1, title=f"T{pid}", section_path=(),
                   text=f"text of {pid}", timestamp=None)


def hit(pid: str, rank: int, score: float = 1.0) -> SearchHit:
    return SearchHit(passage=passage(pid), score=score, rank=rank, key=KEYS[pid],
                     fused_score=score)


class FakeEncoder:
    """Looks texts up in a table of hand-set unit vectors; records what it was asked."""

    def __init__(self, answers: Sequence[str]) -> None:
        self.table = {QUERY: (1.0, 0.0), **{f"{QUERY} {a}": (0.0, 1.0) for a in answers}}
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls.append(list(texts))
        return np.asarray([self.table[t] for t in texts], dtype=np.float32)


class FakeIndex:
    """First search: d1, d2, ... in order; vector search: inner products with DOCS."""

    def __init__(self, encoder: FakeEncoder) -> None:
        self.embedder = encoder
        self.searches: list[tuple[str, int, str]] = []
        self.vector_searches: list[tuple[list[float], list[int]]] = []

    def search(self, query: str, k: int = 5, *, method: Any = "hybrid") -> list[SearchHit]:
        self.searches.append((query, k, method))
        return [hit(p, i) for i, p in enumerate(DOCS, start=1)][:k]

    def search_vector(self, vector: Any, k: int = 5, *, exclude: Any = ()) -> list[SearchHit]:
        self.vector_searches.append(([float(v) for v in vector], sorted(exclude)))
        scored = sorted(((float(np.dot(vector, v)), p) for p, v in DOCS.items()
                         if KEYS[p] not in set(exclude)), key=lambda t: -t[0])
        return [hit(p, i, s) for i, (s, p) in enumerate(scored[:k], start=1)]


class FakeGate:
    """P(reliable) is the first feature, P(misleading) the rest; the temperature divides
    log-probabilities, as for a softmax over logits."""

    def probabilities(self, features: FeatureVector, *,
                      temperature: float = 1.0) -> dict[str, float]:
        p = features.values[0]
        r, m = p ** (1 / temperature), (1 - p) ** (1 / temperature)
        return {"reliable": r / (r + m), "misleading": m / (r + m), "uncertain": 0.0}


def doc_in(messages: Sequence[Message]) -> str:
    found = [d for d in DOCS if f"text of {d}" in last_user(messages)]
    assert len(found) == 1, "each gate prompt holds exactly one document"
    return found[0]


def task(kind: str = "qa") -> Task:
    sample = Sample(id="2015-06-30:x-qa-001", input=QUERY, targets=("Marseille",),
                    metadata={"type": "changed", "kind": kind})
    return Task(sample=sample, template="qa", messages=(Message.user(f"Q: {QUERY}"),),
                query=QUERY, max_tokens=32)


def build(answers: list[str], p_reliable: dict[str, float], **options: Any
          ) -> tuple[RiLMSystem, ScriptedBackend, FakeIndex]:
    def features_of(messages: Sequence[Message], answer: str) -> list[float]:
        assert answer == "", "the gate reads the prompt's state, before any answer"
        return [p_reliable[doc_in(messages)]]

    backend = ScriptedBackend(answers, features=features_of, model_id="fake")
    index = FakeIndex(FakeEncoder(answers))
    system = RiLMSystem(LLM(backend), lambda _t: FakeGate(), lambda _task: index, k=2,
                        **options)
    return system, backend, index


def last_user(messages: Sequence[Message]) -> str:
    return [m for m in messages if m.role == "user"][-1].content


async def test_the_gate_picks_the_document_and_a_reliable_verdict_is_adopted() -> None:
    system, backend, index = build(["Paris"], {"d1": 0.2, "d2": 0.9})
    output = await system.respond(task())
    assert output.text == "Paris"
    assert index.searches == [(QUERY, 2, "dense")] and index.vector_searches == []
    # Eq. 1: one state per (query, document) prompt; d2 has the higher P(reliable)
    assert [doc_in(m) for m, _ in backend.feature_requests] == ["d1", "d2"]
    assert len(backend.requests) == 1 and doc_in(backend.requests[0].messages) == "d2"
    trace = output.trace
    assert trace["adopted"] is True and trace["chosen"] == "first"
    assert trace["second"] is None and trace["omega"] is None
    assert trace["first"]["chosen"] == 2 and trace["first"]["label"] == "reliable"
    assert [d["id"] for d in trace["first"]["documents"]] == ["d1", "d2"]
    assert [r["id"] for r in trace["retrieved"]] == ["d2"]  # the document answered from
    assert trace["p_reliable"] == pytest.approx(0.9)
    assert trace["messages"] == [m.to_dict() for m in backend.requests[0].messages]


async def test_not_adopted_re_retrieves_the_whole_index_without_the_first_documents() -> None:
    system, backend, index = build(["Lyon", "Marseille"],
                                   {"d1": 0.2, "d2": 0.1, "d4": 0.9, "d6": 0.7})
    output = await system.respond(task())
    trace = output.trace
    # d1 is chosen (0.2 > 0.1); its verdict is misleading (0.8), so no adoption.
    assert trace["adopted"] is False and trace["first"]["label"] == "misleading"
    # Eq. 2 at tau = 2: sqrt(.2) / (sqrt(.2) + sqrt(.8)) = 1 / (1 + 2) = 1/3
    assert trace["omega"] == pytest.approx(1 / 3)
    # Eq. 3 as one vector (2/3, 1/3); d1, d2 excluded (keys 1, 2):
    # d3 1/3, d4 .4 + .2667 = .6667, d5 .1867 + .32 = .5067, d6 .64 + .0933 = .7333
    vector, excluded = index.vector_searches[0]
    assert vector == pytest.approx([2 / 3, 1 / 3]) and excluded == [1, 2]
    assert [r["id"] for r in trace["arr"]["retrieved"]] == ["d6", "d4"]
    assert trace["arr"]["excluded"] == ["d1", "d2"]
    # Table 3's three modes, all recorded: Eq. 2 (as read), the query alone (d6 .96, d4 .6)
    # and the answer always (d3 1, d5 .96)
    assert trace["arr"]["mode"] == "paper" and trace["arr"]["weight"] == pytest.approx(1 / 3)
    assert [r["id"] for r in trace["arr"]["paper"]] == ["d6", "d4"]
    assert [r["id"] for r in trace["arr"]["query"]] == ["d6", "d4"]
    assert [r["id"] for r in trace["arr"]["append"]] == ["d3", "d5"]
    assert index.embedder.calls[0] == [QUERY, f"{QUERY} Lyon"]
    # second gate: d4 (0.9) beats d6 (0.7); 0.9 > 0.2, so the second answer is returned
    assert [doc_in(m) for m, _ in backend.feature_requests] == ["d1", "d2", "d6", "d4"]
    assert doc_in(backend.requests[1].messages) == "d4"
    assert output.text == "Marseille" and trace["chosen"] == "second"
    assert [r["id"] for r in trace["retrieved"]] == ["d4"]
    assert trace["first"]["answer"] == "Lyon" and trace["second"]["answer"] == "Marseille"
    # usage is the sum of both answers (scripted: words of prompt / reply)
    first, second = (sum(len(m.content.split()) for m in r.messages) for r in backend.requests)
    assert output.usage.prompt_tokens == first + second
    assert output.usage.completion_tokens == 2


async def test_a_less_reliable_second_answer_loses_to_the_first() -> None:
    # d1 0.4 (misleading 0.6): omega = sqrt(.4) / (sqrt(.4) + sqrt(.6)) = .4495;
    # vector (.5505, .4495): d4 .3303 + .3596 = .690, d6 .5285 + .1259 = .654 -> d4, d6
    system, _, _ = build(["Lyon", "Nice"], {"d1": 0.4, "d2": 0.1, "d4": 0.3, "d6": 0.35})
    output = await system.respond(task())
    assert output.trace["omega"] == pytest.approx(0.44949, abs=1e-5)
    assert [r["id"] for r in output.trace["arr"]["retrieved"]] == ["d4", "d6"]
    assert output.trace["second"]["label"] == "misleading"
    assert output.trace["second"]["documents"][1]["id"] == "d6"
    assert output.trace["second"]["chosen"] == 2  # d6 0.35 > d4 0.3, still below 0.4
    assert output.text == "Lyon" and output.trace["chosen"] == "first"
    assert [r["id"] for r in output.trace["retrieved"]] == ["d1"]


@pytest.mark.parametrize(("mode", "read", "answer"), [
    ("query", ["d6", "d4"], "Marseille"),  # omega 0: the query's cosines, d4 0.9 wins
    ("append", ["d3", "d5"], "Lyon"),  # omega 1: d3, d5 (0.1, 0.15), below d1's 0.2
])
async def test_the_arr_option_fixes_the_weight_of_the_second_search(
        mode: str, read: list[str], answer: str) -> None:
    system, backend, _ = build(
        ["Lyon", "Marseille"], {"d1": 0.2, "d2": 0.1, "d3": 0.1, "d4": 0.9, "d5": 0.15,
                                "d6": 0.7}, arr=mode)
    output = await system.respond(task())
    trace = output.trace
    weight = {"query": 0.0, "append": 1.0}[mode]
    assert trace["omega"] == pytest.approx(1 / 3)  # Eq. 2 is still recorded
    assert trace["arr"]["mode"] == mode and trace["arr"]["weight"] == weight
    assert [r["id"] for r in trace["arr"]["retrieved"]] == read
    assert [doc_in(m) for m, _ in backend.feature_requests][2:] == read
    assert [r["id"] for r in trace["arr"]["paper"]] == ["d6", "d4"]  # what Eq. 2 would read
    assert output.text == answer
    assert system.describe()["arr"] == mode


async def test_tau_changes_omega() -> None:
    system, _, index = build(["Lyon", "Marseille"],
                             {"d1": 0.2, "d2": 0.1, "d4": 0.9, "d6": 0.7}, tau=1.0)
    output = await system.respond(task())
    assert output.trace["omega"] == pytest.approx(0.2)  # the classifier's own probability
    assert index.vector_searches[0][0] == pytest.approx([0.8, 0.2])


async def test_ralm_best_answers_from_the_gates_document_without_a_verdict() -> None:
    system, backend, index = build(["Lyon"], {"d1": 0.2, "d2": 0.1}, re_retrieve=False,
                                   name="ralm-best")
    output = await system.respond(task())
    assert output.text == "Lyon" and index.vector_searches == []
    assert len(backend.requests) == 1 and doc_in(backend.requests[0].messages) == "d1"
    assert output.trace["adopted"] is False and output.trace["second"] is None
    assert "tau" not in system.describe()


async def test_qa_and_dialogue_have_their_own_gates() -> None:
    qa_gate = FakeGate()
    gates = GatesByKind("rilm", {"qa": qa_gate})
    assert gates(task("qa")) is qa_gate
    with pytest.raises(SystemSetupError, match="no certainty gate for dialogue") as info:
        gates(task("dialogue"))
    assert "dialogue_gate=PATH" in (info.value.hint or "")


def test_options_are_checked() -> None:
    llm = LLM(ScriptedBackend([]))
    for bad, match in (({"k": 0}, "k must"), ({"tau": 0.0}, "tau"),
                       ({"method": "bm26"}, "method"), ({"arr": "always"}, "arr mode")):
        with pytest.raises(SystemSetupError, match=match):
            RiLMSystem(llm, lambda _t: FakeGate(), lambda _t: FakeIndex(FakeEncoder([])),
                       **bad)


def test_arr_vector_is_the_weighted_sum() -> None:
    encoder = FakeEncoder(["Lyon"])
    assert arr_vector(QUERY, "Lyon", 0.25, encoder) == pytest.approx([0.75, 0.25])


@pytest.mark.parametrize("name", ["rilm", "ralm-best"])
def test_the_registered_systems_need_a_gate_of_their_own_model(
    name: str, tmp_path: Path, settings: Settings,
) -> None:
    llm = LLM(ScriptedBackend([], model_id="fake", features=lambda _m, _a: [0.0],
                              feature_dim=1))
    with pytest.raises(SystemSetupError, match="needs a certainty gate") as info:
        load_system(name, llm, settings, {})
    assert "train-gate" in (info.value.hint or "")
    other = tmp_path / "other.json"
    gate3(model="another-model").save(other)
    with pytest.raises(SystemSetupError, match="another-model"):
        load_system(name, llm, settings, {"gate": str(other)})
    mine = tmp_path / "mine.json"
    gate3(model="fake").save(mine)
    described = dict(load_system(name, llm, settings, {"gate": str(mine)}).describe())
    assert described["k"] == 3 and described["method"] == "dense"  # the paper's k
    assert described["gate"].startswith("mine.json@") and len(described["gate"]) == 26
    assert described.get("tau") == (2.0 if name == "rilm" else None)


@pytest.mark.parametrize("name", ["rilm", "ralm-best"])
def test_a_gate_of_another_hidden_size_is_refused_when_it_is_loaded(
    name: str, tmp_path: Path, settings: Settings,
) -> None:
    # The same model id, but features of 5 values: a gate of 1 must not wait for the first
    # sample to fail (nor be computed on): the factory refuses it, naming both sizes.
    backend = ScriptedBackend([], model_id="fake", features=lambda _m, _a: [0.0] * 5,
                              feature_dim=5)
    path = tmp_path / "small.json"
    gate3(model="fake").save(path)
    with pytest.raises(SystemSetupError, match=r"5 values \(the hidden size\), but gate "
                       r".*small\.json was trained on 1") as info:
        load_system(name, LLM(backend), settings, {"gate": str(path)})
    assert "train-gate" in (info.value.hint or "")
    assert backend.feature_requests == []  # refused before any feature was computed
    # A backend that cannot tell its size before a call keeps the check at first use.
    unknown = ScriptedBackend([], model_id="fake", features=lambda _m, _a: [0.0] * 5)
    assert LLM(unknown).feature_dim() is None
    load_system(name, LLM(unknown), settings, {"gate": str(path)})
    assert LLM(ScriptedBackend([], model_id="fake")).feature_dim() == 8  # hashed features


async def test_rilm_on_a_real_hybrid_index(mini_index: Any) -> None:
    """ARR through HybridIndex.search_vector: checked against cosines computed here."""
    query = "Who won the main event of UFC 245?"
    everything = mini_index.search(query, len(mini_index), method="dense")
    assert len(everything) == len(mini_index)

    def features_of(messages: Sequence[Message], answer: str) -> list[float]:
        return [0.2]  # never adopted: misleading 0.8

    backend = ScriptedBackend(["Kamaru Usman", "Colby Covington"], features=features_of,
                              model_id="fake")
    system = RiLMSystem(LLM(backend), lambda _t: FakeGate(), lambda _task: mini_index, k=2)
    sample = Sample(id="s", input=query, metadata={"type": "new", "kind": "qa"})
    output = await system.respond(Task(sample=sample, template="qa",
                                       messages=(Message.user(query),), query=query))
    trace = output.trace
    first_ids = [d["id"] for d in trace["first"]["documents"]]
    assert first_ids == [h.passage.id for h in everything[:2]]  # dense top 2
    omega = trace["omega"]
    assert omega == pytest.approx(1 / 3)
    vectors = mini_index.embedder.encode(
        [query, f"{query} Kamaru Usman"] + [h.passage.indexed_text for h in everything])
    q, qa, docs = vectors[0], vectors[1], vectors[2:]
    scores = (1 - omega) * (docs @ q) + omega * (docs @ qa)
    expected = [everything[i].passage.id for i in np.argsort(-scores)
                if everything[i].passage.id not in first_ids][:2]
    assert [r["id"] for r in trace["arr"]["retrieved"]] == expected
    assert trace["second"]["answer"] == "Colby Covington"
    assert trace["chosen"] == "first"  # both at 0.2: a tie keeps the first
