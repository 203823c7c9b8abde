"""The aligner step by step, on constructed snapshots whose labels are known by construction."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from freshwiki.changes.snapshots import (
    Aligner,
    AlignOptions,
    EmptySnapshotError,
    LLMJudge,
    NoEncoderError,
    Snapshot,
    SnapshotMismatchError,
    Thresholds,
    align,
)
from freshwiki.config import Settings
from freshwiki.llm import Message, open_llm
from freshwiki.llm.backends.scripted import ScriptedBackend
from tests.changes.snapshots.helpers import FakeEncoder, snap


def labels(side: Sequence[object]) -> list[tuple[str, str]]:
    return [(lab.label, lab.step) for lab in side]  # type: ignore[attr-defined]


# -- step 1: hashing --------------------------------------------------------------------------

def test_identical_versions_are_all_exact_and_never_embedded() -> None:
    text = ["Alpha is a town.", "It has a river.", "The mayor is Bea."]
    result = align(snap(text), snap(text, revision=2), encoder=FakeEncoder(fail=True))
    assert labels(result.new_labels) == [("unchanged", "exact")] * 3
    assert labels(result.old_labels) == [("unchanged", "exact")] * 3
    assert result.to_growover() == {"S": {0: 0, 1: 1, 2: 2}, "C": [], "N": [], "D": []}
    assert result.embedded == 0 and result.llm_calls == 0


def test_case_punctuation_and_spacing_are_normalized_matches() -> None:
    old = snap(["The river, called Zed, is long.", "It floods."])
    new = snap(["the river called  Zed is long", "It floods."])
    result = align(old, new, encoder=FakeEncoder(fail=True))
    assert labels(result.new_labels) == [("unchanged", "normalized"), ("unchanged", "exact")]
    assert result.old_to_new == {0: 0, 1: 1}


def test_a_number_is_not_normalized_away() -> None:
    # "1,000" and "1,500" must reach the later steps, not be equal keys.
    old = snap(["It has 1,000 people."])
    new = snap(["It has 1,500 people."])
    result = align(old, new, encoder=FakeEncoder(fail=True))
    assert labels(result.new_labels) == [("changed", "lexical")]
    assert result.changed == [(0, 0)]


# -- step 2b: one sentence touched, decided from its words --------------------------------

def test_one_touched_sentence_is_decided_from_its_words_without_embeddings() -> None:
    old = snap(["Alpha is a town.", "It had 1,200 people in 2010.", "The mayor is Bea.",
                "The river is wide.", "Trains stop there.", "Buses do not stop there.",
                "The lake is deep."])
    new = snap(["Alpha is a town.", "It had 1,450 people in 2010.", "The mayor is Bea.",
                "The river is very wide.", "Trains stop there.", "Buses do stop there.",
                "The lake is deep."], revision=2)
    result = align(old, new, encoder=FakeEncoder(fail=True))
    assert labels(result.new_labels)[1] == ("changed", "lexical")   # a number replaced
    assert labels(result.new_labels)[3] == ("unchanged", "lexical")  # "very" added
    assert labels(result.new_labels)[5] == ("changed", "lexical")   # negation dropped
    assert result.to_growover()["C"] == [[1, 1], [5, 5]]
    assert result.old_to_new[3] == 3
    assert labels(result.old_labels)[1] == ("changed", "lexical")
    assert labels(result.old_labels)[3] == ("unchanged", "lexical")
    assert result.embedded == 0


def test_a_name_added_is_left_to_the_embeddings() -> None:
    # "Franciscan" is a name: words alone cannot tell a rewording from a new fact.
    a, b = "It was founded by monks.", "It was founded by Franciscan monks."
    enc = FakeEncoder([(a, b, 0.95)])
    result = align(snap(["Alpha is a town.", a]), snap(["Alpha is a town.", b], revision=2),
                   encoder=enc)
    assert labels(result.new_labels)[1] == ("unchanged", "rule")  # the embedding step's
    assert sorted(enc.encoded) == sorted([a, b]) and result.embedded == 2


def test_word_edit_share_and_content_flag() -> None:
    from freshwiki.changes.snapshots._text import word_edit

    assert word_edit("The river is wide.", "The river is wide.") == (1.0, False)
    kept, content = word_edit("The river is wide.", "The river is very wide.")
    assert kept == pytest.approx(2 * 4 / 9) and not content
    # Capitalised first words are not names: "Notably, the ..." only adds "Notably".
    assert word_edit("The river is wide.", "Notably, the river is wide.")[1] is False
    assert word_edit("He was born in Paris.", "He was born in Lyon.")[1] is True
    assert word_edit("It had 12 rooms.", "It had 14 rooms.")[1] is True


def test_moved_sentence_is_unchanged_not_new_plus_deleted() -> None:
    old = snap(["Alpha is a town.", "It has a river.", "The mayor is Bea."])
    new = snap(["The mayor is Bea.", "Alpha is a town.", "It has a river."])
    result = align(old, new, encoder=FakeEncoder(fail=True))
    assert [lab.label for lab in result.new_labels] == ["unchanged"] * 3
    assert result.old_to_new == {0: 1, 1: 2, 2: 0}
    assert "moved" in result.new_labels[0].reason
    assert result.deleted == [] and result.new_indices == []


# -- step 2: groups between anchors ---------------------------------------------------------

def test_merged_sentences_match_as_a_group() -> None:
    old = snap(["Alpha is a town.", "The river is long.", "It floods in spring.", "The end."])
    new = snap(["Alpha is a town.", "The river is long; it floods in spring.", "The end."])
    result = align(old, new, encoder=FakeEncoder(fail=True))
    assert labels(result.new_labels) == [
        ("unchanged", "exact"), ("unchanged", "group"), ("unchanged", "exact")]
    assert result.new_labels[1].counterparts == (1, 2)
    assert result.to_growover() == {"S": {0: 0, 1: 1, 2: 1, 3: 2}, "C": [], "N": [], "D": []}


def test_split_sentence_matches_as_a_group_and_maps_to_a_range() -> None:
    old = snap(["Alpha is a town.", "The river is long, and it floods in spring.", "The end."])
    new = snap(["Alpha is a town.", "The river is long.", "And it floods in spring.",
                "The end."])
    result = align(old, new, encoder=FakeEncoder(fail=True))
    assert result.old_labels[1].counterparts == (1, 2)
    assert result.old_labels[1].step == "group"
    # GrowOVER's chunk form: old 1 became new sentences [1, 3).
    assert result.to_growover()["S"] == {0: 0, 1: [1, 3], 2: 3}


def test_group_step_stays_between_its_anchors() -> None:
    # "B. C." exists joined in the new version, but in another gap (after "Z."), so it is
    # not a merge of old B and C (which sit before "Z."): those go on to the embedding step.
    old = snap(["A.", "Bee flies.", "Cat sits.", "Z.", "Y."])
    new = snap(["A.", "Other.", "Z.", "Bee flies; cat sits.", "Y."])
    enc = FakeEncoder()
    result = align(old, new, encoder=enc)
    assert result.new_labels[3].label == "new"
    assert sorted(enc.encoded) == sorted(["Bee flies.", "Cat sits.", "Other.",
                                          "Bee flies; cat sits."])


# -- step 3: embeddings -----------------------------------------------------------------------

PAIRS = [
    ("The bridge was built by the Romans.", "The Romans built the bridge.", 0.995),
    ("The town had 1,200 inhabitants in 2010.", "The town had 1,450 inhabitants in 2020.", 0.8),
    ("The church is made of stone.", "The church is built of stone.", 0.95),
    ("The castle was demolished.", "The castle was not demolished.", 0.95),
    ("The market is held on Mondays.", "A festival takes place every summer.", 0.3),
    ("The school opened in a former mill.", "The school moved into a former mill.", 0.75),
    ("The station closed.", "A new station was planned.", 0.65),
]


def gapped() -> tuple[Snapshot, Snapshot]:
    old = snap(["Anchor one.", *(o for o, _, _ in PAIRS), "Anchor two."])
    new = snap(["Anchor one.", *(n for _, n, _ in PAIRS), "Anchor two."], revision=2)
    return old, new


def test_embedding_thresholds_and_rules() -> None:
    old, new = gapped()
    enc = FakeEncoder(PAIRS)
    result = Aligner(enc).align(old, new)
    assert labels(result.new_labels) == [
        ("unchanged", "exact"),
        ("unchanged", "embedding"),  # 0.995 >= 0.99
        ("changed", "rule"),         # 0.8, 1,200 -> 1,450 with the same words
        ("unchanged", "rule"),       # 0.95, a rewording: numbers and negation agree
        ("changed", "rule"),         # 0.95, "not" added
        ("new", "embedding"),        # 0.3 < 0.5
        ("unchanged", "fallback"),   # 0.75: needs NLI; similarity alone says unchanged
        ("new", "fallback"),         # 0.65: needs NLI; similarity alone says new
        ("unchanged", "exact"),
    ]
    assert [lab.ambiguous for lab in result.new_labels] == [False] * 6 + [True, True, False]
    assert result.to_growover() == {
        "S": {0: 0, 1: 1, 3: 3, 6: 6, 8: 8},
        "C": [[2, 2], [4, 4]],
        "N": [5, 7],
        "D": [5, 7],
    }
    assert result.old_labels[6].ambiguous and result.old_labels[6].label == "unchanged"
    assert result.new_labels[1].similarity == pytest.approx(0.995, abs=1e-3)
    # Only the 14 sentences left after hashing were embedded, never the anchors.
    assert sorted(enc.encoded) == sorted([t for p in PAIRS for t in p[:2]])
    assert result.embedded == 14


def test_a_replaced_number_is_a_change_even_above_the_unchanged_cut() -> None:
    # Encoders hardly move for one digit: 0.995 would be "unchanged" by similarity alone.
    a, b = "The dam is 120 m high.", "The dam is 125 m high."
    embeddings_only = AlignOptions(lexical_min=1.01)  # the embedding step's own rule
    result = align(snap([a]), snap([b]), encoder=FakeEncoder([(a, b, 0.995)]),
                   options=embeddings_only)
    assert labels(result.new_labels) == [("changed", "rule")]
    assert result.to_growover() == {"S": {}, "C": [[0, 0]], "N": [], "D": []}


def test_an_added_number_is_not_a_change() -> None:
    a, b = "The park has 3 lakes.", "The park has 3 lakes and 2 ponds."
    result = align(snap([a]), snap([b]), encoder=FakeEncoder([(a, b, 0.92)]))
    assert labels(result.new_labels) == [("unchanged", "rule")]


def test_a_number_rewritten_in_digits_is_not_a_change() -> None:
    # GrowOVER's Aug→Sep 2023 pairs hold this edit: "seventeen" read as 7 and "thirty-seven"
    # as 30 and 7 made digits-for-words look like a replaced number.
    a = "He joined the Academy at seventeen and stayed until he was thirty-seven."
    b = "He joined the Academy at 17 and stayed until he was 37."
    result = align(snap([a]), snap([b]), encoder=FakeEncoder([(a, b, 0.93)]))
    assert labels(result.new_labels) == [("unchanged", "rule")]


def test_an_ordinal_replaced_is_a_change() -> None:
    a, b = "It was the third edition of the race.", "It was the 4th edition of the race."
    embeddings_only = AlignOptions(lexical_min=1.01)
    result = align(snap([a]), snap([b]), encoder=FakeEncoder([(a, b, 0.97)]),
                   options=embeddings_only)
    assert labels(result.new_labels) == [("changed", "rule")]


def test_custom_thresholds_move_the_bands() -> None:
    old, new = gapped()
    strict = Thresholds(unchanged=0.999)
    from freshwiki.changes.snapshots import AlignOptions

    result = Aligner(FakeEncoder(PAIRS), options=AlignOptions(thresholds=strict)).align(old, new)
    # 0.995 is below 0.999 now: a rewording by rule instead of an embedding match.
    assert (result.new_labels[1].label, result.new_labels[1].step) == ("unchanged", "rule")


def test_thresholds_must_be_ordered() -> None:
    with pytest.raises(ValueError, match="thresholds"):
        Thresholds(changed_min=0.8, new_max=0.7)


def test_nothing_left_on_the_old_side_means_new_without_embedding() -> None:
    old = snap(["Alpha is a town."])
    new = snap(["Alpha is a town.", "It was founded in 1200."])
    result = align(old, new, encoder=FakeEncoder(fail=True))
    assert labels(result.new_labels) == [("unchanged", "exact"), ("new", "none")]
    assert result.to_growover() == {"S": {0: 0}, "C": [], "N": [1], "D": []}


def test_nothing_left_on_the_new_side_means_deleted() -> None:
    result = align(snap(["Alpha is a town.", "It is old."]), snap(["Alpha is a town."]),
                   encoder=FakeEncoder(fail=True))
    assert result.to_growover() == {"S": {0: 0}, "C": [], "N": [], "D": [1]}
    assert result.old_labels[1].label == "deleted"


# -- step 4: LLM check --------------------------------------------------------------------------

LLM_PAIRS = [
    ("The school opened in a former mill.", "The school moved into a former mill.", 0.75),
    ("The station closed.", "A new station was planned.", 0.65),
    ("The lake is shallow.", "The lake is popular with anglers.", 0.55),
]
ANSWERS = {
    "The school moved into a former mill.": "contradiction",
    "A new station was planned.": "entailment",
    "The lake is popular with anglers.": "contradiction",
}


def nli_reply(messages: Sequence[Message]) -> str:
    user = messages[-1].content
    for new_sentence, relation in ANSWERS.items():
        if f"NEW: {new_sentence}" in user:
            return f'{{"reason": "scripted", "relation": "{relation}"}}'
    raise AssertionError(f"unexpected prompt: {user}")


def test_llm_decides_the_ambiguous_pairs(settings: Settings) -> None:
    backend = ScriptedBackend([nli_reply] * 3)
    llm = open_llm(settings=settings, backend=backend, cache=False)
    old = snap(["Anchor.", *(o for o, _, _ in LLM_PAIRS)], title="Springfield")
    new = snap(["Anchor.", *(n for _, n, _ in LLM_PAIRS)], title="Springfield")
    result = Aligner(FakeEncoder(LLM_PAIRS), LLMJudge(llm)).align(old, new)
    assert [(lab.label, lab.step, lab.relation) for lab in result.new_labels[1:]] == [
        ("changed", "llm", "contradiction"),   # 0.75 >= 0.6
        ("unchanged", "llm", "entailment"),
        ("new", "llm", "contradiction"),       # contradicts, but 0.55 < 0.6: not a change
    ]
    assert not result.ambiguous
    assert result.llm_calls == 3 and len(backend.requests) == 3
    assert result.to_growover() == {"S": {0: 0, 2: 2}, "C": [[1, 1]], "N": [3], "D": [3]}
    request = backend.requests[0]
    assert request.params.json_schema is not None
    assert request.params.json_schema["properties"]["relation"]["enum"] == [
        "entailment", "neutral", "contradiction"]
    assert "Article: Springfield" in request.messages[-1].content
    assert "OLD: The school opened in a former mill." in request.messages[-1].content


def test_neutral_keeps_a_close_pair_unchanged(settings: Settings) -> None:
    a, b = LLM_PAIRS[0][:2]
    backend = ScriptedBackend(['{"reason": "more detail", "relation": "neutral"}'])
    llm = open_llm(settings=settings, backend=backend, cache=False)
    result = Aligner(FakeEncoder([(a, b, 0.75)]), LLMJudge(llm)).align(snap([a]), snap([b]))
    assert (result.new_labels[0].label, result.new_labels[0].relation) == ("unchanged", "neutral")


def test_unusable_llm_answer_keeps_the_fallback_flagged(settings: Settings) -> None:
    a, b = LLM_PAIRS[1][:2]
    backend = ScriptedBackend(["I think they agree."] * 4)
    llm = open_llm(settings=settings, backend=backend, cache=False)
    result = Aligner(FakeEncoder([(a, b, 0.65)]), LLMJudge(llm)).align(snap([a]), snap([b]))
    lab = result.new_labels[0]
    assert (lab.label, lab.step, lab.ambiguous) == ("new", "fallback", True)
    assert "unusable" in lab.reason


def test_without_llm_ambiguous_pairs_are_flagged_and_listed() -> None:
    old, new = gapped()
    result = Aligner(FakeEncoder(PAIRS), judge=None).align(old, new)
    flagged = {(lab.side, lab.index) for lab in result.ambiguous}
    assert flagged == {("new", 6), ("new", 7), ("old", 6)}
    assert all("no LLM" in lab.reason for lab in result.ambiguous)


# -- records and bad input ----------------------------------------------------------------------

def test_to_dict_carries_identity_and_sentence_positions() -> None:
    old, new = gapped()
    data = Aligner(FakeEncoder(PAIRS)).align(old, new).to_dict()
    assert data["old"]["revision_id"] == 1 and data["new"]["revision_id"] == 2
    assert data["new"]["sentences"][2]["text"] == "The town had 1,450 inhabitants in 2020."
    assert data["new"]["sentences"][2]["paragraph"] == 2
    assert data["counts"] == {"unchanged": 5, "changed": 2, "new": 2, "deleted": 2}


def test_two_different_articles_are_refused() -> None:
    with pytest.raises(SnapshotMismatchError, match=r"'Alpha'.*'Beta'.*different articles"):
        align(snap(["A."], page_id=1, title="Alpha"), snap(["A."], page_id=2, title="Beta"),
              encoder=FakeEncoder(fail=True))


def test_same_title_with_a_new_page_id_is_the_same_article() -> None:
    result = align(snap(["A."], page_id=1), snap(["A."], page_id=2),
                   encoder=FakeEncoder(fail=True))
    assert result.old_to_new == {0: 0}


def test_renamed_page_is_the_same_article() -> None:
    result = align(snap(["A."], title="Old name"), snap(["A."], title="New name"),
                   encoder=FakeEncoder(fail=True))
    assert result.old_to_new == {0: 0}


def test_empty_article_is_refused_with_its_revision() -> None:
    with pytest.raises(EmptySnapshotError, match=r"new snapshot 'Example' .*revision 9.*empty"):
        align(snap(["A."]), snap([], revision=9), encoder=FakeEncoder(fail=True))


def test_redirect_is_refused_naming_its_target() -> None:
    redirect = Snapshot(7, "Example", 5, snap([]).timestamp, (), (), redirect="Pear")
    with pytest.raises(EmptySnapshotError, match="redirect to 'Pear'"):
        align(redirect, snap(["A."]), encoder=FakeEncoder(fail=True))


def test_leftover_sentences_without_an_encoder_is_an_error() -> None:
    with pytest.raises(NoEncoderError, match="no encoder"):
        align(snap(["A town."]), snap(["A city."]))
