"""The claim-verifier system's options: refused clearly, described fully."""

from __future__ import annotations

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
