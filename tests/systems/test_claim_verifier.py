"""The claim-verifier system's options: refused clearly, described fully."""

from __future__ import annotations

from pathlib import Path

import pytest

from freshwiki.config import Settings
from freshwiki.llm import LLM
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.systems import SystemSetupError, load_system


def test_the_options_are_checked_and_described(settings: Settings) -> None:
    llm = LLM(ScriptedBackend([]))
    system = load_system("claim-verifier", llm, settings,
                         {"verifier": "legacy-fast", "today": "2026-11-24"})
    assert system.describe() == {"verifier": "legacy-fast", "today": "2026-11-24"}
    with pytest.raises(SystemSetupError, match="no verifier 'cloze'"):
        load_system("claim-verifier", llm, settings, {"verifier": "cloze"})
    with pytest.raises(SystemSetupError, match="not an ISO date"):
        load_system("claim-verifier", llm, settings, {"today": "24/11/2026"})


async def test_the_probe_verifier_judges_hand_written_claims_end_to_end(
        settings: Settings, tmp_path: Path) -> None:
    from freshwiki.benchmarks.claim_verification import ClaimVerification
    from tests.chat.test_probe import WORDS, scripted_llm, trained_probe

    probe = await trained_probe()
    path = tmp_path / "probe.json"
    probe.save(path)
    leads = {"recent": {"Bridge": "The bridge opened in 1990 and spans the river."}}
    items = [{"id": f"c{i}", "kind": "real-draft", "split": "test", "set": "recent",
              "title": "Bridge", "question": "When did the bridge open?", "label": label,
              "claim": f"The opening date is {WORDS[label]} by the text."}
             for i, label in enumerate(("SUPPORTS", "REFUTES", "NOT ENOUGH INFO"))]
    benchmark = ClaimVerification(items, leads)
    llm = scripted_llm()
    system = load_system("claim-verifier", llm, settings,
                         {"verifier": "probe", "probe": str(path), "today": "2026-11-24"})
    described = system.describe()
    assert described["verifier"] == "probe" and len(described["probe"]) == 16
    for sample, item in zip(benchmark.samples(), items, strict=True):
        output = await system.respond(benchmark.render(sample, "claim"))
        assert output.text == item["label"]
        assert output.trace["rationale"].startswith("probe: ")
        assert output.trace["calls"] == 0  # a hidden-state reading, not a generation
    backend = llm.backend
    assert isinstance(backend, ScriptedBackend) and len(backend.feature_requests) == 3
    [_system_message, user] = backend.feature_requests[0][0]
    assert "The bridge opened in 1990" in user.content
    assert "When did the bridge open?" in user.content


async def test_the_probe_verifier_refuses_another_model_at_setup(
        settings: Settings, tmp_path: Path) -> None:
    from tests.chat.test_probe import scripted_llm, trained_probe

    path = tmp_path / "probe.json"
    (await trained_probe(4)).save(path)
    with pytest.raises(SystemSetupError, match="'other'"):
        load_system("claim-verifier", scripted_llm("other"), settings,
                    {"verifier": "probe", "probe": str(path)})
    with pytest.raises(SystemSetupError, match="no probe file"):
        load_system("claim-verifier", scripted_llm(), settings,
                    {"verifier": "probe", "probe": str(tmp_path / "none.json")})
