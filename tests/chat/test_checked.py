"""The checked mode's parts: splitting the answer, the rules, the lines of the check call."""

from __future__ import annotations

import json
from pathlib import Path

from freshwiki.chat import only_abstains
from freshwiki.chat._evidence import PassageBook
from freshwiki.chat._types import ChatMessage, Evidence
from freshwiki.chat.checked import (
    OFF_TARGET,
    Line,
    SentenceCheck,
    about_itself,
    abstain_text,
    answers_asked,
    apply_rules,
    asked_kind,
    clauses,
    copied_from,
    disagreement,
    earlier_turns,
    fallback_quote,
    is_abstention,
    is_fragment,
    opposed_premise,
    other_line,
    premise_lines,
    refuted_premise,
    related_quote,
    repeats_earlier,
    said_before,
    settle,
    split_answer,
    unmentioned,
)
from freshwiki.chat.coverage import coverage
from freshwiki.chat.verify import BLANK

KAT = Evidence("kat", "KickassTorrents", (), (
    "KickassTorrents (commonly abbreviated KAT) was a website that provided a directory for "
    "torrent files and magnet links to facilitate peer-to-peer file sharing using the "
    "BitTorrent protocol. It was founded in 2008 and by November 2014, KAT became the most "
    "visited BitTorrent directory in the world, overtaking The Pirate Bay, according to the "
    "site's Alexa ranking. KAT went offline on 20 July 2016 when the domain was seized by the "
    "U.S. government."), "2024-03-01T00:00:00+00:00")


def book_of(*passages: Evidence) -> PassageBook:
    book = PassageBook()
    for passage in passages:
        book.add(passage)
    return book


def test_the_answer_is_split_into_plain_sentences() -> None:
    checks = split_answer("According to the Wikipedia passage, KAT went offline in 2016 [1]. "
                          "Helmut Mayrhofer.", "Who is the lichen named after?")
    assert [c.text for c in checks] == ["KAT went offline in 2016.", "Helmut Mayrhofer."]
    assert checks[1].claim == "Who is the lichen named after? Helmut Mayrhofer."
    assert [c.index for c in checks] == [0, 1]


def test_fragments_abstentions_and_talk_about_itself() -> None:
    assert is_fragment("Bautzen, Saxony.") and is_fragment("In 1972.")
    assert not is_fragment("India won the 2023 Cricket World Cup.")
    assert not is_fragment("Silbermond is from Bautzen.")
    assert is_abstention("The passages do not mention his birth date.")
    assert is_abstention("I don't know.") and not is_abstention("It went offline in 2016.")
    assert about_itself("As an AI developed by Alibaba Cloud, I cannot say.")
    assert about_itself("If you have any other questions, feel free to ask.")
    assert not about_itself("Feel Good Inc. is a song by Gorillaz.")


def test_a_whole_sentence_of_a_passage_is_a_copy_a_stretch_is_not() -> None:
    assert copied_from("KAT went offline on 20 July 2016 when the domain was seized by the "
                       "U.S. government", [KAT]) is KAT
    assert copied_from("KAT went offline on 20 July 2016", [KAT]) is None


def test_rules_then_readings_decide_each_sentence() -> None:
    question = "When did KickassTorrents go offline?"
    book = book_of(KAT)
    checks = split_answer("KickassTorrents went offline on 20 July 2016. It was founded by "
                          "Artem Vaulin in Kharkiv. I don't know more.", question)
    apply_rules(checks, question, [KAT], book)
    assert [c.status for c in checks] == ["pending", "dropped", "abstain"]
    assert checks[1].reason.startswith("stated in no passage: 'Artem Vaulin', 'Kharkiv'")
    lines = [Line("value", 0, "20 July 2016", "KickassTorrents went offline on ___.")]
    settle(checks, lines, ["20 July 2016"], question, [KAT], book)
    assert checks[0].status == "released"
    assert checks[0].released == "KickassTorrents went offline on 20 July 2016 [1]."
    assert checks[0].as_check().verdict == "SUPPORTS"
    # Read differently, and the other value is stated with the relation: corrected.
    again = split_answer("KickassTorrents went offline in 2015.", question)
    apply_rules(again, question, [KAT], book)
    assert again[0].unstated == "2015"
    settle(again, [Line("value", 0, "2015", "KickassTorrents went offline in ___.")],
           ["20 July 2016"], question, [KAT], book)
    assert again[0].status == "corrected"
    assert again[0].released == "KickassTorrents went offline in 20 July 2016 [1]."


