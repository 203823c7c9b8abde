"""GrowOVER (Ko et al., 2024): a living QA and dialogue benchmark that grows with Wikipedia.

A dataset is generated from the first snapshot of some articles and *maintained* at each
later snapshot: instances whose evidence is unchanged are carried over (re-indexed), the rest
are dropped, and new instances are generated from the new and the changed sentences. A model
is then evaluated at every snapshot, per instance type, to see whether it keeps up.

Generation (``_select``, ``_generate``, ``_update``). First snapshot of an article: candidate
paragraphs have 1-4 sentences and 300-600 characters; with more than four, KMeans (4
clusters, ``random_state=seed``) on their embeddings picks the paragraph nearest each centroid.
Each chosen paragraph gives one QA pair (short entity answer, evidence sentence range) and one
3-4 turn user/expert dialogue (evidence sentences per turn), under JSON schemas. Later
snapshots: the article is aligned with its previous version
(:func:`freshwiki.changes.snapshots.align`); a QA instance is kept only when all its evidence
sentences are unchanged, a dialogue keeps its unchanged turns; runs of new sentences (at most
6 per group) give ``new`` instances, changed pairs give ``changed`` questions (old and new
answer). Types: ``initial`` (first snapshot), ``unchanged``, ``new``, ``changed``. An article
first seen at a later snapshot is generated like a first snapshot, typed ``new``.

Nothing is dropped silently: every instance, turn or attempt that does not make it is a
:class:`GenerationSkip` in ``skips.jsonl`` with its reason (evidence changed, evidence range
outside the sentences shown, answer not in the evidence, article deleted, empty or a redirect,
unverified alignment label). Two versions of different articles raise
:class:`~freshwiki.changes.snapshots.SnapshotMismatchError`.

Dataset layout: see :mod:`freshwiki.benchmarks.growover._dataset` (``HOME/growover/NAME/``:
``manifest.json``, then per snapshot ``instances.jsonl``, ``skips.jsonl``, ``pages.jsonl``,
``passages.jsonl`` and a HybridIndex in ``index/``).

Evaluation: benchmark ``growover`` (options ``name=NAME`` or ``path=FOLDER``, ``kind=qa``
(default) or ``kind=dialogue``, ``snapshots=DATE,DATE``); template = the kind. Scorers:
``growover-f1``, ``growover-em`` (QA), ``growover-bleu`` (dialogue), ``growover-hit`` (both);
see :mod:`freshwiki.benchmarks.growover._scorers`. Reports break down by ``type``,
``snapshot`` and ``snapshot_type`` (``"2014-12-31 new"``).

Interface for RiLM (and any retrieving system)
----------------------------------------------

1. **Samples.** One :class:`~freshwiki.benchmarks.Sample` per QA instance per snapshot, id
   ``"{snapshot date}:{instance id}"`` (e.g. ``"2015-06-30:24278-s00-qa-002"``); one per
   dialogue *turn*, id ``"{snapshot date}:{instance id}:t{turn number}"``. ``sample.input`` is
   the question (the user's message for a turn); ``sample.targets == (gold answer,)`` (the
   *new* answer for ``changed``). ``sample.metadata`` always has:

   - ``type``: ``"initial" | "unchanged" | "new" | "changed"``
   - ``kind``: ``"qa" | "dialogue"``
   - ``snapshot`` (``"YYYY-MM-DD"``), ``snapshot_number`` (0, 1, ...), ``snapshot_type``
     (``"YYYY-MM-DD type"``), ``month`` (``"YYYY-MM"`` generated), ``title``, ``page_id``,
     ``instance`` (instance id), ``generated_as`` (the type it was generated with)
   - ``evidence``: evidence sentence indices in that snapshot's article
   - ``evidence_passages``: the passage ids (in that snapshot's index) that hold the
     evidence — a retrieval is a hit when all of them are retrieved
   - ``index``: the absolute path of that snapshot's HybridIndex folder
   - ``old_answer`` (changed QA only); ``turn`` and ``history`` (``[[user, expert], ...]``
     of the earlier kept turns; dialogue only)

2. **Hit scores.** ``growover-hit`` is in the default scorers of both kinds, so a ``ralm`` /
   ``ralm-best`` run has a per-sample score: value 1.0 (label ``hit``) or 0.0 (``miss``),
   ``data = {"k", "ranks": {passage id: rank}, "evidence_passages", "retrieved"}``. Systems
   must write ``Output.trace["retrieved"] = [{"id": passage id, ...}, ...]`` in rank order;
   without that key the score is 0.0 labelled ``no-retrieval`` with ``data["skipped"]``
   (filter those out with :func:`retrieval_scored`).

3. **Re-retrieval.** :func:`growover_retriever(sample) <growover_retriever>` returns the
   snapshot's :class:`~freshwiki.retrieval.HybridIndex` (opened once per path, shared,
   thread-safe; close all with ``shared_indexes().close()``). Use
   ``growover_retriever(sample).search(task.query, k)``; each hit's ``passage.id`` compares
   with ``metadata["evidence_passages"]`` and ``passage.meta["sentences"]`` lists the
   sentence indices the passage holds. :class:`SnapshotIndexes` is the same cache as an
   object, for a system that wants its own (e.g. with an injected embedder).
   ``Task.query`` is what to search for: the question, or for a dialogue turn the user's
   messages so far joined by spaces.
"""

