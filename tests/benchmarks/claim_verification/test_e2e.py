"""End to end through the real CLI and SmolLM2: two real claims with the legacy verifier, and
the tests' external rows with the checked verifier."""

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


def test_smollm2_judges_two_claims_and_the_run_exports(
    smollm2_path: Path, shared_data: Path, tmp_path: Path,
) -> None:
    args = [str(EXE), "eval", "claim_verification", "--system", "claim-verifier",
            "--option", "verifier=legacy-full", "--option", "today=2026-11-24",
            "--model", "local:smollm2-135m", "--judge", "none", "--limit", "2",
            "--benchmark-option", f"data_dir={shared_data}", "--json"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=1200,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["items"], summary["complete"]) == (2, 2)
    assert summary["config"]["dataset"]["claims"] == 256
    (mean,) = summary["means"]
    assert mean["scorer"] == "claim-verdict" and mean["n"] == 2

    bundle = tmp_path / "x.json.gz"
    proc = subprocess.run([str(EXE), "runs", "export", summary["run_id"], "--out", str(bundle)],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    _header, counts = read_runs_file(bundle)
    assert (counts["outputs"], counts["scores"]) == (2, 2)


def test_smollm2_runs_the_checked_verifier_on_an_external_file(smollm2_path: Path) -> None:
    fixture = Path(__file__).with_name("external_claims.jsonl")
    args = [str(EXE), "eval", "claim_verification", "--system", "claim-verifier",
            "--option", "verifier=checked", "--option", "today=2026-11-24",
            "--model", "local:smollm2-135m", "--judge", "none",
            "--benchmark-option", f"external_path={fixture}",
            "--benchmark-option", "split=all", "--json"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=1200,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["items"], summary["complete"]) == (6, 6)
    assert summary["config"]["dataset"]["labels"] == {
        "SUPPORTS": 2, "REFUTES": 2, "NOT ENOUGH INFO": 2}
