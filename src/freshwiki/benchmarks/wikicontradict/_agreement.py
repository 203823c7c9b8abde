"""How far two labellers agree, and how well a scorer finds "correct" against human labels.

Small on purpose: these are the numbers the paper reports for its judge (precision, recall and
F1 on the "correct" class against human judgements) plus chance-corrected agreement. They live
in the benchmark package because the benchmarks layer cannot import ``freshwiki.evaluation``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from freshwiki.benchmarks.wikicontradict._labels import LABELS
from freshwiki.errors import FreshwikiError


class HumanLabelsError(FreshwikiError):
    """A human-labels file that cannot be read."""


@dataclass(frozen=True)
class HumanLabel:
    """One response a person labelled.

    Attributes:
        sample_id: The benchmark sample (``wc-044-q1``).
        template: The template the response answers (``"4"``).
        response: The response text.
        label: ``correct``, ``partially_correct`` or ``incorrect``.
    """

    sample_id: str
    template: str
    response: str
    label: str


_FIELDS = ("sample_id", "template", "response", "label")


def load_human_labels(path: Path) -> list[HumanLabel]:
    """Read a JSONL file of human labels (format in the package docstring).

    Raises:
        HumanLabelsError: the file is missing, or a line is not an object with the four string
            fields and a known label; the message names the file and line.
    """
    if not path.is_file():
        raise HumanLabelsError(
            f"human labels file {path} not found",
            hint="give a JSONL file with one {sample_id, template, response, label} per line.",
        )
    return _parse_lines(str(path), path.read_text(encoding="utf-8"))


def builtin_human_labels() -> list[HumanLabel]:
    """The 40 hand-labelled responses that ship with freshwiki (templates 4 and 5)."""
    resource = resources.files("freshwiki.benchmarks.wikicontradict").joinpath(
        "validation/human_labels.jsonl"
    )
    return _parse_lines("validation/human_labels.jsonl", resource.read_text(encoding="utf-8"))


def _parse_lines(name: str, text: str) -> list[HumanLabel]:
    labels: list[HumanLabel] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{name}:{lineno}"
        try:
            item: Any = json.loads(line)
        except json.JSONDecodeError as exc:
            raise HumanLabelsError(
                f"{where}: not valid JSON ({exc.msg})", hint="write one JSON object per line."
            ) from exc
        if not isinstance(item, dict):
            raise HumanLabelsError(
                f"{where}: expected a JSON object", hint=f"give the fields {', '.join(_FIELDS)}."
            )
        for field in _FIELDS:
            if not isinstance(item.get(field), str):
                raise HumanLabelsError(
                    f"{where}: field {field!r} is missing or not a string",
                    hint=f"every line needs the string fields {', '.join(_FIELDS)}.",
                )
        if item["label"] not in LABELS:
            raise HumanLabelsError(
                f"{where}: unknown label {item['label']!r}",
                hint=f"use one of: {', '.join(LABELS)}.",
            )
        labels.append(HumanLabel(*(item[f] for f in _FIELDS)))
    return labels


def percent_agreement(a: Sequence[str], b: Sequence[str]) -> float:
    """The share of items both labellers put in the same class.

    Raises:
        ValueError: the sequences differ in length or are empty.
    """
    _check_pair(a, b)
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def cohens_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """Cohen's kappa: agreement corrected for what the two label frequencies give by chance.

    ``(p_o - p_e) / (1 - p_e)`` with ``p_e`` the sum over classes of the product of each
    labeller's share of that class. When chance agreement is already total (both used one and
    the same class throughout) the labellers agree perfectly and 1.0 is returned.

    Raises:
        ValueError: the sequences differ in length or are empty.
    """
    _check_pair(a, b)
    n = len(a)
    p_o = percent_agreement(a, b)
    p_e = sum((a.count(c) / n) * (b.count(c) / n) for c in set(a) | set(b))
    if p_e == 1.0:
        return 1.0
    return (p_o - p_e) / (1.0 - p_e)


def confusion_matrix(
    gold: Sequence[str], predicted: Sequence[str], labels: Iterable[str] = LABELS
) -> dict[str, dict[str, int]]:
    """Counts ``matrix[gold_label][predicted_label]`` over ``labels`` (and any others seen).

    Raises:
        ValueError: the sequences differ in length or are empty.
    """
    _check_pair(gold, predicted)
    names = list(dict.fromkeys([*labels, *gold, *predicted]))
    matrix = {g: dict.fromkeys(names, 0) for g in names}
    for g, p in zip(gold, predicted, strict=True):
        matrix[g][p] += 1
    return matrix


@dataclass(frozen=True)
class ClassScores:
    """Precision, recall and F1 of one class, with the counts they come from."""

    precision: float
    recall: float
    f1: float
    true_positives: int
    false_positives: int
    false_negatives: int


def precision_recall_f1(
    gold: Sequence[str], predicted: Sequence[str], positive: str = "correct"
) -> ClassScores:
    """How well ``predicted`` finds the ``positive`` class of ``gold`` (0.0 where undefined).

    Raises:
        ValueError: the sequences differ in length or are empty.
    """
    _check_pair(gold, predicted)
    pairs = list(zip(gold, predicted, strict=True))
    tp = sum(g == positive and p == positive for g, p in pairs)
    fp = sum(g != positive and p == positive for g, p in pairs)
    fn = sum(g == positive and p != positive for g, p in pairs)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return ClassScores(precision, recall, f1, tp, fp, fn)


def _check_pair(a: Sequence[str], b: Sequence[str]) -> None:
    if len(a) != len(b):
        raise ValueError(f"label sequences differ in length ({len(a)} vs {len(b)})")
    if not a:
        raise ValueError("no labels to compare")
