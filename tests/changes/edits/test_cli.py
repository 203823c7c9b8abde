"""``freshwiki edits label`` and ``edits build`` through typer's runner and a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from freshwiki.cli import app

runner = CliRunner()


def test_label_then_build_on_real_histories(shared_data: Path, _isolated_home: Path) -> None:
    folder = shared_data / "wikipedia/histories"
    result = runner.invoke(app, ["edits", "label", str(folder), "--all-namespaces", "--json"])
    assert result.exit_code == 0, result.output
    counts = json.loads(result.stdout)
    # hand-checked in test_real_histories: Pyrus 189729426, User:Ryulong 558764 and
    # 1552830 rejected; the three reverts accepted; 48 revisions in the five files
    assert (counts["accepted"], counts["rejected"], counts["revisions"]) == (3, 3, 48)
    assert counts["accepted"] + counts["rejected"] + counts["discarded"] == 48
    out_dir = _isolated_home / "edits"
    lines = (out_dir / "labelled.jsonl").read_text(encoding="utf-8").splitlines()
    assert {json.loads(x)["revision_id"] for x in lines} == {
        189729426, 190346463, 558764, 558766, 1552830, 1552889}
    assert len((out_dir / "discarded.jsonl").read_text().splitlines()) == 42
    result = runner.invoke(app, ["edits", "build", "--period", "year", "--seed", "5", "--json"])
    assert result.exit_code == 0, result.output
    built = json.loads(result.stdout)
    # 2007: 558764 rejected / 558766 accepted; 2008: Pyrus pair; 2009: 1552830 / 1552889
    assert built["per_class"] == {"2007": 1, "2008": 1, "2009": 1}
    assert Path(built["output"]).name == "balanced-year-seed5.jsonl"


def test_cli_errors_exit_2_without_traceback(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("freshwiki")
    done = subprocess.run([str(exe), "edits", "label", str(tmp_path / "missing.xml")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "missing.xml: no such file or folder" in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr
    done = subprocess.run([str(exe), "edits", "build", "--period", "fortnight"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "unknown --period 'fortnight'" in " ".join(done.stderr.split())


def test_label_writes_to_out(tmp_path: Path, shared_data: Path) -> None:
    target = tmp_path / "ds"
    result = runner.invoke(app, ["edits", "label", "--out", str(target),
                                 str(shared_data / "wikipedia/histories/article-pyrus.xml")])
    assert result.exit_code == 0, result.output
    assert "rejected" in result.stdout and "CC BY-SA" in result.stdout
    summary = json.loads((target / "summary.json").read_text())
    assert (summary["accepted"], summary["rejected"]) == (1, 1)
