"""The rilm and ralm-best systems: GrowOVER §4 (decision gate, adaptive re-retrieval).

Per task (``k`` = 3 as the paper):

1. **Retrieve** the top ``k`` documents of the sample's snapshot index for ``task.query``
   (dense search by default: the paper's retriever is a sentence-embedding model, as ours is).
2. **Decision gate (Eq. 1).** Each document goes into its own prompt with the question; the
   model's last hidden state after that prompt (no answer yet) goes through the certainty
   classifier. The document whose state gets the highest P(reliable) is the one the model
   answers from. If the classifier's most probable class for that state is ``reliable``, the
   answer is adopted and the task ends.
3. **Adaptive re-retrieval (Eq. 2 and 3).** Otherwise the weight

       ω = P_τ(reliable)        (the classifier's softmax with its logits divided by τ)

   says how far the answer may steer the new search: documents of the *whole* index, except
   the first ``k``, are ranked by

       score(d) = (1 - ω) · cos(q, d) + ω · cos(q ⊕ a, d)

   (``q ⊕ a``: the query followed by the answer), which is the inner product of ``d`` with
   ``(1 - ω)·e(q) + ω·e(q ⊕ a)``, so one dense vector search ranks the whole index exactly.
   The less reliable the answer, the less it is used. τ = 2.0 is the paper's value with
   sentence-BERT embeddings (its Appendix A); the paper's Eq. 2 lost its symbols in our copy,
   and a temperature on the classifier's softmax is our reading of "the reliable probability
   computed with a hyper-parameter". Option ``arr`` replaces ω by a constant for the two
   baselines of the paper's Table 3: ``query`` (ω = 0, the query alone) and ``append``
   (ω = 1, the answer always appended); ``paper`` (default) is Eq. 2.
4. **Second gate, final pick.** The gate picks one of the ``k`` new documents as in step 2 and
   the model answers from it; the answer whose document had the higher P(reliable) is
   returned (the first on a tie: it is what the gate looked at first).

``ralm-best`` is steps 1 and 2 without the gate's verdict: the paper's RaLM baseline that answers
from the classifier-selected document.

Everything is in ``Output.trace``: per pass the documents with their class probabilities,
the chosen one, the prompt and answer; ``omega`` (Eq. 2's P_τ(reliable), whatever the mode);
``adopted``; which pass was returned (``chosen``); ``retrieved`` (the returned answer's
document, what ``growover-hit`` scores) and ``messages`` (its prompt). When the gate does not
adopt, ``trace["arr"]`` holds ``mode`` and ``weight`` (the ω the second search used), the
excluded first documents, ``retrieved`` (what the second pass read) and the top ``k`` of *all
three* modes under their names (``paper``, ``query``, ``append``). The first pass does not
depend on the mode, so the not-adopted samples are the same in every mode, and one run gives
the paper's Table 3 (retrieval accuracy of the three re-retrievals on those samples) without a
second run; only the answers after re-retrieval need a run per mode.

Options (``--option key=value``): ``gate`` (QA gate from ``freshwiki growover train-gate``;
required for QA samples), ``dialogue_gate`` (the same for dialogue turns, which the paper
trains separately), ``k`` (3), ``tau`` (2.0), ``method`` (``dense``; ``hybrid`` for BM25 +
dense fusion in the first search), ``arr`` (``paper``, ``query`` or ``append``: the weight the
second search uses, see step 3).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from freshwiki.llm import LLM, FeatureVector, LLMResult, Message, Usage
from freshwiki.seams import Output, Task
from freshwiki.systems._options import SystemSetupError
from freshwiki.systems.rag import context_messages
from freshwiki.systems.rilm._gate import CLASSES, RELIABLE, CertaintyGate, GateError

if TYPE_CHECKING:
    from freshwiki.retrieval import SearchHit

NAME = "rilm"
BEST_NAME = "ralm-best"
METHODS = ("dense", "hybrid")
ARR_MODES = ("paper", "query", "append")
"""Re-retrieval weights: Eq. 2's ω, the query alone (ω = 0), the answer always (ω = 1)."""
TAU = 2.0
"""The paper's Eq. 2 hyper-parameter with sentence-BERT retrieval (GrowOVER Appendix A)."""


