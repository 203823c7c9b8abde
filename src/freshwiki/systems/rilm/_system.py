"""The rilm system: answer with retrieval, check the answer's certainty, re-retrieve if unsure.

Per task:

1. Search the sample's snapshot index for ``task.query``, keeping ``candidates`` documents
   (default ``4k``); answer with the top ``k`` in context (first pass).
2. Compute the answer's features (:meth:`freshwiki.llm.LLM.features`) and the gate's
   P(reliable). At or above ``threshold``, the answer is accepted.
3. Otherwise re-rank the same candidates by

       score(d) = (1 - ω) · sim(q, d) + ω · sim(q + a, d)
       ω = min(1, omega_scale · (1 - P(reliable)))

   with cosine similarities of the dense embedder (the index's own), where ``q + a`` is the
   query followed by the first answer. The less the gate trusts the answer, the more the
   answer itself steers retrieval: an answer judged unreliable still names the entities and
   facts it is unsure about, and documents about those are where a correction is. With
   ``omega_scale = 1`` a fully trusted answer would keep the query's ranking and a fully
   distrusted one would rank by query + answer alone. ("ω from the reliable probability",
   as the RiLM issue puts it; ``1 - P(reliable)`` is the simplest monotone choice.)
4. Answer again with the new top ``k`` (second pass; skipped, reusing the first, when the
   re-ranked top ``k`` is the same list), compute its P(reliable), and return whichever
   answer has the higher P(reliable) (the first on a tie: it needed one call fewer).

Everything is in ``Output.trace``: both passes (answer, class probabilities, documents,
prompt messages), ω, the candidates' two similarities and combined scores, which pass was
chosen, and ``retrieved``/``messages`` of the chosen pass, so ``growover-hit`` scores the
documents the returned answer actually saw and a rilm run can itself train a gate.

Options (``--option key=value``): ``gate`` (path of a gate trained by ``freshwiki growover
train-gate``; required), ``k`` (default 5), ``threshold`` (default 0.5), ``omega_scale``
(default 1.0), ``candidates`` (0 = ``4k``).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from freshwiki.llm import LLM, FeatureVector, LLMResult, Message, Usage
from freshwiki.seams import Output, Task
from freshwiki.systems._options import SystemSetupError
from freshwiki.systems.rag import context_messages
from freshwiki.systems.rilm._gate import RELIABLE, CertaintyGate, GateError

if TYPE_CHECKING:
    from freshwiki.retrieval import SearchHit

NAME = "rilm"


class TextEncoder(Protocol):
    """Embeds texts as unit vectors (``freshwiki.retrieval.Embedder`` is one)."""

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """An (n, d) array of unit vectors."""
        ...


class Searcher(Protocol):
    """A snapshot index as rilm needs it (``freshwiki.retrieval.HybridIndex`` is one)."""

    @property
    def embedder(self) -> TextEncoder:
        """The dense embedder the index was built with: sims use the same vector space."""
        ...

    def search(self, query: str, k: int) -> Sequence[SearchHit]:
        """The ``k`` best passages for ``query``, best first."""
        ...


SearcherFor = Callable[[Task], Searcher]
"""The index to search for a task (GrowOVER: the snapshot index of the task's sample)."""

PromptBuilder = Callable[[Sequence[Message], Sequence["SearchHit"]], tuple[Message, ...]]
"""Puts documents into a task's messages; the same layout the gate's training run used."""


class Gate(Protocol):
    """What rilm needs of a gate (:class:`CertaintyGate` is one)."""

    def probabilities(self, features: FeatureVector) -> dict[str, float]:
        """P(class) per class name, including ``reliable``."""
        ...


@dataclass(frozen=True)
class Pass:
    """One retrieve-and-answer pass.

    Attributes:
        hits: The documents in context, best first.
        messages: The prompt the model saw.
        result: The model's reply.
        features: Its features.
        probs: The gate's class probabilities for it.
    """

    hits: tuple[SearchHit, ...]
    messages: tuple[Message, ...]
    result: LLMResult
    features: FeatureVector
    probs: dict[str, float]

    @property
    def reliable(self) -> float:
        """P(reliable)."""
        return self.probs[RELIABLE]

    def trace(self) -> dict[str, Any]:
        """JSON-ready record of the pass."""
        return {
            "answer": self.result.text,
            "probabilities": {c: round(p, 6) for c, p in self.probs.items()},
            "retrieved": retrieved_trace(self.hits),
            "messages": [m.to_dict() for m in self.messages],
            "features": {"kind": self.features.kind, "dim": self.features.dim,
                         **self.features.detail},
            "finish_reason": self.result.finish_reason,
            "cache_hit": self.result.cache_hit,
        }


def retrieved_trace(hits: Sequence[SearchHit]) -> list[dict[str, Any]]:
    """The ``retrieved`` list ``growover-hit`` reads: passage ids in rank order."""
    return [
        {"rank": i, "id": h.passage.id, "title": h.passage.title,
         "section": list(h.passage.section_path), "score": h.score}
        for i, h in enumerate(hits, start=1)
    ]


def omega_for(p_reliable: float, omega_scale: float) -> float:
    """ω = min(1, omega_scale · (1 - P(reliable))), never below 0."""
    return float(min(1.0, max(0.0, omega_scale * (1.0 - p_reliable))))


def rerank(
    query: str,
    answer: str,
    hits: Sequence[SearchHit],
    omega: float,
    encoder: TextEncoder,
) -> tuple[list[int], dict[str, list[float]]]:
    """Order ``hits`` by (1 - ω)·sim(q, d) + ω·sim(q + a, d), best first.

    Similarities are dot products of the encoder's unit vectors (cosines) of the query, the
    query followed by the answer, and each passage's indexed text (heading and content, what
    the dense index embedded). Ties keep the original retrieval order.

    Returns:
        The new order as indices into ``hits``, and per candidate (in ``hits`` order) its
        ``sim_q``, ``sim_qa`` and combined ``score``.
    """
    texts = [query, f"{query} {answer}".strip()] + [h.passage.indexed_text for h in hits]
    vectors = np.asarray(encoder.encode(texts), dtype=np.float64)
    docs = vectors[2:]
    sim_q = docs @ vectors[0]
    sim_qa = docs @ vectors[1]
    scores = (1.0 - omega) * sim_q + omega * sim_qa
    order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))
    return order, {
        "sim_q": [float(v) for v in sim_q],
        "sim_qa": [float(v) for v in sim_qa],
        "score": [float(v) for v in scores],
    }


