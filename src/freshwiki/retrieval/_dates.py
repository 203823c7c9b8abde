"""Years a passage talks about, found in its text at index time.

Time-aware reranking needs to know what time a passage *describes*, which its revision
timestamp alone does not say: a 2024 revision may state "as of 2019, the population was ...".
We extract the years (1000-2099) the text mentions *as dates*, and only in contexts that make
a bare four-digit number a date, because Wikipedia is full of numbers in that range that are
not years ("1500 soldiers", "2,019 km", "$1200").

Accepted contexts (each checked by a test):

- full dates: ``2021-03-05``, ``March 5, 2021``, ``5 March 2021``, ``Sept. 2019``;
- month and year: ``March 2021``, ``as of March 2021``;
- a temporal preposition or adverb before the year: ``in 2019``, ``since 1990``,
  ``as of 2021``, ``by 2030``, ``during 1944``, ``early 2000``, ``the summer of 1969``...;
- ranges: ``1990-2000`` (any dash), ``1914-18``, ``from 1990 to 2000``, ``between 1990 and 2000``;
- a year in parentheses: ``(2019)``, ``(c. 1200)``, or opening a lifespan ``(1784 - 1830)``;
- a year used as a modifier: ``a 1984 video game``, ``her 2008 album``, ``Act 1817``,
  ``1994 in Korea``, ``2008-onwards``;
- a year naming an event: ``2019 Cricket World Cup`` (a capitalised word follows),
  ``the 2016 election``, ``2020 season``, ``1990s`` (a decade counts as its first year).

A number followed by a unit or a count noun (``2000 km``, ``1500 people``, ``1200 BC``) or
glued to other digits, commas, decimals or a currency sign is never a year.

On the 11,237 topic passages, 57% mention a year. Of the 15,408 four-digit numbers in
range, 15,043 are taken as years; in a sample of those taken none was a count or an
address, while the 365 left out are mostly years in bare lists ("Cockerell, 1922",
"1997, 1998 & 1999") plus real non-years ("1000 m", "Form 1099-R"): the extractor errs on
the side of missing a year rather than inventing one.

Only years are kept (not months or days): the time rerank scores distances in years, and a
year is what the ``year=YYYY`` intent names.
"""

from __future__ import annotations

import re

_YEAR = r"(?:1\d{3}|20\d{2})"
_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December|Jan\.?|Feb\.?|Mar\.?|Apr\.?|Jun\.?|Jul\.?|Aug\.?|Sept?\.?|Oct\.?|Nov\.?|Dec\.?)"
)
# Never a year when glued to digits, separators or currency on the left...
_LEFT = r"(?<![\d,.$£€¥#/])"
# ... or followed by more digits, a thousands separator, a decimal part, or a unit/count noun.
_UNITS = (
    r"km|kilometres|kilometers|mi|miles|m|metres|meters|ft|feet|kg|lb|lbs|tons|tonnes|ha|"
    r"hectares|acres|people|persons|inhabitants|residents|students|members|soldiers|troops|"
    r"men|women|children|employees|workers|units|copies|votes|species|pages|words|cases|"
    r"deaths|BC|BCE|B\.C\.|AD\s+\d|mm|cm|MW|GW|kW|hp|rpm|°|metre|meter|yards|block|"
    r"seats|homes|houses|pounds|dollars|euros|rupees|yen"
)
_RIGHT = rf"(?!\d|,\d|\.\d|\s*(?:{_UNITS})\b)"

_CONTEXT_WORDS = (
    r"in|since|until|till|by|from|during|after|before|circa|c\.|ca\.|b\.|d\.|as\s+of|"
    r"early|mid|late|spring|summer|autumn|fall|winter|year|between|through|"
    r"(?:end|start|beginning|middle|half|summer|spring|autumn|fall|winter|class|season)\s+of|"
    r"throughout|within|starting|beginning|ending|ended|began|founded|established|born|died|"
    r"released|published|opened|closed|built|elected|re-elected|appointed|completed|"
    r"launched|introduced|formed|dissolved|retired|debuted|premiered"
)

