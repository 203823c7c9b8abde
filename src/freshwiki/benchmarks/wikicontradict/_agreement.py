"""How far two labellers agree, and how well a scorer finds each class against human labels.

Small on purpose: these are the numbers the paper reports for its judge (its Table 3: accuracy,
macro F1, and precision / recall / F1 of each of correct, partially correct and incorrect
against human judgements) plus chance-corrected agreement (Cohen's kappa) and the confusion
matrix, in the paper's layout. The statistics themselves (kappa, per-class P / R / F1, the
Wilson interval) are :mod:`freshwiki.stats`'s; this module only lays them out.

Two labelled sets ship in ``validation/``: ``human_labels.jsonl`` (40 responses a person wrote
and labelled, :func:`builtin_human_labels`) and ``real_labels.jsonl`` (responses the local
models produced in real runs, labelled by reading, :func:`builtin_real_labels`). Lines of the
second also say which model and system produced the response, the run it came from and why it
got its label, so each label can be checked and a judge other than the producer chosen.
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
from freshwiki.stats import class_scores, cohens_kappa, wilson_ci


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
        model: The model spec that produced the response ("" when a person wrote it).
        system: The system that produced it (``vanilla``, ``rag``; "" when unknown).
        reason: Why it got its label, in a line.
        run_id: The evaluation run the response was read from ("" when none).
    """

    sample_id: str
    template: str
    response: str
    label: str
    model: str = ""
    system: str = ""
    reason: str = ""
    run_id: str = ""


_FIELDS = ("sample_id", "template", "response", "label")
_OPTIONAL = ("model", "system", "reason", "run_id")


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
    """The 40 hand-written, hand-labelled responses that ship with freshwiki (templates 4, 5)."""
    return _builtin("validation/human_labels.jsonl")


def builtin_real_labels() -> list[HumanLabel]:
    """Real responses of the local models (templates 1, 4, 5), labelled by reading.

    Each carries its producing model and system, its run id and a one-line reason.
    """
    return _builtin("validation/real_labels.jsonl")


def _builtin(name: str) -> list[HumanLabel]:
    resource = resources.files("freshwiki.benchmarks.wikicontradict").joinpath(name)
    return _parse_lines(name, resource.read_text(encoding="utf-8"))


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
        for field in _OPTIONAL:
            if not isinstance(item.get(field, ""), str):
                raise HumanLabelsError(
                    f"{where}: field {field!r} is not a string",
                    hint=f"the optional fields {', '.join(_OPTIONAL)} are strings when given.",
                )
        labels.append(HumanLabel(*(item[f] for f in _FIELDS),
                                 **{f: item.get(f, "") for f in _OPTIONAL}))
    return labels


def percent_agreement(a: Sequence[str], b: Sequence[str]) -> float:
    """The share of items both labellers put in the same class.

    Raises:
        ValueError: the sequences differ in length or are empty.
    """
    _check_pair(a, b)
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


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
    s = class_scores(gold, predicted, positive)
    return ClassScores(s.precision or 0.0, s.recall or 0.0, s.f1 or 0.0,
                       s.true_positives, s.false_positives, s.false_negatives)


def _check_pair(a: Sequence[str], b: Sequence[str]) -> None:
    if len(a) != len(b):
        raise ValueError(f"label sequences differ in length ({len(a)} vs {len(b)})")
    if not a:
        raise ValueError("no labels to compare")


@dataclass(frozen=True)
class AgreementReport:
    """A scorer's labels against human ones, laid out as the paper's Table 3 plus kappa.

    Attributes:
        n: Responses compared.
        per_class: Precision / recall / F1 of each class, the class taken as positive.
        macro_f1: The mean F1 over the classes either side used (see :func:`agreement_report`).
        accuracy: Share of responses given the human's label.
        kappa: Cohen's kappa.
        confusion: ``confusion[human][scorer]`` counts.
    """

    n: int
    per_class: dict[str, ClassScores]
    macro_f1: float
    accuracy: float
    kappa: float
    confusion: dict[str, dict[str, int]]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types, for a result file, with Wilson 95 % intervals on P and R."""
        return {
            "n": self.n,
            "per_class": {label: {"precision": s.precision, "recall": s.recall, "f1": s.f1,
                                  "tp": s.true_positives, "fp": s.false_positives,
                                  "fn": s.false_negatives,
                                  "precision_ci95": _share_interval(
                                      s.true_positives, s.true_positives + s.false_positives),
                                  "recall_ci95": _share_interval(
                                      s.true_positives, s.true_positives + s.false_negatives)}
                          for label, s in self.per_class.items()},
            "macro_f1": self.macro_f1,
            "accuracy": self.accuracy,
            "kappa": self.kappa,
            "confusion": self.confusion,
        }


def agreement_report(
    gold: Sequence[str], predicted: Sequence[str], labels: Iterable[str] = LABELS
) -> AgreementReport:
    """Per-class precision / recall / F1, macro F1, accuracy, kappa and confusion matrix.

    Every class in ``labels`` gets its row. The macro F1 averages only the classes that the
    human or the scorer used at least once: a class nobody used has no precision or recall to
    speak of, and counting its 0 would punish a scorer for a class the set lacks (a set of
    template 2 answers has no partial class at all).

    Raises:
        ValueError: the sequences differ in length or are empty.
    """
    _check_pair(gold, predicted)
    names = list(dict.fromkeys([*labels, *gold, *predicted]))
    per_class = {name: precision_recall_f1(gold, predicted, positive=name) for name in names}
    used = [name for name in names if name in gold or name in predicted]
    return AgreementReport(
        n=len(gold),
        per_class=per_class,
        macro_f1=sum(per_class[name].f1 for name in used) / len(used),
        accuracy=percent_agreement(gold, predicted),
        # Undefined only when both used one and the same class throughout: perfect agreement.
        kappa=_or_one(cohens_kappa(gold, predicted)),
        confusion=confusion_matrix(gold, predicted, labels=names),
    )


def _or_one(kappa: float | None) -> float:
    return 1.0 if kappa is None else kappa


def _share_interval(successes: int, trials: int) -> tuple[float, float] | None:
    """The 95 % interval of a share as the result files hold it: z = 1.96, a pair or ``None``.

    Why Wilson: validation sets are small and a class may have a handful of members, where
    the normal approximation gives intervals below 0 or above 1 and none at all at 0 or n.
    """
    interval = wilson_ci(successes, trials, z=1.96)
    return None if interval is None else (interval.low, interval.high)
