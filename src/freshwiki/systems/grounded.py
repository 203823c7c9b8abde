"""The grounded system: the chat pipeline (``freshwiki.chat.GroundedChat``) as a system under test.

Each task's bare question (``task.query``) is sent as a one-turn conversation (a dialogue
benchmark's task sends the conversation so far, see :func:`conversation_of`): the pipeline does
its own retrieval, drafting, claim verification and citing, so the benchmark's rendered prompt
(and any passages a template would show) is deliberately not passed on — this measures what the
chatbot says from the corpus, next to ``vanilla`` (model alone) and ``rag`` (retrieve, then
answer) with the same model.

Options (``--option key=value``): ``mode`` (``checked``, the default: answer, then check each
sentence; or ``wikichat``, WikiChat's staged pipeline; ``fast`` and ``full`` are their old
names and are stored under the new ones), ``k`` (passages per question; 0, the default, is
the mode's own: 3 for ``checked``, 5 for ``wikichat``), ``index``
(default: your ``main`` index when built, else the default corpus), and for ``wikichat`` only
``refine`` (stage 7: ``feedback``, WikiChat's scores and feedback then a rewrite, the default;
or ``plain``, one rewrite call) and ``facts`` (stage 2: ``llm``, summaries written by the model
as the paper does, the default; or ``extractive``, the passages' best sentences copied). All
that shape the replies are in :meth:`GroundedSystem.describe`, so changing one starts a new
run.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from freshwiki.chat import (
    DEFAULT_K,
    ChatEngine,
    ChatError,
    ChatMessage,
    GroundedChat,
    resolve_mode,
)
from freshwiki.llm import LLM, Usage
from freshwiki.retrieval import resolve_index_name
from freshwiki.seams import Output, System, Task
from freshwiki.systems._index import LazyIndex
from freshwiki.systems._options import SystemSetupError, read_options

if TYPE_CHECKING:
    from freshwiki.config import Settings

DEFAULTS: Mapping[str, Any] = {"mode": "checked", "k": 0, "index": "main",
                               "refine": "feedback", "facts": "llm"}
REFINE_WAYS = ("feedback", "plain")
FACTS_WAYS = ("llm", "extractive")


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
        mode: ``checked`` or ``wikichat`` (``fast`` and ``full``, the old names, map to them).
        k: Passages retrieved for the question (0: the mode's own, :data:`DEFAULT_K`).
        index_name: Index to search.
        refine: ``wikichat``'s stage 7, ``feedback`` or ``plain`` (see ``GroundedChat``).
        facts: ``wikichat``'s stage 2, ``llm`` or ``extractive``.
        engine: A ready engine to use instead of building one (tests; not closed here).
    """

    name = "grounded"

    def __init__(self, llm: LLM, settings: Settings, *, mode: str = "checked", k: int = 0,
                 index_name: str = "main", refine: str = "feedback", facts: str = "llm",
                 engine: ChatEngine | None = None) -> None:
        try:
            mode, self.notice = resolve_mode(mode)
        except ChatError as exc:
            raise SystemSetupError(f"system 'grounded': {exc.message}",
                                   hint="pass --option mode=checked or --option mode=wikichat."
                                   ) from exc
        if refine not in REFINE_WAYS:
            raise SystemSetupError(
                f"system 'grounded': refine must be feedback or plain, not {refine!r}",
                hint="pass --option refine=feedback (WikiChat's stage 7) or refine=plain.")
        if facts not in FACTS_WAYS:
            raise SystemSetupError(
                f"system 'grounded': facts must be llm or extractive, not {facts!r}",
                hint="pass --option facts=llm (WikiChat's stage 2) or facts=extractive.")
        for name, value in (("refine", refine), ("facts", facts)):
            if mode == "checked" and value != DEFAULTS[name]:
                raise SystemSetupError(
                    f"system 'grounded': {name} applies to mode wikichat only (the checked "
                    "mode answers and checks; it has no such stage)",
                    hint="add --option mode=wikichat, or leave it out.")
        k = k or DEFAULT_K[mode]  # 0: the mode's own
        if k < 1:
            raise SystemSetupError(f"system 'grounded': k must be at least 1, got {k}",
                                   hint="pass e.g. --option k=5 (or 0 for the mode's own).")
        self.llm = llm
        self.mode = mode
        self.refine = refine
        self.facts = facts
        self.k = k
        self.index_name = index_name
        self._engine = engine
        self._index = LazyIndex("grounded", settings, index_name)

    def describe(self) -> Mapping[str, Any]:
        """Mode, k, index (name and content digest) and (wikichat) refine and facts.

        What decides the pipeline's calls; the index's content digest makes a rebuilt index
        start a new run.
        """
        described: dict[str, Any] = {"mode": self.mode, "k": self.k, "index": self.index_name,
                                     "index_content": self._index.content_digest()}
        if self.mode == "wikichat":
            described["refine"] = self.refine
            described["facts"] = self.facts
        return described

    async def _loaded(self) -> ChatEngine:
        if self._engine is None:
            index = await self._index.get()
            self._engine = self._engine or GroundedChat(
                self.llm, index, mode=self.mode, k=self.k,
                refine=self.refine, facts=self.facts)  # type: ignore[arg-type]
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
    """``grounded``: the grounded chat (options mode, k, index; wikichat: refine, facts)."""
    values = read_options("grounded", {"index": resolve_index_name(settings), **options},
                          DEFAULTS)
    return GroundedSystem(llm, settings, mode=values["mode"], k=values["k"],
                          index_name=values["index"], refine=values["refine"],
                          facts=values["facts"])
