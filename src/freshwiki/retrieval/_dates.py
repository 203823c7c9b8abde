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

Speed: extraction runs on every passage an index takes in, and running the 16 patterns over
whole texts took ~400 µs per topic passage, more than everything else the passage table
does and 10 minutes per million passages. Every match contains four digits starting with 1
or 2, so only the text around such candidates is searched (42% of the topic passages have
none), with windows proven to hold each match whole (see :func:`extract_years`): ~60 µs,
with exactly the same results (tests compare against full scans on real and adversarial
text).
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

# Patterns whose match begins with the year itself (after zero-width checks only), so they
# are tried with ``match`` at each year candidate; ranges ("1990-2000", "1914-18", "1990 to
# 2000"; a short end completes the century, word ranges need full years) are among them.
_AT_YEAR: tuple[re.Pattern[str], ...] = (
    # 2021-03-05
    re.compile(rf"{_LEFT}\b({_YEAR})-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b"),
    re.compile(rf"{_LEFT}\b({_YEAR})\s*[–—-]\s*(?:present|onwards|now|today)\b"),
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
_RANGES: tuple[re.Pattern[str], ...] = (
    re.compile(rf"{_LEFT}\b({_YEAR})\s*[–—-]\s*({_YEAR}|\d{{2}})\b{_RIGHT}"),
    re.compile(rf"{_LEFT}\b({_YEAR})\s+(?:to|and|until|till|through)\s+({_YEAR})\b{_RIGHT}"),
)
# "in 2019, as of 2021, the summer of 1969 ...": a context phrase (at most two words, then
# perhaps "the") right before the year. The most expensive pattern to scan for, so it is
# only run from the third word before each candidate (see ``extract_years``).
_CONTEXT = re.compile(
    rf"(?i:\b(?:{_CONTEXT_WORDS}))\s+(?:the\s+)?{_LEFT}({_YEAR})\b{_RIGHT}"
)
# Other patterns with context before the year (at most ~16 non-space characters of it).
_BEFORE_YEAR: tuple[re.Pattern[str], ...] = (
    # March 5, 2021 / March 2021 / Sept. 2019
    re.compile(rf"\b{_MONTH}\s+(?:\d{{1,2}}(?:st|nd|rd|th)?,?\s+)?({_YEAR})\b{_RIGHT}"),
    # 5 March 2021
    re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH},?\s+({_YEAR})\b{_RIGHT}"),
    # mid-2019, early-1990s, post-2008
    re.compile(rf"(?i:\b(?:mid|early|late|pre|post))-({_YEAR})(?:s\b|\b){_RIGHT}"),
    # (2019), (c. 1200); (1920-2001) is handled by the range pattern.
    re.compile(rf"\((?:c\.\s*|ca\.\s*)?({_YEAR})\)"),
    # Lifespans: (1784 - 22 April 1830)
    re.compile(rf"\((?:c\.\s*|b\.\s*)?({_YEAR})\s*[–—-]"),
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
)
_PATTERNS: tuple[re.Pattern[str], ...] = (*_AT_YEAR, *_RANGES, _CONTEXT, *_BEFORE_YEAR)
"""Every pattern; a year is any group of any match of one of them (ranges: both ends)."""

# Where to look. Every match of every pattern contains a year group, i.e. four digits
# starting with 1 or 2, so text without such a candidate names no year and only the text
# around candidates needs scanning (regex scanning costs per character and pattern; the
# year-first patterns are only tried *at* candidates). Spans are counted in
# non-space characters, because every ``\s+``/``\s*`` of a pattern may stretch a match
# without limit: a match starts at most ~16 non-space characters before its year ("30th
# September, 2021", "beginning of the 1990") and, with its lookaheads, reaches at most ~17
# past the year's start ("1990 inhabitants", "1984 v...").
_CANDIDATE = re.compile(r"[12]\d{3}")
_BEFORE = re.compile(r"(?:\s*\S){1,24}\s*")  # matched on the reversed text
_AFTER = re.compile(r"(?:\s*\S){1,24}\s*")
_THREE_WORDS_BEFORE = re.compile(r"(?:\s*\S+){1,3}\s*")  # reversed text, too


def extract_years(text: str) -> tuple[int, ...]:
    """The distinct years ``text`` mentions as dates, ascending.

    Args:
        text: Any text; for passages the indexed text (heading and body), so a year in an
            article title such as "2019 Cricket World Cup" counts.

    Returns:
        Sorted unique years in 1000-2099. Empty when the text names no date.
    """
    candidates = [m.start() for m in _CANDIDATE.finditer(text)]
    if not candidates:
        return ()
    found: set[int] = set()
    # Patterns that start at their year: tried with ``match`` at each candidate. As in a
    # full ``finditer`` scan, a match resumes the scan at its end (only a range consumes a
    # second year: in "1990-2000-2010", 2010 is not the start of another range).
    for pattern in (*_AT_YEAR, *_RANGES):
        resume = 0
        for start in candidates:
            if start < resume:
                continue
            match = pattern.match(text, start)
            if match is None:
                continue
            resume = match.end()
            first = int(match.group(1))
            if pattern.groups == 1:
                found.add(first)
                continue
            raw_end = match.group(2)
            end = int(raw_end) if len(raw_end) == 4 else first // 100 * 100 + int(raw_end)
            if first <= end <= first + 100:
                found.update((first, end))
    # Patterns with context before the year: ``finditer`` over windows around the
    # candidates, merged where they touch. A window holds every match of its candidates
    # whole, with all the text its lookarounds inspect (they also see before the window),
    # so the matches are exactly those of a scan of the whole text.
    backwards = text[::-1]
    n = len(text)
    windows: list[list[int]] = []
    for start in candidates:
        high = _end(_AFTER.match(text, start), n)
        low = n - _end(_BEFORE.match(backwards, n - start), n) if start else 0
        if windows and low <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], high)
        else:
            windows.append([low, high])
        # A context-phrase match ends at its year and holds no digit before it, so two
        # never overlap, and it starts within three words before its year. So a window
        # per candidate, that short, finds this candidate's match as a full scan would;
        # matches of other candidates in it may be cut short by its end and are ignored.
        context_low = n - _end(_THREE_WORDS_BEFORE.match(backwards, n - start), n)
        for match in _CONTEXT.finditer(text, context_low if start else 0, high):
            if match.start(1) == start:
                found.add(int(match.group(1)))
    for pattern in _BEFORE_YEAR:
        for low, high in windows:
            for match in pattern.finditer(text, low, high):
                found.add(int(match.group(1)))
    return tuple(sorted(found))


def _end(match: re.Match[str] | None, default: int) -> int:
    return default if match is None else match.end()
