"""experiments/wikicontradict_judge.py, now a caller of the runner and of ``runs agree``.

The committed result files were computed by the script's earlier, separate implementation
(``agreement_report`` over verdicts it held in memory). Given the same verdicts as stored
runs, the ``runs agree`` machinery must give every figure of those files again: that is the
check that the script, rebuilt on runs, still measures what the files say. A second test
runs the script end to end (replay runs through the runner, a scripted judge) and checks
that it writes the committed keys.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from freshwiki.benchmarks.wikicontradict import WikiContradict
from freshwiki.evaluation import RunInfo, RunResults
from freshwiki.results import ScoredItem
from tests.experiments.scripts import load_script

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS = REPO / "experiments"
RESULTS = EXPERIMENTS / "results"
DATASET = "wikicontradict/wikicontradict.json"


def _close(a: Any, b: Any, where: str = "") -> None:
    """``a`` and ``b`` equal, floats to 1e-9, lists and tuples alike."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), where
        for key in a:
            _close(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list | tuple):
        assert isinstance(b, list | tuple) and len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, f"{where}[{k}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {a} != {b}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def _runs(module: ModuleType, committed: dict[str, Any], labelled: list[Any],
          columns: dict[str, str], metadata: dict[str, Any]) -> dict[str, Any]:
    """The committed verdicts as stored runs: one per column and group, as the script makes."""
    out = {}
    now = dt.datetime.now(dt.UTC)
    for name, scorer in columns.items():
        runs: dict[str, RunResults] = {}
        for group in dict.fromkeys(i.group for i in labelled):
            spec = {i[f"{name} spec"] for i, lab in zip(committed["items"], labelled,
                                                          strict=True)
                    if lab.group == group and f"{name} spec" in i}
            items = tuple(
                ScoredItem(lab.row.sample_id, lab.row.template, scorer, 0.0,
                           label=item[name], explanation=item[f"{name} explanation"],
                           metadata=metadata[lab.row.sample_id], output=lab.row.response)
                for item, lab in zip(committed["items"], labelled, strict=True)
                if lab.group == group)
            info = RunInfo(f"{name}-{group}"[:40], "wikicontradict", "replay", "m",
                           {"judge_spec": spec.pop() if spec else None}, "v", {}, now, now)
            runs[group] = RunResults(info, items)
        out[name] = module.Column(scorer, runs)
    return out


FIGURES = ("n", "label_counts", "scorers", "by_template", "by_model", "by_system",
           "by_contradiction", "by_judge", "shares_by_model", "shares_by_template")


def test_runs_agree_gives_every_committed_real_figure_again(shared_data: Path) -> None:
    module = load_script("wikicontradict_judge")
    committed = json.loads((RESULTS / "wikicontradict_judge_real.json").read_text("utf-8"))
    labelled = module.read_labelled(module.REAL_LABELS, by_run=True)
    # The committed items are the labels file's lines, in order, with the same labels.
    assert [(i["sample_id"], i["template"], i["human"]) for i in committed["items"]] == [
        (x.row.sample_id, x.row.template, x.row.label) for x in labelled]
    metadata = {s.id: dict(s.metadata)
                for s in WikiContradict.from_file(shared_data / DATASET).samples()}
    judges = [n for n in committed["scorers"] if n.startswith(module.JUDGE)]
    columns = _runs(module, committed, labelled,
                    {**{n: module.JUDGE for n in judges}, module.MATCH: module.MATCH},
                    metadata)
    result, _ = module.evaluate_columns(labelled, columns, dict.fromkeys(judges, ""),
                                        module.REAL_LABELS, False)
    for key in FIGURES:
        _close(committed[key], result[key], key)
    assert result["left_out"] == {}
    assert result["n"] == 180


