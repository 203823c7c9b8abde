"""``chat_latency``: how long one turn takes, per system, on the chat evaluation set's questions.

The questions are the answerable and two-part items of the frozen set's split
(``experiments/data/chat_eval``), taken in turn from the head, tail and recent sets in file
order: questions that need an answer, the costlier case. Each is one sample; nothing is
scored (the benchmark has no scorers): the figure is the time, which the benchmark measures
itself, around the system's whole ``respond``, and stores in the output's trace
(``seconds``, ``first_text_s``, LLM calls and tokens). The benchmark is a
:class:`~freshwiki.seams.Dialogue` for that reason only: the runner hands it the system's
``respond`` to call (the simulated user's model is never used).

Timings mean something only with the response cache off: ``experiments/chat_latency.py``
opens its model with ``cache=False``, and the report counts any output served from the cache.
Two templates: ``qa`` (the bare question, as rag and the grounded chat receive it) and
``dated`` (the question with today's date in a system message, as the plain LLM is asked).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from freshwiki.benchmarks._options import options_with_defaults
from freshwiki.benchmarks.chat_accuracy import (
    ChatEvalError,
    items_hash,
    load_items,
    resolve_path,
)
from freshwiki.llm import Message
from freshwiki.seams import Output, Respond, Sample, Scorer, Task
from freshwiki.systems.vanilla import vanilla_messages

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.llm import LLM

TEMPLATES = ("qa", "dated")
REPLY_TOKENS = 512
"""Generation cap of a timed reply (the script's since issue 31)."""
SETS = ("head", "tail", "recent")
OPTIONS: Mapping[str, Any] = {"path": "", "split": "test"}
"""Benchmark options and their defaults (``--benchmark-option key=value``)."""


def pick_questions(items: Sequence[dict[str, Any]],
                   count: int | None = None) -> list[dict[str, Any]]:
    """The first ``count`` (default all) answerable and two-part items, sets in turn.

    Head, tail and recent take turns, each in file order. The order does not depend on
    ``count``: the first 12 of 24 are the 12, so the benchmark yields them all and
    ``--limit N`` times the first N (one run, resumed as N grows).
    """
    usable = [r for r in items if r["kind"] in ("answerable", "two_part")]
    by_set = {k: [r for r in usable if r.get("set") == k] for k in SETS}
    picked: list[dict[str, Any]] = []
    wanted = len(usable) if count is None else count
    while len(picked) < wanted and any(by_set.values()):
        for name in SETS:
            if by_set[name] and len(picked) < wanted:
                picked.append(by_set[name].pop(0))
    return picked


class ChatLatency:
    """The timed questions; see the module docstring.

    Args:
        items: The questions (see :func:`pick_questions`).
        described: What :meth:`describe` reports besides the count (no paths).
    """

    name = "chat_latency"
    templates: tuple[str, ...] = TEMPLATES
    default_templates: tuple[str, ...] = ("qa",)
    breakdowns: tuple[str, ...] = ("set",)
    simulator_spec: str | None = None

    def __init__(self, items: Sequence[dict[str, Any]], *,
                 described: Mapping[str, Any] | None = None) -> None:
        self.items = tuple(items)
        self._described = dict(described or {})
        self.dataset_hash = items_hash(self.items)

    location_options: tuple[str, ...] = ("path",)
    """Options that only say where the data lives: its content hash identifies it."""

    def describe(self) -> Mapping[str, Any]:
        """Split and question count: the data's choice, never where it was read from."""
        return {**self._described, "questions": len(self.items)}

    def samples(self) -> Iterator[Sample]:
        """One sample per question, in the order they are timed."""
        for item in self.items:
            yield Sample(id=str(item["id"]), input=str(item["question"]),
                         metadata={"kind": item["kind"], "set": item.get("set") or ""})

    def render(self, sample: Sample, template: str) -> Task:
        """The bare question (``qa``) or the question with today's date (``dated``)."""
        if template == "qa":
            messages: tuple[Message, ...] = (Message.user(sample.input),)
        elif template == "dated":
            messages = tuple(vanilla_messages(sample.input))
        else:
            raise ChatEvalError(f"chat_latency has no template {template!r}",
                                hint=f"its templates are {', '.join(TEMPLATES)}.")
        return Task(sample=sample, template=template, messages=messages, query=sample.input,
                    max_tokens=REPLY_TOKENS)

    async def converse(self, task: Task, respond: Respond, simulator: LLM) -> Output:
        """One timed ``respond``, its wall time stored in the trace.

        Beside ``seconds``: the chat's first released text (``first_text_s``; ``None`` when
        nothing streams), LLM calls and tokens (prompt, generated, reused from the KV cache)
        and whether the response cache served it.
        """
        started = time.perf_counter()
        output = await respond(task)
        seconds = time.perf_counter() - started
        chat = output.trace.get("chat") or {}
        first = (chat.get("timings") or {}).get("first_text")
        trace = {**dict(output.trace), "seconds": round(seconds, 4),
                 "first_text_s": None if first is None else round(float(first), 4),
                 "calls": int(chat.get("llm_calls") or 1),
                 "prompt_tokens": output.usage.prompt_tokens,
                 "completion_tokens": output.usage.completion_tokens,
                 "reused_prompt_tokens": output.usage.cached_prompt_tokens,
                 "cache_hit": output.cache_hit}
        return Output(text=output.text, usage=output.usage, latency_s=seconds,
                      cache_hit=output.cache_hit, model=output.model, trace=trace)

    def scorers(self, judge: LLM | None) -> Sequence[Scorer]:
        """None: the figure is the time (see the module docstring)."""
        return []


def chat_latency_benchmark(settings: Settings, options: Mapping[str, Any]) -> ChatLatency:
    """``chat_latency``: options path (the chat_eval folder) and split; ``--limit N`` times N.

    Raises:
        ChatEvalError: an unknown option or split, or a bad path.
    """
    values = options_with_defaults('chat_latency', options, OPTIONS, ChatEvalError)
    folder = resolve_path(str(values["path"]) or None)
    split = str(values["split"])
    items = pick_questions(load_items(folder, split, ("answerable", "two_part")))
    return ChatLatency(items, described={"set": "chat_eval", "split": split})
