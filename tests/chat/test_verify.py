"""The cloze verifier's rules (no model): spans, value comparison, verdicts, the guard.

Expected values were worked out by hand from the sentences written here and the real
2023 Cricket World Cup lead quoted below.
"""

from __future__ import annotations

import datetime as dt

from freshwiki.chat import ClaimCheck, Evidence, PassageBook, TurnCalls
from freshwiki.chat.facts import passage_entry
from freshwiki.chat.guard import SentenceGuard
from freshwiki.chat.verify import (
    Sentence,
    asked_first,
    blanked,
    check_batch,
    focus_of,
    judge,
    key_spans,
    same_value,
    stated,
)
from tests.chat.fakes import js, scripted_llm

TODAY = dt.date(2024, 6, 1)
FINAL = ("In the knockout stage, India and Australia beat New Zealand and South Africa "
         "respectively to advance to the final, played on 19 November at Narendra Modi "
         "Stadium.")
WON = "Australia won by 6 wickets, winning their sixth Cricket World Cup title."
CWC = Evidence("cwc", "2023 Cricket World Cup", (),
               "It was hosted from 5 October to 19 November 2023 across ten venues in India. "
               f"{FINAL} {WON}")
QUESTION = "Who won the 2023 Cricket World Cup?"
INDIA = "The 2023 Cricket World Cup was won by India."


def sentences(*texts: str) -> list[Sentence]:
    return [Sentence(t, CWC) for t in texts]


def test_key_spans_are_names_dates_and_numbers() -> None:
    assert key_spans(INDIA) == ["2023", "Cricket World Cup", "India"]
    assert key_spans("The Israel–Hamas war began on 7 October 2023 in the Gaza Strip.") == [
        "Israel–Hamas", "7 October 2023", "Gaza Strip"]
    assert key_spans("It was founded in 2008 by the Bank of England.") == [
        "2008", "Bank of England"]
    assert key_spans("KickassTorrents was a torrent directory.") == ["KickassTorrents"]
    assert key_spans("the series was cancelled after two seasons.") == ["two"]
    assert key_spans("it was one of the best.") == []
    # A decade is one value (read back as "1880s" it is the same, not a change of "1880").
    assert key_spans("It was first attested in the 1880s.") == ["1880s"]
    assert same_value("1880s", "1880s") and not same_value("1880s", "1890s")
    # "In the TV series": the opener and its joiner are no part of the name.
    assert key_spans("In the TV series House, Mark is ill.") == ["TV", "House", "Mark"]
    # An elided article hides no name: the question's "d'Arcachon Sud" states "Arcachon Sud".
    assert stated("Arcachon Sud", "the Communauté d'agglomération Bassin d'Arcachon Sud")
    # Digits fused with a capital are part of a name.
    assert key_spans("It hired 3M Health Information Systems in 1995 at 20 km/h.") == [
        "3M Health Information Systems", "1995", "20"]
    # Digits after a letter and a hyphen are part of a name.
    assert key_spans("The Lockheed F-94 Starfire beat the XF-87 in 1950.") == [
        "Lockheed F-94 Starfire", "XF-87", "1950"]
    # A capitalised preposition opening a question names nothing.
    assert key_spans("Under which federation did the Republic join in 1823?") == ["Republic",
                                                                                   "1823"]
    # "According to ..." opens a sentence; it names nothing.
    assert key_spans("According to the 2004 census, Habar had 1111 people.") == [
        "2004", "Habar", "1111"]


def test_the_asked_kind_is_blanked_first() -> None:
    spans = ["Dong Cunrui", "May 18, 1948"]
    assert asked_first(spans, "Which soldier of the division died in May 1948?")[0] == (
        "Dong Cunrui")
    assert asked_first(spans, "When did Dong Cunrui die?")[0] == "May 18, 1948"
    assert asked_first(spans, "What year did Dong Cunrui die?")[0] == "May 18, 1948"
    # "What happened ..." asks for no kind: the last span first.
    assert asked_first(spans, "What happened to Dong Cunrui?")[0] == "May 18, 1948"


def test_the_focus_is_what_the_question_did_not_say() -> None:
    assert focus_of(INDIA, QUESTION) == ["India"]
    assert focus_of(INDIA, None) == ["2023", "Cricket World Cup", "India"]
    # A claim that only repeats the question's spans has no focus (it is judged by words).
    assert focus_of("The 2023 Cricket World Cup had teams.", QUESTION) == []
    assert key_spans("It was contested by fourteen teams.") == ["fourteen"]
    assert blanked(INDIA, "India") == "The 2023 Cricket World Cup was won by ___."


