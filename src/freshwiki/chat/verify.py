"""Stage 5: a claim is SUPPORTED only when the evidence itself gives the claim's value.

Why not ask the model for a verdict (:mod:`freshwiki.chat.verify_legacy`)? A 1.5B model
asked "does the passage support the claim?" rewards word overlap: shown a passage that names
India as host and ends "Australia won by 6 wickets", it judged "The 2023 Cricket World Cup
was won by India" SUPPORTS. Small models are much better at reading a value off a text
than at judging a relation, so this verifier asks them only to read:

1. **The claim's key spans** (:func:`key_spans`): names, dates and numbers, found by rules.
   The *focus* is the spans the question did not already contain: in "The 2023 Cricket World
   Cup was won by India", asked "Who won the 2023 Cricket World Cup?", that is "India".
2. **Evidence sentences**, not passages: the few sentences of the claim's passages that best
   match it (:func:`check_batch`: a shared evidence block that holds exactly those).
3. **A cloze call**: up to four focus spans, the kind the question asks for first
   (:func:`asked_first`), are each blanked out of the claim ("The 2023 Cricket World
   Cup was won by ___.") and the model fills each blank from the evidence alone, or leaves
   it empty when the evidence does not say. It never sees the claim's value, so it cannot
   echo it.
4. **Deterministic comparison** (:func:`judge`): the filled value equals the claim's value
   (numbers and dates by value, names by words) → candidate SUPPORTS; a different value
   that the evidence really contains → REFUTES, and that value becomes the claim's
   *correction* (what the reply says instead, with its citation); an empty blank or a value
   the evidence lacks → NOT ENOUGH INFO. A SUPPORTS also needs one passage that gives the
   value *and* every other key span of the claim (what it is about: a value read off a
   passage about another subject supports nothing, and corrects nothing), and the claim's
   negation to match its evidence's.

A claim with no key span at all ("KickassTorrents was a torrent directory") is judged by
words alone: SUPPORTS when one evidence sentence contains nearly all its content words with
the same polarity, else NOT ENOUGH INFO. Nothing is ever SUPPORTED on the model's say-so.

``wikichat``'s stage 5 makes one call per claim on that claim's own best sentences
(:func:`check_each`); :func:`check_batch` reads every blank of every claim in one call on a
shared evidence block (stage 8, and the claim benchmark). Measured against the legacy verifier
on real drafts by ``experiments/claim_verification.py``. The checked mode reads the same way,
on its answer's sentences (:mod:`freshwiki.chat.checked`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from freshwiki.chat._calls import TurnCalls, messages_for, prompt
from freshwiki.chat._evidence import (
    STOPWORDS,
    PassageBook,
    content_words,
)
from freshwiki.chat._types import ClaimCheck, Evidence, Verdict
from freshwiki.chat.facts import SentenceScorer, passage_entry, select_sentences
from freshwiki.corpus import NUMBER_WORDS, numbers_in, split_sentences

VERDICTS: tuple[Verdict, ...] = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
BLANK = "___"

_MONTHS = frozenset({
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec",
})
_MONTH = r"(?:" + "|".join(sorted((m.capitalize() for m in _MONTHS), key=len, reverse=True))
_MONTH += r")\.?"
_DATE = re.compile(
    rf"\b(?:\d{{1,2}}\s+{_MONTH}(?:,?\s+\d{{3,4}})?|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?"
    rf"(?:,\s*\d{{3,4}})?|{_MONTH}\s+\d{{3,4}})\b")
# A decade ("the 1880s") is one value: read back as "1880s", it must not look like a change.
# Digits after a letter and a hyphen belong to a name ("F-94", "COVID-19"), not a number:
# "Lockheed F-94 Starfire" read as the number 94 was blanked as "F-___".
_NUMBER = re.compile(r"(?<![\w.])(?<![A-Za-z]-)\d{3}0['’]?s(?!\w)"
                     r"|(?<![\w.])(?<![A-Za-z]-)\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\w)"
                     r"|(?<![\w.])(?<![A-Za-z]-)\d+(?:\.\d+)?(?![A-Z])"
                     r"(?:\s*(?:%|per ?cent|million|billion))?")
# A name: capitalised words, with lower-case joiners inside ("Bank of England", "Vincent
# van Gogh"); hyphens and apostrophes stay inside words ("Israel-Hamas", "O'Neill").
# A capitalised word, or digits fused with a capital ("3M", "2K Games"): part of a name.
_CAP = r"[A-Z][\w'’.\-–]*[\w]|[A-Z]|\d+[A-Z][\w'’\-]*"
_NAME = re.compile(rf"(?:{_CAP})(?:\s+(?:(?:of|the|de|da|del|der|van|von|al|bin|la|le|du)\s+)*"
                   rf"(?:{_CAP}))*")
_WORD_NUMBER = re.compile(r"\b[A-Za-z]+\b")
# Initials are one name with what follows them: "U. S.", "J. F. Mozley" (split into single
# letters, "S" was blanked alone and read back as "government").
_INITIALS = re.compile(r"\b(?:[A-Z]\.\s?){2,}(?:[A-Z][\w'’\-]*(?:\s+[A-Z][\w'’\-]*)*)?")
_NEGATION = re.compile(r"\b(?:not|never|no|none|neither|nor|cannot|n't|without)\b",
                       re.IGNORECASE)
_EMPTY = frozenset({"", "none", "null", "unknown", "not stated", "not given", "n/a", "na",
                    "not mentioned", "not specified", "no information", "not known", "-"})


_OPENERS = frozenset({
    "according", "however", "although", "though", "since", "during", "following", "despite",
    "while", "today", "currently", "besides", "including", "unlike", "like", "yes", "no",
    "under", "over", "within", "without", "among", "between", "through", "across", "along",
    "behind", "beyond", "near", "upon", "toward", "towards", "against", "around", "inside",
    "outside", "beside",
})
"""Words that open a sentence with a capital and name nothing: "According to the 2004
census, ..." has no name "According" (a held-out reply was read as having two values), and
"Under which ...?" no name "Under" (a held-out question got a premise note on it)."""


def key_spans(claim: str) -> list[str]:
    """Dates, numbers and names in ``claim``, in order, without overlaps.

    A capitalised first word counts as a name only when it is not a common word ("The",
    "In", "It"): "India won" has the name India, "The series" has none.
    """
    return [text for _, _, text in span_positions(claim)]


def span_positions(claim: str) -> list[tuple[int, int, str]]:
    """:func:`key_spans` with where each stands: ``(start, end, text)``, in order."""
    taken: list[tuple[int, int, str]] = []

    def add(start: int, end: int, text: str) -> None:
        if any(s < end and start < e for s, e, _ in taken):
            return
        taken.append((start, end, text))

    for match in _DATE.finditer(claim):
        add(match.start(), match.end(), match.group(0))
    for match in _NUMBER.finditer(claim):
        add(match.start(), match.end(), match.group(0))
    for match in _WORD_NUMBER.finditer(claim):
        if match.group(0).lower() in NUMBER_WORDS - {"one"}:  # "one of the", "no one"
            add(match.start(), match.end(), match.group(0))
    for match in _INITIALS.finditer(claim):
        text = match.group(0).rstrip()
        add(match.start(), match.start() + len(text), text)
    for match in _NAME.finditer(claim):
        text = match.group(0)
        start = match.start()
        first, _, rest = text.partition(" ")
        if (first.lower() in STOPWORDS or first.lower() in _OPENERS
                or first.lower().rstrip(".") in _MONTHS):
            # "The Tortured Poets Department": drop the article, keep the name.
            if not rest:
                continue
            start += len(first) + 1
            text = rest
            # "In the TV series": the joiner after a dropped opener is no part of the name.
            joiner = re.match(r"(?:(?:of|the|de|da|del|der|van|von|al|bin|la|le|du)\s+)+", text)
            if joiner:
                start += joiner.end()
                text = text[joiner.end():]
        text = text.rstrip(".")
        if text.lower() in STOPWORDS or text.lower() in _MONTHS or text.lower() in _OPENERS:
            continue
        add(start, start + len(text), text)
    return sorted(taken)


_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")


_ELISION = re.compile(r"\b[dDlL]['’](?=[A-ZÀ-Ý])")


def _words(text: str) -> set[str]:
    """Content words, possessives and elided articles dropped.

    "Hanzee Dent's" names Hanzee Dent; "Bassin d'Arcachon Sud" names Arcachon Sud (the
    question's "d'Arcachon" hid it, and the answer's "Arcachon Sud" looked like a new value).
    """
    return set(content_words(_ELISION.sub("", _POSSESSIVE.sub("", text))))


def stated(span: str, text: str) -> bool:
    """Whether ``text`` states ``span``: the same numbers, and all its words (or prefixes)."""
    if not numbers_in(span) <= numbers_in(text):
        return False
    wanted = _words(span)
    have = _words(text)
    return all(w in have or any(_alike(w, h) for h in have) for w in wanted)


def _alike(a: str, b: str) -> bool:
    """"australia" ~ "australian", "bengaluru" !~ "bangalore": a shared stem of 5+ letters."""
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 5 and long_.startswith(short)


def same_value(claimed: str, found: str) -> bool:
    """Whether the value read from the evidence is the claim's value.

    Numbers and dates compare by value (one may be more precise: "2023" and "7 October
    2023"); names by words, one's words within the other's ("Cummins", "Pat Cummins").
    """
    a_num, b_num = numbers_in(claimed), numbers_in(found)
    if (a_num or b_num) and not (a_num and b_num and (a_num <= b_num or b_num <= a_num)):
        return False
    if _decades(claimed) != _decades(found) and (a_num & b_num) - set(
            _decades(claimed) | _decades(found)) == set():
        return False  # "1980" is not "the 1980s" (a fresh-set reply: "began in 1980")
    a_words = _words(claimed) - _MONTHS
    b_words = _words(found) - _MONTHS
    a_months, b_months = _months(claimed), _months(found)
    if a_months and b_months and not (a_months & b_months):
        return False
    if not a_words or not b_words:
        return bool(a_num or b_num) or not (a_words or b_words)

    def covered(xs: set[str], ys: set[str]) -> bool:
        return all(x in ys or any(_alike(x, y) for y in ys) for x in xs)

    return covered(a_words, b_words) or covered(b_words, a_words)


def _decades(text: str) -> set[str]:
    """Decades named in ``text``: "the 1980s" → {"1980"}."""
    return set(re.findall(r"\b(\d{3}0)['’]?s\b", text))


def _months(text: str) -> set[str]:
    """Month names in ``text``, as their first three letters ("Sept." → "sep")."""
    return {w[:3] for w in re.findall(r"[a-z]+", text.lower()) if w in _MONTHS}


def focus_of(claim: str, question: str | None) -> list[str]:
    """The claim's key spans the question does not already state (all, without a question).

    A claim whose spans all come from the question has no focus: reading back values the
    question gave proves nothing, so it is judged by its words (see :func:`judge`).
    """
    spans = key_spans(claim)
    if not question:
        return spans
    # "Thomas Mills Wood's occupation" names Thomas Mills Wood: blanking him and reading him
    # back SUPPORTED "Thomas Mills Wood is a lawyer" (he is an actor).
    # (Either form states it: "Men's doubles" in the question states the span "Men's".)
    asked = re.sub(r"['’]s\b", "", question)
    return [s for s in spans if not (stated(s, question) or stated(s, asked))]


def _at(claim: str, span: str) -> re.Match[str] | None:
    """The first occurrence of ``span`` in ``claim`` as a whole token, not inside another.

    ``str.replace`` blanked the "4" of "2024" in "4 medals at the 2024 Games" when the year came
    first; a span stands where key_spans found it, between non-word characters.
    """
    return re.search(rf"(?<!\w){re.escape(span)}(?!\w)", claim)


def blanked(claim: str, span: str) -> str:
    """``claim`` with the first whole-token occurrence of ``span`` replaced by the blank."""
    found = _at(claim, span)
    if found is None:
        return claim.replace(span, BLANK, 1)
    return f"{claim[:found.start()]}{BLANK}{claim[found.end():]}"


def corrected(claim: str, wrong: dict[str, str], answers: dict[str, str], text: str) -> str:
    """The claim with its refuted value replaced by the evidence's, if all the rest holds.

    "The 2023 Cricket World Cup was won by India." becomes "... won by Australia." when the
    evidence gives Australia; ``""`` when another part of the claim is not stated either, or
    more than one value disagrees (a Spanish question left "Cricket World Cup" in focus and
    the model read "India" for it: two swaps made "The 2023 Australia was won by India.").
    """
    if len(wrong) != 1 or any(not value for value in answers.values()):
        return ""  # two values wrong at once: more likely a misreading than a correction
    [(span, value)] = wrong.items()
    fixed = _replaced(claim, span, value)
    rest = [s for s in key_spans(claim) if s not in wrong]
    if not all(stated(s, text) for s in rest) or _negated(claim):
        return ""
    return fixed


def _replaced(claim: str, span: str, value: str) -> str:
    """``claim`` with ``span`` replaced by ``value``, without repeating the words around it.

    The model reads a blank with its unit or article: "85.63 kilometers" for "___ kilometers
    long" made "85.63 kilometers kilometers long" (a fresh-set reply).
    """
    found = _at(claim, span)
    if found is None:
        return claim
    before, after = claim[:found.start()], claim[found.end():]
    words = value.split()
    following = after.split()
    for n in range(len(words) - 1, 0, -1):  # the value's last words already follow the span
        if [w.casefold() for w in words[-n:]] == [w.casefold().strip(",.;:") for w in
                                                  following[:n]]:
            value = " ".join(words[:-n])
            break
    return f"{before}{value}{after}"


def hidden(claim: str, question: str | None) -> str:
    """``claim`` with its focus values blanked: the query that finds its evidence sentences.

    Chosen for "won by India", the best sentences were those naming India (the host);
    chosen for "won by ___", they are those about who won.
    """
    for span in focus_of(claim, question):
        claim = blanked(claim, span)
    return claim


def _negated(text: str) -> bool:
    return bool(_NEGATION.search(text))


@dataclass(frozen=True)
class Item:
    """One blank to fill: a claim's focus span, masked."""

    claim: int
    span: str
    text: str


MAX_BLANKS = 4
"""Blanks per claim: each costs ~18 generated tokens, and four names cover a doubles final."""

_ASKS_NAME = re.compile(r"^\s*(?:who|whom|whose|where)\b", re.IGNORECASE)
_ASKS_NUMBER = re.compile(
    r"\b(?:when|what year|which year|what date|how many|how much|how old|how long|how far"
    r"|how tall|how big|how large|what (?:number|percentage|share|score))\b", re.IGNORECASE)


# "Which soldier ...", "What club ...": a thing named (the number questions are tried first).
_ASKS_WHICH = re.compile(r"^\s*(?:which|what)\s+"
                         r"(?!is\b|was\b|are\b|were\b|did\b|does\b|do\b|\w+ed\b)[a-z]",
                         re.IGNORECASE)


def asked_first(spans: Sequence[str], question: str | None) -> list[str]:
    """``spans`` in the order to blank them: the kind the question asks for first.

    A "who" or "where" question asks for names, "when" and "how many" for dates and
    numbers, "which soldier" or "what club" for names; after those, the rest from the end (an
    answer tends to come last). Blanking
    the last three spans of "Radu Albot and Mitchell Krueger won ..., defeating Luke Saville
    and Jordan Thompson in the final 6-1, 4-6" checked the score and let the swapped
    winners through; with the four names blanked the model read the real final.
    """
    def is_number(span: str) -> bool:
        return any(c.isdigit() for c in span) or span.lower() in NUMBER_WORDS

    rest = list(reversed(spans))
    if question and _ASKS_NAME.search(question):
        asked = [s for s in spans if not is_number(s)]
    elif question and _ASKS_NUMBER.search(question):
        asked = [s for s in spans if is_number(s)]
    elif question and _ASKS_WHICH.search(question):
        asked = [s for s in spans if not is_number(s)]
    else:
        asked = []
    return asked + [s for s in rest if s not in asked]


def items_of(claims: Sequence[str], question: str | None) -> list[Item]:
    """Every claim's blanks (at most :data:`MAX_BLANKS` each, see :func:`asked_first`).

    They are listed in the claim's own order: a model filling several blanks of one
    sentence reads them left to right.
    """
    out = []
    for i, claim in enumerate(claims):
        focus = focus_of(claim, question)
        chosen = set(asked_first(focus, question)[:MAX_BLANKS])
        for span in focus:
            if span in chosen:
                out.append(Item(i, span, blanked(claim, span)))
                chosen.discard(span)
    return out


def schema(n: int) -> dict[str, Any]:
    """Exactly ``n`` answers, each a short string ("" when the evidence does not say)."""
    return {
        "type": "object",
        "properties": {
            "answers": {"type": "array", "minItems": n, "maxItems": n,
                        "items": {"type": "string", "maxLength": 80}},
        },
        "required": ["answers"],
        "additionalProperties": False,
    }


def clean_answer(answer: str) -> str:
    """A filled blank, normalised: spaces collapsed, quotes and stops trimmed, "none" → ""."""
    text = " ".join(str(answer).split()).strip(" .,;:\"'")
    return "" if text.lower() in _EMPTY else text


@dataclass(frozen=True)
class Sentence:
    """An evidence sentence and the passage it comes from."""

    text: str
    evidence: Evidence


def sentences_of(passages: Sequence[Evidence]) -> list[Sentence]:
    """Every sentence of ``passages``, titled, in order."""
    return [Sentence(s.text, e) for e in passages for s in split_sentences(e.text)]


def misread(span: str, value: str, claim: str) -> bool:
    """Whether ``value`` was read for another blank than ``span``'s: it says nothing of it.

    With two or three blanks in a sentence the small model shifts answers: asked for "Leeds"
    and "England" in "born in ___, ___" it gave "Leeds" and "1983"; asked for the venue and
    the city it gave the city twice. A year read for a place, a name read for a date, or
    the claim's own other value is not evidence *against* the span, nor is a lower-case
    common word read for a name; each counts as no answer (NOT ENOUGH INFO, never REFUTES).
    """
    if not value or same_value(span, value):
        return False
    if any(c.isdigit() for c in span) != any(c.isdigit() for c in value):
        return True
    if not any(c.isupper() or c.isdigit() for c in value):
        return True  # a common word ("government") read for a name is no other name
    # The claim's own other value, whole or as a name within it ("In Cauda Venenum" read for
    # "Opeth" in "Opeth released In Cauda Venenum": the span is "Cauda Venenum").
    # Numbers stay exact: "2023" is in "17 December 2023", which may still refute a date.
    read = _plain_value(value)
    return any(_plain_value(other) == read
               or (not any(c.isdigit() for c in value + other) and same_value(other, value))
               for other in key_spans(claim) if other != span and not same_value(other, span))


def _plain_value(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def judge(claim: str, question: str | None, answers: dict[str, str],
          sentences: Sequence[Sentence], default: Sequence[Evidence]) -> ClaimCheck:
    """The verdict for one claim from its filled blanks and its evidence sentences.

    Args:
        claim: The claim.
        question: What the user asked (chooses the focus spans), if known.
        answers: Focus span → the value the model read off the evidence ("" for none).
        sentences: The evidence sentences the model saw for this claim.
        default: The claim's passages, for a verdict that rests on no particular sentence.
    """
    if not sentences:
        return ClaimCheck(claim, "NOT ENOUGH INFO", (), "no evidence sentence")
    answers = {span: "" if misread(span, value, claim) else value
               for span, value in answers.items()}

    def where(value: str) -> list[Evidence]:
        found: list[Evidence] = []
        for s in sentences:
            if stated(value, f"{s.evidence.title}. {s.text}") and s.evidence not in found:
                found.append(s.evidence)
        return found

    # The claim's other spans name what it is about (its subject, mostly). A value read off
    # a passage that names none of them is about something else: measured in wikichat mode,
    # "Antoni Malczyk's brother is named Tadeu Schmidt" was supported by a passage on Tadeu
    # Schmidt, and "Joe Biden won the 2024 Russian presidential election" by one on the US
    # primaries. Such a value neither supports the claim nor corrects it.
    rest = [span for span in key_spans(claim) if span not in answers]

    def about(evidence: Evidence) -> str:
        shown = " ".join(s.text for s in sentences if s.evidence == evidence)
        return f"{evidence.title}. {shown}"

    def where_about(value: str) -> list[Evidence]:
        return [e for e in where(value) if all(stated(span, about(e)) for span in rest)]

    text = " ".join(f"{s.evidence.title}. {s.text}" for s in sentences)
    if not answers:  # no new key span: words, spans and polarity of one sentence
        # The title's words count neither way: every sentence of an article is about its
        # title, so "The Tortured Poets Department is an album" matched any sentence of that
        # article by its title alone. What the claim says beyond its subject must be stated.
        wanted = _words(claim)
        best: Sentence | None = None
        best_share = 0.0
        for s in sentences:
            need = wanted - _words(s.evidence.title)
            share = len(need & _words(s.text)) / len(need) if need else 0.0
            if share > best_share:
                best, best_share = s, share
        if (best is not None and best_share >= 0.85 and _negated(claim) == _negated(best.text)
                and all(stated(x, f"{best.evidence.title}. {best.text}")
                        for x in key_spans(claim))):
            return ClaimCheck(claim, "SUPPORTS", (best.evidence,),
                              f"one sentence states {round(best_share * 100)}% of its words")
        return ClaimCheck(claim, "NOT ENOUGH INFO", tuple(default),
                          "no sentence states it (no new name, date or number to read)")
    wrong = {span: value for span, value in answers.items()
             if value and not same_value(span, value) and where(value)}
    if wrong:
        sources = where(next(iter(wrong.values())))
        why = "; ".join(f"the evidence gives {v!r}, not {s!r}" for s, v in wrong.items())
        about_it = all(where_about(v) for v in wrong.values())
        return ClaimCheck(claim, "REFUTES", tuple(sources), why,
                          correction=corrected(claim, wrong, answers, text) if about_it else "")
    missing = [span for span, value in answers.items() if not value]
    if missing:
        return ClaimCheck(claim, "NOT ENOUGH INFO", tuple(default),
                          f"the evidence does not give {', '.join(map(repr, missing))}")
    unread = [span for span, value in answers.items() if not where(value)]
    if unread:
        return ClaimCheck(claim, "NOT ENOUGH INFO", tuple(default),
                          f"the value read for {', '.join(map(repr, unread))} is not in the "
                          "evidence")
    others = [s for s in key_spans(claim) if s not in answers and not stated(s, text)]
    if others:
        return ClaimCheck(claim, "NOT ENOUGH INFO", tuple(default),
                          f"the evidence does not state {', '.join(map(repr, others))}")
    sources = [e for e in where(next(iter(answers.values())))
               if all(stated(v, about(e)) for v in answers.values())
               and all(stated(span, about(e)) for span in rest)]
    if not sources:
        return ClaimCheck(claim, "NOT ENOUGH INFO", tuple(default),
                          "no one passage gives the value with what the claim is about "
                          f"({', '.join(map(repr, rest))})")
    if _negated(claim) and not any(_negated(s.text) for s in sentences
                                   if s.evidence in sources):
        return ClaimCheck(claim, "NOT ENOUGH INFO", tuple(sources),
                          "the claim is negated, its evidence is not")
    values = ", ".join(f"{v!r}" for v in answers.values())
    return ClaimCheck(claim, "SUPPORTS", tuple(sources), f"the evidence gives {values}")


async def _fill(calls: TurnCalls, system: str, user: str, n: int, stage: str = "verify"
                ) -> list[str] | None:
    parsed = await calls.json(stage, messages_for(system, user), schema(n),
                              max_tokens=16 + 18 * n)
    if not isinstance(parsed, dict):
        return None
    return [clean_answer(a) for a in parsed["answers"]]


def _grouped(items: Sequence[Item], filled: Sequence[str] | None, n: int
             ) -> list[dict[str, str]]:
    answers: list[dict[str, str]] = [{} for _ in range(n)]
    for k, item in enumerate(items):
        answers[item.claim][item.span] = filled[k] if filled and k < len(filled) else ""
    return answers


def claim_sentences(query: str, passages: Sequence[Evidence], scorer: SentenceScorer,
                    total: int = 4) -> list[Sentence]:
    """The sentences of ``passages`` that best match ``query`` (:func:`check_each`'s evidence)."""
    out: list[Sentence] = []
    for selection in select_sentences(query, passages, scorer, total=total, margin=0.3):
        out.extend(Sentence(t, selection.evidence) for t in selection.sentences)
    return out


async def check_each(
    calls: TurnCalls,
    claims: Sequence[str],
    evidence: Sequence[Sequence[Evidence]],
    book: PassageBook,
    today: dt.date,
    scorer: SentenceScorer,
    *,
    question: str | None = None,
) -> list[ClaimCheck]:
    """One cloze call per claim on its own best sentences, concurrently (``wikichat``)."""
    return [check for check, _ in await check_each_corrected(
        calls, claims, evidence, book, today, scorer, question=question)]


async def check_each_corrected(
    calls: TurnCalls,
    claims: Sequence[str],
    evidence: Sequence[Sequence[Evidence]],
    book: PassageBook,
    today: dt.date,
    scorer: SentenceScorer,
    *,
    question: str | None = None,
) -> list[tuple[ClaimCheck, ClaimCheck | None]]:
    """:func:`check_each`, and each refuted claim's correction judged by the same rules.

    A correction is a claim too, and is used only if it passes the check. Its cloze reading
    would be the claim's own (the blank in the same place, the same sentences), so it is not
    asked again: the correction is judged on that reading, with its value read as itself.
    The second element is that verdict (``None`` when the claim has no correction).
    """

    async def one(claim: str, passages: Sequence[Evidence]
                  ) -> tuple[ClaimCheck, ClaimCheck | None]:
        if not passages:
            return ClaimCheck(claim, "NOT ENOUGH INFO", (), "nothing retrieved for the claim"), None
        items = items_of([claim], question)
        # Sentences are chosen for the claim with its values hidden, and the question:
        # chosen for "won by India", they were the ones naming India (as host).
        query = f"{hidden(claim, question)} {question or ''}" if items else claim
        sentences = await asyncio.to_thread(claim_sentences, query, passages, scorer)
        filled: list[str] | None = []
        if items and sentences:
            entries = _entries(sentences, book)
            filled = await _fill(
                calls, prompt("verify_system"),
                prompt("verify_user", today=today.isoformat(), passages=entries,
                       items=[i.text for i in items]),
                len(items))
        answers = _grouped(items, filled, 1)[0]
        check = judge(claim, question, answers, sentences, passages)
        if check.verdict != "REFUTES" or not check.correction:
            return check, None
        read = {span: value for span, value in answers.items()
                if value and not same_value(span, value) and not misread(span, value, claim)}
        again = {read.get(span, span): value
                 for span, value in answers.items()}
        return check, judge(check.correction, question, again, sentences, passages)

    return list(await asyncio.gather(*(one(c, e) for c, e in zip(claims, evidence, strict=True))))


def _entries(sentences: Sequence[Sentence], book: PassageBook) -> list[dict[str, str]]:
    """Sentences grouped by passage, as ``_passages.j2`` entries, in passage order."""
    grouped: dict[str, list[Sentence]] = {}
    for s in sentences:
        grouped.setdefault(s.evidence.passage_id, []).append(s)
    ordered = sorted(grouped.values(), key=lambda group: book.number(group[0].evidence))
    return [passage_entry(book.number(g[0].evidence), g[0].evidence,
                          " ".join(s.text for s in g)) for g in ordered]


async def check_batch(
    calls: TurnCalls,
    claims: Sequence[str],
    evidence: Sequence[Sequence[Evidence]],
    book: PassageBook,
    block: Sequence[dict[str, str]],
    today: dt.date,
    *,
    question: str | None = None,
    stage: str = "verify",
) -> list[ClaimCheck]:
    """Every blank of every claim in one call on a shared evidence block (stage 8).

    Args:
        calls: The turn's call recorder.
        claims: The claims, in order.
        evidence: Passages retrieved for each claim (a claim's default evidence).
        book: The turn's passage numbers.
        block: The evidence block entries (shared with the compose call): each entry's
            ``text`` is the sentences kept from passage ``number``.
        today: Today's date.
        question: What the user asked (chooses the focus spans).
        stage: The call's stage name in the trace (``check`` when stage 8 checks the reply).
    """
    if not claims:
        return []
    sentences: list[Sentence] = []
    for entry in block:
        passage = book.get(int(entry["number"]))
        if passage is not None:
            sentences.extend(Sentence(s.text, passage) for s in split_sentences(entry["text"]))
    shown = {s.evidence.passage_id for s in sentences}
    items = items_of(claims, question)
    filled: list[str] | None = []
    if items and sentences:
        filled = await _fill(
            calls, prompt("grounded_system"),
            prompt("verify_batch_user", today=today.isoformat(), passages=block,
                   items=[i.text for i in items],
                   heading="Reply sentences" if stage == "check" else "Statements"),
            len(items), stage)
    answers = _grouped(items, filled, len(claims))
    return [judge(claim, question, answers[i], sentences,
                  [e for e in evidence[i] if e.passage_id in shown])
            for i, claim in enumerate(claims)]