class RiLMSystem:
    """Retrieval-interactive answering with a certainty gate; see the module docstring.

    Args:
        llm: The model that answers; its backend must compute the gate's kind of features.
        gate: The trained gate.
        searcher_for: The index to search for a task.
        k: Documents in context per pass.
        threshold: P(reliable) at or above which the first answer is accepted.
        omega_scale: Multiplies 1 - P(reliable) to give ω (capped at 1).
        candidates: Documents fetched once and re-ranked (0: ``4k``).
        prompt: How documents are put into the messages.
        gate_id: Identity of the gate for :meth:`describe` (a content hash).
        close: Called by :meth:`aclose` (to close indexes the searcher opened).
    """

    name = NAME

    def __init__(
        self,
        llm: LLM,
        gate: Gate,
        searcher_for: SearcherFor,
        *,
        k: int = 5,
        threshold: float = 0.5,
        omega_scale: float = 1.0,
        candidates: int = 0,
        prompt: PromptBuilder = context_messages,
        gate_id: str = "",
        close: Callable[[], None] | None = None,
    ) -> None:
        if k < 1:
            raise SystemSetupError(f"system {NAME!r}: k must be at least 1, got {k}",
                                   hint="pass e.g. --option k=5.")
        if not 0.0 <= threshold <= 1.0:
            raise SystemSetupError(
                f"system {NAME!r}: threshold must be in [0, 1], got {threshold}",
                hint="pass e.g. --option threshold=0.5.")
        if omega_scale < 0.0:
            raise SystemSetupError(
                f"system {NAME!r}: omega_scale must be at least 0, got {omega_scale}",
                hint="pass e.g. --option omega_scale=1.0.")
        if candidates and candidates < k:
            raise SystemSetupError(
                f"system {NAME!r}: candidates ({candidates}) must be at least k ({k})",
                hint=f"pass --option candidates={4 * k}, or 0 for 4k.")
        self.llm = llm
        self.gate = gate
        self.searcher_for = searcher_for
        self.k = k
        self.threshold = threshold
        self.omega_scale = omega_scale
        self.candidates = candidates or 4 * k
        self.prompt = prompt
        self.gate_id = gate_id
        self._close = close

    def describe(self) -> Mapping[str, Any]:
        """Everything besides the model that decides the answers, including the gate's hash."""
        return {"gate": self.gate_id, "k": self.k, "threshold": self.threshold,
                "omega_scale": self.omega_scale, "candidates": self.candidates}

    async def _answer(self, task: Task, hits: Sequence[SearchHit]) -> Pass:
        messages = self.prompt(task.messages, hits)
        result = await self.llm.chat(messages, max_tokens=task.max_tokens,
                                     temperature=task.temperature, tag=f"eval:{NAME}")
        features = await self.llm.features(messages, result.text, tag=f"eval:{NAME}")
        return Pass(tuple(hits), tuple(messages), result, features,
                    self.gate.probabilities(features))

    async def respond(self, task: Task) -> Output:
        """Retrieve, answer, gate; re-retrieve and answer again when the gate is unsure."""
        started = time.perf_counter()
        searcher = await asyncio.to_thread(self.searcher_for, task)
        pool = list(await asyncio.to_thread(searcher.search, task.query, self.candidates))
        first = await self._answer(task, pool[: self.k])
        trace: dict[str, Any] = {
            "query": task.query, "k": self.k, "threshold": self.threshold,
            "omega_scale": self.omega_scale, "candidates": len(pool),
            "first": first.trace(), "second": None, "omega": None, "rerank": None,
        }
        chosen, second = first, None
        accepted = first.reliable >= self.threshold
        if not accepted:
            omega = omega_for(first.reliable, self.omega_scale)
            order, sims = await asyncio.to_thread(
                rerank, task.query, first.result.text, pool, omega, searcher.embedder
            )
            top = [pool[i] for i in order[: self.k]]
            trace["omega"] = omega
            trace["rerank"] = {"ids": [h.passage.id for h in pool], **sims,
                               "order": [pool[i].passage.id for i in order]}
            if [h.passage.id for h in top] == [h.passage.id for h in first.hits]:
                trace["second"] = {"same_documents": True}
            else:
                second = await self._answer(task, top)
                trace["second"] = second.trace()
                if second.reliable > first.reliable:
                    chosen = second
        calls = [first] if second is None else [first, second]
        trace.update({
            "accepted": accepted,
            "chosen": "first" if chosen is first else "second",
            "retrieved": retrieved_trace(chosen.hits),
            "messages": [m.to_dict() for m in chosen.messages],
            "p_reliable": chosen.reliable,
            "finish_reason": chosen.result.finish_reason,
            "refused": chosen.result.refused,
        })
        usage = Usage(
            prompt_tokens=sum(p.result.usage.prompt_tokens for p in calls),
            completion_tokens=sum(p.result.usage.completion_tokens for p in calls),
            cached_prompt_tokens=sum(p.result.usage.cached_prompt_tokens for p in calls),
        )
        return Output(
            text=chosen.result.text,
            usage=usage,
            latency_s=time.perf_counter() - started,
            cache_hit=all(p.result.cache_hit for p in calls),
            model=chosen.result.model,
            trace=trace,
        )

    async def aclose(self) -> None:
        """Close what the searcher opened (through ``close``)."""
        if self._close is not None:
            self._close()


def load_gate_for(llm: LLM, path: Path) -> tuple[CertaintyGate, str]:
    """Load a gate, check it fits ``llm``'s features, and hash it for the run identity.

    Raises:
        SystemSetupError: the file is missing or damaged, or was trained on another model or
            kind of features than ``llm`` produces.
    """
    try:
        gate = CertaintyGate.load(path)
        gate.check(llm.feature_kind, llm.backend.model_id,
                   source=f"model {llm.spec}'s answer features")
    except GateError as exc:
        raise SystemSetupError(f"system {NAME!r}: {exc.message}", hint=exc.hint) from exc
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return gate, f"{path.name}@{digest}"
