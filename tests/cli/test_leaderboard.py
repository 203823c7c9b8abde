"""`freshwiki leaderboard`, end to end: two machines' runs, exported, imported, shown.

The end-to-end test is what a user does: each "machine" (a FRESHWIKI_HOME) exports its runs
with the real `freshwiki` executable, a third imports both files twice, builds the site, and
the pages are opened in headless Chromium. The numbers checked are worked out by hand from
the scores in ``tests/evaluation/leaderboard_data.py``.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from freshwiki.evaluation import ResultsStore
from tests.browser import dump_dom as browser_dom
from tests.cli.invoke import run_main
from tests.evaluation.leaderboard_data import (
    SNAPSHOTS,
    commit,
    growover_runs,
    hellofresh_run,
    wikicontradict_run,
)

EXE = str(Path(sys.executable).with_name("freshwiki"))
RALM, VANILLA, RILM = growover_runs()


def freshwiki(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([EXE, "--home", str(home), *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    return proc


def machine(home: Path) -> ResultsStore:
    return ResultsStore(home / "runs" / "runs.sqlite")


def dump_dom(page: Path, profile: Path) -> str:  # (the page, checked whole)
    proc = browser_dom(page, profile)
    assert "</html>" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


class Rows(HTMLParser):
    """Per ``<tr data-run>``: each cell's data-period, data-mean and text."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, list[tuple[str | None, str | None, str]]] = {}
        self.polylines: list[dict[str, str | None]] = []
        self._run: str | None = None
        self._cell: list[str] | None = None
        self._attrs: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "tr" and a.get("data-run"):
            self._run = a["data-run"]
            self.rows[str(self._run)] = []
        elif tag == "td" and self._run and "data-period" in a:
            self._cell, self._attrs = [], a
        elif tag == "polyline":
            self.polylines.append(a)

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None and self._run:
            text = " ".join("".join(self._cell).split())
            self.rows[self._run].append((self._attrs.get("data-period"),
                                         self._attrs.get("data-mean"), text))
            self._cell = None
        elif tag == "tr":
            self._run = None


