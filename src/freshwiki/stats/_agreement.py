"""Agreement between two labellers: confusion counts, Cohen's kappa, per-class P / R / F1."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def kappa_from_matrix(matrix: Sequence[Sequence[int]]) -> float | None:
    """Cohen's kappa of a square confusion matrix (rows: labeller A, columns: labeller B).

    ``(p_o - p_e) / (1 - p_e)``: observed agreement ``p_o`` (the diagonal's share) corrected
    for ``p_e``, the agreement two labellers with these label frequencies reach by chance
    (sum over classes of row share x column share). A judge that says "correct" 90 % of the
    time agrees with anything else that does so 81 % of the time by chance, which percent
    agreement alone would hide. Computed on integer counts,
    ``(n·diag - Σ row·col) / (n² - Σ row·col)``, so the degenerate case is exact.

    Returns:
        ``None`` when undefined: no items, or chance agreement is 1 (both labellers used one
        and the same class throughout).
    """
    size = len(matrix)
    if any(len(row) != size for row in matrix):
        raise ValueError("a confusion matrix must be square")
    n = sum(sum(row) for row in matrix)
    diagonal = sum(matrix[i][i] for i in range(size))
    chance = sum(sum(matrix[i]) * sum(row[i] for row in matrix) for i in range(size))
    if n == 0 or chance == n * n:
        return None
    return (n * diagonal - chance) / (n * n - chance)


Matrix = tuple[tuple[int, ...], ...]


def confusion(a: Sequence[str], b: Sequence[str],
              labels: Iterable[str] = ()) -> tuple[tuple[str, ...], Matrix]:
    """The confusion counts of two aligned label sequences.

    Returns the label order (``labels`` first, then others in order of appearance) and
    ``matrix[i][j]``, the items labelled ``order[i]`` by A and ``order[j]`` by B.

    Raises:
        ValueError: the sequences differ in length.
    """
    if len(a) != len(b):
        raise ValueError(f"label sequences differ in length ({len(a)} vs {len(b)})")
    order = tuple(dict.fromkeys([*labels, *a, *b]))
    position = {label: k for k, label in enumerate(order)}
    matrix = [[0] * len(order) for _ in order]
    for x, y in zip(a, b, strict=True):
        matrix[position[x]][position[y]] += 1
    return order, tuple(tuple(row) for row in matrix)


def cohens_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa of two aligned label sequences (see :func:`kappa_from_matrix`)."""
    return kappa_from_matrix(confusion(a, b)[1])


def prf(tp: npt.ArrayLike, fp: npt.ArrayLike,
        fn: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Precision TP / (TP + FP), recall TP / (TP + FN) and F1 2TP / (2TP + FP + FN).

    Element-wise over arrays of counts (one row per bootstrap resample, say); each is NaN
    where its denominator is 0 (no positive predictions, no positives, neither).
    """
    t, p, n = (np.asarray(x, dtype=np.float64) for x in (tp, fp, fn))
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(t + p > 0, t / (t + p), np.nan)
        recall = np.where(t + n > 0, t / (t + n), np.nan)
        f1 = np.where(2 * t + p + n > 0, 2 * t / (2 * t + p + n), np.nan)
    return precision, recall, f1


@dataclass(frozen=True)
class ClassCounts:
    """One class's precision, recall and F1 (``None`` where undefined), with their counts."""

    precision: float | None
    recall: float | None
    f1: float | None
    true_positives: int
    false_positives: int
    false_negatives: int


def class_scores(gold: Sequence[str], predicted: Sequence[str], positive: str) -> ClassCounts:
    """How well ``predicted`` finds the ``positive`` class of ``gold`` (see :func:`prf`).

    Raises:
        ValueError: the sequences differ in length.
    """
    if len(gold) != len(predicted):
        raise ValueError(f"label sequences differ in length ({len(gold)} vs {len(predicted)})")
    pairs = list(zip(gold, predicted, strict=True))
    tp = sum(g == positive and p == positive for g, p in pairs)
    fp = sum(g != positive and p == positive for g, p in pairs)
    fn = sum(g == positive and p != positive for g, p in pairs)
    values = [float(v) for v in prf(tp, fp, fn)]
    precision, recall, f1 = (None if v != v else v for v in values)  # NaN: undefined
    return ClassCounts(precision, recall, f1, tp, fp, fn)
