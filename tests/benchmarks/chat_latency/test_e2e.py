"""End to end: two timed turns through the real CLI and SmolLM2, then exported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from freshwiki.evaluation import ResultsStore, read_runs_file

pytestmark = pytest.mark.e2e

EXE = Path(sys.executable).with_name("freshwiki")


def test_smollm2_turns_are_timed_stored_and_exported(
    smollm2_path: Path, tmp_path: Path, _isolated_home: Path,
) -> None:
    args = [str(EXE), "eval", "chat_latency", "--system", "vanilla", "--model",
            "local:smollm2-135m", "--judge", "none", "--limit", "2", "--no-cache", "--json"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=1200,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["items"], summary["complete"]) == (2, 2)
    with ResultsStore(_isolated_home / "runs" / "runs.sqlite") as store:
        output = store.get_output(summary["run_id"], "head-ans-01", "qa")
    assert output is not None and not output.cache_hit
    assert output.trace["calls"] == 1 and output.trace["seconds"] > 0

    bundle = tmp_path / "x.json.gz"
    proc = subprocess.run([str(EXE), "runs", "export", summary["run_id"], "--out", str(bundle)],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    assert read_runs_file(bundle)[1]["outputs"] == 2
