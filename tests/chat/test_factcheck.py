"""``check_reply`` (the evaluation's per-claim fact-check): abstentions are not claims.

The replies are the pilot's own (WikiChat Table 1, November 2026): the splitter turned the
grounded chat's "I don't know" into claims judged REFUTES, once into an invented claim.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import pytest

from freshwiki.chat import ChatMessage, check_reply
from freshwiki.chat.factcheck import abstains, only_abstains
from freshwiki.records import Passage
from freshwiki.retrieval import SearchHit
from tests.chat.fakes import js, scripted_llm

TODAY = dt.date(2026, 11, 28)
KOPUA = Passage(id="kopua-0", page_id=1, revision_id=1, title="Kopua vermiculata",
                section_path=(), timestamp=None, text=(
                    "Kopua vermiculata is a clingfish of the family Gobiesocidae, found only "
                    "around Japan."))


async def search(claim: str, time_intent: str) -> Sequence[SearchHit]:
    return [SearchHit(passage=KOPUA, score=1.0, rank=1, key=0, fused_score=1.0)]


@pytest.mark.parametrize("reply", [
    "I don't know: the passages I found (Kopua vermiculata) don't say that, and I'd rather "
    "not guess.",
    "I don't know: none of the Wikipedia passages I found is about “UFC 100” (the closest "
    "were List of current UFC fighters, UFC 269), and I'd rather not guess.",
    "I'm sorry, but I couldn't find any information about that. The passages do not say.",
])
async def test_a_reply_that_only_abstains_has_no_claims_and_costs_no_call(reply: str) -> None:
    # The script would invent a claim, as the 1.5B splitter did; it must not be asked.
    llm, script = scripted_llm({"claims": js({"claims": ["Kopua vermiculata is a plant."]})})
    history = [ChatMessage("user", "What is Kopua vermiculata's scientific name?")]
    assert await check_reply(llm, history, reply, TODAY, search) == []
    assert script.calls == []


async def test_an_abstaining_claim_is_dropped_and_the_factual_one_checked() -> None:
    llm, script = scripted_llm({
        "claims": js({"claims": ["The passages do not say what Kopua vermiculata eats.",
                                 "Kopua vermiculata is found only around Japan."]}),
        "verify": js({"reason": "passage 1 says so", "verdict": "SUPPORTS", "passages": [1]}),
    })
    history = [ChatMessage("user", "What does Kopua vermiculata eat?")]
    reply = ("The passages do not say what it eats. Kopua vermiculata is found only around "
             "Japan [1].")
    checks = await check_reply(llm, history, reply, TODAY, search)
    assert [(c.claim, c.verdict) for c in checks] == [
        ("Kopua vermiculata is found only around Japan.", "SUPPORTS")]
    assert script.stages() == ["claims", "verify"]  # one verification: the dropped one costs none


def test_abstention_needs_the_speaker_or_the_evidence_named() -> None:
    assert abstains("The passages do not say who produced the song [1].")
    assert abstains("I don't know who produced it.")
    # A fact about the world phrased with "does not provide": kept as a claim.
    assert not abstains("The treaty does not provide for a standing army.")
    assert not only_abstains("I don't know who produced it. Her album is Zi [1].")
    assert not only_abstains("")
