"""Does the corpus cover the question? Its subject, found (or not) in the retrieved passages.

The checked mode (:mod:`freshwiki.chat.checked`) abstains in two cases, and this module
decides the first one by rules, before any model call:

1. **No passage is about the subject.** The question's *subject units* are its names, each
   joined with a number written next to it ("the 2031 Cricket World Cup", "UFC 272",
   "Miss Universe 2031": the edition is part of what is asked about). A passage is about the
   subject when it states more than half of the units (its title counts); when no retrieved
   passage is, the answer is "I don't know", naming what was not found and the closest
   articles. More than half, not all: a false premise brings a name of its own ("Why is Murano
   glass the largest collection of the Museum Giuseppe Gianetti?"), and the reply should
   correct it, not give up; and a passage whose title the question names in full is about
   it whatever else the question names (:func:`named_by`). Numbers standing alone ("70
   councillors") are not units: they are what a question may get wrong. A question without
   names (definitions, "what happens to a distribution as its scale grows") is never refused
   here.
2. **The passages about it do not state what was asked.** Decided after the answer, by its
   check: nothing the model wrote survives (:mod:`freshwiki.chat.checked`).

Measured on 221 earlier development questions whose answer is in the corpus: the rule refused
6, four of them for a possessive ("Hanzee Dent's", since fixed in
:func:`~freshwiki.chat.verify.stated`) and two where retrieval missed the lead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from freshwiki.chat._types import Evidence
from freshwiki.chat.verify import key_spans, stated

_DIGIT = re.compile(r"\d")


def subject_units(question: str) -> list[str]:
    """The question's names, each with a number written right before or after it.

    "Who won the 2023 Cricket World Cup?" → ["2023 Cricket World Cup"]; "Why does Brighton and
    Hove City Council have 70 councillors?" → ["Brighton", "Hove City Council"].
    """
    spans = key_spans(question)
    located: list[tuple[int, int, str]] = []
    cursor = 0
    for span in spans:
        at = question.find(span, cursor)
        if at < 0:
            at = question.find(span)
        if at < 0:
            continue
        located.append((at, at + len(span), span))
        cursor = at + len(span)
    units: list[tuple[int, int]] = []
    numbers: list[tuple[int, int]] = []
    for start, end, span in located:
        (numbers if _DIGIT.search(span) and not _has_letters(span) else units).append(
            (start, end))
    merged = []
    for start, end in units:
        for n_start, n_end in numbers:
            if n_start >= end and re.search(r"['’]s$", question[start:end]):
                continue  # "Christina Aguilera's 2002 music video": the year is the video's
            between = question[n_end:start] if n_end <= start else question[end:n_start]
            if between.strip(" -–") == "" and len(between) <= 2:
                start, end = min(start, n_start), max(end, n_end)
        merged.append(question[start:end])
    return list(dict.fromkeys(merged))


def _has_letters(span: str) -> bool:
    return any(c.isalpha() for c in span) and not re.fullmatch(
        r"[\d\s.,%]+(?:st|nd|rd|th)?", span)


def named_by(question: str, title: str, units: Sequence[str]) -> bool:
    """Whether the question names the article ``title`` in full ("malice murder", "The Connells").

    Such a passage is about the subject even when the question brings names of its own that
    it lacks, which is what a false premise does ("What is the penalty for malice murder under
    Texas law?": the lead says Georgia; "Texas" was the only unit, and the chat refused).
    One-word titles count only as a whole unit: "Bitcoin" inside "the Bitcoin Museum in Oslo"
    is not the museum.
    """
    name = re.sub(r"\s*\([^()]*\)\s*$", "", title).strip()
    if not name or re.search(rf"(?<!\w){re.escape(name)}(?!\w)", question, re.IGNORECASE) is None:
        return False
    return len(name.split()) >= 2 or any(u.casefold() == name.casefold() for u in units)


def names_article(question: str, evidence: Evidence) -> bool:
    """Whether the question is plainly about this passage's article.

    Either it names the article in full (:func:`named_by`), or it names subjects and the
    passage states every one of them: "the Zoli Cabinet" is not the title "Zoli government",
    but the lead opens with it. A question naming nothing is about no article in particular,
    even though :func:`coverage` then counts every passage as about it.
    """
    units = subject_units(question)
    if named_by(question, evidence.title, units):
        return True
    text = evidence.titled
    return bool(units) and all(stated(unit, text) for unit in units)


@dataclass(frozen=True)
class Coverage:
    """What the retrieved passages say about the question's subject.

    Attributes:
        units: The question's subject units.
        about: The passages about the subject, best first (all passages when the question
            names nothing).
        missing: The units no passage about the subject states (all of them when none is).
    """

    units: tuple[str, ...]
    about: tuple[Evidence, ...]
    missing: tuple[str, ...]

    @property
    def covered(self) -> bool:
        """Some passage is about the subject."""
        return bool(self.about)


def coverage(question: str, passages: Sequence[Evidence]) -> Coverage:
    """Which passages are about the question's subject (see the module docstring)."""
    units = subject_units(question)
    if not units:
        return Coverage((), tuple(passages), ())
    scored = []
    for rank, evidence in enumerate(passages):
        text = evidence.titled
        have = [unit for unit in units if stated(unit, text)]
        if len(have) * 2 > len(units) or named_by(question, evidence.title, units):
            scored.append((-len(have), rank, evidence))
    about = tuple(e for _, _, e in sorted(scored, key=lambda item: item[:2]))
    if not about:
        return Coverage(tuple(units), (), tuple(units))
    best = about[0].titled
    return Coverage(tuple(units), about, tuple(u for u in units if not stated(u, best)))
