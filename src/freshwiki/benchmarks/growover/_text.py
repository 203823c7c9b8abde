"""SQuAD-style answer normalisation, token F1 and exact match.

Written here rather than imported so the exact rules are visible and tested: lower-case,
drop punctuation, drop the articles "a", "an", "the" as whole words, collapse whitespace.
Token F1 is the harmonic mean of precision and recall over the bag of normalised tokens
(repeated tokens count as often as both sides have them). Two empty answers agree (F1 1);
one empty answer agrees with nothing (F1 0).
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = frozenset(string.punctuation) | {"‘", "’", "“", "”", "–", "—", "…"}


def normalize_answer(text: str) -> str:
    """Lower-case, strip punctuation and articles, collapse whitespace."""
    folded = unicodedata.normalize("NFKC", text).lower()
    no_punct = "".join(" " if ch in _PUNCT else ch for ch in folded)
    return " ".join(_ARTICLES.sub(" ", no_punct).split())


def answer_tokens(text: str) -> list[str]:
    """The normalised tokens of an answer."""
    return normalize_answer(text).split()


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD token F1 of ``prediction`` against ``gold``."""
    pred, ref = answer_tokens(prediction), answer_tokens(gold)
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, gold: str) -> bool:
    """Whether the two answers are equal after normalisation."""
    return normalize_answer(prediction) == normalize_answer(gold)


def contains_answer(text: str, answer: str) -> bool:
    """Whether the normalised answer occurs in the normalised text as whole tokens."""
    needle = normalize_answer(answer)
    return bool(needle) and f" {needle} " in f" {normalize_answer(text)} "