def test_values_compare_by_value_not_by_string() -> None:
    assert same_value("7 October 2023", "October 7, 2023")
    assert same_value("2023", "7 October 2023")  # one more precise than the other
    assert same_value("Pat Cummins", "Cummins") and same_value("Australia", "Australian team")
    assert same_value("six", "6")
    assert not same_value("India", "Australia")
    assert not same_value("1985", "1986")
    assert not same_value("April 2024", "May 2024")
    assert not same_value("19 November 2023", "26 November 2023")


def test_stated_needs_every_word_and_number() -> None:
    assert stated("Narendra Modi Stadium", FINAL)
    assert not stated("Wankhede Stadium", FINAL)
    assert not stated("20 November", FINAL)


def test_cricket_a_value_the_evidence_contradicts_is_refuted_and_corrected() -> None:
    check = judge(INDIA, QUESTION, {"India": "Australia"}, sentences(FINAL, WON), [CWC])
    assert check.verdict == "REFUTES"
    assert check.correction == "The 2023 Cricket World Cup was won by Australia."
    assert check.evidence == (CWC,) and "'Australia'" in check.rationale


def test_supports_needs_the_read_value_to_match_and_be_in_the_evidence() -> None:
    right = "The 2023 Cricket World Cup was won by Australia."
    assert judge(right, QUESTION, {"Australia": "Australia"}, sentences(WON), [CWC]
                 ).verdict == "SUPPORTS"
    # The model "read" a value that no evidence sentence contains: not trusted.
    assert judge(right, QUESTION, {"Australia": "Australia"}, sentences(FINAL[:29]), [CWC]
                 ).verdict == "NOT ENOUGH INFO"
    # An empty blank: the evidence does not say.
    assert judge(right, QUESTION, {"Australia": ""}, sentences(WON), [CWC]
                 ).verdict == "NOT ENOUGH INFO"
    # A different value the evidence does not contain is a misreading, not a refutation.
    assert judge(INDIA, QUESTION, {"India": "England"}, sentences(WON), [CWC]
                 ).verdict == "NOT ENOUGH INFO"
    # Another key span of the claim that no sentence states blocks SUPPORTS.
    extra = "Australia won the 2023 Cricket World Cup at Eden Gardens."
    assert judge(extra, QUESTION, {"Australia": "Australia", "Eden Gardens": "Eden Gardens"},
                 sentences(WON, "Eden Gardens is a stadium."), [CWC]).verdict == "SUPPORTS"
    assert judge(extra, "Who won the 2023 Cricket World Cup at Eden Gardens?",
                 {"Australia": "Australia"}, sentences(WON), [CWC]
                 ).verdict == "NOT ENOUGH INFO"


def test_a_claim_without_spans_is_judged_by_words_and_polarity() -> None:
    text = "The tournament was contested by ten national teams."
    ten = Sentence("The tournament was contested by ten national teams, as in 2019.", CWC)
    assert judge("the tournament was contested by ten national teams.", None, {},
                 [ten], [CWC]).verdict == "SUPPORTS"
    assert judge("the tournament was not contested by national teams.", None, {},
                 [ten], [CWC]).verdict == "NOT ENOUGH INFO"
    assert judge("the tournament was played in winter.", None, {}, [ten], [CWC]
                 ).verdict == "NOT ENOUGH INFO"
    assert text  # (the sentence above, quoted)


async def test_fast_mode_asks_one_blank_per_focus_span_and_hides_the_value() -> None:
    book = PassageBook()
    book.add(CWC)
    block = [passage_entry(1, CWC, f"{FINAL} {WON}")]
    llm, script = scripted_llm({"fast-verify": js({"answers": ["Australia", "19 November"]})})
    checks = await check_batch(
        TurnCalls(llm), [INDIA, "The 2023 Cricket World Cup final was played on 26 November."],
        [[CWC], [CWC]], book, block, TODAY, question=QUESTION)
    [call] = script.of("fast-verify")
    assert "1. The 2023 Cricket World Cup was won by ___." in call.user
    assert "2. The 2023 Cricket World Cup final was played on ___." in call.user
    assert "India" not in call.user.split("</passages>")[1]
    assert [c.verdict for c in checks] == ["REFUTES", "REFUTES"]
    assert checks[1].correction == "The 2023 Cricket World Cup final was played on 19 November."


