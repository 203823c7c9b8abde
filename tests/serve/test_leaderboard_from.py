"""`serve --leaderboard-from DIR`: /leaderboard built from run bundles, not the runs store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from freshwiki.config import Settings
from freshwiki.errors import FreshwikiError
from freshwiki.evaluation import ResultsStore, export_runs
from freshwiki.serve._leaderboard import LeaderboardPages
from tests.evaluation.leaderboard_data import commit, wikicontradict_run


def test_the_site_follows_the_bundles_and_never_opens_the_store(
        tmp_path: Path, settings: Settings) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    first = wikicontradict_run("aaaa00000001", "vanilla", "sha1", [1, 0], [1, 1])
    second = wikicontradict_run("bbbb00000002", "rag", "sha1", [0, 0], [1, 0])
    with ResultsStore(tmp_path / "scratch.sqlite") as store:
        commit(store, first)
        commit(store, second)
        export_runs(store, folder / "a.json.gz", [first.run_id])
        pages = LeaderboardPages(settings, bundles=folder)
        site = pages.site()
        numbers = (site / "leaderboard.json").read_text()
        assert first.run_id in numbers and second.run_id not in numbers
        assert pages.site() == site  # nothing changed: the same build
        export_runs(store, folder / "b.json.gz", [second.run_id])
    newer = pages.site()
    assert newer != site and second.run_id in (newer / "leaderboard.json").read_text()
    assert json.loads((newer / "leaderboard.json").read_text())
    assert not site.exists()  # the older build was pruned
    assert not (settings.home / "runs").exists()

    (folder / "c.json.gz").write_bytes(b"\x1f\x8b\x08\x00broken")
    with pytest.raises(FreshwikiError, match=r"c\.json\.gz"):
        pages.site()
