"""Shared fixtures: an isolated FRESHWIKI_HOME per test, the real shared data folder, Ray."""

from __future__ import annotations

import json
from collections.abc import Iterator
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


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[None]:
    """A real local Ray instance for a test module (starting one costs a few seconds).

    ``address="local"``: a cluster someone left running on this machine is never joined.
    """
    import ray  # the cluster extra is part of the dev install: missing Ray must fail

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    try:
        yield
    finally:
        ray.shutdown()


TOPIC_NAMES = ("head", "tail", "recent")


def write_small_topics(shared_data: Path, data_dir: Path, per_file: int = 4) -> dict[str, str]:
    """Copy the first ``per_file`` leads of each topic file into ``data_dir``'s layout."""
    folder = data_dir / "wikipedia" / "topics"
    folder.mkdir(parents=True, exist_ok=True)
    chosen: dict[str, str] = {}
    for name in TOPIC_NAMES:
        file = f"{name}_articles_en.json"
        leads = json.loads((shared_data / "wikipedia/topics" / file).read_text(encoding="utf-8"))
        subset = dict(list(leads.items())[:per_file])
        (folder / file).write_text(json.dumps(subset), encoding="utf-8")
        chosen.update(subset)
    return chosen


@pytest.fixture
def small_data_dir(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """``FRESHWIKI_DATA_DIR`` pointing at 12 real leads laid out like the shared data."""
    data_dir = tmp_path / "data"
    write_small_topics(shared_data, data_dir)
    monkeypatch.setenv("FRESHWIKI_DATA_DIR", str(data_dir))
    return data_dir


@pytest.fixture(scope="session")
def wikichat_run(shared_data: Path, tmp_path_factory: pytest.TempPathFactory
                 ) -> tuple[Path, str]:
    """A simulated-chat run of the grounded system in full mode, made by the real ``freshwiki
    eval`` with the scripted model of ``tests.evaluation.chatkit``: ``(home, run id)``.

    Shared by the tests of what reads such runs (analysis, report, trace export); they must
    not write into its home.
    """
    from tests.evaluation.chatkit import build_run

    return build_run(shared_data, tmp_path_factory.mktemp("wikichat-run"))
