"""The rag system: retrieve passages from the hybrid index, then answer with them in context.

For each task it searches the index for ``task.query`` (the bare question, not the whole
rendered prompt: templates add instructions that are noise to a retriever), puts the top
``k`` passages into the last user message as numbered context (``prompts/rag_context.j2``,
each passage labelled with article, section and revision date), and sends the benchmark's
messages otherwise unchanged. The retrieved ids, titles, sections and scores go into
``Output.trace`` so reports can tell a retrieval miss from a reading failure.

Options (``--option key=value``): ``k`` (passages, default 5), ``index`` (index name under
``FRESHWIKI_HOME/indexes``; default: ``main`` when you have built it, else the
default corpus, ``default``, built on first use), ``time`` (time intent: ``none``, ``recent``
or ``year=YYYY``, default ``none``). All three are in :meth:`RagSystem.describe`, so changing
one starts a new run. The index *contents* are not: rebuilding an index under the same name
resumes the old run, so give a rebuilt index a new name when results must not mix.

The index is loaded once, lazily, on the first task (so building the system is instant and
``freshwiki eval --help``-style failures stay cheap) and closed in :meth:`RagSystem.aclose`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from freshwiki.llm import LLM, Message
from freshwiki.prompting import render_prompt
from freshwiki.retrieval import HybridIndex, SearchHit, resolve_index_name
from freshwiki.seams import Output, System, Task
from freshwiki.systems._index import LazyIndex
from freshwiki.systems._options import SystemSetupError, read_options

if TYPE_CHECKING:
    from freshwiki.config import Settings

PROMPT = "systems/prompts/rag_context.j2"
DEFAULTS: Mapping[str, Any] = {"k": 5, "index": "main", "time": "none"}


def context_messages(
    messages: Sequence[Message], hits: Sequence[SearchHit]
) -> tuple[Message, ...]:
    """``messages`` with the passages of ``hits`` put in front of the last user message.

    The last user turn is where the benchmark asks its question, and small models attend
    best to context right before the question. Without hits the messages are unchanged.
    """
    if not hits:
        return tuple(messages)
    passages = [
        {
            "number": i,
            "title": h.passage.title,
            "section": " › ".join(h.passage.section_path),
            "date": h.passage.timestamp.date().isoformat() if h.passage.timestamp else "",
            "text": h.passage.text,
        }
        for i, h in enumerate(hits, start=1)
    ]
    out = list(messages)
    last_user = max((i for i, m in enumerate(out) if m.role == "user"), default=None)
    request = out[last_user].content if last_user is not None else ""
    content = render_prompt(PROMPT, passages=passages, request=request)
    if last_user is None:
        out.append(Message.user(content))
    else:
        out[last_user] = Message.user(content)
    return tuple(out)


class RagSystem:
    """Retrieve-then-answer over a :class:`HybridIndex`; see the module docstring.

    Args:
        llm: The model that answers.
        settings: Where the named index lives (``settings.home``).
        k: Passages put in context.
        index_name: Index under ``home/indexes``.
        time_intent: Passed to :meth:`HybridIndex.search` (reorders, never filters).
        index: An already-open index to use instead of loading ``index_name`` (the caller
            keeps ownership: it is not closed by :meth:`aclose`).
    """

    name = "rag"

    def __init__(
        self,
        llm: LLM,
        settings: Settings,
        *,
        k: int = 5,
        index_name: str = "main",
        time_intent: str = "none",
        index: HybridIndex | None = None,
    ) -> None:
        if k < 1:
            raise SystemSetupError(f"system 'rag': k must be at least 1, got {k}",
                                   hint="pass e.g. --option k=5.")
        self.llm = llm
        self.k = k
        self.index_name = index_name
        self.time_intent = time_intent
        self._index = LazyIndex("rag", settings, index_name, index)

    def describe(self) -> Mapping[str, Any]:
        """k, index (name and content digest) and time intent: what decides the passages.

        The digest (:meth:`~freshwiki.retrieval.LazyIndex.content_digest`) makes a rebuilt
        index start a new run, and the same index in another folder keep its run.
        """
        return {"k": self.k, "index": self.index_name,
                "index_content": self._index.content_digest(), "time": self.time_intent}

    async def respond(self, task: Task) -> Output:
        """Search for ``task.query``, then one chat call with the passages in context."""
        started = time.perf_counter()
        index = await self._index.get()
        hits = await asyncio.to_thread(
            index.search, task.query, self.k, time_intent=self.time_intent
        )
        retrieval_s = time.perf_counter() - started
        result = await self.llm.chat(
            context_messages(task.messages, hits), max_tokens=task.max_tokens,
            temperature=task.temperature, tag=f"eval:{self.name}",
        )
        return Output(
            text=result.text,
            usage=result.usage,
            latency_s=time.perf_counter() - started,
            cache_hit=result.cache_hit,
            model=result.model,
            trace={
                "query": task.query,
                "index": self.index_name,
                "retrieval_s": round(retrieval_s, 4),
                "retrieved": [
                    {"rank": h.rank, "id": h.passage.id, "title": h.passage.title,
                     "section": list(h.passage.section_path), "score": h.score}
                    for h in hits
                ],
                "finish_reason": result.finish_reason,
                "refused": result.refused,
            },
        )

    async def aclose(self) -> None:
        """Close the index if this system loaded it."""
        self._index.close()


def rag_system(llm: LLM, settings: Settings, options: Mapping[str, Any]) -> System:
    """``rag``: retrieve, then answer with the passages in context (options k, index, time)."""
    # Without --option index=NAME: the user's `main` index when built, else the default corpus
    # (resolved now, so the run records which one it searched).
    values = read_options("rag", {"index": resolve_index_name(settings), **options}, DEFAULTS)
    return RagSystem(llm, settings, k=values["k"], index_name=values["index"],
                     time_intent=values["time"])
