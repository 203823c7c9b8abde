"""The verifier probe: its file, its refusals, and its verdicts on scripted features."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from freshwiki.chat import Evidence
from freshwiki.chat.probe import (
    LABELS,
    ProbeError,
    ProbeMismatchError,
    VerifierProbe,
    probe_check,
    probe_features,
    probe_messages,
    train_probe,
)
from freshwiki.llm import LLM, FeatureVector, Message, hashed_features
from freshwiki.llm.backends.scripted import ScriptedBackend

WORDS = {"SUPPORTS": "stated", "REFUTES": "contradicted", "NOT ENOUGH INFO": "unrelated"}


def scripted_state(messages: Sequence[Message], answer: str) -> list[float]:
    """Stand-in hidden state: which cue word the claim holds, plus hashed noise."""
    claim = messages[-1].content.split("Claim:")[-1]
    cues = [1.0 if WORDS[label] in claim else 0.0 for label in LABELS]
    return cues + [0.3 * v for v in hashed_features(messages, answer, dim=5)]


def scripted_llm(model_id: str = "scripted") -> LLM:
    return LLM(ScriptedBackend([], model_id=model_id, features=scripted_state, feature_dim=8))


async def trained_probe(n: int = 8) -> VerifierProbe:
    llm = scripted_llm()
    vectors, labels = [], []
    for label in LABELS:
        for i in range(n):
            vectors.append(await probe_features(
                llm, f"Claim {i} is {WORDS[label]} here.", f"Evidence number {i}.",
                question="What is it?" if i % 2 else None))
            labels.append(label)
    return train_probe(vectors, labels, c_grid=(0.1, 1.0), folds=3, extra={"set": "toy"})


def test_the_prompt_holds_evidence_then_question_then_claim() -> None:
    [system, user] = probe_messages("It opened in 1990.", "The bridge opened in 1990.",
                                    question="When did it open?", title="Bridge")
    assert system.role == "system" and "data" in system.content
    text = user.content
    assert text.index("The bridge opened") < text.index("When did it open?") < text.index(
        "It opened in 1990.")
    assert 'title="Bridge"' in text
    assert "Question:" not in probe_messages("c", "e")[1].content
    # evidence cannot close its own data block
    assert "</evidence>" not in probe_messages("c", "x </evidence> y")[1].content.split(
        "<evidence>")[1].split("\n</evidence>")[0]


async def test_a_tiny_probe_predicts_each_label_from_scripted_features() -> None:
    probe = await trained_probe()
    assert probe.feature_kind == "scripted" and probe.model == "scripted" and probe.dim == 8
    assert probe.training["c"] in (0.1, 1.0) and probe.training["cv"]["folds"] == 3
    assert probe.training["train_counts"] == dict.fromkeys(LABELS, 8)
    llm = scripted_llm()
    for label in LABELS:
        vector = await probe_features(llm, f"A new claim, {WORDS[label]}.", "Other evidence.")
        verdict, probs = probe.verdict(vector)
        assert verdict == label and abs(sum(probs.values()) - 1.0) < 1e-9


async def test_the_file_round_trips_and_damage_is_refused(tmp_path: Path) -> None:
    probe = await trained_probe(4)
    path = tmp_path / "probe.json"
    probe.save(path)
    again = VerifierProbe.load(path)
    assert again == probe
    data = json.loads(path.read_text())
    assert data["format"] == "freshwiki-verifier-probe" and data["dim"] == 8
    for change, message in (
        ({"format": "other"}, "not a freshwiki verifier probe"),
        ({"version": 99}, "version 99"),
        ({"dim": 7}, "damaged"),
        ({"coef": [[1.0]]}, "damaged"),
        ({"prompt_sha256": "0" * 64}, "another wording"),
        ({"classes": ["SUPPORTS", "MAYBE", "REFUTES"]}, "damaged"),
    ):
        with pytest.raises(ProbeError, match=message):
            VerifierProbe.from_dict({**data, **change})
    with pytest.raises(ProbeError, match="no probe file"):
        VerifierProbe.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ProbeError, match="not a readable probe"):
        VerifierProbe.load(tmp_path / "bad.json")


async def test_features_of_another_kind_model_or_size_are_refused() -> None:
    probe = await trained_probe(4)
    good = await probe_features(scripted_llm(), "c stated", "e")
    for vector, message in (
        (FeatureVector(good.values, kind="hidden-state", model="scripted"), "hidden-state"),
        (FeatureVector(good.values, kind="scripted", model="other"), "'other'"),
        (FeatureVector(good.values[:4], kind="scripted", model="scripted"), "4 values"),
    ):
        with pytest.raises(ProbeMismatchError, match=message):
            probe.probabilities(vector)


async def test_train_refuses_what_it_cannot_learn_from() -> None:
    vector = await probe_features(scripted_llm(), "c", "e")
    with pytest.raises(ProbeError, match="no labelled rows"):
        train_probe([], [])
    with pytest.raises(ProbeError, match="unknown labels"):
        train_probe([vector], ["MAYBE"])
    with pytest.raises(ProbeError, match="two labels"):
        train_probe([vector, vector], ["SUPPORTS", "SUPPORTS"])
    other = FeatureVector(vector.values, kind="scripted", model="other")
    with pytest.raises(ProbeError, match="different kinds"):
        train_probe([vector, other], ["SUPPORTS", "REFUTES"])


async def test_probe_check_gives_a_claim_check_with_its_probabilities() -> None:
    probe = await trained_probe()
    passage = Evidence(passage_id="p", title="T", section=(), text="Some evidence.")
    check = await probe_check(scripted_llm(), probe, "This is contradicted.", passage,
                              question="Q?")
    assert check.verdict == "REFUTES" and check.evidence == (passage,)
    assert check.rationale.startswith("probe: P(SUPPORTS)")
