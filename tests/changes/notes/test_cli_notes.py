"""``freshwiki notes load`` and ``notes build`` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from freshwiki.changes.notes import read_jsonl
from freshwiki.cli import app

from .builders import write_scenario

runner = CliRunner()


def test_load_real_data_json_then_build(shared_data: Path, _isolated_home: Path) -> None:
    result = runner.invoke(app, ["notes", "load", str(shared_data / "communitynotes"),
                                 "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["counts"] == {
        "2021-01": {"helpful": 24, "not_helpful": 6},
        "2021-02": {"helpful": 53, "not_helpful": 11},
        "2021-03": {"helpful": 20, "not_helpful": 4},
    }
    assert data["labels"] == {"helpful": 97, "not_helpful": 21}
    assert data["excluded"] == {"needs more ratings": 771, "no status": 3989}
    assert data["status_sources"] == {"scoredNotes": 889}
    assert data["regime"] == "note_only"
    # Default location: the freshwiki home.
    labelled = _isolated_home / "notes" / "labelled.jsonl"
    assert data["labelled"] == str(labelled)
    assert len(read_jsonl(labelled)) == 118
    assert json.loads((_isolated_home / "notes" / "load-report.json").read_text())[
        "records"] == 118

    built = runner.invoke(app, ["notes", "build", "--seed", "4", "--json"])
    assert built.exit_code == 0, built.output
    summary = json.loads(built.stdout)
    # The paper's filters first: the 17 notes whose writers ticked manipulated media go
    # (two of them February's not-helpful ones), then 2 x (6 + 9 + 4).
    assert summary["filtering"]["excluded"] == {
        "post has media (manipulated-media reason)": 17}
    assert summary["records"] == 38
    assert summary["unbalanced_periods"] == []
    dataset = read_jsonl(_isolated_home / "notes" / "balanced-month-seed4.jsonl")
    assert len(dataset) == 38

    unfiltered = runner.invoke(app, ["notes", "build", "--seed", "4", "--no-paper-filters"])
    assert unfiltered.exit_code == 0, unfiltered.output
    assert "no filters" in unfiltered.stderr
    dataset = read_jsonl(_isolated_home / "notes" / "balanced-month-seed4-unfiltered.jsonl")
    assert len(dataset) == 42  # 2 x (6 + 11 + 4)
    assert len(read_jsonl(_isolated_home / "notes" / "balanced-month-seed4.jsonl")) == 38


def test_load_table_with_posts_and_out(tmp_path: Path) -> None:
    folder = write_scenario(tmp_path / "dl")
    posts = tmp_path / "posts.csv"
    posts.write_text("tweetId,text,created_at\n9001,the post,2024-05-02T08:00:00Z\n",
                     encoding="utf-8")
    out = tmp_path / "out"
    result = runner.invoke(app, ["notes", "load", str(folder), "--posts", str(posts),
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    row = next(line for line in lines if "2024-06" in line)
    assert row.split("│")[1:4] == [" 2024-06 ", "       1 ", "           2 "]
    assert "excluded (no label): 1 needs more ratings, 1 no status" in result.stdout
    assert "(with_post)" in result.stdout
    records = read_jsonl(out / "labelled.jsonl")
    assert [r.regime for r in records].count("with_post") == 1

    built = runner.invoke(app, ["notes", "build", "--out", str(out), "--period", "year"])
    assert built.exit_code == 0, built.output
    # Note 104 is a media note (isMediaNote=1): the filters leave 1 helpful, 3 not helpful.
    assert len(read_jsonl(out / "balanced-year-seed0.jsonl")) == 2
    assert "excluded: 1 post has media (isMediaNote)" in built.stdout
    unfiltered = runner.invoke(app, ["notes", "build", "--out", str(out), "--period", "year",
                                     "--no-paper-filters"])
    assert unfiltered.exit_code == 0, unfiltered.output
    assert len(read_jsonl(out / "balanced-year-seed0-unfiltered.jsonl")) == 4  # 2 + 3


def test_bad_input_exits_2_with_message_and_hint(tmp_path: Path) -> None:
    folder = tmp_path / "dl"
    folder.mkdir()
    (folder / "n.tsv").write_text("noteId\ttweetId\tclassification\n1\t2\tX\n",
                                  encoding="utf-8")
    exe = Path(sys.executable).with_name("freshwiki")
    proc = subprocess.run([str(exe), "notes", "load", str(folder)], capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 2, proc.stderr
    assert "n.tsv: looks like a notes file but lacks column(s)" in proc.stderr
    assert "createdAtMillis" in proc.stderr and "summary" in proc.stderr
    assert "hint:" in proc.stderr
    assert "Traceback" not in proc.stderr