class TextEncoder(Protocol):
    """Embeds texts as unit vectors (``freshwiki.retrieval.Embedder`` is one)."""

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """An (n, d) array of unit vectors."""
        ...


class Searcher(Protocol):
    """A snapshot index as rilm needs it (``freshwiki.retrieval.HybridIndex`` is one)."""

    @property
    def embedder(self) -> TextEncoder:
        """The dense embedder the index was built with: ARR searches in its vector space."""
        ...

    def search(self, query: str, k: int = 5, *, method: Any = "hybrid") -> Sequence[SearchHit]:
        """The ``k`` best passages for ``query``, best first."""
        ...

    def search_vector(self, vector: Any, k: int = 5, *,
                      exclude: Collection[int] = ()) -> Sequence[SearchHit]:
        """The ``k`` passages with the largest inner product with ``vector``, best first."""
        ...


SearcherFor = Callable[[Task], Searcher]
"""The index to search for a task (GrowOVER: the snapshot index of the task's sample)."""

PromptBuilder = Callable[[Sequence[Message], Sequence["SearchHit"]], tuple[Message, ...]]
"""Puts documents into a task's messages; the same layout the gate's training used."""


class Gate(Protocol):
    """What rilm needs of a gate (:class:`CertaintyGate` is one)."""

    def probabilities(self, features: FeatureVector, *,
                      temperature: float = 1.0) -> dict[str, float]:
        """P(class) per class name, including ``reliable``."""
        ...


GateFor = Callable[[Task], Gate]
"""The gate for a task (QA and dialogue have their own)."""


@dataclass(frozen=True)
class Candidate:
    """One (query, document) prompt as the gate saw it.

    Attributes:
        hit: The document.
        messages: The prompt with that document alone.
        features: The model's state after the prompt.
        probs: The gate's class probabilities.
    """

    hit: SearchHit
    messages: tuple[Message, ...]
    features: FeatureVector
    probs: dict[str, float]

    @property
    def reliable(self) -> float:
        """P(reliable)."""
        return self.probs[RELIABLE]

    @property
    def label(self) -> str:
        """The most probable class (the first of :data:`CLASSES` on a tie)."""
        return max(CLASSES, key=lambda c: self.probs.get(c, 0.0))


@dataclass(frozen=True)
class Pass:
    """One retrieve, gate and answer pass.

    Attributes:
        candidates: The documents retrieved, each with the gate's reading, in rank order.
        chosen: Index into ``candidates`` of the document the model answered from.
        result: The model's reply.
    """

    candidates: tuple[Candidate, ...]
    chosen: int
    result: LLMResult

    @property
    def best(self) -> Candidate:
        """The chosen document's candidate."""
        return self.candidates[self.chosen]

    @property
    def reliable(self) -> float:
        """P(reliable) of the chosen document's state."""
        return self.best.reliable

    def trace(self) -> dict[str, Any]:
        """JSON-ready record of the pass."""
        return {
            "answer": self.result.text,
            "chosen": self.chosen + 1,  # rank of the document answered from
            "label": self.best.label,
            "probabilities": {c: round(p, 6) for c, p in self.best.probs.items()},
            "documents": [
                {**retrieved_trace([c.hit])[0], "rank": i,
                 "probabilities": {k: round(p, 6) for k, p in c.probs.items()}}
                for i, c in enumerate(self.candidates, start=1)
            ],
            "retrieved": retrieved_trace([self.best.hit]),
            "messages": [m.to_dict() for m in self.best.messages],
            "finish_reason": self.result.finish_reason,
            "cache_hit": self.result.cache_hit,
        }


def retrieved_trace(hits: Sequence[SearchHit]) -> list[dict[str, Any]]:
    """The ``retrieved`` list ``growover-hit`` reads: passage ids in rank order."""
    return [
        {"rank": i, "id": h.passage.id, "title": h.passage.title,
         "section": list(h.passage.section_path), "score": h.score,
         "sentences": list(h.passage.meta.get("sentences", ()))}
        for i, h in enumerate(hits, start=1)
    ]


