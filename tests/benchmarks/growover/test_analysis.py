"""GrowOVER's RiLM sections (the paper's Tables 7 and 3) from a small hand-made rilm run.

The run goes through the real pieces after the system: the GrowOVER scorers score each stage,
the results store keeps the scores, ``load_run`` joins them and ``write_report`` lays them
out. Every expected number below was worked out by hand from the table in this file.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import html
import math
import re
from pathlib import Path
from typing import Any

import pytest

from freshwiki.benchmarks import Output, Sample, Task
from freshwiki.benchmarks.growover import BleuScorer, EMScorer, F1Scorer, HitScorer
from freshwiki.benchmarks.growover.analysis import (
    DIALOGUE_SCORERS,
    GROWOVER,
    HIT,
    QA_SCORERS,
    rilm_samples,
    rilm_sections,
)
from freshwiki.evaluation import ResultsStore, RunInfo, write_report
from freshwiki.llm import Message
from freshwiki.stats import wilson_ci

WHEN = dt.datetime(2026, 9, 1, tzinfo=dt.UTC)
S1, S2 = "2023-12-31", "2026-08-31"
GOLD = "Paris"
# (id, snapshot, type, adopted, first answer, second answer, chosen, ARR hits paper/query/append)
# F1 against "Paris": "Paris" 1, "Lyon" 0, "Paris France" 2/3 (precision 1/2, recall 1).
# EM: only "Paris" is 1.
ROWS: list[tuple[str, str, str, bool | None, str | None, str | None, str, str]] = [
    ("s1", S1, "new", True, "Paris", None, "first", ""),
    ("s2", S1, "new", False, "Lyon", "Paris France", "second", "p"),
    ("s3", S1, "changed", False, "Paris France", "Lyon", "first", "q"),
    ("s4", S2, "unchanged", True, "Lyon", None, "first", ""),
    ("s5", S2, "changed", False, "Paris", None, "first", "-"),  # ARR found nothing
    ("s6", S2, "new", False, "Lyon", "Paris", "second", "pqa"),
    ("s7", S2, "new", None, None, None, "none", ""),  # first search found nothing: not counted
]
# Table 7, F1, all snapshots and types:
#   adopted s1 1, s4 0 -> .5 (n 2); before ARR s2 0, s3 2/3, s5 1, s6 0 -> 5/12 (n 4);
#   after ARR s2 2/3, s3 0, s6 1 -> 5/9 (n 3); final selection s2 2/3, s3 2/3, s5 1, s6 1 -> 5/6
#   (n 4); final over all s1..s6 -> (1 + 2/3 + 2/3 + 0 + 1 + 1) / 6 = 13/18 (n 6).
# Table 7, EM, all: adopted 1/2; before 1/4 (s5); after 1/3 (s6); selected 2/4; final 3/6.
# Table 3 on s2, s3, s5, s6: ARR (paper) 2/4, query only 2/4, always append 1/4.


def _trace(row: tuple[Any, ...]) -> dict[str, Any]:
    sid, _, _, adopted, first, second, chosen, arr = row
    if first is None:
        return {"first": None, "second": None, "adopted": None, "chosen": "none",
                "retrieved": []}
    trace: dict[str, Any] = {
        "adopted": adopted, "chosen": chosen, "first": {"answer": first},
        "second": {"answer": second} if second is not None else None,
        "retrieved": [{"id": f"e-{sid}" if adopted else "x"}],
    }
    if not adopted:
        def found(mode: str) -> list[dict[str, str]]:
            return [] if arr == "-" else [{"id": f"e-{sid}" if mode[0] in arr else "y"}]
        trace["arr"] = {"mode": "paper", "weight": 0.3, "excluded": ["x"],
                        "retrieved": found("paper"),
                        **{m: found(m) for m in ("paper", "query", "append")}}
    return trace


def _info(run_id: str = "rilm0000000a", kind: str = "qa", arr: str = "paper") -> RunInfo:
    scorers = [*(QA_SCORERS if kind == "qa" else DIALOGUE_SCORERS), HIT]
    return RunInfo(run_id=run_id, benchmark=GROWOVER, system="rilm", model="scripted:x",
                   config={"templates": [kind], "scorers": scorers, "limit": None,
                           "system_config": {"gate": "g.json@0", "k": 3, "arr": arr}},
                   code_version="t", model_hashes={"model": "m"}, created_at=WHEN,
                   updated_at=WHEN)


def fill(store: ResultsStore, *, kind: str = "qa", run_id: str = "rilm0000000a",
         arr: str = "paper") -> str:
    """Score every row with the real GrowOVER scorers and commit it, as the runner would."""
    store.open_run(_info(run_id, kind, arr))
    scorers = ([F1Scorer(), EMScorer()] if kind == "qa" else [BleuScorer()]) + [HitScorer()]
    for i, row in enumerate(ROWS):
        sid, snapshot, itype, _, first, second, chosen, _ = row
        final = second if chosen == "second" else (first or "I do not know")
        sample = Sample(id=sid, input="Where?", targets=(GOLD,),
                        metadata={"snapshot": snapshot, "type": itype, "kind": kind,
                                  "evidence_passages": [f"e-{sid}"]})
        task = Task(sample=sample, template=kind, messages=(Message.user("Where?"),),
                    query="Where?")
        output = Output(str(final), trace=_trace(row))
        store.commit_output(run_id, sample, kind, output, sample_index=i)
        for scorer in scorers:
            store.commit_score(run_id, sid, kind, scorer.name,
                               asyncio.run(scorer.score(task, output)))
    return run_id


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    s = ResultsStore(tmp_path / "runs.sqlite")
    fill(s)
    return s


def test_the_scorers_record_each_stage_and_load_run_joins_them(store: ResultsStore) -> None:
    run = store.load_run("rilm0000000a")
    by_id = {r.sample_id: r for r in rilm_samples(run.items)}
    assert sorted(by_id) == ["s1", "s2", "s3", "s4", "s5", "s6"]  # s7 had no first pass
    s2 = by_id["s2"]
    assert s2.adopted is False and s2.arr == {"paper": 1.0, "query": 0.0, "append": 0.0}
    f1 = s2.scores["growover-f1"]
    assert (f1["first"], f1["second"], f1["final"], f1["chosen"]) == pytest.approx(
        (0.0, 2 / 3, 2 / 3, "second"))  # type: ignore[arg-type]
    assert by_id["s5"].scores["growover-em"]["second"] is None
    assert by_id["s1"].arr == {} and by_id["s1"].adopted is True


def test_table7_by_hand(store: ResultsStore) -> None:
    (section,) = rilm_sections([store.load_run("rilm0000000a")], ["rilm"])
    assert (section.kind, section.arr, section.n, section.n_adopted) == ("qa", "paper", 6, 2)
    f1, em = section.table7
    assert (f1.scorer, em.scorer) == ("growover-f1", "growover-em")
    assert f1.groups == ((S1, 4), (S2, 4), ("all", 4))
    assert [c for c in f1.columns if c[0] == S1] == [
        (S1, "new"), (S1, "changed"), (S1, "unchanged"), (S1, "all")]
    expected = {"adopted": (1 / 2, 2), "before": (5 / 12, 4), "after": (5 / 9, 3),
                "selected": (5 / 6, 4), "final": (13 / 18, 6)}
    for row, (mean, n) in expected.items():
        cell = f1.cell(row, "all", "all")
        assert (cell.mean, cell.n) == (pytest.approx(mean), n), row
        assert cell.ci is not None and 0.0 <= cell.ci.low <= mean <= cell.ci.high <= 1.0
    # One snapshot and type: 2023-12-31 new holds s1 (adopted, 1) and s2 (0 -> 2/3).
    assert [(f1.cell(r, S1, "new").mean, f1.cell(r, S1, "new").n) for r in expected] == [
        (1.0, 1), (0.0, 1), (pytest.approx(2 / 3), 1), (pytest.approx(2 / 3), 1),
        (pytest.approx(5 / 6), 2)]
    # 2026-08-31 new: s6 only (s7 never had a first pass); nothing adopted there.
    empty = f1.cell("adopted", S2, "new")
    assert (empty.mean, empty.ci, empty.n) == (None, None, 0)
    assert f1.cell("final", S2, "new").n == 1
    # A single value: the bootstrap interval is that value.
    one = f1.cell("after", S2, "all")
    assert (one.mean, one.n, one.ci.low, one.ci.high) == (1.0, 1, 1.0, 1.0)  # type: ignore[union-attr]
    # EM is 0/1: Wilson intervals; 1 of 2 is [0.0945, 0.9055], 3 of 6 is [0.1876, 0.8124].
    for row, (k, n) in {"adopted": (1, 2), "before": (1, 4), "after": (1, 3),
                        "selected": (2, 4), "final": (3, 6)}.items():
        cell = em.cell(row, "all", "all")
        assert (cell.mean, cell.n) == (pytest.approx(k / n), n), row
    adopted, final = em.cell("adopted", "all", "all").ci, em.cell("final", "all", "all").ci
    assert adopted is not None and final is not None
    assert (adopted.low, adopted.high) == (pytest.approx(0.0945, abs=5e-5),
                                           pytest.approx(0.9055, abs=5e-5))
    assert (final.low, final.high) == (pytest.approx(0.1876, abs=5e-5),
                                       pytest.approx(0.8124, abs=5e-5))


def test_table3_by_hand(store: ResultsStore) -> None:
    (section,) = rilm_sections([store.load_run("rilm0000000a")], ["rilm"])
    table = section.table3
    assert table is not None and [key for key, _, _ in table.rows] == ["query", "append",
                                                                       "paper"]
    assert [(table.cell(m, "all", "all").mean, table.cell(m, "all", "all").n)
            for m in ("query", "append", "paper")] == [(0.5, 4), (0.25, 4), (0.5, 4)]
    # Per snapshot: 2023-12-31 has s2 (paper hit) and s3 (query hit).
    assert [table.cell(m, S1, "all").mean for m in ("query", "append", "paper")] == [
        0.5, 0.0, 0.5]
    # 2026-08-31 changed: s5, whose re-retrieval found nothing: a miss for every mode.
    assert [table.cell(m, S2, "changed").mean for m in ("query", "append", "paper")] == [
        0.0, 0.0, 0.0]
    append = table.cell("append", "all", "all").ci  # Wilson, 1 of 4: [0.0456, 0.6994]
    assert append is not None and (append.low, append.high) == (
        pytest.approx(0.0456, abs=5e-5), pytest.approx(0.6994, abs=5e-5))


def test_wilson_interval_by_the_formula() -> None:
    # 2 of 4, z = 1.96, z^2 = 3.8416: centre (0.5 + 3.8416 / 8) / (1 + 3.8416 / 4) = 0.5,
    # half = (1.96 / 1.9604) * sqrt(0.25 / 4 + 3.8416 / 64) = 0.3500 -> [0.150, 0.850].
    ci = wilson_ci(2, 4)
    assert ci is not None and (ci.low, ci.high) == (pytest.approx(0.1500, abs=5e-4),
                                                    pytest.approx(0.8500, abs=5e-4))
    zero = wilson_ci(0, 10)  # 0 of 10: [0, z^2 / (n + z^2)] = [0, 0.2775]
    assert zero is not None and zero.low == 0.0
    assert zero.high == pytest.approx(1.96 ** 2 / (10 + 1.96 ** 2), abs=5e-4)
    full = wilson_ci(10, 10)
    assert full is not None and full.high == 1.0
    assert wilson_ci(0, 0) is None
    with pytest.raises(ValueError, match="successes"):
        wilson_ci(3, 2)


def test_the_report_shows_both_tables_and_each_runs_mode(store: ResultsStore,
                                                         tmp_path: Path) -> None:
    fill(store, run_id="rilm0000000b", arr="query")
    html_path, md_path = write_report([store.load_run("rilm0000000a"),
                                       store.load_run("rilm0000000b")], tmp_path / "r")
    page = html_path.read_text(encoding="utf-8")
    assert page.count('<table class="rilm table7"') == 4  # F1 and EM of each run
    assert page.count('<table class="rilm table3"') == 2
    assert "arr=paper" in page and "arr=query" in page
    # The pooled F1 "before ARR" cell: 5/12 = 0.417, n = 4.
    row = re.search(r'<table class="rilm table7" data-scorer="growover-f1">.*?'
                    r'<tr data-row="before">(.*?)</tr>', page, re.S)
    assert row is not None
    cell = re.search(r'data-snapshot="all" data-type="all" data-n="4">(.*?)</td>', row.group(1))
    assert cell is not None and html.unescape(cell.group(1)).startswith("0.417<br>")
    markdown = md_path.read_text(encoding="utf-8")
    assert "## GrowOVER: RiLM by stage (Tables 7 and 3)" in markdown
    line = next(x for x in markdown.splitlines() if x.startswith("| ARR (ω = P_τ"))
    assert line.rstrip().endswith("0.500 [0.150, 0.850] (n=4) |")  # Wilson 2 of 4
    # A ralm run has no stages: no section.
    assert rilm_sections([], []) == ()


def test_dialogue_runs_are_scored_with_bleu(tmp_path: Path) -> None:
    with ResultsStore(tmp_path / "runs.sqlite") as store:
        fill(store, kind="dialogue")
        (section,) = rilm_sections([store.load_run("rilm0000000a")], ["rilm"])
    (bleu,) = section.table7
    assert section.kind == "dialogue" and bleu.scorer == "growover-bleu"
    # BLEU of "Paris" against "Paris" is 100 -> 1.0; "Lyon" 0 (adopted: s1 1, s4 0).
    cell = bleu.cell("adopted", "all", "all")
    assert (cell.mean, cell.n) == (0.5, 2)
    assert not math.isnan(bleu.cell("final", "all", "all").mean or 0.0)


def test_the_names_agree_with_the_benchmark_and_the_system() -> None:
    from freshwiki.benchmarks.growover import RILM_ARR_MODES, GrowOver
    from freshwiki.benchmarks.growover.analysis import MODE_ROWS
    from freshwiki.systems.rilm import ARR_MODES

    assert GrowOver.name == GROWOVER
    assert (*QA_SCORERS, *DIALOGUE_SCORERS, HIT) == (
        F1Scorer.name, EMScorer.name, BleuScorer.name, HitScorer.name)
    assert set(RILM_ARR_MODES) == set(ARR_MODES) == {key for key, _ in MODE_ROWS}


def test_the_experiment_writes_the_same_tables(store: ResultsStore) -> None:
    from tests.benchmarks.growover.test_figure_construction import _script

    run = _script()
    (section,) = run.rilm_tables(store, "rilm0000000a")
    assert (section["kind"], section["arr"], section["n"], section["n_adopted"]) == (
        "qa", "paper", 6, 2)
    f1 = section["tables"][0]
    before = next(r for r in f1["rows"] if r["row"] == "before")
    pooled = next(c for c in before["cells"] if (c["snapshot"], c["type"]) == ("all", "all"))
    assert (pooled["mean"], pooled["n"]) == (pytest.approx(5 / 12), 4)
    table3 = section["tables"][-1]
    append = next(r for r in table3["rows"] if r["row"] == "append")
    # Re-retrieved: s2, s6 (new; only s6's append hit), s3, s5 (changed; none); no unchanged.
    assert [(c["type"], c["mean"]) for c in append["cells"] if c["snapshot"] == "all"] == [
        ("new", 0.5), ("changed", 0.0), ("all", 0.25)]
    lines = run.stage_lines([section])
    assert any(x.startswith("| Always append (ω = 1) | ") for x in lines)
