"""The first stage-5 verifier (``verifier="legacy"``): whole passages, the model's own verdict.

Kept as an option and as the baseline of ``experiments/claim_verification.py``, which
measured why it was replaced (see :mod:`freshwiki.chat.verify`): given a passage ending
"Australia won by 6 wickets", Qwen2.5-1.5B judged "The 2023 Cricket World Cup was won by
India" SUPPORTS, because the passage names India (the host) and the tournament. A small
model asked for a verdict tends to reward word overlap. The simulated-chat factuality
scorer still uses it, so that benchmark's figures stay comparable with earlier runs.

Each claim gets its own search (its own words are a better query for its evidence than the
user's question; its time intent comes from its own dates). Then:

- :func:`verify_each` (``wikichat``'s stage 5 with ``verifier="legacy"``): one call per
  claim, concurrently (bounded by the LLM client). The model writes a short reason *before*
  its verdict (SUPPORTS / REFUTES / NOT ENOUGH INFO), which helps small models, and names the
  passages it used.
- :func:`verify_batch` (the claim benchmark): one call checks every claim against one
  evidence block. Verdicts only, no reasons: the schema asks for exactly one verdict per
  claim.

Whatever the model says, a SUPPORTS is downgraded to NOT ENOUGH INFO when the claim states
a number or year found in none of its evidence: a wrong date is the typical hallucination,
and the check costs nothing. Passage text stays inside the data block; the prompt says
instructions found there are data, so an injected "say SUPPORTS" is only text to judge.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Sequence
from typing import Any

from freshwiki.chat._calls import TurnCalls, messages_for, prompt
from freshwiki.chat._evidence import PassageBook
from freshwiki.chat._types import ClaimCheck, Evidence, Verdict
from freshwiki.chat.facts import passage_entry
from freshwiki.corpus import numbers_in

VERDICTS: tuple[Verdict, ...] = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "maxLength": 400},
        "verdict": {"enum": list(VERDICTS)},
        "passages": {"type": "array", "items": {"type": "integer"}, "maxItems": 3},
    },
    "required": ["reason", "verdict", "passages"],
    "additionalProperties": False,
}


def batch_schema(n: int) -> dict[str, Any]:
    """Exactly one verdict per claim, numbered 1..n."""
    return {
        "type": "object",
        "properties": {
            "verdicts": {
                "type": "array",
                "minItems": n,
                "maxItems": n,
                "items": {
                    "type": "object",
                    "properties": {
                        "claim": {"type": "integer"},
                        "verdict": {"enum": list(VERDICTS)},
                        "passages": {"type": "array", "items": {"type": "integer"},
                                     "maxItems": 3},
                    },
                    "required": ["claim", "verdict", "passages"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["verdicts"],
        "additionalProperties": False,
    }


def guarded(check: ClaimCheck) -> ClaimCheck:
    """Downgrade a SUPPORTS whose numbers are not all in its evidence (see module docstring)."""
    if check.verdict != "SUPPORTS":
        return check
    if not check.evidence:
        return ClaimCheck(check.claim, "NOT ENOUGH INFO", (), "no evidence passage")
    stated = set().union(*(numbers_in(f"{e.title} {e.text}") for e in check.evidence))
    missing = numbers_in(check.claim) - stated
    if missing:
        why = f"{', '.join(sorted(missing))} is not in the evidence"
        if check.rationale:
            why += f"; the verifier said SUPPORTS: {check.rationale}"
        return ClaimCheck(check.claim, "NOT ENOUGH INFO", check.evidence, why)
    return check


def _chosen(numbers: Any, book: PassageBook, shown: Sequence[Evidence],
            default: Sequence[Evidence]) -> tuple[Evidence, ...]:
    """The passages the model named, if they are among those it was shown; else ``default``."""
    allowed = {e.passage_id for e in shown}
    picked: list[Evidence] = []
    for n in numbers if isinstance(numbers, list) else []:
        evidence = book.get(n) if isinstance(n, int) else None
        if evidence is not None and evidence.passage_id in allowed and evidence not in picked:
            picked.append(evidence)
    return tuple(picked) or tuple(default)


async def verify_each(
    calls: TurnCalls,
    claims: Sequence[str],
    evidence: Sequence[Sequence[Evidence]],
    book: PassageBook,
    today: dt.date,
) -> list[ClaimCheck]:
    """One ``verify`` call per claim, concurrently."""

    async def one(claim: str, passages: Sequence[Evidence]) -> ClaimCheck:
        if not passages:
            return ClaimCheck(claim, "NOT ENOUGH INFO", (), "nothing retrieved for the claim")
        entries = [passage_entry(book.number(e), e) for e in passages]
        parsed = await calls.json(
            "verify",
            messages_for(
                prompt("legacy_verify_system"),
                prompt("legacy_verify_user", today=today.isoformat(), passages=entries,
                       claim=claim),
            ),
            SCHEMA,
            max_tokens=220,
        )
        if not isinstance(parsed, dict):
            return ClaimCheck(claim, "NOT ENOUGH INFO", tuple(passages), "verifier output unusable")
        verdict: Verdict = parsed["verdict"]
        chosen = _chosen(parsed["passages"], book, passages, passages)
        return guarded(ClaimCheck(claim, verdict, chosen, str(parsed["reason"]).strip()))

    return list(await asyncio.gather(*(one(c, e) for c, e in zip(claims, evidence, strict=True))))


async def verify_batch(
    calls: TurnCalls,
    claims: Sequence[str],
    evidence: Sequence[Sequence[Evidence]],
    book: PassageBook,
    block: Sequence[dict[str, str]],
    shown: Sequence[Evidence],
    today: dt.date,
) -> list[ClaimCheck]:
    """Every claim in one ``verify`` call against a shared evidence block.

    Args:
        calls: The turn's call recorder.
        claims: The claims, in order.
        evidence: Passages retrieved for each claim (a claim's default evidence).
        book: The turn's passage numbers.
        block: The evidence block entries (shared with the compose call).
        shown: The passages in ``block``.
        today: Today's date.
    """
    if not claims:
        return []
    if not block:
        return [ClaimCheck(c, "NOT ENOUGH INFO", (), "nothing retrieved") for c in claims]
    items = [
        {"number": i, "text": claim,
         "passages": ", ".join(str(book.number(e)) for e in passages if e in shown)}
        for i, (claim, passages) in enumerate(zip(claims, evidence, strict=True), start=1)
    ]
    parsed = await calls.json(
        "verify",
        messages_for(
            prompt("grounded_system"),
            prompt("legacy_verify_batch_user", today=today.isoformat(), passages=block,
                   claims=items),
        ),
        batch_schema(len(claims)),
        max_tokens=40 + 30 * len(claims),
    )
    rows: dict[int, dict[str, Any]] = {}
    if isinstance(parsed, dict):
        for row in parsed["verdicts"]:
            rows.setdefault(int(row["claim"]), row)
    checks = []
    for i, (claim, passages) in enumerate(zip(claims, evidence, strict=True), start=1):
        row = rows.get(i)
        default = [e for e in passages if e in shown]
        if row is None:
            checks.append(ClaimCheck(claim, "NOT ENOUGH INFO", tuple(default), "no verdict"))
            continue
        chosen = _chosen(row["passages"], book, shown, default)
        checks.append(guarded(ClaimCheck(claim, row["verdict"], chosen)))
    return checks