def test_a_premise_the_passage_contradicts() -> None:
    question = "Why did KickassTorrents go offline in 2019?"
    covered = coverage(question, [KAT])
    lines = premise_lines(question, covered)
    # What the passage does not state first, then (a why-question) the names it takes as given.
    assert [line.text for line in lines] == ["Why did KickassTorrents go offline in ___?",
                                             "Why did ___ go offline in 2019?"]
    assert [line.span for line in lines] == ["2019", "KickassTorrents"]
    premise = refuted_premise(lines, ["20 July 2016", "KickassTorrents"], question, covered)
    assert premise is not None and (premise.assumed, premise.found) == ("2019", "20 July 2016")
    assert premise.sentence.startswith("KAT went offline on 20 July 2016")
    # A reading of another kind (a name for a year) refutes nothing.
    assert refuted_premise(lines, ["Pirate Bay", ""], question, covered) is None


def _lead(shared_data: Path, topics: str, title: str) -> Evidence:
    leads = json.loads((shared_data / f"wikipedia/topics/{topics}_articles_en.json")
                       .read_text(encoding="utf-8"))
    return Evidence(title, title, (), leads[title])


def test_a_premise_the_answer_restates_is_read_in_its_statement(shared_data: Path) -> None:
    # Lead: "Reminiscences of a Stock Operator is a 1923 roman à clef by American author
    # Edwin Lefèvre. ... inspired by the life of stock trader Jesse Livermore ..."
    lead = _lead(shared_data, "head", "Reminiscences of a Stock Operator")
    question = "Why did Jesse Livermore write Reminiscences of a Stock Operator?"
    covered = coverage(question, [lead])
    checks = split_answer("Jesse Livermore wrote Reminiscences of a Stock Operator because he "
                          "was inspired by his own life.", question)
    lines = premise_lines(question, covered, checks)
    # The answer's statement cut before its reason, then the question itself.
    assert [(x.span, x.text) for x in lines[:2]] == [
        ("Jesse Livermore", "___ wrote Reminiscences of a Stock Operator."),
        ("Jesse Livermore", "Why did ___ write Reminiscences of a Stock Operator?")]
    blank = [""] * (len(lines) - 1)
    premise = refuted_premise(lines, ["Edwin Lefèvre", *blank], question, covered)
    # Livermore is in the lead, but not as the one who wrote it: refuted.
    assert premise is not None and premise.found == "Edwin Lefèvre"
    assert premise.sentence.startswith("Reminiscences of a Stock Operator is a 1923 roman")
    assert refuted_premise(lines, ["Jesse Livermore", *blank], question, covered) is None


def test_a_place_premise_is_refuted_beside_another_asked_relation(shared_data: Path) -> None:
    # Lead: "... struck Jishishan County, in Gansu Province, China."
    lead = _lead(shared_data, "recent", "2023 Jishishan earthquake")
    question = ("What was the death toll of the December 2023 Jishishan earthquake in Sichuan "
                "province?")
    covered = coverage(question, [lead])
    [line] = premise_lines(question, covered)
    premise = refuted_premise([line], ["Gansu"], question, covered)
    assert premise is not None and (premise.assumed, premise.found) == ("Sichuan", "Gansu")
    # A reading the lead does not state refutes nothing.
    assert refuted_premise([line], ["Hubei"], question, covered) is None


def test_a_name_missing_from_passages_the_question_does_not_name_is_not_refuted(
        shared_data: Path) -> None:
    # Another politician's lead: it says nothing about Asha Bishwakarma.
    other = _lead(shared_data, "tail", "Pratikshya Tiwari Mukhiya")
    question = "Why did Asha Bishwakarma stand for the CPN (UML) in Nepal's 2022 general election?"
    covered = coverage(question, [other])
    assert covered.covered  # CPN, UML and the 2022 election are in it
    lines = [Line("premise", -1, "Asha Bishwakarma",
                  "___ stood for the CPN (UML) in Nepal's 2022 general election.")]
    assert refuted_premise(lines, ["Pratikshya Tiwari Mukhiya"], question, covered) is None


