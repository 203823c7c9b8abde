"""Typed records of snapshot alignment: snapshots, per-sentence labels, alignments, skips.

Every record is a frozen dataclass so alignments can be cached, compared in tests and handed
to the benchmark builders (GrowOVER picks paragraphs and evidence sentence ranges later) without
anyone mutating them on the way. Sentences keep their paragraph index, section path and position
in the paragraph, because an index into a flat sentence list alone cannot be turned back into
evidence a reader can find on the page.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Literal

from freshwiki.errors import FreshwikiError

Label = Literal["unchanged", "changed", "new", "deleted"]
"""New side: unchanged, changed or new; old side: unchanged, changed or deleted."""

Step = Literal[
    "exact", "normalized", "group", "lexical", "embedding", "rule", "llm", "fallback", "none"
]
"""Which step of the aligner decided a label (``none``: nothing to compare against)."""

Relation = Literal["entailment", "neutral", "contradiction"]
"""An NLI-style relation between an old sentence (premise) and a new one (hypothesis)."""


class SnapshotError(FreshwikiError):
    """Two snapshots cannot be aligned: different articles, or one side has no text."""


class SnapshotMismatchError(SnapshotError):
    """The two snapshots are of different articles (neither page id nor title agree)."""


class EmptySnapshotError(SnapshotError):
    """A snapshot has no sentences (empty page, redirect, or only boilerplate)."""


class NoEncoderError(SnapshotError):
    """Sentences were left for the embedding step but the aligner was given no encoder."""


@dataclass(frozen=True)
class SnapshotSentence:
    """One sentence of an article version, with where it sits on the page.

    Attributes:
        text: The sentence, whitespace-trimmed.
        paragraph: Index of its paragraph among the snapshot's paragraphs.
        section_path: Headings above the paragraph (empty for the lead).
        position: Index of the sentence inside its paragraph.
        start: Character offset of the sentence in the paragraph text.
        end: Character offset just past the sentence.
    """

    text: str
    paragraph: int
    section_path: tuple[str, ...]
    position: int
    start: int
    end: int


@dataclass(frozen=True)
class Snapshot:
    """An article as it stood at one revision: identity, time and sentences in page order.

    Attributes:
        page_id: The page's id (stable across renames).
        title: The title at that revision.
        revision_id: The revision the text comes from.
        timestamp: When the revision was saved.
        sentences: Sentences in page order.
        paragraphs: Paragraph texts, indexed by :attr:`SnapshotSentence.paragraph`.
        redirect: Target title when this version is a redirect (it then has no sentences).
        cut: The date this snapshot was taken "as of" in a series, else ``None``.
    """

    page_id: int
    title: str
    revision_id: int
    timestamp: dt.datetime
    sentences: tuple[SnapshotSentence, ...]
    paragraphs: tuple[str, ...] = ()
    redirect: str | None = None
    cut: dt.datetime | None = None

    @property
    def texts(self) -> list[str]:
        """The sentence texts, in order."""
        return [s.text for s in self.sentences]

    def describe(self) -> str:
        """``Title (page 12, revision 34, 2002-08-31)`` for messages."""
        return (
            f"{self.title!r} (page {self.page_id}, revision {self.revision_id}, "
            f"{self.timestamp:%Y-%m-%d %H:%M})"
        )


@dataclass(frozen=True)
class SentenceLabel:
    """The label of one sentence of one side, and the evidence for it.

    Attributes:
        side: ``old`` or ``new``.
        index: The sentence's index on its side.
        label: See :data:`Label`.
        counterparts: Indices of the matched sentences on the other side (several for a
            merge or a split); empty for new and deleted sentences.
        similarity: Cosine similarity to the closest sentence on the other side when it was
            embedded; 1.0 for hash matches; ``None`` when never compared.
        step: Which step decided.
        ambiguous: The label is a fallback for a pair an LLM should have checked but none was
            given (see the package docstring): treat it as unverified.
        relation: The NLI relation the LLM returned, when it was asked.
        reason: A short human-readable account of the decision.
    """

    side: Literal["old", "new"]
    index: int
    label: Label
    counterparts: tuple[int, ...] = ()
    similarity: float | None = None
    step: Step = "none"
    ambiguous: bool = False
    relation: Relation | None = None
    reason: str = ""


@dataclass(frozen=True)
class Alignment:
    """Sentence labels of two versions of one article, with old↔new index maps.

    Attributes:
        old: The earlier snapshot.
        new: The later snapshot.
        old_labels: One label per old sentence (unchanged, changed or deleted).
        new_labels: One label per new sentence (unchanged, changed or new).
        old_to_new: Unchanged old sentence → its (first) new counterpart.
        changed: (old, new) index pairs of changed sentences.
        new_indices: New sentences with no counterpart.
        deleted: Old sentences with no counterpart.
        llm_calls: LLM checks made for this pair of snapshots: sentence pairs sent to the
            judge (a batching judge answers several in one call; its ``counts`` give calls).
        embedded: Sentences embedded for this pair (the cost the hashing steps avoid).
    """

    old: Snapshot
    new: Snapshot
    old_labels: tuple[SentenceLabel, ...]
    new_labels: tuple[SentenceLabel, ...]
    old_to_new: dict[int, int]
    changed: list[tuple[int, int]]
    new_indices: list[int]
    deleted: list[int]
    llm_calls: int = 0
    embedded: int = 0

    @property
    def ambiguous(self) -> list[SentenceLabel]:
        """Labels decided by the no-LLM fallback (unverified)."""
        return [lab for lab in (*self.old_labels, *self.new_labels) if lab.ambiguous]

    def counts(self) -> dict[str, int]:
        """How many sentences got each label (new side, plus ``deleted`` from the old side)."""
        out = {"unchanged": 0, "changed": 0, "new": 0, "deleted": len(self.deleted)}
        for lab in self.new_labels:
            out[lab.label] += 1
        return out

    def to_growover(self) -> dict[str, Any]:
        """The GrowOVER label shape: ``{"S": {old: new}, "C": [[old, new]], "N": [], "D": []}``.

        ``S`` maps an unchanged old sentence to its new index, or to a ``[start, end)`` range
        of new indices when it was split into several (GrowOVER's chunk form). ``C`` pairs are
        (old, new), in new-index order.
        """
        same: dict[int, int | list[int]] = {}
        for lab in self.old_labels:
            if lab.label != "unchanged" or not lab.counterparts:
                continue
            parts = sorted(lab.counterparts)
            same[lab.index] = parts[0] if len(parts) == 1 else [parts[0], parts[-1] + 1]
        return {
            "S": same,
            "C": [[o, n] for o, n in self.changed],
            "N": list(self.new_indices),
            "D": list(self.deleted),
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view: both snapshots' identity, every labelled sentence, the maps."""

        def side(snap: Snapshot, labels: tuple[SentenceLabel, ...]) -> dict[str, Any]:
            return {
                "page_id": snap.page_id,
                "title": snap.title,
                "revision_id": snap.revision_id,
                "timestamp": snap.timestamp.isoformat(),
                "cut": snap.cut.isoformat() if snap.cut else None,
                "sentences": [
                    {
                        "index": lab.index,
                        "text": snap.sentences[lab.index].text,
                        "paragraph": snap.sentences[lab.index].paragraph,
                        "section": list(snap.sentences[lab.index].section_path),
                        "label": lab.label,
                        "counterparts": list(lab.counterparts),
                        "similarity": lab.similarity,
                        "step": lab.step,
                        "ambiguous": lab.ambiguous,
                        "relation": lab.relation,
                        "reason": lab.reason,
                    }
                    for lab in labels
                ],
            }

        return {
            "old": side(self.old, self.old_labels),
            "new": side(self.new, self.new_labels),
            "growover": self.to_growover(),
            "counts": self.counts(),
            "llm_calls": self.llm_calls,
            "embedded": self.embedded,
        }


@dataclass(frozen=True)
class Skip:
    """A pair of versions that was not aligned, and why (never a silent wrong label).

    Attributes:
        page_id: The page concerned.
        title: Its title (the latest known).
        reason: Why nothing was aligned ("redirect to Pear at 2008-02-10", "page not in the
            new dump", ...).
        old_revision: The old side's revision id, when there is one.
        new_revision: The new side's revision id, when there is one.
    """

    page_id: int
    title: str
    reason: str
    old_revision: int | None = None
    new_revision: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return {
            "skipped": True,
            "page_id": self.page_id,
            "title": self.title,
            "reason": self.reason,
            "old_revision": self.old_revision,
            "new_revision": self.new_revision,
        }


@dataclass(frozen=True)
class Thresholds:
    """The similarity cut-offs of the embedding step (cosine of all-MiniLM-L6-v2 vectors).

    GrowOVER's own values are ``unchanged``, ``changed_min`` and ``new_max``; the other two
    bound the band in which a pair is too close to call without an NLI check.

    Attributes:
        unchanged: At or above, two sentences are the same (GrowOVER: 0.99).
        changed_min: Below this a pair is never "changed" (GrowOVER: 0.6).
        new_max: Below this, a sentence that nothing entails is new (GrowOVER: 0.7).
        minor_edit: At or above (and below ``unchanged``), a pair whose numbers and negation
            agree is a rewording, decided without an LLM.
        new_sure: Below this, a sentence is new without asking an LLM: entailment by a
            sentence this far away is too rare to pay a model call for.
    """

    unchanged: float = 0.99
    changed_min: float = 0.6
    new_max: float = 0.7
    minor_edit: float = 0.9
    new_sure: float = 0.5

    def __post_init__(self) -> None:
        if not (0 <= self.new_sure <= self.changed_min <= self.new_max
                <= self.minor_edit <= self.unchanged <= 1):
            raise ValueError(
                "thresholds must satisfy 0 <= new_sure <= changed_min <= new_max <= "
                f"minor_edit <= unchanged <= 1, got {self}"
            )


@dataclass(frozen=True)
class AlignOptions:
    """Knobs of the aligner.

    Attributes:
        thresholds: Similarity cut-offs.
        max_group: Longest run of sentences the group step joins to find merges and splits.
        lexical_min: Share of words kept (see ``word_edit``) at or above which a lone edited
            sentence between two anchors is decided from its words, without embeddings;
            above 1.0 turns that step off.
        llm_max_tokens: Token cap of one LLM check.
    """

    thresholds: Thresholds = field(default_factory=Thresholds)
    max_group: int = 3
    lexical_min: float = 0.8
    llm_max_tokens: int = 120
