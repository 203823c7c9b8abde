"""The conversationality check's turns, reading file and agreement, from hand-made ratings.

Every expected figure is worked out by hand in a comment.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest

from freshwiki.evaluation import RunInfo, RunResults
from freshwiki.results import ScoredItem
from tests.experiments.scripts import load_script

C = load_script("wikichat_conversationality_check")
NOW = dt.datetime.now(dt.UTC)


def _rating(r: int, i: int, n: int, nr: int, t: bool = True) -> dict[str, Any]:
    return {"relevant": r, "informational": i, "natural": n, "non_repetitive": nr,
            "temporally_correct": t, "rationale": "..."}


class _Store:
    def __init__(self, runs: dict[str, RunResults],
                 traces: dict[str, list[tuple[str, str, dict[str, Any], str, dict[str, Any]]]]
                 ) -> None:
        self.runs, self._traces = runs, traces

    def load_run(self, run_id: str) -> RunResults:
        return self.runs[run_id]

    def traces(self, run_id: str) -> list[tuple[str, str, dict[str, Any], str, dict[str, Any]]]:
        return self._traces[run_id]


def _store() -> _Store:
    trace = {"today": "2026-11-28", "turns": [{"user": "Q1?", "reply": "A1."},
                                              {"user": "Q2?", "reply": "A2."}]}
    data = {"turns": [_rating(5, 4, 4, 5), _rating(3, 1, 2, 1, False)]}
    items = (ScoredItem("head/X", "chat", "chat-relevant", 0.5,
                        metadata={"category": "head", "title": "X"}, data=data),
             ScoredItem("head/X", "chat", "chat-natural", 0.5, metadata={}, data={}))
    run = RunResults(RunInfo("run1", "simulated-chat", "rag", "m", {}, "v", {}, NOW, NOW,
                             label="sim · rag"), items)
    return _Store({"run1": run}, {"run1": [("head/X", "chat", {}, "", trace)]})


def test_turns_are_keyed_without_the_run_id_and_carry_what_came_before() -> None:
    turns = C.all_turns(_store(), ["run1"])
    assert sorted(turns) == ["sim · rag|head/X|t1", "sim · rag|head/X|t2"]
    second = turns["sim · rag|head/X|t2"]
    assert second["before"] == [{"user": "Q1?", "reply": "A1."}]
    assert (second["user"], second["reply"], second["today"]) == ("Q2?", "A2.", "2026-11-28")
    assert second["judge"] == {"relevant": 3, "informational": 1, "natural": 2,
                               "non_repetitive": 1, "temporally_correct": False}


def test_the_reading_file_hides_the_system_and_the_ratings() -> None:
    turns = C.all_turns(_store(), ["run1"])
    text = "\n".join(C.reading_file([turns["sim · rag|head/X|t2"]]))
    assert "rag" not in text and "sim ·" not in text
    assert "Q1?" in text and "A1." in text and "A2." in text
    assert "head/X|t2#1" in text


def test_a_sampled_turn_whose_reply_changed_stops_the_script() -> None:
    turns = C.all_turns(_store(), ["run1"])
    turn = turns["sim · rag|head/X|t1"]
    row = {"key": "sim · rag|head/X|t1", "reply_sha": C.reply_hash("A1.")}
    assert C._checked([row], {k: [t] for k, t in turns.items()}) == [turn]
    with pytest.raises(SystemExit, match="another reply"):
        C._checked([{**row, "reply_sha": C.reply_hash("Another.")}],
                   {k: [t] for k, t in turns.items()})
    # Two versions of the chat under one key: the one with the sampled reply is taken.
    later = {**turn, "run_id": "run2", "reply": "Another."}
    both = {"sim · rag|head/X|t1": [later, turn]}
    assert C._checked([row], both) == [turn]
    assert C._checked([{**row, "reply_sha": C.reply_hash("Another.")}], both) == [later]


def test_draw_is_seeded_and_takes_n() -> None:
    keys = [f"k{i}" for i in range(10)]
    first = C.draw(keys, 4, seed=35)
    assert first == C.draw(list(reversed(keys)), 4, seed=35)  # input order does not matter
    assert len(first) == 4 and len(set(first)) == 4


def test_pair_agreement_by_hand() -> None:
    a = [5, 4, 3, 1]
    b = [5, 3, 3, 3]
    cell = C.pair_agreement(a, b)
    # exact 2/4; within one: |0|,|1|,|0|,|2| -> 3/4; mean b - a: (0 - 1 + 0 + 2) / 4 = .25
    assert (cell["exact"], cell["within_one"], cell["mean_difference"]) == (0.5, 0.75, 0.25)
    # kappa over the levels seen: a = {5:1, 4:1, 3:1, 1:1}, b = {5:1, 3:3}; po = .5;
    # pe = (1*1 [5] + 1*3 [3]) / 16 = .25; kappa = (.5 - .25) / .75 = 1/3
    assert cell["kappa"] == pytest.approx(1 / 3)


def test_compare_pairs_every_rater_and_means_per_system() -> None:
    turns = C.all_turns(_store(), ["run1"])
    labels = [
        {"key": "sim · rag|head/X|t1", "reader": "A", **_rating(5, 4, 4, 5)},
        {"key": "sim · rag|head/X|t2", "reader": "A", **_rating(3, 2, 2, 1, False)},
        {"key": "sim · rag|head/X|t1", "reader": "B", **_rating(4, 4, 4, 5)},
    ]
    out = C.compare(labels, turns)
    assert out["raters"] == ["A", "B", "judge"]
    assert out["pairs"]["A ~ judge"]["relevant"]["n"] == 2
    assert out["pairs"]["A ~ B"]["relevant"]["n"] == 1  # B rated one turn
    # A and judge: relevant 5/5 and 3/3 agree; informational 4/4 and 2 vs 1 -> exact .5
    assert out["pairs"]["A ~ judge"]["relevant"]["exact"] == 1.0
    assert out["pairs"]["A ~ judge"]["informational"]["exact"] == 0.5
    assert out["pairs"]["A ~ judge"]["temporally_correct"]["exact"] == 1.0
    # only t1 was rated by all three: means are those single ratings
    assert out["turns_rated_by_all"] == 1
    system = out["by_system"]["sim · rag"]
    assert system["turns"] == 1
    assert (system["A"]["relevant"]["mean"], system["B"]["relevant"]["mean"],
            system["judge"]["relevant"]["mean"]) == (5, 4, 5)


def test_one_reader_rating_one_turn_twice_stops_the_comparison() -> None:
    turns = C.all_turns(_store(), ["run1"])
    labels = [{"key": "sim · rag|head/X|t1", "reader": "A", "batch": 3, **_rating(5, 4, 4, 5)},
              {"key": "sim · rag|head/X|t1", "reader": "A", "batch": 5, **_rating(3, 1, 3, 5)}]
    with pytest.raises(SystemExit,
                       match=re.escape("rated sim · rag|head/X|t1 twice (batches 3 and 5")):
        C.compare(labels, turns)


def test_compare_takes_a_judge_rated_afresh_as_one_more_rater() -> None:
    turns = C.all_turns(_store(), ["run1"])
    labels = [{"key": "sim · rag|head/X|t1", "reader": "A", **_rating(5, 4, 4, 5)},
              {"key": "sim · rag|head/X|t2", "reader": "A", **_rating(3, 2, 2, 1, False)}]
    afresh = {"sim · rag|head/X|t1": _rating(5, 3, 4, 5),
              "sim · rag|head/X|t2": _rating(3, 1, 2, 1, False)}
    out = C.compare(labels, turns, {"judge:per-question": afresh})
    assert out["raters"] == ["A", "judge", "judge:per-question"]
    # A and the fresh judge: informational 4 vs 3 and 2 vs 1 -> exact 0, within one 1.0
    cell = out["pairs"]["A ~ judge:per-question"]["informational"]
    assert (cell["exact"], cell["within_one"], cell["mean_difference"]) == (0.0, 1.0, -1.0)
    assert out["pairs"]["A ~ judge:per-question"]["relevant"]["exact"] == 1.0


def test_latest_keeps_each_readers_rating_of_the_turns_latest_version() -> None:
    rows = [{"key": "k1", "reader": "A", "batch": 1, "relevant": 2},
            {"key": "k1", "reader": "A", "batch": 5, "relevant": 3},
            {"key": "k1", "reader": "B", "batch": 1, "relevant": 4},
            {"key": "k2", "reader": "A", "batch": 4, "relevant": 5}]
    kept = sorted((r["reader"], r["key"], r["batch"]) for r in C.latest(rows))
    assert kept == [("A", "k1", 5), ("A", "k2", 4), ("B", "k1", 1)]


def test_latest_skips_ratings_of_replies_the_runs_no_longer_hold(tmp_path: Path) -> None:
    # k1's reply went A1. (batch 6) -> other (batch 10) -> A1. again: batch 6's rating is the
    # latest of the reply the run holds. k2 was rated once, of a reply the run holds.
    b6, b10 = tmp_path / "batch6.jsonl", tmp_path / "batch10.jsonl"
    b6.write_text(f'{{"key": "k1", "reply_sha": "{C.reply_hash("A1.")}"}}\n'
                  f'{{"key": "k2", "reply_sha": "{C.reply_hash("A2.")}"}}\n')
    b10.write_text('{"key": "k1", "reply_sha": "other"}\n')
    rows = [{"key": "k1", "reader": "A", "batch": 6}, {"key": "k1", "reader": "A", "batch": 10},
            {"key": "k2", "reader": "A", "batch": 6}, {"key": "k3", "reader": "A", "batch": 6}]
    versions = {"k1": [{"reply": "A1."}], "k2": [{"reply": "A2."}]}
    held = C.held_by(rows, [b6, b10], versions)
    # k3 is in no run and no batch file: kept, for the later check to report.
    assert [(r["key"], r["batch"]) for r in C.latest(held)] == [("k1", 6), ("k2", 6), ("k3", 6)]
    # Without the filter, batch 10's rating of a reply no run gives would be kept.
    assert ("k1", 10) in [(r["key"], r["batch"]) for r in C.latest(rows)]


def test_each_labelled_turn_comes_from_the_sample_file_of_its_batch(tmp_path: Path) -> None:
    old = tmp_path / "batch3.jsonl"
    new = tmp_path / "batch5.jsonl"
    old.write_text('{"key": "k1", "reply_sha": "old"}\n{"key": "k2", "reply_sha": "x"}\n')
    new.write_text('{"key": "k1", "reply_sha": "new"}\n')
    later = [{"key": "k1", "reader": "A", "batch": 5}]
    assert C.pick_samples([old, new], later) == [{"key": "k1", "reply_sha": "new"}]
    earlier = [{"key": "k1", "reader": "A", "batch": 3}]
    assert C.pick_samples([old, new], earlier) == [{"key": "k1", "reply_sha": "old"}]
    # k2 was not labelled: not picked
    assert all(row["key"] == "k1" for row in C.pick_samples([old, new], later + earlier))
