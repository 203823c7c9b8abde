"""Rebuild real MediaWiki page histories from local mirrors and label their edits (HelloFresh).

HelloFresh labels a Wikipedia edit accepted or rejected from what later revisions did to it,
so it needs full page histories (every revision's text), and the histories in ``../shared``
are tiny. This script rebuilds the larger real histories found in public repositories'
test data, pinned by ``experiments/data/real_histories/sources.json`` (repository, commit,
path, licence and sha256 of every file checked, the rejected ones too, with why), and runs
freshwiki's edit labeller on them. The rebuilt files are not committed: some come from
repositories without a usable licence, one is a gigabyte unpacked, and the project keeps
third-party data out of its repository. Nothing is fetched at run time; mirror the
repositories first (the search tool's ``fetch``) and point ``--source-root`` at the folder
holding their ``OWNER+NAME`` snapshots::

    python experiments/real_histories.py build --source-root /work/.mirror
    python experiments/real_histories.py label          # accepted / rejected / discarded
    python experiments/real_histories.py run            # build, then label
    python experiments/real_histories.py check          # rebuilt files match the manifest

Every source file is checked against its pinned sha256 before it is unpacked, and every
rebuilt file against its own pinned sha256 before it takes its final name, so a different
version of a file fails loudly instead of silently changing the counts.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import lzma
import subprocess
import sys
import tarfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, cast

from freshwiki.errors import FreshwikiError

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "experiments" / "data" / "real_histories"
MANIFEST = DATA / "sources.json"
FILES = DATA / "files"
CHUNK = 1 << 20

Unpack = Literal["none", "lzma", "tar"]
UNPACKS: tuple[Unpack, ...] = ("none", "lzma", "tar")


class HistoryError(Exception):
    """A source cannot be read, is not the pinned version, or the manifest is malformed."""


@dataclass(frozen=True)
class Rebuild:
    """How a usable source becomes a file the labeller reads, and what that file must be."""

    output: str  # file name under the files folder
    unpack: Unpack  # "none": as stored; "lzma": LZMA (alone or xz) stream; "tar": a member
    member: str | None  # the tar member to take (unpack == "tar")
    sha256: str
    bytes: int


@dataclass(frozen=True)
class Source:
    """One file checked in a public repository, pinned to a commit and a content hash."""

    name: str
    repo: str
    commit: str
    path: str
    mirror: str  # folder name of the repository's snapshot under --source-root
    licence: str
    sha256: str | None  # None only for files read through the search index, never mirrored
    usable: bool
    rebuild: Rebuild | None


def _text(record: dict[str, Any], key: str, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value:
        raise HistoryError(f"{where}: field {key!r} must be a non-empty string")
    return value


def parse_manifest(data: dict[str, Any], where: str = "manifest") -> list[Source]:
    """The manifest's sources, checked field by field (a usable source must say how to rebuild).

    Raises:
        HistoryError: A field is missing or of the wrong type, naming the source and field.
    """
    raw = data.get("sources")
    if not isinstance(raw, list):
        raise HistoryError(f"{where}: 'sources' must be a list")
    sources: list[Source] = []
    for index, record in enumerate(raw):
        if not isinstance(record, dict):
            raise HistoryError(f"{where}: sources[{index}] is not an object")
        label = f"{where}: source {record.get('name', index)!r}"
        usable = record.get("usable")
        if not isinstance(usable, bool):
            raise HistoryError(f"{label}: field 'usable' must be true or false")
        sha = record.get("sha256")
        if sha is not None and not isinstance(sha, str):
            raise HistoryError(f"{label}: field 'sha256' must be a string or null")
        rebuild: Rebuild | None = None
        spec = record.get("rebuild")
        if usable:
            if not isinstance(spec, dict) or sha is None:
                raise HistoryError(f"{label}: a usable source needs 'sha256' and 'rebuild'")
            unpack = spec.get("unpack")
            if unpack not in UNPACKS:
                raise HistoryError(f"{label}: rebuild.unpack must be one of {UNPACKS}")
            member = spec.get("member")
            if unpack == "tar" and not isinstance(member, str):
                raise HistoryError(f"{label}: rebuild.member names the tar member to take")
            size = spec.get("bytes")
            if not isinstance(size, int):
                raise HistoryError(f"{label}: rebuild.bytes must be an integer")
            rebuild = Rebuild(output=_text(spec, "output", label),
                              unpack=cast(Unpack, unpack),
                              member=member if isinstance(member, str) else None,
                              sha256=_text(spec, "sha256", label), bytes=size)
        sources.append(Source(
            name=_text(record, "name", label), repo=_text(record, "repo", label),
            commit=_text(record, "commit", label), path=_text(record, "path", label),
            mirror=_text(record, "mirror", label), licence=_text(record, "licence", label),
            sha256=sha, usable=usable, rebuild=rebuild,
        ))
    return sources


def load_manifest(path: Path = MANIFEST) -> list[Source]:
    """Read and check ``sources.json``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise HistoryError(f"{path}: cannot read the manifest ({exc})") from exc
    if not isinstance(data, dict):
        raise HistoryError(f"{path}: the manifest must be a JSON object")
    return parse_manifest(data, str(path))


