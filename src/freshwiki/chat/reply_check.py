"""Stage 8 (``wikichat``): the composed reply's sentences, checked before release.

Stage 5 checks the *draft's* claims; the composer then rewrites what was verified, and a
1.5B composer sometimes rewrites it wrongly under a correct citation. Measured on 91 real
questions (``experiments/chat_accuracy.py``), all four replies that cited a passage
contradicting them were made that way: "Tania Chernova was a Soviet writer and journalist
[1]" under a lead saying she was a sniper; "the team that won the 1984 Winfield State League
was the Winfield State League [1]"; "located in Grand Lac, Grand Lac [1]" for Aix-les-Bains;
a trophy named with a word of its name missing. Two checks catch such sentences:

1. **Echoes** (:func:`echoes`, rules): a sentence answering a question with nothing but the
   question's own words ("X is called X") states no answer, whatever it cites.
2. **Cloze** (:func:`freshwiki.chat.verify.check_batch`, one call for the whole reply on
   the evidence the composer was shown): a sentence (unless it is a whole sentence of the
   passage it cites, copied word for word) whose values the evidence gives differently is
   REFUTED and withheld. An uncited sentence is checked against every passage the composer
   was shown (until 25 November it was not checked at all: "Sphallotrichus hirsuticornis is
   found in eastern Ecuador." came uncited, true, but a false one would have passed).
   A NOT ENOUGH INFO verdict is common for correct sentences (the verifier's SUPPORTS
   recall is about .7), so it withholds a sentence only when one of the
   values it answers with (a name, date or number the question did not give) is stated in
   no evidence entry together with the sentence's other values: "located in Rome, Italy
   [1]" under a lead naming Eboli; "Joe Biden won the 2024 Russian presidential election
   [2]" when Joe Biden is only in the US election's lead.

A withheld sentence never reaches the user; when every sentence is withheld the pipeline
quotes the facts instead, through this same check. The price is streaming: the composed text
is released after the check, not token by token as it is written.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass

from freshwiki.chat._calls import TurnCalls
from freshwiki.chat._evidence import PassageBook, content_words
from freshwiki.chat._types import ClaimCheck, Evidence
from freshwiki.chat.guard import pieces
from freshwiki.chat.verify import check_batch, focus_of, key_spans, stated
from freshwiki.corpus import split_sentences

_MARKERS = re.compile(r"\[([\d\s,;]+)\]")
_ASKING = re.compile(r"^\s*(?:who|whom|whose|what|which|when|where|why|how)\b|\?\s*$",
                     re.IGNORECASE)
# Words that turn a question into a statement without answering it.
_NAMING = frozenset({"called", "named", "known", "name", "titled", "answer", "question"})


def echoes(sentence: str, question: str) -> bool:
    """Whether ``sentence`` only restates ``question``: no word or number the question lacks.

    "The team that won the 1984 Winfield State League was the Winfield State League", asked
    which team won it, adds nothing; "... was the Wynnum Manly Seagulls" adds a name.
    """
    if not _ASKING.search(question):
        return False
    plain = _MARKERS.sub(" ", sentence)
    asked = _stems(question)
    new = _stems(plain) - asked - _NAMING
    numbers = set(re.findall(r"\d+", plain)) - set(re.findall(r"\d+", question))
    return bool(content_words(plain)) and not new and not numbers


def _copied(sentence: str, text: str) -> bool:
    """Whether ``sentence`` is, word for word, a whole sentence of ``text``.

    A whole sentence, not a stretch: "Newton formulated his laws" is a stretch of "... about
    50 years after Isaac Newton formulated his laws" and says something else.
    """
    def words(t: str) -> str:
        return " ".join(re.findall(r"\w+", t.casefold()))
    wanted = words(sentence)
    return bool(wanted) and any(words(s.text) == wanted for s in split_sentences(text))


def _stems(text: str) -> set[str]:
    """Content words without possessive endings: "Euler's laws" names Euler."""
    return {w.rstrip("'’") for w in content_words(text.replace("’s", "'s"))} - {""}


def _stated_about(span: str, sentence: str, question: str, entries: Sequence[str]) -> bool:
    """Whether one evidence entry states ``span`` with the sentence's other values.

    "Joe Biden won the 2024 Russian presidential election [2]": Joe Biden is in the block
    (the US election's lead), but not in an entry that also says "Russian".
    """
    others = [s for s in key_spans(sentence) if s not in focus_of(sentence, question)
              or s == span]
    return any(all(stated(s, entry) for s in others) for entry in entries)


@dataclass(frozen=True)
class ReplyCheck:
    """What stage 8 did to a composed reply.

    Attributes:
        text: The reply with the withheld sentences removed.
        removed: The withheld sentences, as composed.
        checks: The cloze verdict of each sentence that was checked.
        echoes: Sentences withheld for restating the question.
    """

    text: str
    removed: tuple[str, ...]
    checks: tuple[ClaimCheck, ...]
    echoes: tuple[str, ...]


async def check_reply(
    calls: TurnCalls,
    text: str,
    question: str,
    book: PassageBook,
    block: Sequence[dict[str, str]],
    today: dt.date,
) -> ReplyCheck:
    """Withhold the sentences of ``text`` that echo ``question`` or that the evidence refutes.

    Args:
        calls: The turn's call recorder (the cloze call is recorded as stage ``check``).
        text: The composed reply, with ``[n]`` markers numbered as in ``book``.
        question: What the user asked.
        book: The turn's passage numbers.
        block: The evidence entries the composer and verifier saw.
        today: Today's date.
    """
    parts = pieces(text)
    keep = [True] * len(parts)
    shown: list[Evidence] = []
    for entry in block:
        passage = book.get(int(entry["number"]))
        if passage is not None and passage not in shown:
            shown.append(passage)
    echoed: list[str] = []
    claims: list[str] = []
    evidence: list[list[Evidence]] = []
    where: list[int] = []
    for i, part in enumerate(parts):
        plain = re.sub(r"\s+([.,;:!?])", r"\1", " ".join(_MARKERS.sub(" ", part).split()))
        if not plain:
            continue
        if echoes(plain, question):
            keep[i] = False
            echoed.append(part.strip())
            continue
        cited: list[Evidence] = []
        for group in _MARKERS.findall(part):
            for number in re.findall(r"\d+", group):
                found = book.get(int(number))
                if found is not None and found not in cited:
                    cited.append(found)
        if not cited:  # uncited: checked against everything the composer was shown
            cited = [e for e in shown if not any(_copied(plain, x.text) for x in shown)]
            if not cited:
                continue  # copied from one of the passages
        elif any(_copied(plain, e.text) for e in cited):
            continue  # copied from its own evidence: nothing to check
        claims.append(plain)
        evidence.append(cited)
        where.append(i)
    checks = await check_batch(calls, claims, evidence, book, block, today, question=question,
                               stage="check") if claims else []
    entries = [f"{entry.get('title', '')}. {entry.get('text', '')}" for entry in block]
    for i, check in zip(where, checks, strict=True):
        if check.verdict == "REFUTES" or (
                check.verdict == "NOT ENOUGH INFO" and any(
                not _stated_about(span, check.claim, question, entries)
                for span in focus_of(check.claim, question))):
            keep[i] = False
    removed = tuple(p.strip() for p, k in zip(parts, keep, strict=True) if not k and p.strip())
    return ReplyCheck("".join(p for p, k in zip(parts, keep, strict=True) if k), removed,
                      tuple(checks), tuple(echoed))
