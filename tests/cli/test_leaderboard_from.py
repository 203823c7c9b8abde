"""`freshwiki leaderboard --from DIR`: the site from exported run bundles, the store untouched."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from freshwiki.evaluation import ResultsStore, export_runs
from tests.cli.invoke import run_main
from tests.evaluation.leaderboard_data import commit, wikicontradict_run


def bundles(folder: Path, scratch: Path) -> list[str]:
    """Two bundles of one WikiContradict run each, written as `runs export` writes them."""
    runs = [wikicontradict_run("aaaa00000001", "vanilla", "sha1", [1, 0, 1, 1], [1, 0, 0, 1]),
            wikicontradict_run("bbbb00000002", "rag", "sha1", [1, 1, 1, 0], [0, 0, 1, 1])]
    folder.mkdir()
    with ResultsStore(scratch / "runs.sqlite") as store:
        for run in runs:
            commit(store, run)
            export_runs(store, folder / f"{run.run_id}.json.gz", [run.run_id])
    return [r.run_id for r in runs]


def test_the_site_is_built_from_bundles_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], _isolated_home: Path) -> None:
    ids = bundles(tmp_path / "runs", tmp_path)
    (tmp_path / "runs" / "README.md").write_text("not a bundle: skipped")
    code, out, err = run_main(["leaderboard", "--from", str(tmp_path / "runs"), "--out",
                               str(tmp_path / "site"), "--json"], monkeypatch, capsys)
    assert code == 0, err
    site = json.loads(out)
    assert site["runs"] == 2 and [b["benchmark"] for b in site["boards"]] == ["wikicontradict"]
    numbers = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    assert all(i in json.dumps(numbers) for i in ids)
    assert (tmp_path / "site" / "index.html").is_file()
    assert not (_isolated_home / "runs").exists()  # the user's store was never opened


def test_a_bundle_unpacked_with_gunzip_reads_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    ids = bundles(tmp_path / "runs", tmp_path)
    packed = tmp_path / "runs" / f"{ids[1]}.json.gz"
    (tmp_path / "runs" / f"{ids[1]}.jsonl").write_bytes(gzip.decompress(packed.read_bytes()))
    packed.unlink()
    code, out, err = run_main(["leaderboard", "--from", str(tmp_path / "runs"), "--out",
                               str(tmp_path / "site"), "--json"], monkeypatch, capsys)
    assert code == 0, err
    assert json.loads(out)["runs"] == 2


@pytest.mark.parametrize(("content", "message"), [
    (b"\x1f\x8b\x08\x00garbage", "is cut short"),
    (gzip.compress(b'{"format": "someone-elses", "schema": 1}\n'), "is not a freshwiki runs"),
    (gzip.compress(b'{"format": "freshwiki-runs", "schema": 999, "runs": []}\n'),
     "has runs-file schema 999"),
])
def test_a_bad_bundle_refuses_the_whole_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        content: bytes, message: str, _isolated_home: Path) -> None:
    bundles(tmp_path / "runs", tmp_path)
    bad = tmp_path / "runs" / "zzz-bad.json.gz"  # read last: the good ones were read first
    bad.write_bytes(content)
    code, _out, err = run_main(["leaderboard", "--from", str(tmp_path / "runs"), "--out",
                                str(tmp_path / "site")], monkeypatch, capsys)
    squeezed = "".join(err.split())  # rich wraps long paths anywhere
    assert code == 2 and str(bad) in squeezed and "".join(message.split()) in squeezed, err
    assert not (tmp_path / "site").exists() and not (_isolated_home / "runs").exists()


def test_an_edited_bundle_names_its_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    ids = bundles(tmp_path / "runs", tmp_path)
    path = tmp_path / "runs" / f"{ids[0]}.json.gz"
    lines = gzip.decompress(path.read_bytes()).decode().splitlines(keepends=True)
    row = json.loads(lines[2])
    del row["row"]["text"]  # an output row without its text column
    lines[2] = json.dumps(row) + "\n"
    path.write_bytes(gzip.compress("".join(lines).encode()))
    code, _out, err = run_main(["leaderboard", "--from", str(tmp_path / "runs"), "--out",
                                str(tmp_path / "site")], monkeypatch, capsys)
    squeezed = "".join(err.split())
    assert code == 2 and f"{path}isdamaged:line3(outputs)lackstext" in squeezed, err
    assert not (tmp_path / "site").exists()