def test_a_second_passage_of_the_article_is_read_alone() -> None:
    other = Evidence("kat-2", "KickassTorrents", ("History",),
                     "KickassTorrents shut down in 2015 after a lawsuit.")
    question = "When did KickassTorrents go offline?"
    book = book_of(KAT, other)
    checks = split_answer("KickassTorrents went offline on 20 July 2016.", question)
    apply_rules(checks, question, [KAT, other], book)
    [line] = other_line(checks, question, [KAT, other], book)
    assert line.text == "[2] When did KickassTorrents go offline? ___"
    value_line = Line("value", 0, "20 July 2016", "KickassTorrents went offline on ___.")
    settle(checks, [value_line, line], ["20 July 2016", "2015"], question, [KAT, other], book)
    found = disagreement(checks, [value_line, line], ["20 July 2016", "2015"])
    assert found is not None and (found.value, found.other_value) == ("20 July 2016", "2015")
    assert disagreement(checks, [value_line, line], ["20 July 2016", ""]) is None


def test_i_dont_know_names_what_was_missing_and_the_closest_articles() -> None:
    text = abstain_text("subject", "Who won Miss Universe 2031?", ["Miss Universe 2031"],
                        [KAT, KAT])
    assert text == ("I don't know: none of the Wikipedia passages I found is about “Miss "
                    "Universe 2031” (the closest were KickassTorrents), and I'd rather not "
                    "guess.")
    assert abstain_text("fact", "q", (), [KAT]).startswith(
        "I don't know: the passages I found (KickassTorrents) don't say that")
    assert "has no passages" in abstain_text("no_passages", "q", (), ())


def test_a_sentence_check_reports_its_verdict() -> None:
    check = SentenceCheck(0, "x", "x", "x", status="dropped", reason="why")
    assert check.as_check().verdict == "NOT ENOUGH INFO"


def test_when_nothing_passes_the_evidence_sentence_is_quoted_word_for_word() -> None:
    # "won" is a strong relation the passage does not state (it says "became the most visited
    # BitTorrent directory"), so the sentence is dropped although its date was read back.
    question = "When did KickassTorrents become the most visited BitTorrent directory?"
    book = book_of(KAT)
    said = ("KickassTorrents won the title of most visited BitTorrent directory in "
            "November 2014.")
    checks = split_answer(said, question)
    apply_rules(checks, question, [KAT], book)
    line = Line("value", 0, "November 2014", "... directory in ___.")
    settle(checks, [line], ["November 2014"], question, [KAT], book)
    assert checks[0].status == "dropped"
    quoted = fallback_quote(checks, question, book)
    assert quoted is not None and quoted.status == "copied"
    assert quoted.released == (
        "The passage on KickassTorrents says: “It was founded in 2008 and by November 2014, KAT "
        "became the most visited BitTorrent directory in the world, overtaking The Pirate Bay, "
        "according to the site's Alexa ranking.” [1]")
    assert quoted.as_check().verdict == "SUPPORTS"
    # Not again once an earlier reply gave that sentence (here as the quote itself), but still
    # after replies that said something else.
    quoted_before = [("When was KAT most visited?", quoted.released)]
    assert fallback_quote(checks, question, book, quoted_before) is None
    other_reply = [("Who founded it?", "It was founded by Artem Vaulin [1].")]
    assert fallback_quote(checks, question, book, other_reply) is not None
    # A sentence dropped for not giving what was asked is not quoted in its place.
    checks[0].reason = OFF_TARGET
    assert fallback_quote(checks, question, book) is None
    # No quote when the reading did not give the value back, or gave another one.
    for read in ("", "20 July 2016"):
        again = split_answer(said, question)
        apply_rules(again, question, [KAT], book)
        settle(again, [line], [read], question, [KAT], book)
        assert again[0].status == "dropped"
        assert fallback_quote(again, question, book) is None
    # Nor when the evidence sentence shares no word with the question besides its subject.
    other = "Who did KickassTorrents win against in November 2014?"
    third = split_answer(said, other)
    apply_rules(third, other, [KAT], book)
    settle(third, [line], ["November 2014"], other, [KAT], book)
    assert fallback_quote(third, other, book) is None


