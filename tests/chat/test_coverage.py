"""Is the question's subject in the retrieved passages? Real leads, read by hand."""

from __future__ import annotations

import json
from pathlib import Path

from freshwiki.chat._types import Evidence
from freshwiki.chat.coverage import coverage, named_by, names_article, subject_units


def test_subject_units_keep_a_number_with_its_name() -> None:
    assert subject_units("Who won the 2023 Cricket World Cup?") == ["2023 Cricket World Cup"]
    assert subject_units("Who won Miss Universe 2031?") == ["Miss Universe 2031"]
    assert subject_units("Who fought in the main event of UFC 272?") == ["UFC 272"]
    # A number standing alone is what a question may get wrong, not what it is about.
    assert subject_units("Why does Brighton and Hove City Council have 70 councillors?") == [
        "Brighton", "Hove City Council"]
    assert subject_units("What happens to a distribution as its scale gets larger?") == []


def test_a_near_miss_edition_is_not_covered(shared_data: Path) -> None:
    leads = json.loads((shared_data / "wikipedia/topics/recent_articles_en.json")
                       .read_text(encoding="utf-8"))
    # "Miss Universe 2023 was the 72nd Miss Universe pageant ..."
    found = [Evidence(t, t, (), leads[t]) for t in ("Miss Universe 2023",)]
    miss = coverage("Who won Miss Universe 2031?", found)
    assert not miss.covered and miss.missing == ("Miss Universe 2031",)
    hit = coverage("Who won Miss Universe 2023?", found)
    assert hit.covered and hit.about[0].title == "Miss Universe 2023" and hit.missing == ()


def test_more_than_half_of_the_units_is_enough(shared_data: Path) -> None:
    leads = json.loads((shared_data / "wikipedia/topics/recent_articles_en.json")
                       .read_text(encoding="utf-8"))
    leads |= json.loads((shared_data / "wikipedia/topics/tail_articles_en.json")
                        .read_text(encoding="utf-8"))
    museum = [Evidence("m", "Museum Giuseppe Gianetti", (), leads["Museum Giuseppe Gianetti"])]
    # A false premise brings a name of its own (Murano): the museum's lead is still about the
    # subject (2 of 3 units), so the reply can correct the premise rather than give up.
    found = coverage("Why is Murano glass the largest collection at the Museum Giuseppe "
                     "Gianetti in Saronno?", museum)
    assert found.covered and found.missing == ("Murano",)
    assert not coverage("What is the population of Quarrindale, Queensland?", museum).covered
    assert coverage("What happens to a distribution as its scale grows?", museum).covered


def test_a_passage_whose_title_the_question_names_is_about_it(shared_data: Path) -> None:
    leads = json.loads((shared_data / "wikipedia/topics/head_articles_en.json")
                       .read_text(encoding="utf-8"))
    # "Malice murder is a criminal offense in the U.S. state of Georgia." The only unit of the
    # question is the false premise's "Texas"; the lead is still about what was asked.
    malice = [Evidence("mm", "Malice murder", (), leads["Malice murder"])]
    found = coverage("What is the penalty for malice murder under Texas law?", malice)
    assert found.covered and found.missing == ("Texas",)
    # A one-word title counts only as a whole unit of the question.
    assert named_by("Who founded the Bitcoin Museum in Oslo?", "Bitcoin",
                    subject_units("Who founded the Bitcoin Museum in Oslo?")) is False
    assert named_by("Why is Bitcoin slow?", "Bitcoin", ["Bitcoin"]) is True
    # A disambiguating bracket is not part of the name.
    assert named_by("Who directed One on One in 1977?", "One on One (1977 film)", []) is True
    assert named_by("Who won the 2031 Cricket World Cup?", "2023 Cricket World Cup", []) is False


def test_a_possessive_name_does_not_take_the_next_year() -> None:
    # The year is the video's, not the singer's.
    assert subject_units('Christina Aguilera\'s 2002 music video for "Dirrty"') == [
        "Christina Aguilera's", "Dirrty"]
    assert subject_units("Who won the 2023 Cricket World Cup?") == ["2023 Cricket World Cup"]


def test_a_question_names_an_article_by_its_title_or_by_what_its_lead_names(
    shared_data: Path,
) -> None:
    topics = shared_data / "wikipedia/topics"
    leads = json.loads((topics / "head_articles_en.json").read_text(encoding="utf-8"))
    leads |= json.loads((topics / "tail_articles_en.json").read_text(encoding="utf-8"))
    zoli = Evidence("z", "Zoli government", (), leads["Zoli government"])
    yaeji = Evidence("y", "Yaeji", (), leads["Yaeji"])
    # The title is not in the question, but the lead opens with "The Zoli Cabinet".
    assert names_article("What led to the formation of the Zoli Cabinet?", zoli)
    # The lead's "Kathy Yaeji Lee (...), known professionally as Yaeji".
    assert names_article("Who produced Kathy Yaeji Lee's most recent song?", yaeji)
    # Every name the question gives must be there: the lead says nothing of Charli XCX.
    assert not names_article("Did Kathy Yaeji Lee work with Charli XCX?", yaeji)
    # A question naming nothing is about no article, whatever was retrieved.
    assert not names_article("What was the impact of the film on its reception?", zoli)
    assert not names_article("Who won the 2023 Cricket World Cup?", zoli)
