from __future__ import annotations

import random

import pytest

from freshwiki.records import Passage
from freshwiki.retrieval import _dates, extract_years


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


def full_scan(text: str) -> tuple[int, ...]:
    """The definition extract_years implements faster: every pattern over the whole text."""
    found: set[int] = set()
    for pattern in _dates._PATTERNS:
        for match in pattern.finditer(text):
            first = int(match.group(1))
            if pattern.groups == 1:
                found.add(first)
                continue
            raw = match.group(2)  # a range: both ends, when the end is within a century
            end = int(raw) if len(raw) == 4 else first // 100 * 100 + int(raw)
            if first <= end <= first + 100:
                found.update((first, end))
    return tuple(sorted(found))


def test_scanning_only_around_candidates_finds_what_a_full_scan_finds(
    topic_passages: list[Passage],
) -> None:
    texts = [p.indexed_text for p in topic_passages]
    assert sum(bool(full_scan(t)) for t in texts) > len(texts) // 3  # years are common
    assert [extract_years(t) for t in texts] == [full_scan(t) for t in texts]


FUZZ_PIECES = (
    "in", "the", "The", "IN", "as of", "beginning of", "summer", "since", "1990", "2000",
    "1999", "2101", "12345", "1914-18", "1990–2000–2010", "(1784", "(c.", "1200)", "ca.",
    "b.", "-", "–", "to", "and", "March", "Sept.", "5,", "30th", "her", "whose", "’s",
    "Act", "Treaty", "mid-2019", "1990s", "2019-03-05", "present", "onwards", "km",
    "people", "season", "election", "parliamentary", "world", "cup", "Cup", "X", "20",
    "19", "1,500", "$1200", "2,019", ",", ".", "(", ")", "\n",
)


def test_scanning_around_candidates_agrees_on_adversarial_spacing() -> None:
    # Long whitespace runs stretch matches (every \s+ is unbounded), and text glued to
    # years tests the window edges: the windows must still hold every match whole.
    rng = random.Random(7)
    gaps = ("", " ", "  ", "\n", " " * 60, "\t" * 40)
    for _ in range(3000):
        text = "".join(rng.choice(FUZZ_PIECES) + rng.choice(gaps)
                       for _ in range(rng.randint(1, 25)))
        assert extract_years(text) == full_scan(text), text
