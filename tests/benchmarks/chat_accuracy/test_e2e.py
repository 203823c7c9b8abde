"""End to end: two chat_accuracy items through the real CLI and SmolLM2, then exported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from freshwiki.evaluation import read_runs_file

pytestmark = pytest.mark.e2e

EXE = Path(sys.executable).with_name("freshwiki")


def test_vanilla_answers_two_items_with_smollm2_and_the_run_exports(
    smollm2_path: Path, tmp_path: Path,
) -> None:
    args = [str(EXE), "eval", "chat_accuracy", "--system", "vanilla", "--model",
            "local:smollm2-135m", "--judge", "none", "--limit", "2",
            "--benchmark-option", "split=test7", "--json"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=1200,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["items"], summary["complete"]) == (2, 2)
    dataset = summary["config"]["dataset"]
    assert dataset["split"] == "test7" and dataset["items"] == 38
    assert len(dataset["dataset_hash"]) == 64 and "/" not in json.dumps(dataset)
    assert {m["scorer"] for m in summary["means"]} == {"chat-accuracy", "chat-accuracy-rules"}

    bundle = tmp_path / "x.json.gz"
    proc = subprocess.run([str(EXE), "runs", "export", summary["run_id"], "--out", str(bundle)],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    _header, counts = read_runs_file(bundle)
    assert (counts["outputs"], counts["scores"]) == (2, 4)
