"""The simulated-chat benchmark object the runner sees, and its registration."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshwiki.benchmarks.simulated_chat._conversationality import (
    RATINGS,
    STYLES,
    ConversationJudge,
    RatingScorer,
    conversationality_scorers,
)
from freshwiki.benchmarks.simulated_chat._factuality import FactualityScorer
from freshwiki.benchmarks.simulated_chat._simulator import PROMPTS, next_user_message
from freshwiki.benchmarks.simulated_chat._topics import CATEGORIES, TopicsError, load_topics
from freshwiki.config import load_settings
from freshwiki.llm import LLM, Message, Usage
from freshwiki.prompting import render_prompt, templates_hash
from freshwiki.retrieval import LazyIndex, resolve_index_name
from freshwiki.seams import Output, Respond, Sample, Scorer, ScorerFactory, Task

if TYPE_CHECKING:
    from freshwiki.config import Settings

DEFAULT_TURNS = 3
REPLY_TOKENS = 250
"""Generation cap per chatbot reply (as WikiContradict's, and ample for a few sentences)."""


class SimulatedChat:
    """N-turn conversations between a simulated user and the system under test.

    Args:
        data_dir: Folder holding ``wikipedia/topics/*.json``.
        samples: The topics (see :func:`load_topics`).
        turns: User turns per conversation.
        settings: Where the evidence index lives (factuality).
        index_name: The index factuality retrieves evidence from.
        simulator_spec: Model spec of the simulated user (``None``: the system's model).
        today: The date the conversations are held on (ISO; default: the real date).
        options: The options as given, for :meth:`describe`.
    """

    name = "simulated-chat"
    templates: tuple[str, ...] = ("chat",)
    default_templates: tuple[str, ...] = ("chat",)
    breakdowns: tuple[str, ...] = ("category",)

    def __init__(self, data_dir: Path, samples: Sequence[Sample], *, turns: int,
                 settings: Settings, index_name: str, simulator_spec: str | None = None,
                 today: str | None = None, options: Mapping[str, Any] | None = None,
                 ratings: str = STYLES[0]) -> None:
        if turns < 1:
            raise TopicsError(f"simulated-chat: turns must be at least 1, got {turns}",
                              hint="pass e.g. --benchmark-option turns=3.")
        self.data_dir = data_dir
        self.turns = turns
        self.simulator_spec = simulator_spec
        self.today = today
        self.ratings = ratings
        self.index = LazyIndex(settings, index_name)
        self._samples = tuple(samples)
        self._options = dict(options or {})
        digest = hashlib.sha256()
        for sample in self._samples:
            digest.update(json.dumps([sample.id, sample.documents[0].text]).encode())
        self.dataset_hash = digest.hexdigest()

    def describe(self) -> Mapping[str, Any]:
        """Topics, turns, evidence index and prompts: what decides the conversations' scores.

        The prompts' hash is included because the simulated user's and the judge's prompts
        shape every output and score: editing one starts a new run instead of resuming an old
        one whose first conversations were held differently.
        """
        return {"turns": self.turns, "index": self.index.name,
                "index_content": self.index.content_digest(), "topics": len(self._samples),
                "prompts": prompts_hash(), "ratings": self.ratings}

    location_options: tuple[str, ...] = ("data_dir",)
    """Options that only say where the topic files live (``dataset_hash`` covers them)."""

    def data_location(self) -> Mapping[str, str]:
        """Where the topics were read from: shown with a run, not part of its identity."""
        return {"data_dir": str(self.data_dir)}

    def samples(self) -> Iterator[Sample]:
        """Topics interleaved head, tail, recent (seeded; see ``_topics``)."""
        return iter(self._samples)

    def _day(self) -> dt.date:
        return dt.date.fromisoformat(self.today) if self.today else dt.date.today()

    def render(self, sample: Sample, template: str) -> Task:
        """The conversation's opening: the assistant's system prompt, no user turn yet."""
        if template != "chat":
            raise TopicsError(f"simulated-chat has no template {template!r}",
                              hint="its only template is 'chat'.")
        system = render_prompt(f"{PROMPTS}/assistant_system.j2", today=self._day().isoformat())
        return Task(sample=sample, template=template, messages=(Message.system(system),),
                    query="", max_tokens=REPLY_TOKENS)

    async def converse(self, task: Task, respond: Respond, simulator: LLM) -> Output:
        """``turns`` exchanges: the simulator asks, the system answers with the history so far.

        Each system turn is an ordinary :class:`Task` whose messages are the system prompt and
        the conversation so far, and whose ``query`` is the user's latest message (what a
        retrieving system searches for).
        """
        today = self._day()
        messages: list[Message] = list(task.messages)
        turns: list[dict[str, Any]] = []
        usage = Usage()
        latency = 0.0
        model = ""
        all_cached = True
        for _ in range(self.turns):
            history = [m for m in messages if m.role != "system"]
            question, asked = await next_user_message(simulator, task.sample, history, today)
            messages.append(Message.user(question))
            turn_task = dataclasses.replace(task, messages=tuple(messages), query=question)
            answer = await respond(turn_task)
            reply = answer.text.strip()
            messages.append(Message.assistant(reply))
            usage = _add(usage, answer.usage)
            latency += answer.latency_s
            model = answer.model or model
            all_cached = all_cached and answer.cache_hit
            turns.append({"user": question, "reply": reply, "latency_s": answer.latency_s,
                          "prompt_tokens": answer.usage.prompt_tokens,
                          "completion_tokens": answer.usage.completion_tokens,
                          "simulator_tokens": asked.prompt_tokens + asked.completion_tokens,
                          "trace": dict(answer.trace)})
        transcript = "\n\n".join(f"User: {t['user']}\nAssistant: {t['reply']}" for t in turns)
        return Output(text=transcript, usage=usage, latency_s=latency, cache_hit=all_cached,
                      model=model, trace={"today": today.isoformat(), "turns": turns})

    def scorers(self, judge: LLM | None) -> Sequence[Scorer]:
        """Factuality and the five conversationality dimensions (all need the judge)."""
        if judge is None:
            return []
        return [FactualityScorer(judge, self.index),
                *conversationality_scorers(judge, self.ratings)]

    async def aclose(self) -> None:
        """Close the evidence index if factuality opened it."""
        self.index.close()


def prompts_hash() -> str:
    """A short hash of this benchmark's prompt templates (see :meth:`SimulatedChat.describe`)."""
    return templates_hash(PROMPTS)


def _add(a: Usage, b: Usage) -> Usage:
    return Usage(prompt_tokens=a.prompt_tokens + b.prompt_tokens,
                 completion_tokens=a.completion_tokens + b.completion_tokens,
                 cached_prompt_tokens=a.cached_prompt_tokens + b.cached_prompt_tokens)


OPTIONS: Mapping[str, Any] = {"turns": DEFAULT_TURNS, "seed": 0, "categories": ",".join(CATEGORIES),
                              "data_dir": "", "index": "", "simulator": "", "today": "",
                              "ratings": STYLES[0]}


def simulated_chat_benchmark(settings: Settings, options: Mapping[str, Any]) -> SimulatedChat:
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise TopicsError(f"simulated-chat has no option {', '.join(map(repr, unknown))}",
                          hint="options: " + ", ".join(f"{k} (default {v!r})"
                                                       for k, v in OPTIONS.items()) + ".")
    values = {**OPTIONS, **options}
    try:
        turns, seed = int(values["turns"]), int(values["seed"])
        today = str(values["today"]) or None
        if today:
            dt.date.fromisoformat(today)
    except ValueError as exc:
        raise TopicsError(f"simulated-chat: bad option value ({exc})",
                          hint="turns and seed are integers; today is YYYY-MM-DD.") from None
    data_dir = Path(str(values["data_dir"])) if values["data_dir"] else settings.data_dir
    categories = [c.strip() for c in str(values["categories"]).split(",") if c.strip()]
    if values["ratings"] not in STYLES:
        raise TopicsError(f"simulated-chat: ratings={values['ratings']!r} is not a judge",
                          hint="ratings is one of " + ", ".join(STYLES) + " (default "
                          f"{STYLES[0]}, the paper's one-call rubric).")
    samples = load_topics(data_dir, categories=categories, seed=seed)
    return SimulatedChat(data_dir, samples, turns=turns, settings=settings,
                         index_name=resolve_index_name(settings, str(values["index"]) or None),
                         simulator_spec=str(values["simulator"]) or None, today=today,
                         options=options, ratings=str(values["ratings"]))


def _settings() -> Settings:
    return load_settings().settings


class _DefaultIndex:
    """The configured index, opened on first use (for scorers built by name)."""

    def __init__(self) -> None:
        self._lazy: LazyIndex | None = None

    async def get(self) -> Any:
        if self._lazy is None:
            settings = _settings()
            self._lazy = LazyIndex(settings, resolve_index_name(settings))
        return await self._lazy.get()

    def close(self) -> None:
        if self._lazy is not None:
            self._lazy.close()


def _needs_judge(name: str, judge: LLM | None) -> LLM:
    if judge is None:
        raise TopicsError(f"scorer {name!r} needs a judge model",
                          hint="pass --judge SPEC (or leave the default).")
    return judge


def factuality_scorer(judge: LLM | None) -> Scorer:
    """``chat-factuality``: claims checked against the configured index by the judge."""
    return FactualityScorer(_needs_judge("chat-factuality", judge), _DefaultIndex(),
                            owns_index=True)


def rating_scorer(dimension: str) -> ScorerFactory:
    """The factory of ``chat-<dimension>`` (underscores become hyphens in the name)."""
    name = "chat-" + dimension.replace("_", "-")

    def factory(judge: LLM | None) -> Scorer:
        return RatingScorer(dimension, ConversationJudge(_needs_judge(name, judge)))

    return factory


relevant_scorer = rating_scorer("relevant")
informational_scorer = rating_scorer("informational")
natural_scorer = rating_scorer("natural")
non_repetitive_scorer = rating_scorer("non_repetitive")
temporally_correct_scorer = rating_scorer("temporally_correct")
if {*RATINGS, "temporally_correct"} != {"relevant", "informational", "natural", "non_repetitive",
                                         "temporally_correct"}:
    raise AssertionError("a rating dimension has no scorer factory here")  # pragma: no cover
