"""Query time intent and the time-aware rerank score.

A question has a *time intent*: "what is the population now?" wants the most recent
information (``recent``); "who was the coach in 2015?" wants passages about 2015
(``year=2015``); most questions have none (``none``). The intent does not filter anything:
it reorders a pool of already-relevant candidates (the top of the fused list), so a passage
that is highly relevant but undated is never lost, and ``none`` leaves the order untouched.

The score, for each candidate ``i`` of the pool (all terms in [0, 1]):

``final_i = (1 - w) * rel_i + w * time_i``

- ``rel_i`` is the candidate's retrieval score min-max normalised over the pool (the top one
  is 1, the last one 0; all 1 when the pool's scores are equal). Normalising makes ``w``
  mean the same for RRF, BM25 and cosine scores, whose scales differ by orders of magnitude.
  When the pool is not full (a selective filter), it holds every candidate there is and the
  floor is 0 instead, so the last of a few close candidates is not pushed down to 0.
- ``time_i`` is how well the passage's dates match the intent:

  - ``recent``: the mean of the available signals among (a) revision-timestamp recency and
    (b) mention recency (the latest year the text mentions), each ``2 ** (-age / 2 years)``
    where ``age`` is measured from the newest such date in the pool. Relative to the pool and
    not to today, so an old snapshot still ranks its newest passages first. A passage with
    neither signal gets 0.
  - ``year=Y``: ``0.6 * mention + 0.4 * stamp``. ``mention`` is ``2 ** (-d)`` for ``d`` the
    distance in years from Y to the closest year the text mentions (1 when it mentions Y, 0
    when it mentions none). ``stamp`` is 1 when the revision dates from Y or Y+1 (facts about
    a year are written during it or just after), decays with a half-life of 1 year before Y
    (a revision older than Y cannot know about it) and of 4 years after Y+1 (later revisions
    still describe Y, but may have rewritten it). Mentions weigh more because they say what
    the text is *about*; the timestamp only says when it was written.

- ``w`` (``time_weight``, default 0.35): a candidate with a perfect time match overtakes a
  leader with none once its normalised relevance is above 0.46 (``0.65 * r + 0.35 > 0.65``);
  a weaker one stays behind. This is set by reasoning, not tuned: ``../shared/data`` has no
  labelled time-sensitive query set to tune it on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from freshwiki.retrieval._errors import RetrievalError

DEFAULT_TIME_WEIGHT = 0.35
RECENT_HALF_LIFE_YEARS = 2.0
MENTION_WEIGHT = 0.6
SECONDS_PER_YEAR = 365.2425 * 86400
_ALLOWED = "'recent', 'year=YYYY' (e.g. year=2019) or 'none'"
_YEAR_FORM = re.compile(r"year\s*=\s*(\d{4})")


@dataclass(frozen=True)
class TimeIntent:
    """What time a query is about: ``none``, ``recent``, or one year.

    Attributes:
        kind: ``none``, ``recent`` or ``year``.
        year: The year for ``kind == "year"``; ``None`` otherwise.
    """

    kind: Literal["none", "recent", "year"] = "none"
    year: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("none", "recent", "year"):
            raise RetrievalError(
                f"unknown time intent kind {self.kind!r}", hint=f"use {_ALLOWED}."
            )
        if (self.kind == "year") != (self.year is not None):
            raise RetrievalError(
                f"time intent {self.kind!r} with year={self.year!r}",
                hint="a year intent needs a year and the others none: " + _ALLOWED + ".",
            )

    @classmethod
    def parse(cls, value: str | TimeIntent | None) -> TimeIntent:
        """Read ``recent``, ``year=YYYY`` or ``none`` (case and spaces ignored).

        ``None`` and an existing :class:`TimeIntent` pass through, so callers can accept
        either form.

        Raises:
            RetrievalError: For any other string, naming it and the allowed forms.
        """
        if value is None:
            return cls()
        if isinstance(value, TimeIntent):
            return value
        text = value.strip().lower()
        if text in ("none", ""):
            return cls()
        if text == "recent":
            return cls("recent")
        match = _YEAR_FORM.fullmatch(text)
        if match:
            year = int(match.group(1))
            if 1000 <= year <= 2099:
                return cls("year", year)
        raise RetrievalError(
            f"invalid time intent {value!r}",
            hint=f"use {_ALLOWED}; years run from 1000 to 2099.",
        )

    def __str__(self) -> str:
        return f"year={self.year}" if self.kind == "year" else self.kind


def _decay(distance: npt.NDArray[np.float64], half_life: float) -> npt.NDArray[np.float64]:
    result: npt.NDArray[np.float64] = np.exp2(-np.maximum(distance, 0.0) / half_life)
    return result


def time_scores(
    intent: TimeIntent,
    stamp_years: npt.NDArray[np.float64],
    mentioned: list[npt.NDArray[np.int16]],
) -> npt.NDArray[np.float64]:
    """How well each candidate's dates match ``intent``, in [0, 1] (see the module doc).

    Args:
        intent: The query's time intent.
        stamp_years: Each candidate's revision timestamp as a fractional year (NaN if none).
        mentioned: Each candidate's mentioned years (possibly empty).

    Returns:
        One score per candidate; zeros for the ``none`` intent.
    """
    n = len(stamp_years)
    if intent.kind == "none" or n == 0:
        return np.zeros(n)
    has_stamp = ~np.isnan(stamp_years)
    has_mention = np.array([len(m) > 0 for m in mentioned], dtype=bool)
    if intent.kind == "recent":
        latest_mention = np.array(
            [float(m.max()) if len(m) else np.nan for m in mentioned], dtype=np.float64
        )
        stamp_part = np.zeros(n)
        mention_part = np.zeros(n)
        if has_stamp.any():
            newest = float(np.nanmax(stamp_years))
            stamp_part[has_stamp] = _decay(
                newest - stamp_years[has_stamp], RECENT_HALF_LIFE_YEARS
            )
        if has_mention.any():
            newest = float(np.nanmax(latest_mention))
            mention_part[has_mention] = _decay(
                newest - latest_mention[has_mention], RECENT_HALF_LIFE_YEARS
            )
        signals = has_stamp.astype(np.float64) + has_mention.astype(np.float64)
        total = stamp_part + mention_part
        return np.divide(total, signals, out=np.zeros(n), where=signals > 0)
    year = float(intent.year or 0)
    mention_part = np.array(
        [float(np.exp2(-np.abs(m.astype(np.float64) - year).min())) if len(m) else 0.0
         for m in mentioned],
        dtype=np.float64,
    )
    stamp_part = np.zeros(n)
    stamps = stamp_years[has_stamp]
    before = _decay(year - stamps, 1.0)  # 1 from Y on
    after = _decay(stamps - (year + 2.0), 4.0)  # 1 until the end of Y+1
    stamp_part[has_stamp] = np.minimum(before, after)
    result: npt.NDArray[np.float64] = MENTION_WEIGHT * mention_part + (
        1.0 - MENTION_WEIGHT
    ) * stamp_part
    return result


def rerank_order(
    relevance: npt.NDArray[np.float64],
    time: npt.NDArray[np.float64],
    weight: float = DEFAULT_TIME_WEIGHT,
    *,
    exhaustive: bool = False,
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]:
    """Order a candidate pool by blended relevance and time match.

    Args:
        relevance: Retrieval scores of the pool, best first (any scale).
        time: :func:`time_scores` of the same candidates.
        weight: Share of the time match in the blend (0 keeps the retrieval order).
        exhaustive: The pool holds every candidate there is (filters or rare terms left
            fewer than the pool size). Relevance is then normalised against 0 instead of the
            pool's lowest score, so that of two close candidates the second does not drop to
            0 just for being last.

    Returns:
        The new order (indices into the pool) and the blended score of each candidate
        (in pool order). Ties keep the retrieval order.
    """
    lo, hi = float(relevance.min()), float(relevance.max())
    if exhaustive:
        lo = min(lo, 0.0)
    rel = (relevance - lo) / (hi - lo) if hi > lo else np.ones_like(relevance)
    final: npt.NDArray[np.float64] = (1.0 - weight) * rel + weight * time
    order = np.lexsort((np.arange(len(final)), -final))
    return order, final
