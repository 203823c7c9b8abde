"""experiments/snapshot_change_probe.py: the head's decision rule, features and recalls."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from tests.experiments.scripts import load_script

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


P = load_script("snapshot_change_probe")


def test_features_combine_both_vectors() -> None:
    u = np.array([[1.0, 0.0]], dtype=np.float32)
    v = np.array([[0.5, 0.5]], dtype=np.float32)
    assert P.pair_features(u, v).tolist() == [[1.0, 0.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.0]]


@pytest.mark.parametrize(("aligner", "p", "want"), [
    ("unchanged", 0.7, "changed"),
    ("changed", 0.2, "unchanged"),
    ("new", 0.2, "new"),
    ("new", 0.9, "changed"),
    ("deleted", None, "deleted"),
])
def test_decide(aligner: str, p: float | None, want: str) -> None:
    assert P.decide(aligner, p) == want


def test_recalls_with_interval_width() -> None:
    out = P.recalls(["changed", "changed", "unchanged"], ["changed", "new", "unchanged"])
    assert (out["changed"]["correct"], out["changed"]["true"]) == (1, 2)
    assert out["changed"]["ci_width"] == pytest.approx(
        out["changed"]["recall_ci95"][1] - out["changed"]["recall_ci95"][0], abs=1e-3)
    assert out["deleted"]["recall"] is None


def test_training_file_is_checked_against_its_manifest(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [{"claim": "c1", "evidence": "e1", "label": "SUPPORTS"},
            {"claim": "c2", "evidence": "e2", "label": "REFUTES"},
            {"claim": "c3", "evidence": "e3", "label": "NOT ENOUGH INFO"}]
    body = "".join(json.dumps(r) + "\n" for r in rows)
    train, manifest = tmp_path / "claims.jsonl", tmp_path / "manifest.json"
    train.write_text(body)
    manifest.write_text(json.dumps({"claims_sha256": hashlib.sha256(body.encode()).hexdigest()}))
    monkeypatch.setattr(P, "TRAIN_MANIFEST", manifest)
    assert P.read_train(train) == (["e1", "e2"], ["c1", "c2"], [0, 1])
    train.write_text(body + body)
    with pytest.raises(SystemExit, match="sha256"):
        P.read_train(train)
