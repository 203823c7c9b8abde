"""The three answer classes every WikiContradict scorer (and human) assigns."""

from __future__ import annotations

from typing import Final, Literal

Label = Literal["correct", "partially_correct", "incorrect"]

LABELS: Final[tuple[Label, ...]] = ("correct", "partially_correct", "incorrect")
"""In display order, best first."""

VALUES: Final[dict[str, float]] = {"correct": 1.0, "partially_correct": 0.0, "incorrect": 0.0}
"""Score values: 1 for correct, else 0, so a mean over answers is the paper's headline number,
the share of correct responses. Partial answers are not averaged in as half: the paper never
does, and reports show the share of each class beside the mean (its Tables 2 and 5)."""