def _git_dir(folder: Path) -> Path:
    """The git directory of a snapshot folder (``repo/.git``, ``repo``, or the folder)."""
    for candidate in (folder / "repo" / ".git", folder / "repo", folder / ".git"):
        if candidate.is_dir():
            return candidate
    return folder


def read_source(source: Source, source_root: Path) -> bytes:
    """The pinned file's bytes, from the mirror's git history at the pinned commit.

    The commit is required (not HEAD): two of the files were later deleted upstream, and a
    moving branch would change what is read.
    """
    folder = source_root / source.mirror
    if not folder.exists():
        raise HistoryError(f"{folder}: no snapshot of {source.repo}; mirror it first "
                           f"(https://github.com/{source.repo})")
    proc = subprocess.run(["git", "--git-dir", str(_git_dir(folder)), "show",
                           f"{source.commit}:{source.path}"], capture_output=True)
    if proc.returncode != 0:
        raise HistoryError(f"{folder}: cannot read {source.path} at {source.commit} "
                           f"({proc.stderr.decode(errors='replace').strip()})")
    return proc.stdout


def verify(data: bytes, expected: str | None, what: str) -> str:
    """The data's sha256, or a clear error when it is not the pinned one."""
    got = hashlib.sha256(data).hexdigest()
    if expected is not None and got != expected:
        raise HistoryError(f"{what}: sha256 {got} is not the pinned {expected} "
                           "(another version of the file?)")
    return got


def _chunks(source: Source, data: bytes) -> Iterator[bytes]:
    """The rebuilt file's bytes in chunks: memory stays small for the 1 GB history."""
    assert source.rebuild is not None
    if source.rebuild.unpack == "none":
        yield data
        return
    if source.rebuild.unpack == "lzma":
        with lzma.open(io.BytesIO(data)) as stream:  # FORMAT_AUTO: .lzma (alone) and .xz
            yield from _read_all(stream)
        return
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
        try:
            member = archive.extractfile(source.rebuild.member or "")
        except KeyError:
            member = None
        if member is None:
            raise HistoryError(f"{source.name}: {source.rebuild.member} is not a file in "
                               f"{source.path}")
        with member:
            yield from _read_all(member)


def _read_all(stream: IO[bytes]) -> Iterator[bytes]:
    while block := stream.read(CHUNK):
        yield block


