from __future__ import annotations

import pytest

from freshwiki.retrieval import extract_years


@pytest.mark.parametrize(
    ("text", "years"),
    [
        ("In 2019 the team won the cup.", (2019,)),
        ("As of March 2021, the population was 5,000.", (2021,)),
        ("Born 5 March 1990 in Lyon.", (1990,)),
        ("Released on March 5, 2021 worldwide.", (2021,)),
        ("First aired 2021-03-05.", (2021,)),
        ("Sept. 2019 update", (2019,)),
        ("A fortress built (c. 1200) on the hill.", (1200,)),
        ("The 1990s were a decade of growth.", (1990,)),
        ("A mid-2019 report", (2019,)),
        ("The war of 1914–18 changed Europe.", (1914, 1918)),
        ("He reigned 1914-1918.", (1914, 1918)),
        ("She lived there from 1990 to 2000.", (1990, 2000)),
        ("between 1990 and 2000", (1990, 2000)),
        ("the summer of 1969", (1969,)),
        ("2019 Cricket World Cup\nThe tournament was held in England.", (2019,)),
        ("He lost the 2016 election.", (2016,)),
        ("The club's 2020 season was cut short.", (2020,)),
        # Numbers in the year range that are not dates.
        ("1500 soldiers died.", ()),
        ("It has 2000 km of roads.", ()),
        ("It costs $1200.", ()),
        ("About 1,500 people live there.", ()),
        ("a population of 2000", ()),
        ("The city fell in 1200 BC.", ()),
        ("In 1500 people lived there", ()),
        ("He won the 1500 metres.", ()),
        ("He scored 1500 runs in 2003.", (2003,)),
        ("2.1 million in 2010, 3 million in 2020", (2010, 2020)),
        ("Nothing dated here.", ()),
    ],
)
def test_extract_years(text: str, years: tuple[int, ...]) -> None:
    assert extract_years(text) == years


def test_years_are_sorted_unique_and_in_range() -> None:
    text = "In 2021 and again in 1999, and in 2021; in 2150 and in 0999 (not years here)."
    assert extract_years(text) == (1999, 2021)


@pytest.mark.parametrize(
    ("text", "years"),
    [  # real phrasings from the topic leads that an earlier version missed
        ("her 2008 studio album Ladyhawke", (2008,)),
        ("Beniamino Vignola (b. 1959), Italian footballer", (1959,)),
        ("Boulder Dash (video game), a 1984 video game", (1984,)),
        ("Robert Logan (1784 - 22 April 1830) was the", (1784, 1830)),
        ("the Seditious Meetings Act 1817", (1817,)),
        ("Richard Karp used Stephen Cook's 1971 theorem", (1971,)),
        ("The 2016 AFC Champions League was", (2016,)),
        ("1969 in North Korea", (1969,)),
        ("the second generation 2008–onwards Hayabusa", (2008,)),
        # and what must still not count
        ("a historic church located at 1527 W. Mallon Street", ()),
        ("the 1500 soldiers", ()),
        ("a 1500 metre race", ()),
    ],
)
def test_extract_years_real_phrasings(text: str, years: tuple[int, ...]) -> None:
    assert extract_years(text) == years
