"""A result file is refused from a dirty tree unless ``--allow-dirty``, and keeps the command
that generated its outputs when a later command only re-reports them."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from freshwiki.errors import FreshwikiError

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def _provenance() -> ModuleType:
    if str(EXPERIMENTS) not in sys.path:
        sys.path.insert(0, str(EXPERIMENTS))
    spec = importlib.util.spec_from_file_location("_provenance_under_test",
                                                  EXPERIMENTS / "_provenance.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


prov = _provenance()
DATA = {"shares": {"real": 1.0, "constructed": 0.0, "synthetic": 0.0}, "sample": "n/a",
        "figure": "measured", "sources": ""}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git checkout with src/ and experiments/ committed, and the module pointed at it."""
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)
    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.py").write_text("x = 1\n")
    (tmp_path / "experiments" / "results").mkdir(parents=True)
    (tmp_path / "experiments" / "measure.py").write_text("print(1)\n")
    git("add", ".")
    git("commit", "-q", "-m", "start")
    monkeypatch.setattr(prov, "ROOT", tmp_path)
    return tmp_path


def test_clean_tree_writes_without_marks(repo: Path) -> None:
    out = prov.write_result(repo / "experiments" / "results" / "r.json", {"x": 1}, data=DATA,
                            command="python experiments/measure.py")
    body = json.loads(out.read_text())
    assert body["src_uncommitted_changes"] is False
    assert "allow_dirty" not in body and "generated_by" not in body
    assert body["x"] == 1


@pytest.mark.parametrize("changed", ["src/lib.py", "experiments/measure.py"])
def test_dirty_tree_is_refused_naming_the_change(repo: Path, changed: str) -> None:
    (repo / changed).write_text("changed\n")
    target = repo / "experiments" / "results" / "r.json"
    with pytest.raises(FreshwikiError, match=changed.replace(".", r"\.")) as caught:
        prov.write_result(target, {"x": 1}, data=DATA, command="python m.py")
    assert "--allow-dirty" in (caught.value.hint or "")
    assert not target.exists()


def test_a_rewritten_result_file_is_not_a_dirty_input(repo: Path) -> None:
    (repo / "experiments" / "results" / "old.json").write_text("{}\n")
    (repo / "experiments" / "runs").mkdir()
    (repo / "experiments" / "runs" / "bundle.json").write_text("{}\n")
    out = prov.write_result(repo / "experiments" / "results" / "r.json", {}, data=DATA,
                            command="python m.py")
    assert json.loads(out.read_text())["src_uncommitted_changes"] is False


def test_allow_dirty_writes_and_marks_the_file(repo: Path) -> None:
    (repo / "experiments" / "new_input.jsonl").write_text("{}\n")
    out = prov.write_result(repo / "experiments" / "results" / "r.json", {}, data=DATA,
                            command="python m.py --allow-dirty", allow_dirty=True)
    body = json.loads(out.read_text())
    assert body["allow_dirty"] is True
    assert body["src_uncommitted_changes"] is True
    assert body["uncommitted_paths"] == ["experiments/new_input.jsonl"]


def test_the_flag_is_taken_off_the_command_line_for_the_script_parsers() -> None:
    argv = ["x.py", "--allow-dirty", "--report-only"]
    assert prov._take_flag(argv, "--allow-dirty") is True
    assert argv == ["x.py", "--report-only"]
    assert prov._take_flag(argv, "--allow-dirty") is False


def test_report_only_keeps_the_generating_command(repo: Path) -> None:
    target = repo / "experiments" / "results" / "r.json"
    prov.write_result(target, {"x": 1}, data=DATA, command="python m.py --no-cache")
    prov.write_result(target, {"x": 2}, data=DATA, command="python m.py --report-only")
    body = json.loads(target.read_text())
    assert body["command"] == "python m.py --report-only"
    assert body["generated_by"]["command"] == "python m.py --no-cache"
    # a second re-report passes the same generating command on
    prov.write_result(target, {"x": 3}, data=DATA, command="python m.py --resume --report-only")
    assert json.loads(target.read_text())["generated_by"]["command"] == "python m.py --no-cache"


def test_a_fresh_run_records_no_generated_by(repo: Path) -> None:
    target = repo / "experiments" / "results" / "r.json"
    prov.write_result(target, {}, data=DATA, command="python m.py --report-only")
    assert "generated_by" not in json.loads(target.read_text())  # nothing to carry over
    prov.write_result(target, {}, data=DATA, command="python m.py")
    assert "generated_by" not in json.loads(target.read_text())


def test_a_recorded_command_quotes_arguments_with_spaces(repo: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # `--only "wikichat-sim · rag"` must re-run as recorded: one argument, not three.
    monkeypatch.setattr(prov, "ARGV", ["experiments/t.py", "--only", "sim · rag", "--n", "3"])
    target = repo / "experiments" / "results" / "q.json"
    prov.write_result(target, {"x": 1}, data=DATA)
    assert json.loads(target.read_text())["command"] == (
        "python experiments/t.py --only 'sim · rag' --n 3")
