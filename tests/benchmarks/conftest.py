"""The real WikiContradict file, loaded once for every benchmark test."""

from __future__ import annotations

from pathlib import Path

import pytest

from freshwiki.benchmarks.wikicontradict import WikiContradict


@pytest.fixture(scope="session")
def wikicontradict_path(shared_data: Path) -> Path:
    return shared_data / "wikicontradict" / "wikicontradict.json"


@pytest.fixture(scope="session")
def wikicontradict(wikicontradict_path: Path) -> WikiContradict:
    return WikiContradict.from_file(wikicontradict_path)
