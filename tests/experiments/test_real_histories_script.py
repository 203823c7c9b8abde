"""experiments/real_histories.py on a throw-away git repository of hand-written histories.

The real sources are mirrors of public repositories that the test machine may not have, so
these tests build their own tiny "mirror" (a git repository holding a made-up two-revision
history, plain, LZMA-compressed and in a tar.gz) and pin how the script treats it: a source
whose bytes are not the pinned ones is refused with both hashes named, a rebuilt file must
match its own hash before it takes its name, ``check`` reports missing and changed files,
and ``label`` runs freshwiki's labeller and writes its records.
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.experiments.scripts import load_script

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


R = load_script("real_histories")

PARAGRAPH = ("The village stands on the north bank of the river and has a small harbour "
             "used by fishing boats.")
HISTORY = f"""<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">
  <page>
    <title>Testville</title>
    <ns>0</ns>
    <id>1</id>
    <revision>
      <id>10</id>
      <timestamp>2020-01-01T00:00:00Z</timestamp>
      <contributor><username>A</username><id>1</id></contributor>
      <text bytes="10" xml:space="preserve">{PARAGRAPH}</text>
      <sha1>a</sha1>
    </revision>
    <revision>
      <id>11</id>
      <parentid>10</parentid>
      <timestamp>2020-01-02T00:00:00Z</timestamp>
      <contributor><ip>192.0.2.1</ip></contributor>
      <text bytes="10" xml:space="preserve">{PARAGRAPH}

It is twinned with a town on the other side of the sea, and a ferry runs there twice a day.</text>
      <sha1>b</sha1>
    </revision>
  </page>