def test_a_direction_the_question_assumes_is_refuted_by_its_opposite(shared_data: Path) -> None:
    # Lead: "A tributary of the Wairua River, it rises west of Maungatapere and flows westward
    # into that river south of Titoki."
    lead = _lead(shared_data, "tail", "Karukaru Stream")
    book = book_of(lead)
    question = "Why does the Karukaru River in New Zealand flow eastward into the Wairua River?"
    checks = split_answer("The Karukaru River flows eastward into the Wairua River.", question)
    apply_rules(checks, question, [lead], book)
    settle(checks, [], [], question, [lead], book)
    # No new value, and its relation ("eastward") is in no evidence sentence: dropped.
    assert checks[0].status == "dropped"
    premise = opposed_premise(checks, question)
    assert premise is not None and (premise.assumed, premise.found) == ("eastward", "westward")
    assert premise.sentence.startswith("A tributary of the Wairua River, it rises west")
    # The answer's own direction, not the question's, is only dropped.
    asked = "Which way does the Karukaru River flow?"
    again = split_answer("The Karukaru River flows eastward into the Wairua River.", asked)
    apply_rules(again, asked, [lead], book)
    settle(again, [], [], asked, [lead], book)
    assert again[0].status == "dropped" and opposed_premise(again, asked) is None
    # "west of Maungatapere" and "westward" in the evidence agree with a westward answer.
    right = split_answer("The Karukaru River flows westward into the Wairua River.", asked)
    apply_rules(right, asked, [lead], book)
    settle(right, [], [], asked, [lead], book)
    assert right[0].status == "released"


def test_i_dont_know_names_the_question_parts_no_passage_mentions() -> None:
    question = "Why did Robert Forster release KickassTorrents on Domino Records in 2008?"
    assert unmentioned(question, [KAT]) == ["Robert Forster", "Domino Records"]
    text = abstain_text("fact", question, unmentioned(question, [KAT]), [KAT])
    assert text == ("I don't know: the passages I found (KickassTorrents) don't mention "
                    "“Robert Forster” or “Domino Records”, so I can't confirm that, and I'd "
                    "rather not guess.")


def test_the_kind_of_value_a_question_asks_for() -> None:
    assert asked_kind("Where was James Tillis born?") == "place"
    assert asked_kind("In which city is Sundance Airport?") == "place"
    assert asked_kind("When did KickassTorrents go offline?") == "time"
    assert asked_kind("In which decade was the word first attested?") == "time"
    assert asked_kind("Who founded KickassTorrents?") == "name"
    assert asked_kind("What was the name of the gunman?") == "name"
    assert asked_kind("How many species are there?") == "number"
    # What X is, or an open question: no particular kind.
    assert asked_kind("Who was Dong Cunrui?") is None
    assert asked_kind("What is the capital of France?") is None


def test_released_sentences_must_give_what_was_asked() -> None:
    def shown(*texts: str) -> list[SentenceCheck]:
        return [SentenceCheck(i, t, t, t, status="released") for i, t in enumerate(texts)]

    # A birth date for "where": true, but not the answer.
    assert not answers_asked(shown("James Tillis was born on July 5, 1957."),
                             "Where was James Tillis born?")
    assert answers_asked(shown("James Tillis was born in Gilroy, California."),
                         "Where was James Tillis born?")
    assert not answers_asked(shown("The gunman was a postgraduate history student."),
                             "What was the name of the gunman?")
    assert answers_asked(shown("KAT went offline on 20 July 2016."),
                         "When did KickassTorrents go offline?")
    assert answers_asked(shown("It has three species."), "How many species does it have?")
    # A measure asked by name must be the one given.
    assert not answers_asked(shown("Tiyuzhongxin has a population of 66,948."),
                             "What is the area of Tiyuzhongxin Subdistrict?")
    assert answers_asked(shown("Its area is 3.2 square kilometres."),
                         "What is the area of Tiyuzhongxin Subdistrict?")
    # Nothing released, or no kind asked: nothing to hold against the reply.
    assert answers_asked([], "Where was James Tillis born?")
    assert answers_asked(shown("KAT was a website."), "What was KickassTorrents?")


def test_independent_clauses_are_checked_apart() -> None:
    assert clauses("An adult male narwhal's tusk can grow up to 3 meters (9.8 feet), and the "
                   "narwhal was scientifically described in 1758 by Carl Linnaeus.") == [
        "An adult male narwhal's tusk can grow up to 3 meters (9.8 feet).",
        "The narwhal was scientifically described in 1758 by Carl Linnaeus."]
    # No subject of its own after "and" ("and moved"), or no verb near its start: one piece.
    assert clauses("He was born in Paris, and moved to Lyon in 1950.") == [
        "He was born in Paris, and moved to Lyon in 1950."]
    assert clauses("It was founded in 2008, and by November 2014 KAT became the most "
                   "visited.") == ["It was founded in 2008, and by November 2014 KAT became "
                                   "the most visited."]


