"""Test doubles: snapshots built from sentence lists, and an encoder with chosen similarities."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from freshwiki.changes.snapshots import Snapshot, SnapshotSentence

DIM = 256
T0 = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def snap(sentences: Sequence[str], *, page_id: int = 7, title: str = "Example",
         revision: int = 1, when: dt.datetime = T0) -> Snapshot:
    """A snapshot whose sentences are exactly ``sentences``, one paragraph each."""
    return Snapshot(
        page_id=page_id,
        title=title,
        revision_id=revision,
        timestamp=when,
        sentences=tuple(SnapshotSentence(t, k, (), 0, 0, len(t)) for k, t in enumerate(sentences)),
        paragraphs=tuple(sentences),
    )


def _axis(k: int) -> npt.NDArray[np.float32]:
    v = np.zeros(DIM, dtype=np.float32)
    v[k] = 1.0
    return v


class FakeEncoder:
    """Vectors chosen by the test: ``pairs`` gives (a, b, cosine) and each such pair gets its
    own two axes, so cos(a, b) is exactly the given value and every other pair is orthogonal.
    Texts it was asked for are recorded; ``fail=True`` makes any call an error (to prove a
    step never reached the encoder)."""

    def __init__(self, pairs: Sequence[tuple[str, str, float]] = (), *, fail: bool = False):
        self.vectors: dict[str, npt.NDArray[np.float32]] = {}
        self.fail = fail
        self.calls: list[list[str]] = []
        axis = 0
        for a, b, cos in pairs:
            self.vectors[a] = _axis(axis)
            self.vectors[b] = (cos * _axis(axis) + np.sqrt(1 - cos * cos) * _axis(axis + 1)
                               ).astype(np.float32)
            axis += 2
        self._next = axis

    @property
    def encoded(self) -> list[str]:
        return [t for call in self.calls for t in call]

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if self.fail:
            raise AssertionError(f"the encoder should not be called, got {list(texts)}")
        self.calls.append(list(texts))
        rows = []
        for t in texts:
            if t not in self.vectors:
                # Unrelated text: an axis of its own (orthogonal to everything else).
                self.vectors[t] = _axis(self._next)
                self._next += 1
            rows.append(self.vectors[t])
        return np.stack(rows).astype(np.float32)
