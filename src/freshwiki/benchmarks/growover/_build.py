"""Building a dataset from sources, and adding a snapshot to one: what the CLI calls."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from pathlib import Path

from freshwiki.benchmarks._files import file_sha256
from freshwiki.benchmarks.growover._dataset import (
    Dataset,
    PageInput,
    Progress,
    SnapshotInfo,
    dump_cut,
    dump_pages,
    history_pages,
    resolve_cut,
)
from freshwiki.benchmarks.growover._distractors import distractor_passages, source_titles
from freshwiki.benchmarks.growover._generate import Generator
from freshwiki.benchmarks.growover._records import KINDS, DatasetError, Kind
from freshwiki.benchmarks.growover._update import PageBuilder
from freshwiki.changes.snapshots import Encoder, Judge
from freshwiki.llm import LLM


def _check_sources(sources: Sequence[Path]) -> None:
    if not sources:
        raise DatasetError("no source given",
                           hint="give a history dump (with --cuts or --every) or 2+ dumps.")
    for path in sources:
        if not path.is_file():
            raise DatasetError(f"source {path} not found",
                               hint="give the path of a MediaWiki XML dump (.xml, .bz2, .gz).")


def _check_changes(sources: Sequence[Path], first: dt.datetime, last: dt.datetime) -> None:
    """Refuse history sources in which nothing happens between the first and the last cut.

    A history with a single revision per page (an articles dump given as a history, say)
    would give every later snapshot the first one's text: no New, no Changed instance, after
    an hour of generating snapshot 0. One lazy pass over the revisions stops at the first one
    after the first cut, so a real history costs little.

    Raises:
        DatasetError: naming the sources and the cuts, with what to give instead.
    """
    from freshwiki.corpus import ARTICLE_NAMESPACES, iter_revisions

    for path in sources:
        for rev in iter_revisions(path, namespaces=ARTICLE_NAMESPACES):
            if first < rev.timestamp <= last:
                return
    names = ", ".join(p.name for p in sources)
    raise DatasetError(
        f"no revision of {names} falls after the first cut {first:%Y-%m-%d} (up to "
        f"{last:%Y-%m-%d}): every later snapshot would repeat the first, with nothing new or "
        "changed to ask about (a history with a single revision per page?)",
        hint="give a pages-meta-history dump with later revisions, cuts within its "
        "revisions' dates, or a single cut for one snapshot.")


async def build_dataset(
    root: Path,
    sources: Sequence[Path],
    *,
    llm: LLM,
    model_spec: str,
    encoder: Encoder,
    cuts: Sequence[dt.datetime] | None = None,
    judge: Judge | None = None,
    seed: int = 0,
    kinds: Sequence[Kind] = KINDS,
    titles: set[str] | None = None,
    progress: Progress | None = None,
    embedder: object = None,
    distractors: Sequence[Path] = (),
) -> Dataset:
    """Create (or resume) the dataset in ``root``: snapshot 0, then an update per later cut.

    Args:
        root: The dataset folder.
        sources: History dump(s) sliced at ``cuts``; or, without cuts, two or more dumps,
            each one snapshot (dated by its newest revision), in the order given.
        llm: The generating model.
        model_spec: Its spec as the user gave it (recorded).
        encoder: Sentence embeddings for clustering and alignment.
        cuts: Cut dates for history sources.
        judge: NLI judge for undecided sentence pairs (``None``: left out, see ``_update``).
        seed: KMeans seed.
        kinds: Instance kinds to generate.
        titles: Only these articles.
        progress: Progress callback.
        embedder: The index embedder (default: the standard one with its cache).
        distractors: Sources of distractor articles for every snapshot's index (GrowOVER's
            database mixes random articles in); articles of ``sources`` are left out of them.

    Raises:
        DatasetError: Bad sources or cuts, an existing dataset from another generator or
            with other distractors.
    """
    _check_sources(sources)
    if cuts:
        mode = "history"
        ordered = sorted(cuts)
    elif len(sources) >= 2:
        mode = "dumps"
        ordered = [dump_cut(p) for p in sources]
        for a, b, pa, pb in zip(ordered, ordered[1:], sources, sources[1:], strict=False):
            if b <= a:
                raise DatasetError(f"dump {pb} ({b:%Y-%m-%d}) is not newer than {pa} "
                                   f"({a:%Y-%m-%d})", hint="list the dumps oldest first.")
    else:
        raise DatasetError("one history dump needs cut dates",
                           hint="pass --cuts 2002-03-01,2002-09-01,... or --every month, or "
                           "give two or more dumps (one snapshot each).")
    if len({c.date() for c in ordered}) != len(ordered):
        raise DatasetError("two cuts fall on the same day",
                           hint="a dataset has at most one snapshot per day.")
    if mode == "history" and len(ordered) > 1:
        _check_changes(sources, ordered[0], ordered[-1])
    dataset = Dataset.create(root, name=root.name, mode=mode, sources=sources,
                             model_spec=model_spec, model_id=llm.backend.model_id, seed=seed,
                             kinds=kinds)
    if distractors:
        passages, counts = distractor_passages(distractors, exclude_titles=source_titles(sources))
        dataset.set_distractors(distractors, passages, counts)
    builder = PageBuilder(Generator(llm), encoder, judge=judge, seed=seed, kinds=kinds)
    done = {s.label for s in dataset.complete_snapshots}
    for k, cut in enumerate(ordered):
        if cut.date().isoformat() in done:
            continue
        pages: Iterable[PageInput]
        if mode == "history":
            pages = history_pages(list(sources), cut, titles)
            source = ", ".join(p.name for p in sources)
        else:
            pages = dump_pages(sources[k], cut, titles)
            source = sources[k].name
        await dataset.add_snapshot(pages, cut, source, builder, progress=progress,
                                   embedder=embedder)
    return dataset


async def update_dataset(
    root: Path,
    source_or_cut: str,
    *,
    llm: LLM,
    encoder: Encoder,
    judge: Judge | None = None,
    titles: set[str] | None = None,
    progress: Progress | None = None,
    embedder: object = None,
) -> SnapshotInfo:
    """Add one snapshot: a new dump (a file), or a later cut of the recorded history sources.

    Raises:
        DatasetError: No dataset in ``root``, a date for a dataset built from dumps, a cut not
            after the last snapshot, or another generator than the dataset's.
    """
    dataset = Dataset.open(root)
    manifest = dataset.manifest
    seed, kinds = int(manifest["seed"]), list(manifest["kinds"])
    dataset.check_compatible(model_id=llm.backend.model_id, seed=seed, kinds=kinds)
    builder = PageBuilder(Generator(llm), encoder, judge=judge, seed=seed, kinds=kinds)
    path = Path(source_or_cut)
    if path.is_file():
        cut = dump_cut(path)
        manifest["sources"].append({"path": str(path.resolve()), "sha256": file_sha256(path)})
        dataset.save()
        return await dataset.add_snapshot(dump_pages(path, cut, titles), cut, path.name, builder,
                                          progress=progress, embedder=embedder)
    if manifest["mode"] != "history":
        raise DatasetError(
            f"{source_or_cut!r} is not a file, and dataset {root.name} was built from dumps",
            hint="give the new dump's path.")
    cut = resolve_cut(source_or_cut)
    sources = [Path(s["path"]) for s in manifest["sources"]]
    _check_sources(sources)
    return await dataset.add_snapshot(history_pages(sources, cut, titles), cut,
                                      ", ".join(p.name for p in sources), builder,
                                      progress=progress, embedder=embedder)
