"""The grounded system: the chat pipeline (``freshwiki.chat.GroundedChat``) as a system under test.

Each task's bare question (``task.query``) is sent as a one-turn conversation (a dialogue
benchmark's task sends the conversation so far, see :func:`conversation_of`): the pipeline does
its own retrieval, drafting, claim verification and citing, so the benchmark's rendered prompt
(and any passages a template would show) is deliberately not passed on — this measures what the
chatbot says from the corpus, next to ``vanilla`` (model alone) and ``rag`` (retrieve, then
answer) with the same model.

Options (``--option key=value``): ``mode`` (``fast`` or ``full``, default ``fast``), ``k``
(passages per question, default 5), ``index`` (default: your ``main`` index when built, else
the default corpus), ``refine`` (full mode's stage 7: ``feedback``, WikiChat's scores and
feedback then a rewrite, the default; or ``plain``, one rewrite call; fast mode has no separate
stage 7, so there it must stay the default). All that shape the replies are in
:meth:`GroundedSystem.describe`, so changing one starts a new run.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from freshwiki.chat import ChatEngine, ChatMessage, GroundedChat
from freshwiki.llm import LLM, Usage
from freshwiki.retrieval import resolve_index_name
from freshwiki.seams import Output, System, Task
from freshwiki.systems._index import LazyIndex
from freshwiki.systems._options import SystemSetupError, read_options

if TYPE_CHECKING:
    from freshwiki.config import Settings

DEFAULTS: Mapping[str, Any] = {"mode": "fast", "k": 5, "index": "main", "refine": "feedback"}
REFINE_WAYS = ("feedback", "plain")


def conversation_of(task: Task) -> list[ChatMessage]:
    """The chat history a task carries: its user and assistant turns, ending with the user's.

    A single-turn benchmark's task becomes one user message, its bare question (the rendered
    prompt's instructions and passages are not the user's words); a dialogue's task (the
    messages so far, ending with the simulated user's) keeps every turn, so the pipeline
    resolves follow-ups against the conversation as it does in chat.
    """
    turns = [ChatMessage("user" if m.role == "user" else "assistant", m.content)
             for m in task.messages if m.role in ("user", "assistant")]
    if len(turns) > 1 and turns[-1].role == "user":
        turns[-1] = ChatMessage("user", task.query or turns[-1].content)
        return turns
    return [ChatMessage("user", task.query)]


class GroundedSystem:
    """Answers each task with one grounded chat turn; see the module docstring.

    Args:
        llm: The model every pipeline stage uses.
        settings: Where the index lives.
        mode: ``fast`` or ``full``.
        k: Passages retrieved for the question.
        index_name: Index to search.
        refine: Full mode's stage 7, ``feedback`` or ``plain`` (see ``GroundedChat``).
        engine: A ready engine to use instead of building one (tests; not closed here).
    """

    name = "grounded"

    def __init__(self, llm: LLM, settings: Settings, *, mode: str = "fast", k: int = 5,
                 index_name: str = "main", refine: str = "feedback",
                 engine: ChatEngine | None = None) -> None:
        if mode not in ("fast", "full"):
            raise SystemSetupError(f"system 'grounded': mode must be fast or full, not {mode!r}",
                                   hint="pass --option mode=fast or --option mode=full.")
        if refine not in REFINE_WAYS:
            raise SystemSetupError(
                f"system 'grounded': refine must be feedback or plain, not {refine!r}",
                hint="pass --option refine=feedback (WikiChat's stage 7) or refine=plain.")
        if mode == "fast" and refine != DEFAULTS["refine"]:
            raise SystemSetupError(
                "system 'grounded': refine applies to full mode only (fast mode writes and "
                "refines the reply in one call)",
                hint="add --option mode=full, or leave refine out.")
        if k < 1:
            raise SystemSetupError(f"system 'grounded': k must be at least 1, got {k}",
                                   hint="pass e.g. --option k=5.")
        self.llm = llm
        self.mode = mode
        self.refine = refine
        self.k = k
        self.index_name = index_name
        self._engine = engine
        self._index = LazyIndex("grounded", settings, index_name)

    def describe(self) -> Mapping[str, Any]:
        """Mode, k, index and (full mode) refine: what decides the pipeline's calls."""
        described: dict[str, Any] = {"mode": self.mode, "k": self.k, "index": self.index_name}
        if self.mode == "full":
            described["refine"] = self.refine
        return described

    async def _loaded(self) -> ChatEngine:
        if self._engine is None:
            index = await self._index.get()
            self._engine = self._engine or GroundedChat(
                self.llm, index, mode=self.mode, k=self.k,  # type: ignore[arg-type]
                refine=self.refine)  # type: ignore[arg-type]
        return self._engine

    async def respond(self, task: Task) -> Output:
        """One chat turn on ``task.query``; the reply's citations and trace go to the output."""
        started = time.perf_counter()
        engine = await self._loaded()
        reply = await engine.respond(conversation_of(task))
        trace = reply.trace
        usage = Usage(prompt_tokens=trace.prompt_tokens,
                      completion_tokens=trace.completion_tokens,
                      cached_prompt_tokens=sum(s.cached_prompt_tokens for s in trace.stages))
        data = reply.as_dict()
        return Output(
            text=reply.text,
            usage=usage,
            latency_s=time.perf_counter() - started,
            cache_hit=bool(trace.stages) and trace.cache_hits == trace.llm_calls,
            model=self.llm.backend.model_id,
            trace={"query": task.query, "index": self.index_name, "grounded": reply.grounded,
                   "citations": data["citations"], "chat": data["trace"]},
        )

    async def aclose(self) -> None:
        """Close the index if this system opened it."""
        self._index.close()


def grounded_system(llm: LLM, settings: Settings, options: Mapping[str, Any]) -> System:
    """``grounded``: the grounded chat pipeline (options mode, k, index, refine)."""
    values = read_options("grounded", {"index": resolve_index_name(settings), **options},
                          DEFAULTS)
    return GroundedSystem(llm, settings, mode=values["mode"], k=values["k"],
                          index_name=values["index"], refine=values["refine"])
