"""The GrowOVER benchmark object the runner sees, its samples, and the per-snapshot indexes."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshwiki.benchmarks.growover._dataset import Dataset, datasets_dir
from freshwiki.benchmarks.growover._records import (
    KINDS,
    DatasetError,
    DialogueInstance,
    QAInstance,
)
from freshwiki.benchmarks.growover._scorers import scorers_for
from freshwiki.llm import Message
from freshwiki.prompting import render_prompt
from freshwiki.prompting import templates_hash as hash_of_templates
from freshwiki.retrieval import SnapshotIndexes, shared_snapshot_indexes
from freshwiki.seams import Sample, Scorer, Task

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.llm import LLM
    from freshwiki.retrieval import HybridIndex

TEMPLATES = "benchmarks/growover/templates"
QA_TOKENS = 32
"""An entity answer fits in a few tokens; a cap keeps chatty models from rambling."""
DIALOGUE_TOKENS = 120


class GrowOver:
    """One kind (QA or dialogue) of a GrowOVER dataset, every complete snapshot.

    Args:
        dataset: The opened dataset.
        kind: ``qa`` or ``dialogue``; the template has the same name.
        snapshots: Snapshot labels or numbers to include (default: all complete ones).
        per_type: At most this many instances of each type (Unchanged / Changed / New) in each
            snapshot, or ``None`` for all. The paper caps its gate's training classes (512 /
            245 / 512 of September); on a CPU the same cap keeps a run of every system on the
            evaluation snapshots within hours, and it bites mostly on Unchanged, which grows
            with every snapshot. Which instances are kept is decided by a hash of the seed and
            the instance id, so a larger cap keeps a superset and every system of a study
            sees the same instances.
        seed: Seed of that choice.
    """

    name = "growover"
    breakdowns: tuple[str, ...] = ("type", "snapshot", "snapshot_type")

    def __init__(self, dataset: Dataset, *, kind: str = "qa",
                 snapshots: Sequence[str] | None = None, per_type: int | None = None,
                 seed: int = 0) -> None:
        if kind not in KINDS:
            raise DatasetError(f"growover: unknown kind {kind!r}",
                               hint="pass --benchmark-option kind=qa or kind=dialogue.")
        self.dataset = dataset
        self.kind = kind
        if per_type is not None and per_type < 1:
            raise DatasetError(f"growover: per_type={per_type} keeps nothing",
                               hint="give per_type as a whole number of at least 1, or leave "
                               "it out to keep every instance.")
        self.per_type = per_type
        self.seed = seed
        self.templates: tuple[str, ...] = (kind,)
        self.default_templates: tuple[str, ...] = (kind,)
        chosen = [dataset.snapshot(s) for s in snapshots] if snapshots else None
        self.snapshot_infos = [s for s in dataset.complete_snapshots
                               if chosen is None or s in chosen]
        if not self.snapshot_infos:
            raise DatasetError(f"dataset {dataset.root} has no complete snapshot to evaluate",
                               hint="finish the build (re-run `freshwiki growover build`).")
        self._samples = tuple(self._load())
        digest = hashlib.sha256()
        self.snapshot_hashes: dict[str, str] = {}
        for info in self.snapshot_infos:
            one = hashlib.sha256()
            for name in ("instances.jsonl", "passages.jsonl"):
                data = (dataset.folder(info) / name).read_bytes()
                digest.update(data)
                one.update(data)
            self.snapshot_hashes[info.label] = one.hexdigest()[:16]
        self.dataset_hash = digest.hexdigest()
        manifest = dataset.manifest
        recipe = {"name": manifest.get("name"), "mode": manifest.get("mode"),
                  "sources": sorted(str(s.get("sha256")) for s in manifest.get("sources", [])),
                  "model": manifest.get("model", {}).get("id"),
                  "prompts": manifest.get("prompts"), "seed": manifest.get("seed")}
        self.series = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]

    location_options: tuple[str, ...] = ("path", "name")
    """Options that only say where the dataset lives; ``dataset_hash`` and ``series``
    identify it by content instead."""

    def data_location(self) -> Mapping[str, str]:
        """The dataset folder: shown with a run, not part of its identity."""
        return {"path": str(self.dataset.root)}

    def describe(self) -> Mapping[str, Any]:
        """Kind, snapshots and the templates' hash (editing one starts a run); no path.

        ``series`` names the build (sources' content, generating model, prompts, seed) apart
        from which snapshots a run takes, and ``snapshot_hashes`` each snapshot's content: a
        run on the later snapshots only and a run on all of them are on the same dataset,
        which a leaderboard needs to know to rank them together.
        """
        return {"kind": self.kind,
                "snapshots": [s.label for s in self.snapshot_infos],
                **({"per_type": self.per_type, "seed": self.seed}
                   if self.per_type is not None else {}),
                "samples": len(self._samples), "templates": templates_hash(),
                "series": self.series, "snapshot_hashes": dict(self.snapshot_hashes)}

    def samples(self) -> Iterator[Sample]:
        """Snapshot by snapshot, instances in file order (turns in order within a dialogue)."""
        return iter(self._samples)

    def _load(self) -> Iterator[Sample]:
        for info in self.snapshot_infos:
            lookup = self.dataset.evidence_ids(info)
            index = str(self.dataset.index_dir(info))
            for inst in self._chosen(list(self.dataset.instances(info))):
                base = {"kind": inst.kind, "type": inst.type, "snapshot": info.label,
                        "snapshot_number": info.number, "month": inst.month,
                        "title": inst.title, "page_id": inst.page_id, "instance": inst.id,
                        "generated_as": inst.generated_as or inst.type, "index": index,
                        "snapshot_type": f"{info.label} {inst.type}"}
                if isinstance(inst, QAInstance) and self.kind == "qa":
                    meta = {**base, "evidence": list(inst.evidence.sentences),
                            "evidence_passages": lookup(inst.page_id, inst.evidence.sentences)}
                    if inst.type == "changed" and inst.old_answer:
                        meta["old_answer"] = inst.old_answer
                    yield Sample(id=f"{info.label}:{inst.id}", input=inst.question,
                                 targets=(inst.answer,), metadata=meta)
                elif isinstance(inst, DialogueInstance) and self.kind == "dialogue":
                    history: list[list[str]] = []
                    for turn in inst.turns:
                        turn_type = turn.type or inst.type
                        meta = {**base, "type": turn_type,
                                "snapshot_type": f"{info.label} {turn_type}",
                                "turn": turn.number, "history": [list(h) for h in history],
                                "evidence": list(turn.evidence.sentences),
                                "evidence_passages": lookup(inst.page_id,
                                                            turn.evidence.sentences)}
                        yield Sample(id=f"{info.label}:{inst.id}:t{turn.number}",
                                     input=turn.user, targets=(turn.expert,), metadata=meta)
                        history.append([turn.user, turn.expert])

    def _chosen(self, instances: list[Any]) -> list[Any]:
        """One snapshot's instances of this kind, capped per type (file order kept)."""
        mine = [i for i in instances if i.kind == self.kind]
        if self.per_type is None:
            return mine

        def rank(inst: Any) -> str:
            return hashlib.sha256(f"{self.seed}\n{inst.id}".encode()).hexdigest()

        keep: set[str] = set()
        for kind in {i.type for i in mine}:
            of_type = sorted((i for i in mine if i.type == kind), key=rank)
            keep.update(i.id for i in of_type[:self.per_type])
        return [i for i in mine if i.id in keep]

    def render(self, sample: Sample, template: str) -> Task:
        """``qa``: the question alone; ``dialogue``: the turns so far, then the user's message.

        Raises:
            DatasetError: ``template`` is not this benchmark's kind.
        """
        if template != self.kind or sample.metadata.get("kind") != self.kind:
            raise DatasetError(f"growover ({self.kind}) has no template {template!r} for "
                               f"sample {sample.id}", hint=f"use --templates {self.kind}.")
        meta = sample.metadata
        if template == "qa":
            prompt = render_prompt(f"{TEMPLATES}/qa.j2", title=meta["title"],
                                   date=meta["snapshot"], question=sample.input)
            return Task(sample=sample, template=template, messages=(Message.user(prompt),),
                        query=sample.input, max_tokens=QA_TOKENS)
        messages = [Message.system(render_prompt(f"{TEMPLATES}/dialogue_system.j2",
                                                  title=meta["title"], date=meta["snapshot"]))]
        users = []
        for user, expert in meta.get("history", ()):
            messages += [Message.user(user), Message.assistant(expert)]
            users.append(user)
        messages.append(Message.user(sample.input))
        return Task(sample=sample, template=template, messages=tuple(messages),
                    query=" ".join([*users, sample.input]), max_tokens=DIALOGUE_TOKENS)

    def scorers(self, judge: LLM | None) -> Sequence[Scorer]:
        """QA: F1, EM, hit; dialogue: BLEU, F1, hit (none needs a judge)."""
        del judge
        return list(scorers_for(self.kind))

    async def aclose(self) -> None:
        """Nothing held: indexes are shared through :func:`growover_retriever`."""


def templates_hash() -> str:
    """A short hash of the evaluation templates."""
    return hash_of_templates(TEMPLATES)


def growover_retriever(sample: Sample, indexes: SnapshotIndexes | None = None) -> HybridIndex:
    """The retrieval index of the snapshot ``sample`` belongs to (opened once, shared).

    Call ``.search(query, k)`` on it; hits carry ``passage.id`` (compare with
    ``sample.metadata["evidence_passages"]``) and ``passage.meta["sentences"]``.

    Raises:
        DatasetError: The sample has no ``index`` in its metadata (not a GrowOVER sample).
        IndexNotFoundError: The snapshot's index folder holds no index.
    """
    path = sample.metadata.get("index")
    if not path:
        raise DatasetError(f"sample {sample.id} names no snapshot index",
                           hint="only GrowOVER samples carry metadata['index'].")
    return (indexes or shared_snapshot_indexes()).get(str(path))


def shared_indexes() -> SnapshotIndexes:
    """The process-wide cache :func:`growover_retriever` uses."""
    return shared_snapshot_indexes()


def dataset_path(settings: Settings, options: Mapping[str, Any]) -> Path:
    """The dataset folder from options ``path`` or ``name`` (under ``HOME/growover``).

    Raises:
        DatasetError: Neither option was given.
    """
    if options.get("path"):
        return Path(str(options["path"])).expanduser()
    if options.get("name"):
        return datasets_dir(settings.home) / str(options["name"])
    raise DatasetError("growover needs a dataset",
                       hint="pass --benchmark-option name=NAME (built with `freshwiki growover "
                       "build`) or --benchmark-option path=FOLDER.")


OPTIONS = ("name", "path", "kind", "snapshots", "per_type", "seed")


def growover_benchmark(settings: Settings, options: Mapping[str, Any]) -> GrowOver:
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise DatasetError(f"growover has no option {', '.join(map(repr, unknown))}",
                           hint="options: name or path, kind (qa|dialogue), snapshots "
                           "(comma-separated dates), per_type (a cap per snapshot and type), "
                           "seed.")
    snapshots = [s.strip() for s in str(options.get("snapshots") or "").split(",") if s.strip()]
    per_type = _whole(options, "per_type") if options.get("per_type") not in (None, "") else None
    seed = _whole(options, "seed") if options.get("seed") not in (None, "") else 0
    return GrowOver(Dataset.open(dataset_path(settings, options)),
                    kind=str(options.get("kind") or "qa"), snapshots=snapshots or None,
                    per_type=per_type, seed=seed)


def _whole(options: Mapping[str, Any], key: str) -> int:
    try:
        return int(str(options[key]))
    except ValueError:
        raise DatasetError(f"growover: option {key}={options[key]!r} is not a whole number",
                           hint=f"e.g. --benchmark-option {key}=100.") from None