def test_runs_agree_gives_every_committed_handwritten_figure_again(shared_data: Path) -> None:
    module = load_script("wikicontradict_judge")
    committed = json.loads((RESULTS / "wikicontradict_judge.json").read_text("utf-8"))
    labelled = module.read_labelled(module.HUMAN_LABELS, by_run=False)
    metadata = {s.id: dict(s.metadata)
                for s in WikiContradict.from_file(shared_data / DATASET).samples()}
    columns = _runs(module, committed, labelled,
                    {module.JUDGE: module.JUDGE, module.MATCH: module.MATCH}, metadata)
    result, _ = module.evaluate_columns(labelled, columns, {module.JUDGE: ""},
                                        module.HUMAN_LABELS, False)
    for key in FIGURES:
        _close(committed[key], result[key], key)


def _judge_saying_correct(tmp_path: Path, calls: int) -> Path:
    """A scripted judge file whose every reply reads: both answers given, the conflict
    acknowledged, neither preferred (``correct`` under templates 4 and 5)."""
    verdict = {"answer1_given": True, "answer2_given": True, "conflict_acknowledged": True,
               "one_preferred": False, "no_conflict_stated": False}
    script = tmp_path / "judge.jsonl"
    script.write_text("".join(json.dumps({"text": json.dumps(verdict)}) + "\n"
                              for _ in range(calls)), encoding="utf-8")
    return script


def keys(value: Any, prefix: str = "") -> set[str]:
    """Every key path; group values and scorer names with a judge's spec become ``*``."""
    out: set[str] = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            name = "*" if prefix.rstrip(".").rsplit(".", 1)[-1] in GROUPED else key
            out.add(prefix + name)
            out |= keys(inner, prefix + name + ".")
    elif isinstance(value, list):
        for inner in value:
            out |= keys(inner, prefix + "[].")
    return out


GROUPED = ("by_template", "by_model", "by_system", "by_contradiction", "by_judge",
           "shares_by_model", "shares_by_template", "runs")


def test_the_script_replays_through_the_runner_and_writes_the_committed_keys(
    shared_data: Path, tmp_path: Path,
) -> None:
    # Three hand-written answers (one template 4, two template 5) and a scripted judge that
    # says of each: both answers given, the conflict acknowledged, neither preferred.
    # Templates 4 and 5 share the rule "both_answers", under which that is "correct": the
    # judge says "correct" to all three.
    lines = (REPO / "src/freshwiki/benchmarks/wikicontradict/validation/human_labels.jsonl"
             ).read_text("utf-8").splitlines()[:3]
    labels = tmp_path / "three.jsonl"
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    script = _judge_saying_correct(tmp_path, 3)
    out = tmp_path / "hand.json"
    command = [sys.executable, str(EXPERIMENTS / "wikicontradict_judge.py"), "--set",
               "handwritten", "--labels", str(labels), "--judge", f"scripted:{script}",
               "--dataset", str(shared_data / DATASET), "--out", str(out), "--allow-dirty"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"),
           "FRESHWIKI_HOME": str(tmp_path / "home")}
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=REPO,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    written = json.loads(out.read_text(encoding="utf-8"))
    committed = json.loads((RESULTS / "wikicontradict_judge.json").read_text("utf-8"))
    assert keys(committed) <= keys(written)  # nothing lost
    # Only the runs, the labels left out and each judge call's run are new (the two
    # provenance keys appear when the tree has uncommitted changes, as during development).
    assert keys(written) - keys(committed) - {"allow_dirty", "uncommitted_paths"} == {
        "runs", "runs.*", "left_out", "judge_calls.[].run_id"}
    # Labels of the three lines, read by hand: wc-002-q1/5 correct, wc-008-q1/4 partially
    # correct, wc-009-q1/5 incorrect. The judge says "correct" to all three: 1 of 3 agree.
    # Cohen's kappa: p_o = 1/3; the judge's marginal is all "correct" and the labels' share of
    # "correct" is 1/3, so p_e = 1 * 1/3 = 1/3 and kappa = (1/3 - 1/3) / (1 - 1/3) = 0.
    judge = written["scorers"]["wikicontradict-judge"]
    assert (judge["n"], judge["accuracy"], judge["kappa"]) == (3, pytest.approx(1 / 3), 0.0)
    assert judge["confusion"]["partially_correct"]["correct"] == 1
    assert written["judge_calls"][0]["calls"] == 3
    (run_id,) = written["runs"].values()
    # Run again: the same run, already complete, asks the judge nothing.
    again = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=REPO,
                           env=env)
    assert again.returncode == 0, again.stderr
    rewritten = json.loads(out.read_text(encoding="utf-8"))
    assert list(rewritten["runs"].values()) == [run_id]
    assert rewritten["judge_calls"] == []
    assert rewritten["scorers"] == written["scorers"]


