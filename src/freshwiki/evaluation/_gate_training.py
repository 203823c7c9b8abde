"""Training data for the RiLM certainty gate, from a finished GrowOVER run in the results store.

The benchmark labels answers without any annotation, from two facts per QA sample: its
instance ``type`` (sample metadata) and whether the system retrieved the evidence (the
``growover-hit`` score):

============  ========  ==============
type          evidence  label
============  ========  ==============
unchanged     hit       ``reliable``
changed       miss      ``misleading``
new           miss      ``uncertain``
============  ========  ==============

An unchanged fact with its evidence in context is what a trustworthy answer looks like; a
changed fact without its (new) evidence invites the stale answer the model memorised; a new
fact without evidence is something the model cannot know. Every other combination
(``initial`` samples, unchanged misses, changed and new hits) is not used but counted, and so
are samples without a retrieval trace (``no-retrieval``), dialogue turns and failed outputs.

Each labelled sample's features are computed by the model for the prompt the system saw and
the answer it gave: the prompt recorded in ``Output.trace["messages"]`` when the system kept
it (``rilm`` does), otherwise rebuilt exactly as ``ralm`` built it: the benchmark's task for
the sample, with the recorded ``retrieved`` passages (looked up by id in the sample's snapshot
index) put in context by :func:`freshwiki.systems.rag.context_messages`.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from freshwiki.errors import FreshwikiError
from freshwiki.evaluation._store import ResultsStore
from freshwiki.llm import LLM, FeatureVector, Message
from freshwiki.systems.rilm import (
    MISLEADING,
    RELIABLE,
    UNCERTAIN,
    CertaintyGate,
    GateReport,
    train_gate,
)

if TYPE_CHECKING:
    from freshwiki.benchmarks import Output
    from freshwiki.config import Settings

HIT_SCORER = "growover-hit"
LABELS: Mapping[tuple[str, str], str] = {
    ("unchanged", "hit"): RELIABLE,
    ("changed", "miss"): MISLEADING,
    ("new", "miss"): UNCERTAIN,
}
"""(instance type, retrieval outcome) -> gate class; any other pair is unused."""


class GateTrainingError(FreshwikiError):
    """A run cannot provide gate training data."""


def label_for(instance_type: str, outcome: str) -> str | None:
    """The gate class of a sample, or ``None`` when the rule does not use it.

    Args:
        instance_type: ``initial``, ``unchanged``, ``new`` or ``changed`` (case-insensitive).
        outcome: The ``growover-hit`` label: ``hit``, ``miss`` or ``no-retrieval``.
    """
    return LABELS.get((instance_type.strip().lower(), outcome.strip().lower()))


def outcome_of(value: float, label: str | None) -> str:
    """``hit``/``miss``/``no-retrieval`` of a ``growover-hit`` score (label, else value)."""
    if label in ("hit", "miss", "no-retrieval"):
        return label
    return "hit" if value >= 1.0 else "miss"


@dataclass(frozen=True)
class Example:
    """One labelled answer.

    Attributes:
        sample_id: The sample.
        template: The template it was rendered with.
        instance_type: Its ``type``.
        outcome: ``hit`` or ``miss``.
        label: The gate class.
    """

    sample_id: str
    template: str
    instance_type: str
    outcome: str
    label: str


@dataclass(frozen=True)
class TrainingSet:
    """What a run provides.

    Attributes:
        run_id: The run read.
        examples: The labelled samples, in sample order.
        counts: Every QA sample with a hit score, by ``"type outcome"`` (used or not).
        skipped: Samples left out before labelling, by reason (dialogue turns, no output).
    """

    run_id: str
    examples: tuple[Example, ...]
    counts: Mapping[str, int]
    skipped: Mapping[str, int] = field(default_factory=dict)

    @property
    def label_counts(self) -> dict[str, int]:
        """Examples per gate class."""
        return dict(Counter(e.label for e in self.examples))


def collect_examples(store: ResultsStore, run_id: str, *,
                     hit_scorer: str = HIT_SCORER) -> TrainingSet:
    """Label the QA samples of a run by the rule of the module docstring.

    Raises:
        UnknownRunError: no such run.
        GateTrainingError: the run has no ``growover-hit`` scores (not a GrowOVER run of a
            retrieving system, or not scored yet).
    """
    results = store.load_run(run_id)
    counts: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    examples: list[Example] = []
    scored = [item for item in results.items if item.scorer == hit_scorer]
    if not scored:
        raise GateTrainingError(
            f"run {results.info.run_id} has no {hit_scorer!r} scores",
            hint="train on a finished `freshwiki eval growover --system ralm` run (its "
            "default scorers include growover-hit).",
        )
    for item in scored:
        kind = str(item.metadata.get("kind", "qa"))
        if kind != "qa":
            skipped[f"{kind} sample"] += 1
            continue
        instance_type = str(item.metadata.get("type", "")).lower() or "untyped"
        outcome = outcome_of(item.value, item.label)
        counts[f"{instance_type} {outcome}"] += 1
        label = label_for(instance_type, outcome)
        if label is not None:
            examples.append(Example(item.sample_id, item.template, instance_type, outcome,
                                    label))
    return TrainingSet(results.info.run_id, tuple(examples), dict(counts), dict(skipped))


PromptFor = Callable[[Example, "Output"], Sequence[Message]]
"""The messages the system sent for an example, given its stored output."""


def recorded_prompt(output: Output) -> list[Message] | None:
    """The prompt a system kept in ``trace["messages"]`` (``[{"role", "content"}, ...]``)."""
    raw = output.trace.get("messages")
    if not isinstance(raw, list) or not raw:
        return None
    try:
        return [Message(m["role"], str(m["content"])) for m in raw]
    except (KeyError, TypeError):
        return None


class RalmPrompts:
    """Rebuilds the prompts of a ``ralm`` run: benchmark task + recorded passages in context.

    Args:
        settings: Where the dataset and the embedding cache live.
        benchmark: The run's benchmark name.
        options: The run's benchmark options.
    """

    def __init__(self, settings: Settings, benchmark: str,
                 options: Mapping[str, Any]) -> None:
        from freshwiki.benchmarks import load_benchmark
        from freshwiki.benchmarks.growover import SnapshotIndexes

        self._benchmark = load_benchmark(benchmark, settings, options)
        self._samples = {s.id: s for s in self._benchmark.samples()}
        self._indexes = SnapshotIndexes(settings=settings)

    def __call__(self, example: Example, output: Output) -> list[Message]:
        """The messages ``ralm`` sent for ``example``.

        Raises:
            GateTrainingError: the sample or a recorded passage no longer exists.
        """
        from freshwiki.benchmarks.growover import growover_retriever
        from freshwiki.retrieval import SearchHit
        from freshwiki.systems.rag import context_messages

        sample = self._samples.get(example.sample_id)
        if sample is None:
            raise GateTrainingError(
                f"sample {example.sample_id} of the run is not in the dataset any more",
                hint="train on a run of the dataset as it is now.")
        task = self._benchmark.render(sample, example.template)
        index = growover_retriever(sample, self._indexes)
        hits = []
        for rank, item in enumerate(output.trace.get("retrieved") or (), start=1):
            passage = index.passage(str(item["id"]))
            if passage is None:
                raise GateTrainingError(
                    f"passage {item['id']} retrieved for {example.sample_id} is not in its "
                    "snapshot index any more", hint="train on a run of the current dataset.")
            score = float(item.get("score") or 0.0)
            hits.append(SearchHit(passage=passage, score=score, rank=rank, key=-1,
                                  fused_score=score))
        return list(context_messages(task.messages, hits))

    def close(self) -> None:
        """Close the snapshot indexes."""
        self._indexes.close()


@dataclass(frozen=True)
class GateTraining:
    """A trained gate and how it came about.

    Attributes:
        gate: The gate (trained on the training split).
        report: Held-out accuracy, recall and confusion.
        data: The labelled samples and the counts of every (type, outcome).
    """

    gate: CertaintyGate
    report: GateReport
    data: TrainingSet


async def example_features(
    llm: LLM,
    store: ResultsStore,
    data: TrainingSet,
    prompt_for: PromptFor | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> list[FeatureVector]:
    """The model's features for each example's (prompt, answer), in example order.

    The prompt is ``trace["messages"]`` when recorded, else ``prompt_for``'s.

    Raises:
        GateTrainingError: an example has no stored output, or its prompt is neither
            recorded nor rebuildable.
    """
    done = 0

    async def one(example: Example) -> FeatureVector:
        nonlocal done
        output = store.get_output(data.run_id, example.sample_id, example.template)
        if output is None:
            raise GateTrainingError(f"no stored output for {example.sample_id}",
                                    hint="resume the run until it is complete.")
        messages = recorded_prompt(output)
        if messages is None:
            if prompt_for is None:
                raise GateTrainingError(
                    f"the output of {example.sample_id} does not record its prompt",
                    hint="train on a run of ralm or rilm on the growover benchmark.")
            messages = list(await asyncio.to_thread(prompt_for, example, output))
        vector = await llm.features(messages, output.text, tag="train-gate")
        done += 1
        if progress is not None:
            progress(done, len(data.examples))
        return vector

    return list(await asyncio.gather(*(one(e) for e in data.examples)))


async def train_gate_from_run(
    store: ResultsStore,
    run_id: str,
    llm: LLM,
    *,
    prompt_for: PromptFor | None = None,
    holdout: float = 0.2,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> GateTraining:
    """Label a run, compute the features with ``llm``, train and evaluate a gate.

    ``llm`` must be the model that answered in the run: the gate learns how *that* model's
    features look when it is right or wrong.

    Raises:
        GateTrainingError: the run cannot provide examples (see :func:`collect_examples`).
        GateError: too few examples or classes to train.
    """
    data = collect_examples(store, run_id)
    if not data.examples:
        raise GateTrainingError(
            f"run {data.run_id} has no sample the labelling rule uses "
            f"(type/outcome counts: {dict(data.counts)})",
            hint="a gate needs unchanged hits and changed or new misses: use a run over "
            "several snapshots of a larger dataset.",
        )
    features = await example_features(llm, store, data, prompt_for, progress=progress)
    gate, report = train_gate(
        features, [e.label for e in data.examples], holdout=holdout, seed=seed,
        extra={"run_id": data.run_id, "counts": dict(data.counts),
               "label_counts": data.label_counts},
    )
    return GateTraining(gate, report, data)
