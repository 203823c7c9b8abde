"""Placing a chat reply by rules, and by a hand label where the rules cannot tell.

Moved here from ``experiments/chat_accuracy.py`` so the runner's scorers, the benchmark's
report and the script all place a reply the same way. The rules read only the reply, the
item's gold parts and whether the grounded chat answered at all; the outcome names are the
ones ``LABELLING.md`` (beside the questions) defines.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ANSWERABLE = ("answerable", "two_part", "followup")
"""Kinds with a gold answer: correct / partial / dont_know / wrong / unspecific."""
ABSENT = ("absent_subject", "absent_fact")
"""Kinds whose subject or asked fact the corpus lacks: abstained / answered."""
KINDS = (*ANSWERABLE, *ABSENT, "false_premise", "conflict", "falseqa")
"""Every kind, in the order reports list them."""
GOOD = {**dict.fromkeys(ANSWERABLE, ("correct",)), **dict.fromkeys(ABSENT, ("abstained",)),
        "false_premise": ("corrected", "rejected"), "conflict": ("both",),
        "falseqa": ("corrected", "rejected", "abstained")}
"""The outcomes a scorer counts as 1 for each kind (the rest count 0)."""

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_IDK = re.compile(
    r"(?i)\b(?:i don't know|i do not know|could not find|couldn't find|can't find|cannot find|"
    r"no information|not (?:mentioned|stated|provided|specified|available)|i'm not sure|"
    r"i am not sure|don't have|do not have|unable to (?:find|answer|determine)|"
    r"(?:do|does) not (?:say|mention|state|provide))")
_HEDGES = frozenset({"approximately", "about", "around", "circa", "c", "some", "nearly"})
_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}
_STOP = frozenset({"the", "a", "an", "of", "in", "on", "at", "and", "to", "for", "by"})


def words(text: str) -> list[str]:
    """Lower-cased words."""
    return _WORD.findall(text.lower())


def _key_words(text: str) -> set[str]:
    """Words that carry a value: months as numbers, hedges and stopwords dropped."""
    out = set()
    for w in words(text):
        if w in _HEDGES or w in _STOP:
            continue
        month = next((n for m, n in _MONTHS.items() if w == m or (
            3 <= len(w) <= 4 and m.startswith(w) and w != "may")), None)
        out.add(str(month) if month is not None else w)
    return out


def states(reply: str, answer: str) -> bool:
    """Whether ``reply`` states ``answer``: its words in order, or every value word of it."""
    hay, need = words(reply), words(answer)
    if need and any(hay[i:i + len(need)] == need for i in range(len(hay) - len(need) + 1)):
        return True
    wanted = _key_words(answer)
    return bool(wanted) and wanted <= _key_words(reply)


def parts_stated(reply: str, parts: Sequence[Sequence[str]]) -> list[bool]:
    """For each required part, whether the reply states one of its spellings."""
    return [any(states(reply, a) for a in part) for part in parts]


def abstains(reply: str, grounded: bool) -> bool:
    """The reply says it does not know (or is the grounded chat's "I don't know")."""
    return not grounded or bool(_IDK.search(reply))


def rule_outcome(item: Mapping[str, Any], reply: str, grounded: bool) -> str:
    """The outcome the rules can give, or ``other`` (to be read by hand).

    Raises:
        ValueError: an item of a kind not in :data:`KINDS`.
    """
    kind = item["kind"]
    parts = item.get("answers") or []
    question = item.get("question") or ""
    if kind in ANSWERABLE:
        stated = parts_stated(reply, parts)
        if stated and all(stated):
            return "correct"
        if abstains(reply, grounded) and not any(stated):
            return "dont_know"
        distinctive = {w for part in parts for a in part[:1] for w in _key_words(a)
                       if not w.isdigit()} - _key_words(question)
        if any(stated) or distinctive & _key_words(reply):
            return "partial"
        return "other"
    if kind in ABSENT:
        return "abstained" if abstains(reply, grounded) else "answered"
    if kind == "conflict":
        stated = parts_stated(reply, parts)
        if all(stated):
            return "both"
        if abstains(reply, grounded) and not any(stated):
            return "dont_know"
        return "one" if any(stated) else "neither"
    if kind == "false_premise":
        if any(parts_stated(reply, parts)):
            return "other"  # states the correction; whether it also affirms is read
        return "abstained" if abstains(reply, grounded) else "other"
    if kind == "falseqa":
        return "abstained" if abstains(reply, grounded) else "other"
    raise ValueError(f"unknown kind {kind!r}")


def reply_key(system: str, item_id: str, reply: str) -> str:
    """Identifies one reply for a hand label (system, item, exact reply text)."""
    return hashlib.sha256(f"{system}\n{item_id}\n{reply}".encode()).hexdigest()[:16]


def read_labels(path: Path) -> dict[str, dict[str, Any]]:
    """Hand labels by key: ``{key, system, id, outcome, reason, overrides?}`` per line.

    A missing file means no reply has been read yet, not an error: every reply the rules
    cannot place is then reported as unread.
    """
    if not path.exists():
        return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return {r["key"]: r for r in rows}


def outcome(system: str, item: Mapping[str, Any], reply: str, grounded: bool,
            labels: Mapping[str, Mapping[str, Any]]) -> str:
    """The rules' outcome, or a label's where the rules cannot tell (or it overrides them)."""
    ruled = rule_outcome(item, reply, grounded)
    label = labels.get(reply_key(system, item["id"], reply))
    if label is not None and (ruled == "other" or label.get("overrides") == ruled):
        return str(label["outcome"])
    return ruled
