"""The three answer classes every WikiContradict scorer (and human) assigns."""

from __future__ import annotations

from typing import Final, Literal

Label = Literal["correct", "partially_correct", "incorrect"]

LABELS: Final[tuple[Label, ...]] = ("correct", "partially_correct", "incorrect")
"""In display order, best first."""

VALUES: Final[dict[str, float]] = {"correct": 1.0, "partially_correct": 0.5, "incorrect": 0.0}
"""Score values: a partial answer counts half, so a mean over samples reads as the paper's
correct rate with partial credit."""
