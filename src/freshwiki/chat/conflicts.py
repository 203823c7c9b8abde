"""Spot retrieved facts that disagree on a date, a year or a number the user asked about.

WikiContradict's lesson is that a model given two passages that disagree tends to pick one
silently. So disagreements are found *before* the reply is written, by a small deterministic
detector rather than by asking the model (a 1.5B model misses most of them), and the
compose prompt is told which passages disagree and that it must state both. If the reply
still does not give both values with both citations, the pipeline appends a one-line note
that does (:func:`conflict_note`), so the user always sees the disagreement.

The detector compares *mentions* of three kinds: dates ("21 August 1968", "April 1993",
"the 8th of January 1747"), years (1500-2099, also those inside dates) and counts with
their unit ("53 episodes", "68 million people", "12%"). Two facts of different passages
disagree when:

- they have mentions of the same kind (counts: of the same unit) that do not agree (dates
  agree when every part both state is equal, so "April 1993" agrees with "6 April 1993"),
  and neither fact also states a value agreeing with the other's: then the two agree
  somewhere and the difference is about something else;
- they are about the same subject: from the same article, or each names the other's article
  (its title's words), so two tournaments' dates are not a disagreement;
- they are about the same thing: their content words (whole fact, numbers and months left
  out) share at least two words and at least a fifth of them, including one word that is
  not in either article title ("KAT was founded in 2008" and "KAT went offline in 2016"
  share only their subject), unless the two are dates at most a month apart;
- it bears on the question: the shared words overlap the question's, or the question asks
  "when"/"what year"/"date" (dates, years) or "how many"/"how much" (counts).

Of the disagreeing pairs, the closest values are reported (2 March 1881 vs 3 March 1881,
not the birth date vs the death date), dates before years before counts. Validated on real
WikiContradict pairs (see ``tests/chat/test_conflicts.py``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from freshwiki.chat._evidence import STOPWORDS, content_words
from freshwiki.chat._types import Conflict, Fact
from freshwiki.corpus import numbers_in

_TOKEN = re.compile(
    r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:st|nd|rd|th)?|%|[^\W\d_]+(?:['’][^\W_]+)?"
)
_MONTH_NAMES = ("january february march april may june july august september october "
                "november december")
_MONTHS = {name: i for i, name in enumerate(_MONTH_NAMES.split(), start=1)}
_MONTHS.update({name[:3]: i for name, i in list(_MONTHS.items()) if name != "may"})
_MONTHS["sept"] = 9
_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12,
}
_YEAR = re.compile(r"1[5-9]\d\d|20\d\d")
_WHEN = re.compile(r"\b(?:when|what year|which year|what day|what date|date|year|born|died)\b",
                   re.IGNORECASE)
_HOW_MANY = re.compile(r"\b(?:how (?:many|much|long|old|big|tall|large)|number of|count)\b",
                       re.IGNORECASE)
_KIND_ORDER = {"date": 0, "year": 1}
_RAW_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W_]+)?")


@dataclass(frozen=True)
class Mention:
    """A date, year or count stated in a fact.

    Attributes:
        kind: ``date``, ``year`` or ``count:UNIT``.
        parts: ``(year, month, day)`` for dates (0 where unstated), ``(value,)`` otherwise.
        shown: As the fact states it ("21 August 1968", "53 episodes").
        position: Token index, to describe what the mention is about.
    """

    kind: str
    parts: tuple[float, ...]
    shown: str
    position: int

    def agrees(self, other: Mention) -> bool:
        """Same kind and no stated part differs."""
        if self.kind != other.kind:
            return False
        if self.kind != "date":
            return self.parts == other.parts
        return all(a == b or 0 in (a, b) for a, b in zip(self.parts, other.parts, strict=True))

    def distance(self, other: Mention) -> float:
        """How far apart the values are (relative for counts), to pick the closest pair."""
        if self.kind == "date":
            y1, m1, d1 = self.parts
            y2, m2, d2 = other.parts
            both = [(a, b, w) for a, b, w in ((y1, y2, 372), (m1, m2, 31), (d1, d2, 1)) if a and b]
            return float(sum(abs(a - b) * w for a, b, w in both))
        a, b = self.parts[0], other.parts[0]
        if self.kind == "year":
            return abs(a - b)
        return abs(a - b) / max(abs(a), abs(b), 1.0)


@dataclass(frozen=True)
class Finding:
    """A detected disagreement, with what the compose prompt and the note need."""

    conflict: Conflict
    values: tuple[str, str]
    numbers: tuple[frozenset[str], frozenset[str]]
    """Each value's numbers, to check the reply states both."""


def _number(token: str) -> float | None:
    if token in _NUMBER_WORDS:
        return float(_NUMBER_WORDS[token])
    token = re.sub(r"(?:st|nd|rd|th)$", "", token)
    try:
        return float(token.replace(",", ""))
    except ValueError:
        return None


