"""A GrowOVER dataset on disk, and building it snapshot by snapshot from dumps.

Layout (``HOME/growover/NAME/``)::

    manifest.json                 sources, cuts, model spec + weights hash, prompt hash, seed,
                                  kinds, and one entry per snapshot (label, cut, complete, counts)
    distractors.jsonl             passages of distractor articles (optional): in every snapshot's
                                  index, never asked about (see ``_distractors``)
    snapshots/NN-YYYY-MM-DD/
        instances.jsonl           QA and dialogue instances valid at this snapshot (re-indexed)
        skips.jsonl               everything not generated or not carried over, with the reason
        pages.jsonl               each article as it stood (sentences), one line per article,
                                  written last for the article: the resume marker
        passages.jsonl            the retrieval passages (``meta.sentences``: sentence indices)
        index/                    a HybridIndex over those passages and the distractors (what
                                  RaLM searches)

Crash safety: an article's instances and skips are appended and flushed before its
``pages.jsonl`` line, so on resume an article with a page line is done, and any lines of an
article without one (a crash mid-article) are discarded and regenerated. A snapshot counts
only once its manifest entry says ``complete`` (passages and index written).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshwiki.benchmarks._files import file_sha256
from freshwiki.benchmarks.growover._passages import evidence_passages, snapshot_passages
from freshwiki.benchmarks.growover._records import (
    TYPES,
    DatasetError,
    GenerationSkip,
    Instance,
    instance_from_dict,
    snapshot_from_dict,
    snapshot_to_dict,
)
from freshwiki.benchmarks.growover._update import PageBuilder
from freshwiki.changes.snapshots import (
    Snapshot,
    SnapshotError,
    iter_series,
    parse_cut,
    snapshot_of,
)
from freshwiki.corpus import ARTICLE_NAMESPACES, iter_latest
from freshwiki.prompting import templates_hash
from freshwiki.records import PageRef, Passage

FORMAT = 1
MANIFEST = "manifest.json"
DISTRACTORS = "distractors.jsonl"
PROMPTS = "benchmarks/growover/prompts"

Progress = Callable[[str, int, "int | None"], None]
"""Called with (what, done, total or None); ``what`` is a snapshot label or ``index``."""


def prompts_hash() -> str:
    """A short hash of the generation prompts: a dataset never mixes two prompt versions."""
    return templates_hash(PROMPTS)


def datasets_dir(home: Path) -> Path:
    """Where named datasets live: ``HOME/growover``."""
    return home / "growover"


@dataclass(frozen=True)
class PageInput:
    """One article at one cut, as a source gives it.

    ``snapshot`` is ``None`` (with ``reason``) when the article cannot be used at this cut:
    it did not exist yet, or it is a redirect or empty.
    """

    page: PageRef
    snapshot: Snapshot | None
    reason: str = ""


def _usable(snap: Snapshot, page: PageRef, when: str) -> PageInput:
    if snap.redirect is not None:
        return PageInput(page, None, f"a redirect to {snap.redirect!r} {when}")
    if not snap.sentences:
        return PageInput(page, None, f"empty {when}: no sentences after cleaning")
    return PageInput(page, snap)


def history_pages(paths: Sequence[Path], cut: dt.datetime,
                  titles: set[str] | None = None) -> Iterator[PageInput] | list[PageInput]:
    """Each article of the history dump(s) as it stood at ``cut``.

    One dump is streamed page by page. Several dumps are histories of the same pages split
    over files (e.g. real revisions plus constructed ones): per page, the latest revision at
    or before ``cut`` across all files wins; that merge holds one revision per page in memory
    anyway, so it comes back as a list, whose length gives a build's progress its total.
    """
    if len(paths) == 1:
        return _streamed_pages(paths[0], cut, titles)
    return list(_merged_pages(paths, cut, titles))


def _streamed_pages(path: Path, cut: dt.datetime,
                    titles: set[str] | None) -> Iterator[PageInput]:
    when = f"at {cut:%Y-%m-%d}"
    for series in iter_series(path, [cut], titles=titles):
        snap = series.snapshots()[0]
        if snap is None:
            yield PageInput(series.page, None, f"did not exist yet {when}")
        else:
            yield _usable(snap, series.page, when)


def _merged_pages(paths: Sequence[Path], cut: dt.datetime,
                  titles: set[str] | None) -> Iterator[PageInput]:
    when = f"at {cut:%Y-%m-%d}"
    best: dict[int, Any] = {}
    pages: dict[int, PageRef] = {}
    for path in paths:
        for series in iter_series(path, [cut], titles=titles):
            rev = series.revisions[0]
            pages.setdefault(series.page.id, series.page)
            if rev is not None and (series.page.id not in best
                                    or best[series.page.id].timestamp <= rev.timestamp):
                best[series.page.id] = rev
                pages[series.page.id] = rev.page
    for page_id in sorted(pages):
        rev = best.get(page_id)
        if rev is None:
            yield PageInput(pages[page_id], None, f"did not exist yet {when}")
        else:
            yield _usable(snapshot_of(rev, cut=cut), pages[page_id], when)


def dump_cut(path: Path) -> dt.datetime:
    """A dump's snapshot date: its most recent revision.

    Raises:
        DatasetError: The dump holds no article revision.
    """
    latest = max((rev.timestamp for rev in iter_latest(path, namespaces=ARTICLE_NAMESPACES)),
                 default=None)
    if latest is None:
        raise DatasetError(f"{path} holds no article revision",
                           hint="is it a MediaWiki XML dump of articles (namespace 0)?")
    return latest


def dump_pages(path: Path, cut: dt.datetime, titles: set[str] | None = None
               ) -> Iterator[PageInput]:
    """Each article of a dump (its latest revision), as a snapshot at ``cut``."""
    for rev in iter_latest(path, namespaces=ARTICLE_NAMESPACES):
        if titles is None or rev.page.title in titles:
            yield _usable(snapshot_of(rev, cut=cut), rev.page, f"in {path.name}")


@dataclass(frozen=True)
class SnapshotInfo:
    """A snapshot's manifest entry."""

    number: int
    label: str
    cut: dt.datetime
    source: str
    complete: bool
    counts: Mapping[str, Any]

    @property
    def dirname(self) -> str:
        """``NN-YYYY-MM-DD``."""
        return f"{self.number:02d}-{self.label}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return {"number": self.number, "label": self.label, "cut": self.cut.isoformat(),
                "source": self.source, "complete": self.complete, "counts": dict(self.counts)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SnapshotInfo:
        """The inverse of :meth:`to_dict`."""
        return cls(int(data["number"]), str(data["label"]),
                   dt.datetime.fromisoformat(data["cut"]), str(data["source"]),
                   bool(data["complete"]), dict(data.get("counts") or {}))


