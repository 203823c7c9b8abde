"""The WikiChat Table 1 script's cells and goals, and the factuality check's sampling and
agreement, from hand-made scores. Every expected figure is worked out by hand in a comment.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from freshwiki.evaluation import EvalSet, PlannedRun, RunInfo, RunResults
from freshwiki.results import ScoredItem
from tests.experiments.scripts import load_script

S = load_script("wikichat_simulated")
F = load_script("wikichat_factuality_check")
NOW = dt.datetime.now(dt.UTC)


def _item(sid: str, kind: str, scorer: str, value: float = 0.0,
          data: dict[str, Any] | None = None) -> ScoredItem:
    return ScoredItem(sid, "chat", scorer, value, metadata={"category": kind},
                      data=data or {})


def _run() -> RunResults:
    items = (
        # factuality: head 2/4 and 1/1, tail no claims, recent 3/5
        _item("h1", "head", "chat-factuality", 0.5, {"supported": 2, "claims": 4}),
        _item("h2", "head", "chat-factuality", 1.0, {"supported": 1, "claims": 1}),
        _item("t1", "tail", "chat-factuality", 1.0, {"supported": 0, "claims": 0}),
        _item("r1", "recent", "chat-factuality", 0.6, {"supported": 3, "claims": 5}),
        # relevance 4.0 and 2.0 on head; temporally correct 1.0 and 0.5 on head
        _item("h1", "head", "chat-relevant", 0.75, {"mean_1_to_5": 4.0}),
        _item("h2", "head", "chat-relevant", 0.25, {"mean_1_to_5": 2.0}),
        _item("h1", "head", "chat-temporally-correct", 1.0),
        _item("h2", "head", "chat-temporally-correct", 0.5),
    )
    return RunResults(RunInfo("r", "simulated-chat", "rag", "m", {}, "v", {}, NOW, NOW), items)


def test_factuality_is_micro_over_the_kind_and_no_claims_are_counted_apart() -> None:
    table = S.tabulate(_run())
    head = table["head"]["factuality"]
    # head: (2 + 1) / (4 + 1) = .6 over 2 conversations
    assert head["conversations"] == 2 and head["claims"] == 5 and head["supported"] == 3
    assert math.isclose(head["factuality"], 0.6)
    low, high = head["ci"]
    assert low <= 0.6 <= high
    tail = table["tail"]["factuality"]
    # a conversation without claims has no factuality of its own: no share, counted apart
    assert tail["claims"] == 0 and tail["no_claims"] == 1 and "factuality" not in tail
    everything = table["all"]["factuality"]
    # all: (2 + 1 + 0 + 3) / (4 + 1 + 0 + 5) = 6 / 10
    assert everything["conversations"] == 4 and math.isclose(everything["factuality"], 0.6)
    assert everything["no_claims"] == 1


def test_ratings_are_raw_1_to_5_means_and_temporal_a_share() -> None:
    table = S.tabulate(_run())
    assert math.isclose(table["head"]["relevant"]["mean"], 3.0)  # (4 + 2) / 2
    assert math.isclose(table["head"]["temporally_correct"]["mean"], 0.75)  # (1 + .5) / 2
    assert table["tail"]["relevant"] == {"conversations": 0}


def _cell(fact: float | None, relevant: float) -> dict[str, Any]:
    cell: dict[str, Any] = {"factuality": {} if fact is None else {"factuality": fact}}
    for dimension in S.RATINGS:
        cell[dimension] = {"mean": relevant if dimension == "relevant" else 4.0}
    return cell


def test_goals_compare_grounded_with_rag_per_kind() -> None:
    tables = {
        "g": {"head": _cell(0.7, 3.6), "tail": _cell(0.5, 3.4), "recent": _cell(None, 4.0),
              "all": _cell(0.6, 3.5)},
        "r": {"head": _cell(0.6, 4.0), "tail": _cell(0.6, 4.0), "recent": _cell(0.5, 4.0),
              "all": _cell(0.6, 4.0)},
    }
    goals = S.goals(tables, "g", "r")
    assert goals["head"]["factuality_met"] is True  # .7 >= .6
    assert goals["tail"]["factuality_met"] is False  # .5 < .6
    assert goals["recent"]["factuality_met"] is None  # grounded made no claim
    assert goals["all"]["factuality_met"] is True  # equal counts as met
    assert math.isclose(goals["head"]["relevant_gap"], -0.4) and goals["head"]["relevant_met"]
    assert not goals["tail"]["relevant_met"]  # 3.4 is .6 below 4.0
    assert goals["all"]["relevant_met"]  # exactly .5 below
    assert S.goals(tables, "g", "missing") == {}


def _claim(system: str, n: int) -> dict[str, Any]:
    return {"key": f"{system}:s:t1:c{n}", "system": system}


def test_draw_takes_systems_in_turn_and_is_seeded() -> None:
    claims = [_claim("a", k) for k in range(5)] + [_claim("b", 0)]
    picked = F.draw(claims, 4, seed=35)
    # b has one claim: a, b, a, a
    assert Counter(c["system"] for c in picked) == {"a": 3, "b": 1}
    assert len({c["key"] for c in picked}) == 4
    assert [c["key"] for c in F.draw(claims, 4, seed=35)] == [c["key"] for c in picked]
    assert len(F.draw(claims, 99, seed=1)) == 6


def test_agreement_of_the_supported_split() -> None:
    gold = F._binary(["SUPPORTS", "SUPPORTS", "NOT ENOUGH INFO", "REFUTES"])
    judged = F._binary(["SUPPORTS", "NOT ENOUGH INFO", "NOT ENOUGH INFO", "SUPPORTS"])
    result = F.agreement(gold, judged)
    # agree on items 1 and 3: 2 / 4; SUPPORTS: tp 1, fp 1 (item 4), fn 1 (item 2)
    assert result["n"] == 4 and math.isclose(result["accuracy"], 0.5)
    assert result["supports"]["tp"] == 1 and result["supports"]["fp"] == 1
    assert result["supports"]["fn"] == 1
    assert math.isclose(result["supports"]["precision"], 0.5)
    # confusion [[1, 1], [1, 1]]: observed .5, chance .5 * .5 + .5 * .5 = .5, kappa 0
    assert result["kappa"] is not None and math.isclose(result["kappa"], 0.0, abs_tol=1e-12)


class _Store:
    """The two reads ``all_claims`` makes of a results store."""

    def __init__(self, run: RunResults, traces: list[tuple[str, str, dict[str, Any], str,
                                                           dict[str, Any]]]) -> None:
        self.run, self._traces = run, traces

    def load_run(self, run_id: str) -> RunResults:
        return self.run

    def traces(self, run_id: str) -> list[tuple[str, str, dict[str, Any], str,
                                                 dict[str, Any]]]:
        return self._traces


def test_all_claims_keys_each_claim_by_turn_and_keeps_its_turn_text() -> None:
    data = {"turns": [{"claims": [{"claim": "A is B.", "verdict": "SUPPORTS",
                                   "evidence": ["p1"]}]},
                      {"claims": [{"claim": "C is D.", "verdict": "REFUTES", "evidence": []},
                                  {"claim": "E.", "verdict": "NOT ENOUGH INFO"}]}]}
    items = (_item("s1", "tail", "chat-factuality", 1 / 3, data),
             _item("s1", "tail", "chat-relevant", 0.5, {"mean_1_to_5": 3.0}))
    run = RunResults(RunInfo("run1", "simulated-chat", "grounded", "m", {}, "v", {}, NOW, NOW,
                             label="sim · grounded"), items)
    trace = {"turns": [{"user": "Q1?", "reply": "A is B."},
                       {"user": "Q2?", "reply": "C is D. E."}]}
    claims = F.all_claims(_Store(run, [("s1", "chat", {}, "", trace)]), ["run1"])
    assert [c["key"] for c in claims] == ["run1:s1:t1:c1", "run1:s1:t2:c1", "run1:s1:t2:c2"]
    assert [c["verdict"] for c in claims] == ["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"]
    assert claims[1]["user"] == "Q2?" and claims[1]["reply"] == "C is D. E."
    assert claims[0]["system"] == "sim · grounded" and claims[0]["category"] == "tail"
    assert claims[0]["evidence"] == ["p1"] and claims[2]["evidence"] == []


def _said(run: str, turn: int, text: str, verdict: str, reply: str = "R.") -> dict[str, Any]:
    return {"key": f"{run}:s1:t{turn}:c1", "run_id": run, "system": "sim · grounded",
            "sample_id": "s1", "turn": turn, "claim": text, "verdict": verdict,
            "reply": reply}


def test_rematch_finds_a_labelled_claim_in_a_later_judges_run_by_place_and_text() -> None:
    labelled = [_said("old", 1, "A is B.", "SUPPORTS"),
                _said("old", 2, "Kopua is a plant.", "REFUTES"),  # from an abstention
                _said("old", 3, "C  is D.", "REFUTES")]
    current = [_said("new", 3, "C is D.", "NOT ENOUGH INFO"),  # spaces differ: same claim
               _said("new", 1, "A is B.", "REFUTES"),
               _said("new", 1, "A is B.", "SUPPORTS")]  # a second, unlabelled occurrence
    matched, changed = F.rematch(labelled, current)
    assert [m and (m["key"], m["verdict"]) for m in matched] == [
        ("new:s1:t1:c1", "REFUTES"), None, ("new:s1:t3:c1", "NOT ENOUGH INFO")]
    assert changed == 0
    other = [_said("new", 1, "A is B.", "SUPPORTS", reply="Another reply.")]
    assert F.rematch(labelled, other)[1] == 1  # turn 1's reply differs: not the same talk


def test_a_claim_drawn_under_an_older_run_id_is_not_drawn_again() -> None:
    drawn = [_said("old", 1, "A is B.", "SUPPORTS")]
    claims = [_said("new", 1, "A  is B.", "REFUTES"),  # the same claim, in the later run
              _said("new", 2, "A is B.", "SUPPORTS"),  # same text, another turn: new
              _said("old", 1, "A is B.", "SUPPORTS")]  # the very key drawn
    assert [c["key"] for c in F.not_drawn(claims, drawn)] == ["new:s1:t2:c1"]


def test_only_keeps_the_named_runs_and_stops_on_an_unknown_label() -> None:
    evalset_filter = load_script("_evalset_filter")
    runs = (PlannedRun("simulated-chat", "rag", label="sim · rag"),
            PlannedRun("simulated-chat", "vanilla", label="sim · vanilla"))
    eval_set = EvalSet(path=Path("e.toml"), description="", runs=runs)
    parser = argparse.ArgumentParser()
    kept = evalset_filter.only_runs(eval_set, ["sim · rag"], Path("e.toml"), parser)
    assert [r.label for r in kept.runs] == ["sim · rag"]
    assert evalset_filter.only_runs(eval_set, None, Path("e.toml"), parser) is eval_set
    with pytest.raises(SystemExit):
        evalset_filter.only_runs(eval_set, ["sim · nothing"], Path("e.toml"), parser)


def _conversationality_check(tmp_path: Path, kappa: float, n: int) -> Path:
    cell = {d: {"n": n, "kappa": kappa, "mean": 3.0} for d in S.RATINGS}
    readers = {d: {"n": n, "kappa": 0.9} for d in S.RATINGS}
    means = {d: {"mean": 3.0} for d in S.RATINGS}
    path = tmp_path / "check.json"
    path.write_text(json.dumps({"commit": "abc", "pairs": {
        "reader A ~ reader B": readers, "reader A ~ judge": cell,
        "reader B ~ judge": {**cell, "natural": {"n": n, "kappa": kappa + 0.2}}},
        "by_system": {"sim · rag": {"turns": 4, "reader A": means, "reader B": means,
                                    "judge": means}}}))
    return path


@pytest.mark.parametrize(("kappa", "n", "status"), [
    (0.1, 60, "disagrees with the readers (60 turns; lowest kappa 0.10"),
    (0.45, 60, "agrees with the readers"),
    (0.9, 30, "unvalidated (30 turns rated by hand, fewer than 50)"),
])
def test_conversationality_status_needs_50_turns_and_kappa_at_least_04_everywhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kappa: float, n: int,
        status: str) -> None:
    path = _conversationality_check(tmp_path, kappa, n)
    monkeypatch.setattr(S, "CONVERSATIONALITY_CHECK", path)
    monkeypatch.setattr(S, "ROOT", tmp_path)
    out = S.conversationality_status()
    assert out["status"].startswith(status)
    assert out["turns_rated"] == n
    # the readers' means are carried, the judge's are not
    assert set(out["readers_by_system"]["sim · rag"]) == {"reader A", "reader B", "turns"}
    assert out["kappa_with_readers"]["reader B ~ judge"]["natural"] == pytest.approx(kappa + 0.2)


def test_the_readers_means_can_come_from_a_later_check(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    judge_check = _conversationality_check(tmp_path, 0.1, 105)
    later = tmp_path / "later.json"
    means = {d: {"mean": 4.0} for d in S.RATINGS}
    later.write_text(json.dumps({"runs": ["new1"], "by_system": {
        "sim · grounded": {"turns": 15, "reader A": means, "reader B": means, "judge": means}}}))
    monkeypatch.setattr(S, "CONVERSATIONALITY_CHECK", judge_check)
    monkeypatch.setattr(S, "ROOT", tmp_path)
    out = S.conversationality_status(later)
    # the judge's status is the judge's check's; the means are the later check's
    assert out["status"].startswith("disagrees with the readers (105 turns")
    assert set(out["readers_by_system"]) == {"sim · grounded"}
    assert out["readers_by_system"]["sim · grounded"]["reader A"]["relevant"] == 4.0
    assert out["readers_runs"] == ["new1"] and out["readers_file"] == "later.json"


def test_conversationality_status_without_a_check(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(S, "CONVERSATIONALITY_CHECK", tmp_path / "none.json")
    assert S.conversationality_status()["status"].startswith("unvalidated (no turns")


@pytest.mark.parametrize(("n", "precision", "status"), [
    (61, 0.52, "unvalidated (61 claims read by hand, fewer than 100)"),
    (101, 0.53, "checked on 101 claims read by hand: kappa 0.42; of the claims it calls "
                "supported, 53% are, so its factuality figures overstate support"),
    (120, 0.9, "checked on 120 claims read by hand: kappa 0.42; of the claims it calls "
               "supported, 90% are"),
])
def test_factuality_status_says_checked_and_how_far_to_read_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int, precision: float,
        status: str) -> None:
    path = tmp_path / "check.json"
    path.write_text(json.dumps({"binary": {"n": n, "accuracy": 0.7, "kappa": 0.42,
                                           "supports": {"precision": precision}}}))
    monkeypatch.setattr(S, "CHECK", path)
    monkeypatch.setattr(S, "ROOT", tmp_path)
    assert S.validation_status()["status"] == status


def test_readers_goals_average_the_readers_and_allow_half_a_point() -> None:
    def means(r: float) -> dict[str, float]:
        return {d: r for d in S.RATINGS}
    status = {"readers_by_system": {
        "g": {"reader A": means(3.0), "reader B": {**means(3.4), "relevant": 3.0},
              "turns": 30},
        "r": {"reader A": means(3.5), "reader B": means(3.7), "turns": 30}}}
    out = S.readers_goals(status, "g", "r")
    # informational: (3.0 + 3.4) / 2 - (3.5 + 3.7) / 2 = 3.2 - 3.6 = -.4: met
    assert out["informational"]["gap"] == pytest.approx(-0.4)
    assert out["informational"]["met"] is True
    # relevant: (3.0 + 3.0) / 2 - 3.6 = -.6: not met
    assert out["relevant"]["gap"] == pytest.approx(-0.6) and out["relevant"]["met"] is False
    assert out["turns"] == {"grounded": 30, "rag": 30}
    assert S.readers_goals(status, "g", "missing") == {}


class _Traces:
    """A store holding two conversations' traces, as the grounded run stores them."""

    def traces(self, run_id: str, *, key: str | None = None) -> Any:
        def turn(*passages: tuple[str, str, str]) -> dict[str, Any]:
            return {"trace": {"chat": {"passages": [
                {"passage_id": pid, "title": title, "text": text}
                for pid, title, text in passages]}}}
        yield ("tail/Kopua", "chat", {}, "", {"turns": [
            turn(("k0", "Kopua", "abcd"), ("x0", "Other", "zzzzzzzz")),
            turn(("k0", "Kopua", "abcd")),  # the same passage again counts once
        ]})
        yield ("head/Pyro", "chat", {}, "", {"turns": [
            turn(("p0", "Pyro", "abcdefghij")), turn(("p1", "Pyro", "ab"))]})


def test_topic_evidence_counts_distinct_passages_of_the_topics_own_article() -> None:
    found = S.topic_evidence(_Traces(), "r")
    # Kopua: one passage of 4 characters (the other article's is not counted); Pyro: two
    # passages, 10 + 2 characters. Means: (1 + 2) / 2 passages, (4 + 12) / 2 characters.
    assert found == {"topics": 2, "passages_mean": 1.5, "passages_max": 2,
                     "topics_with_one_passage_or_none": 1, "characters_mean": 8.0,
                     "characters_max": 12}