def test_a_named_subject_of_a_why_question_is_no_premise(shared_data: Path) -> None:
    # Lead: "Petra Kvitová was the reigning champion, but did not enter the tournament due to
    # pregnancy. ... Elena Rybakina became the first woman to reach consecutive Miami Open
    # finals ..."
    lead = _lead(shared_data, "recent", "2024 Miami Open – Women's singles")
    question = ("Why did reigning champion Petra Kvitová not play the women's singles at the "
                "2024 Miami Open?")
    covered = coverage(question, [lead])
    line = Line("premise", -1, "Petra Kvitová", question.replace("Petra Kvitová", BLANK))
    assert refuted_premise([line], ["Elena Rybakina"], question, covered) is None
    # With a strong relation ("directed") the named star is still refuted.
    # Lead: "... film directed by Mario Van Peebles and starring Cam Gigandet ..."
    film = _lead(shared_data, "head", "Red Sky (2014 film)")
    asked = "Why did Cam Gigandet direct the 2014 action film Red Sky?"
    covered = coverage(asked, [film])
    line = Line("premise", -1, "Cam Gigandet", f"{BLANK} directed the 2014 action film Red Sky.")
    premise = refuted_premise([line], ["Mario Van Peebles"], asked, covered)
    assert premise is not None and premise.found == "Mario Van Peebles"


def test_a_value_read_back_away_from_its_subject_is_released_in_the_passages_words(
        shared_data: Path) -> None:
    # Lead: "The 1990-91 Rugby League Divisional Premiership was the 5th end-of-season ...
    # competition. ... The winners were Salford." No passage says "Salford Reds".
    lead = _lead(shared_data, "tail", "1990–91 Rugby League Divisional Premiership")
    book = book_of(lead)
    question = "Which club won the 1990–91 Rugby League Divisional Premiership?"
    said = "Salford Reds won the 1990–91 Rugby League Divisional Premiership."
    line = Line("value", 0, "Salford Reds", "___ won the 1990–91 Rugby League Divisional "
                                            "Premiership.")
    checks = split_answer(said, question)
    apply_rules(checks, question, [lead], book)
    settle(checks, [line], ["Salford"], question, [lead], book)
    assert checks[0].status == "released"
    assert checks[0].released == (
        "Salford won the 1990–91 Rugby League Divisional Premiership [1].")
    # Read as nothing, or as a name no passage states: dropped, as before.
    for read in ("", "Widnes"):
        again = split_answer(said, question)
        apply_rules(again, question, [lead], book)
        settle(again, [line], [read], question, [lead], book)
        assert again[0].status == "dropped"


# Replies of the grounded chat's own simulated conversations (topics 1-6 of the WikiChat
# evaluation), where readers rated a repeated sentence relevant 2 and non-repetitive 1, and the
# re-asked question whose repeated answer they rated relevant 4.
CLINGFISH = "Kopua vermiculata is a clingfish of the family Gobiesocidae, found only around Japan."
FISH = Evidence("k", "Kopua vermiculata", (), CLINGFISH)
METRO = Evidence("m", "Line 5 (Chennai Metro)", (), "x")
STATUS = ("The current status of the Phase 2 Project of Chennai Metro is that it is under "
          "construction and stretches from Madhavaram Milk Colony to Sholinganallur.")


