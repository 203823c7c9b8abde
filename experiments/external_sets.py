"""Rebuild the external, human-labelled claim sets from local copies of their repositories.

The project's own claim labels were written by the project maintainers; these sets were
labelled by other people, for other papers, and nothing in freshwiki was tuned on them. Their
repositories carry no licence file, so the rows are not committed: what is committed, under
``experiments/data/external/NAME/``, is how to rebuild them (this script, the source
repository and commit, the sha256 of the source file and of the rebuilt file) and a README.
Nothing is fetched at run time; you fetch the source repository yourself and point
``--source`` at it (a clone's work tree, or a bare git directory)::

    git clone https://github.com/tdiggelm/climate-fever-dataset /tmp/climate-fever
    python experiments/external_sets.py build climate_fever --source /tmp/climate-fever
    python experiments/external_sets.py build --all --source-root /work/.mirror
    python experiments/external_sets.py check            # rebuilt files match the manifests

Sets (one claim and one piece of evidence per row, the gold evidence the annotators judged):

* ``climate_fever``: CLIMATE-FEVER (Diggelmann et al., 2020): real climate claims from the web,
  each with five English Wikipedia sentences, each sentence labelled SUPPORTS / REFUTES /
  NOT_ENOUGH_INFO by annotators. Rows: claim-sentence pairs whose votes were unanimous
  (entropy 0), at most one pair per claim, 100 per label.
* ``healthver``: HealthVer (Sarrouti et al., EMNLP 2021 Findings) test split: COVID-19 health
  claims against evidence from scientific abstracts, labelled Supports / Refutes / Neutral by
  annotators; each row also has the topic question. 100 per label, a claim at most once per
  label (the split holds only 230 distinct claims, so 300 rows need some claims twice, each
  time with other evidence and another label).
* ``healthver_dev``: HealthVer's dev split (the repository's train split is missing from its
  snapshot), 200 per label, claims may repeat with other evidence: training data for a learned
  head only, never evaluated on.

Sampling is deterministic: candidates are ordered by the sha256 of ``SEED:id`` and taken in
that order, the scarcest label first, so the sample does not depend on file order.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXTERNAL = ROOT / "experiments" / "data" / "external"
SEED = "freshwiki-external-2026-11-27"
LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")


@dataclass(frozen=True)
class Source:
    """Where a set's rows come from, pinned to one commit and one file content."""

    repo: str
    commit: str
    path: str
    licence: str
    mirror: str  # the folder name of a fetched snapshot under --source-root


CLIMATE_FEVER = Source(
    repo="tdiggelm/climate-fever-dataset",
    commit="03de61617b10a5c1935f8e08bb0e8ac1ee775356",
    path="dataset/climate-fever.jsonl",
    licence="no licence file in the repository (the dataset card lists none); rows not "
            "committed, rebuilt locally",
    mirror="tdiggelm+climate-fever-dataset",
)
HEALTHVER = Source(
    repo="sarrouti/HealthVer",
    commit="b20ac99ceed62f5264a319fa25a854df1668d85b",
    path="data/healthver_test.csv",
    licence="no licence file in the repository; rows not committed, rebuilt locally",
    mirror="sarrouti+HealthVer",
)
HEALTHVER_DEV = Source(**{**HEALTHVER.__dict__, "path": "data/healthver_dev.csv"})


class BuildError(Exception):
    """The source cannot be read, or is not the pinned version."""


def _read_source(source: Source, folder: Path) -> bytes:
    """The pinned file's bytes from a work tree or a (bare) git directory."""
    on_disk = folder / source.path
    if on_disk.is_file():
        return on_disk.read_bytes()
    git_dir = folder / "repo" if (folder / "repo").is_dir() else folder
    proc = subprocess.run(["git", "--git-dir", str(git_dir), "show",
                           f"{source.commit}:{source.path}"], capture_output=True)
    if proc.returncode != 0:
        proc = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"HEAD:{source.path}"],
                              capture_output=True)
    if proc.returncode != 0:
        raise BuildError(f"{folder}: neither {source.path} on disk nor in git "
                         f"({proc.stderr.decode(errors='replace').strip()}); clone "
                         f"https://github.com/{source.repo} and pass its folder as --source")
    return proc.stdout


