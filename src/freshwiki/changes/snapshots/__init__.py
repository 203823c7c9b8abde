"""Sentence alignment between two versions of an article, and snapshot series.

Given two versions of an article (two dumps, or two revisions of one history dump), every
sentence gets a label: **unchanged / changed / new** on the new side, **unchanged / changed /
deleted** on the old side, with old↔new index maps, the similarity that decided, and which
step decided (see :mod:`freshwiki.changes.snapshots._align` for the four steps: hashing,
groups between anchors, embeddings, LLM check). :meth:`Alignment.to_growover` gives the
GrowOVER label shape ``{"S": {old: new}, "C": [[old, new]], "N": [...], "D": [...]}``.

The LLM check is a :class:`Judge`; :class:`BatchLLMJudge` (the default of ``changes diff
--llm`` and ``growover build``) asks about up to ``batch_size`` pairs per call and re-asks
whatever a batch leaves unanswered, down to :class:`LLMJudge`'s one pair per call.

Ambiguity without an LLM: pairs that need an NLI check (similarity between 0.5 and 0.9
without a replaced number or a flipped negation) get GrowOVER's similarity-only answer
(unchanged at ≥ 0.7, else new) and ``ambiguous=True`` on their labels, so a consumer can drop
or re-check them; they are never presented as verified.

Bad input is refused, not labelled: :func:`align` raises :class:`SnapshotMismatchError` for
two different articles and :class:`EmptySnapshotError` for an empty or redirected version;
the dump-level functions (:func:`diff_series`, :func:`diff_revisions`, :func:`diff_dumps`)
turn those cases (and pages missing on one side) into :class:`Skip` records with a reason.
"""

from __future__ import annotations

from freshwiki.changes.snapshots._align import Aligner, check_pair
from freshwiki.changes.snapshots._batch_judge import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_SHAPE,
    BatchLLMJudge,
    Shape,
)
from freshwiki.changes.snapshots._judge import Encoder, Judge, JudgeCounts, LLMJudge
from freshwiki.changes.snapshots._text import normalize, snapshot_of
from freshwiki.changes.snapshots._types import (
    Alignment,
    AlignOptions,
    EmptySnapshotError,
    Label,
    NoEncoderError,
    Relation,
    SentenceLabel,
    Skip,
    Snapshot,
    SnapshotError,
    SnapshotMismatchError,
    SnapshotSentence,
    Step,
    Thresholds,
)
from freshwiki.changes.snapshots.series import (
    PageSeries,
    diff_dumps,
    diff_revisions,
    diff_series,
    iter_series,
    monthly_cuts,
    parse_cut,
)


def align(old: Snapshot, new: Snapshot, *, encoder: Encoder | None = None,
          judge: Judge | None = None, options: AlignOptions | None = None) -> Alignment:
    """Label the sentences of two versions of one article (see the package docstring).

    Raises:
        SnapshotMismatchError: The snapshots are of different articles.
        EmptySnapshotError: A snapshot has no sentences.
        NoEncoderError: Sentences remain after hashing and no encoder was given.
    """
    return Aligner(encoder, judge, options).align(old, new)


__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_SHAPE",
    "AlignOptions",
    "Aligner",
    "Alignment",
    "BatchLLMJudge",
    "EmptySnapshotError",
    "Encoder",
    "Judge",
    "JudgeCounts",
    "LLMJudge",
    "Label",
    "NoEncoderError",
    "PageSeries",
    "Relation",
    "SentenceLabel",
    "Shape",
    "Skip",
    "Snapshot",
    "SnapshotError",
    "SnapshotMismatchError",
    "SnapshotSentence",
    "Step",
    "Thresholds",
    "align",
    "check_pair",
    "diff_dumps",
    "diff_revisions",
    "diff_series",
    "iter_series",
    "monthly_cuts",
    "normalize",
    "parse_cut",
    "snapshot_of",
]
