"""Shared fixtures: an isolated FRESHWIKI_HOME per test, the real shared data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from freshwiki.config import Settings, load_settings

pytest_plugins = ["tests.e2e.fixtures"]

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets an empty FRESHWIKI_HOME; model weights stay in the shared models dir."""
    home = tmp_path / "fw-home"
    monkeypatch.setenv("FRESHWIKI_HOME", str(home))
    monkeypatch.delenv("FRESHWIKI_CONFIG", raising=False)
    monkeypatch.delenv("FRESHWIKI_MODEL", raising=False)
    monkeypatch.chdir(tmp_path)
    return home


@pytest.fixture
def settings() -> Settings:
    return load_settings().settings


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"../shared/data not found beside the checkout (looked in {SHARED_DATA})")
    return SHARED_DATA
