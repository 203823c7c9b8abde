"""The predicate check on real leads: value, subject and relation, stated in one sentence.

Every lead is read from ``../shared/data`` (the default corpus); each expectation was worked
out by reading the lead's sentences, quoted in the comments.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from freshwiki.chat._types import Evidence
from freshwiki.chat.predicate import (
    agents,
    anchored,
    answer_phrase,
    best_statement,
    contrary,
    predicate_words,
    roles_agree,
    stated_phrase,
    strip_lead_in,
    values_of,
)


@pytest.fixture(scope="module")
def leads(shared_data: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for name in ("head", "tail", "recent"):
        out.update(json.loads((shared_data / f"wikipedia/topics/{name}_articles_en.json")
                              .read_text(encoding="utf-8")))
    return out


def lead(leads: dict[str, str], title: str) -> Evidence:
    return Evidence(passage_id=title, title=title, section=(), text=leads[title])


def test_an_opening_about_the_passages_is_not_part_of_the_claim() -> None:
    assert strip_lead_in("According to the Wikipedia passage, 11 climbers died.") == (
        "11 climbers died.")
    assert strip_lead_in("According to the Wikipedia passage on The Summit, 11 climbers "
                         "died.") == "11 climbers died."
    assert strip_lead_in("Based on the information provided in the Wikipedia passage, there "
                         "were two dozen tornadoes.") == "There were two dozen tornadoes."
    assert strip_lead_in('The Wikipedia passage for "Windley" states that it has eight '
                         "listed buildings.") == "It has eight listed buildings."
    assert strip_lead_in("According to passage [2], Australia won.") == "Australia won."
    unchanged = "According to legend, the town was founded by a monk."
    assert strip_lead_in(unchanged) == unchanged


def test_a_number_in_a_name_stays_with_the_name() -> None:
    # "India at the Cricket World Cup": "India have won it twice in 1983 and 2011 while also
    # finishing as runners-up in 2003 and 2023." The year is not the 2023 edition's name.
    runners_up = ("India at the Cricket World Cup. India have won it twice in 1983 and 2011 "
                  "while also finishing as runners-up in 2003 and 2023.")
    assert not stated_phrase("2023 Cricket World Cup", runners_up)
    assert stated_phrase("2023 Cricket World Cup",
                         "The 2023 ICC Men's Cricket World Cup was the 13th edition")
    assert stated_phrase("Suzuki Boulevard M109R", "The Suzuki Boulevard M109R is a cruiser")
    assert stated_phrase("New York's 3", "New York's 3rd congressional district")


def test_who_does_a_strong_relation() -> None:
    assert agents("Australia won by 6 wickets, winning their sixth Cricket World Cup title.",
                  "win") == {"Australia"}
    assert agents("The 2023 Cricket World Cup was won by India.", "win") == {"India"}
    assert agents("Germany defeated Poland 2–1 in the tennis final to win the 2024 United "
                  "Cup.", "win") == {"Germany"}
    assert agents("In the knockout stage, India and Australia beat New Zealand and South "
                  "Africa respectively.", "defeat") == {"India", "Australia"}
    # A name used as an adjective does nothing: "the Australian rock group that released".
    assert agents("The Australian rock group that released Milkumana is King Stingray.",
                  "releas") == set()
    assert agents("It was founded in 2008 by Pirate Bay staff.", "found") == {"Pirate Bay"}
    assert not roles_agree("Poland won the 2024 United Cup.",
                           "Germany defeated Poland 2–1 in the tennis final to win the 2024 "
                           "United Cup.")


def test_the_value_must_stand_with_its_relation(leads: dict[str, str]) -> None:
    cup = lead(leads, "2023 Cricket World Cup")
    question = "Who won the 2023 Cricket World Cup?"
    # India is in the lead ("across ten venues in India"; "India and Australia beat ..."),
    # "won" only in "Australia won by 6 wickets, winning their sixth Cricket World Cup title."
    found = best_statement("India won the 2023 Cricket World Cup.", question, [cup])
    assert found is not None and found.spans and found.strong_missing == ("win",)
    assert anchored("India won the 2023 Cricket World Cup.", question, found, [cup]) == (
        "Australia won the 2023 Cricket World Cup.")
    right = best_statement("Australia won the 2023 Cricket World Cup.", question, [cup])
    assert right is not None and right.holds
    assert right.sentence == "Australia won by 6 wickets, winning their sixth Cricket World " \
                             "Cup title."


def test_the_place_in_a_series_is_not_taken_on_a_paraphrase(leads: dict[str, str]) -> None:
    song = lead(leads, "Yes, And?")
    # The lead (read by hand): "... released ... as the lead single from her seventh studio
    # album Eternal Sunshine (2024)". The grounded run released "second", "third" and
    # "fourth single" for it, each as "relation in other words (missing 'second')".
    for place in ("second", "third", "fourth"):
        claim = f'The album\'s {place} single was "Yes, And?".'
        found = best_statement(claim, f"What was the album's {place} single?", [song])
        assert found is not None and found.strong_missing == (place,) and not found.holds
    # "lead single" is its first single.
    first = best_statement('Its first single was "Yes, And?".',
                           "What was the album's first single?", [song])
    assert first is not None and first.holds


def test_an_ordinal_in_digits_states_the_same_ordinal_in_words() -> None:
    # "25th" is "twenty-fifth": the place in a series written either way is stated, and
    # another place is still missing.
    season = Evidence("v", "The Voice (American TV series) season 25", (),
                      "The 25th season of The Voice premiered on February 26, 2024, on NBC.")
    same = best_statement("The twenty-fifth season of The Voice premiered on February 26, "
                          "2024.", "When did it premiere?", [season])
    assert same is not None and same.strong_missing == ()
    other = best_statement("The twenty-fourth season of The Voice premiered on February 26, "
                           "2024.", "When did it premiere?", [season])
    assert other is not None and other.strong_missing == ("fourth",)


def test_coining_a_term_is_a_strong_relation(leads: dict[str, str]) -> None:
    # "Girls Names was a band from Belfast ... formed in 2009 by Cathal Cully and Neil
    # Brogan." Forming a band is not coining a term: the missing "coined" must not pass.
    band = lead(leads, "Girls Names")
    claim = "The term 'girly girl' was coined by Cathal Cully and Neil Brogan."
    found = best_statement(claim, "Who coined the term 'girly girl'?", [band])
    assert found is not None and found.strong_missing == ("coined",)


def test_a_swapped_doer_is_put_back(leads: dict[str, str]) -> None:
    cup = lead(leads, "2024 United Cup")
    claim = "Poland won the 2024 United Cup by defeating Germany 2-1 in the tennis final."
    found = best_statement(claim, "How did Poland win the 2024 United Cup?", [cup])
    assert found is not None and found.spans and not found.roles
    assert anchored(claim, "How did Poland win the 2024 United Cup?", found, [cup]) == (
        "Germany won the 2024 United Cup by defeating Poland 2-1 in the tennis final.")


def test_a_date_stated_with_the_opposite_relation_supports_nothing(
    leads: dict[str, str],
) -> None:
    # "... and she died on September 8, 2006."
    brown = lead(leads, "Anita Brown")
    claim = "Anita Brown was born on September 8, 2006."
    found = best_statement(claim, "When was Anita Brown born?", [brown])
    assert found is not None and found.spans and contrary(found, claim)
    died = best_statement("Anita Brown died on September 8, 2006.", "When did Anita Brown "
                          "die?", [brown])
    assert died is not None and died.holds and not contrary(died, "Anita Brown died on "
                                                            "September 8, 2006.")


def test_what_the_subject_is_must_be_stated(leads: dict[str, str]) -> None:
    # "Tania Chernova (1920? - c. 2015?) was a Russian-American woman known for serving in
    # the Red Army as a sniper during World War II."
    chernova = lead(leads, "Tania Chernova")
    assert predicate_words("Tania Chernova was a Russian actress.") == ("actress",)
    wrong = best_statement("Tania Chernova was a Russian actress.",
                           "What was Tania Chernova's profession?", [chernova])
    assert wrong is not None and wrong.strong_missing == ("actress",)
    right = best_statement("Tania Chernova was a sniper in the Red Army.",
                           "What was Tania Chernova's profession?", [chernova])
    assert right is not None and right.holds


def test_a_life_span_states_birth_and_death(leads: dict[str, str]) -> None:
    # "Jason Michael Grilli (born November 11, 1976) is an American former professional
    # baseball pitcher."; "... for whom he debuted on May 11, 2000."
    grilli = lead(leads, "Jason Grilli")
    born = best_statement("Jason Grilli was born on November 11, 1976.",
                          "When was Jason Grilli born?", [grilli])
    assert born is not None and born.holds
    debut = best_statement("Jason Grilli debuted in Major League Baseball on May 11, 2000.",
                           "What year did Jason Grilli debut in Major League Baseball?",
                           [grilli])
    assert debut is not None and debut.holds


def test_a_common_noun_answer_is_the_value() -> None:
    assert answer_phrase("Syringomas typically first appear during adolescence.",
                         "At what stage of life do syringomas typically first appear?") == [
        "adolescence"]
    assert values_of("As the scale parameter of a probability distribution gets larger, the "
                     "distribution becomes more spread out.", "What happens to a probability "
                     "distribution as its scale parameter gets larger?") == ["more spread out"]
    assert values_of("Silbermond is from Bautzen, Saxony.",
                     "Which town is the German band Silbermond from?") == ["Bautzen", "Saxony"]


def test_a_copula_predicate_ends_at_a_verb_after_its_noun() -> None:
    # "going into the season" frames the question; what the club *is* is "reigning champions".
    assert predicate_words("PSM Makassar were the reigning champions going into the 2023-24 "
                           "Liga 1 season in Indonesia.") == ("reigning", "champion")
    assert predicate_words("Tania Chernova was a Soviet writer.") == ("write",)  # its stem


def test_a_dated_name_may_take_its_year_from_the_title(leads: dict[str, str]) -> None:
    # The lead: "... strikes undertaken by the Writers Guild of America (which began on May 2
    # and ended on September 27) and SAG-AFTRA (which began on July 14 and ended on November
    # 9)". No "2023" stands beside SAG-AFTRA; the title "2023-24 United States network
    # television schedule" dates the article.
    title = "2023–24 United States network television schedule"
    sentence = "The 2023 SAG-AFTRA strike ended on November 9."
    found = best_statement(sentence, "When did the 2023 SAG-AFTRA strike end?",
                           [lead(leads, title)])
    assert found is not None and found.spans
    # The same text under a title without the year: the year must stand beside the name.
    undated = Evidence(passage_id="x", title="Network television schedule", section=(),
                       text=leads[title].replace("2023–24 network", "network"))
    found = best_statement(sentence, "When did the 2023 SAG-AFTRA strike end?", [undated])
    assert found is not None and not found.spans
