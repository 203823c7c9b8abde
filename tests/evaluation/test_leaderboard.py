"""The leaderboard: boards, periods, hand-computed means, ranks and τ, and the written site.

The runs are committed through the store's public API (``leaderboard_data``); every expected
number below is worked out by hand from the scores listed there.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from freshwiki.evaluation import (
    Board,
    LeaderboardError,
    ResultsStore,
    bootstrap_ci,
    build_boards,
    load_runs,
    write_leaderboard,
)
from freshwiki.evaluation._leaderboard import MARKER
from freshwiki.evaluation._report import PLOT_HEIGHT, PLOT_TOP
from tests.evaluation.leaderboard_data import (
    GROWOVER_DATASET,
    RALM,
    SNAPSHOTS,
    VANILLA,
    commit,
    growover_run,
    growover_runs,
    hellofresh_run,
    wikicontradict_run,
)

RALM_ID, VANILLA_ID, RILM_ID = (r.run_id for r in growover_runs())


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    return ResultsStore(tmp_path / "runs.sqlite")


def boards_of(store: ResultsStore, **kwargs: object) -> dict[str, Board]:
    return {b.slug: b for b in build_boards(load_runs(store), **kwargs)}  # type: ignore[arg-type]


def growover(store: ResultsStore) -> Board:
    for run in growover_runs():
        commit(store, run)
    return boards_of(store)["growover"]


def test_growover_board_means_ranks_and_counts_by_hand(store: ResultsStore) -> None:
    board = growover(store)
    assert board.period_key == "snapshot" and board.periods == SNAPSHOTS
    assert board.scorer == "growover-f1"  # the benchmark's first scorer
    # Pooled F1: rilm (1+1+1+.5+1+0)/6 = .75, ralm 7.5/12 = .625, vanilla 4.5/12 = .375.
    assert [e.run_id for e in board.entries] == [RILM_ID, RALM_ID, VANILLA_ID]
    rilm, ralm, vanilla = board.entries
    assert [e.overall.summary.mean for e in board.entries] == pytest.approx(  # type: ignore[union-attr]
        [0.75, 0.625, 0.375])
    assert [e.overall.rank for e in board.entries] == [1, 2, 3]
    # Per snapshot: means, ranks (ties share 2.5), scored / total (rilm failed twice in s2).
    assert [c.summary.mean if c.summary else None for c in rilm.cells] == [0.875, 0.5, None]
    assert [c.summary.mean if c.summary else None for c in ralm.cells] == [0.625, 0.5, 0.75]
    assert [c.summary.mean if c.summary else None for c in vanilla.cells] == [0.25, 0.75, 0.125]
    assert [c.rank for c in rilm.cells] == [1, 2.5, None]
    assert [c.rank for c in ralm.cells] == [2, 2.5, 1]
    assert [c.rank for c in vanilla.cells] == [3, 1, 2]
    assert [(c.n_scored, c.n_total) for c in rilm.cells] == [(4, 4), (2, 4), (0, 0)]
    assert (rilm.overall.n_scored, rilm.overall.n_total) == (6, 8)
    # Failures counted as incorrect: 4.5 / 8 = .5625, inside rilm's pooled CI: no flag.
    assert rilm.overall.accounting.mean_with_failures == pytest.approx(0.5625)
    # CIs are the ordinary bootstrap of the listed values (one template: no clustering).
    assert ralm.cells[0].summary is not None
    assert ralm.cells[0].summary.ci == bootstrap_ci(RALM[SNAPSHOTS[0]])
    assert ralm.overall.summary is not None
    assert ralm.overall.summary.ci == bootstrap_ci([v for s in SNAPSHOTS for v in RALM[s]])
    assert board.empty == frozenset()  # ralm and vanilla answered the third snapshot


def test_kendall_tau_between_consecutive_snapshots_by_hand(store: ResultsStore) -> None:
    board = growover(store)
    # s1 ranks rilm 1, ralm 2, vanilla 3; s2 vanilla 1, ralm and rilm 2.5 (tied).
    # Pairs (ralm, vanilla) and (rilm, vanilla) are discordant, (rilm, ralm) tied in s2:
    # τ-b = (0 - 2) / sqrt(3 * (3 - 1)) = -0.8165.
    # s3: rilm has no answer, so only ralm and vanilla compare: ralm 2.5 -> 1 while vanilla
    # 1 -> 2: one discordant pair, τ-b = -1.
    first, second = board.taus
    assert (first.before, first.after, first.n) == (SNAPSHOTS[0], SNAPSHOTS[1], 3)
    assert first.tau == pytest.approx(-2 / math.sqrt(6))
    assert (second.before, second.after, second.n, second.tau) == (SNAPSHOTS[1], SNAPSHOTS[2],
                                                                   2, -1.0)
    assert board.mean_tau == pytest.approx((-2 / math.sqrt(6) - 1) / 2)
    assert board.tau_note == ""


def test_a_period_without_scored_answers_is_empty_not_zero(store: ResultsStore) -> None:
    commit(store, hellofresh_run("d4e5f6a1b2c3", "vanilla",
                                 {"2024-01": [1, 0, 1], "2024-03": [1, 1, 0]}))
    commit(store, hellofresh_run("e5f6a1b2c3d4", "rag",
                                 {"2024-01": [1, 1, 1], "2024-03": [0, 0, 1]}))
    board = boards_of(store)["hellofresh-notes"]
    assert board.period_kind == "month"
    assert board.periods == ("2024-01", "2024-02", "2024-03")  # February filled in
    assert board.empty == frozenset({"2024-02"})
    for entry in board.entries:
        february = entry.cells[1]
        assert february.summary is None and february.rank is None
        assert (february.n_scored, february.n_total) == (0, 0)
    assert any("No scored answers in month 2024-02" in n and "not as 0" in n
               for n in board.notes)
    # The plot has points in January and March only, and no line across February.
    assert board.line is not None
    for series in board.line.series:
        assert [p.period for p in series.points] == ["2024-01", "2024-03"]
        assert series.paths == ()
    # January: rag 3/3 = 1 beats vanilla 2/3; March: vanilla 2/3 beats rag 1/3: τ-b = -1,
    # February skipped.
    [tau] = board.taus
    assert (tau.before, tau.after, tau.tau, tau.n) == ("2024-01", "2024-03", -1.0, 2)


def test_a_declared_snapshot_without_answers_is_a_column(store: ResultsStore) -> None:
    late = "2024-04-01"
    runs = [growover_run(r.run_id, r.system, f) for r, f in zip(
        growover_runs()[:2], (RALM, VANILLA), strict=True)]
    for run in runs:
        run.config = {**run.config, "dataset": {**GROWOVER_DATASET,
                                                "snapshots": [*SNAPSHOTS, late]}}
        commit(store, run)
    board = boards_of(store)["growover"]
    assert board.periods == (*SNAPSHOTS, late) and board.empty == frozenset({late})
    # Lines run through the three snapshots with data and stop before the empty one.
    assert board.line is not None
    [ralm_line] = [s for s in board.line.series if s.label.startswith("ralm")]
    [path] = ralm_line.paths
    ys = [float(xy.split(",")[1]) for xy in path.split()]
    expected = [PLOT_TOP + (1 - mean) * PLOT_HEIGHT for mean in (0.625, 0.5, 0.75)]
    assert ys == pytest.approx(expected, abs=0.01)


def test_one_run_builds_and_says_there_is_no_ranking_over_time(
        store: ResultsStore, tmp_path: Path) -> None:
    commit(store, growover_runs()[0])
    board = boards_of(store)["growover"]
    assert board.taus == () and board.tau_note == "one run: no ranking over time"
    site = write_leaderboard(store, tmp_path / "site")
    page = (site.root / "boards" / "growover.html").read_text(encoding="utf-8")
    assert "one run: no ranking over time" in page
    assert 'id="taus"' not in page


def test_runs_on_two_datasets_of_one_benchmark_get_separate_boards(
        store: ResultsStore) -> None:
    commit(store, wikicontradict_run("f6a1b2c3d4e5", "vanilla", "aa11" * 16,
                                     [1, 0.5, 0, 1], [1, 0, 0, 1]))
    commit(store, wikicontradict_run("a6a1b2c3d4e5", "rag", "aa11" * 16,
                                     [1, 1, 0.5, 1], [1, 1, 0, 1]))
    commit(store, wikicontradict_run("b6a1b2c3d4e5", "rag", "bb22" * 16, [0, 0.5], [0, 0]))
    boards = boards_of(store)
    assert sorted(boards) == ["wikicontradict-aa11aa11aa11", "wikicontradict-bb22bb22bb22"]
    first, second = boards["wikicontradict-aa11aa11aa11"], boards["wikicontradict-bb22bb22bb22"]
    assert [e.run_id for e in first.entries] == ["a6a1b2c3d4e5", "f6a1b2c3d4e5"]
    assert [e.run_id for e in second.entries] == ["b6a1b2c3d4e5"]
    assert first.split == ("wikicontradict-bb22bb22bb22",)
    assert any("used 2 different datasets" in n and "never ranked together" in n
               for n in first.notes)
    # No periods: one pooled column, a bar chart, a note; judge means .875 and .625.
    assert first.period_key is None and first.periods == () and first.line is None
    assert first.bars is not None
    assert any("has no periods" in n for n in first.notes)
    assert [e.overall.summary.mean for e in first.entries] == [0.875, 0.625]  # type: ignore[union-attr]
    assert first.tau_note.startswith("no periods")


def test_the_same_dataset_at_another_path_is_one_board(store: ResultsStore) -> None:
    other = growover_runs()[1]
    other.config = {**other.config, "dataset": {**GROWOVER_DATASET,
                                                "path": "/mnt/elsewhere/demo"}}
    commit(store, growover_runs()[0])
    commit(store, other)
    assert [len(b.entries) for b in boards_of(store).values()] == [2]


def test_runs_on_a_subset_of_one_snapshot_series_share_a_board(store: ResultsStore) -> None:
    # ralm on every snapshot, the gated systems on the later ones only: the content hash of
    # what each run took differs, the series (the build) is the same.
    first, second, third = growover_runs()
    series = {**GROWOVER_DATASET, "series": "5e7e5e7e5e7e5e7e"}
    first.config = {**first.config, "dataset": {**series, "dataset_hash": "11" * 32}}
    second.config = {**second.config, "dataset": {**series, "dataset_hash": "22" * 32,
                                                  "snapshots": ["later"]}}
    third.config = {**third.config, "dataset": {**series, "series": "0ther0ther0ther0"}}
    for run in (first, second, third):
        commit(store, run)
    assert sorted(len(b.entries) for b in boards_of(store).values()) == [1, 2]


def test_the_headline_scorer_can_be_chosen_per_benchmark_or_for_all(
        store: ResultsStore) -> None:
    growover(store)
    commit(store, wikicontradict_run("f6a1b2c3d4e5", "vanilla", "aa11" * 16,
                                     [1, 0.5, 0, 1], [1, 0, 0, 1]))
    em = boards_of(store, scorer={"growover": "growover-em"})["growover"]
    # EM = 1 exactly where F1 = 1: ralm 2 + 1 + 3 = 6 of 12; vanilla 0 + 2 + 0 of 12.
    means = {e.run_id: e.overall.summary.mean for e in em.entries}  # type: ignore[union-attr]
    assert means[RALM_ID] == 0.5 and means[VANILLA_ID] == pytest.approx(2 / 12)
    assert em.scorer_note == "headline scorer growover-em, as chosen"
    everywhere = boards_of(store, scorer={"*": "wikicontradict-match"})
    assert everywhere["wikicontradict"].scorer == "wikicontradict-match"
    assert everywhere["growover"].scorer == "growover-f1"
    assert "no scores from wikicontradict-match" in everywhere["growover"].scorer_note
    with pytest.raises(LeaderboardError, match="no run of benchmark 'nope'"):
        boards_of(store, scorer={"nope": "x"})
    with pytest.raises(LeaderboardError) as unknown:
        boards_of(store, scorer={"growover": "bleu"})
    assert unknown.value.hint is not None and "growover-f1" in unknown.value.hint


def test_a_failure_no_run_answered_counts_in_the_pooled_column_only(
        store: ResultsStore) -> None:
    ralm = growover_runs()[0]
    ralm.failures.append(("2024-05-01:q9", "qa"))  # a sample never answered by anyone
    commit(store, ralm)
    [entry] = boards_of(store)["growover"].entries
    assert entry.unplaced == 1
    assert (entry.overall.n_scored, entry.overall.n_total) == (12, 13)
    assert sum(c.n_total for c in entry.cells) == 12
    assert any("1 failed answer of samples no run answered" in n
               for n in boards_of(store)["growover"].notes)


def test_all_runs_tied_in_a_period_make_its_tau_undefined(store: ResultsStore) -> None:
    same = {s: [1, 0, 1, 0] for s in SNAPSHOTS}
    commit(store, growover_run("aaaaaaaaaaaa", "ralm", same))
    commit(store, growover_run("bbbbbbbbbbbb", "vanilla", same))
    board = boards_of(store)["growover"]
    assert [(t.tau, t.note) for t in board.taus] == [
        (None, "all runs tie in one of the periods")] * 2
    assert board.mean_tau is None


# ----------------------------------------------------------------------------- the site


def test_the_site_has_an_index_boards_reports_and_numbers(
        store: ResultsStore, tmp_path: Path) -> None:
    growover(store)
    site = write_leaderboard(store, tmp_path / "site")
    root = site.root
    assert (root / MARKER).exists() and site.reports == 3
    index = (root / "index.html").read_text(encoding="utf-8")
    assert 'href="boards/growover.html"' in index
    page = (root / "boards" / "growover.html").read_text(encoding="utf-8")
    for run_id in (RALM_ID, VANILLA_ID, RILM_ID):
        link = f"../runs/{run_id}/report.html"
        assert f'href="{link}"' in page and (root / "boards" / link).resolve().is_file()
    assert not re.search(r"<script|<link|<img|src=|@import|url\(", page)  # nothing fetched
    # The third snapshot's cell of rilm is marked empty, not 0.
    row = re.search(rf'<tr data-run="{RILM_ID}">(.*?)</tr>', page, re.S)
    assert row is not None
    assert re.search(rf'class="empty" data-period="{SNAPSHOTS[2]}"', row.group(1))
    assert 'data-mean="0.875000"' in row.group(1)


def test_the_site_replaces_an_old_site_but_never_a_foreign_folder(
        store: ResultsStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commit(store, growover_runs()[0])
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("precious")
    with pytest.raises(LeaderboardError, match="not a freshwiki leaderboard"):
        write_leaderboard(store, foreign)
    assert [p.name for p in foreign.iterdir()] == ["thesis.tex"]
    out = tmp_path / "site"
    write_leaderboard(store, out)
    (out / "stale.html").write_text("old")
    commit(store, growover_runs()[1])
    write_leaderboard(store, out)
    assert not (out / "stale.html").exists()
    assert VANILLA_ID in (out / "boards" / "growover.html").read_text(encoding="utf-8")
    # A build that fails half-way leaves the previous site whole, and no temporary folder.
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr("freshwiki.evaluation._leaderboard.write_report", broken)
    commit(store, growover_runs()[2])
    with pytest.raises(RuntimeError, match="disk full"):
        write_leaderboard(store, out)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "runs.sqlite",
                                                          "runs.sqlite-shm",
                                                          "runs.sqlite-wal", "site"]


def test_an_empty_store_gives_a_page_that_says_so(store: ResultsStore, tmp_path: Path) -> None:
    site = write_leaderboard(store, tmp_path / "site")
    assert site.boards == () and 'id="no-runs"' in site.index.read_text(encoding="utf-8")