</mediawiki>
""".encode()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _tar(name: str, data: bytes) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.fixture()
def mirror(tmp_path: Path) -> tuple[Path, str, dict[str, bytes]]:
    """A mirror root with one repository ``owner+repo`` holding three encodings of HISTORY."""
    files = {"plain.xml": HISTORY, "packed.xml.lzma": lzma.compress(HISTORY, lzma.FORMAT_ALONE),
             "packed.tar.gz": _tar("history.xml", HISTORY)}
    repo = tmp_path / "mirror" / "owner+repo" / "repo"
    repo.mkdir(parents=True)
    for name, data in files.items():
        (repo / name).write_bytes(data)

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c",
                               "user.email=t@example.org", *args],
                              check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "histories")
    return tmp_path / "mirror", git("rev-parse", "HEAD"), files


def record(commit: str, path: str, stored: bytes, unpack: str, member: str | None = None,
           **overrides: Any) -> dict[str, Any]:
    """One usable manifest entry for a file of the test mirror."""
    entry: dict[str, Any] = {
        "name": f"test_{unpack}", "repo": "owner/repo", "commit": commit, "path": path,
        "mirror": "owner+repo", "licence": "made up for the test", "sha256": sha(stored),
        "usable": True, "why": "test",
        "rebuild": {"output": f"{unpack}.xml", "unpack": unpack, "member": member,
                    "sha256": sha(HISTORY), "bytes": len(HISTORY)},
    }
    entry.update(overrides)
    return entry


def sources(*entries: dict[str, Any]) -> list[Any]:
    return list(R.parse_manifest({"sources": list(entries)}))


@pytest.mark.parametrize(("path", "unpack", "member"), [
    ("plain.xml", "none", None), ("packed.xml.lzma", "lzma", None),
    ("packed.tar.gz", "tar", "history.xml"),
])
def test_build_unpacks_and_checks_both_hashes(mirror: tuple[Path, str, dict[str, bytes]],
                                              tmp_path: Path, path: str, unpack: str,
                                              member: str | None) -> None:
    root, commit, files = mirror
    [source] = sources(record(commit, path, files[path], unpack, member))
    out = R.build_one(source, root, tmp_path / "files")
    assert out.read_bytes() == HISTORY
    assert R.check([source], tmp_path / "files") == []


def test_a_source_that_is_not_the_pinned_version_is_refused(
        mirror: tuple[Path, str, dict[str, bytes]], tmp_path: Path) -> None:
    root, commit, files = mirror
    wrong = "0" * 64
    [source] = sources(record(commit, "plain.xml", files["plain.xml"], "none", sha256=wrong))
    with pytest.raises(R.HistoryError) as caught:
        R.build_one(source, root, tmp_path / "files")
    message = str(caught.value)
    assert sha(HISTORY) in message and wrong in message and "plain.xml" in message
    assert not (tmp_path / "files" / "none.xml").exists()


def test_a_rebuilt_file_with_another_hash_never_takes_its_name(
        mirror: tuple[Path, str, dict[str, bytes]], tmp_path: Path) -> None:
    root, commit, files = mirror
    entry = record(commit, "packed.xml.lzma", files["packed.xml.lzma"], "lzma")
    entry["rebuild"]["sha256"] = "f" * 64
    [source] = sources(entry)
    with pytest.raises(R.HistoryError, match="rebuilt file hashes to"):
        R.build_one(source, root, tmp_path / "files")
    assert list((tmp_path / "files").iterdir()) == []  # neither the file nor a .tmp


def test_missing_mirror_commit_and_member_are_named(
        mirror: tuple[Path, str, dict[str, bytes]], tmp_path: Path) -> None:
    root, commit, files = mirror
    [elsewhere] = sources(record(commit, "plain.xml", files["plain.xml"], "none",
                                 mirror="nobody+nothing"))
    with pytest.raises(R.HistoryError, match="no snapshot of owner/repo"):
        R.build_one(elsewhere, root, tmp_path / "files")
    [no_commit] = sources(record("1" * 40, "plain.xml", files["plain.xml"], "none"))
    with pytest.raises(R.HistoryError, match=r"cannot read plain\.xml at 1111"):
        R.build_one(no_commit, root, tmp_path / "files")
    [no_member] = sources(record(commit, "packed.tar.gz", files["packed.tar.gz"], "tar",
                                 "other.xml"))
    with pytest.raises(R.HistoryError, match=r"other\.xml is not a file"):
        R.build_one(no_member, root, tmp_path / "files")


def test_check_reports_missing_and_changed_files(
        mirror: tuple[Path, str, dict[str, bytes]], tmp_path: Path) -> None:
    root, commit, files = mirror
    [source] = sources(record(commit, "plain.xml", files["plain.xml"], "none"))
    target = tmp_path / "files"
    assert "is missing" in R.check([source], target)[0]
    R.build_one(source, root, target).write_bytes(HISTORY + b" ")
    assert "hashes to" in R.check([source], target)[0]


def test_manifest_entries_are_checked_field_by_field() -> None:
    usable_without_recipe = {"name": "x", "repo": "o/r", "commit": "c", "path": "p",
                             "mirror": "o+r", "licence": "l", "sha256": "s", "usable": True}
    with pytest.raises(R.HistoryError, match=r"'x'.*needs 'sha256' and 'rebuild'"):
        R.parse_manifest({"sources": [usable_without_recipe]})
    rejected = {**usable_without_recipe, "usable": False, "sha256": None, "rebuild": None}
    [source] = R.parse_manifest({"sources": [rejected]})
    assert source.rebuild is None
    with pytest.raises(R.HistoryError, match="'usable' must be true or false"):
        R.parse_manifest({"sources": [{**rejected, "usable": "yes"}]})


def test_label_runs_the_labeller_and_writes_its_records(
        mirror: tuple[Path, str, dict[str, bytes]], tmp_path: Path) -> None:
    root, commit, files = mirror
    [source] = sources(record(commit, "plain.xml", files["plain.xml"], "none"))
    target = tmp_path / "files"
    R.build_one(source, root, target)
    counts = R.label(source, target)
    assert counts["revisions"] == 2 and counts["pages"] == 1
    assert counts["accepted"] + counts["rejected"] + counts["discarded"] == 2
    # Beside the rebuilt files, not among them: the folder of files is labelled whole.
    assert not (target / "labels").exists()
    folder = tmp_path / "labels" / source.name
    lines = (folder / "discarded.jsonl").read_text().splitlines()
    assert len(lines) == counts["discarded"]
    assert all(json.loads(line)["record"] == "discarded" for line in lines)
    assert (folder / "labelled.jsonl").is_file()


def test_the_committed_manifest_parses_and_pins_every_usable_file() -> None:
    entries = R.load_manifest()
    usable = [s for s in entries if s.usable]
    assert usable and all(s.rebuild is not None and s.sha256 for s in usable)
    assert len({s.name for s in entries}) == len(entries)