def _day(token: str) -> int:
    value = _number(token) if token[:1].isdigit() else None
    return int(value) if value is not None and value.is_integer() and 1 <= value <= 31 else 0


def mentions(text: str) -> list[Mention]:
    """The dates, years and counts ``text`` states.

    A number glued to a name ("P-700", "A80") is part of the name, not a count.
    """
    spans = [m.span() for m in _TOKEN.finditer(text)]
    tokens = [text[a:b] for a, b in spans]
    lower = [t.lower() for t in tokens]

    def shown(first: int, last: int) -> str:
        return text[spans[first][0]:spans[last][1]]

    found: list[Mention] = []
    in_date: set[int] = set()
    for m, token in enumerate(lower):
        month = _MONTHS.get(token)
        if month is None or (token == "may" and not _date_like(lower, m)):
            continue
        first = last = m
        day = 0
        if m >= 1 and _day(lower[m - 1]):
            day, first = _day(lower[m - 1]), m - 1
        elif m >= 2 and lower[m - 1] == "of" and _day(lower[m - 2]):
            day, first = _day(lower[m - 2]), m - 2
        elif m + 1 < len(lower) and _day(lower[m + 1]) and not _YEAR.fullmatch(lower[m + 1]):
            day, last = _day(lower[m + 1]), m + 1
        year = 0
        if last + 1 < len(lower) and _YEAR.fullmatch(lower[last + 1]):
            year, last = int(lower[last + 1]), last + 1
        if not day and not year:
            continue
        in_date.update(range(first, last + 1))
        found.append(Mention("date", (float(year), float(month), float(day)),
                             shown(first, last), m))
    for i, token in enumerate(lower):
        value = _number(token)
        if value is None or _in_name(text, spans[i][0]):
            continue
        if _YEAR.fullmatch(token):
            found.append(Mention("year", (value,), tokens[i], i))
            continue
        if i in in_date:
            continue
        j = i + 1
        if j < len(lower) and lower[j] in _SCALES:
            value *= _SCALES[lower[j]]
            j += 1
        unit_at = next((n for n in range(j, min(j + 3, len(lower)))
                        if lower[n] in ("%", "percent") or _is_word(lower[n])), None)
        if unit_at is None:
            continue
        unit = "percent" if lower[unit_at] in ("%", "percent") else _stem(lower[unit_at])
        found.append(Mention(f"count:{unit}", (value,), shown(i, unit_at), i))
    return found


def _in_name(text: str, start: int) -> bool:
    before = text[max(start - 2, 0):start]
    return bool(before) and (before[-1].isalpha() or (before[-1] == "-" and before[:1].isalpha()))


def _date_like(lower: Sequence[str], m: int) -> bool:
    """Whether "may" at ``m`` is the month: next to a day number or followed by a year."""
    around = [lower[n] for n in (m - 1, m + 1) if 0 <= n < len(lower)]
    return any(_day(t) or _YEAR.fullmatch(t) for t in around)


def _stem(word: str) -> str:
    words = content_words(word)
    return words[0] if words else word


def _is_word(token: str) -> bool:
    return token.isalpha() and token not in STOPWORDS and token not in _SCALES


def _words(fact: Fact) -> frozenset[str]:
    return frozenset(w for w in content_words(fact.text) if w not in _MONTHS)


_QUALIFIER = re.compile(r"\s*\([^)]*\)|^List of\s+|\s+(?:episodes|characters|seasons?)$",
                        re.IGNORECASE)


def _subject(title: str) -> str:
    """What a title names, without Wikipedia's list and disambiguation qualifiers.

    "List of Silicon Valley episodes" and "Silicon Valley (TV series)" both name Silicon Valley.
    """
    return _QUALIFIER.sub("", _QUALIFIER.sub("", title)).strip() or title


def _title_numbers(title: str) -> frozenset[str]:
    """The numbers in a title, which tell editions of one series apart.

    :func:`content_words` drops numbers, so "The Voice (American TV series) season 24" and
    "... season 25" looked like one subject, and their premiere dates like a disagreement
    (measured: all five conflict notes of the chat_accuracy run were such pairs).
    """
    return frozenset(re.findall(r"\d+", title))