from __future__ import annotations

from freshwiki.benchmarks.growover._benchmark import (
    GrowOver,
    dataset_path,
    growover_benchmark,
    growover_retriever,
    shared_indexes,
    templates_hash,
)
from freshwiki.benchmarks.growover._build import build_dataset, update_dataset
from freshwiki.benchmarks.growover._candidates import (
    CandidateCount,
    count_candidates,
    summarize_candidates,
)
from freshwiki.benchmarks.growover._dataset import (
    Dataset,
    PageInput,
    SnapshotInfo,
    datasets_dir,
    dump_pages,
    history_pages,
    prompts_hash,
)
from freshwiki.benchmarks.growover._distractors import distractor_passages, source_titles
from freshwiki.benchmarks.growover._generate import (
    Failed,
    GeneratedChange,
    GeneratedDialogue,
    GeneratedQA,
    Generator,
)
from freshwiki.benchmarks.growover._passages import (
    evidence_passages,
    passage_id,
    snapshot_passages,
)
from freshwiki.benchmarks.growover._records import (
    KINDS,
    TYPES,
    DatasetError,
    DialogueInstance,
    Evidence,
    GenerationSkip,
    Instance,
    InstanceType,
    Kind,
    QAInstance,
    Turn,
    instance_from_dict,
)
from freshwiki.benchmarks.growover._scorers import (
    ARR_MODES as RILM_ARR_MODES,
)
from freshwiki.benchmarks.growover._scorers import (
    NO_RETRIEVAL,
    BleuScorer,
    EMScorer,
    F1Scorer,
    HitScorer,
    retrieval_scored,
)
from freshwiki.benchmarks.growover._select import (
    Candidate,
    candidates,
    runs,
    select_paragraphs,
)
from freshwiki.benchmarks.growover._text import exact_match, normalize_answer, token_f1
from freshwiki.benchmarks.growover._update import PageBuilder, PageResult, carry_evidence
from freshwiki.llm import LLM
from freshwiki.retrieval import SnapshotIndexes
from freshwiki.seams import Scorer

# No GrowOVER scorer needs a model: each factory ignores the judge it is given.


def f1_scorer(judge: LLM | None) -> Scorer:
    """``growover-f1``: token F1 of a QA answer against the gold answer."""
    return F1Scorer()


def em_scorer(judge: LLM | None) -> Scorer:
    """``growover-em``: exact match of a QA answer after normalisation."""
    return EMScorer()


def bleu_scorer(judge: LLM | None) -> Scorer:
    """``growover-bleu``: BLEU of a dialogue reply against the gold turn."""
    return BleuScorer()


def hit_scorer(judge: LLM | None) -> Scorer:
    """``growover-hit``: whether retrieval found every evidence passage."""
    return HitScorer()


__all__ = [
    "KINDS",
    "NO_RETRIEVAL",
    "RILM_ARR_MODES",
    "TYPES",
    "BleuScorer",
    "Candidate",
    "CandidateCount",
    "Dataset",
    "DatasetError",
    "DialogueInstance",
    "EMScorer",
    "Evidence",
    "F1Scorer",
    "Failed",
    "GeneratedChange",
    "GeneratedDialogue",
    "GeneratedQA",
    "GenerationSkip",
    "Generator",
    "GrowOver",
    "HitScorer",
    "Instance",
    "InstanceType",
    "Kind",
    "PageBuilder",
    "PageInput",
    "PageResult",
    "QAInstance",
    "SnapshotIndexes",
    "SnapshotInfo",
    "Turn",
    "bleu_scorer",
    "build_dataset",
    "candidates",
    "carry_evidence",
    "count_candidates",
    "dataset_path",
    "datasets_dir",
    "distractor_passages",
    "dump_pages",
    "em_scorer",
    "evidence_passages",
    "exact_match",
    "f1_scorer",
    "growover_benchmark",
    "growover_retriever",
    "history_pages",
    "hit_scorer",
    "instance_from_dict",
    "normalize_answer",
    "passage_id",
    "prompts_hash",
    "retrieval_scored",
    "runs",
    "select_paragraphs",
    "shared_indexes",
    "snapshot_passages",
    "source_titles",
    "summarize_candidates",
    "templates_hash",
    "token_f1",
    "update_dataset",
]
