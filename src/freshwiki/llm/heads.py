"""Linear heads over feature vectors: standardise, then multinomial logistic regression.

Two classifiers read a model's hidden state: RiLM's certainty gate (``systems/rilm``) and the
chat's verifier probe (``chat/probe.py``). Both want the same numerics: features standardised
with the training set's mean and scale, a logistic regression with balanced class weights
(their labelled classes are rarely equal in size), trained with scikit-learn but applied with
plain numpy from the saved numbers, so a saved head is a JSON file a person can read and diff
and using it needs nothing but numpy. This module holds only those numerics; what a head's
classes mean, which features it accepts and how it is stored belong to its user.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class LogisticHead:
    """Standardisation plus logistic-regression weights, applied with numpy.

    Attributes:
        classes: Class names in the order of ``coef`` rows (sorted, as scikit-learn has them).
        mean: Standardisation mean per feature.
        scale: Standardisation scale per feature (1 where a feature never varied).
        coef: Weights, one row per class; a single row (class 1 against class 0) for two.
        intercept: One bias per row of ``coef``.
    """

    classes: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[tuple[float, ...], ...]
    intercept: tuple[float, ...]

    @property
    def dim(self) -> int:
        """Number of features it expects."""
        return len(self.mean)

    def shapes_agree(self) -> bool:
        """Whether the arrays fit together (a damaged file is caught by its reader)."""
        rows = 1 if len(self.classes) == 2 else len(self.classes)
        return (
            len(self.classes) >= 2
            and len(self.scale) == self.dim
            and len(self.coef) == rows
            and all(len(row) == self.dim for row in self.coef)
            and len(self.intercept) == rows
        )

    def probabilities(self, x: npt.NDArray[np.float64], *,
                      temperature: float = 1.0) -> npt.NDArray[np.float64]:
        """Class probabilities (columns in :attr:`classes` order) of the rows of ``x``.

        Args:
            x: One feature vector per row.
            temperature: Divides the logits before the softmax; 1 gives the classifier's own
                probabilities.

        Raises:
            ValueError: ``temperature`` is not positive.
        """
        if not temperature > 0.0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        z = (x - np.asarray(self.mean)) / np.asarray(self.scale)
        logits = z @ np.asarray(self.coef).T + np.asarray(self.intercept)
        if logits.shape[1] == 1:  # two classes: the row is class 1 against class 0
            logits = np.hstack([np.zeros_like(logits), logits])
        logits = logits / temperature
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        probs: npt.NDArray[np.float64] = e / e.sum(axis=1, keepdims=True)
        return probs

    def to_fields(self) -> dict[str, Any]:
        """The head's part of a saved file: ``classes``, ``scaler``, ``coef``, ``intercept``.

        The gate and the probe write these four keys in the same layout, so a person reads
        either file the same way and one reader (:meth:`from_fields`) serves both.
        """
        return {
            "classes": list(self.classes),
            "scaler": {"mean": list(self.mean), "scale": list(self.scale)},
            "coef": [list(row) for row in self.coef],
            "intercept": list(self.intercept),
        }

    @classmethod
    def from_fields(cls, data: Mapping[str, Any]) -> LogisticHead:
        """The inverse of :meth:`to_fields`; other keys of ``data`` are ignored.

        Shapes are not checked here (:meth:`shapes_agree` does that), so the caller can name
        its own file in one message for a missing key and for arrays that do not fit.

        Raises:
            KeyError, TypeError, ValueError: a key is missing or a value is not a number.
        """
        return cls(
            classes=tuple(str(c) for c in data["classes"]),
            mean=tuple(float(v) for v in data["scaler"]["mean"]),
            scale=tuple(float(v) for v in data["scaler"]["scale"]),
            coef=tuple(tuple(float(v) for v in row) for row in data["coef"]),
            intercept=tuple(float(v) for v in data["intercept"]),
        )

    def predict(self, x: npt.NDArray[np.float64]) -> list[str]:
        """The most probable class of each row of ``x``."""
        return [self.classes[i] for i in self.probabilities(x).argmax(axis=1)]


def fit_logistic_head(x: npt.NDArray[np.float64], labels: Sequence[str], *, c: float = 1.0,
                      seed: int = 0) -> LogisticHead:
    """Fit a :class:`LogisticHead` on rows ``x`` labelled ``labels``.

    Standardises with the rows' own mean and scale, then fits an L2-regularised logistic
    regression with balanced class weights (scikit-learn, lbfgs; multinomial for three or
    more classes).

    Args:
        x: One feature vector per row.
        labels: One class name per row; at least two distinct.
        c: Inverse regularisation strength.
        seed: Seeds the solver, so the same data gives the same head.

    Raises:
        ValueError: a label count that does not match, or fewer than two classes.
    """
    if len(labels) != len(x):
        raise ValueError("one label per row")
    if len(set(labels)) < 2:
        raise ValueError(f"a logistic head needs two classes or more, got {sorted(set(labels))}")
    from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]
    from sklearn.preprocessing import StandardScaler  # type: ignore[import-untyped]

    scaler = StandardScaler().fit(x)
    classifier = LogisticRegression(
        C=c, class_weight="balanced", max_iter=5000, random_state=seed
    ).fit(scaler.transform(x), np.asarray(labels))
    return LogisticHead(
        classes=tuple(str(v) for v in classifier.classes_),
        mean=tuple(float(v) for v in scaler.mean_),
        scale=tuple(float(v) for v in scaler.scale_),
        coef=tuple(tuple(float(v) for v in row) for row in classifier.coef_),
        intercept=tuple(float(v) for v in classifier.intercept_),
    )
