"""Training the RiLM certainty gate on a finished GrowOVER ralm run (GrowOVER §4.1).

The gate reads one (query, document) prompt at a time, so its examples are pairs: every
document the run retrieved for a sample, labelled from the sample's instance ``type``
(metadata) and whether *that document* holds the sample's evidence:

============  ==================  ==============
type          document            label
============  ==================  ==============
unchanged     holds the evidence  ``reliable``
changed       does not            ``misleading``
new           does not            ``uncertain``
============  ==================  ==============

An unchanged fact with its evidence in context is what a trustworthy answer looks like; a
changed fact without its (new) evidence invites the stale answer the model memorised; a new
fact without evidence is something the model cannot know. Every other pair (``initial``
samples, unchanged facts with an unrelated document, changed and new facts with their
evidence) is not used but counted, and so are samples without a retrieval trace.

**Out of sample, as the paper:** the gate is trained on one snapshot only, by default the
first update snapshot (the first with changed or new instances; the paper's September), and
its accuracy is reported on the pairs of every later snapshot, which the systems are then
evaluated on. Nothing of a later snapshot is seen in training.

The features of a pair are the model's last hidden state after the prompt that puts the one
document into the benchmark's task (:func:`freshwiki.systems.rag.context_messages`, as
``rilm`` builds it), before any answer.

It reads plain rows (:class:`PairRow`: a scored sample, its metadata and the passages the
system retrieved), not a results store: the caller (``freshwiki growover train-gate``) reads
the store, or builds the rows with :func:`pair_rows` from a loaded run, and passes them in, and
rebuilds each pair's prompt through the benchmark (``prompt_for``), which a system may not
import.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from freshwiki.errors import FreshwikiError
from freshwiki.llm import LLM, FeatureVector, Message
from freshwiki.results import RunResults
from freshwiki.systems.rilm import (
    MISLEADING,
    RELIABLE,
    UNCERTAIN,
    CertaintyGate,
    GateReport,
    train_gate,
)

HIT_SCORER = "growover-hit"
LABELS: Mapping[tuple[str, str], str] = {
    ("unchanged", "hit"): RELIABLE,
    ("changed", "miss"): MISLEADING,
    ("new", "miss"): UNCERTAIN,
}
"""(instance type, does the document hold the evidence) -> gate class; other pairs unused."""
UPDATE_TYPES = ("changed", "new")


class GateTrainingError(FreshwikiError):
    """A run cannot provide gate training data."""


def label_for(instance_type: str, outcome: str) -> str | None:
    """The gate class of a (sample, document) pair, or ``None`` when the rule does not use it.

    Args:
        instance_type: ``initial``, ``unchanged``, ``new`` or ``changed`` (case-insensitive).
        outcome: ``hit`` (the document holds the evidence) or ``miss``.
    """
    return LABELS.get((instance_type.strip().lower(), outcome.strip().lower()))


@dataclass(frozen=True)
class Example:
    """One labelled (sample, document) pair.

    Attributes:
        sample_id: The sample.
        template: The template it was rendered with.
        instance_type: Its ``type``.
        snapshot: Its snapshot label.
        passage_id: The retrieved document.
        outcome: ``hit`` (the document holds the evidence) or ``miss``.
        label: The gate class.
    """

    sample_id: str
    template: str
    instance_type: str
    snapshot: str
    passage_id: str
    outcome: str
    label: str


@dataclass(frozen=True)
class TrainingSet:
    """What a run provides.

    Attributes:
        run_id: The run read.
        kind: ``qa`` or ``dialogue``: the paper trains one gate per task.
        snapshot: The snapshot trained on.
        examples: The labelled pairs of that snapshot, in sample order.
        later: The labelled pairs of later snapshots (the out-of-sample report).
        counts: Every pair of the training snapshot by ``"type outcome"`` (used or not).
        skipped: What was left out before labelling, by reason.
    """

    run_id: str
    kind: str
    snapshot: str
    examples: tuple[Example, ...]
    later: tuple[Example, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    skipped: Mapping[str, int] = field(default_factory=dict)

    @property
    def label_counts(self) -> dict[str, int]:
        """Training pairs per gate class."""
        return dict(Counter(e.label for e in self.examples))

    @property
    def later_snapshots(self) -> list[str]:
        """The snapshots of :attr:`later`, in order."""
        return list(dict.fromkeys(e.snapshot for e in self.later))


@dataclass(frozen=True)
class PairRow:
    """One scored answer of a retrieving run, as gate training reads it.

    Attributes:
        sample_id: The sample.
        template: The template it was rendered with.
        metadata: The sample's metadata (``kind``, ``snapshot``, ``snapshot_number``,
            ``type``, ``evidence_passages``).
        retrieved: The passage ids the system retrieved, in rank order; ``None`` when the
            answer has no retrieval trace.
    """

    sample_id: str
    template: str
    metadata: Mapping[str, Any]
    retrieved: tuple[str, ...] | None


def pair_rows(run: RunResults, hit_scorer: str = HIT_SCORER) -> list[PairRow]:
    """The rows of a stored run, in sample order.

    One per answer the ``growover-hit`` scorer scored, with the ids of its output's
    ``trace["retrieved"]`` documents.
    """
    retrieved: dict[tuple[str, str], tuple[str, ...] | None] = {}
    for sample_id, template, _, _, trace in run.traces("retrieved"):
        docs = trace.get("retrieved")
        retrieved[(sample_id, template)] = (tuple(str(d["id"]) for d in docs) if docs
                                            else None)
    return [PairRow(i.sample_id, i.template, i.metadata,
                    retrieved.get((i.sample_id, i.template)))
            for i in run.items if i.scorer == hit_scorer]


def collect_examples(rows: Iterable[PairRow], *, run_id: str, kind: str = "qa",
                     snapshot: str | None = None,
                     hit_scorer: str = HIT_SCORER) -> TrainingSet:
    """Label the (sample, document) pairs of a run by the rule of the module docstring.

    Args:
        rows: The run's scored answers (:func:`pair_rows`), in sample order.
        run_id: The run's id, for messages and the gate file.
        kind: Sample kind to use (``qa`` or ``dialogue``).
        snapshot: Snapshot to train on; default the first with changed or new instances.
        hit_scorer: The scorer the rows come from, for messages.

    Raises:
        GateTrainingError: there are no rows (the run has no ``growover-hit`` scores), no
            sample of ``kind``, or no such snapshot.
    """
    scored = list(rows)
    if not scored:
        raise GateTrainingError(
            f"run {run_id} has no {hit_scorer!r} scores",
            hint="train on a finished `freshwiki eval growover --system ralm` run (its "
            "default scorers include growover-hit).",
        )
    skipped: Counter[str] = Counter()
    mine = []
    for item in scored:
        item_kind = str(item.metadata.get("kind", "qa"))
        if item_kind != kind:
            skipped[f"{item_kind} sample"] += 1
        else:
            mine.append(item)
    order: dict[str, int] = {}
    for item in mine:
        label = str(item.metadata.get("snapshot", ""))
        order.setdefault(label, int(item.metadata.get("snapshot_number", len(order))))
    snapshots = sorted(order, key=lambda s: (order[s], s))
    if not snapshots:
        raise GateTrainingError(f"run {run_id} has no {kind} samples",
                                hint="pass --kind for the kind the run holds.")
    if snapshot is None:
        updates = [s for s in snapshots if any(
            str(i.metadata.get("type", "")).lower() in UPDATE_TYPES
            and str(i.metadata.get("snapshot", "")) == s for i in mine)]
        if not updates:
            raise GateTrainingError(
                f"run {run_id} has no changed or new {kind} instances",
                hint="a gate needs an update snapshot: build the dataset with at least two "
                "snapshots.")
        snapshot = updates[0]
    elif snapshot not in order:
        raise GateTrainingError(f"run {run_id} has no snapshot {snapshot!r}",
                                hint=f"its snapshots: {', '.join(snapshots)}.")
    chosen: str = snapshot
    position = snapshots.index(chosen)
    counts: Counter[str] = Counter()
    train: list[Example] = []
    later: list[Example] = []
    for item in mine:
        at = snapshots.index(str(item.metadata.get("snapshot", "")))
        if at < position:
            skipped["sample of an earlier snapshot"] += 1
            continue
        if not item.retrieved:
            skipped["sample without retrieved documents"] += 1
            continue
        evidence = {str(p) for p in item.metadata.get("evidence_passages", ())}
        instance_type = str(item.metadata.get("type", "")).lower() or "untyped"
        for pid in item.retrieved:
            outcome = "hit" if pid in evidence else "miss"
            if at == position:
                counts[f"{instance_type} {outcome}"] += 1
            gate_class = label_for(instance_type, outcome)
            if gate_class is None:
                continue
            example = Example(item.sample_id, item.template, instance_type,
                              snapshots[at], pid, outcome, gate_class)
            (train if at == position else later).append(example)
    return TrainingSet(run_id, kind, chosen, tuple(train), tuple(later),
                       dict(counts), dict(skipped))


PromptFor = Callable[[Example], Sequence[Message]]
"""The (query, document) prompt of a pair, as ``rilm`` builds it."""


@dataclass(frozen=True)
class GateTraining:
    """A trained gate and how it came about.

    Attributes:
        gate: The gate (trained on the training snapshot's pairs).
        report: Held-out report inside the training snapshot (empty with ``holdout`` 0).
        later: Report on the pairs of later snapshots (out of sample), ``None`` without any.
        later_by_snapshot: The same per later snapshot.
        data: The labelled pairs and the counts.
    """

    gate: CertaintyGate
    report: GateReport
    later: GateReport | None
    later_by_snapshot: Mapping[str, GateReport]
    data: TrainingSet


async def example_features(
    llm: LLM,
    examples: Sequence[Example],
    prompt_for: PromptFor,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> list[FeatureVector]:
    """The model's state after each pair's prompt (no answer), in example order.

    Raises:
        GateTrainingError: a prompt cannot be rebuilt.
    """
    done = 0

    async def one(example: Example) -> FeatureVector:
        nonlocal done
        messages = list(await asyncio.to_thread(prompt_for, example))
        vector = await llm.features(messages, "", tag="train-gate")
        done += 1
        if progress is not None:
            progress(done, len(examples))
        return vector

    return list(await asyncio.gather(*(one(e) for e in examples)))


async def train_gate_from_rows(
    rows: Iterable[PairRow],
    llm: LLM,
    *,
    run_id: str,
    prompt_for: PromptFor,
    kind: str = "qa",
    snapshot: str | None = None,
    evaluate_later: bool = True,
    holdout: float = 0.0,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> GateTraining:
    """Label a run's pairs (its rows), compute the features with ``llm``, train.

    The gate is trained on one snapshot's pairs and reported on the later ones.

    ``llm`` must be the model that will answer in ``rilm``: the gate learns how *that*
    model's states look.

    Raises:
        GateTrainingError: the run cannot provide examples (see :func:`collect_examples`).
        GateError: too few examples or classes to train.
    """
    import numpy as np

    data = collect_examples(rows, run_id=run_id, kind=kind, snapshot=snapshot)
    if not data.examples:
        raise GateTrainingError(
            f"run {data.run_id} has no {kind} pair the labelling rule uses in snapshot "
            f"{data.snapshot} (type/outcome counts: {dict(data.counts)})",
            hint="a gate needs unchanged facts with their evidence retrieved and changed or "
            "new facts without: use a larger dataset or another --snapshot.",
        )
    pairs = list(data.examples) + (list(data.later) if evaluate_later else [])
    features = await example_features(llm, pairs, prompt_for, progress=progress)
    train_features = features[: len(data.examples)]
    gate, report = train_gate(
        train_features, [e.label for e in data.examples], holdout=holdout, seed=seed,
        extra={"run_id": data.run_id, "kind": kind, "snapshot": data.snapshot,
               "unit": "query-document prompt, last hidden state before the answer",
               "counts": dict(data.counts), "label_counts": data.label_counts},
    )
    later: GateReport | None = None
    by_snapshot: dict[str, GateReport] = {}
    if evaluate_later and data.later:
        rest = features[len(data.examples):]

        def matrix(rows: Sequence[FeatureVector]) -> Any:
            return np.asarray([f.values for f in rows], dtype=np.float64)

        later = gate.evaluate(matrix(rest), [e.label for e in data.later])
        for label in data.later_snapshots:
            keep = [i for i, e in enumerate(data.later) if e.snapshot == label]
            by_snapshot[label] = gate.evaluate(matrix([rest[i] for i in keep]),
                                               [data.later[i].label for i in keep])
        gate = CertaintyGate(**{**gate.__dict__, "training": {
            **gate.training, "later": {"snapshots": data.later_snapshots, **later.to_dict()}}})
    return GateTraining(gate, report, later, by_snapshot, data)
