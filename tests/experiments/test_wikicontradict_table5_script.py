"""The Table 5 script's rows: shares and Wilson intervals per instance type, from stored verdicts.

Four hand-made verdicts of one run: explicit C, explicit C, implicit PC, and an instance
without a type labelled IC (counted under "all" only, as the paper's table does). Every
expected figure is worked out by hand below.
"""

from __future__ import annotations

import datetime as dt
import math

from freshwiki.benchmarks.wikicontradict import WikiContradict
from freshwiki.evaluation import RunInfo, RunResults
from freshwiki.results import ScoredItem
from tests.experiments.scripts import load_script

T = load_script("wikicontradict_table5")
M = "wikicontradict-match"


def _run() -> RunResults:
    now = dt.datetime.now(dt.UTC)
    rows = [("wc-000-q1", "correct", "explicit"), ("wc-001-q1", "correct", "explicit"),
            ("wc-002-q1", "partially_correct", "implicit"), ("wc-003-q1", "incorrect", None)]
    items = tuple(
        ScoredItem(sid, "5", M, 0.0, label=label, explanation="",
                   metadata={"contradiction": kind} if kind else {}, output="answer")
        for sid, label, kind in rows)
    info = RunInfo("r1", WikiContradict.name, "vanilla", "m", {}, "v", {}, now, now)
    return RunResults(info, items)


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_rows_give_shares_and_intervals_per_type() -> None:
    [row] = T.model_rows(_run(), "local:m")
    assert row["model"] == "local:m" and row["scorer"] == M and row["run_id"] == "r1"
    assert row["all"]["n"] == 4 and row["explicit"]["n"] == 2 and row["implicit"]["n"] == 1
    c = row["all"]["shares"]["correct"]
    assert c["k"] == 2 and c["share"] == 0.5
    low, high = _wilson(2, 4)  # 2 of 4: about [.150, .850]
    assert math.isclose(c["ci"][0], low, abs_tol=1e-6) and math.isclose(c["ci"][1], high,
                                                                         abs_tol=1e-6)
    assert row["explicit"]["shares"]["correct"]["share"] == 1.0
    assert row["implicit"]["shares"]["partially_correct"]["k"] == 1
    assert row["implicit"]["shares"]["correct"]["k"] == 0
    # The untyped IC answer counts under "all" only.
    assert row["all"]["shares"]["incorrect"]["k"] == 1
    assert row["explicit"]["shares"]["incorrect"]["k"] == 0


def test_several_templates_give_one_row_each_and_unasked_ones_none() -> None:
    now = dt.datetime.now(dt.UTC)
    items = (
        ScoredItem("wc-000-q1", "4", M, 0.0, label="partially_correct", explanation="",
                   metadata={"contradiction": "explicit"}, output="a"),
        ScoredItem("wc-000-q1", "5", M, 1.0, label="correct", explanation="",
                   metadata={"contradiction": "explicit"}, output="b"),
        ScoredItem("wc-000-q1", "2", M, 1.0, label="correct", explanation="",
                   metadata={"contradiction": "explicit"}, output="c"),
    )
    run = RunResults(RunInfo("r2", WikiContradict.name, "vanilla", "m", {}, "v", {}, now, now),
                     items)
    rows = T.model_rows(run, "local:m", ["5", "4", "3"])
    # Template 3 is not in the run: no row; the others in the order asked.
    assert [row["template"] for row in rows] == ["5", "4"]
    assert rows[0]["all"]["shares"]["correct"]["k"] == 1
    assert rows[1]["all"]["shares"]["partially_correct"]["k"] == 1
    assert rows[1]["all"]["shares"]["correct"]["k"] == 0
    # The default is the paper's Table 5 template alone.
    assert [row["template"] for row in T.model_rows(run, "local:m")] == ["5"]