@pytest.mark.e2e
def test_two_machines_runs_merge_into_one_leaderboard_seen_in_a_browser(
        tmp_path: Path) -> None:
    a, b, c = tmp_path / "laptop", tmp_path / "gpu-box", tmp_path / "desk"
    with machine(a) as store:  # ralm on snapshots 1-2, vanilla, a HelloFresh run
        commit(store, RALM, only=SNAPSHOTS[:2])
        commit(store, VANILLA)
        commit(store, hellofresh_run("d4e5f6a1b2c3", "vanilla",
                                     {"2024-01": [1, 0, 1], "2024-03": [1, 1, 0]}))
    with machine(b) as store:  # ralm again on snapshots 2-3 (2 overlaps), rilm, the rest
        commit(store, RALM, only=SNAPSHOTS[1:])
        commit(store, RILM)
        commit(store, hellofresh_run("e5f6a1b2c3d4", "rag",
                                     {"2024-01": [1, 1, 1], "2024-03": [0, 0, 1]}))
        commit(store, wikicontradict_run("f6a1b2c3d4e5", "vanilla", "aa11" * 16,
                                         [1, 0.5, 0, 1], [1, 0, 0, 1]))
    exported = freshwiki(a, "runs", "export", "--out", str(tmp_path / "laptop.jsonl.gz"))
    # ralm 8 + vanilla 12 + HelloFresh 6 answers; 3 GrowOVER scorers, 1 HelloFresh one.
    assert "exported 3 run(s) (26 outputs, 66 scores, 0 failures)" in exported.stdout
    freshwiki(b, "runs", "export", "--out", str(tmp_path / "gpu.jsonl.gz"))
    files = [str(tmp_path / "laptop.jsonl.gz"), str(tmp_path / "gpu.jsonl.gz")]
    first = json.loads(freshwiki(c, "runs", "import", *files, "--json").stdout)
    second = json.loads(freshwiki(c, "runs", "import", *files, "--json").stdout)
    # growover 8 + 12 + (8 - 4 shared) + 6, hellofresh 6 + 6, wikicontradict 4 answers.
    assert first["rows"]["outputs"] == {"added": 46, "already_present": 4}
    assert first["runs_merged"] == [RALM.run_id]
    assert {t: r["added"] for t, r in second["rows"].items()} == dict.fromkeys(
        ("runs", "outputs", "scores", "failures"), 0)

    site = tmp_path / "site"
    built = json.loads(freshwiki(c, "leaderboard", "--out", str(site), "--json").stdout)
    assert [x["slug"] for x in built["boards"]] == ["growover", "hellofresh-notes",
                                                   "wikicontradict"]
    index = dump_dom(site / "index.html", tmp_path / "profile")
    assert index.count("<tr data-board=") == 3
    leader = re.search(r'<tr data-board="growover">.*?<td class="leader">(.*?)</td>', index,
                       re.S)
    assert leader is not None and "rilm/" in leader.group(1) and "0.750" in leader.group(1)
    assert "tie: " in index  # HelloFresh: both runs have 4/6 = .667 pooled

    dom = dump_dom(site / "boards" / "growover.html", tmp_path / "profile")
    rows = Rows()
    rows.feed(dom)
    assert list(rows.rows) == [RILM.run_id, RALM.run_id, VANILLA.run_id]  # by pooled mean
    # ralm's answers came from two machines, snapshot 2 from both: each counted once.
    ralm = rows.rows[RALM.run_id]
    assert [(p, m) for p, m, _ in ralm] == [
        (SNAPSHOTS[0], "0.625000"), (SNAPSHOTS[1], "0.500000"), (SNAPSHOTS[2], "0.750000"),
        ("all", "0.625000")]
    assert ralm[3][2].startswith("0.625 #2") and "12/12 scored" in ralm[3][2]
    rilm = rows.rows[RILM.run_id]
    assert rilm[1][2].startswith("0.500 #2.5") and "2/4 scored" in rilm[1][2]
    assert rilm[2] == (SNAPSHOTS[2], None, "no data")
    assert "6/8 scored" in rilm[3][2]
    # One line per run: ralm and vanilla over three snapshots, rilm over the first two.
    assert [len(str(p["points"]).split()) for p in rows.polylines] == [2, 3, 3]
    assert all(p.get("class") == "series" for p in rows.polylines)
    tau = re.search(r'id="mean-tau">(.*?)<', dom)
    assert tau is not None and html.unescape(tau.group(1)) == "-0.908"
    report = site / "runs" / RALM.run_id / "report.html"
    assert f'href="../runs/{RALM.run_id}/report.html"' in dom and report.is_file()


def test_leaderboard_refuses_what_it_cannot_do(
        _isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(["leaderboard"], monkeypatch, capsys)
    assert code == 2 and "no evaluation results" in err and "runs import" in err
    assert not (_isolated_home / "runs").exists()  # asking created no store
    with machine(_isolated_home) as store:
        commit(store, RALM)
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "todo.txt").write_text("keep me")
    code, _, err = run_main(["leaderboard", "--out", str(mine)], monkeypatch, capsys)
    assert code == 2 and "not a freshwiki leaderboard" in err
    assert (mine / "todo.txt").read_text() == "keep me"
    code, _, err = run_main(["leaderboard", "--scorer", "bleu"], monkeypatch, capsys)
    assert code == 2 and "--scorer bleu" in err and "growover-f1" in err
    code, _, err = run_main(["leaderboard", "--scorer", "growover=growover-em",
                             "--scorer", "growover=growover-hit"], monkeypatch, capsys)
    assert code == 2 and "two scorers for growover" in err
    code, out, _ = run_main(["leaderboard", "--scorer", "growover=growover-em"],
                            monkeypatch, capsys)
    assert code == 0 and "growover-em" in out
    page = (_isolated_home / "leaderboard" / "boards" / "growover.html").read_text()
    assert "one run: no ranking over time" in page
