"""End to end: hellofresh-notes x zero-shot x the real SmolLM2 weights, through the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from freshwiki.benchmarks.hellofresh import ANSWERS
from freshwiki.changes.notes import build_balanced, filter_notes, load_notes, write_jsonl
from freshwiki.evaluation import ResultsStore

pytestmark = pytest.mark.e2e

EXE = Path(sys.executable).with_name("freshwiki")


def test_zero_shot_on_real_notes_through_the_cli(
    smollm2_path: Path, shared_data: Path, _isolated_home: Path, tmp_path: Path,
) -> None:
    dataset = tmp_path / "balanced.jsonl"
    kept, _ = filter_notes(load_notes(shared_data / "communitynotes").records)
    write_jsonl(build_balanced(kept, period="month", seed=0).records, dataset)
    args = [str(EXE), "eval", "hellofresh-notes", "--system", "zero-shot", "--model",
            "local:smollm2-135m", "--judge", "none", "--limit", "4",
            "--benchmark-option", f"path={dataset}", "--json"]
    env = {**os.environ, "FRESHWIKI_N_THREADS": "1"}
    proc = subprocess.run(args, capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["items"], summary["new_outputs"], summary["complete"]) == (20, 20, 20)
    assert summary["config"]["templates"] == ["manual", "r1", "r2", "r3", "r4"]
    assert summary["config"]["system_config"] == {"max_tokens": 15}

    with ResultsStore(_isolated_home / "runs" / "runs.sqlite") as store:
        results = store.load_run(summary["run_id"])
    assert len(results.items) == 20 and not results.failures
    assert {i.scorer for i in results.items} == {"hellofresh-correct"}
    for item in results.items:
        assert item.label in ANSWERS
        assert item.value == (1.0 if item.label == item.metadata["label"] else 0.0)
        assert item.metadata["period"] == "2021-01"  # the first four notes are January's

    out = _isolated_home / "report"
    report = subprocess.run([str(EXE), "report", summary["run_id"], "--out", str(out)],
                            capture_output=True, text=True, timeout=300, env=env)
    assert report.returncode == 0, report.stderr
    md = (out / "report.md").read_text()
    assert "## Yes/no classification: hellofresh-notes" in md and "| vote | 4 |" in md
