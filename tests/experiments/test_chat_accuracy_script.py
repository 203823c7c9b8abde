"""experiments/chat_accuracy.py, now a caller of the runner, still writes the same result keys."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "experiments" / "results"


def keys(value: Any, prefix: str = "") -> set[str]:
    """Every key path; system, pass and comparison names (data, not schema) become ``*``."""
    out: set[str] = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            name = "*" if prefix in ("systems.", "paired.", "passes.", "runs.") else key
            out.add(prefix + name)
            out |= keys(inner, prefix + name + ".")
    return out


def test_report_only_rescoring_writes_the_committed_schema(tmp_path: Path) -> None:
    # The committed test7 replies (rag and checked), re-scored without a model.
    shutil.copy(RESULTS / "chat_accuracy_eval_test7_replies.json", tmp_path)
    out = tmp_path / "chat_accuracy_eval_test7.json"
    proc = subprocess.run(
        [sys.executable, str(REPO / "experiments" / "chat_accuracy.py"), "--split", "test7",
         "--systems", "rag,checked", "--report-only", "--out", str(out),
         "--allow-dirty"],  # about the schema: a developer's edits must not fail it
        capture_output=True, text=True, timeout=600, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert proc.returncode == 0, proc.stderr
    written = json.loads(out.read_text(encoding="utf-8"))
    committed = json.loads((RESULTS / out.name).read_text(encoding="utf-8"))
    assert keys(committed) <= keys(written)  # nothing lost; only "runs" added
    # Only "runs" is new, beside the marks of --allow-dirty when the tree has edits.
    assert keys(written) - keys(committed) - {"allow_dirty", "uncommitted_paths"} \
        == {"runs", "runs.*"}
    # 38 items; the paired comparison is over the 38 answerable-kind questions (30 + 8).
    assert written["systems"]["rag"]["n"] == 38
    assert written["paired"]["checked - rag"]["n"] == 38
