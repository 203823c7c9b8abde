"""Stage 7 in full mode: scores and feedback per criterion, then a rewrite that applies them."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from freshwiki.chat import ChatError, ChatMessage, CriterionFeedback, GroundedChat, Reply
from freshwiki.chat.conversations import reply_from_dict
from freshwiki.chat.refine import CRITERIA, SCHEMA, read_feedback
from freshwiki.llm import Message
from freshwiki.records import Passage
from tests.chat.fakes import FakeIndex, feedback, js, scripted_llm

TODAY = "2024-06-01"
KAT_Q = "When did KickassTorrents go offline?"
COMPOSED = "KickassTorrents went offline on 20 July 2016 [1]. It was a torrent site [1]."


def kat_script(**stage7: object) -> dict[str, object]:
    """A full-mode turn whose composer writes ``COMPOSED``; stage 7 as given."""
    return {
        "query": js({"search": True, "query": "KickassTorrents", "time": "none", "year": 0}),
        "facts": lambda m: js({"facts": ["KickassTorrents went offline on 20 July 2016."]
                               if 'title="KickassTorrents"' in m[-1].content else []}),
        "draft": "", "compose": COMPOSED, **stage7,
    }


async def full_turn(script: dict[str, object], *, passages: list[Passage],
                    earlier: Sequence[ChatMessage] = (), **options: object
                    ) -> tuple[Reply, list[str], dict[str, list[Sequence[Message]]]]:
    llm, calls = scripted_llm(script)  # type: ignore[arg-type]
    chat = GroundedChat(llm, FakeIndex(passages), mode="wikichat", today=TODAY,
                        **options)  # type: ignore[arg-type]
    reply = await chat.respond([*earlier, ChatMessage("user", KAT_Q)])
    by_stage: dict[str, list[Sequence[Message]]] = {}
    for call in calls.calls:
        by_stage.setdefault(call.stage, []).append(call.messages)
    return reply, [s.stage for s in reply.trace.stages], by_stage


async def test_the_rewrite_applies_the_feedback_and_both_are_traced(
    chat_passages: list[Passage],
) -> None:
    scores = json.dumps({
        "relevant": {"feedback": "The torrent-site sentence was not asked for.", "score": 60},
        "natural": {"feedback": "Reads well.", "score": 100},
        "non_repetitive": {"feedback": "No repeats.", "score": 100},
        "temporally_correct": {"feedback": "Past tense for a 2016 event.", "score": 100},
    })
    reply, stages, calls = await full_turn(kat_script(**{
        "refine-feedback": scores,
        "refine": "KickassTorrents went offline on 20 July 2016 [1].",
    }), passages=chat_passages)

    assert reply.text == "KickassTorrents went offline on 20 July 2016 [1]."
    # Scores, then the rewrite, then stage 8 as before.
    assert stages[-4:] == ["compose", "refine-feedback", "refine", "check"]
    refinement = reply.trace.refinement
    assert refinement is not None
    assert (refinement.way, refinement.rewritten, refinement.note) == ("feedback", True, "")
    assert [(f.criterion, f.score) for f in refinement.feedback] == [
        ("relevant", 60), ("natural", 100), ("non_repetitive", 100), ("temporally_correct", 100)]
    assert refinement.feedback[0].feedback == "The torrent-site sentence was not asked for."
    # Both versions are kept for the paper's Table 14 (BLEU of the refined against the
    # composed reply).
    assert (refinement.composed, refinement.refined) == (
        COMPOSED, "KickassTorrents went offline on 20 July 2016 [1].")

    [scoring] = calls["refine-feedback"]
    [rewrite] = calls["refine"]
    # The rewrite reads the feedback, line by line with its score, under the composed reply.
    assert "<reply>\n" + COMPOSED + "\n</reply>" in rewrite[-1].content
    assert ("- relevant: The torrent-site sentence was not asked for. 60/100"
            in rewrite[-1].content)
    assert "- temporally_correct: Past tense for a 2016 event. 100/100" in rewrite[-1].content
    # Same system prompt and the same text up to the reply: one prefix for llama.cpp.
    assert scoring[0].content == rewrite[0].content
    prefix = scoring[-1].content.split("</reply>")[0]
    assert rewrite[-1].content.startswith(prefix + "</reply>")
    assert "Today's date: 2024-06-01" in prefix
    # The scoring call was schema-constrained JSON; the stored trace keeps everything.
    [record] = [s for s in reply.trace.stages if s.stage == "refine-feedback"]
    assert json.loads(record.output)["relevant"]["score"] == 60
    assert reply_from_dict(reply.as_dict()).trace.refinement == refinement


async def test_a_full_score_keeps_the_composed_reply_without_a_rewrite_call(
    chat_passages: list[Passage],
) -> None:
    reply, stages, calls = await full_turn(
        kat_script(**{"refine-feedback": feedback(), "refine": "SHOULD NOT BE CALLED."}),
        passages=chat_passages)
    assert reply.text == COMPOSED
    assert "refine" not in calls and stages[-3:] == ["compose", "refine-feedback", "check"]
    refinement = reply.trace.refinement
    assert refinement is not None and not refinement.rewritten
    assert refinement.note == "every criterion scored 100: composed reply kept"
    assert {f.score for f in refinement.feedback} == {100}
    assert refinement.composed == refinement.refined == COMPOSED


async def test_unusable_feedback_keeps_the_composed_reply(chat_passages: list[Passage]) -> None:
    # Not JSON, and not after the client's one repair round either.
    reply, stages, calls = await full_turn(
        kat_script(**{"refine-feedback": "Looks good to me!", "refine": "NOT CALLED."}),
        passages=chat_passages)
    assert reply.text == COMPOSED and "refine" not in calls
    assert stages[-3:] == ["compose", "refine-feedback", "check"]
    [record] = [s for s in reply.trace.stages if s.stage == "refine-feedback"]
    assert record.error  # the degraded call is visible in the trace
    refinement = reply.trace.refinement
    assert refinement is not None
    assert (refinement.feedback, refinement.rewritten) == ((), False)
    assert refinement.note == "feedback unusable: composed reply kept"


async def test_the_rewrite_still_passes_the_guard(chat_passages: list[Passage]) -> None:
    # The rewrite repeats, word for word, what the assistant said a turn earlier: the sentence
    # guard withholds that sentence, as it did for the plain refiner's text (stage 8 would
    # not: the sentence is true and states no value).
    earlier = [ChatMessage("user", "What was KickassTorrents?"),
               ChatMessage("assistant", "It was a website for torrent files [1].")]
    reply, stages, _ = await full_turn(kat_script(**{
        "refine-feedback": feedback(natural=70),
        "refine": "KickassTorrents went offline on 20 July 2016 [1]. It was a website for "
                  "torrent files [1].",
    }), passages=chat_passages, earlier=earlier)
    assert reply.text == "KickassTorrents went offline on 20 July 2016 [1]."
    assert reply.trace.removed == ("It was a website for torrent files [1].",)
    assert stages[-1] == "check"


async def test_reply_tags_copied_from_the_prompt_never_reach_the_user(
    chat_passages: list[Passage],
) -> None:
    # Qwen2.5-Coder-1.5B returned its rewrite still wrapped in the prompt's <reply> tags.
    reply, _, _ = await full_turn(kat_script(**{
        "refine-feedback": feedback(natural=70),
        "refine": "<reply>\nKickassTorrents went offline on 20 July 2016 [1].\n</reply>",
    }), passages=chat_passages)
    assert reply.text == "KickassTorrents went offline on 20 July 2016 [1]."
    assert reply.trace.refinement is not None and reply.trace.refinement.rewritten
    # A rewrite that only copies the reply back is not counted as one.
    copied, _, _ = await full_turn(kat_script(**{
        "refine-feedback": feedback(natural=70), "refine": f"<reply>{COMPOSED}</reply>",
    }), passages=chat_passages)
    assert copied.text == COMPOSED
    refinement = copied.trace.refinement
    assert refinement is not None and not refinement.rewritten
    assert refinement.note == "rewrite identical to the composed reply"


async def test_plain_refine_is_one_call_without_scores(chat_passages: list[Passage]) -> None:
    reply, stages, calls = await full_turn(
        kat_script(refine="KickassTorrents went offline on 20 July 2016 [1]."),
        passages=chat_passages, refine="plain")
    assert reply.text == "KickassTorrents went offline on 20 July 2016 [1]."
    assert stages[-3:] == ["compose", "refine", "check"] and "refine-feedback" not in calls
    [plain] = calls["refine"]
    assert plain[0].content.startswith("You edit an assistant's reply")
    refinement = reply.trace.refinement
    assert refinement is not None
    assert (refinement.way, refinement.feedback, refinement.rewritten) == ("plain", (), True)

def test_an_unknown_refine_way_is_refused() -> None:
    llm, _ = scripted_llm({})
    with pytest.raises(ChatError, match="unknown refine way 'fancy'") as caught:
        GroundedChat(llm, FakeIndex([]), mode="wikichat", refine="fancy")  # type: ignore[arg-type]
    assert caught.value.hint == "use 'feedback' or 'plain'."


def test_feedback_json_is_read_per_criterion_and_clamped() -> None:
    data = {c: {"feedback": "  two\nlines ", "score": 100} for c in CRITERIA}
    data["natural"]["score"] = 140  # a server that ignored the schema's maximum
    data["relevant"]["score"] = -5
    assert read_feedback(data) == (
        CriterionFeedback("relevant", 0, "two lines"),
        CriterionFeedback("natural", 100, "two lines"),
        CriterionFeedback("non_repetitive", 100, "two lines"),
        CriterionFeedback("temporally_correct", 100, "two lines"),
    )
    missing = {c: data[c] for c in CRITERIA[:3]}
    assert read_feedback(missing) is None
    assert read_feedback({**data, "natural": {"feedback": "x", "score": "high"}}) is None
    # The schema asks for every criterion, feedback first (reasoning before the number).
    assert SCHEMA["required"] == list(CRITERIA)
    assert list(SCHEMA["properties"]["relevant"]["properties"]) == ["feedback", "score"]
