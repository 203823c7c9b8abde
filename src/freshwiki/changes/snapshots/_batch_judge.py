"""NLI by an LLM for many sentence pairs per call.

On a CPU, what a judged pair costs is mostly what is generated for it, token by token, plus
what each call re-reads: the one-pair prompt asks for a reason and a label per call. Asking
for several numbered pairs in one call, with only a relation per pair, spends the generated
tokens on the answers (``experiments/snapshot_diff.py real`` measures the difference).

The reply's shape (``shape``) decides how many tokens an answer costs: ``numbered`` is a list
of ``{"pair": k, "relation": ...}`` objects (~13 tokens a pair with Qwen2.5's tokenizer),
``keyed`` an object ``{"1": ..., "2": ...}`` (~7: the pair number is still written before its
answer, which keeps the model's place), ``positional`` a bare list of relations in pair order
(~4, nothing to hold on to but the count).

A batch can go wrong in ways a single answer cannot: too few or too many results, a pair
number that does not exist, two answers for one pair, text that is not JSON. The schema pins
the shape (exactly one result per pair, in order) so backends that constrain decoding to it,
such as the local llama.cpp backend, cannot produce those; for the others the client's
validation and repair round-trip apply, and whatever then still has no usable answer is asked
again in smaller batches, down to one pair with :class:`LLMJudge`'s own prompt. Only a pair
that even that leaves unanswered gets ``None``, which the aligner keeps as an ambiguous,
unverified label. No pair is ever given another pair's answer or a guessed one: a bare list of
the wrong length is not used at all, since which answer is missing cannot be known.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from typing import Any, Literal, get_args

from freshwiki.changes.snapshots._judge import PROMPTS, RELATIONS, JudgeCounts, LLMJudge
from freshwiki.changes.snapshots._types import Relation
from freshwiki.llm import LLM, LLMOutputError, LLMRefusalError, Message
from freshwiki.prompting import render_prompt

DEFAULT_BATCH_SIZE = 16
"""Pairs per call unless told otherwise: of 1, 2, 4, 8 and 16, the cheapest and best-agreeing
on the first 12 real article pairs of `experiments/snapshot_diff.py real` (see the README)."""

REASON_MAX_CHARS = 60
"""Length cap of the optional per-pair reason: a few words, not an explanation."""

Shape = Literal["numbered", "keyed", "positional"]
"""How a batched reply lays out its answers (see the module docstring)."""

SHAPES: tuple[Shape, ...] = get_args(Shape)

DEFAULT_SHAPE: Shape = "positional"
"""The reply shape unless told otherwise: on the first 12 real article pairs at batch 16 it
generated 254 tokens against 412 keyed and 884 numbered, and agreed as well as keyed with the
read labels (35 of 44; numbered 34): ``experiments/results/snapshot_diff_real_llm_shape.json``."""

_TOKENS_PER_PAIR: dict[Shape, int] = {"numbered": 24, "keyed": 12, "positional": 8}
"""Generation budget per pair, about twice the tokens an answer takes."""

_TOKENS_PER_REASON = 24

_ITEM = re.compile(r'\{[^{}]*?"pair"\s*:\s*(\d+)[^{}]*?"relation"\s*:\s*"([a-z]+)"')
"""One ``numbered`` result object in a reply that is not valid JSON (cut off, stray text)."""

_KEYED = re.compile(r'"(\d+)"\s*:\s*"([a-z]+)"')
"""One ``keyed`` answer in a reply that is not valid JSON."""

_LISTED = re.compile(r'"([a-z]+)"\s*[,\]]')
"""One complete ``positional`` answer (its closing quote and separator were written)."""


def batch_schema(n: int, *, reason: bool = False, shape: Shape = "numbered") -> dict[str, Any]:
    """The JSON schema of an answer about ``n`` pairs: exactly ``n`` answers, in pair order.

    Each position holds its constant pair number (``numbered``) or key (``keyed``), or is the
    k-th of exactly ``n`` (``positional``), so a decoder constrained to the schema can neither
    skip, repeat nor renumber a pair; a written number still helps the model keep its place.
    """
    relation: dict[str, Any] = {"enum": list(RELATIONS)}
    if shape == "keyed":
        keys = [str(k) for k in range(1, n + 1)]
        return {"type": "object", "properties": dict.fromkeys(keys, relation),
                "required": keys, "additionalProperties": False}
    if shape == "positional":
        return {"type": "object", "properties": {"relations": {
            "type": "array", "prefixItems": [relation] * n, "minItems": n, "maxItems": n,
            "items": False}}, "required": ["relations"], "additionalProperties": False}

    def item(k: int) -> dict[str, Any]:
        props: dict[str, Any] = {"pair": {"const": k}}
        if reason:
            props["reason"] = {"type": "string", "maxLength": REASON_MAX_CHARS}
        props["relation"] = relation
        return {"type": "object", "properties": props, "required": list(props),
                "additionalProperties": False}

    return {
        "type": "object",
        "properties": {"answers": {
            "type": "array",
            "prefixItems": [item(k) for k in range(1, n + 1)],
            "minItems": n,
            "maxItems": n,
            "items": False,
        }},
        "required": ["answers"],
        "additionalProperties": False,
    }


def read_answers(value: Any, n: int, shape: Shape = "numbered") -> dict[int, Relation]:
    """The usable answers in a reply about ``n`` pairs, by 0-based pair position.

    ``numbered`` and ``keyed``: an answer counts only when its pair number is an integer from
    1 to ``n`` and its relation is known; a pair answered twice with different relations
    counts as unanswered (either answer could be the one meant). ``positional``: a list of
    exactly ``n`` gives each pair the answer at its position (unknown relations skipped);
    any other length gives nothing. Everything else is ignored, never guessed.
    """
    if shape == "positional":
        listed = value.get("relations") if isinstance(value, dict) else None
        if not isinstance(listed, list) or len(listed) != n:
            return {}
        return {k: r for k, r in enumerate(listed) if r in RELATIONS}
    if shape == "keyed":
        if not isinstance(value, dict):
            return {}
        keyed = [(int(key), r) for key, r in value.items()
                 if isinstance(key, str) and key.isdigit()]
        return _numbered(keyed, n)
    items = value.get("answers") if isinstance(value, dict) else None
    if not isinstance(items, list):
        return {}
    return _numbered([(item.get("pair"), item.get("relation")) for item in items
                      if isinstance(item, dict)], n)


def _numbered(answers: Sequence[tuple[Any, Any]], n: int) -> dict[int, Relation]:
    found: dict[int, Relation] = {}
    conflicting: set[int] = set()
    for number, relation in answers:
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= n:
            continue
        if relation not in RELATIONS:
            continue
        k = number - 1
        if k in found and found[k] != relation:
            conflicting.add(k)
        found[k] = relation
    return {k: r for k, r in found.items() if k not in conflicting}


def salvage(text: str, n: int, shape: Shape = "numbered") -> dict[int, Relation]:
    """Usable answers from a reply the client rejected (see :func:`read_answers`).

    The reply may be valid JSON of the wrong shape (an answer missing), or JSON cut off at
    the token cap; in the second case the complete answers before the cut still count (for
    ``positional``, the first m answers are pairs 1..m: a cut list is still in order).
    """
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    try:
        return read_answers(json.loads(body), n, shape)
    except json.JSONDecodeError:
        pass
    if shape == "positional":
        head = [m.group(1) for m in _LISTED.finditer(body)][:n]
        return {k: r for k, r in enumerate(head) if r in RELATIONS}
    if shape == "keyed":
        return _numbered([(int(m.group(1)), m.group(2)) for m in _KEYED.finditer(body)], n)
    return _numbered([(int(m.group(1)), m.group(2)) for m in _ITEM.finditer(body)], n)


def _chunks(items: Sequence[int], size: int) -> list[list[int]]:
    """``items`` cut into as few chunks of at most ``size`` as possible, of near-equal length.

    Near-equal, so 9 pairs at size 8 are asked as 5 + 4 rather than 8 + 1.
    """
    if not items:
        return []
    count = -(-len(items) // size)
    base, extra = divmod(len(items), count)
    out: list[list[int]] = []
    start = 0
    for c in range(count):
        end = start + base + (c < extra)
        out.append(list(items[start:end]))
        start = end
    return out


class BatchLLMJudge:
    """NLI by an LLM, up to ``batch_size`` pairs per JSON-schema call (see the module docstring).

    Args:
        llm: The client; share it, its semaphore is the concurrency bound.
        batch_size: Most pairs per call; 1 is :class:`LLMJudge` unchanged (one call per pair,
            with its reason).
        reason: Ask for a reason of a few words per pair (costs generated tokens; off by
            default, as measured in ``experiments/snapshot_diff.py``); ``numbered`` only.
        shape: How the reply lays out its answers (see the module docstring).
        tag: Call-log label.

    Raises:
        ValueError: ``batch_size`` is below 1, an unknown shape, or a reason asked for with
            a shape that has no room for one.
    """

    def __init__(self, llm: LLM, *, batch_size: int = DEFAULT_BATCH_SIZE, reason: bool = False,
                 shape: Shape = DEFAULT_SHAPE, tag: str = "snapshot-nli-batch") -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if shape not in SHAPES:
            raise ValueError(f"shape must be one of {', '.join(SHAPES)}, got {shape!r}")
        if reason and shape != "numbered":
            raise ValueError(f"a reason per pair needs the numbered shape, not {shape!r}")
        self.llm = llm
        self.batch_size = batch_size
        self.reason = reason
        self.shape = shape
        self.tag = tag
        self.counts = JudgeCounts()
        self.single = LLMJudge(llm, counts=self.counts)
        """The one-pair judge: all of the work at batch size 1, the last resort above it."""

    async def relations(
        self, pairs: Sequence[tuple[str, str]], *, title: str = ""
    ) -> list[Relation | None]:
        """One relation per pair, in input order; ``None`` where no usable answer came back.

        Batches are asked concurrently (the client bounds how many run at once).
        """
        if self.batch_size == 1:
            return await self.single.relations(pairs, title=title)
        self.counts.pairs += len(pairs)
        answers: dict[int, Relation | None] = {}
        chunks = _chunks(range(len(pairs)), self.batch_size)
        for found in await asyncio.gather(*(self._settle(pairs, c, title, first=True)
                                            for c in chunks)):
            answers.update(found)
        self.counts.unanswered += sum(answers[k] is None for k in range(len(pairs)))
        return [answers[k] for k in range(len(pairs))]

    async def _settle(self, pairs: Sequence[tuple[str, str]], chunk: list[int], title: str,
                      *, first: bool) -> dict[int, Relation | None]:
        """Answers for the pairs at positions ``chunk``: one batch, then smaller ones.

        A pair a batch leaves unanswered is asked again in a batch of half the size (never
        alone with another pair's failure to blame), and on its own, through the one-pair
        prompt, when halving reaches one.
        """
        if len(chunk) == 1 and not first:
            old, new = pairs[chunk[0]]
            return {chunk[0]: await self.single.relation(old, new, title=title)}
        got = await self._ask([pairs[k] for k in chunk], title)
        out: dict[int, Relation | None] = {chunk[k]: r for k, r in got.items()}
        missing = [k for k in chunk if k not in out]
        if not missing:
            return out
        self.counts.reasked += len(missing)
        smaller = max(1, len(chunk) // 2)
        for found in await asyncio.gather(*(self._settle(pairs, c, title, first=False)
                                            for c in _chunks(missing, smaller))):
            out.update(found)
        return out

    async def _ask(self, pairs: Sequence[tuple[str, str]], title: str) -> dict[int, Relation]:
        """One call about ``pairs``; the usable answers by position in ``pairs``."""
        n = len(pairs)
        messages = [
            Message.system(render_prompt(f"{PROMPTS}/nli_batch_system.j2", reason=self.reason,
                                         shape=self.shape)),
            Message.user(render_prompt(f"{PROMPTS}/nli_batch_user.j2",
                                       title=title or "(unknown)", pairs=list(pairs))),
        ]
        per_pair = _TOKENS_PER_PAIR[self.shape] + (_TOKENS_PER_REASON if self.reason else 0)
        self.counts.calls += 1
        try:
            result = await self.llm.chat(
                messages, json_schema=batch_schema(n, reason=self.reason, shape=self.shape),
                schema_name="nli_batch", max_tokens=16 + per_pair * n, tag=self.tag)
        except LLMOutputError as exc:
            self.counts.repairs += 1  # the client gives up only after its repair request
            return salvage(exc.raw_text, n, self.shape)
        except LLMRefusalError:
            return {}
        self.counts.add_usage(result)
        return read_answers(result.parsed, n, self.shape)
