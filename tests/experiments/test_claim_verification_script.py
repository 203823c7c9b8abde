"""experiments/claim_verification.py run --external: a malformed file writes nothing; a good one
gives every figure with its interval, beside the baselines, with the set's provenance.

No model: the ``predicate`` verifier calls none. The rows are the tests' own
(``tests/benchmarks/claim_verification/external_claims.jsonl``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "experiments" / "claim_verification.py"
FIXTURE = REPO / "tests" / "benchmarks" / "claim_verification" / "external_claims.jsonl"


def _run(tmp_path: Path, claims: Path, out: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(SCRIPT), "run", "--external-path", str(claims),
               "--split", "all", "--verifiers", "predicate", "--store",
               str(tmp_path / "runs.sqlite"), "--out", str(out), "--allow-dirty"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"),
           "FRESHWIKI_HOME": str(tmp_path / "home")}
    return subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=REPO,
                          env=env)


def test_a_malformed_file_names_line_and_field_and_writes_nothing(tmp_path: Path) -> None:
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[3])
    bad["label"] = "MOSTLY TRUE"
    claims = tmp_path / "set" / "claims.jsonl"
    claims.parent.mkdir()
    claims.write_text("\n".join([*lines[:3], json.dumps(bad), *lines[4:]]) + "\n",
                      encoding="utf-8")
    out = tmp_path / "result.json"
    proc = _run(tmp_path, claims, out)
    assert proc.returncode == 2
    assert f"{claims}, line 4, field 'label'" in proc.stderr and "MOSTLY TRUE" in proc.stderr
    assert not out.exists() and not (tmp_path / "runs.sqlite").exists()


def test_the_result_holds_the_figures_the_baselines_and_the_source(tmp_path: Path) -> None:
    claims = tmp_path / "fixture" / "claims.jsonl"
    claims.parent.mkdir()
    claims.write_text(FIXTURE.read_text(encoding="utf-8"), encoding="utf-8")
    (claims.parent / "manifest.json").write_text(json.dumps({
        "source": {"repo": "freshwiki/tests", "commit": "0" * 40, "path": "x.jsonl",
                   "licence": "written for the tests"},
        "rebuild": "written by hand", "sampling": "all six rows"}), encoding="utf-8")
    out = tmp_path / "result.json"
    proc = _run(tmp_path, claims, out)
    assert proc.returncode == 0, proc.stderr
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["set"] == "fixture" and written["claims"] == 6
    assert written["source"]["repo"] == "freshwiki/tests"
    assert written["data"]["shares"]["real"] == 1.0
    assert written["data"]["sample"].startswith("out of sample")
    predicate = written["verifiers"]["predicate"]
    assert predicate["run"] == written["runs"]["predicate"]
    for figure in ("SUPPORTS precision", "SUPPORTS recall", "REFUTES recall",
                   "not supported called SUPPORTS"):
        point, low, high = predicate[figure]
        assert low <= point <= high
    assert set(written["baselines"]) == {"majority class (NOT ENOUGH INFO)", "always SUPPORTS"}
    assert written["baselines"]["always SUPPORTS"]["SUPPORTS recall"][0] == 1.0
