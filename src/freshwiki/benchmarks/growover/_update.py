"""One article at one snapshot: generate its first instances, or update them from an alignment.

Update rules (GrowOVER, Ko et al. 2024):

* A QA instance is kept only when *every* evidence sentence is unchanged in the new
  snapshot; its evidence is re-indexed to the new sentence positions and its type becomes
  ``unchanged``. Otherwise it is dropped, with the reason recorded.
* A dialogue keeps the turns whose evidence is all unchanged (re-indexed) and drops the
  others; a dialogue left with no turn is dropped.
* New sentences are grouped into runs of contiguous sentences of one paragraph, at most six
  per group; each group gets a ``new`` QA pair (and a ``new`` dialogue).
* Each changed (old, new) sentence pair gets one ``changed`` question with the old answer and
  the new answer.
* Dialogues come from runs of new *and* changed sentences together; each turn is labelled by
  its evidence, ``changed`` when it rests on a changed sentence, else ``new`` (GrowOVER §3.2).

Labels the aligner decided by similarity alone (``ambiguous``, see
:mod:`freshwiki.changes.snapshots`) are never trusted: an instance resting on one is dropped
and such a sentence generates nothing, each with a recorded reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from freshwiki.benchmarks.growover._generate import (
    Failed,
    GeneratedChange,
    GeneratedDialogue,
    GeneratedQA,
    Generator,
)
from freshwiki.benchmarks.growover._records import (
    KINDS,
    DialogueInstance,
    Evidence,
    GenerationSkip,
    Instance,
    InstanceType,
    Kind,
    QAInstance,
    Turn,
)
from freshwiki.benchmarks.growover._select import runs, select_paragraphs
from freshwiki.changes.snapshots import Aligner, Alignment, Encoder, Judge, Snapshot


@dataclass
class PageResult:
    """What one article contributes to one snapshot."""

    instances: list[Instance] = field(default_factory=list)
    skips: list[GenerationSkip] = field(default_factory=list)
    alignment: Alignment | None = None


@dataclass
class PageBuilder:
    """Generates and updates the instances of one article at a time.

    Args:
        generator: Model calls and their validation.
        encoder: Sentence embeddings (paragraph clustering, alignment).
        judge: NLI judge for the aligner's undecided pairs (``None``: those pairs stay
            ambiguous and are left out, see the module docstring).
        seed: KMeans random state.
        kinds: Which instance kinds to generate.
    """

    generator: Generator
    encoder: Encoder
    judge: Judge | None = None
    seed: int = 0
    kinds: Sequence[Kind] = KINDS

    async def initial(self, snapshot: Snapshot, label: str, number: int,
                      type_: InstanceType = "initial") -> PageResult:
        """Instances from the selected paragraphs of an article seen for the first time."""
        result = PageResult()
        chosen = select_paragraphs(snapshot, self.encoder, seed=self.seed)
        if not chosen:
            result.skips.append(self._skip(snapshot, label, "page",
                                           "no paragraph of 1-4 sentences and 300-600 "
                                           "characters to generate from"))
            return result
        await self._generate(result, snapshot, label, number, type_,
                             [c.sentences for c in chosen])
        return result

    async def update(self, old: Snapshot, old_instances: Sequence[Instance], new: Snapshot,
                     label: str, number: int) -> PageResult:
        """Carry over, drop and generate for ``new`` given the article's previous version.

        Raises:
            SnapshotMismatchError: ``old`` and ``new`` are different articles.
            EmptySnapshotError: One of them has no sentences.
        """
        alignment = await Aligner(self.encoder, self.judge).align_async(old, new)
        result = PageResult(alignment=alignment)
        for instance in old_instances:
            kept = self._carry(instance, alignment, label, result)
            if kept is not None:
                result.instances.append(kept)

        usable_new = []
        for i in alignment.new_indices:
            if alignment.new_labels[i].ambiguous:
                result.skips.append(self._skip(new, label, "align", (
                    f"new sentence {i} is unverified (similarity alone called it new): "
                    "nothing generated from it"), detail={"sentence": new.sentences[i].text}))
            else:
                usable_new.append(i)
        groups = runs(usable_new, new)

        changes: dict[int, list[int]] = {}
        for o, n in alignment.changed:
            changes.setdefault(n, []).append(o)
        tasks: list[Any] = []
        pairs: list[tuple[list[int], int]] = []
        for n, olds in sorted(changes.items()):
            if alignment.new_labels[n].ambiguous or any(
                    alignment.old_labels[o].ambiguous for o in olds):
                result.skips.append(self._skip(new, label, "align", (
                    f"changed pair (old {olds}, new {n}) is unverified: no changed question"),
                    detail={"sentence": new.sentences[n].text}))
                continue
            old_text = " ".join(old.sentences[o].text for o in sorted(olds))
            pairs.append((sorted(olds), n))
            tasks.append(self.generator.changed(new.title, old_text, new.sentences[n].text))
        answers = await asyncio.gather(*tasks)
        made = _Counter(new.page_id, number)
        for (olds, n), answer in zip(pairs, answers, strict=True):
            if isinstance(answer, Failed):
                result.skips.append(self._failed(new, label, "changed", answer,
                                                 {"old": olds, "new": n}))
                continue
            assert isinstance(answer, GeneratedChange)
            result.instances.append(QAInstance(
                id=made.next("qa"), page_id=new.page_id, title=new.title, type="changed",
                month=label[:7], snapshot=label, question=answer.question,
                answer=answer.new_answer, evidence=Evidence.of(new, [n]),
                old_answer=answer.old_answer, old_evidence=Evidence.of(old, olds),
                generated_as="changed"))
        qa_kinds = [k for k in self.kinds if k == "qa"]
        await self._generate(result, new, label, number, "new", groups, made, kinds=qa_kinds)
        if "dialogue" in self.kinds:
            changed_new = {n for _, n in pairs}
            await self._generate(result, new, label, number, "new",
                                 runs(sorted(set(usable_new) | changed_new), new), made,
                                 kinds=["dialogue"], changed=changed_new)
        return result

    # -- helpers -------------------------------------------------------------------------

    async def _generate(self, result: PageResult, snapshot: Snapshot, label: str, number: int,
                        type_: InstanceType, groups: Sequence[Sequence[int]],
                        made: _Counter | None = None, *, kinds: Sequence[Kind] | None = None,
                        changed: set[int] | None = None) -> None:
        """Generate ``kinds`` (default: the updater's) from each group of sentences.

        ``changed``: sentences of ``snapshot`` an update found changed; a dialogue turn
        resting on one is typed ``changed`` and the dialogue with it.
        """
        made = made or _Counter(snapshot.page_id, number)
        wanted = self.kinds if kinds is None else kinds
        jobs: list[tuple[Kind, Sequence[int]]] = [
            (kind, group) for group in groups for kind in KINDS if kind in wanted]
        answers = await asyncio.gather(*(
            self.generator.qa(snapshot, g) if kind == "qa" else self.generator.dialogue(snapshot, g)
            for kind, g in jobs))
        for (kind, group), answer in zip(jobs, answers, strict=True):
            if isinstance(answer, Failed):
                result.skips.append(self._failed(snapshot, label, kind, answer,
                                                 {"sentences": list(group)}))
            elif isinstance(answer, GeneratedQA):
                result.instances.append(QAInstance(
                    id=made.next("qa"), page_id=snapshot.page_id, title=snapshot.title,
                    type=type_, month=label[:7], snapshot=label, question=answer.question,
                    answer=answer.answer, evidence=Evidence.of(snapshot, answer.evidence),
                    generated_as=type_))
            elif isinstance(answer, GeneratedDialogue):
                turns = tuple(
                    Turn(k, t.user, t.expert, Evidence.of(snapshot, t.evidence),
                         None if not changed else
                         "changed" if set(t.evidence) & changed else type_)
                    for k, t in enumerate(answer.turns, start=1))
                dialogue_type: InstanceType = (
                    "changed" if any(t.type == "changed" for t in turns) else type_)
                result.instances.append(DialogueInstance(
                    id=made.next("dialogue"), page_id=snapshot.page_id, title=snapshot.title,
                    type=dialogue_type, month=label[:7], snapshot=label, turns=turns,
                    generated_as=dialogue_type))

    def _carry(self, instance: Instance, alignment: Alignment, label: str,
               result: PageResult) -> Instance | None:
        new = alignment.new
        if isinstance(instance, QAInstance):
            moved = carry_evidence(instance.evidence.sentences, alignment)
            if isinstance(moved, str):
                result.skips.append(self._skip(new, label, "carry", moved, instance.id))
                return None
            return QAInstance(
                id=instance.id, page_id=new.page_id, title=new.title, type="unchanged",
                month=instance.month, snapshot=label, question=instance.question,
                answer=instance.answer, evidence=Evidence.of(new, moved),
                generated_as=instance.generated_as or instance.type)
        turns = []
        for turn in instance.turns:
            moved = carry_evidence(turn.evidence.sentences, alignment)
            if isinstance(moved, str):
                result.skips.append(self._skip(new, label, "carry",
                                               f"turn {turn.number} dropped: {moved}",
                                               instance.id))
                continue
            turns.append(Turn(turn.number, turn.user, turn.expert, Evidence.of(new, moved)))
        if not turns:
            result.skips.append(self._skip(new, label, "carry",
                                           "dialogue dropped: no turn left", instance.id))
            return None
        return DialogueInstance(
            id=instance.id, page_id=new.page_id, title=new.title, type="unchanged",
            month=instance.month, snapshot=label, turns=tuple(turns),
            generated_as=instance.generated_as or instance.type)

    @staticmethod
    def _skip(snapshot: Snapshot, label: str, stage: str, reason: str,
              instance: str | None = None, detail: dict[str, Any] | None = None
              ) -> GenerationSkip:
        return GenerationSkip(snapshot.page_id, snapshot.title, label, stage, reason, instance,
                              detail or {})

    def _failed(self, snapshot: Snapshot, label: str, what: str, failed: Failed,
                where: dict[str, Any]) -> GenerationSkip:
        return self._skip(snapshot, label, "generate", f"{what}: {failed.reason}",
                          detail={**where, "raw": failed.raw[:2000]})


def carry_evidence(indices: Sequence[int], alignment: Alignment) -> list[int] | str:
    """The new indices of old evidence sentences, or why the evidence did not survive.

    Every old sentence must be labelled unchanged, by a verified step, with a counterpart;
    a sentence split in two carries to both halves.
    """
    moved: set[int] = set()
    for i in indices:
        if i >= len(alignment.old_labels):
            return f"evidence sentence {i} is not in the previous snapshot"
        lab = alignment.old_labels[i]
        if lab.label != "unchanged":
            return f"evidence sentence {i} was {lab.label}"
        if lab.ambiguous or not lab.counterparts:
            return f"evidence sentence {i} is unverified (similarity alone matched it)"
        if any(alignment.new_labels[c].ambiguous for c in lab.counterparts):
            return f"evidence sentence {i}'s counterpart is unverified"
        moved.update(lab.counterparts)
    return sorted(moved)


class _Counter:
    """Instance ids ``{page}-s{snapshot}-{kind}-{n}``, numbered per page and snapshot."""

    def __init__(self, page_id: int, number: int) -> None:
        self.page_id = page_id
        self.number = number
        self.counts: dict[str, int] = {}

    def next(self, kind: str) -> str:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        return f"{self.page_id}-s{self.number:02d}-{kind}-{self.counts[kind]:03d}"
