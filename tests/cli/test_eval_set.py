"""`freshwiki eval-set` and `freshwiki runs agree` as a user types them (in-process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.invoke import run_main
from tests.evaluation.test_agree import RUN, RUN_B, add_run_b, build, labels_file, pooled_labels


@pytest.fixture(autouse=True)
def _testkit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FRESHWIKI_PLUGINS", "tests.systems.testkit")
    monkeypatch.setenv("COLUMNS", "200")


def eval_set(tmp_path: Path, answers: int) -> Path:
    model = tmp_path / "a.jsonl"
    model.write_text("".join(json.dumps({"text": "It is 4."}) + "\n" for _ in range(answers)))
    path = tmp_path / "set.toml"
    path.write_text(f"""description = "tiny twice"
[defaults]
benchmark = "tiny"
judge = "none"
model = "scripted:{model}"

[[runs]]
templates = ["plain", "terse"]
limit = 2

[[runs]]
system = "slow"
limit = 1
options = {{ delay = 0.0 }}
""")
    return path


def test_check_lists_the_runs_without_a_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = eval_set(tmp_path, answers=0)  # no answer scripted: nothing may be asked
    code, out, err = run_main(["eval-set", "check", str(path), "--json"], monkeypatch, capsys)
    assert code == 0, err
    runs = json.loads(out)["runs"]
    assert [(r["system"], r["templates"], r["limit"], r["line"]) for r in runs] == [
        ("vanilla", ["plain", "terse"], 2, 7), ("slow", None, 1, 11)]
    code, out, err = run_main(["eval-set", "run", str(path), "--dry-run"], monkeypatch, capsys)
    assert code == 0 and "2 run(s)" in out and "tiny twice" in out


def test_run_prints_one_table_and_resumes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = eval_set(tmp_path, answers=5)  # 2 samples x 2 templates + 1 sample: 5 answers
    code, out, err = run_main(["eval-set", "run", str(path), "--json"], monkeypatch, capsys)
    assert code == 0, err
    data = json.loads(out)
    # "It is 4." is right on t02 (2 plus 2) only: 1/2 per template on the first run, 0/1 on
    # the second (t01 only).
    assert [(r["system"], r["template"], r["n"], r["mean"]) for r in data["summary"]] == [
        ("vanilla", "plain", 2, 0.5), ("vanilla", "terse", 2, 0.5), ("slow", "plain", 1, 0.0)]
    assert [r["new_outputs"] for r in data["runs"]] == [4, 1]
    code, out, err = run_main(["eval-set", "run", str(path)], monkeypatch, capsys)
    assert code == 0, err  # the script has no answer left: a new model call would fail
    ids = [r["run_id"] for r in data["runs"]]
    assert all(i in out for i in ids) and "95 % CI" in out and "0.500" in out


def test_an_unknown_system_stops_before_any_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], _isolated_home: Path) -> None:
    path = eval_set(tmp_path, answers=5)
    path.write_text(path.read_text().replace('system = "slow"', 'system = "slowest"'))
    code, _out, err = run_main(["eval-set", "run", str(path)], monkeypatch, capsys)
    squeezed = "".join(err.split())  # rich wraps long paths anywhere
    assert code == 2 and f"{path}:12:runs[1].system:nosystem'slowest'" in squeezed, err
    assert not (_isolated_home / "runs").exists()  # the valid first run did not start


def test_runs_agree_prints_kappa_and_the_confusion(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], _isolated_home: Path) -> None:
    (_isolated_home / "runs").mkdir(parents=True)
    build(_isolated_home / "runs" / "runs.sqlite").close()
    labels = labels_file(tmp_path / "labels.jsonl")
    code, out, err = run_main(["runs", "agree", RUN[:6], "--labels", str(labels), "--scorer",
                               "judge", "--json"], monkeypatch, capsys)
    assert code == 0, err
    data = json.loads(out)
    # Hand-counted in tests/evaluation/test_agree.py: [[5, 1], [1, 3]], kappa 28/48.
    assert data["confusion"] == [[5, 1], [1, 3]] and abs(data["kappa"] - 28 / 48) < 1e-12
    assert data["per_class"]["incorrect"]["f1"] == 0.75
    code, out, err = run_main(["runs", "agree", RUN, "--labels", str(labels), "--scorer",
                               "judge"], monkeypatch, capsys)
    assert code == 0, err
    assert "κ 0.583" in out and "reader A" in out and "1 label(s) without a verdict" in out
    code, out, err = run_main(["runs", "agree", RUN, "--labels", str(labels)], monkeypatch,
                              capsys)
    assert code == 2 and "--scorer" in err


def test_runs_agree_pools_several_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], _isolated_home: Path) -> None:
    (_isolated_home / "runs").mkdir(parents=True)
    with build(_isolated_home / "runs" / "runs.sqlite") as store:
        add_run_b(store)
    labels = pooled_labels(tmp_path / "labels.jsonl")
    code, out, err = run_main(["runs", "agree", RUN, RUN_B[:6], "--labels", str(labels),
                               "--scorer", "judge", "--json"], monkeypatch, capsys)
    assert code == 0, err
    data = json.loads(out)
    # Hand-counted in tests/evaluation/test_agree.py: [[5, 5], [1, 3]], kappa 20/104.
    assert data["confusion"] == [[5, 5], [1, 3]] and abs(data["kappa"] - 20 / 104) < 1e-12
