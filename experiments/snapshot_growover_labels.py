#!/usr/bin/env python
"""Snapshot aligner against GrowOVER's released sentence labels (Aug -> Sep 2023).

GrowOVER (Ko et al., ACL 2024) labels every sentence of a new Wikipedia snapshot as
unchanged, changed or new against the previous month, with an automatic pipeline (SimCSE
similarity, a RoBERTa-MNLI check, a GPT-4 filter of "changed"). Its repository
(``dayoon-ko/GrowOVER``, ``dataset/sentence_labeling/``) releases that pipeline's output for
one month pair, August -> September 2023, in three stages (each file is JSON keyed by the
Wikipedia page id):

* ``label_not_same/0809/{08,09}``: per article, ``S`` (old index -> new index, or -> a list of
  ``(start, end)`` chunks, for sentences whose similarity is >= 0.99: *indices only, no text*),
  ``NS`` (runs of sentences between those anchors, old run and new run side by side, *with
  their text*), ``D`` (old sentences outside every run: deleted, with text) and ``N`` (new runs
  with no old run opposite: new, with text);
* ``label_new_and_changed/0809/{08,09}``: the NLI stage: ``C`` on the old side (pairs of
  indices with both texts), ``N`` on the new side (indices and texts); the ``NS`` sentences
  given neither label stay unlabelled (the NLI found them entailed or similar enough);
* ``filter_changed/0809/08``: ``C`` after GPT-4 kept or dropped each pair.

So the release carries text only where the two months differ. The unchanged sentences
(``S``, thousands of them) are index maps without text, and the articles themselves are not in
the repository: the aligner can only be run on the not-same runs, each put between anchors
that stand for the unreleased unchanged text (the same placeholder on both sides, which the
aligner's hashing step matches, as it would the real identical sentences). A run with one
empty side (a ``D`` sentence, an ``N`` run) leaves the aligner nothing to decide; those are
reported apart. An ``NS`` sentence GrowOVER left unlabelled counts as unchanged (as in
``snapshot_diff.py``), shown as its own row.

This is agreement with another automatic method, not accuracy: GrowOVER's appendix reports
a crowd check of a sample of its labels (86.7 % for new, 96.7 % for changed). Our own reading
of the same sentences (``experiments/data/external/growover_sentences/reading.jsonl``, project
maintainers, written before the aligner ran on them) says who is right where the two differ.

The repository has no licence file, so its rows are not committed: ``build`` rebuilds them
from a local copy (a clone's work tree or a bare git directory) and checks them against the
committed manifest; ``run`` measures::

    python experiments/snapshot_growover_labels.py build \
        --source /work/.mirror/dayoon-ko+GrowOVER/repo
    FRESHWIKI_N_THREADS=1 python experiments/snapshot_growover_labels.py run

Results go to ``experiments/results/snapshot_growover_labels.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SET_DIR = ROOT / "experiments" / "data" / "external" / "growover_sentences"
UNITS = SET_DIR / "units.jsonl"
MANIFEST = SET_DIR / "manifest.json"
READING = SET_DIR / "reading.jsonl"
RESULT = ROOT / "experiments" / "results" / "snapshot_growover_labels.json"
OWN_RESULT = ROOT / "experiments" / "results" / "snapshot_diff_real.json"

REPO = "dayoon-ko/GrowOVER"
COMMIT = "a572b9adf82a0d544fc7a980961bed385198b6da"
BASE = "dataset/sentence_labeling"
FILES = {
    "not_same_old": f"{BASE}/label_not_same/0809/08/AA/wiki_00",
    "not_same_new": f"{BASE}/label_not_same/0809/09/AA/wiki_00",
    "nli_old": f"{BASE}/label_new_and_changed/0809/08/AA/wiki_00",
    "nli_new": f"{BASE}/label_new_and_changed/0809/09/AA/wiki_00",
    "filtered_old": f"{BASE}/filter_changed/0809/08/AA/wiki_00",
}
LICENCE = ("no licence file in the repository (README and tree checked at the commit); rows "
           "not committed, rebuilt locally. The sentences are Wikipedia text (CC BY-SA 4.0).")
TAG_LABEL = {"S": "unchanged", "NS": "unchanged", "C": "changed", "N": "new", "D": "deleted"}
"""GrowOVER's tag of a sentence -> the label it is compared as (NS: left unlabelled)."""
SIDES = ("old", "new")
ERROR_KINDS = {
    "digits": "number words written as digits (seventeen -> 17) read by our number rule as a "
    "replaced number",
    "no_deleted_in_run": "an old sentence dropped inside a not-same run: GrowOVER has no "
    "deleted label there and leaves it unlabelled",
    "renamed_entity": "one entity under another name (Ottoman Algeria -> Regency of Algiers), "
    "kept as changed by GrowOVER's NLI and GPT-4 filter; both names are true",
    "spelling": "a spelling variant (ojaq -> odjak) labelled new by GrowOVER",
    "rewritten_passage": "a passage rewritten with dates and actors changed, split at ';' and "
    "merged: ours says deleted + new, GrowOVER leaves it unlabelled, the reading says changed",
    "merged_into_rewrite": "an old sentence folded into a rewritten new one: ours says deleted",
}
"""Why GrowOVER's label and ours differ, per kind; assigned to the disagreements in
:data:`DISAGREEMENT_KINDS` after the aligner ran (the labels in ``reading.jsonl`` came first)."""
DISAGREEMENT_KINDS = {
    "growover:0809:308:old8": "digits", "growover:0809:308:new8": "digits",
    "growover:0809:332:old13": "no_deleted_in_run", "growover:0809:332:old14": "no_deleted_in_run",
    "growover:0809:358:old190": "no_deleted_in_run",
    "growover:0809:358:old14": "renamed_entity", "growover:0809:358:new14": "renamed_entity",
    "growover:0809:358:new179": "spelling",
    **{f"growover:0809:358:{u}": "rewritten_passage"
       for u in ("old175", "old177", "new176", "new177")},
    "growover:0809:358:old176": "merged_into_rewrite",
}


