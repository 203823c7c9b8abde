"""The claim-verifier system: options refused clearly, the predicate and checked verifiers."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest

from freshwiki.benchmarks.claim_verification import claim_verification_benchmark
from freshwiki.chat.facts import LexicalScorer
from freshwiki.config import Settings
from freshwiki.llm import LLM, Message
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.seams import Output
from freshwiki.systems import SystemSetupError, load_system
from freshwiki.systems.claim_verifier import ClaimVerifierSystem

if TYPE_CHECKING:
    from freshwiki.chat.facts import EmbeddingScorer


def test_the_options_are_checked_and_described(settings: Settings) -> None:
    llm = LLM(ScriptedBackend([]))
    system = load_system("claim-verifier", llm, settings,
                         {"verifier": "legacy-fast", "today": "2026-11-24"})
    assert system.describe() == {"verifier": "legacy-fast", "today": "2026-11-24"}
    with pytest.raises(SystemSetupError, match="no verifier 'cloze'"):
        load_system("claim-verifier", llm, settings, {"verifier": "cloze"})
    with pytest.raises(SystemSetupError, match="not an ISO date"):
        load_system("claim-verifier", llm, settings, {"today": "24/11/2026"})


# -- the predicate and checked verifiers on rows in the external format ------------------------

FIXTURE = Path(__file__).parents[1] / "benchmarks" / "claim_verification" / "external_claims.jsonl"


def _answers(*values: str) -> Callable[[Sequence[Message]], str]:
    """A scripted reading call that fills its blanks with ``values`` (one per line)."""
    def reply(messages: Sequence[Message]) -> str:
        blanks = len(re.findall(r"(?m)^\d+\. .*___", messages[-1].content))
        return json.dumps({"answers": list(values)[:blanks] + [""] * (blanks - len(values))})
    return reply


async def _verdict(settings: Settings, sample_id: str, verifier: str,
                   *script: Callable[[Sequence[Message]], str]) -> Output:
    benchmark = claim_verification_benchmark(
        settings, {"external_path": str(FIXTURE), "split": "all", "ids": sample_id})
    (sample,) = benchmark.samples()
    llm = LLM(ScriptedBackend(list(script)))
    # The word-overlap scorer stands in for the embedder (the system is typed for that one).
    system = ClaimVerifierSystem(llm, verifier=verifier, today=dt.date(2026, 11, 24),
                                 scorer=cast("EmbeddingScorer", LexicalScorer()))
    return await system.respond(benchmark.render(sample, "claim"))


async def test_checked_supports_a_claim_released_as_written(settings: Settings) -> None:
    output = await _verdict(settings, "fixture:derny-built", "checked", _answers("1938"))
    assert output.text == "SUPPORTS" and output.trace["calls"] == 1
    assert "released" in output.trace["rationale"]


async def test_checked_refutes_a_claim_the_reading_corrects(settings: Settings) -> None:
    # 1951 is in no passage: the reading is asked for it and gives the passage's 1938.
    output = await _verdict(settings, "fixture:derny-wrong-year", "checked", _answers("1938"))
    assert output.text == "REFUTES"
    assert output.trace["correction"] == "The Derny was first built in 1938."


async def test_checked_says_not_enough_info_when_dropped_for_want_of_a_statement(
    settings: Settings,
) -> None:
    output = await _verdict(settings, "fixture:derny-wrong-year", "checked", _answers(""))
    assert output.text == "NOT ENOUGH INFO" and "dropped" in output.trace["rationale"]


async def test_checked_takes_a_copied_sentence_without_a_call(settings: Settings) -> None:
    output = await _verdict(settings, "fixture:liverwort-family", "checked")
    assert output.text == "SUPPORTS" and output.trace["calls"] == 0


async def test_predicate_never_calls_the_model_and_never_refutes(settings: Settings) -> None:
    supported = await _verdict(settings, "fixture:derny-built", "predicate")
    assert supported.text == "SUPPORTS" and supported.trace["calls"] == 0
    wrong = await _verdict(settings, "fixture:derny-wrong-year", "predicate")
    assert wrong.text == "NOT ENOUGH INFO" and "1951" in wrong.trace["rationale"]


async def test_cloze_fast_reads_a_claim_with_no_question(settings: Settings) -> None:
    # No question: every value of the claim is a blank, so the year is read and compared.
    output = await _verdict(settings, "fixture:derny-wrong-year", "cloze-fast",
                            _answers("Derny", "1938"))
    assert output.text == "REFUTES" and output.trace["calls"] == 1
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
