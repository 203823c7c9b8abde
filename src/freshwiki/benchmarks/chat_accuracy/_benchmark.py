"""``chat_accuracy``: the frozen chat evaluation set as a runner benchmark.

Each item is a sample whose metadata carries the item as the set stores it (kind, gold parts,
the leads it is about, the turns of a follow-up). The benchmark is a
:class:`~freshwiki.seams.Dialogue` only so that a two-turn follow-up can be asked as a
conversation: :meth:`ChatAccuracy.converse` sends the first question, then the second with
the system's own first reply in the history, and commits the second reply (the one scored).
It never calls the simulated user's model. A one-turn item is one ordinary ``respond``.

Two scorers place the reply: ``chat-accuracy-rules`` by rules only (``other`` when they
cannot tell), ``chat-accuracy`` by rules and, where they cannot tell, the blind reading's
label for that exact reply (``labels.jsonl`` beside the questions). Labels are read when the
run is scored; the script re-reads them when it reports, so labels added later count there.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshwiki.benchmarks._options import options_with_defaults
from freshwiki.benchmarks.chat_accuracy._data import (
    ChatEvalError,
    items_hash,
    load_items,
    resolve_path,
)
from freshwiki.benchmarks.chat_accuracy._rules import (
    GOOD,
    KINDS,
    outcome,
    read_labels,
    rule_outcome,
)
from freshwiki.llm import Message, Usage
from freshwiki.seams import Output, Respond, Sample, Score, Scorer, Task

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.llm import LLM

TEMPLATE = "qa"
REPLY_TOKENS = 200
"""Generation cap of each reply (the script's since the first run)."""
DEFAULT_KINDS = tuple(k for k in KINDS if k != "conflict")
"""Kinds run by default: the conflict items need their own index (see the package docs)."""
OPTIONS: Mapping[str, Any] = {"path": "", "split": "test", "kinds": ",".join(DEFAULT_KINDS),
                              "legacy": "", "falseqa": "", "stride": 1}
"""Benchmark options and their defaults (``--benchmark-option key=value``)."""


def system_label(respond: Respond) -> str:
    """The name a reply's hand label is keyed by: ``checked``/``wikichat`` for ``grounded``.

    The labels were read per script system (vanilla, rag, checked, wikichat), so the
    grounded system is named by its mode.
    """
    system = getattr(respond, "__self__", None)
    name = str(getattr(system, "name", "") or "")
    if name == "grounded" and system is not None:
        return str(system.describe().get("mode", name))
    return name


def reply_grounded(trace: Mapping[str, Any]) -> bool:
    """Whether the reply is an answer (the grounded chat's "I don't know" is ``False``)."""
    return bool(trace.get("grounded", True))


class ChatAccuracy:
    """The chat evaluation set's items as samples, one template (``qa``).

    Args:
        items: The items (see :func:`load_items`).
        labels_path: The hand labels the ``chat-accuracy`` scorer reads.
        described: What :meth:`describe` reports (no paths).
    """

    name = "chat_accuracy"
    templates: tuple[str, ...] = (TEMPLATE,)
    default_templates: tuple[str, ...] = (TEMPLATE,)
    breakdowns: tuple[str, ...] = ("kind", "set")
    simulator_spec: str | None = None

    def __init__(self, items: Sequence[dict[str, Any]], *, labels_path: Path,
                 described: Mapping[str, Any] | None = None) -> None:
        self.items = tuple(items)
        self.labels_path = labels_path
        self._described = dict(described or {})
        self.dataset_hash = items_hash(self.items)

    location_options: tuple[str, ...] = ("path", "falseqa")
    """Options that only say where the data lives: its content hash identifies it."""

    def describe(self) -> Mapping[str, Any]:
        """Split, kinds, item count: the data's choice, never where it was read from."""
        return {**self._described, "items": len(self.items)}

    def samples(self) -> Iterator[Sample]:
        """One sample per item, in the set's order (the item itself in the metadata)."""
        for item in self.items:
            question = str(item.get("question") or "")
            metadata = {**item, "set": item.get("set") or ""}
            if item["kind"] == "falseqa":  # stored and exported: FalseQA states no licence
                metadata.pop("question", None)
            yield Sample(id=str(item["id"]), input=question,
                         targets=tuple(a[0] for a in item.get("answers") or () if a),
                         metadata=metadata)

    def render(self, sample: Sample, template: str) -> Task:
        """The first (usually only) question as one user message."""
        if template != TEMPLATE:
            raise ChatEvalError(f"chat_accuracy has no template {template!r}",
                                hint=f"its only template is {TEMPLATE!r}.")
        turns = sample.metadata.get("turns") or [sample.input]
        return Task(sample=sample, template=template, messages=(Message.user(turns[0]),),
                    query=turns[0], max_tokens=REPLY_TOKENS)

    async def converse(self, task: Task, respond: Respond, simulator: LLM) -> Output:
        """Ask each turn with the conversation so far; the last reply is the output.

        The trace is the last turn's, plus ``first_reply`` (a follow-up's first answer),
        ``seconds`` (wall time of every turn together, as the script always timed an item)
        and ``system_label`` (what the hand labels are keyed by).
        """
        turns = list(task.sample.metadata.get("turns") or [task.query])
        messages: list[Message] = []
        started = time.perf_counter()
        first = ""
        usage = Usage()
        all_cached = True
        answer: Output | None = None
        for n, question in enumerate(turns):
            messages.append(Message.user(question))
            turn = Task(sample=task.sample, template=task.template, messages=tuple(messages),
                        query=question, max_tokens=task.max_tokens,
                        temperature=task.temperature)
            answer = await respond(turn)
            messages.append(Message.assistant(answer.text))
            usage = Usage(prompt_tokens=usage.prompt_tokens + answer.usage.prompt_tokens,
                          completion_tokens=usage.completion_tokens
                          + answer.usage.completion_tokens,
                          cached_prompt_tokens=usage.cached_prompt_tokens
                          + answer.usage.cached_prompt_tokens)
            all_cached = all_cached and answer.cache_hit
            if n == 0 and len(turns) > 1:
                first = answer.text
        assert answer is not None  # every item has at least one turn
        seconds = time.perf_counter() - started
        trace = {**dict(answer.trace), "first_reply": first, "seconds": round(seconds, 2),
                 "system_label": system_label(respond)}
        if task.sample.metadata.get("kind") == "falseqa":
            trace = _without(trace, task.sample.input,
                             f"(FalseQA row {task.sample.metadata.get('falseqa_row')})")
        return Output(text=answer.text, usage=usage, latency_s=seconds, cache_hit=all_cached,
                      model=answer.model, trace=trace)

    def scorers(self, judge: LLM | None) -> Sequence[Scorer]:
        """Rules plus this set's hand labels (first: the leaderboard's headline), rules alone.

        No judge is needed.
        """
        return [LabelledScorer(self.labels_path), RuleScorer()]


class RuleScorer:
    """``chat-accuracy-rules``: the rules' outcome as the label; 1 for the kind's good outcomes.

    ``other`` (the rules cannot tell) scores 0: this scorer is the floor the labels raise.
    """

    name = "chat-accuracy-rules"

    async def score(self, task: Task, output: Output) -> Score:
        """Place the reply by rules."""
        item = task.sample.metadata
        ruled = rule_outcome(item, output.text, reply_grounded(output.trace))
        return Score(value=float(ruled in GOOD[item["kind"]]), label=ruled,
                     data={"kind": item["kind"], "rule": ruled})


class LabelledScorer:
    """``chat-accuracy``: the rules' outcome, or the hand label of this exact reply.

    Args:
        labels_path: ``labels.jsonl`` (read once, when first needed).
    """

    name = "chat-accuracy"

    def __init__(self, labels_path: Path) -> None:
        self.labels_path = labels_path
        self._labels: dict[str, dict[str, Any]] | None = None

    async def score(self, task: Task, output: Output) -> Score:
        """Place the reply; ``data["unread"]`` says the rules could not and no label has."""
        if self._labels is None:
            self._labels = read_labels(self.labels_path)
        item = task.sample.metadata
        system = str(output.trace.get("system_label") or "")
        grounded = reply_grounded(output.trace)
        ruled = rule_outcome(item, output.text, grounded)
        placed = outcome(system, item, output.text, grounded, self._labels)
        return Score(value=float(placed in GOOD[item["kind"]]), label=placed,
                     explanation="by rules" if placed == ruled else "by a hand label",
                     data={"kind": item["kind"], "rule": ruled, "unread": placed == "other"})


def _without(trace: Mapping[str, Any], text: str, stand_in: str) -> dict[str, Any]:
    """``trace`` with every copy of ``text`` replaced by ``stand_in``.

    FalseQA's question texts are read from a local clone and never stored: its repository
    states no licence, and stored traces are exported and committed. A system's trace holds
    the question (rag's ``query``, the chat's search queries and stage inputs).
    """
    if not text:
        return dict(trace)
    encoded = json.dumps(text, ensure_ascii=False)[1:-1]
    stand = json.dumps(stand_in, ensure_ascii=False)[1:-1]
    scrubbed = json.loads(json.dumps(trace, ensure_ascii=False).replace(encoded, stand))
    return dict(scrubbed)


def chat_accuracy_benchmark(settings: Settings, options: Mapping[str, Any]) -> ChatAccuracy:
    """``chat_accuracy``: options path, split, kinds, legacy, falseqa (a clone), stride.

    Raises:
        ChatEvalError: an unknown option, split, kind or legacy set; a bad path or clone.
    """
    values = options_with_defaults('chat_accuracy', options, OPTIONS, ChatEvalError)
    folder = resolve_path(str(values["path"]) or None)
    kinds = _names(values["kinds"])
    legacy = _names(values["legacy"])
    try:
        stride = int(values["stride"])
    except (TypeError, ValueError):
        stride = 0
    if stride < 1:
        raise ChatEvalError(f"chat_accuracy: stride must be a whole number >= 1, not "
                            f"{values['stride']!r}", hint="pass e.g. stride=3 (every third).")
    falseqa = Path(str(values["falseqa"])).expanduser() if values["falseqa"] else None
    # The stride is taken over every kind of the split, then the kinds chosen: the conflict
    # items' run and the others' then together make exactly the items one strided run had.
    every = load_items(folder, str(values["split"]), KINDS, legacy, falseqa)[::stride]
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise ChatEvalError(f"chat_accuracy: unknown kinds {bad}",
                            hint=f"choose from {', '.join(KINDS)}.")
    items = [i for i in every if i["kind"] in kinds]
    described = {"set": "chat_eval", "split": str(values["split"]), "kinds": kinds,
                 "legacy": legacy, "falseqa": falseqa is not None, "stride": stride}
    return ChatAccuracy(items, labels_path=folder / "labels.jsonl", described=described)


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


def rule_scorer(judge: LLM | None) -> Scorer:
    """``chat-accuracy-rules`` by name (needs no judge)."""
    return RuleScorer()


def labelled_scorer(judge: LLM | None) -> Scorer:
    """``chat-accuracy`` by name, reading the repository's labels (needs no judge).

    Raises:
        ChatEvalError: outside a source checkout (run it through the benchmark instead).
    """
    return LabelledScorer(resolve_path(None) / "labels.jsonl")