class GrowoverFormatError(ValueError):
    """A GrowOVER label file does not have the shape this script reads; names file and field."""


@dataclass(frozen=True)
class Unit:
    """One released sentence that carries its text, with GrowOVER's tag for it.

    Attributes:
        id: ``growover:0809:PAGE:SIDEINDEX``.
        page_id: The Wikipedia page id (GrowOVER's article key).
        side: ``old`` (August) or ``new`` (September).
        index: The sentence's index in GrowOVER's segmentation of that month's article.
        text: The sentence.
        tag: GrowOVER's final tag: ``C``, ``N``, ``D``, or ``NS`` (not same, left unlabelled).
        run: Index of the not-same run (or lone D / N run) in the article, in page order.
        one_sided: The run has sentences on one side only (nothing for an aligner to decide).
    """

    id: str
    page_id: int
    side: str
    index: int
    text: str
    tag: str
    run: int
    one_sided: bool

    @property
    def label(self) -> str:
        return TAG_LABEL[self.tag]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "page_id": self.page_id, "side": self.side, "index": self.index,
                "text": self.text, "tag": self.tag, "label": self.label, "run": self.run,
                "one_sided": self.one_sided}

    @classmethod
    def from_json(cls, row: Mapping[str, Any], where: str) -> Unit:
        try:
            unit = cls(str(row["id"]), int(row["page_id"]), str(row["side"]), int(row["index"]),
                       str(row["text"]), str(row["tag"]), int(row["run"]),
                       bool(row["one_sided"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise GrowoverFormatError(f"{where}: bad or missing field ({exc!r})") from exc
        if unit.side not in SIDES or unit.tag not in TAG_LABEL:
            raise GrowoverFormatError(f"{where}: side {unit.side!r} / tag {unit.tag!r} unknown")
        return unit


# -- reading the release ---------------------------------------------------------------------


def _field(obj: Any, key: str, where: str) -> Any:
    if not isinstance(obj, Mapping) or key not in obj:
        raise GrowoverFormatError(f"{where}: field {key!r} missing")
    return obj[key]


def _runs(block: Any, where: str) -> list[tuple[list[int], list[str]]]:
    """``{"indices": [[...]], "sentences": [[...]]}`` -> runs of (indices, texts)."""
    indices, texts = _field(block, "indices", where), _field(block, "sentences", where)
    if len(indices) != len(texts):
        raise GrowoverFormatError(f"{where}: {len(indices)} index runs, {len(texts)} text runs")
    runs = []
    for k, (idx, txt) in enumerate(zip(indices, texts, strict=True)):
        if isinstance(idx, int):  # a flat list (D): one sentence per entry
            idx, txt = [idx], [txt]
        if len(idx) != len(txt):
            raise GrowoverFormatError(f"{where}[{k}]: {len(idx)} indices, {len(txt)} texts")
        runs.append(([int(i) for i in idx], [str(t) for t in txt]))
    return runs


def units_from_release(files: Mapping[str, Mapping[str, Any]]) -> tuple[list[Unit], dict[str, Any]]:
    """The sentences with text, tagged, and counts of what the release holds without text.

    ``files`` maps the keys of :data:`FILES` to the parsed JSON of each file.

    Raises:
        GrowoverFormatError: A file lacks an article or field the others have.
    """
    ns_old, ns_new = files["not_same_old"], files["not_same_new"]
    nli_new, final_old = files["nli_new"], files["filtered_old"]
    units: list[Unit] = []
    counts: Counter[str] = Counter()
    for page in ns_new:
        for name in FILES:
            if page not in files[name]:
                raise GrowoverFormatError(f"{FILES[name]}: article {page} missing")
        where_o, where_n = f"{FILES['not_same_old']}:{page}", f"{FILES['not_same_new']}:{page}"
        counts["articles"] += 1
        counts["S_old_without_text"] += len(_field(_field(ns_old[page], "S", where_o),
                                                   "indices", where_o))
        counts["S_new_without_text"] += len(_field(_field(ns_new[page], "S", where_n),
                                                   "indices", where_n))
        new_tags: dict[int, str] = {}
        for i in _field(_field(nli_new[page], "N", f"{FILES['nli_new']}:{page}"), "indices",
                        f"{FILES['nli_new']}:{page}"):
            new_tags[int(i)] = "N"
        old_tags: dict[int, str] = {}
        where_c = f"{FILES['filtered_old']}:{page}.C"
        for pair in _field(_field(final_old[page], "C", where_c), "indices", where_c):
            # Read as (old index, new index), as the GPT-4 filter reads them (the NLI stage
            # builds the pair as (new, old); the one released pair is (14, 14) either way).
            old_tags[int(pair[0])] = "C"
            new_tags[int(pair[1])] = "C"
        runs: list[tuple[int, list[tuple[str, int, str]]]] = []
        pairs = zip(_runs(_field(ns_old[page], "NS", where_o), f"{where_o}.NS"),
                    _runs(_field(ns_new[page], "NS", where_n), f"{where_n}.NS"), strict=True)
        for (oi, ot), (ni, nt) in pairs:
            members = [("old", i, t) for i, t in zip(oi, ot, strict=True)]
            members += [("new", i, t) for i, t in zip(ni, nt, strict=True)]
            runs.append((min([*oi, *ni]), members))
        for oi, ot in _runs(_field(ns_old[page], "D", where_o), f"{where_o}.D"):
            runs.append((min(oi), [("old", i, t) for i, t in zip(oi, ot, strict=True)]))
        for ni, nt in _runs(_field(ns_new[page], "N", where_n), f"{where_n}.N"):
            runs.append((min(ni), [("new", i, t) for i, t in zip(ni, nt, strict=True)]))
        runs.sort(key=lambda r: r[0])
        for k, (_, members) in enumerate(runs):
            one_sided = len({side for side, _, _ in members}) == 1
            for side, i, text in members:
                if side == "old":
                    tag = old_tags.get(i, "D" if one_sided else "NS")
                else:
                    tag = new_tags.get(i, "N" if one_sided else "NS")
                units.append(Unit(f"growover:0809:{page}:{side}{i}", int(page), side, i, text,
                                  tag, k, one_sided))
        counts["C_before_gpt4_filter"] += len(files["nli_old"][page]["C"]["indices"])
    return units, dict(counts)


def _git_show(source: Path, commit: str, path: str) -> bytes:
    work_tree_file = source / path
    if work_tree_file.is_file():
        head = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        if head != commit:
            raise SystemExit(f"{source} is at {head}, the manifest pins {commit}")
        return work_tree_file.read_bytes()
    proc = subprocess.run(["git", "-C", str(source), "show", f"{commit}:{path}"],
                          capture_output=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"cannot read {commit}:{path} from {source}: "
                         f"{proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def units_bytes(units: Iterable[Unit]) -> bytes:
    return "".join(json.dumps(u.to_json(), ensure_ascii=False, sort_keys=True) + "\n"
                   for u in units).encode()


def build(source: Path) -> dict[str, Any]:
    """Rebuild ``units.jsonl`` from a local copy of the repository; returns the manifest."""
    raw = {name: _git_show(source, COMMIT, path) for name, path in FILES.items()}
    parsed: dict[str, Mapping[str, Any]] = {}
    for name, data in raw.items():
        try:
            parsed[name] = json.loads(data)
        except json.JSONDecodeError as exc:
            raise GrowoverFormatError(f"{FILES[name]}: not JSON ({exc})") from exc
    units, counts = units_from_release(parsed)
    body = units_bytes(units)
    tags = Counter(f"{u.side}:{u.tag}{' (one-sided run)' if u.one_sided else ''}"
                   for u in units)
    manifest = {
        "name": "growover_sentences",
        "source": {"repo": REPO, "commit": COMMIT,
                   "paths": FILES, "sha256": {n: sha256(d) for n, d in raw.items()},
                   "licence": LICENCE},
        "month_pair": "2023-08 -> 2023-09 (GrowOVER's 0809; the released shard AA/wiki_00)",
        "sampling": "none: every sentence of the release that carries its text (all of them)",
        "counts": counts,
        "units": len(units),
        "units_by_tag": dict(sorted(tags.items())),
        "units_sha256": sha256(body),
        "rebuild": "python experiments/snapshot_growover_labels.py build --source DIR",
    }
    SET_DIR.mkdir(parents=True, exist_ok=True)
    UNITS.write_bytes(body)
    return manifest


def read_units(path: Path = UNITS, manifest: Path | None = MANIFEST) -> list[Unit]:
    """The rebuilt units, checked against the manifest's hash when one is given.

    Raises:
        GrowoverFormatError: A malformed row (file, line and field named), or a file that
            differs from the one the manifest pins.
    """
    if not path.is_file():
        raise SystemExit(f"{path} is missing: rebuild it with "
                         "`python experiments/snapshot_growover_labels.py build --source DIR`")
    body = path.read_bytes()
    if manifest is not None:
        want = json.loads(manifest.read_text())["units_sha256"]
        if sha256(body) != want:
            raise GrowoverFormatError(f"{path}: sha256 {sha256(body)} is not the manifest's {want}")
    units = []
    for n, line in enumerate(body.decode().splitlines(), 1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GrowoverFormatError(f"{path}:{n}: not JSON ({exc})") from exc
        units.append(Unit.from_json(row, f"{path}:{n}"))
    return units


def read_reading(path: Path = READING) -> dict[str, dict[str, Any]]:
    """Our reading of the units, by id."""
    rows = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        row = json.loads(line)
        for key in ("id", "label", "reason", "labeller"):
            if key not in row:
                raise GrowoverFormatError(f"{path}:{n}: field {key!r} missing")
        rows[row["id"]] = row
    return rows


# -- running the aligner on the released runs -------------------------------------------------


def article_snapshots(units: Sequence[Unit]) -> tuple[Any, Any, dict[str, tuple[str, int]]]:
    """Old and new snapshots of one article's released runs, separated by shared anchors.

    The anchors stand for the unreleased unchanged text between two runs: one placeholder
    sentence, the same on both sides, which the aligner's hashing step matches. Returns the
    snapshots and, for each unit id, its side and position in its snapshot.
    """
    from freshwiki.changes.snapshots import Snapshot, SnapshotSentence

    page = units[0].page_id
    sides: dict[str, list[str]] = {"old": [], "new": []}
    where: dict[str, tuple[str, int]] = {}
    for run in sorted({u.run for u in units}):
        anchor = f"[unchanged text before released run {run} of page {page}, not released]"
        for side in SIDES:
            sides[side].append(anchor)
        for u in sorted((u for u in units if u.run == run), key=lambda u: (u.side, u.index)):
            where[u.id] = (u.side, len(sides[u.side]))
            sides[u.side].append(u.text)
    closing = f"[unchanged text after the released runs of page {page}, not released]"
    stamp = dt.datetime(2023, 8, 1, tzinfo=dt.UTC)
    snaps = []
    for side in SIDES:
        sides[side].append(closing)
        sentences = tuple(SnapshotSentence(t, k, (), 0, 0, len(t))
                          for k, t in enumerate(sides[side]))
        snaps.append(Snapshot(page, f"page {page}", 8 if side == "old" else 9,
                              stamp if side == "old" else stamp.replace(month=9), sentences,
                              tuple(sides[side])))
    return snaps[0], snaps[1], where


def align_units(units: Sequence[Unit], encoder: Any) -> dict[str, dict[str, Any]]:
    """Run freshwiki's aligner (no LLM) on every article's runs; our label per unit id."""
    from freshwiki.changes.snapshots import Aligner

    by_page: dict[int, list[Unit]] = {}
    for u in units:
        by_page.setdefault(u.page_id, []).append(u)
    pages = sorted(by_page)
    built = [article_snapshots(by_page[p]) for p in pages]
    alignments = Aligner(encoder).align_many([(o, n) for o, n, _ in built])
    ours: dict[str, dict[str, Any]] = {}
    for (_, _, where), al in zip(built, alignments, strict=True):
        for uid, (side, pos) in where.items():
            lab = (al.old_labels if side == "old" else al.new_labels)[pos]
            ours[uid] = {"label": lab.label, "step": lab.step, "ambiguous": lab.ambiguous,
                         "similarity": lab.similarity, "reason": lab.reason}
    return ours


# -- figures ------------------------------------------------------------------------------------


def _rate(hits: int, n: int) -> dict[str, Any]:
    from freshwiki.stats import wilson_ci

    ci = wilson_ci(hits, n)
    return {"hits": hits, "n": n, "value": hits / n if n else None,
            "ci95": [round(ci.low, 4), round(ci.high, 4)] if ci else None}


def agreement(units: Sequence[Unit], ours: Mapping[str, Mapping[str, Any]],
              reading: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Per GrowOVER tag: how often our label matches theirs; and who the reading sides with."""
    decided = [u for u in units if not u.one_sided]
    per_tag: dict[str, Any] = {}
    for side in SIDES:
        for tag in ("NS", "C", "N", "D"):
            group = [u for u in decided if u.side == side and u.tag == tag]
            if group:
                hits = sum(ours[u.id]["label"] == u.label for u in group)
                per_tag[f"{side}:{tag}"] = {
                    "compared_as": TAG_LABEL[tag], **_rate(hits, len(group)),
                    "ours": dict(Counter(ours[u.id]["label"] for u in group))}
    per_label: dict[str, Any] = {}
    for label in ("unchanged", "changed", "new", "deleted"):
        group = [u for u in decided if u.label == label]
        if group:
            per_label[label] = _rate(sum(ours[u.id]["label"] == label for u in group),
                                     len(group))
    one_sided = [u for u in units if u.one_sided]
    rows = []
    verdicts: Counter[str] = Counter()
    for u in units:
        read = reading.get(u.id, {}).get("label", "unread")
        mine = ours[u.id]["label"]
        if mine == u.label:
            who = "agree"
        elif read in ("unknown", "unread"):
            who = "unclear"
        elif read == mine:
            who = "ours"
        elif read == u.label:
            who = "GrowOVER's"
        else:
            who = "neither"
        if mine != u.label:
            verdicts[who] += 1
        rows.append({"id": u.id, "tag": u.tag, "growover": u.label, "ours": mine,
                     "ours_step": ours[u.id]["step"], "ours_ambiguous": ours[u.id]["ambiguous"],
                     "reading": read, "extends_old": reading.get(u.id, {}).get("extends_old"),
                     "who_is_right": who, "one_sided": u.one_sided,
                     "kind": DISAGREEMENT_KINDS.get(u.id) if mine != u.label else None,
                     "reading_reason": reading.get(u.id, {}).get("reason", "")})
    read_known = [u for u in decided if reading.get(u.id, {}).get("label") not in
                  (None, "unknown")]
    return {
        "compared": len(decided),
        "overall": _rate(sum(ours[u.id]["label"] == u.label for u in decided), len(decided)),
        "per_growover_tag": per_tag,
        "per_label": per_label,
        "one_sided": {"n": len(one_sided),
                      "agree": sum(ours[u.id]["label"] == u.label for u in one_sided),
                      "note": "a D sentence or an N run with nothing opposite: the aligner has "
                      "nothing to decide, so agreement there says nothing"},
        "against_reading": {
            "n": len(read_known),
            "ours": _rate(sum(ours[u.id]["label"] == reading[u.id]["label"]
                              for u in read_known), len(read_known)),
            "growover": _rate(sum(u.label == reading[u.id]["label"] for u in read_known),
                              len(read_known)),
            "note": "our own reading (project maintainers), in sample for neither method; "
            "tiny n"},
        "disagreements": {
            "n": sum(verdicts.values()), "who_is_right": dict(verdicts),
            "kinds": {kind: {"n": sum(1 for r in rows if r["kind"] == kind),
                             "who_is_right": dict(Counter(r["who_is_right"] for r in rows
                                                          if r["kind"] == kind)),
                             "what": what}
                      for kind, what in ERROR_KINDS.items()},
            "unkinded": [r["id"] for r in rows if r["who_is_right"] != "agree"
                         and r["kind"] is None]},
        "rows": rows,
    }


def own_pairs_figures() -> dict[str, Any]:
    """The 202 own pairs' figures, read from the committed result (beside the GrowOVER ones)."""
    own = json.loads(OWN_RESULT.read_text())
    al = own["agreement"]["all"]["aligner"]
    return {"file": OWN_RESULT.name, "commit": own["commit"], "sentences": own["sentences"],
            "per_label": {k: {"correct": v["correct"], "true": v["true"],
                              "recall": v["recall"], "recall_ci95": v["recall_ci95"]}
                          for k, v in al["per_label"].items()}}


def run(args: argparse.Namespace) -> None:
    from _provenance import data_provenance, write_result
    from freshwiki.retrieval import Embedder

    units = read_units()
    reading = read_reading()
    missing = [u.id for u in units if u.id not in reading]
    if missing:
        raise SystemExit(f"{len(missing)} units have no reading yet (e.g. {missing[:3]}): "
                         "read them before measuring")
    manifest = json.loads(MANIFEST.read_text())
    encoder = Embedder(None, threads=args.threads)
    ours = align_units(units, encoder)
    figures = agreement(units, ours, reading)
    payload = {
        "what": "agreement of freshwiki's aligner (no LLM) with GrowOVER's released automatic "
        "sentence labels (SimCSE + NLI + GPT-4), Aug -> Sep 2023; agreement with another "
        "automatic method, not accuracy against people (GrowOVER's appendix: a crowd check of "
        "a sample at 86.7 % for new, 96.7 % for changed)",
        "source": {k: manifest["source"][k] for k in ("repo", "commit", "paths", "licence")},
        "release": {"counts": manifest["counts"], "units_with_text": manifest["units"],
                    "units_by_tag": manifest["units_by_tag"]},
        "what_cannot_be_done": [
            "unchanged (S) sentences: the release gives their index maps only, no text "
            f"({manifest['counts']['S_new_without_text']} new-side sentences in "
            f"{manifest['counts']['articles']} articles), and the articles are not in the "
            "repository: their agreement cannot be measured",
            "a sample of >= 300 pairs or >= 50 disagreements: the release holds "
            f"{manifest['units']} sentences with text in all",
            "a learned unchanged-vs-changed head trained on GrowOVER's pairs: the release holds "
            f"{manifest['counts']['C_before_gpt4_filter']} changed pair and no unchanged pair "
            "with text",
        ],
        "method": "each article's released runs, old and new side, separated by one shared "
        "placeholder sentence per gap standing for the unreleased unchanged text; freshwiki's "
        "Aligner with the all-MiniLM-L6-v2 encoder and no LLM (as the own-pairs plain figure); "
        "GrowOVER's unlabelled NS sentences compared as unchanged",
        "agreement": figures,
        "own_pairs": own_pairs_figures(),
        "goals": {"unchanged_recall": 0.90, "changed_recall": 0.60,
                  "on": "the 202 own pairs (issue 34)"},
        "learned_head": {
            "trained": False,
            "reason": "GrowOVER's release holds one changed pair with text and no unchanged "
            "pair with text (its unchanged sentences are index maps), so there is nothing to "
            "train an unchanged-vs-changed probe on; the aligner's default is unchanged",
        },
    }
    data = data_provenance(
        {"real": 1.0}, sample="in sample for one fix: the number reader (words and digits "
        "read as one number) was fixed on 28 November after two of these sentences showed the "
        "bug; nothing else in the aligner was tuned on them, and the reading was written "
        "before the aligner first ran on them",
        sources=f"{REPO} @ {COMMIT[:8]}, {BASE}/ (no licence file; Wikipedia text CC BY-SA)",
        shares_of="released sentences with text")
    write_result(args.out, payload, data=data)
    print(json.dumps({k: v for k, v in figures.items() if k != "rows"}, indent=1))
    for row in figures["rows"]:
        if row["growover"] != row["ours"]:
            print(f"{row['id']:32} G={row['growover']:9} ours={row['ours']:9} "
                  f"read={row['reading']:9} -> {row['who_is_right']}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="rebuild units.jsonl from a local copy of the repository")
    b.add_argument("--source", type=Path, required=True,
                   help="a clone's work tree or a bare git directory of dayoon-ko/GrowOVER")
    b.add_argument("--write-manifest", action="store_true",
                   help="write the manifest (else the rebuilt file is checked against it)")
    r = sub.add_parser("run", help="run the aligner on the units and write the result")
    r.add_argument("--threads", type=int, default=1)
    r.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args(argv)
    if args.cmd == "build":
        manifest = build(args.source)
        if args.write_manifest or not MANIFEST.is_file():
            MANIFEST.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
            print(f"wrote {UNITS} and {MANIFEST}")
        else:
            want = json.loads(MANIFEST.read_text())["units_sha256"]
            if manifest["units_sha256"] != want:
                raise SystemExit(f"rebuilt {UNITS} differs from the manifest ({want})")
            print(f"rebuilt {UNITS}: matches the manifest")
        print(json.dumps(manifest["counts"]), json.dumps(manifest["units_by_tag"]))
    else:
        run(args)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "experiments"))
    main()