def arr_vector(query: str, answer: str, omega: float,
               encoder: TextEncoder) -> npt.NDArray[np.float64]:
    """``(1 - ω)·e(q) + ω·e(q ⊕ a)``: its inner product with a unit ``d`` is Eq. 3's score."""
    return arr_vectors(query, answer, {"w": omega}, encoder)["w"]


def arr_vectors(query: str, answer: str, weights: Mapping[str, float],
                encoder: TextEncoder) -> dict[str, npt.NDArray[np.float64]]:
    """:func:`arr_vector` for several weights, encoding the two texts once."""
    vectors = np.asarray(encoder.encode([query, f"{query} {answer}".strip()]), dtype=np.float64)
    return {name: (1.0 - w) * vectors[0] + w * vectors[1] for name, w in weights.items()}


class RiLMSystem:
    """GrowOVER's retrieval-interactive LM; see the module docstring.

    Args:
        llm: The model that answers; its backend must compute the gate's kind of features.
        gate_for: The gate for a task.
        searcher_for: The index to search for a task.
        k: Documents per retrieval.
        tau: Temperature of the classifier's softmax that gives ω (Eq. 2).
        method: First search's method (``dense`` or ``hybrid``).
        arr: Which weight the second search uses (:data:`ARR_MODES`; ``paper`` is Eq. 2).
        re_retrieve: ``False`` gives ``ralm-best``: answer from the gate's document, no verdict.
        name: Registry name.
        prompt: How a document is put into the messages.
        gate_id: Identity of the gate(s) for :meth:`describe` (content hashes).
        close: Called by :meth:`aclose` (to close indexes the searcher opened).
    """

    def __init__(
        self,
        llm: LLM,
        gate_for: GateFor,
        searcher_for: SearcherFor,
        *,
        k: int = 3,
        tau: float = TAU,
        method: str = "dense",
        arr: str = "paper",
        re_retrieve: bool = True,
        name: str = NAME,
        prompt: PromptBuilder = context_messages,
        gate_id: str = "",
        close: Callable[[], None] | None = None,
    ) -> None:
        if k < 1:
            raise SystemSetupError(f"system {name!r}: k must be at least 1, got {k}",
                                   hint="pass e.g. --option k=3 (the paper's value).")
        if not tau > 0.0:
            raise SystemSetupError(f"system {name!r}: tau must be positive, got {tau}",
                                   hint=f"pass e.g. --option tau={TAU} (the paper's value).")
        if method not in METHODS:
            raise SystemSetupError(f"system {name!r}: unknown method {method!r}",
                                   hint=f"use one of {', '.join(METHODS)}.")
        if arr not in ARR_MODES:
            raise SystemSetupError(f"system {name!r}: unknown arr mode {arr!r}",
                                   hint=f"use one of {', '.join(ARR_MODES)} (paper: Eq. 2's "
                                   "ω; query: ω = 0; append: ω = 1).")
        self.name = name
        self.llm = llm
        self.gate_for = gate_for
        self.searcher_for = searcher_for
        self.k = k
        self.tau = tau
        self.method = method
        self.arr = arr
        self.re_retrieve = re_retrieve
        self.prompt = prompt
        self.gate_id = gate_id
        self._close = close

    def describe(self) -> Mapping[str, Any]:
        """Everything besides the model that decides the answers, including the gate's hash."""
        described: dict[str, Any] = {"gate": self.gate_id, "k": self.k, "method": self.method}
        if self.re_retrieve:
            described["tau"] = self.tau
            described["arr"] = self.arr
        return described

    async def _candidate(self, task: Task, gate: Gate, hit: SearchHit) -> Candidate:
        messages = tuple(self.prompt(task.messages, [hit]))
        features = await self.llm.features(messages, "", tag=f"eval:{self.name}")
        return Candidate(hit, messages, features, gate.probabilities(features))

    async def _pass(self, task: Task, gate: Gate, hits: Sequence[SearchHit]) -> Pass:
        """Eq. 1: read every (query, document) state, answer from the most reliable one."""
        candidates = [await self._candidate(task, gate, h) for h in hits]
        chosen = max(range(len(candidates)), key=lambda i: (candidates[i].reliable, -i))
        result = await self.llm.chat(candidates[chosen].messages, max_tokens=task.max_tokens,
                                     temperature=task.temperature, tag=f"eval:{self.name}")
        return Pass(tuple(candidates), chosen, result)

    async def respond(self, task: Task) -> Output:
        """Retrieve, gate, answer; re-retrieve adaptively when the gate does not adopt."""
        started = time.perf_counter()
        gate = self.gate_for(task)
        searcher = await asyncio.to_thread(self.searcher_for, task)
        hits = list(await asyncio.to_thread(searcher.search, task.query, self.k,
                                            method=self.method))
        trace: dict[str, Any] = {"query": task.query, "k": self.k, "method": self.method}
        if not hits:
            result = await self.llm.chat(task.messages, max_tokens=task.max_tokens,
                                         temperature=task.temperature, tag=f"eval:{self.name}")
            trace.update({"first": None, "second": None, "adopted": None, "chosen": "none",
                          "retrieved": [], "messages": [m.to_dict() for m in task.messages],
                          "finish_reason": result.finish_reason, "refused": result.refused})
            return Output(text=result.text, usage=result.usage,
                          latency_s=time.perf_counter() - started, cache_hit=result.cache_hit,
                          model=result.model, trace=trace)
        first = await self._pass(task, gate, hits)
        adopted = first.best.label == RELIABLE
        trace.update({"first": first.trace(), "adopted": adopted, "second": None,
                      "omega": None, "tau": self.tau if self.re_retrieve else None})
        chosen, second = first, None
        if self.re_retrieve and not adopted:
            omega = gate.probabilities(first.best.features, temperature=self.tau)[RELIABLE]
            weights = {"paper": omega, "query": 0.0, "append": 1.0}
            exclude = [h.key for h in hits]

            def re_search() -> dict[str, list[SearchHit]]:
                vectors = arr_vectors(task.query, first.result.text, weights,
                                      searcher.embedder)
                return {mode: list(searcher.search_vector(vectors[mode], self.k,
                                                          exclude=exclude))
                        for mode in ARR_MODES}

            found = await asyncio.to_thread(re_search)
            new_hits = found[self.arr]
            trace["omega"] = omega
            trace["arr"] = {
                "mode": self.arr,
                "weight": weights[self.arr],
                "excluded": [h.passage.id for h in hits],
                "retrieved": retrieved_trace(new_hits),
                **{mode: retrieved_trace(found[mode]) for mode in ARR_MODES},
            }
            if new_hits:
                second = await self._pass(task, gate, new_hits)
                trace["second"] = second.trace()
                if second.reliable > first.reliable:
                    chosen = second
        calls = [first] if second is None else [first, second]
        trace.update({
            "chosen": "first" if chosen is first else "second",
            "retrieved": retrieved_trace([chosen.best.hit]),
            "messages": [m.to_dict() for m in chosen.best.messages],
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


def load_gate_for(llm: LLM, path: Path, *, system: str = NAME) -> tuple[CertaintyGate, str]:
    """Load a gate, check it fits ``llm``'s features, and hash it for the run identity.

    The hidden size is checked here too (when the backend can tell it without a call), so a
    gate of another size stops the run before the first sample rather than failing on every
    sample.

    Raises:
        SystemSetupError: the file is missing or damaged, or was trained on another model,
            kind of features or feature size than ``llm`` produces.
    """
    try:
        gate = CertaintyGate.load(path)
        gate.check(llm.feature_kind, llm.backend.model_id,
                   source=f"model {llm.spec}'s prompt features")
        gate.check_dim(llm.feature_dim(), source=f"model {llm.spec}'s prompt features",
                       path=path)
    except GateError as exc:
        raise SystemSetupError(f"system {system!r}: {exc.message}", hint=exc.hint) from exc
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return gate, f"{path.name}@{digest}"
