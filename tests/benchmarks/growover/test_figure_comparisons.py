"""The GrowOVER figure's paired comparisons (experiments/growover_run.py: ``comparisons``).

The issue's goal is a statement about RiLM minus RaLM on the same questions, per evaluation
snapshot and type; the README's table comes from these rows. Four questions written out by
hand, every expected difference and win/loss count worked out from them in the comments.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from freshwiki.evaluation import RunInfo, RunResults, ScoredItem
from tests.benchmarks.growover.helpers import experiment_script

T = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
QUESTIONS = {"s1": ("2023-12-31", "new"), "s2": ("2023-12-31", "new"),
             "s3": ("2023-12-31", "changed"), "s4": ("2026-08-31", "new")}


def _run(run_id: str, system: str, f1: dict[str, float]) -> RunResults:
    info = RunInfo(run_id=run_id, benchmark="growover", system=system, model="m", config={},
                   code_version="0", model_hashes={}, created_at=T, updated_at=T)
    items = tuple(ScoredItem(sample_id=s, template="qa", scorer="growover-f1", value=v,
                             metadata={"snapshot": QUESTIONS[s][0], "type": QUESTIONS[s][1]})
                  for s, v in f1.items())
    return RunResults(info=info, items=items)


class _Store:
    def __init__(self, *runs: RunResults) -> None:
        self.runs = {r.info.run_id: r for r in runs}

    def load_run(self, run_id: str) -> RunResults:
        return self.runs[run_id]


LATER = ["2023-12-31", "2026-08-31"]
STORE = _Store(
    _run("R", "ralm", {"s1": .5, "s2": 1.0, "s3": 0.0, "s4": .5}),
    _run("X", "rilm", {"s1": 1.0, "s2": 1.0, "s3": 0.0}),  # s4 failed: unpaired
    _run("G", "grounded", {"s1": 0.0}),
)
RUNS: list[dict[str, Any]] = [
    {"system": "ralm", "kind": "qa", "run_id": "ALL", "options": {}, "snapshots": ["x", *LATER]},
    {"system": "ralm", "kind": "qa", "run_id": "R", "options": {}, "snapshots": LATER},
    {"system": "rilm", "kind": "qa", "run_id": "X", "options": {"arr": "paper"},
     "snapshots": LATER},
    {"system": "grounded", "kind": "qa", "run_id": "G", "options": {}, "snapshots": LATER},
]


def _rows() -> dict[tuple[str, str], dict[str, Any]]:
    rows = experiment_script("growover_run").comparisons(STORE, RUNS, "qa", LATER,
                                                        "growover-f1")
    # Only rilm is compared: RaLM itself, the all-snapshot RaLM run and systems outside the
    # figure's list give no rows. Cells: 2 snapshots x 2 types, 2 types pooled, 2 snapshots.
    assert {r["system"] for r in rows} == {"rilm"} and len(rows) == 8
    assert {r["ralm_run_id"] for r in rows} == {"R"}
    return {(r["snapshot"], r["type"]): r for r in rows}


def test_each_cell_pairs_the_same_questions() -> None:
    rows = _rows()
    # 2023 new: s1 1.0 vs .5 (win), s2 1.0 vs 1.0 (tie): means 1.0 and .75, difference +.25.
    new = rows[("2023-12-31", "new")]
    assert (new["n"], new["mean"], new["ralm_mean"]) == (2, 1.0, .75)
    assert abs(new["difference"] - .25) < 1e-9
    assert (new["wins"], new["losses"], new["ties"]) == (1, 0, 1)
    assert new["arr"] == "paper"
    # 2023 pooled over types: s1-s3, means 2/3 and 1/2, difference +1/6.
    pooled = rows[("2023-12-31", "all")]
    assert pooled["n"] == 3 and abs(pooled["difference"] - 1 / 6) < 1e-9


def test_unpaired_questions_are_counted_not_used() -> None:
    rows = _rows()
    # 2026 new: only RaLM answered s4, so nothing is paired and no difference is claimed.
    missing = rows[("2026-08-31", "new")]
    assert (missing["n"], missing["unpaired"], missing["difference"]) == (0, 1, None)
    # New pooled over both snapshots: s1, s2 paired, s4 unpaired.
    new = rows[("all", "new")]
    assert (new["n"], new["unpaired"]) == (2, 1)


def test_markdown_skips_cells_without_pairs() -> None:
    script = experiment_script("growover_run")
    lines = script.comparison_lines(script.comparisons(STORE, RUNS, "qa", LATER,
                                                       "growover-f1"))
    body = [x for x in lines if x.startswith("| rilm")]
    # 8 cells, of which 2026 changed (no question) and 2026 new / 2026 all (s4 unpaired) have
    # no pairs.
    assert len(body) == 5
    assert any("| 2023-12-31 | new | 2 | 1.000 | 0.750 | +0.250" in x and "| 1/0/1 |" in x
               for x in body)
