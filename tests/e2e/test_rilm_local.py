"""RiLM features from a real local model: llama.cpp hidden states, and a tiny gate on them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from freshwiki.config import load_settings
from freshwiki.llm import Message, open_llm
from freshwiki.systems.rilm import CertaintyGate, train_gate

pytestmark = pytest.mark.e2e

SMOLLM2_HIDDEN = 576  # SmolLM2-135M's hidden size (its config.json: "hidden_size": 576)


async def test_hidden_state_features_of_smollm2(
    smollm2_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FRESHWIKI_N_THREADS", "1")
    settings = load_settings({"n_ctx": 1024}).settings
    llm = open_llm("local:smollm2-135m", settings=settings, cache=False)
    assert llm.feature_kind == "hidden-state"
    question = [Message.system("Answer with one word."),
                Message.user("What is the capital of France?")]
    answer = await llm.chat(question, max_tokens=8)

    right = await llm.features(question, "Paris")
    wrong = await llm.features(question, "Berlin")
    again = await llm.features(question, "Paris")
    assert right.dim == wrong.dim == SMOLLM2_HIDDEN
    assert right.kind == "hidden-state" and right.model == llm.backend.model_id
    assert np.all(np.isfinite(right.values))
    assert right.values != wrong.values  # a different answer, a different state
    assert right.values == again.values  # and the same answer, the same state
    # The prompt is tokenised exactly as generation tokenised it (same chat template).
    generated = await llm.features(question, answer.text)
    assert generated.detail["prompt_tokens"] == answer.usage.prompt_tokens
    assert right.detail["answer_tokens"] >= 1

    # A tiny gate: three right and three wrong answers to three questions, which it must at
    # least fit (each training answer classified as labelled).
    questions = [("What is the capital of France?", "Paris", "Berlin"),
                 ("What is the capital of Italy?", "Rome", "Madrid"),
                 ("What is the capital of Japan?", "Tokyo", "Cairo")]
    features, labels = [], []
    for q, good, bad in questions:
        messages = [Message.system("Answer with one word."), Message.user(q)]
        features += [await llm.features(messages, good), await llm.features(messages, bad)]
        labels += ["reliable", "misleading"]
    gate, report = train_gate(features, labels, holdout=0.0, seed=0)
    assert gate.dim == SMOLLM2_HIDDEN and report.n_train == 6
    x = np.asarray([f.values for f in features])
    assert gate.predict(x) == labels
    path = tmp_path / "gate.json"
    gate.save(path)
    loaded = CertaintyGate.load(path)
    loaded.check(llm.feature_kind, llm.backend.model_id)
    assert loaded.probabilities(features[0])["reliable"] == pytest.approx(
        gate.probabilities(features[0])["reliable"])
    await llm.aclose()


def test_a_gate_of_another_hidden_size_is_refused_at_load_with_smollm2(
    smollm2_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The real backend reports its hidden size before any call, so a gate file that claims
    SmolLM2's identity but 896 features (Qwen2.5-0.5B's size) stops the run at load."""
    from freshwiki.systems import SystemSetupError, load_system

    monkeypatch.setenv("FRESHWIKI_N_THREADS", "1")
    settings = load_settings({"n_ctx": 512}).settings
    llm = open_llm("local:smollm2-135m", settings=settings, cache=False)
    assert llm.feature_dim() == SMOLLM2_HIDDEN
    wide = CertaintyGate(feature_kind="hidden-state", model=llm.backend.model_id,
                         classes=("reliable", "uncertain"), mean=(0.0,) * 896,
                         scale=(1.0,) * 896, coef=((0.0,) * 896,), intercept=(0.0,))
    path = tmp_path / "wide.json"
    wide.save(path)
    with pytest.raises(SystemSetupError, match=r"576 values .* trained on 896"):
        load_system("rilm", llm, settings, {"gate": str(path)})
    other = CertaintyGate(**{**wide.__dict__, "model": "qwen2.5-coder-0.5b@1d9614638d18"})
    other.save(tmp_path / "other.json")
    with pytest.raises(SystemSetupError, match=r"qwen2\.5-coder-0\.5b"):
        load_system("rilm", llm, settings, {"gate": str(tmp_path / "other.json")})


async def test_rilm_end_to_end_with_smollm2_a_real_index_and_a_trained_gate(
    smollm2_path: Path, shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GrowOVER §4 through the real parts: llama.cpp prompt states per (question, document),
    a gate trained on them, the real embedder and dense index for ARR."""
    import json

    from freshwiki.benchmarks import Sample, Task
    from freshwiki.retrieval import Embedder, HybridIndex
    from freshwiki.systems.rag import context_messages
    from freshwiki.systems.rilm import RiLMSystem
    from tests.retrieval.data import passages_of

    monkeypatch.setenv("FRESHWIKI_N_THREADS", "1")
    settings = load_settings({"n_ctx": 2048}).settings
    llm = open_llm("local:smollm2-135m", settings=settings, cache=False)
    leads = json.loads((shared_data / "wikipedia/topics/head_articles_en.json")
                       .read_text(encoding="utf-8"))
    titles = ("UFC 244", "UFC 245", "UFC 246", "Rat Terrier", "Pareto chart", "Call girl")
    embedder = Embedder(tmp_path / "vectors.sqlite")
    index = HybridIndex.build(passages_of({t: leads[t] for t in titles}), tmp_path / "idx",
                              embedder=embedder)
    try:
        question = "Who won the main event of UFC 245?"
        ask = (Message.user(f"Answer briefly. {question}"),)
        hits = index.search(question, len(index), method="dense")
        # A gate trained on the UFC 245 lead (reliable) against the unrelated leads: its
        # classes are only what this test needs, a real classifier on real prompt states.
        features, labels = [], []
        for h in hits:
            state = await llm.features(context_messages(ask, [h]), "")
            assert state.detail["answer_tokens"] == 0
            features.append(state)
            labels.append("reliable" if h.passage.title == "UFC 245" else "uncertain")
        gate, _ = train_gate(features, labels, holdout=0.0, seed=0)
        system = RiLMSystem(llm, lambda _t: gate, lambda _t: index, k=2)
        sample = Sample(id="s", input=question, metadata={"type": "new", "kind": "qa"})
        output = await system.respond(Task(sample=sample, template="qa", messages=ask,
                                           query=question, max_tokens=16))
        trace = output.trace
        first = trace["first"]
        assert [d["id"] for d in first["documents"]] == [h.passage.id for h in hits[:2]]
        chosen = first["documents"][first["chosen"] - 1]
        assert chosen["probabilities"]["reliable"] == max(
            d["probabilities"]["reliable"] for d in first["documents"])
        assert trace["adopted"] == (first["label"] == "reliable")
        if trace["adopted"]:
            assert trace["second"] is None and trace["retrieved"][0]["id"] == chosen["id"]
        else:
            assert 0.0 <= trace["omega"] <= 1.0
            assert not set(trace["arr"]["excluded"]) & {
                r["id"] for r in trace["arr"]["retrieved"]}
        assert output.text.strip()
    finally:
        index.close()
        embedder.close()
        await llm.aclose()
