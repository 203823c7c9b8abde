"""``freshwiki growover build`` on bad input, through the real CLI and build code.

The generating model is scripted (it answers each generation prompt from the sentences it
shows, see ``tests/benchmarks/growover/helpers.py``); everything else is real: the history
reader, the cuts, the aligner with the real sentence embedder, the dataset files, the index.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from freshwiki.benchmarks.growover import Dataset
from freshwiki.config import Settings
from freshwiki.llm import register_backend
from freshwiki.llm.backends.scripted import ScriptedBackend
from tests.benchmarks.growover.helpers import answering
from tests.benchmarks.growover.test_candidates import (
    ALPHA_1,
    ALPHA_1B,
    ALPHA_REST,
    BETA,
    HEAD,
    page,
    revision,
)
from tests.cli.invoke import run_main


def _generator(rest: str, settings: Settings) -> ScriptedBackend:
    return ScriptedBackend([answering()] * 50, model_id="growover-cli-gen")  # type: ignore[list-item]


register_backend("growover-cli-gen", _generator)
CUTS = "2020-01-31,2020-02-29,2020-03-31"


def build(tmp_path: Path, name: str, *pages: str, monkeypatch: pytest.MonkeyPatch,
          capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    history = tmp_path / f"{name}.xml"
    history.write_text(HEAD + "".join(pages) + "</mediawiki>", encoding="utf-8")
    return run_main(["growover", "build", str(history), "--name", name, "--cuts", CUTS,
                     "--model", "growover-cli-gen:x", "--no-judge", "--kinds", "qa",
                     "--json"], monkeypatch, capsys)


def test_a_history_with_a_single_revision_is_refused_before_any_generation(
        tmp_path: Path, _isolated_home: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = build(tmp_path, "single", page(11, "Beta", revision(
        201, "2020-01-03T00:00:00Z", BETA)), monkeypatch=monkeypatch, capsys=capsys)
    assert code == 2 and out == ""
    assert "no revision of single.xml falls after the first cut 2020-01-31" in err
    assert "single revision per page" in err and "hint:" in err and "single cut" in err
    assert not (_isolated_home / "growover" / "single").exists()  # nothing half-built
    # One cut is a valid request for one snapshot of such a history.
    history = tmp_path / "single.xml"
    code, out, _ = run_main(["growover", "build", str(history), "--name", "single",
                             "--cuts", "2020-01-31", "--model", "growover-cli-gen:x",
                             "--no-judge", "--kinds", "qa", "--json"], monkeypatch, capsys)
    assert code == 0 and [s["label"] for s in json.loads(out)["snapshots"]] == ["2020-01-31"]


def test_a_snapshot_with_no_change_is_recorded_and_reported(
        tmp_path: Path, _isolated_home: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # Alpha changes on 10 March only: the February snapshot repeats January's.
    code, out, err = build(tmp_path, "quiet", page(
        10, "Alpha", revision(101, "2020-01-05T10:00:00Z", f"{ALPHA_1} {ALPHA_REST}"),
        revision(102, "2020-03-10T10:00:00Z", f"{ALPHA_1B} {ALPHA_REST}")),
        monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0, err
    counts = {s["label"]: s["counts"] for s in json.loads(out)["snapshots"]}
    assert (counts["2020-02-29"]["qa_unchanged"], counts["2020-02-29"]["qa_new"],
            counts["2020-02-29"]["qa_changed"]) == (1, 0, 0)
    assert counts["2020-03-31"]["qa_changed"] == 1  # 100 -> 120 inhabitants
    assert ("note: snapshot 2020-02-29: no article changed since 2020-01-31: all 1 are at "
            "the revision they had then") in " ".join(err.split())
    assert "note: snapshot 2020-03-31: no article" not in err
    dataset = Dataset.open(_isolated_home / "growover" / "quiet")
    february, march = dataset.snapshots[1], dataset.snapshots[2]
    assert [(s.stage, s.page_id) for s in dataset.skips(february)] == [("snapshot", 0)]
    assert all(s.stage != "snapshot" for s in dataset.skips(march))
    assert set(dataset.pages(february)) == {10}  # the record is not an article


def test_a_page_deleted_mid_series_is_a_recorded_skip(
        tmp_path: Path, _isolated_home: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # Gamma is blanked in February (deleted in place) and written again in March; Alpha
    # stays, so the snapshots are not empty.
    gamma = BETA.replace("Beta", "Gamma")
    code, out, err = build(tmp_path, "gone", page(
        10, "Alpha", revision(101, "2020-01-05T10:00:00Z", f"{ALPHA_1} {ALPHA_REST}"),
        revision(102, "2020-03-10T10:00:00Z", f"{ALPHA_1B} {ALPHA_REST}")), page(
        12, "Gamma", revision(301, "2020-01-07T08:00:00Z", gamma),
        revision(302, "2020-02-12T08:00:00Z", ""),
        revision(303, "2020-03-02T08:00:00Z", gamma)), monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0, err
    counts = {s["label"]: s["counts"] for s in json.loads(out)["snapshots"]}
    assert [counts[c]["pages"] for c in ("2020-01-31", "2020-02-29", "2020-03-31")] == [2, 1, 2]
    flat = " ".join(err.split())
    assert ("note: snapshot 2020-02-29: Gamma skipped: the article is empty at 2020-02-29: "
            "no sentences after cleaning: its 1 instance(s) are dropped") in flat
    # Alpha did not change in February but Gamma did: not a snapshot without change.
    assert "no article changed" not in flat
    dataset = Dataset.open(_isolated_home / "growover" / "gone")
    february, march = dataset.snapshots[1], dataset.snapshots[2]
    assert {i.title for i in dataset.instances(february)} == {"Alpha"}
    # Back in March, Gamma starts afresh: its question is New (generated again), not carried.
    assert {(i.title, i.type) for i in dataset.instances(march)} >= {("Gamma", "new")}
