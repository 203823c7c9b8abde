"""Generation and update on constructed snapshot pairs whose alignment is known by hand."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import pytest

from freshwiki.benchmarks.growover import (
    DialogueInstance,
    Evidence,
    Generator,
    PageBuilder,
    QAInstance,
    Turn,
)
from freshwiki.changes.snapshots import SnapshotMismatchError
from freshwiki.llm import LLM, Message
from freshwiki.llm.backends.scripted import ScriptedBackend
from tests.benchmarks.growover.helpers import Encoder, answering, shown_sentences, snap

OLD = snap([["Alpha is a town in Spain.", "It has 100 people."],
            ["The mayor is Ana.", "The river is called Beta."]])
NEW = snap([["Founded in 1200, Alpha grew slowly.", "Alpha is a town in Spain.",
             "It has 120 people."],
            ["The mayor is Ana.", "A bridge opened in 1990.", "The bridge is 40 metres long."]],
           revision=2)
# By hand: old 0 = new 1 and old 2 = new 3 (identical); old 1 -> new 2 changed (number
# replaced, similarity 0.95); old 3 deleted; new 0, 4, 5 new (unrelated to everything).
PAIRS = [("It has 100 people.", "It has 120 people.", 0.95)]


def builder(steps: Sequence[object], kinds: Sequence[str] = ("qa", "dialogue")) -> PageBuilder:
    llm = LLM(ScriptedBackend(list(steps)))  # type: ignore[arg-type]
    return PageBuilder(Generator(llm), Encoder(pairs=PAIRS), kinds=kinds)  # type: ignore[arg-type]


def old_instances() -> list[QAInstance | DialogueInstance]:
    def qa(n: int, ev: list[int]) -> QAInstance:
        return QAInstance(f"7-s00-qa-00{n}", 7, "Alpha", "initial", "2024-01", "2024-01-01",
                          f"q{n}?", f"a{n}", Evidence.of(OLD, ev), generated_as="initial")

    dialogue = DialogueInstance(
        "7-s00-dialogue-001", 7, "Alpha", "initial", "2024-01", "2024-01-01",
        tuple(Turn(k + 1, f"u{k}", f"e{k}", Evidence.of(OLD, [k])) for k in range(3)),
        generated_as="initial")
    return [qa(1, [0]), qa(2, [1]), qa(3, [2, 3]), dialogue]


def test_update_keeps_reindexes_drops_and_generates() -> None:
    b = builder([answering()] * 20)
    result = asyncio.run(b.update(OLD, old_instances(), NEW, "2024-02-29", 1))
    assert result.alignment is not None
    assert result.alignment.to_growover() == {"S": {0: 1, 2: 3}, "C": [[1, 2]], "N": [0, 4, 5],
                                              "D": [3]}
    by_id = {i.id: i for i in result.instances}
    kept = by_id["7-s00-qa-001"]
    assert isinstance(kept, QAInstance)
    assert (kept.type, kept.evidence.sentences, kept.evidence.texts, kept.snapshot,
            kept.month, kept.generated_as) == (
        "unchanged", (1,), ("Alpha is a town in Spain.",), "2024-02-29", "2024-01", "initial")
    assert "7-s00-qa-002" not in by_id and "7-s00-qa-003" not in by_id
    reasons = {(s.instance, s.reason) for s in result.skips if s.stage == "carry"}
    assert ("7-s00-qa-002", "evidence sentence 1 was changed") in reasons
    assert ("7-s00-qa-003", "evidence sentence 3 was deleted") in reasons
    # The dialogue keeps turns 1 and 3 (re-indexed 0 -> 1, 2 -> 3) and drops turn 2.
    dialogue = by_id["7-s00-dialogue-001"]
    assert isinstance(dialogue, DialogueInstance) and dialogue.type == "unchanged"
    assert [(t.number, t.evidence.sentences) for t in dialogue.turns] == [(1, (1,)), (3, (3,))]
    assert ("7-s00-dialogue-001", "turn 2 dropped: evidence sentence 1 was changed") in reasons

    changed = [i for i in result.instances if i.type == "changed" and isinstance(i, QAInstance)]
    assert len(changed) == 1
    assert (changed[0].answer, changed[0].old_answer, changed[0].evidence.sentences,
            changed[0].old_evidence.sentences if changed[0].old_evidence else None) == (
        "120", "100", (2,), (1,))
    # New runs: [0] (paragraph 0) and [4, 5] (paragraph 1): one QA and one dialogue each.
    new_qa = [i for i in result.instances if i.type == "new" and isinstance(i, QAInstance)]
    assert sorted(i.evidence.sentences for i in new_qa) == [(0,), (4,)]
    assert [i.answer for i in sorted(new_qa, key=lambda i: i.evidence.sentences)] == [
        "1200", "1990"]
    new_dialogues = [i for i in result.instances
                     if i.type == "new" and isinstance(i, DialogueInstance)]
    assert len(new_dialogues) == 2
    assert all(t.type == "new" for d in new_dialogues for t in d.turns)
    # The changed sentence (new 2) gets its own dialogue (sentence 1 between it and new
    # sentence 0 is unchanged, so they are two runs); its turns rest on it: Changed.
    changed_dialogues = [i for i in result.instances
                         if i.type == "changed" and isinstance(i, DialogueInstance)]
    assert len(changed_dialogues) == 1
    assert [(t.type, t.evidence.sentences) for t in changed_dialogues[0].turns] == [
        ("changed", (2,))] * len(changed_dialogues[0].turns)
    ids = [i.id for i in result.instances]
    assert len(ids) == len(set(ids)) and "7-s01-qa-001" in ids


def test_a_group_of_new_sentences_is_shown_whole_and_at_most_six() -> None:
    shown: list[list[str]] = []

    def record(messages: Sequence[Message]) -> str:
        shown.append(shown_sentences(messages))
        return answering()(messages)

    old = snap([["Keep 1 here."]])
    new = snap([["Keep 1 here."] + [f"Fact {k} is {k}." for k in range(8)]], revision=2)
    b = builder([record] * 10, kinds=("qa",))
    result = asyncio.run(b.update(old, [], new, "2024-02-01", 1))
    assert sorted(len(s) for s in shown) == [2, 6]
    assert sorted(i.evidence.sentences for i in result.instances) == [(1,), (7,)]


def test_out_of_range_evidence_is_reasked_once_then_skipped_with_its_reason() -> None:
    bad = json.dumps({"question": "Q?", "answer": "100", "evidence_start": 5,
                      "evidence_end": 5})
    s = snap([["Alpha is a town.", "It has 100 people. " + "x" * 290]])
    b = builder([bad, bad], kinds=("qa",))
    result = asyncio.run(b.initial(s, "2024-01-01", 0))
    assert result.instances == []
    (skip,) = result.skips
    assert skip.stage == "generate"
    assert skip.reason == "qa: evidence 5-5 is outside the sentences shown (1-2)"
    assert json.loads(skip.detail["raw"])["evidence_start"] == 5
    assert b.generator.calls == 2


def test_a_corrected_answer_after_the_reask_is_used() -> None:
    bad = json.dumps({"question": "Q?", "answer": "100", "evidence_start": 1,
                      "evidence_end": 1})  # 100 is not in sentence 1
    good = json.dumps({"question": "Q?", "answer": "100", "evidence_start": 2,
                       "evidence_end": 2})
    s = snap([["Alpha is a town.", "It has 100 people. " + "x" * 290]])
    b = builder([bad, good], kinds=("qa",))
    result = asyncio.run(b.initial(s, "2024-01-01", 0))
    (inst,) = result.instances
    assert isinstance(inst, QAInstance)
    assert (inst.type, inst.answer, inst.evidence.sentences) == ("initial", "100", (1,))
    retry = b.generator.llm.backend.requests[1].messages  # type: ignore[attr-defined]
    assert "'100' is not written in sentences 1-1" in retry[-1].content


def test_dialogue_with_a_turn_citing_a_missing_sentence_is_skipped() -> None:
    turns = [{"user": "u", "expert": "e", "evidence": [1]},
             {"user": "u", "expert": "e", "evidence": [9]},
             {"user": "u", "expert": "e", "evidence": [2]}]
    bad = json.dumps({"turns": turns})
    s = snap([["Alpha is a town.", "It has 100 people. " + "x" * 290]])
    result = asyncio.run(builder([bad, bad], kinds=("dialogue",)).initial(s, "2024-01-01", 0))
    assert result.instances == []
    assert result.skips[0].reason == "dialogue: turn 2 cites sentence(s) [9], outside 1-2"


def test_an_article_without_a_usable_paragraph_is_a_recorded_skip() -> None:
    result = asyncio.run(builder([]).initial(snap([["Short."]]), "2024-01-01", 0))
    assert result.instances == [] and result.skips[0].stage == "page"
    assert "no paragraph of 1-4 sentences" in result.skips[0].reason


def test_two_different_articles_are_refused() -> None:
    other = snap([["Beta is a lake."]], page_id=8, title="Beta", revision=3)
    with pytest.raises(SnapshotMismatchError):
        asyncio.run(builder([]).update(OLD, [], other, "2024-02-01", 1))


def test_unverified_alignment_labels_are_never_trusted() -> None:
    # Similarity 0.8 with no number or negation change: the no-LLM fallback calls it
    # unchanged but flags it ambiguous, so the instance resting on it is dropped.
    old = snap([["Alpha is a small town."]])
    new = snap([["Alpha is a tiny rural town."]], revision=2)
    b = PageBuilder(Generator(LLM(ScriptedBackend([]))),
                    Encoder(pairs=[("Alpha is a small town.", "Alpha is a tiny rural town.",
                                    0.8)]))
    inst = QAInstance("7-s00-qa-001", 7, "Alpha", "initial", "2024-01", "2024-01-01", "q?",
                      "town", Evidence.of(old, [0]))
    result = asyncio.run(b.update(old, [inst], new, "2024-02-01", 1))
    assert result.instances == []
    assert result.skips[0].reason == (
        "evidence sentence 0 is unverified (similarity alone matched it)")


def test_a_turn_keeps_its_own_type_through_a_file_and_older_files_read_the_same() -> None:
    turn = Turn(2, "u", "e", Evidence.of(NEW, [2]), "changed")
    assert Turn.from_dict(json.loads(json.dumps(turn.to_dict()))) == turn
    plain = Turn(1, "u", "e", Evidence.of(NEW, [0]))
    assert "type" not in plain.to_dict() and Turn.from_dict(plain.to_dict()).type is None
    with pytest.raises(ValueError, match="turn type 'stale'"):
        Turn.from_dict({**turn.to_dict(), "type": "stale"})
