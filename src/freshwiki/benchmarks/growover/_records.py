"""Typed records of a GrowOVER dataset: QA and dialogue instances, skips, stored snapshots.

Every record is a frozen dataclass with ``to_dict``/``from_dict`` so a dataset is plain JSONL
that survives a crash mid-build (each line is a complete record) and can be read back exactly.
Evidence is stored both as sentence indices *into the snapshot the instance is valid at* and as
the sentence texts, so a reader can check an instance without re-running the segmenter, and an
update can tell whether the evidence survived by looking only at the alignment labels.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from freshwiki.changes.snapshots import Snapshot, SnapshotSentence
from freshwiki.errors import FreshwikiError

InstanceType = Literal["initial", "unchanged", "new", "changed"]
"""How an instance relates to the snapshot it is valid at.

``initial``: generated from the first snapshot (nothing to compare against yet); ``unchanged``:
carried over from the previous snapshot because every evidence sentence was unchanged;
``new``: generated from sentences the previous snapshot did not have; ``changed``: generated
from a sentence whose fact changed (the question has an old and a new answer).
"""

TYPES: tuple[InstanceType, ...] = ("initial", "unchanged", "new", "changed")

Kind = Literal["qa", "dialogue"]
KINDS: tuple[Kind, ...] = ("qa", "dialogue")


class DatasetError(FreshwikiError):
    """A GrowOVER dataset is missing, malformed, or would mix incompatible generations."""


@dataclass(frozen=True)
class Evidence:
    """The sentences an answer rests on, in the snapshot the instance is valid at.

    Attributes:
        sentences: Sentence indices into the snapshot's flat sentence list, ascending.
        texts: The sentence texts, one per index.
        paragraph: Paragraph index of the first evidence sentence.
    """

    sentences: tuple[int, ...]
    texts: tuple[str, ...]
    paragraph: int

    def __post_init__(self) -> None:
        if not self.sentences or len(self.sentences) != len(self.texts):
            raise DatasetError(f"evidence needs one text per sentence index, got "
                               f"{list(self.sentences)} and {len(self.texts)} text(s)")

    @classmethod
    def of(cls, snapshot: Snapshot, indices: Sequence[int]) -> Evidence:
        """Evidence for ``indices`` of ``snapshot`` (sorted, deduplicated)."""
        ordered = tuple(sorted(set(indices)))
        return cls(ordered, tuple(snapshot.sentences[i].text for i in ordered),
                   snapshot.sentences[ordered[0]].paragraph)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return {"sentences": list(self.sentences), "texts": list(self.texts),
                "paragraph": self.paragraph}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Evidence:
        """The inverse of :meth:`to_dict`."""
        return cls(tuple(int(i) for i in data["sentences"]), tuple(data["texts"]),
                   int(data["paragraph"]))


@dataclass(frozen=True)
class QAInstance:
    """One question with a short-entity answer, valid at one snapshot.

    Attributes:
        id: Unique in the dataset and stable across snapshots (a carried-over instance keeps
            its id): ``{page_id}-s{snapshot generated}-qa-{n}``.
        page_id: The article's page id.
        title: The article's title at this snapshot.
        type: See :data:`InstanceType`, relative to *this* snapshot.
        month: ``YYYY-MM`` of the snapshot it was generated at.
        snapshot: The cut (``YYYY-MM-DD``) this record is valid at.
        question: The question.
        answer: The gold answer at this snapshot.
        evidence: Where the answer is, at this snapshot.
        old_answer: For ``changed``: the answer the previous snapshot gave.
        old_evidence: For ``changed``: the evidence in the previous snapshot.
        generated_as: The type it was generated with (kept when it is later carried over).
    """

    id: str
    page_id: int
    title: str
    type: InstanceType
    month: str
    snapshot: str
    question: str
    answer: str
    evidence: Evidence
    old_answer: str | None = None
    old_evidence: Evidence | None = None
    generated_as: InstanceType | None = None
    kind: Kind = field(default="qa", init=False)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (one JSONL line)."""
        return {
            "kind": "qa", "id": self.id, "page_id": self.page_id, "title": self.title,
            "type": self.type, "month": self.month, "snapshot": self.snapshot,
            "question": self.question, "answer": self.answer,
            "evidence": self.evidence.to_dict(), "old_answer": self.old_answer,
            "old_evidence": self.old_evidence.to_dict() if self.old_evidence else None,
            "generated_as": self.generated_as or self.type,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QAInstance:
        """The inverse of :meth:`to_dict`."""
        return cls(
            id=str(data["id"]), page_id=int(data["page_id"]), title=str(data["title"]),
            type=_type(data["type"]), month=str(data["month"]), snapshot=str(data["snapshot"]),
            question=str(data["question"]), answer=str(data["answer"]),
            evidence=Evidence.from_dict(data["evidence"]),
            old_answer=data.get("old_answer"),
            old_evidence=Evidence.from_dict(data["old_evidence"])
            if data.get("old_evidence") else None,
            generated_as=_type(data.get("generated_as") or data["type"]),
        )


@dataclass(frozen=True)
class Turn:
    """One user/expert exchange of a dialogue.

    Attributes:
        number: Position in the dialogue as generated (kept when earlier turns are dropped,
            so a turn's sample id never changes).
        user: The user's message.
        expert: The expert's reply (the gold response).
        evidence: The sentences the reply rests on, at this snapshot.
        type: The turn's own type when it differs from its dialogue's: a dialogue generated
            from an update's new and changed sentences labels each turn by its evidence
            (``changed`` when it rests on a changed sentence, else ``new``), as GrowOVER
            §3.2 does. ``None``: the dialogue's type.
    """

    number: int
    user: str
    expert: str
    evidence: Evidence
    type: InstanceType | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (``type`` only when set, so older files read the same)."""
        data: dict[str, Any] = {"number": self.number, "user": self.user,
                                "expert": self.expert, "evidence": self.evidence.to_dict()}
        if self.type is not None:
            data["type"] = self.type
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Turn:
        """The inverse of :meth:`to_dict`."""
        kind = data.get("type")
        if kind is not None and kind not in TYPES:
            raise ValueError(f"turn type {kind!r} is not one of {', '.join(TYPES)}")
        return cls(int(data["number"]), str(data["user"]), str(data["expert"]),
                   Evidence.from_dict(data["evidence"]),
                   cast("InstanceType | None", kind))


@dataclass(frozen=True)
class DialogueInstance:
    """A 3-4 turn user/expert dialogue grounded in an article, valid at one snapshot.

    Attributes mirror :class:`QAInstance`; ``turns`` holds the turns still valid at this
    snapshot (an update drops a turn whose evidence changed and keeps the rest).
    """

    id: str
    page_id: int
    title: str
    type: InstanceType
    month: str
    snapshot: str
    turns: tuple[Turn, ...]
    generated_as: InstanceType | None = None
    kind: Kind = field(default="dialogue", init=False)

    @property
    def evidence(self) -> Evidence:
        """All turns' evidence together (the dialogue's footprint in the article)."""
        indices = sorted({i for t in self.turns for i in t.evidence.sentences})
        texts = {i: tx for t in self.turns
                 for i, tx in zip(t.evidence.sentences, t.evidence.texts, strict=True)}
        return Evidence(tuple(indices), tuple(texts[i] for i in indices),
                        self.turns[0].evidence.paragraph)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (one JSONL line)."""
        return {
            "kind": "dialogue", "id": self.id, "page_id": self.page_id, "title": self.title,
            "type": self.type, "month": self.month, "snapshot": self.snapshot,
            "turns": [t.to_dict() for t in self.turns],
            "generated_as": self.generated_as or self.type,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DialogueInstance:
        """The inverse of :meth:`to_dict`."""
        return cls(
            id=str(data["id"]), page_id=int(data["page_id"]), title=str(data["title"]),
            type=_type(data["type"]), month=str(data["month"]), snapshot=str(data["snapshot"]),
            turns=tuple(Turn.from_dict(t) for t in data["turns"]),
            generated_as=_type(data.get("generated_as") or data["type"]),
        )


Instance = QAInstance | DialogueInstance


def instance_from_dict(data: Mapping[str, Any]) -> Instance:
    """A QA or dialogue instance from its JSON line (by its ``kind``).

    Raises:
        DatasetError: The line has an unknown kind.
    """
    kind = data.get("kind")
    if kind == "qa":
        return QAInstance.from_dict(data)
    if kind == "dialogue":
        return DialogueInstance.from_dict(data)
    raise DatasetError(f"instance {data.get('id')!r} has unknown kind {kind!r}",
                       hint="the dataset file is damaged; rebuild that snapshot.")


@dataclass(frozen=True)
class GenerationSkip:
    """Something that was *not* generated or carried over, and why (never a silent drop).

    Attributes:
        page_id: The article.
        title: Its title.
        snapshot: The cut concerned.
        stage: ``page`` (the whole article), ``carry`` (an instance or turn not carried
            over), ``generate`` (a generation attempt that gave nothing usable), ``align``
            (a sentence left out because its label is unverified).
        reason: In words.
        instance: The instance id concerned, when there is one.
        detail: JSON-ready extras (the model's raw answer, the evidence it gave).
    """

    page_id: int
    title: str
    snapshot: str
    stage: str
    reason: str
    instance: str | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (one JSONL line)."""
        return {"page_id": self.page_id, "title": self.title, "snapshot": self.snapshot,
                "stage": self.stage, "reason": self.reason, "instance": self.instance,
                "detail": dict(self.detail)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GenerationSkip:
        """The inverse of :meth:`to_dict`."""
        return cls(int(data["page_id"]), str(data["title"]), str(data["snapshot"]),
                   str(data["stage"]), str(data["reason"]), data.get("instance"),
                   dict(data.get("detail") or {}))


def snapshot_to_dict(snap: Snapshot) -> dict[str, Any]:
    """A stored snapshot: what the next update aligns against, without re-reading the source."""
    return {
        "page_id": snap.page_id, "title": snap.title, "revision_id": snap.revision_id,
        "timestamp": snap.timestamp.isoformat(), "cut": snap.cut.isoformat() if snap.cut else None,
        "paragraphs": list(snap.paragraphs),
        "sentences": [[s.text, s.paragraph, list(s.section_path), s.position, s.start, s.end]
                      for s in snap.sentences],
    }


def snapshot_from_dict(data: Mapping[str, Any]) -> Snapshot:
    """The inverse of :func:`snapshot_to_dict`."""
    return Snapshot(
        page_id=int(data["page_id"]), title=str(data["title"]),
        revision_id=int(data["revision_id"]),
        timestamp=dt.datetime.fromisoformat(data["timestamp"]),
        sentences=tuple(SnapshotSentence(str(t), int(p), tuple(sp), int(pos), int(a), int(b))
                        for t, p, sp, pos, a, b in data["sentences"]),
        paragraphs=tuple(data["paragraphs"]),
        cut=dt.datetime.fromisoformat(data["cut"]) if data.get("cut") else None,
    )


def _type(value: Any) -> InstanceType:
    if value not in TYPES:
        raise DatasetError(f"unknown instance type {value!r}", hint=f"one of {', '.join(TYPES)}.")
    return cast(InstanceType, value)