def test_the_rule_script_gives_the_committed_rule_file_again(tmp_path: Path) -> None:
    # The committed real file lists no runs: its items are taken as runs, and runs agree over
    # them must give every row of the committed rule file (computed by the earlier code).
    out = tmp_path / "rule.json"
    proc = subprocess.run(
        [sys.executable, str(EXPERIMENTS / "wikicontradict_judge_rule.py"), "--out", str(out),
         "--allow-dirty"], capture_output=True, text=True, timeout=600, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO / "src"),
             "FRESHWIKI_HOME": str(tmp_path / "home")})
    assert proc.returncode == 0, proc.stderr
    written = json.loads(out.read_text(encoding="utf-8"))
    committed = json.loads((RESULTS / "wikicontradict_judge_rule.json").read_text("utf-8"))
    for key in ("rows", "choices", "needs_model_run", "installed", "configured_model", "from"):
        _close(committed[key], written[key], key)
    assert "runs" not in written


def test_the_real_set_pools_files_and_a_file_without_provenance_is_refused(
    shared_data: Path, tmp_path: Path,
) -> None:
    # Two labels files in the real set's format, three answers from two source runs: the
    # script makes one replay run per source run and writes where each file's sample came from.
    lines = [json.loads(line) for line in
             (REPO / "src/freshwiki/benchmarks/wikicontradict/validation/human_labels.jsonl"
              ).read_text("utf-8").splitlines()[:3]]
    files = [tmp_path / "first.jsonl", tmp_path / "second.jsonl"]
    for path, rows, run in ((files[0], lines[:2], "r1"), (files[1], lines[2:], "r2")):
        path.write_text("".join(json.dumps({**row, "run_id": run, "system": "vanilla",
                                            "model": "local:some-model"}) + "\n"
                                for row in rows), encoding="utf-8")
    script = _judge_saying_correct(tmp_path, 3)
    out = tmp_path / "real.json"
    command = [sys.executable, str(EXPERIMENTS / "wikicontradict_judge.py"), "--set", "real",
               "--real-labels", str(files[0]), "--real-labels", str(files[1]),
               "--real-judge", f"scripted:{script}", "--also-judge", "none",
               "--dataset", str(shared_data / DATASET), "--real-out", str(out),
               "--allow-dirty"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"),
           "FRESHWIKI_HOME": str(tmp_path / "home")}
    # Neither file is in REAL_SETS: without --real-sample nothing runs and nothing is written.
    refused = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=REPO,
                             env=env)
    assert refused.returncode != 0
    assert "no provenance for" in refused.stderr and str(files[0]) in refused.stderr
    assert not out.exists() and not (tmp_path / "home").exists()

    proc = subprocess.run([*command, "--real-sample", "three rows written for this test"],
                          capture_output=True, text=True, timeout=600, cwd=REPO, env=env)
    assert proc.returncode == 0, proc.stderr
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["labels_files"] == [str(f) for f in files]
    assert "labels_file" not in written  # one name would hide the second file
    assert sorted(written["runs"]["wikicontradict-judge"]) == ["r1", "r2"]
    assert written["n"] == 3
    assert written["data"]["sample"] == "three rows written for this test"
    # Labels read by hand: correct, partially correct, incorrect; the judge says "correct"
    # to all three, so one of three agrees.
    assert written["scorers"]["wikicontradict-judge"]["accuracy"] == pytest.approx(1 / 3)