def test_an_earlier_sentence_for_another_question_is_a_repeat() -> None:
    earlier = [("What is Kopua vermiculata's habitat?", CLINGFISH + " [1]")]
    assert repeats_earlier(CLINGFISH, "What is Kopua vermiculata's diet?", earlier, [FISH])
    # Asked again in other words: the same answer may be given again.
    assert not repeats_earlier(CLINGFISH, "Where is Kopua vermiculata's habitat?", earlier,
                               [FISH])
    # A new sentence is no repeat, though it says where the fish lives again.
    assert not repeats_earlier("Kopua vermiculata's natural habitat is only around Japan.",
                               "What is Kopua vermiculata's natural habitat?", earlier, [FISH])
    status = [("What is the current status of the Phase 2 Project of Chennai Metro?", STATUS)]
    assert repeats_earlier(STATUS, "What are the key milestones in the construction of the "
                           "Phase 2 Project of Chennai Metro?", status, [METRO])
    assert not repeats_earlier(STATUS, "Could you please provide the current status of the "
                               "Phase 2 Project of Chennai Metro?", status, [METRO])
    # Half new: "will consist of 45 stations" was not said before.
    assert not repeats_earlier(
        "The current status of the Phase 2 Project of Chennai Metro is that it is under "
        "construction and will consist of 45 stations, of which 6 are underground.",
        "What are the key milestones of the Phase 2 Project?", status, [METRO])


def test_earlier_replies_count_together() -> None:
    # The miss seen in a cache-off conversation: the family in one reply, the range in the
    # next, then the lead's sentence holding both for the diet. By hand, CLINGFISH's content
    # words are kopua, vermiculata, clingfish, family, gobiesocidae, found, around, japan: the
    # first reply has 5 of the 8, the second 3, neither the 85 % alone, both together all 8.
    family = ("What family does Kopua vermiculata belong to?",
              "Kopua vermiculata, the twilight clingfish, belongs to the family Gobiesocidae [1].")
    where = ("Where does it live?", "It is found only around Japan [1].")
    assert said_before(CLINGFISH, [family]) == []
    assert said_before(CLINGFISH, [where]) == []
    assert said_before(CLINGFISH, [family, where]) == [family[0], where[0]]
    diet = "What is Kopua vermiculata's diet?"
    assert repeats_earlier(CLINGFISH, diet, [family, where], [FISH])
    assert not repeats_earlier(CLINGFISH, diet, [family], [FISH])
    # The same conversation's "What does it eat?" asks {eat}: no word of four letters or more,
    # but still something the sentence does not say.
    assert repeats_earlier(CLINGFISH, "What does it eat?", [family, where], [FISH])
    assert not repeats_earlier(CLINGFISH, "Where does it live?", [family, where], [FISH])
    # An "I don't know" says nothing: its words ("the passages I found") are not said content.
    refusal = ("What is its scientific name?", "I don't know: the passages I found (Kopua "
               "vermiculata) don't say that, and I'd rather not guess.")
    assert said_before(CLINGFISH, [family, refusal]) == []
    # Nor does what a refusal quoted beside it: the Table 1 run's turn 1 refused the scientific
    # name and quoted the lead word for word (all 8 content words); turn 2's habitat answer, the
    # same sentence, was then dropped as a repeat and turn 2 refused too.
    quoted = ("What is Kopua vermiculata's scientific name?",
              "I don't know: the passages I found (Kopua vermiculata) don't say that, and I'd "
              "rather not guess. What they do say about Kopua vermiculata: “" + CLINGFISH
              + "” [1]")
    assert said_before(CLINGFISH, [quoted]) == []
    assert not repeats_earlier(CLINGFISH, "What is Kopua vermiculata's habitat?", [quoted],
                               [FISH])
    # The same words in an answer are said: only the refusal's aside is left out.
    answered = (quoted[0], CLINGFISH + " [1]")
    assert said_before(CLINGFISH, [answered]) == [quoted[0]]


# The grounded chat's own conversation on topic 5 (run 761bb6ff7c30): the founding sentence of
# turn 1, asked "Who was the fourth bishop ...?" in turn 3, was dropped as a repeat and the turn
# became "I don't know", though the sentence names him.
JMECA = Evidence("j", "Jerusalem and the Middle East Church Association", (), (
    "The Jerusalem and the Middle East Church Association (JMECA), previously known as the "
    "Jerusalem and the East Mission (JEM), was founded in 1888 by Bishop George Blyth, the "
    "fourth bishop of the Diocese of Jerusalem."))
FOUNDED = ("The Jerusalem and the Middle East Church Association (JMECA) was founded in 1888 by "
           "Bishop George Blyth, the fourth bishop of the Diocese of Jerusalem.")