async def test_an_unusable_verifier_output_supports_nothing() -> None:
    book = PassageBook()
    book.add(CWC)
    llm, _ = scripted_llm({"fast-verify": "not json at all"})
    [check] = await check_batch(TurnCalls(llm), [INDIA], [[CWC]], book,
                                [passage_entry(1, CWC, WON)], TODAY, question=QUESTION)
    assert check.verdict == "NOT ENOUGH INFO"


def test_the_guard_withholds_a_restated_refuted_claim_only() -> None:
    guard = SentenceGuard([CWC.title, CWC.text], refuted=[(INDIA, ["India"], ["Australia"])])
    text = ("India won the 2023 Cricket World Cup [1]. Australia beat India in the final of "
            "the 2023 Cricket World Cup [1]. India hosted it [1].")
    out = guard.feed(text) + guard.finish()
    assert out == ("Australia beat India in the final of the 2023 Cricket World Cup [1]. "
                   "India hosted it [1].")
    assert guard.removed == ["India won the 2023 Cricket World Cup [1]."]
    assert ClaimCheck(INDIA, "REFUTES").correction == ""


def test_the_guard_withholds_a_sentence_repeated_from_an_earlier_reply() -> None:
    earlier = "Australia won the 2023 Cricket World Cup [1]. It was held in India [2]."
    guard = SentenceGuard([CWC.title, CWC.text], said=[earlier])
    out = guard.feed("Australia won the 2023 Cricket World Cup [3]. The final was on "
                     "19 November [3].") + guard.finish()
    assert out == "The final was on 19 November [3]."
    assert guard.removed == ["Australia won the 2023 Cricket World Cup [3]."]


def test_two_disagreeing_values_give_no_correction() -> None:
    # Asked in Spanish, "Cricket World Cup" was in focus too and the model read "India"
    # for it (real output): one claim, two disagreements, so no corrected claim.
    check = judge(INDIA, "¿Quién ganó la Copa Mundial de Críquet de 2023?",
                  {"Cricket World Cup": "India", "India": "Australia"},
                  sentences(FINAL, WON), [CWC])
    assert check.verdict == "REFUTES" and check.correction == ""


# Real leads (../shared/data/wikipedia/topics), cut to the sentences that matter, and two
# passages about other subjects that hold the values a wrong draft claimed (written here).
MALCZYK = Evidence("malczyk", "Malczyk", (),
                   "Malczyk is a surname. Notable people with the surname include: Antoni "
                   "Malczyk (1902–1972), Polish footballer, brother of Stanisław Malczyk.")
SCHMIDT = Evidence("schmidt", "Tadeu Schmidt", (),
                   "Tadeu Schmidt is a Brazilian television presenter. His brother is the "
                   "basketball player Oscar Schmidt.")
GRILLI = Evidence("grilli", "Jason Grilli", (),
                  "The Giants traded him to the Florida Marlins in 1999, for whom he debuted "
                  "on May 11, 2000.")
OTHER = Evidence("other", "List of Major League Baseball players", (),
                 "He debuted in Major League Baseball in 2013 with the Texas Rangers.")


def split(*passages: Evidence) -> list[Sentence]:
    return [Sentence(s, e) for e in passages for s in e.text.split(". ")]


def test_a_value_read_off_a_passage_about_another_subject_supports_nothing() -> None:
    # Full mode supported "Antoni Malczyk brother is named Tadeu Schmidt" from the Schmidt
    # passage: the value was there, the subject was not.
    question = "What is the full name of the footballer brother of Antoni Malczyk?"
    claim = "Antoni Malczyk's brother is named Tadeu Schmidt."
    assert focus_of(claim, question) == ["Tadeu Schmidt"]
    check = judge(claim, question, {"Tadeu Schmidt": "Tadeu Schmidt"},
                  split(MALCZYK, SCHMIDT), [MALCZYK, SCHMIDT])
    assert check.verdict == "NOT ENOUGH INFO", check
    assert "Antoni Malczyk" in check.rationale
    # The true claim is supported by the passage that names both.
    right = "Antoni Malczyk's brother is Stanisław Malczyk."
    check = judge(right, question, {"Stanisław Malczyk": "Stanisław Malczyk"},
                  split(MALCZYK, SCHMIDT), [MALCZYK, SCHMIDT])
    assert check.verdict == "SUPPORTS" and check.evidence == (MALCZYK,), check


