"""The numbers a sentence states, whether written in digits or in words.

Both the snapshot aligner (is this sentence the old one with a number replaced?) and the chat's
checks (does the evidence state the claim's numbers?) compare numbers across two texts that
may write them differently: "seventeen" and "17", "thirty-seven" and "37", "two hundred" and
"200". Reading each number word alone made "thirty-seven" the numbers 30 and 7, so an edit
that only rewrote the words as digits looked like a changed fact. One reader, here, serves
both layers.
"""

from __future__ import annotations

import re

_DIGITS = re.compile(
    r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])\d+(?:\.\d+)?")
_DIGIT_ORDINAL = re.compile(r"(?<![\w.])(\d+)(?:st|nd|rd|th)\b", re.IGNORECASE)
_TOKENS = re.compile(r"[a-z]+|[^a-z\s-]+", re.IGNORECASE)

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_ORDINAL_WORDS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
    "nineteenth": 19, "twentieth": 20, "thirtieth": 30, "fortieth": 40, "fiftieth": 50,
    "sixtieth": 60, "seventieth": 70, "eightieth": 80, "ninetieth": 90, "hundredth": 100,
    "thousandth": 1_000, "millionth": 1_000_000,
}

NUMBER_WORDS = frozenset({*_UNITS, *_TENS, *_SCALES} - {"zero", "thousand", "million",
                                                         "billion"})
"""Cardinal words read as numbers that the chat's checks treat as a number in a claim."""


def numbers_in(text: str, *, ordinals: bool = False) -> set[str]:
    """The numbers ``text`` states, normalised so two spellings of one number compare equal.

    Digits keep their value as written without thousands separators ("1,000" → "1000");
    a run of number words becomes one number ("thirty-seven" → "37", "two hundred and five"
    → "205", "seventeen" → "17").

    Args:
        text: Any text.
        ordinals: Also read ordinals, as ``"<n>th"`` whatever their spelling ("first",
            "1st" → "1th"). Off for the chat's checks, where "second" is as often a unit of
            time and "first" a plain adjective; on for the snapshot aligner, where "3rd" →
            "fourth" is a changed fact.
    """
    found = {m.group(0).replace(",", "") for m in _DIGITS.finditer(text)}
    if ordinals:
        for m in _DIGIT_ORDINAL.finditer(text):
            found.discard(m.group(1))
            found.add(f"{m.group(1)}th")
    found.update(_spelled(text, ordinals=ordinals))
    return found


def _spelled(text: str, *, ordinals: bool) -> list[str]:
    """Numbers written as words, each run of adjacent number words read as one number."""
    numbers: list[str] = []
    total = current = 0
    in_number = False
    last = ""  # "unit", "tens" or "scale": what the run's previous word was

    def flush() -> None:
        nonlocal total, current, in_number, last
        if in_number:
            numbers.append(str(total + current))
        total = current = 0
        in_number = False
        last = ""

    tokens = [t.lower() for t in _TOKENS.findall(text)]
    for i, word in enumerate(tokens):
        if word in _UNITS:
            if in_number and last in ("unit", ""):
                flush()
            if in_number and last == "tens" and _UNITS[word] >= 10:
                flush()
            current += _UNITS[word]
            in_number, last = True, "unit"
        elif word in _TENS:
            if in_number and last in ("unit", "tens") and current % 100 != 0:
                flush()
            current += _TENS[word]
            in_number, last = True, "tens"
        elif word in _SCALES and (in_number or (i > 0 and tokens[i - 1] == "a")):
            scale = _SCALES[word]
            if scale == 100:
                current = (current or 1) * 100
            else:
                total += (current or 1) * scale
                current = 0
            in_number, last = True, "scale"
        elif ordinals and word in _ORDINAL_WORDS:
            value = _ORDINAL_WORDS[word]
            if value >= 100:  # "two hundredth"
                value = (total + (current or 1)) * value if in_number else value
            elif in_number and last in ("tens", "scale"):  # "twenty-first", "hundred and first"
                value += total + current
            else:
                flush()
            numbers.append(f"{value}th")
            total = current = 0
            in_number, last = False, ""
        elif word == "and" and in_number and last == "scale" and i + 1 < len(tokens) and (
                tokens[i + 1] in _UNITS or tokens[i + 1] in _TENS
                or (ordinals and tokens[i + 1] in _ORDINAL_WORDS)):
            continue
        else:
            flush()
    flush()
    return numbers