def build_one(source: Source, source_root: Path, files: Path = FILES) -> Path:
    """Rebuild one usable source under ``files``; check both hashes; return the file.

    The file is written as ``NAME.tmp`` and renamed only when its hash matches, so a
    failed or interrupted build never leaves a file that ``check`` would call good.
    """
    if source.rebuild is None:
        raise HistoryError(f"{source.name}: not a usable source (see its 'why' in the manifest)")
    data = read_source(source, source_root)
    verify(data, source.sha256, f"{source.repo}@{source.commit[:8]}:{source.path}")
    files.mkdir(parents=True, exist_ok=True)
    out = files / source.rebuild.output
    tmp = out.with_name(out.name + ".tmp")
    digest = hashlib.sha256()
    size = 0
    try:
        with open(tmp, "wb") as fh:
            for block in _chunks(source, data):
                digest.update(block)
                size += len(block)
                fh.write(block)
        if digest.hexdigest() != source.rebuild.sha256:
            raise HistoryError(f"{source.name}: rebuilt file hashes to {digest.hexdigest()} "
                               f"({size} bytes), the manifest says {source.rebuild.sha256} "
                               f"({source.rebuild.bytes} bytes)")
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def file_sha256(path: Path) -> str:
    """A file's sha256, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def check(sources: Sequence[Source], files: Path = FILES) -> list[str]:
    """Problems with the rebuilt files (missing or different); empty when all match."""
    problems: list[str] = []
    for source in sources:
        if source.rebuild is None:
            continue
        out = files / source.rebuild.output
        if not out.is_file():
            problems.append(f"{source.name}: {out} is missing (run `build`)")
        elif (got := file_sha256(out)) != source.rebuild.sha256:
            problems.append(f"{source.name}: {out} hashes to {got}, the manifest says "
                            f"{source.rebuild.sha256}")
    return problems


def label(source: Source, files: Path = FILES) -> dict[str, Any]:
    """Label one rebuilt history with freshwiki's labeller (articles only, default thresholds).

    The labelled and discarded records go to ``labels/NAME/`` beside ``files`` (for
    ``freshwiki edits build --input``), not inside it: ``files`` is handed whole to ``freshwiki
    edits label`` (``hellofresh_run.py --histories``), which reads every file in it as a
    history; the counts are returned.
    """
    from freshwiki.changes.edits import Discarded, LabelReport, RecordWriter, label_history

    assert source.rebuild is not None
    path = files / source.rebuild.output
    if not path.is_file():
        raise HistoryError(f"{source.name}: {path} is missing (run `build` first)")
    report = LabelReport()
    target = files.parent / "labels" / source.name
    with (RecordWriter(target / "labelled.jsonl") as labelled,
          RecordWriter(target / "discarded.jsonl") as discarded):
        for outcome in label_history([path], report=report):
            (discarded if isinstance(outcome, Discarded) else labelled).write(outcome)
    return {"name": source.name, "repo": source.repo, "path": source.path, **report.as_dict()}


def main(argv: Sequence[str] | None = None) -> int:
    """``build``, ``label``, ``run`` (build then label) and ``check``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--files", type=Path, default=FILES,
                        help="folder for the rebuilt files (gitignored)")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("build", "rebuild the usable files from local mirrors"),
                       ("run", "rebuild, then label")):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("--source-root", type=Path, default=Path("/work/.mirror"),
                         help="folder holding OWNER+NAME repository snapshots")
    sub.add_parser("label", help="label the rebuilt files; print counts per source")
    sub.add_parser("check", help="verify the rebuilt files against the manifest's hashes")
    args = parser.parse_args(argv)
    try:
        usable = [s for s in load_manifest(args.manifest) if s.usable]
        if args.command == "check":
            problems = check(usable, args.files)
            for source in usable:
                bad = [p for p in problems if p.startswith(f"{source.name}:")]
                print(f"{source.name}: {'ok' if not bad else bad[0]}")
            return 1 if problems else 0
        if args.command in ("build", "run"):
            for source in usable:
                out = build_one(source, args.source_root, args.files)
                print(f"{source.name}: {out} ({source.rebuild.bytes if source.rebuild else 0:,}"
                      " bytes, sha256 ok)")
        if args.command in ("label", "run"):
            results = []
            for source in usable:
                counts = label(source, args.files)
                results.append(counts)
                print(f"{source.name}: {counts['revisions']} revisions, {counts['pages']} "
                      f"pages: accepted {counts['accepted']}, rejected {counts['rejected']}, "
                      f"discarded {counts['discarded']} {counts['discarded_by_reason']}")
            summary = args.files.parent / "labels" / "summary.json"
            summary.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n",
                               encoding="utf-8")
            total = {k: sum(r[k] for r in results)
                     for k in ("revisions", "accepted", "rejected", "discarded")}
            print(f"all: {total} -> {summary}")
    except (HistoryError, FreshwikiError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
