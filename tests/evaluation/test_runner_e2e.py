"""End to end: WikiContradict x vanilla x the real SmolLM2 weights, judged by SmolLM2."""

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


def test_wikicontradict_vanilla_smollm2_end_to_end(
    smollm2_path: Path, shared_data: Path, _isolated_home: Path,
) -> None:
    dataset = shared_data / "wikicontradict" / "wikicontradict.json"
    args = [str(EXE), "eval", "wikicontradict", "--system", "vanilla", "--model",
            "local:smollm2-135m", "--templates", "4", "--limit", "2", "--judge",
            "local:smollm2-135m", "--benchmark-option", f"path={dataset}", "--json"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["items"], summary["new_outputs"]) == (2, 2)
    assert summary["config"]["model"].startswith("local:smollm2-135m@")
    assert summary["model_hashes"]["judge"] == summary["model_hashes"]["model"]

    with ResultsStore(_isolated_home / "runs" / "runs.sqlite") as store:
        results = store.load_run(summary["run_id"])
        outputs = [store.get_output(summary["run_id"], f"wc-{i:03d}-q1", "4") for i in (0, 1)]
    assert all(o is not None and o.text.strip() and o.usage.completion_tokens > 0
               for o in outputs)
    # Every sample x scorer is either scored or failed with a recorded cause, never lost.
    for scorer in ("wikicontradict-match", "wikicontradict-judge"):
        scored = {i.sample_id for i in results.items if i.scorer == scorer}
        failed = {f.sample_id for f in results.failures if f.scorer == scorer}
        assert scored | failed == {"wc-000-q1", "wc-001-q1"} and not scored & failed, scorer
    assert {i.sample_id for i in results.items if i.scorer == "wikicontradict-match"} == {
        "wc-000-q1", "wc-001-q1"}
    assert all("contradiction" in i.metadata for i in results.items)

    again = subprocess.run(args, capture_output=True, text=True, timeout=900,
                           env=dict(os.environ))
    assert again.returncode == 0, again.stderr
    resumed = json.loads(again.stdout)
    assert (resumed["run_id"], resumed["new_outputs"], resumed["already_done"]) == (
        summary["run_id"], 0, 2 - len({f["sample_id"] for f in summary["failures"]}))
