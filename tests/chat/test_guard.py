from __future__ import annotations

import pytest

from freshwiki.chat.guard import SentenceGuard

EVIDENCE = ["The war has been taking place since 7 October 2023.", "2024-06-01"]
RAW = ("The Israel–Hamas war began on July 1, 2021 [1]. It started on 7 October 2023 in "
       "Gaza [1]. The U. S. reacted.\n\n- It is ongoing as of 2024 [1].")


@pytest.mark.parametrize("size", [1, 3, 7, 1000])
def test_sentences_with_unsupported_numbers_are_withheld(size: int) -> None:
    guard = SentenceGuard(EVIDENCE)
    pieces = [guard.feed(RAW[i:i + size]) for i in range(0, len(RAW), size)]
    pieces.append(guard.finish())
    assert "".join(pieces) == ("It started on 7 October 2023 in Gaza [1]. The U. S. reacted."
                               "\n\n- It is ongoing as of 2024 [1].")
    assert guard.removed == ["The Israel–Hamas war began on July 1, 2021 [1]."]


def test_text_is_released_only_at_sentence_ends() -> None:
    guard = SentenceGuard(EVIDENCE)
    assert guard.feed("It started on 7 October") == ""
    assert guard.feed(" 2023 [1]. The") == "It started on 7 October 2023 [1]. "
    assert guard.finish() == ""  # a text ending "The" was cut off: withheld
    assert guard.removed == ["The"]


def test_citation_numbers_and_number_words_are_not_mistaken() -> None:
    guard = SentenceGuard(["He played in seven first-class matches."])
    assert guard.feed("He played 7 matches [12]. ") == ""  # held until the next sentence
    assert guard.finish() == "He played 7 matches [12]. "
    assert guard.removed == []


def test_a_citation_after_the_full_stop_goes_with_its_sentence() -> None:
    guard = SentenceGuard(EVIDENCE)
    text = "It began on July 1, 2021, in Gaza. [1]"
    assert "".join(guard.feed(c) for c in text) + guard.finish() == ""
    assert guard.removed == [text]


def test_a_sentence_without_a_marker_is_cited_to_the_source_that_covers_it() -> None:
    guard = SentenceGuard(EVIDENCE, [(2, "Hamas militants launched a surprise attack."),
                                     (1, EVIDENCE[0])])
    text = "The war has been going on since 7 October 2023. Nobody knows why birds sing."
    out = "".join(guard.feed(c) for c in text) + guard.finish()
    assert out == ("The war has been going on since 7 October 2023. [1] "
                   "Nobody knows why birds sing.")


def test_initials_and_titles_do_not_end_a_sentence() -> None:
    guard = SentenceGuard(["The domain was seized by the U.S. government in 2016."],
                          [(1, "The domain was seized by the U.S. government in 2016.")])
    text = "KAT's domain was seized by the U. S. government in 2016. Dr. Who was not involved."
    out = "".join(guard.feed(c) for c in text) + guard.finish()
    assert out == ("KAT's domain was seized by the U. S. government in 2016. [1] "
                   "Dr. Who was not involved.")


def test_a_dangling_marker_does_not_stop_the_right_citation() -> None:
    guard = SentenceGuard(EVIDENCE, [(1, EVIDENCE[0])])
    out = guard.feed("The war has been taking place since 7 October 2023 [2].") + guard.finish()
    assert out == "The war has been taking place since 7 October 2023 [2]. [1]"


def test_a_citation_written_first_moves_to_the_end_of_its_sentence() -> None:
    # Real composer output (fresh question set, 25 November).
    guard = SentenceGuard(["More than two dozen tornadoes occurred, March 13-15, 2024"])
    text = "[1] Two dozen tornadoes occurred during the March 13-15, 2024 outbreak. It hit Ohio."
    assert guard.feed(text) + guard.finish() == (
        "Two dozen tornadoes occurred during the March 13-15, 2024 outbreak [1]. It hit Ohio.")


def test_a_repeated_sentence_and_a_cut_off_end_are_withheld() -> None:
    # Real composer output (fresh question set, 25 November): a sentence said twice, and a
    # reply that stopped after "He was".
    guard = SentenceGuard(["a population of 5715 according to the 2004 census"])
    said = "The 2004 census reported a population of 5715 people in Khamis Harmal. [1] "
    out = guard.feed(said + said + "He was") + guard.finish()
    assert out == said
    assert guard.removed == [said.strip(), "He was"]
    # A short last sentence is fine when it is whole.
    guard = SentenceGuard([])
    assert guard.feed("Doha [1]") + guard.finish() == "Doha [1]"
