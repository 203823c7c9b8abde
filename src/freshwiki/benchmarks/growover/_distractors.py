"""Distractor articles: indexed beside the dataset's articles, never asked about.

GrowOVER's retrieval database is not just the articles the questions come from: the paper
adds ~100K random articles so that finding the evidence is a real search (its §5.1,
"Database"). Here any source the corpus readers accept (a ``pages-articles`` dump, WikiChat's
topics JSON, JSON lines) can be given as distractors; each article becomes passages exactly as
a dataset article does (:func:`snapshot_passages`), marked ``meta["distractor"] = True``, and
goes into every snapshot's index. Distractors are the same at every snapshot: they only have
to be plausible neighbours, and no instance rests on them.

An article that is also one of the dataset's own articles (same title) is left out of the
distractors, so its evidence never has a stale twin in the index.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from freshwiki.benchmarks.growover._passages import snapshot_passages
from freshwiki.benchmarks.growover._records import DatasetError
from freshwiki.changes.snapshots import snapshot_of
from freshwiki.records import Passage


def distractor_passages(sources: Sequence[Path], *, exclude_titles: Iterable[str] = ()
                        ) -> tuple[list[Passage], dict[str, int]]:
    """The passages of every usable article of ``sources``, and counts of what was left out.

    The first source that has a title wins (WikiChat's head, tail and recent files share a
    few). Redirects and articles that clean to nothing are counted, not indexed.

    Raises:
        DatasetError: A source is missing.
        DumpReadError: A source cannot be read (from the corpus readers).
    """
    from freshwiki.corpus import read_source

    excluded = set(exclude_titles)
    seen: set[str] = set()
    out: list[Passage] = []
    counts = {"articles": 0, "dataset_articles": 0, "duplicates": 0, "redirect_or_empty": 0}
    for path in sources:
        if not path.exists():
            raise DatasetError(f"distractor source {path} not found",
                               hint="give a dump, a topics JSON or a JSON-lines file that "
                               "exists, or leave --distractors out.")
        for rev in read_source(path):
            title = rev.page.title
            if title in excluded:
                counts["dataset_articles"] += 1
                continue
            if title in seen:
                counts["duplicates"] += 1
                continue
            seen.add(title)
            snap = snapshot_of(rev)
            if snap.redirect is not None or not snap.sentences:
                counts["redirect_or_empty"] += 1
                continue
            counts["articles"] += 1
            for p in snapshot_passages(snap):
                out.append(Passage(id=p.id, page_id=p.page_id, revision_id=p.revision_id,
                                   title=p.title, section_path=p.section_path, text=p.text,
                                   timestamp=p.timestamp, sentences=p.sentences,
                                   meta={**p.meta, "distractor": True}))
    return out, counts


def source_titles(sources: Sequence[Path]) -> set[str]:
    """Every article title of the dataset's sources (what the distractors must not repeat)."""
    from freshwiki.corpus import ARTICLE_NAMESPACES, read_source

    return {rev.page.title for path in sources for rev in read_source(
        path, namespaces=ARTICLE_NAMESPACES)}
