"""How many instances a history could give, counted before any model is run.

Generation is the expensive part of a GrowOVER build (one model call per selected paragraph,
per changed pair, per group of new sentences, plus an NLI check per pair similarity cannot
decide). Whether a set of sources can reach a target (say 60 Changed and 60 New questions in
the evaluation snapshots) is known from the alignment alone, which needs only sentence
embeddings. :func:`count_candidates` walks the cuts as a build would and counts, per article
and snapshot, the candidates each rule of :mod:`._update` would generate from:

* ``initial_groups``: selected paragraphs of an article seen for the first time (snapshot 0:
  ``initial`` questions; later: typed ``new``, as the paper generates a new article afresh);
* ``changed_pairs`` / ``changed_unverified``: changed (old, new) sentence pairs by new
  sentence, decided by the aligner's verified steps / needing the NLI check;
* ``new_groups`` / ``new_groups_with_unverified``: groups of new sentences (at most six, one
  paragraph) from verified new sentences only / counting the unverified ones too;
* ``unchanged``, ``new``, ``changed``, ``deleted`` sentences, and ``unverified`` labels.

Without the judge the verified figures are what a ``--no-judge`` build would use; with it,
the NLI check decides each unverified pair, so the truth lies between the two figures.
A generation call can still fail validation (the answer not in the evidence, ...), so these
are upper bounds on instances, not promises.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from freshwiki.benchmarks.growover._dataset import history_pages
from freshwiki.benchmarks.growover._select import runs, select_paragraphs
from freshwiki.changes.snapshots import Aligner, Encoder, Snapshot

Progress = Callable[[str, int, int | None], None]


@dataclass(frozen=True)
class CandidateCount:
    """What one article offers at one snapshot (see the module docstring for the fields).

    Attributes:
        snapshot: The snapshot's label (``YYYY-MM-DD``).
        number: Its position (0 = the initial snapshot).
        page_id: The article.
        title: Its title.
        revision_id: The revision the snapshot shows (``None`` when the article is absent).
        status: ``initial`` (first seen), ``aligned``, ``same`` (same revision as before),
            ``absent`` or ``skipped`` (with ``reason``).
        reason: Why an article is absent or skipped.
    """

    snapshot: str
    number: int
    page_id: int
    title: str
    revision_id: int | None
    status: str
    reason: str = ""
    initial_groups: int = 0
    changed_pairs: int = 0
    changed_unverified: int = 0
    new_groups: int = 0
    new_groups_with_unverified: int = 0
    unchanged: int = 0
    new: int = 0
    changed: int = 0
    deleted: int = 0
    unverified: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return asdict(self)


def count_candidates(sources: Sequence[Path], cuts: Sequence[dt.datetime], *,
                     encoder: Encoder, seed: int = 0, titles: set[str] | None = None,
                     progress: Progress | None = None) -> list[CandidateCount]:
    """Per article and cut, the candidates a build of ``sources`` at ``cuts`` would generate from.

    No model is called: unverified pairs are counted apart (see the module docstring).
    """
    rows: list[CandidateCount] = []
    previous: dict[int, Snapshot] = {}
    aligner = Aligner(encoder, None)
    for number, cut in enumerate(sorted(cuts)):
        label = cut.date().isoformat()
        current: dict[int, Snapshot] = {}
        seen: set[int] = set()
        for done, item in enumerate(history_pages(list(sources), cut, titles), start=1):
            page = item.page
            snap = item.snapshot
            seen.add(page.id)
            if progress is not None:
                progress(f"count {label}", done, None)
            if snap is None:
                rows.append(CandidateCount(label, number, page.id, page.title, None,
                                           "skipped", item.reason))
                continue
            current[page.id] = snap
            old = previous.get(page.id)
            if old is None:
                rows.append(CandidateCount(
                    label, number, page.id, page.title, snap.revision_id, "initial",
                    initial_groups=len(select_paragraphs(snap, encoder, seed=seed))))
                continue
            if old.revision_id == snap.revision_id:
                rows.append(CandidateCount(label, number, page.id, page.title,
                                           snap.revision_id, "same",
                                           unchanged=len(snap.sentences)))
                continue
            alignment = aligner.align(old, snap)
            labels = alignment.new_labels
            verified_new = [i for i in alignment.new_indices if not labels[i].ambiguous]
            changed_by_new: dict[int, bool] = {}
            for o, n in alignment.changed:
                sure = not (labels[n].ambiguous or alignment.old_labels[o].ambiguous)
                changed_by_new[n] = changed_by_new.get(n, True) and sure
            rows.append(CandidateCount(
                label, number, page.id, page.title, snap.revision_id, "aligned",
                changed_pairs=sum(changed_by_new.values()),
                changed_unverified=sum(not v for v in changed_by_new.values()),
                new_groups=len(runs(verified_new, snap)),
                new_groups_with_unverified=len(runs(alignment.new_indices, snap)),
                unchanged=sum(1 for lab in labels if lab.label == "unchanged"),
                new=len(alignment.new_indices), changed=len(changed_by_new),
                deleted=len(alignment.deleted),
                unverified=sum(1 for lab in labels if lab.ambiguous)))
        for page_id in sorted(set(previous) - seen):
            old = previous[page_id]
            rows.append(CandidateCount(label, number, page_id, old.title, None, "absent",
                                       "not in this snapshot (deleted, moved or not in the "
                                       "sources)"))
        previous = current  # as a build: a page skipped here starts afresh later
    return rows


FIELDS = ("initial_groups", "changed_pairs", "changed_unverified", "new_groups",
          "new_groups_with_unverified", "unchanged", "new", "changed", "deleted", "unverified")


def summarize_candidates(rows: Sequence[CandidateCount],
                         group: Callable[[CandidateCount], str] | None = None
                         ) -> dict[str, dict[str, dict[str, int]]]:
    """Sums of :data:`FIELDS` (and article counts by status) per snapshot and group.

    Args:
        rows: From :func:`count_candidates`.
        group: A group name per row (e.g. real or constructed); default: one group ``all``.
    """
    out: dict[str, dict[str, dict[str, int]]] = {}
    for row in rows:
        name = group(row) if group is not None else "all"
        cell = out.setdefault(row.snapshot, {}).setdefault(name, dict.fromkeys(FIELDS, 0))
        for f in FIELDS:
            cell[f] += int(getattr(row, f))
        cell[f"articles_{row.status}"] = cell.get(f"articles_{row.status}", 0) + 1
    return out