def _same_subject(a: Fact, b: Fact) -> bool:
    """Whether two facts can be about one subject: same article, or one names the other's.

    Titles whose numbers differ name two editions of a series, never one subject.
    Facts of "2023 Korea Masters" and "2023 Japan Masters" share many words (badminton,
    tournament, November 2023) but not their subject; their dates are two events, not a
    disagreement; nor are "2024 Badminton Asia Championships" and "... Asia Team
    Championships". Facts of two articles count when each names the other's subject: the
    words of each title (list and disambiguation qualifiers removed) are in the other fact
    or its title.
    """
    if a.source.title == b.source.title:
        return True
    numbers_a, numbers_b = _title_numbers(a.source.title), _title_numbers(b.source.title)
    if numbers_a and numbers_b and numbers_a != numbers_b:
        return False  # two editions: season 24 / 25, the 1991 / 1992 election, STM-1 / STM-4

    def names(fact: Fact, other: Fact) -> bool:
        title = set(content_words(_subject(fact.source.title)))
        return bool(title) and title <= set(content_words(f"{other.source.title} {other.text}"))

    return names(a, b) and names(b, a)


def _related(a: Fact, b: Fact) -> tuple[frozenset[str], bool] | None:
    """Shared words if the facts are about the same thing, and whether only by their subject.

    Sharing only title words is enough for dates that are a near miss (see
    :func:`_disagreement`), not for anything else.
    """
    if not _same_subject(a, b):
        return None
    wa, wb = _words(a), _words(b)
    shared = wa & wb
    titles = set(content_words(a.source.title)) | set(content_words(b.source.title))
    if len(shared) >= 2 and len(shared) / len(wa | wb) >= 0.2:
        return shared, not (shared - titles)
    return None


def _asked(kind: str, shared: frozenset[str], question: str) -> bool:
    if shared & set(content_words(question)):
        return True
    if kind in ("date", "year"):
        return bool(_WHEN.search(question))
    return bool(_HOW_MANY.search(question))


def detect_conflicts(facts: Sequence[Fact], question: str, *, limit: int = 3) -> list[Finding]:
    """Disagreements among ``facts`` that bear on ``question`` (see the module docstring)."""
    parsed = [mentions(f.text) for f in facts]
    findings: list[Finding] = []
    for i in range(len(facts)):
        for j in range(i + 1, len(facts)):
            if facts[i].source.passage_id == facts[j].source.passage_id:
                continue
            related = _related(facts[i], facts[j])
            if related is None:
                continue
            shared, subject_only = related
            finding = _disagreement(i, j, facts[i], parsed[i], parsed[j], shared, question,
                                    subject_only)
            if finding is not None:
                findings.append(finding)
                if len(findings) >= limit:
                    return findings
    return findings


def _disagreement(i: int, j: int, fact: Fact, left: Sequence[Mention],
                  right: Sequence[Mention], shared: frozenset[str], question: str,
                  subject_only: bool) -> Finding | None:
    """The closest disagreeing pair of mentions, if any.

    Facts sharing only their subject's name ("Karl Weyprecht ... 2 March 1881" and "Karl
    Weyprecht died on 3 March 1881") count only when they give dates at most a month
    apart: such near misses are the typical contradiction, while "founded in 2008" and
    "went offline in 2016" are two different facts about one subject.
    """
    candidates = []
    for a in left:
        for b in right:
            if a.kind != b.kind or a.agrees(b) or not _asked(a.kind, shared, question):
                continue
            if subject_only and (a.kind != "date" or a.distance(b) > 31):
                continue
            if any(m.agrees(a) for m in right) or any(m.agrees(b) for m in left):
                continue
            candidates.append((_KIND_ORDER.get(a.kind, 2), a.distance(b), a, b))
    if not candidates:
        return None
    _, _, a, b = min(candidates, key=lambda c: (c[0], c[1]))
    if a.kind.startswith("count:"):
        about = f"the number of {a.shown.split()[-1]}"
    else:
        words = [raw for raw in _RAW_WORD.findall(fact.text)
                 if content_words(raw) and content_words(raw)[0] in shared]
        label = "date" if a.kind == "date" else "year"
        about = f"the {label} ({' '.join(list(dict.fromkeys(words))[:5])})"
    return Finding(
        Conflict(about=about, facts=(i, j)),
        values=(a.shown, b.shown),
        numbers=(frozenset(numbers_in(a.shown)), frozenset(numbers_in(b.shown))),
    )


def stated(finding: Finding, reply: str, numbers: tuple[int, int]) -> bool:
    """Whether ``reply`` (raw markers) gives both values and cites both passages."""
    markers = " ".join(re.findall(r"\[[\d,;\s]+\]", reply))
    cited = {int(n) for n in re.findall(r"\d+", markers)}
    said = numbers_in(re.sub(r"\[[\d,;\s]+\]", " ", reply))
    return set(numbers) <= cited and finding.numbers[0] <= said and finding.numbers[1] <= said


def conflict_note(finding: Finding, numbers: tuple[int, int]) -> str:
    """One sentence giving both values with their citations (raw passage numbers)."""
    a, b = finding.values
    return (f"Note: the sources disagree on {finding.conflict.about}: "
            f"{a} according to [{numbers[0]}], {b} according to [{numbers[1]}].")
