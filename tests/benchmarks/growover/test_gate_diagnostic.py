"""The gate diagnostic of the GrowOVER figure (experiments/growover_gate_diagnostic.py).

Three questions written out by hand, every expected figure worked out on paper from them (the
arithmetic is in the comments), so the README's gate figures rest on counting that was checked.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.benchmarks.growover.helpers import experiment_script


def _script() -> ModuleType:
    return experiment_script("growover_gate_diagnostic")


def _question(type_: str, written: str, evidence: list[str], docs: list[tuple[str, float]],
              chosen: int, adopted: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    meta = {"type": type_, "generated_as": written, "evidence_passages": evidence}
    documents = [{"id": doc, "rank": rank, "probabilities": {"reliable": p}}
                 for rank, (doc, p) in enumerate(docs, start=1)]
    # Stored out of rank order on purpose: the diagnostic must sort by rank itself.
    return meta, {"adopted": adopted,
                  "first": {"chosen": chosen, "documents": list(reversed(documents))}}


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    figures: dict[str, Any] = _script().diagnose([
        # evidence a at rank 1 beats b and c: 2 of 2 pairs; picked rank 1, adopted
        _question("unchanged", "initial", ["a"], [("a", .9), ("b", .1), ("c", .2)], 1, True),
        # evidence e at rank 2 loses to d (.3 < .5) and ties f (.3): per question (0 + .5) / 2
        _question("new", "new", ["e"], [("d", .5), ("e", .3), ("f", .3)], 1, False),
        # no evidence retrieved: counts for the pick share and adoption, not for ranking
        _question("changed", "changed", [], [("g", .2), ("h", .4), ("i", .0)], 2, False),
    ])
    return figures


def test_ranking_counts_pairs_within_each_question(result: dict[str, Any]) -> None:
    ranking = result["ranking_within_question"]
    assert (ranking["questions"], ranking["pairs"], ranking["evidence_higher"]) == (2, 4, 2)
    assert ranking["mean_per_question"] == pytest.approx((1.0 + 0.25) / 2, abs=1e-3)


def test_pick_is_compared_with_rank_one_on_the_same_questions(result: dict[str, Any]) -> None:
    pick = result["pick"]
    assert pick["questions_with_evidence_in_top_k"] == 2
    assert (pick["gate_pick_holds_evidence"]["k"], pick["gate_pick_holds_evidence"]["n"]) == (1, 2)
    assert pick["retriever_rank1_holds_evidence"]["k"] == 1
    assert (pick["pick_is_not_rank1"]["k"], pick["pick_is_not_rank1"]["n"]) == (1, 3)


def test_adoption_and_evidence_are_counted_per_type(result: dict[str, Any]) -> None:
    adopt = result["adopt_by_type"]
    assert adopt["unchanged"]["adopted"]["k"] == 1 and adopt["unchanged"]["adopted"]["n"] == 1
    assert adopt["new"]["adopted"]["k"] == 0
    assert adopt["changed"]["pick_holds_evidence"]["k"] == 0


def test_p_reliable_of_evidence_documents_by_origin(result: dict[str, Any]) -> None:
    by = result["p_reliable_of_evidence_documents"]
    assert by["by_generated_as"]["initial"]["mean_p_reliable"] == pytest.approx(.9)
    assert by["by_generated_as"]["new"]["mean_p_reliable"] == pytest.approx(.3)
    assert "changed" not in by["by_type"]  # no evidence document was retrieved for it
    assert by["by_type_and_generated_as"]["unchanged / written as initial"]["n"] == 1


def test_variance_splits_between_and_within_questions(result: dict[str, Any]) -> None:
    # Question means .4, .3667, .2 (mean .3222): between = (.0778² + .0444² + .1222²) / 3.
    # Deviations within: (.5, -.3, -.2), (.1333, -.0667, -.0667), (0, .2, -.2): squares / 9.
    variance = result["variance_of_p_reliable"]
    assert variance["between_questions"] == pytest.approx(0.0077, abs=1e-4)
    assert variance["within_question"] == pytest.approx(0.0541, abs=1e-4)


def _rilm(evidence: list[str], first: list[str], second: list[str], chosen: str,
          adopted: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    return ({"evidence_passages": evidence},
            {"adopted": adopted, "chosen": chosen,
             "first": {"documents": [{"id": d} for d in first]},
             "second": {"documents": [{"id": d} for d in second]} if second else None})


def test_re_retrieval_counts_only_not_adopted_answers_and_where_evidence_was() -> None:
    figures = _script().rereading([
        _rilm(["a"], ["a", "b", "c"], [], "first", True),  # adopted: never re-retrieved
        # the evidence was in the first top k, which the second search excludes; pick: second
        _rilm(["a"], ["a", "b", "c"], ["d", "e", "f"], "second", False),
        # the first search missed x, the second found it, the pick kept the first answer
        _rilm(["x"], ["a", "b", "c"], ["x", "y", "z"], "first", False),
    ])
    assert figures["not_adopted"] == 2
    assert (figures["evidence_in_first_top_k"]["k"], figures["evidence_in_first_top_k"]["n"]) \
        == (1, 2)
    found = figures["second_search_finds_evidence_first_missed"]
    assert (found["k"], found["n"]) == (1, 1)
    assert figures["final_pick_by_where_the_evidence_was"] == {
        "evidence in first top k; final pick second": 1,
        "evidence in second top k; final pick first": 1}


def test_the_gate_month_comes_from_the_gate_file_the_run_names(tmp_path: Path) -> None:
    script = _script()
    (tmp_path / "gate-qa-abc.json").write_text(
        json.dumps({"training": {"snapshot": "2023-12-31"}}), encoding="utf-8")
    assert script.gate_snapshot(tmp_path, {"gate": "gate-qa-abc.json@0123"}) == "2023-12-31"
    with pytest.raises(SystemExit, match=r"gate-qa-other\.json not found"):
        script.gate_snapshot(tmp_path, {"gate": "gate-qa-other.json@0123"})
