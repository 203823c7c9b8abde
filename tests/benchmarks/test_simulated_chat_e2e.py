"""End to end: a simulated conversation through the real CLI, real weights and a real index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from freshwiki.evaluation import ResultsStore

pytestmark = pytest.mark.e2e

EXE = Path(sys.executable).with_name("freshwiki")


def test_rag_holds_a_judged_simulated_conversation_with_smollm2(
    smollm2_path: Path, small_data_dir: Path, _isolated_home: Path,
) -> None:
    # 12 real leads become the default corpus (built on first use), the simulator asks about
    # the first topic (a head one), rag answers from the corpus, and SmolLM2 judges.
    args = [str(EXE), "eval", "simulated-chat", "--system", "rag", "--model",
            "local:smollm2-135m", "--judge", "local:smollm2-135m", "--limit", "1",
            "--benchmark-option", "turns=2", "--benchmark-option", "today=2026-11-21", "--json"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=1200,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["items"], summary["new_outputs"]) == (1, 1)
    assert summary["config"]["simulator"] == summary["config"]["model"]
    assert summary["config"]["dataset"]["topics"] == 12

    with ResultsStore(_isolated_home / "runs" / "runs.sqlite") as store:
        results = store.load_run(summary["run_id"])
        sample_id = results.items[0].sample_id if results.items else results.failures[0].sample_id
        output = store.get_output(summary["run_id"], sample_id, "chat")
    assert sample_id.startswith("head/")
    assert output is not None and len(output.trace["turns"]) == 2
    for turn in output.trace["turns"]:
        assert turn["user"].strip() and turn["reply"].strip()
        assert turn["trace"]["retrieved"], "rag searched the default corpus every turn"
    # Each of the six scorers either scored the conversation or recorded why not.
    scorers = {"chat-factuality", "chat-relevant", "chat-informational", "chat-natural",
               "chat-non-repetitive", "chat-temporally-correct"}
    done = {i.scorer for i in results.items} | {f.scorer for f in results.failures}
    assert done == scorers
    for item in results.items:
        assert 0.0 <= item.value <= 1.0
