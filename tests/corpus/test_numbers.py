"""Numbers read from digits and words alike (each expected set worked out by hand)."""

from __future__ import annotations

import pytest

from freshwiki.corpus import NUMBER_WORDS, numbers_in


@pytest.mark.parametrize(("text", "expected"), [
    ("He joined the Academy at seventeen", {"17"}),
    ("thirty-seven years later", {"37"}),
    ("two hundred and five ships", {"205"}),
    ("a thousand and one nights", {"1001"}),
    ("two million people", {"2000000"}),
    ("1.5 million people", {"1.5"}),  # the digits carry the number; "million" adds nothing
    ("1,000 men in 3,4", {"1000", "3", "4"}),  # "3,4" is a list, not three thousand and four
    ("one two three", {"1", "2", "3"}),  # adjacent units are separate numbers
    ("nineteen eighty-four", {"19", "84"}),
    ("hundreds of them", set()),
    ("In 1659 and 1671", {"1659", "1671"}),
])
def test_cardinals(text: str, expected: set[str]) -> None:
    assert numbers_in(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("the 3rd edition", {"3th"}),
    ("the third edition", {"3th"}),
    ("the twenty-first century", {"21th"}),
    ("the first of 12", {"1th", "12"}),
    ("its two hundredth anniversary", {"200th"}),
])
def test_ordinals_only_when_asked(text: str, expected: set[str]) -> None:
    assert numbers_in(text, ordinals=True) == expected
    assert not any(n.endswith("th") for n in numbers_in(text))


def test_spellings_of_one_number_compare_equal() -> None:
    assert numbers_in("aged seventeen", ordinals=True) == numbers_in("aged 17", ordinals=True)
    assert numbers_in("the 21st century", ordinals=True) == numbers_in(
        "the twenty-first century", ordinals=True)


def test_number_words_are_the_cardinals_up_to_hundred() -> None:
    assert {"one", "seventeen", "ninety", "hundred"} <= NUMBER_WORDS
    assert not {"zero", "thousand", "first"} & NUMBER_WORDS
