"""Normalisation, token F1, EM, BLEU and hit@k on hand-computed cases."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from freshwiki.benchmarks import Output, Sample, Task
from freshwiki.benchmarks.growover import (
    NO_RETRIEVAL,
    BleuScorer,
    EMScorer,
    F1Scorer,
    HitScorer,
    exact_match,
    normalize_answer,
    retrieval_scored,
    token_f1,
)
from freshwiki.benchmarks.growover._text import contains_answer
from freshwiki.llm import Message


def task(target: str, **meta: Any) -> Task:
    sample = Sample(id="s", input="q?", targets=(target,), metadata={"kind": "qa", **meta})
    return Task(sample=sample, template="qa", messages=(Message.user("q?"),), query="q?")


def run(scorer: Any, t: Task, text: str, trace: dict[str, Any] | None = None) -> Any:
    return asyncio.run(scorer.score(t, Output(text=text, trace=trace or {})))


def test_normalisation_drops_case_punctuation_articles_and_extra_space() -> None:
    assert normalize_answer("The Eiffel Tower!") == "eiffel tower"
    assert normalize_answer("  A  cat, an apple; THE end. ") == "cat apple end"
    assert normalize_answer("Theatre and anthem") == "theatre and anthem"  # whole words only
    assert normalize_answer("“Pyrus”—pears") == "pyrus pears"


def test_token_f1_on_hand_computed_cases() -> None:
    # [cat, sat] vs [cat, sat, down]: P = 1, R = 2/3, F1 = 0.8.
    assert token_f1("the cat sat", "a cat sat down") == pytest.approx(0.8)
    # [1999, 1999] vs [1999]: one shared token, P = 1/2, R = 1, F1 = 2/3.
    assert token_f1("1999 1999", "1999") == pytest.approx(2 / 3)
    assert token_f1("", "") == 1.0
    assert token_f1("the", "pears") == 0.0  # "the" normalises to nothing
    assert token_f1("apples", "pears") == 0.0


def test_exact_match_and_containment() -> None:
    assert exact_match("The Beatles.", "beatles")
    assert not exact_match("Beatles band", "beatles")
    assert contains_answer("It has 120 people.", "120")
    assert not contains_answer("It has 1200 people.", "120")  # whole tokens only


def test_f1_and_em_score_the_first_line_of_the_answer() -> None:
    t = task("Paris")
    assert run(F1Scorer(), t, "Answer: Paris\nIt is the capital.").value == 1.0
    em = run(EMScorer(), t, "Lyon")
    assert (em.value, em.label) == (0.0, "incorrect")


def test_changed_instances_score_the_new_answer_and_flag_the_old_one() -> None:
    t = task("120 people", old_answer="100 people")
    old = run(F1Scorer(), t, "100 people")
    # [100, people] vs [120, people]: P = R = 1/2 → F1 0.5; against the old answer F1 1.0.
    assert old.value == pytest.approx(0.5)
    assert old.label == "outdated" and old.data["f1_old"] == 1.0
    assert run(EMScorer(), t, "100 people").label == "outdated"
    new = run(F1Scorer(), t, "120 people")
    assert (new.value, new.label) == (1.0, None)
    assert run(EMScorer(), t, "120 people").label == "correct"


def test_bleu_on_a_hand_computed_sentence() -> None:
    t = task("the cat sat on a mat", kind="dialogue")
    # n-gram precisions 5/6, 3/5, 2/4, 1/3, equal lengths (no brevity penalty):
    # BLEU = (5/6 * 3/5 * 1/2 * 1/3) ** (1/4) = (1/12) ** 0.25.
    score = run(BleuScorer(), t, "the cat sat on the mat")
    assert score.value == pytest.approx((1 / 12) ** 0.25, abs=1e-4)
    assert run(BleuScorer(), t, "the cat sat on a mat").value == pytest.approx(1.0)
    assert math.isclose(run(BleuScorer(), t, "zebras fly").value, 0.0, abs_tol=1e-9)


def test_hit_needs_every_evidence_passage_among_the_retrieved() -> None:
    retrieved = {"retrieved": [{"id": "a"}, {"id": "b"}]}
    hit = run(HitScorer(), task("x", evidence_passages=["b"]), "x", retrieved)
    assert (hit.value, hit.label, hit.data["ranks"]) == (1.0, "hit", {"b": 2})
    miss = run(HitScorer(), task("x", evidence_passages=["b", "c"]), "x", retrieved)
    assert (miss.value, miss.label) == (0.0, "miss")


def test_hit_without_retrieval_is_a_labelled_skip() -> None:
    skipped = run(HitScorer(), task("x", evidence_passages=["b"]), "x")
    assert (skipped.value, skipped.label, skipped.data["skipped"]) == (0.0, NO_RETRIEVAL, True)
    scored = [skipped, run(HitScorer(), task("x", evidence_passages=["b"]), "x",
                           {"retrieved": [{"id": "b"}]})]
    assert [s.label for s in retrieval_scored(scored)] == ["hit"]


def test_scorers_are_registered_by_name() -> None:
    from freshwiki.benchmarks import load_scorer

    assert [load_scorer(n, None).name for n in ("growover-f1", "growover-em", "growover-bleu",
                                                "growover-hit")] == [
        "growover-f1", "growover-em", "growover-bleu", "growover-hit"]
