"""Reading a model's one-word answer as ``yes``, ``no``, ``none`` or ``blocked``.

Every template asks for a one-word yes/no answer, but small models add punctuation, markdown,
a label ("Answer: No") or a reason ("No, because ..."), and some decline. The parse is
deliberately simple and explicit so a reader can predict it:

1. ``blocked`` when the reply opens by declining: :func:`freshwiki.llm.looks_like_refusal`
   ("I'm sorry, but I can't help with that"), or a refusal to *judge* that the generic check
   does not cover ("As an AI, ...", "I cannot predict/determine/know ...").
2. The first word, after leading punctuation, markdown and a label such as ``Answer:`` are
   dropped: ``yes`` or ``no`` (any case) decides.
3. Otherwise, when exactly one of the standalone words ``yes`` / ``no`` occurs anywhere
   ("The answer is yes."), that one.
4. Otherwise ``none``: no answer, both answers, or something else ("Maybe", "It depends").
"""

from __future__ import annotations

import re
from typing import Final, Literal

from freshwiki.llm import looks_like_refusal

Answer = Literal["yes", "no", "none", "blocked"]
ANSWERS: Final[tuple[Answer, ...]] = ("yes", "no", "none", "blocked")
"""Every parsed answer; ``yes`` is the positive class (helpful note, kept edit)."""

_JUDGE_REFUSAL = re.compile(
    r"^\W*(?:(?:i'?m|i am)\s+sorry[\s,.!]*(?:but\s+)?)?(?:as an ai\b|"
    r"(?:i|we)\s*(?:can(?:'|no)t|cannot|can not|am unable to|'m unable to|am not able to|"
    r"'m not able to)\s+(?:predict|determine|know|say|tell|judge|assess|evaluate|decide|"
    r"make (?:a|that) (?:prediction|judgement|judgment|determination)))",
    re.IGNORECASE,
)
_LABEL = re.compile(r"^(?:final\s+)?(?:answer|response|prediction|output)\s*[:\-–]\s*",
                    re.IGNORECASE)
_WORD = re.compile(r"[a-z]+", re.IGNORECASE)
_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def is_blocked(text: str) -> bool:
    """Whether ``text`` declines to answer (see rule 1 of the module docstring)."""
    return looks_like_refusal(text) or bool(_JUDGE_REFUSAL.match(text.strip()[:300]))


def parse_answer(text: str) -> Answer:
    """The answer ``text`` gives (see the module docstring for the rules)."""
    if is_blocked(text):
        return "blocked"
    body = re.sub(r"^[\W_]+", "", text.strip())
    body = _LABEL.sub("", body)
    body = re.sub(r"^[\W_]+", "", body)
    first = _WORD.match(body)
    if first is not None and first.group(0).lower() in ("yes", "no"):
        return "yes" if first.group(0).lower() == "yes" else "no"
    found = {m.group(1).lower() for m in _YES_NO.finditer(text)}
    if len(found) == 1:
        return "yes" if "yes" in found else "no"
    return "none"
