"""`freshwiki runs export` / `runs import`: what a user sees, bad files included."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path

import pytest

from freshwiki.evaluation import ResultsStore
from freshwiki.evaluation._store import SCHEMA_VERSION
from tests.cli.invoke import run_main
from tests.evaluation.leaderboard_data import SNAPSHOTS, commit, growover_runs

RALM, VANILLA, RILM = growover_runs()


@pytest.fixture
def runs_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              capsys: pytest.CaptureFixture[str]) -> Path:
    """ralm (snapshots 1-2) and rilm exported from another home with the real command."""
    other = tmp_path / "other-home"
    with ResultsStore(other / "runs" / "runs.sqlite") as store:
        commit(store, RALM, only=SNAPSHOTS[:2])
        commit(store, RILM)
    path = tmp_path / "other.jsonl.gz"
    code, out, err = run_main(["--home", str(other), "runs", "export", "--out", str(path)],
                              monkeypatch, capsys)
    assert code == 0, err
    assert "exported 2 run(s) (14 outputs, 42 scores, 2 failures)" in out
    return path


def store_path(home: Path) -> Path:
    return home / "runs" / "runs.sqlite"


def test_import_reports_added_and_present_rows(
        runs_file: Path, _isolated_home: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(["runs", "import", str(runs_file), "--dry-run"], monkeypatch,
                            capsys)
    assert code == 0 and "dry run: nothing was changed" in out
    assert not store_path(_isolated_home).exists()
    code, out, _ = run_main(["runs", "import", str(runs_file), "--json"], monkeypatch, capsys)
    data = json.loads(out)
    assert data["rows"]["outputs"] == {"added": 14, "already_present": 0}
    assert sorted(data["runs_added"]) == sorted([RALM.run_id, RILM.run_id])
    code, out, _ = run_main(["runs", "import", str(runs_file)], monkeypatch, capsys)
    assert code == 0 and "new runs: none; runs already here" in out
    assert re.search(r"outputs\W+0\W+14\W", out)  # added 0, already here 14
    code, out, _ = run_main(["runs", "--json"], monkeypatch, capsys)
    assert {r["run_id"]: r["outputs"] for r in json.loads(out)} == {RALM.run_id: 8,
                                                                   RILM.run_id: 6}


def test_export_chooses_runs_by_prefix_or_benchmark(
        _isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(["runs", "export", "--out", str(tmp_path / "x.jsonl.gz")],
                            monkeypatch, capsys)
    assert code == 2 and "no evaluation results" in err
    assert not store_path(_isolated_home).exists()
    with ResultsStore(store_path(_isolated_home)) as store:
        commit(store, RALM)
        commit(store, VANILLA)
    code, out, _ = run_main(["runs", "export", RALM.run_id[:4], "--out",
                             str(tmp_path / "one.jsonl.gz"), "--json"], monkeypatch, capsys)
    assert code == 0 and json.loads(out)["runs"] == [RALM.run_id]
    code, _, err = run_main(["runs", "export", "--benchmark", "wikicontradict", "--out",
                             str(tmp_path / "none.jsonl.gz")], monkeypatch, capsys)
    assert code == 2 and "no run of benchmark 'wikicontradict'" in err
    assert "growover" in err and not (tmp_path / "none.jsonl.gz").exists()


def with_schema(path: Path, schema: int) -> Path:
    lines = gzip.decompress(path.read_bytes()).splitlines(keepends=True)
    header = json.loads(lines[0])
    header["schema"] = schema
    lines[0] = (json.dumps(header) + "\n").encode()
    end = json.loads(lines[-1])
    end["end"]["sha256"] = hashlib.sha256(b"".join(lines[:-1])).hexdigest()
    lines[-1] = (json.dumps(end) + "\n").encode()
    out = path.with_name(f"schema{schema}.jsonl.gz")
    out.write_bytes(gzip.compress(b"".join(lines)))
    return out


@pytest.mark.parametrize("schema", [SCHEMA_VERSION + 1, SCHEMA_VERSION - 1])
def test_a_file_of_another_schema_is_refused_before_any_store_exists(
        runs_file: Path, _isolated_home: Path, schema: int,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(["runs", "import", str(with_schema(runs_file, schema))],
                            monkeypatch, capsys)
    assert code == 2 and "Traceback" not in err
    assert f"schema {schema}" in err and f"reads schema {SCHEMA_VERSION}" in err
    assert "hint:" in err
    assert not store_path(_isolated_home).exists()


def test_a_damaged_second_file_imports_neither(
        runs_file: Path, _isolated_home: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with ResultsStore(store_path(_isolated_home)) as store:
        commit(store, VANILLA)
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(runs_file.read_bytes()[:-40])
    code, _, err = run_main(["runs", "import", str(runs_file), str(cut)], monkeypatch, capsys)
    assert code == 2 and "cut short" in err and str(cut) in err.replace("\n", "")
    code, out, _ = run_main(["runs", "--json"], monkeypatch, capsys)
    assert [r["run_id"] for r in json.loads(out)] == [VANILLA.run_id]