class Dataset:
    """An opened dataset folder; see the module docstring for the layout."""

    def __init__(self, root: Path, manifest: dict[str, Any]) -> None:
        self.root = root
        self.manifest = manifest

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def create(cls, root: Path, *, name: str, mode: str, sources: Sequence[Path],
               model_spec: str, model_id: str, seed: int, kinds: Sequence[str]) -> Dataset:
        """A new, empty dataset (no snapshot yet); an existing one is opened and checked.

        Raises:
            DatasetError: ``root`` holds a dataset made with another model, prompts, seed
                or kinds (resuming it would mix two generations).
        """
        fresh = {
            "format": FORMAT, "name": name, "mode": mode,
            "sources": [{"path": str(p.resolve()), "sha256": file_sha256(p)} for p in sources],
            "model": {"spec": model_spec, "id": model_id}, "prompts": prompts_hash(),
            "seed": seed, "kinds": list(kinds), "snapshots": [],
            "attribution": "Text from Wikipedia, CC BY-SA 4.0.",
        }
        if (root / MANIFEST).is_file():
            existing = cls.open(root)
            existing.check_compatible(model_id=model_id, seed=seed, kinds=kinds)
            return existing
        root.mkdir(parents=True, exist_ok=True)
        dataset = cls(root, fresh)
        dataset.save()
        return dataset

    @classmethod
    def open(cls, root: Path) -> Dataset:
        """Open the dataset in ``root``.

        Raises:
            DatasetError: No dataset there, or a format this code does not read.
        """
        path = root / MANIFEST
        if not path.is_file():
            raise DatasetError(f"no GrowOVER dataset in {root} (no {MANIFEST})",
                               hint="build one with `freshwiki growover build HISTORY.xml "
                               "--name NAME --cuts DATE,DATE,...`.")
        manifest = json.loads(path.read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT:
            raise DatasetError(f"{path} has format {manifest.get('format')!r}, not {FORMAT}",
                               hint="rebuild the dataset with this version of freshwiki.")
        return cls(root, manifest)

    def check_compatible(self, *, model_id: str, seed: int, kinds: Sequence[str]) -> None:
        """Refuse to extend a dataset with another generator.

        Raises:
            DatasetError: Model weights, prompts, seed or kinds differ from the manifest's.
        """
        problems = []
        if self.manifest["model"]["id"] != model_id:
            problems.append(f"model {self.manifest['model']['id']} (now {model_id})")
        if self.manifest["prompts"] != prompts_hash():
            problems.append(f"prompts {self.manifest['prompts']} (now {prompts_hash()})")
        if int(self.manifest["seed"]) != seed:
            problems.append(f"seed {self.manifest['seed']} (now {seed})")
        if list(self.manifest["kinds"]) != list(kinds):
            problems.append(f"kinds {self.manifest['kinds']} (now {list(kinds)})")
        if problems:
            raise DatasetError(
                f"dataset {self.root} was generated with " + "; ".join(problems),
                hint="use the same --model, --seed and --kinds (and prompts), or build a new "
                "dataset under another --name.")

    def save(self) -> None:
        """Write the manifest atomically."""
        tmp = self.root / f"{MANIFEST}.tmp"
        tmp.write_text(json.dumps(self.manifest, indent=2, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, self.root / MANIFEST)

    # -- reading ---------------------------------------------------------------------------

    @property
    def snapshots(self) -> list[SnapshotInfo]:
        """Every snapshot entry, oldest first (the last may be incomplete)."""
        return [SnapshotInfo.from_dict(s) for s in self.manifest["snapshots"]]

    @property
    def complete_snapshots(self) -> list[SnapshotInfo]:
        """Snapshots whose generation, passages and index are all written."""
        return [s for s in self.snapshots if s.complete]

    def snapshot(self, key: str | int) -> SnapshotInfo:
        """A snapshot by number or label.

        Raises:
            DatasetError: No such snapshot.
        """
        for info in self.snapshots:
            if str(key) in (str(info.number), info.label, info.dirname):
                return info
        raise DatasetError(f"dataset {self.root} has no snapshot {key!r}",
                           hint="snapshots: " + ", ".join(s.label for s in self.snapshots))

    def folder(self, info: SnapshotInfo) -> Path:
        """The snapshot's folder."""
        return self.root / "snapshots" / info.dirname

    def index_dir(self, info: SnapshotInfo) -> Path:
        """The snapshot's retrieval index folder."""
        return self.folder(info) / "index"

    def instances(self, info: SnapshotInfo) -> list[Instance]:
        """The instances valid at a snapshot."""
        return [instance_from_dict(d) for d in _read_jsonl(self.folder(info) / "instances.jsonl")]

    def skips(self, info: SnapshotInfo) -> list[GenerationSkip]:
        """The recorded skips of a snapshot."""
        return [GenerationSkip.from_dict(d) for d in _read_jsonl(self.folder(info) / "skips.jsonl")]

    def pages(self, info: SnapshotInfo) -> dict[int, Snapshot]:
        """The articles of a snapshot that were usable (page id → snapshot)."""
        out = {}
        for line in _read_jsonl(self.folder(info) / "pages.jsonl"):
            if line.get("status") == "ok":
                out[int(line["page_id"])] = snapshot_from_dict(line["snapshot"])
        return out

    def passages(self, info: SnapshotInfo) -> list[Passage]:
        """The snapshot's retrieval passages."""
        return [_passage_from_dict(d) for d in _read_jsonl(self.folder(info) / "passages.jsonl")]

    @property
    def distractors_path(self) -> Path:
        """Where the distractor passages live (``distractors.jsonl``, see ``_distractors``)."""
        return self.root / DISTRACTORS

    def distractors(self) -> list[Passage]:
        """The distractor passages every snapshot's index holds besides its articles."""
        return [_passage_from_dict(d) for d in _read_jsonl(self.distractors_path)]

    def set_distractors(self, sources: Sequence[Path], passages: Sequence[Passage],
                        counts: Mapping[str, int]) -> None:
        """Record the distractors (once: a dataset keeps the same database at every snapshot).

        Raises:
            DatasetError: The dataset already has distractors from other sources.
        """
        recorded = [{"path": str(p.resolve()), "sha256": file_sha256(p)} for p in sources]
        existing = self.manifest.get("distractors")
        if existing is not None and self.distractors_path.is_file():
            if [s["sha256"] for s in existing["sources"]] != [s["sha256"] for s in recorded]:
                raise DatasetError(
                    f"dataset {self.root} was built with other distractors "
                    f"({', '.join(Path(s['path']).name for s in existing['sources']) or 'none'})",
                    hint="give the same --distractors, or build a new dataset under another "
                    "--name.")
            return
        _write_jsonl(self.distractors_path, [_passage_to_dict(p) for p in passages])
        self.manifest["distractors"] = {"sources": recorded, "counts": dict(counts),
                                        "passages": len(passages)}
        self.save()

    def evidence_ids(self, info: SnapshotInfo) -> Callable[[int, Sequence[int]], list[str]]:
        """A function (page id, evidence sentences) → the passage ids holding the evidence."""
        by_page: dict[int, list[Passage]] = {}
        for p in self.passages(info):
            by_page.setdefault(p.page_id, []).append(p)

        def lookup(page_id: int, sentences: Sequence[int]) -> list[str]:
            return evidence_passages(by_page.get(page_id, []), sentences)

        return lookup

    # -- building --------------------------------------------------------------------------

    async def add_snapshot(self, pages: Iterable[PageInput], cut: dt.datetime, source: str,
                           builder: PageBuilder, *, progress: Progress | None = None,
                           embedder: Any = None) -> SnapshotInfo:
        """Generate (first snapshot) or update (later ones) every article, then index.

        Resumes an incomplete snapshot with the same date. The first snapshot generates from
        selected paragraphs; a later one aligns each article with its previous version.

        Raises:
            DatasetError: ``cut`` is not after the last complete snapshot, or another
                snapshot is still incomplete.
        """
        label = cut.date().isoformat()
        entries = self.snapshots
        current = entries[-1] if entries and not entries[-1].complete else None
        if current is not None and current.label != label:
            raise DatasetError(
                f"snapshot {current.label} of {self.root} is incomplete",
                hint=f"finish it first: re-run the command that started it (cut {current.label}).")
        done_before = [s for s in entries if s.complete]
        if current is None:
            if done_before and cut <= done_before[-1].cut:
                raise DatasetError(
                    f"cut {label} is not after the last snapshot {done_before[-1].label}",
                    hint="snapshots are added in time order; give a later date or dump.")
            if any(s.label == label for s in done_before):
                raise DatasetError(f"dataset already has a snapshot on {label}",
                                   hint="one snapshot per day; pick another cut.")
            current = SnapshotInfo(len(entries), label, cut, source, False, {})
            self.manifest["snapshots"].append(current.to_dict())
            self.save()
        folder = self.folder(current)
        folder.mkdir(parents=True, exist_ok=True)
        previous = done_before[-1] if done_before else None
        prev_pages = self.pages(previous) if previous else {}
        prev_instances: dict[int, list[Instance]] = {}
        if previous is not None:
            for inst in self.instances(previous):
                prev_instances.setdefault(inst.page_id, []).append(inst)

        done = _recover(folder)
        total = len(pages) if isinstance(pages, Sized) else (len(prev_pages) or None)
        seen: set[int] = set(done)
        count = len(done)
        with _Appender(folder) as out:
            for item in pages:
                page_id = item.page.id
                if page_id in seen:
                    continue
                seen.add(page_id)
                await self._one_page(item, current, builder, prev_pages.get(page_id),
                                     prev_instances.get(page_id, []), out)
                count += 1
                if progress is not None:
                    progress(label, count, total)
            for page_id in sorted(set(prev_pages) - seen):
                old = prev_pages[page_id]
                dropped = len(prev_instances.get(page_id, []))
                out.write([], [GenerationSkip(
                    page_id, old.title, label, "page",
                    f"the article is not in this snapshot (deleted, moved or not in "
                    f"{source}): its {dropped} instance(s) are dropped")],
                    {"page_id": page_id, "title": old.title, "status": "absent"})
        if previous is not None and NO_CHANGE_PAGE not in seen:
            self._note_no_change(current, previous, prev_pages)
        return self._finish(current, progress=progress, embedder=embedder)

    def _note_no_change(self, info: SnapshotInfo, previous: SnapshotInfo,
                        prev_pages: Mapping[int, Snapshot]) -> None:
        """Record a snapshot in which no article changed (a skip of the whole snapshot).

        Such a snapshot is valid (a quiet month) but has nothing new or changed to ask about,
        only the carried-over unchanged instances; saying so in ``skips.jsonl`` (and through it
        in the CLI) keeps a reader from taking its empty New / Changed columns for a failure.
        """
        now = {pid: snap.revision_id for pid, snap in self.pages(info).items()}
        if not now or now != {pid: snap.revision_id for pid, snap in prev_pages.items()}:
            return
        with _Appender(self.folder(info)) as out:
            out.write([], [GenerationSkip(
                NO_CHANGE_PAGE, "", info.label, "snapshot",
                f"no article changed since {previous.label}: all {len(now)} are at the "
                "revision they had then, so this snapshot has no new or changed instance "
                "(the unchanged ones are carried over)")],
                {"page_id": NO_CHANGE_PAGE, "title": "", "status": "no change"})

    async def _one_page(self, item: PageInput, info: SnapshotInfo, builder: PageBuilder,
                        old: Snapshot | None, old_instances: list[Instance],
                        out: _Appender) -> None:
        marker: dict[str, Any] = {"page_id": item.page.id, "title": item.page.title}
        snap = item.snapshot
        if snap is None:
            note = f": its {len(old_instances)} instance(s) are dropped" if old_instances else ""
            out.write([], [GenerationSkip(item.page.id, item.page.title, info.label, "page",
                                          f"the article is {item.reason}{note}")],
                      {**marker, "status": "skipped"})
            return
        snap = Snapshot(snap.page_id, snap.title, snap.revision_id, snap.timestamp,
                        snap.sentences, snap.paragraphs, snap.redirect, info.cut)
        if old is None:
            result = await builder.initial(snap, info.label, info.number,
                                           "initial" if info.number == 0 else "new")
        else:
            result = await builder.update(old, old_instances, snap, info.label, info.number)
        out.write(result.instances, result.skips,
                  {**marker, "status": "ok", "revision_id": snap.revision_id,
                   "snapshot": snapshot_to_dict(snap)})

    def _finish(self, info: SnapshotInfo, *, progress: Progress | None,
                embedder: Any) -> SnapshotInfo:
        from freshwiki.retrieval import HybridIndex

        folder = self.folder(info)
        passages = [p for snap in self.pages(info).values() for p in snapshot_passages(snap)]
        _write_jsonl(folder / "passages.jsonl", [_passage_to_dict(p) for p in passages])

        def report(stage: str, done: int, total: int | None) -> None:
            if progress is not None:
                progress(f"index {stage}", done, total)

        distractors = self.distractors()
        HybridIndex.build([*passages, *distractors], self.index_dir(info), embedder=embedder,
                          overwrite=True, progress=report).close()
        instances = self.instances(info)
        counts: dict[str, Any] = {
            "pages": len(self.pages(info)), "passages": len(passages),
            "distractor_passages": len(distractors),
            "skips": len(self.skips(info)),
            **{f"{kind}_{t}": sum(1 for i in instances if i.kind == kind and i.type == t)
               for kind in ("qa", "dialogue") for t in TYPES},
        }
        done = SnapshotInfo(info.number, info.label, info.cut, info.source, True, counts)
        self.manifest["snapshots"][info.number] = done.to_dict()
        self.save()
        return done


def resolve_cut(value: str | dt.datetime) -> dt.datetime:
    """A cut from a date string or datetime (see :func:`parse_cut`), as a dataset error."""
    try:
        return parse_cut(value)
    except SnapshotError as exc:
        raise DatasetError(exc.message, hint=exc.hint) from None


NO_CHANGE_PAGE = 0
"""Page id of a snapshot-level record (MediaWiki page ids start at 1)."""


class _Appender:
    """Appends one article's lines to the three JSONL files, page marker last, flushed."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __enter__(self) -> _Appender:
        self.files = {name: (self.folder / f"{name}.jsonl").open("a", encoding="utf-8")
                      for name in ("instances", "skips", "pages")}
        return self

    def __exit__(self, *exc: object) -> None:
        for fh in self.files.values():
            fh.close()

    def write(self, instances: Sequence[Instance], skips: Sequence[GenerationSkip],
              marker: Mapping[str, Any]) -> None:
        for name, rows in (("instances", [i.to_dict() for i in instances]),
                           ("skips", [s.to_dict() for s in skips])):
            fh = self.files[name]
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        pages = self.files["pages"]
        pages.write(json.dumps(dict(marker), ensure_ascii=False) + "\n")
        pages.flush()
        os.fsync(pages.fileno())


def _recover(folder: Path) -> set[int]:
    """Page ids already done; drops lines of an article interrupted mid-write."""
    pages_path = folder / "pages.jsonl"
    done_lines = _read_jsonl(pages_path, tolerate_tail=True)
    done = {int(line["page_id"]) for line in done_lines}
    _write_jsonl(pages_path, done_lines)
    for name in ("instances", "skips"):
        path = folder / f"{name}.jsonl"
        rows = [r for r in _read_jsonl(path, tolerate_tail=True) if int(r["page_id"]) in done]
        _write_jsonl(path, rows)
    return done


def _read_jsonl(path: Path, *, tolerate_tail: bool = False) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    rows = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if tolerate_tail and n == len(lines):
                break  # a line cut short by a crash: that article is redone
            raise DatasetError(f"{path}:{n} is not JSON ({exc})",
                               hint="the file is damaged; delete the snapshot folder and "
                               "re-run the build to regenerate it.") from None
    return rows


def _write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    tmp = path.with_suffix(".jsonl.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def _passage_to_dict(p: Passage) -> dict[str, Any]:
    return {"id": p.id, "page_id": p.page_id, "revision_id": p.revision_id, "title": p.title,
            "section_path": list(p.section_path), "text": p.text,
            "timestamp": p.timestamp.isoformat() if p.timestamp else None,
            "sentences": list(p.sentences), "meta": p.meta}


def _passage_from_dict(d: Mapping[str, Any]) -> Passage:
    return Passage(id=str(d["id"]), page_id=int(d["page_id"]), revision_id=int(d["revision_id"]),
                   title=str(d["title"]), section_path=tuple(d["section_path"]),
                   text=str(d["text"]),
                   timestamp=dt.datetime.fromisoformat(d["timestamp"]) if d["timestamp"] else None,
                   sentences=tuple(d["sentences"]), meta=dict(d["meta"]))
