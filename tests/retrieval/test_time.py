from __future__ import annotations

import numpy as np
import pytest

from freshwiki.errors import FreshwikiError
from freshwiki.retrieval import RetrievalError, TimeIntent, rerank_order, time_scores


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("recent", TimeIntent("recent")),
        (" RECENT ", TimeIntent("recent")),
        ("none", TimeIntent()),
        ("", TimeIntent()),
        ("year=2019", TimeIntent("year", 2019)),
        ("year = 1066", TimeIntent("year", 1066)),
        (None, TimeIntent()),
    ],
)
def test_parse_accepts_the_three_forms(text: str | None, intent: TimeIntent) -> None:
    assert TimeIntent.parse(text) == intent
    assert TimeIntent.parse(intent) is intent


def test_str_round_trips() -> None:
    for text in ("recent", "none", "year=2019"):
        assert str(TimeIntent.parse(text)) == text


@pytest.mark.parametrize("bad", ["latest", "year=19", "year=3000", "2019", "year:2019",
                                 "recent,year=2019"])
def test_parse_rejects_other_strings_naming_value_and_forms(bad: str) -> None:
    with pytest.raises(RetrievalError) as info:
        TimeIntent.parse(bad)
    assert isinstance(info.value, FreshwikiError)
    assert repr(bad) in info.value.message
    assert "recent" in str(info.value) and "year=YYYY" in str(info.value)


def test_inconsistent_construction_is_an_error() -> None:
    with pytest.raises(RetrievalError):
        TimeIntent("year")
    with pytest.raises(RetrievalError):
        TimeIntent("recent", 2019)


def _years(*groups: tuple[int, ...]) -> list[np.ndarray]:
    return [np.asarray(g, dtype=np.int16) for g in groups]


def test_recent_prefers_newer_timestamps_and_mentions() -> None:
    stamps = np.array([2015.5, 2023.5, np.nan, 2023.5])
    mentioned = _years((2015,), (2023,), (), (2010,))
    scores = time_scores(TimeIntent("recent"), stamps, mentioned)
    # The newest stamp and newest mention: perfect. Neither signal: 0.
    assert scores[1] == pytest.approx(1.0)
    assert scores[2] == 0.0
    # 8 years older on both signals: 2 ** -4.
    assert scores[0] == pytest.approx(2 ** -4)
    # New revision mentioning an old year sits in between.
    assert scores[0] < scores[3] < scores[1]


def test_year_prefers_mentions_then_nearby_timestamps() -> None:
    stamps = np.array([2023.5, 2015.5, 2016.9, 2010.0, np.nan])
    mentioned = _years((2015,), (), (), (), (2014,))
    scores = time_scores(TimeIntent("year", 2015), stamps, mentioned)
    assert scores[0] == pytest.approx(0.6 + 0.4 * 2 ** (-(2023.5 - 2017) / 4))
    assert scores[1] == pytest.approx(0.4)  # written during 2015
    assert scores[2] == pytest.approx(0.4)  # written in 2016: still "about" 2015
    assert scores[3] == pytest.approx(0.4 * 2 ** -5)  # five years too early
    assert scores[4] == pytest.approx(0.6 * 0.5)  # mentions 2014: one year off
    assert np.argmax(scores) == 0


def test_none_intent_scores_zero() -> None:
    scores = time_scores(TimeIntent(), np.array([2020.0]), _years((2020,)))
    assert scores.tolist() == [0.0]


def test_rerank_blends_normalised_relevance_with_time() -> None:
    relevance = np.array([0.030, 0.029, 0.010])  # RRF-like: the first two nearly tied
    time = np.array([0.0, 1.0, 1.0])
    order, final = rerank_order(relevance, time, weight=0.35)
    # Near-tied relevance: the time match decides. Far behind: it does not.
    assert order.tolist() == [1, 0, 2]
    assert final[0] == pytest.approx(0.65)
    assert final[2] == pytest.approx(0.35)
    # Weight 0 keeps the retrieval order; ties keep it too.
    assert rerank_order(relevance, time, weight=0.0)[0].tolist() == [0, 1, 2]
    assert rerank_order(np.ones(3), np.zeros(3))[0].tolist() == [0, 1, 2]
