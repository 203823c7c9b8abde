"""RaLM systems for GrowOVER: retrieve from the sample's own snapshot, then answer.

GrowOVER evaluates each snapshot against the Wikipedia of that snapshot, so the index is not
a system option but a property of the sample: ``Task.sample.metadata["index"]`` names the
snapshot's index folder, opened once per path and shared (see
:class:`freshwiki.retrieval.SnapshotIndexes`). Outside GrowOVER, a sample without
that key falls back to the named index of option ``index`` (as ``rag`` does).

``ralm``: the top ``k`` passages (option ``k``, default 3 as GrowOVER §5), concatenated
before the question (the rag system's context prompt), in rank order. The search is dense
(option ``method``, default ``dense``: GrowOVER retrieves with sentence-BERT embeddings, as our
dense index does; ``hybrid`` adds BM25 fusion). GrowOVER's RaLM-best, which answers from the
document a certainty classifier picks, needs that classifier and lives with it in
:mod:`freshwiki.systems.rilm`; ``--option k=1`` here gives plain top-1.

It records ``Output.trace["retrieved"]``: per passage its rank, id, title, text, score and
the sentence indices it holds, which ``growover-hit`` scores against the evidence.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from freshwiki.errors import FreshwikiError
from freshwiki.llm import LLM
from freshwiki.retrieval import SnapshotIndexes
from freshwiki.seams import Output, System, Task
from freshwiki.systems._index import LazyIndex
from freshwiki.systems._options import SystemSetupError, read_options
from freshwiki.systems.rag import context_messages

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.retrieval import HybridIndex, Method


DEFAULTS: Mapping[str, Any] = {"k": 3, "index": "", "method": "dense"}
METHODS = ("dense", "hybrid")


class RalmSystem:
    """Retrieve ``k`` passages from the sample's snapshot index, answer with them in context.

    Args:
        llm: The model that answers.
        settings: Where a fallback named index lives.
        k: Passages put in context.
        name: Registry name.
        method: Search method, ``dense`` (the paper's) or ``hybrid``.
        index_name: Fallback index for samples without ``metadata["index"]`` (``""``: none).
        indexes: The snapshot-index cache (default: one of its own, closed by
            :meth:`aclose`, with the default embedder of ``settings``).
    """

    def __init__(self, llm: LLM, settings: Settings, *, k: int = 3, name: str = "ralm",
                 index_name: str = "", indexes: SnapshotIndexes | None = None,
                 method: str = "dense") -> None:
        if k < 1:
            raise SystemSetupError(f"system {name!r}: k must be at least 1, got {k}",
                                   hint="pass e.g. --option k=3.")
        if method not in METHODS:
            raise SystemSetupError(f"system {name!r}: unknown method {method!r}",
                                   hint=f"use one of {', '.join(METHODS)}.")
        self.method: Method = "hybrid" if method == "hybrid" else "dense"
        self.name = name
        self.llm = llm
        self.k = k
        self.index_name = index_name
        self._own_indexes = indexes is None
        self._indexes = indexes or SnapshotIndexes(settings=settings)
        self._fallback = LazyIndex(name, settings, index_name) if index_name else None

    def describe(self) -> Mapping[str, Any]:
        """The number of passages and the fallback index: what decides what the model sees.

        A fallback index is identified by its content digest too; per-sample snapshot indexes
        are built from the dataset's snapshots, whose content the benchmark's identity holds.
        """
        described: dict[str, Any] = {
            "k": self.k, "index": self.index_name or "per-sample snapshot index",
            "method": self.method}
        if self._fallback is not None:
            described["index_content"] = self._fallback.content_digest()
        return described

    async def _index(self, task: Task) -> HybridIndex:
        path = task.sample.metadata.get("index")
        if path:
            try:
                return await asyncio.to_thread(self._indexes.get, str(path))
            except FreshwikiError as exc:
                raise SystemSetupError(
                    f"system {self.name!r}: cannot open the snapshot index {path} "
                    f"({exc.message})",
                    hint="rebuild the dataset's snapshot (`freshwiki growover build` resumes "
                    "and re-indexes).") from exc
        if self._fallback is None:
            raise SystemSetupError(
                f"system {self.name!r}: sample {task.sample.id} names no snapshot index",
                hint="use it with the growover benchmark, or pass --option index=NAME.")
        return await self._fallback.get()

    async def respond(self, task: Task) -> Output:
        """Search for ``task.query`` in the snapshot's index, then one chat call."""
        started = time.perf_counter()
        index = await self._index(task)
        hits = await asyncio.to_thread(index.search, task.query, self.k, method=self.method)
        retrieval_s = time.perf_counter() - started
        result = await self.llm.chat(
            context_messages(task.messages, hits), max_tokens=task.max_tokens,
            temperature=task.temperature, tag=f"eval:{self.name}")
        return Output(
            text=result.text, usage=result.usage, latency_s=time.perf_counter() - started,
            cache_hit=result.cache_hit, model=result.model,
            trace={
                "query": task.query,
                "index": str(task.sample.metadata.get("index") or self.index_name),
                "retrieval_s": round(retrieval_s, 4),
                "retrieved": [
                    {"rank": h.rank, "id": h.passage.id, "title": h.passage.title,
                     "text": h.passage.text, "score": h.score,
                     "sentences": list(h.passage.meta.get("sentences", ()))}
                    for h in hits
                ],
                "finish_reason": result.finish_reason,
                "refused": result.refused,
            },
        )

    async def aclose(self) -> None:
        """Close the indexes this system opened (not a cache it was given)."""
        if self._own_indexes:
            self._indexes.close()
        if self._fallback is not None:
            self._fallback.close()


def ralm_system(llm: LLM, settings: Settings, options: Mapping[str, Any]) -> System:
    """``ralm``: the top ``k`` passages of the sample's snapshot index in context."""
    values = read_options("ralm", options, DEFAULTS)
    return RalmSystem(llm, settings, k=values["k"], name="ralm", index_name=values["index"],
                      method=values["method"])