def _order(ids: Iterable[str]) -> list[str]:
    return sorted(ids, key=lambda i: hashlib.sha256(f"{SEED}:{i}".encode()).hexdigest())


def _balanced(candidates: list[dict[str, Any]], per_label: int, once: str
              ) -> list[dict[str, Any]]:
    """``per_label`` rows of each label in seed order, the scarcest label first.

    ``once`` says how often a claim may appear: ``"set"`` once in the whole set, ``"label"``
    once per label (with different evidence), ``"any"`` without limit.
    """
    by_label: dict[str, list[dict[str, Any]]] = {label: [] for label in LABELS}
    for row in candidates:
        by_label[row["label"]].append(row)
    chosen: list[dict[str, Any]] = []
    used_claims: set[str] = set()
    for label in sorted(LABELS, key=lambda lab: len(by_label[lab])):
        rows = {r["id"]: r for r in by_label[label]}
        taken = 0
        for rid in _order(rows):
            row = rows[rid]
            key = " ".join(row["claim"].lower().split())
            if once == "label":
                key = f"{label}:{key}"
            if once != "any" and key in used_claims:
                continue
            used_claims.add(key)
            chosen.append(row)
            taken += 1
            if taken == per_label:
                break
        if taken < per_label:
            raise BuildError(f"only {taken} rows of label {label} (wanted {per_label})")
    return sorted(chosen, key=lambda r: (LABELS.index(r["label"]), r["id"]))