def test_a_repeat_holding_what_is_newly_asked_may_be_said_again() -> None:
    earlier = [("What is the history of the Jerusalem and the Middle East Church Association?",
                FOUNDED + " [1]"),
               ("What is the current status of the JMECA?", "I don't know: the passages I "
                "found (Jerusalem and the Middle East Church Association) don't say that, and "
                "I'd rather not guess.")]
    # Asks {fourth, bishop} (less the title's words), neither asked before, both in the sentence.
    assert not repeats_earlier(FOUNDED, "Who was the fourth bishop of the Diocese of Jerusalem?",
                               earlier, [JMECA])
    # Asks {current, status}: not in the sentence, so the founding again is a repeat.
    assert repeats_earlier(FOUNDED, "What is the current status of the JMECA?", earlier[:1],
                           [JMECA])
    # Only the reply that shares words besides the article's name said it: not the refusal.
    assert said_before(FOUNDED, earlier, {"jerusalem", "middle", "east", "church",
                                          "association"}) == [earlier[0][0]]


def test_a_repeat_is_dropped_by_the_rules() -> None:
    history = [ChatMessage("user", "What is Kopua vermiculata's family?"),
               ChatMessage("assistant", CLINGFISH + " [1]"),
               ChatMessage("user", "What is Kopua vermiculata's diet?")]
    earlier = earlier_turns(history)
    assert earlier == [("What is Kopua vermiculata's family?", CLINGFISH + " [1]")]
    [check] = split_answer(CLINGFISH, "What is Kopua vermiculata's diet?")
    apply_rules([check], "What is Kopua vermiculata's diet?", [FISH], book_of(FISH), earlier)
    assert check.status == "dropped" and "repeats an earlier reply" in check.reason
    [check] = split_answer(CLINGFISH, "What is Kopua vermiculata's diet?")
    apply_rules([check], "What is Kopua vermiculata's diet?", [FISH], book_of(FISH))
    assert check.status == "copied"  # a first turn has nothing to repeat


def test_after_i_dont_know_a_new_sentence_of_the_named_article_is_quoted() -> None:
    book = book_of(KAT)
    quote = related_quote("When did KickassTorrents become the most visited directory?", [KAT],
                          [], book)
    assert quote is not None and quote.status == "copied" and quote.evidence == KAT
    assert quote.released == (
        "What they do say: “It was founded in 2008 and by November 2014, KAT became the most "
        "visited BitTorrent directory in the world, overtaking The Pirate Bay, according to "
        "the site's Alexa ranking.” [1]")
    # Already said in the conversation: not offered again; the next best is ("directory").
    said = [("When was KickassTorrents founded?", quote.text + " [1]")]
    again = related_quote("When did KickassTorrents become the most visited directory?",
                          [KAT], said, book)
    assert again is not None and again.text.startswith("KickassTorrents (commonly abbreviated")
    # Neither left shares a word with the question: the one not said yet is offered as what
    # the passages say about the article, not as the answer; once all are said, nothing is.
    last = related_quote("When did KickassTorrents become the most visited directory?",
                         [KAT], [*said, ("What was it?", again.text)], book)
    assert last is not None and last.released == (
        "What they do say about KickassTorrents: “KAT went offline on 20 July 2016 when the "
        "domain was seized by the U.S. government.” [1]")
    assert related_quote("When did KickassTorrents become the most visited directory?",
                         [KAT], [*said, ("What was it?", again.text),
                                 ("And then?", last.text)], book) is None
    # Mostly said already, in other words and order: not offered either.
    told = [("Was KickassTorrents popular?", "By November 2014, KAT became the most visited "
             "BitTorrent directory in the world, overtaking The Pirate Bay [1].")]
    other = related_quote("When did KickassTorrents become the most visited directory?", [KAT],
                          told, book)
    assert other is not None and "founded in 2008" not in other.text
    # Another article's passage is never offered ("generation" is not "general"), nor one of
    # an article the question does not name.
    drug = Evidence("c", "Cefepime", (), "Cefepime is a fourth-generation cephalosporin "
                    "antibiotic used against many general infections.")
    assert related_quote("What is the difference between a drug-related blackout and a "
                         "general memory impairment?", [drug, KAT], [], book_of(drug)) is None
    assert related_quote("When did KickassTorrents become the most visited directory?",
                         [drug, KAT], [], book_of(drug, KAT)) is None
    # Nothing in the passages touches what is asked (only the subject's name): the article's
    # first sentence, introduced as what they say about it.
    owner = related_quote("Who owns KickassTorrents today?", [KAT], [], book)
    assert owner is not None and owner.released.startswith(
        "What they do say about KickassTorrents: “KickassTorrents (commonly abbreviated KAT) "
        "was a website")


