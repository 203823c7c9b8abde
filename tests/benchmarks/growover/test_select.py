"""Paragraph selection (length and sentence-count rules), KMeans picks, runs of new sentences."""

from __future__ import annotations

import numpy as np

from freshwiki.benchmarks.growover import candidates, runs, select_paragraphs
from tests.benchmarks.growover.helpers import Encoder, axis, snap

FILL = "x" * 140


def para(tag: str, n: int = 2, filler: str = FILL) -> list[str]:
    """``n`` sentences; with the default filler the paragraph is about 300-320 characters."""
    return [f"{tag} sentence {k} says {filler}." for k in range(n)]


def test_candidates_keep_1_to_4_sentences_of_300_to_600_characters() -> None:
    paragraphs = [
        para("ok2"),                              # 2 sentences, ~320 chars: in
        para("five", 5, "y" * 60),                # 5 sentences: out (not fewer than 5)
        para("four", 4, "y" * 60),                # 4 sentences, ~370 chars: in
        ["Too short, one sentence."],             # < 300 chars: out
        para("long", 3, "z" * 200),               # > 600 chars: out
    ]
    s = snap(paragraphs)
    lengths = [len(p) for p in s.paragraphs]
    assert 300 <= lengths[0] <= 600 and 300 <= lengths[2] <= 600 and lengths[4] > 600
    found = candidates(s)
    assert [c.paragraph for c in found] == [0, 2]
    assert found[1].sentences == (7, 8, 9, 10)  # after 2 + 5 sentences


def test_four_or_fewer_candidates_are_all_taken_without_clustering() -> None:
    s = snap([para(f"p{k}") for k in range(4)])

    class Refuse(Encoder):
        def encode(self, texts):  # type: ignore[no-untyped-def]
            raise AssertionError("no clustering for four candidates")

    assert [c.paragraph for c in select_paragraphs(s, Refuse())] == [0, 1, 2, 3]


def test_clustering_takes_the_paragraph_nearest_each_of_four_centroids() -> None:
    # 12 candidates in 4 tight groups of 3 (groups interleaved on the page). In each group the
    # vectors are c, c + d, c - d, so the centroid is c: the "centre" paragraph must win.
    paragraphs = [para(f"g{g}-{role}") for role in ("plus", "centre", "minus") for g in range(4)]
    s = snap(paragraphs)
    vectors = {}
    for p, text in enumerate(s.paragraphs):
        g, role = p % 4, ("plus", "centre", "minus")[p // 4]
        offset = {"plus": 0.1, "centre": 0.0, "minus": -0.1}[role]
        vectors[text] = (axis(g) * 5 + offset * axis(10 + g)).astype(np.float32)
    chosen = select_paragraphs(s, Encoder(vectors), seed=0)
    assert [c.paragraph for c in chosen] == [4, 5, 6, 7]  # the four "centre" paragraphs


def test_runs_break_at_gaps_paragraphs_and_six_sentences() -> None:
    s = snap([[f"a{k}." for k in range(9)], ["b0.", "b1."]])  # sentences 0-8, then 9-10
    assert runs([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], s) == [
        (0, 1, 2, 3, 4, 5), (6, 7, 8), (9, 10)]
    assert runs([1, 3, 4], s) == [(1,), (3, 4)]
    assert runs([], s) == []