def climate_fever_rows(data: bytes, source: Source) -> list[dict[str, Any]]:
    """Unanimous claim-sentence pairs of CLIMATE-FEVER as rows of the external format."""
    mapping = {"SUPPORTS": "SUPPORTS", "REFUTES": "REFUTES", "NOT_ENOUGH_INFO": "NOT ENOUGH INFO"}
    rows = []
    for line_no, line in enumerate(data.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        record = json.loads(line)
        for evidence in record["evidences"]:
            if evidence["entropy"] != 0:
                continue
            rows.append({
                "id": f"climate_fever:{record['claim_id']}:{evidence['evidence_id']}",
                "claim": record["claim"].strip(), "evidence": evidence["evidence"].strip(),
                "title": evidence["article"], "question": None,
                "label": mapping[evidence["evidence_label"]], "split": "test",
                "set": "climate_fever",
                "source": {"repo": source.repo, "commit": source.commit, "path": source.path,
                           "row": line_no},
            })
    return rows


def healthver_rows(data: bytes, source: Source, name: str, split: str) -> list[dict[str, Any]]:
    """HealthVer rows (one CSV line each) in the external format."""
    mapping = {"Supports": "SUPPORTS", "Refutes": "REFUTES", "Neutral": "NOT ENOUGH INFO"}
    rows = []
    reader = csv.DictReader(io.StringIO(data.decode("utf-8")))
    for row_no, record in enumerate(reader, start=2):
        if not record["claim"].strip() or not record["evidence"].strip():
            continue
        rows.append({
            "id": f"{name}:{record['id']}", "claim": record["claim"].strip(),
            "evidence": record["evidence"].strip(), "title": "",
            "question": record["question"].strip() or None,
            "label": mapping[record["label"].strip()], "split": split, "set": name,
            "source": {"repo": source.repo, "commit": source.commit, "path": source.path,
                       "row": row_no},
        })
    return rows


@dataclass(frozen=True)
class SetSpec:
    """One external set: its source, how rows are read, how many per label."""

    source: Source
    rows: Callable[[bytes, Source], list[dict[str, Any]]]
    per_label: int
    once: str
    sampling: str


SETS: dict[str, SetSpec] = {
    "climate_fever": SetSpec(
        CLIMATE_FEVER, climate_fever_rows, 100, "set",
        "claim-sentence pairs with unanimous annotator votes (entropy 0); at most one pair per "
        "claim; 100 per label, taken in sha256(seed:id) order, REFUTES (the scarcest) first"),
    "healthver": SetSpec(
        HEALTHVER, lambda d, s: healthver_rows(d, s, "healthver", "test"), 100, "label",
        "the test split; a claim at most once per label (the split has 230 distinct claims, "
        "109 of them with refuting evidence); 100 per label in sha256(seed:id) order, "
        "the scarcest label first"),
    "healthver_dev": SetSpec(
        HEALTHVER_DEV, lambda d, s: healthver_rows(d, s, "healthver_dev", "train"), 200, "any",
        "the dev split (the repository snapshot lacks the train file); claims may repeat with "
        "other evidence (230 distinct claims); 200 per label in sha256(seed:id) order, the "
        "scarcest label first; for training a learned head, never for evaluation"),
}


def _manifest_path(name: str) -> Path:
    return EXTERNAL / name / "manifest.json"


def build(name: str, folder: Path, *, write_manifest: bool = False) -> dict[str, Any]:
    """Rebuild ``experiments/data/external/NAME/claims.jsonl``; check it against the manifest."""
    spec = SETS[name]
    data = _read_source(spec.source, folder)
    source_hash = hashlib.sha256(data).hexdigest()
    manifest_file = _manifest_path(name)
    manifest = json.loads(manifest_file.read_text()) if manifest_file.is_file() else None
    if manifest and not write_manifest and manifest["source"]["sha256"] != source_hash:
        raise BuildError(f"{folder}/{spec.source.path}: sha256 {source_hash} is not the pinned "
                         f"{manifest['source']['sha256']} (another version of the file?); use "
                         f"commit {spec.source.commit} of {spec.source.repo}")
    rows = _balanced(spec.rows(data, spec.source), spec.per_label, spec.once)
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    out_hash = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if manifest and not write_manifest and manifest["claims_sha256"] != out_hash:
        raise BuildError(f"{name}: rebuilt rows hash to {out_hash}, the manifest says "
                         f"{manifest['claims_sha256']}: the sampling changed")
    out = EXTERNAL / name / "claims.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    counts = {label: sum(r["label"] == label for r in rows) for label in LABELS}
    record = {
        "name": name, "rows": len(rows), "by_label": counts,
        "source": {"repo": spec.source.repo, "commit": spec.source.commit,
                   "path": spec.source.path, "sha256": source_hash,
                   "licence": spec.source.licence},
        "sampling": spec.sampling, "seed": SEED, "claims_sha256": out_hash,
        "rebuild": f"python experiments/external_sets.py build {name} --source DIR",
    }
    if write_manifest:
        manifest_file.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return record


def main() -> int:
    """``build NAME --source DIR``, ``build --all --source-root DIR``, ``check``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="rebuild one set (or --all) from a local copy")
    b.add_argument("name", nargs="?", choices=sorted(SETS))
    b.add_argument("--source", type=Path, help="the source repository's folder")
    b.add_argument("--all", action="store_true")
    b.add_argument("--source-root", type=Path, default=Path("/work/.mirror"),
                   help="folder holding OWNER+NAME snapshot folders (for --all)")
    b.add_argument("--write-manifest", action="store_true",
                   help="(maintainers) pin the source and output hashes in manifest.json")
    sub.add_parser("check", help="verify the rebuilt files against their manifests")
    args = parser.parse_args()
    try:
        if args.command == "check":
            bad = 0
            for name in SETS:
                manifest = json.loads(_manifest_path(name).read_text())
                out = EXTERNAL / name / "claims.jsonl"
                got = hashlib.sha256(out.read_bytes()).hexdigest() if out.is_file() else None
                ok = got == manifest["claims_sha256"]
                bad += not ok
                print(f"{name}: {'ok' if ok else 'missing or different'} ({out})")
            return 1 if bad else 0
        names = sorted(SETS) if args.all else [args.name]
        if not names or names == [None]:
            parser.error("build: name a set or pass --all")
        for name in names:
            folder = args.source if args.source and not args.all \
                else args.source_root / SETS[name].source.mirror
            record = build(name, folder, write_manifest=args.write_manifest)
            print(f"{name}: {record['rows']} rows {record['by_label']} -> "
                  f"experiments/data/external/{name}/claims.jsonl")
    except (BuildError, OSError, KeyError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