def test_a_correction_comes_only_from_a_passage_about_the_claims_subject() -> None:
    question = "What year did Jason Grilli debut in Major League Baseball?"
    claim = "Jason Grilli debuted in Major League Baseball in 2015."
    assert focus_of(claim, question) == ["2015"]
    # 2013 is read off a passage about another player: the claim is still not shown
    # (REFUTES), but nothing is offered in its place.
    other = judge(claim, question, {"2015": "2013"}, split(GRILLI, OTHER), [GRILLI, OTHER])
    assert other.verdict == "REFUTES" and other.correction == "", other
    # The Grilli passage states his debut only as "he debuted" under its title; the title
    # names him, so 2000 corrects the claim... but it does not say "Major League Baseball",
    # so the claim's other span is missing and no correction is written either.
    own = judge(claim, question, {"2015": "2000"}, split(GRILLI, OTHER), [GRILLI, OTHER])
    assert own.verdict == "REFUTES" and own.correction == "", own
    grilli_mlb = Evidence("grilli2", "Jason Grilli", (),
                          "He played in Major League Baseball (MLB) for nine teams. He debuted "
                          "on May 11, 2000.")
    fixed = judge(claim, question, {"2015": "2000"}, split(grilli_mlb, OTHER),
                  [grilli_mlb, OTHER])
    assert fixed.verdict == "REFUTES"
    assert fixed.correction == "Jason Grilli debuted in Major League Baseball in 2000.", fixed


def test_blanks_follow_what_the_question_asks_for() -> None:
    from freshwiki.chat.verify import asked_first, items_of

    spans = ["Radu Albot", "Mitchell Krueger", "Luke Saville", "Jordan Thompson", "6", "1"]
    # "Who": the names first, in order; then the rest from the end.
    assert asked_first(spans, "Who won it?") == [*spans[:4], "1", "6"]
    # "When" / "how many": dates and numbers first.
    assert asked_first(["Paris", "1889", "Eiffel"], "When did it open?") == [
        "1889", "Eiffel", "Paris"]
    assert asked_first(["Paris", "ten", "Eiffel"], "How many teams played?") == [
        "ten", "Eiffel", "Paris"]
    # Nothing asked for: from the end, as before.
    assert asked_first(["A", "B", "C"], "Tell me about it.") == ["C", "B", "A"]
    claim = ("Radu Albot and Mitchell Krueger won the 2016 Launceston Tennis International, "
             "defeating Luke Saville and Jordan Thompson in the final 6–1, 4–6.")
    items = items_of([claim], "Who won the 2016 Launceston Tennis International?")
    # At most four blanks, in the claim's order: here the four names, not the score.
    assert [i.span for i in items] == spans[:4]
    assert items[0].text.startswith("___ and Mitchell Krueger won")


def test_a_correction_does_not_repeat_the_unit_around_the_value() -> None:
    from freshwiki.chat.verify import corrected

    claim = "The Ningbo Ring Expressway is approximately 60 kilometers long."
    text = "The Ningbo Ring Expressway has a total length of 85.63 kilometers."
    # The model read the blank with its unit, as it did on the fresh question set.
    assert corrected(claim, {"60": "85.63 kilometers"}, {"60": "85.63 kilometers"}, text) == (
        "The Ningbo Ring Expressway is approximately 85.63 kilometers long.")
    assert corrected("It was won by India.", {"India": "Australia"}, {"India": "Australia"},
                     "Australia won it.") == "It was won by Australia."


def test_a_possessive_in_the_question_names_the_subject() -> None:
    from freshwiki.chat.verify import focus_of

    # Blanking the subject and reading it back SUPPORTED "Thomas Mills Wood is a lawyer" (he
    # is an actor): the subject comes from the question, so it is no focus.
    assert focus_of("Thomas Mills Wood is a lawyer.",
                    "What is Thomas Mills Wood's occupation?") == []
    assert focus_of("Thomas Mills Wood is a lawyer.", "Who is the actor in The Fugitive?") == [
        "Thomas Mills Wood"]
    # A possessive span the question itself has stays out of focus.
    assert focus_of("Saville won the Men's doubles.", "Who won the Men's doubles?") == [
        "Saville"]


def test_a_year_is_not_its_decade() -> None:
    from freshwiki.chat.verify import same_value

    # A fresh-set lead said "began in the 1980s"; the reply "began in 1980" was SUPPORTED.
    assert not same_value("1980", "in the 1980s")
    assert not same_value("1980s", "1980")
    assert same_value("1980s", "the 1980s") and same_value("1980", "7 May 1980")