def test_a_second_i_dont_know_in_a_row_is_worded_differently() -> None:
    first = abstain_text("fact", "q", (), [KAT])
    again = abstain_text("fact", "q", (), [KAT], again=True)
    assert again == ("That isn't in the passages I found (KickassTorrents) either, so I can't "
                     "answer it.")
    assert is_abstention(first) and is_abstention(again)
    assert abstain_text("subject", "q", ["X 2031"], [KAT], again=True) == (
        "I can't answer that one either: none of the Wikipedia passages I found is about "
        "“X 2031” (the closest were KickassTorrents).")


def test_no_refusal_repeats_an_earlier_one_word_for_word() -> None:
    # Held-out topic 13: refusal (t2), "either" refusal (t3), an answer (t4), then t5 gave
    # t2's refusal again word for word, because only the previous reply was looked at.
    first = ("I don't know: the passages I found (KickassTorrents) don't say that, and I'd "
             "rather not guess.")
    again = "That isn't in the passages I found (KickassTorrents) either, so I can't answer it."
    still = ("The passages I found (KickassTorrents) don't cover that one either, so I can't "
             "answer it.")
    answer = "KickassTorrents was founded in 2008 [1]."
    assert abstain_text("fact", "q", (), [KAT], said=[answer]) == first
    # The first wording was said, with a quote after it: the next one, though the previous
    # reply was an answer.
    told = [first + " What they do say about KickassTorrents: “...” [1]", answer]
    assert abstain_text("fact", "q", (), [KAT], said=told) == again
    assert abstain_text("fact", "q", (), [KAT], said=[*told, again]) == still
    assert abstain_text("fact", "q", (), [KAT], again=True, said=[first, again]) == still
    # All three said: the preferred wording, as before.
    assert abstain_text("fact", "q", (), [KAT], again=True, said=[first, again, still]) == again
    for text in (first, again, still):
        assert is_abstention(text) and only_abstains(text)
    subject = abstain_text("subject", "q", ["X 2031"], [KAT], again=True, said=[
        "I can't answer that one either: none of the Wikipedia passages I found is about "
        "“X 2031” (the closest were KickassTorrents)."])
    assert subject == ("Still nothing on “X 2031”: I can't answer that from the Wikipedia "
                       "passages I found (the closest were KickassTorrents).")
    assert only_abstains(subject)


# Held-out WikiChat topics 23 and 24 (grounded run b172992b8496), as the run held them; the
# titles are the real articles', the replies the run's own.
COPA = Evidence("c", "2004 Copa Colsanitas Seguros Bolívar", (), "x")
VOICE = Evidence("v", "The Voice (American TV series) season 25", (), "x")


def test_a_repeat_that_gives_a_newly_asked_kind_of_value_is_an_answer() -> None:
    held = ("The 2004 Copa Colsanitas Seguros Bolívar was held at the Club Campestre El Rancho "
            "in Bogotá, Colombia.")
    earlier = [("When was the 2004 Copa Colsanitas Seguros Bolívar held?",
                "The winner of the 2004 Copa Colsanitas Seguros Bolívar was Fabiola Zuluaga "
                "[1]. The tournament was held from 23 February through 29 February 2004 at the "
                "Club Campestre El Rancho in Bogotá, Colombia [1].")]
    # "location" asks for a place, which the "when" question did not, and the sentence has one.
    assert not repeats_earlier(held, "location of the 2004 Copa Colsanitas Seguros Bolívar",
                               earlier, [COPA])
    # A question asking no new kind still gets no repeat.
    assert repeats_earlier(held, "format of the 2004 Copa Colsanitas Seguros Bolívar",
                           earlier, [COPA])


def test_an_edition_in_words_is_not_what_a_question_asks() -> None:
    premiere = "The twenty-fifth season of The Voice premiered on February 26, 2024, on NBC."
    earlier = [("When did the twenty-fifth season of The Voice premiere?", premiere + " [1]")]
    # By hand: without "fifth" the theme question asks {theme} alone, which the premiere
    # sentence does not hold, so it is a repeat; with it, half the question looked asked before.
    assert repeats_earlier(premiere, "theme of the twenty-fifth season of The Voice", earlier,
                           [VOICE])