_PATTERNS: tuple[re.Pattern[str], ...] = (
    # 2021-03-05
    re.compile(rf"{_LEFT}\b({_YEAR})-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b"),
    # March 5, 2021 / March 2021 / Sept. 2019
    re.compile(rf"\b{_MONTH}\s+(?:\d{{1,2}}(?:st|nd|rd|th)?,?\s+)?({_YEAR})\b{_RIGHT}"),
    # 5 March 2021
    re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH},?\s+({_YEAR})\b{_RIGHT}"),
    # in 2019, as of 2021, the summer of 1969 ...
    re.compile(rf"(?i:\b(?:{_CONTEXT_WORDS}))\s+(?:the\s+)?{_LEFT}({_YEAR})\b{_RIGHT}"),
    # mid-2019, early-1990s, post-2008
    re.compile(rf"(?i:\b(?:mid|early|late|pre|post))-({_YEAR})(?:s\b|\b){_RIGHT}"),
    # (2019), (c. 1200); (1920-2001) is handled by the range pattern.
    re.compile(rf"\((?:c\.\s*|ca\.\s*)?({_YEAR})\)"),
    # Lifespans and open ranges: (1784 - 22 April 1830), 2008-onwards, 2019-present
    re.compile(rf"\((?:c\.\s*|b\.\s*)?({_YEAR})\s*[–—-]"),
    re.compile(rf"{_LEFT}\b({_YEAR})\s*[–—-]\s*(?:present|onwards|now|today)\b"),
    # A year as a modifier after a determiner or possessive: a 1984 video game, her 2008
    # album, Cook's 1971 theorem (counts such as "the 1500 soldiers" fail the unit check).
    re.compile(
        rf"(?i:\b(?:a|an|the|her|his|its|their|our|this|that|whose)\s+|['’]s\s+)"
        rf"({_YEAR})\s+(?=[A-Za-z]){_RIGHT}"
    ),
    # Acts, treaties and events named with their year: Seditious Meetings Act 1817
    re.compile(
        rf"\b(?:Act|Treaty|Convention|Accord|Agreement|Constitution|Census|Expo|Games)"
        rf"\s+({_YEAR})\b{_RIGHT}"
    ),
    # "1994 in Korea" (Wikipedia's year-in-topic titles)
    re.compile(rf"{_LEFT}\b({_YEAR})\s+in\s+(?=[A-Z])"),  # "in" + name: not a count
    # 1990s: a decade
    re.compile(rf"{_LEFT}\b({_YEAR})s\b"),
    # 2019 Cricket World Cup, 2016 AFC Champions League (a capitalised name follows)
    re.compile(rf"(?:^|(?<=[\s(\"'“]))({_YEAR}){_RIGHT}\s+(?=[A-Z][A-Za-z])"),
    # the 2016 election / 2020 season / 2011 census
    re.compile(
        rf"{_LEFT}\b({_YEAR})\s+(?=(?:general\s+|presidential\s+|parliamentary\s+|local\s+)?"
        r"(?:election|elections|census|season|seasons|edition|championship|championships|"
        r"tournament|film|album|single|novel|season|war|crisis|pandemic|earthquake|attack|"
        r"attacks|referendum|budget|revolution|coup|flood|floods|riots|protests|games|cup|"
        r"olympics|final|finals|world\s+cup|model\s+year)\b)"
    ),
)
# Ranges: "1990-2000" (any dash), "1914-18" (the short end completes the century), and
# "1990 to 2000" / "1990 and 2000" (full years only, so "1500 to 20" is not a range).
_DASH_RANGE = re.compile(rf"{_LEFT}\b({_YEAR})\s*[–—-]\s*({_YEAR}|\d{{2}})\b{_RIGHT}")
_WORD_RANGE = re.compile(
    rf"{_LEFT}\b({_YEAR})\s+(?:to|and|until|till|through)\s+({_YEAR})\b{_RIGHT}"
)


def extract_years(text: str) -> tuple[int, ...]:
    """The distinct years ``text`` mentions as dates, ascending.

    Args:
        text: Any text; for passages the indexed text (heading and body), so a year in an
            article title such as "2019 Cricket World Cup" counts.

    Returns:
        Sorted unique years in 1000-2099. Empty when the text names no date.
    """
    found: set[int] = set()
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            found.add(int(match.group(1)))
    for range_pattern in (_DASH_RANGE, _WORD_RANGE):
        for match in range_pattern.finditer(text):
            start, raw_end = int(match.group(1)), match.group(2)
            end = int(raw_end) if len(raw_end) == 4 else start // 100 * 100 + int(raw_end)
            if start <= end <= start + 100:
                found.update((start, end))
    return tuple(sorted(found))
