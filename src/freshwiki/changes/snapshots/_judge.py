"""The injectable parts of the aligner: a sentence encoder and an NLI judge.

There are no NLI weights in this project, so "contradicts" and "entailed" are LLM calls under
a JSON schema, made only for the pairs the cheaper steps leave undecided. Both parts are small
protocols so tests run with a deterministic fake encoder and the scripted LLM backend, and the
real :class:`~freshwiki.retrieval._embed.Embedder` and any :class:`~freshwiki.llm.LLM` plug in
unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, get_args

import numpy as np
import numpy.typing as npt

from freshwiki.changes.snapshots._types import Relation
from freshwiki.llm import LLM, LLMOutputError, LLMRefusalError, LLMResult, Message
from freshwiki.prompting import render_prompt

PROMPTS = "changes/snapshots/prompts"
RELATIONS: tuple[Relation, ...] = get_args(Relation)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "maxLength": 200},
        "relation": {"enum": list(RELATIONS)},
    },
    "required": ["reason", "relation"],
    "additionalProperties": False,
}


class Encoder(Protocol):
    """Anything that turns texts into L2-normalised vectors (one row per text)."""

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed texts; rows are unit vectors, so a dot product is a cosine."""
        ...


class Judge(Protocol):
    """Anything that tells the NLI relation of (old, new) sentence pairs."""

    async def relations(
        self, pairs: Sequence[tuple[str, str]], *, title: str = ""
    ) -> list[Relation | None]:
        """One relation per pair, or ``None`` where no usable answer came back."""
        ...


@dataclass
class JudgeCounts:
    """What an LLM judge spent, so a caller can report the cost of every call it made.

    Attributes:
        pairs: Sentence pairs the judge was asked about (by its caller).
        calls: Chat calls made (one prompt each; a batch is one call).
        repairs: Of those, calls whose JSON needed the client's repair round-trip (a second
            request to the model); ``calls + repairs`` is the number of model requests.
        reasked: Pairs asked again because a batch left them without a usable answer.
        unanswered: Pairs :meth:`relations` returned without a usable answer (``None``).
        prompt_tokens: Prompt tokens of the answered calls.
        cached_prompt_tokens: Of those, tokens reused from an earlier prompt's prefix.
        completion_tokens: Generated tokens of the answered calls.
    """

    pairs: int = 0
    calls: int = 0
    repairs: int = 0
    reasked: int = 0
    unanswered: int = 0
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def requests(self) -> int:
        """Model requests: every call plus every repair round-trip."""
        return self.calls + self.repairs

    def add_usage(self, result: LLMResult) -> None:
        """Count one answered call's tokens and whether it was repaired."""
        self.repairs += result.repaired
        self.prompt_tokens += result.usage.prompt_tokens
        self.cached_prompt_tokens += result.usage.cached_prompt_tokens
        self.completion_tokens += result.usage.completion_tokens


class LLMJudge:
    """NLI by an LLM: one JSON-schema call per pair, concurrently (the client bounds it).

    Args:
        llm: The client; share it, its semaphore is the concurrency bound.
        max_tokens: Cap per call (reason plus label fit in ~80 tokens).
        tag: Call-log label.
        counts: Where to count calls and tokens (a batching judge passes its own, so the
            pairs it re-asks one by one are counted with its batches).
    """

    def __init__(self, llm: LLM, *, max_tokens: int = 120, tag: str = "snapshot-nli",
                 counts: JudgeCounts | None = None) -> None:
        self.llm = llm
        self.max_tokens = max_tokens
        self.tag = tag
        self.counts = counts if counts is not None else JudgeCounts()

    @property
    def calls(self) -> int:
        """Chat calls made so far (one per pair)."""
        return self.counts.calls

    async def relation(self, old: str, new: str, *, title: str = "") -> Relation | None:
        """The relation of one pair; ``None`` when the model's output stays unusable.

        An unusable answer is not a transport failure: the pair keeps its fallback label and
        is flagged ambiguous instead of failing the whole article.
        """
        messages = [
            Message.system(render_prompt(f"{PROMPTS}/nli_system.j2")),
            Message.user(render_prompt(f"{PROMPTS}/nli_user.j2", title=title or "(unknown)",
                                       old=old, new=new)),
        ]
        self.counts.calls += 1
        try:
            result = await self.llm.chat(messages, json_schema=SCHEMA, schema_name="nli",
                                         max_tokens=self.max_tokens, tag=self.tag)
        except LLMOutputError:
            self.counts.repairs += 1  # the client gives up only after its repair request
            return None
        except LLMRefusalError:
            return None
        self.counts.add_usage(result)
        parsed = result.parsed
        if isinstance(parsed, dict) and parsed.get("relation") in RELATIONS:
            relation: Relation = parsed["relation"]
            return relation
        return None

    async def relations(
        self, pairs: Sequence[tuple[str, str]], *, title: str = ""
    ) -> list[Relation | None]:
        """Relations of many pairs, asked concurrently, in input order."""
        self.counts.pairs += len(pairs)
        found = list(await asyncio.gather(*(self.relation(o, n, title=title) for o, n in pairs)))
        self.counts.unanswered += found.count(None)
        return found
