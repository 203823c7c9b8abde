"""``experiments/hellofresh_run.py --histories``: where the real edits come from, and when not."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.experiments.scripts import load_script

H = load_script("hellofresh_run")


def test_a_missing_history_is_named_before_anything_is_labelled(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "history.xml"
    with pytest.raises(SystemExit, match=re.escape(str(missing))):
        H.real_edits(tmp_path / "home", [missing])
    assert not (tmp_path / "home").exists()


def test_the_dataset_folder_is_keyed_by_the_labellers_code() -> None:
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD:src/freshwiki/changes/edits"],
                          capture_output=True, text=True, check=False)
    expected = proc.stdout.strip()[:12] if proc.returncode == 0 else "unversioned"
    assert H.labeller_version() == expected
    if proc.returncode == 0:
        assert re.fullmatch(r"[0-9a-f]{12}", expected)
