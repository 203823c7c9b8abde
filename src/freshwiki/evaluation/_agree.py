"""A stored run's verdicts against a person's labels: ``freshwiki runs agree``.

A judge or a classifying scorer is only as good as its agreement with people, and that
agreement has to be measured on the answers the run actually scored. The labels are a JSONL
file, one answer a line::

    {"sample_id": "wc-000-q1", "template": "2", "label": "correct",
     "scorer": "wikicontradict-judge",      # optional: the scorer this label is meant for
     "response": "apomorphine",             # optional: the text that was read
     "labeller": "who read it"}             # optional

A label is matched to the run's verdict by (sample id, template). When a label carries the
``response`` that was read, it counts only if the run's answer is that text (whitespace
aside): a run that replays a cache can hold another answer to the same prompt, and a label
of one text says nothing about another. Labels with a ``scorer`` other than the one compared
are left out. The WikiContradict validation files (``real_labels_single.jsonl``, ...) are
already in this format.

Every figure comes from :mod:`freshwiki.stats`: Cohen's kappa of the confusion matrix, per
class precision / recall / F1, Wilson intervals for accuracy, precision and recall, and
percentile-bootstrap intervals (answers resampled) for kappa and F1.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from freshwiki.errors import FreshwikiError
from freshwiki.evaluation._types import RunResults
from freshwiki.stats import (
    Interval,
    class_scores,
    confusion,
    kappa_from_matrix,
    paired_bootstrap_ci,
    prf,
    wilson_ci,
)


class LabelsError(FreshwikiError):
    """A labels file that cannot be read, or that does not fit the run."""


@dataclass(frozen=True)
class LabelRow:
    """One labelled answer (see the module docstring for the file format)."""

    sample_id: str
    template: str
    label: str
    scorer: str = ""
    response: str | None = None
    labeller: str = ""
    line: int = 0


@dataclass(frozen=True)
class ClassAgreement:
    """One class: precision, recall and F1 of the scorer against the labels, with intervals."""

    label: str
    support: int
    predicted: int
    precision: float | None
    recall: float | None
    f1: float | None
    precision_ci: Interval | None
    recall_ci: Interval | None
    f1_ci: Interval | None


@dataclass(frozen=True)
class RunAgreement:
    """A scorer's verdicts in one run against a labels file.

    Attributes:
        run_id: The run.
        scorer: The scorer compared.
        labels_path: The labels file.
        labellers: Who labelled (the file's ``labeller`` values; empty when it names none).
        n: Answers compared.
        accuracy: Share of them where scorer and labels agree (``None`` when n is 0).
        accuracy_ci: Wilson interval of the accuracy.
        kappa: Cohen's kappa (``None`` when undefined).
        kappa_ci: Bootstrap interval of kappa.
        classes: Row / column order of the confusion matrix.
        matrix: ``matrix[i][j]``: answers labelled ``classes[i]`` by the labels and
            ``classes[j]`` by the scorer.
        per_class: Precision / recall / F1 per class.
        macro_f1: Mean F1 over the classes either side used (``None`` when none is defined).
        no_verdict: Labels whose answer the run has no verdict of this scorer for.
        text_differs: Labels whose read text differs from the run's answer (left out).
        other_scorer: Labels meant for another scorer (left out).
    """

    run_id: str
    scorer: str
    labels_path: Path
    labellers: tuple[str, ...]
    n: int
    accuracy: float | None
    accuracy_ci: Interval | None
    kappa: float | None
    kappa_ci: Interval | None
    classes: tuple[str, ...]
    matrix: tuple[tuple[int, ...], ...]
    per_class: tuple[ClassAgreement, ...]
    macro_f1: float | None
    no_verdict: tuple[str, ...]
    text_differs: tuple[str, ...]
    other_scorer: int

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable view (``runs agree --json``)."""
        def ci(interval: Interval | None) -> list[float] | None:
            return None if interval is None else [interval.low, interval.high]

        return {
            "run_id": self.run_id, "scorer": self.scorer, "labels": str(self.labels_path),
            "labellers": list(self.labellers), "n": self.n, "accuracy": self.accuracy,
            "accuracy_ci": ci(self.accuracy_ci), "kappa": self.kappa,
            "kappa_ci": ci(self.kappa_ci), "macro_f1": self.macro_f1,
            "classes": list(self.classes), "confusion": [list(r) for r in self.matrix],
            "per_class": {c.label: {"support": c.support, "predicted": c.predicted,
                                    "precision": c.precision, "recall": c.recall, "f1": c.f1,
                                    "precision_ci": ci(c.precision_ci),
                                    "recall_ci": ci(c.recall_ci), "f1_ci": ci(c.f1_ci)}
                          for c in self.per_class},
            "no_verdict": list(self.no_verdict), "text_differs": list(self.text_differs),
            "other_scorer": self.other_scorer,
        }


def read_labels(path: Path) -> list[LabelRow]:
    """Read a labels file (JSONL; see the module docstring).

    Raises:
        LabelsError: the file is missing, or a line is not a JSON object with string
            ``sample_id``, ``template`` and ``label`` (the message names file and line), or
            two lines label the same answer (same text, or no text given) for the same scorer
            differently.
    """
    if not path.is_file():
        raise LabelsError(f"no labels file {path}",
                          hint="give a JSONL file, one {sample_id, template, label} a line.")
    rows: list[LabelRow] = []
    seen: dict[tuple[str, str, str, str | None], LabelRow] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError:
            raise LabelsError(f"{path}:{number}: not JSON",
                              hint="one JSON object a line.") from None
        if not isinstance(data, dict):
            raise LabelsError(f"{path}:{number}: not a JSON object",
                              hint="one JSON object a line.")
        for name in ("sample_id", "template", "label"):
            if not isinstance(data.get(name), str) or not data[name]:
                raise LabelsError(f"{path}:{number}: {name} is missing or not a string",
                                  hint="every line needs sample_id, template and label.")
        for name in ("scorer", "response", "labeller"):
            if name in data and not isinstance(data[name], str):
                raise LabelsError(f"{path}:{number}: {name} is not a string",
                                  hint=f"{name} is optional text.")
        row = LabelRow(data["sample_id"], data["template"], data["label"],
                       scorer=data.get("scorer", ""), response=data.get("response"),
                       labeller=data.get("labeller", ""), line=number)
        # Several answers to one prompt may be labelled (from several models' runs), each with
        # the text read; only the same text labelled twice must agree.
        text = None if row.response is None else " ".join(row.response.split())
        key = (row.sample_id, row.template, row.scorer, text)
        if key in seen and seen[key].label != row.label:
            raise LabelsError(f"{path}:{number}: {row.sample_id}/{row.template} is labelled "
                              f"{row.label!r} here and {seen[key].label!r} at line "
                              f"{seen[key].line}", hint="keep one label per answer.")
        seen.setdefault(key, row)
        rows.append(row)
    if not rows:
        raise LabelsError(f"{path} holds no labels", hint="one JSON object a line.")
    return rows


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def classifying_scorers(run: RunResults) -> list[str]:
    """The run's scorers that give labels (only those can be compared with labels)."""
    return sorted({i.scorer for i in run.items if i.label is not None})


def agree(run: RunResults, labels: Sequence[LabelRow], labels_path: Path,
          scorer: str | None = None, *, resamples: int = 10_000, seed: int = 0,
          z: float | None = None) -> RunAgreement:
    """Compare ``scorer``'s labels in ``run`` with ``labels`` (see the module docstring).

    Args:
        run: A stored run.
        labels: From :func:`read_labels`.
        labels_path: Where they came from (named in messages and the result).
        scorer: The scorer to compare; may be omitted when the run has one classifying
            scorer.
        resamples: Bootstrap resamples for the kappa and F1 intervals.
        seed: Bootstrap seed (fixed: the same command gives the same interval).
        z: The Wilson intervals' normal quantile (default: exact for 95 %; ``1.96`` repeats
            figures computed with the rounded value).

    Raises:
        LabelsError: no scorer given and the run has several (or none) that classify, the
            scorer is not one of them, or no label matches a verdict.
    """
    return agree_runs([(run, labels)], labels_path, scorer, resamples=resamples, seed=seed,
                      z=z)


def agree_runs(runs: Sequence[tuple[RunResults, Sequence[LabelRow]]], labels_path: Path,
               scorer: str | None = None, *, resamples: int = 10_000, seed: int = 0,
               z: float | None = None) -> RunAgreement:
    """Like :func:`agree`, over several runs, each against its own labels, pooled.

    A run holds one answer per sample and template, so answers of several producers to the
    same prompt (a ``replay`` run per producer) are several runs; a judge's agreement with
    people is still one figure over all of them. Each run's verdicts are matched with the
    labels given beside it exactly as :func:`agree` matches them, and the matched pairs are
    pooled into one confusion matrix. The result's ``run_id`` joins the runs' ids with
    ``+``; its ``no_verdict`` and ``text_differs`` name ``RUN:SAMPLE/TEMPLATE`` when there is
    more than one run.

    Raises:
        LabelsError: as :func:`agree`, for any run; also when ``scorer`` is omitted and the
            runs' only classifying scorers differ, or no run is given.
    """
    if not runs:
        raise LabelsError("no run to compare with labels", hint="give at least one run.")
    chosen = {_scorer_of(run, scorer) for run, _ in runs}
    if len(chosen) != 1:
        raise LabelsError(f"the runs' classifying scorers differ ({', '.join(sorted(chosen))})",
                          hint="choose one with --scorer NAME.")
    scorer = chosen.pop()
    gold: list[str] = []
    predicted: list[str] = []
    no_verdict: list[str] = []
    differs: list[str] = []
    other = 0
    for run, rows in runs:
        prefix = f"{run.info.run_id}:" if len(runs) > 1 else ""
        verdicts = {(i.sample_id, i.template): i for i in run.items
                    if i.scorer == scorer and i.label is not None}
        for row in rows:
            if row.scorer and row.scorer != scorer:
                other += 1
                continue
            item = verdicts.get((row.sample_id, row.template))
            name = f"{prefix}{row.sample_id}/{row.template}"
            if item is None:
                no_verdict.append(name)
                continue
            if row.response is not None and not _same_text(row.response, item.output):
                differs.append(name)
                continue
            gold.append(row.label)
            predicted.append(str(item.label))
    run_id = "+".join(run.info.run_id for run, _ in runs)
    if not gold:
        raise LabelsError(
            f"no label of {labels_path} matches a verdict of {scorer!r} in run {run_id} "
            f"({len(no_verdict)} without a verdict, {len(differs)} of another text, {other} "
            "for another scorer)",
            hint="labels match by sample_id and template; is it the run that was labelled?")
    labellers = tuple(sorted({r.labeller for _, rows in runs for r in rows if r.labeller}))
    return _measure(run_id, scorer, labels_path, labellers, gold, predicted, no_verdict,
                    differs, other, resamples, seed, z)


def split_labels(runs: Sequence[RunResults], labels: Sequence[LabelRow],
                 scorer: str | None = None) -> list[tuple[RunResults, list[LabelRow]]]:
    """Each label beside the first run that holds its answer, for :func:`agree_runs`.

    ``freshwiki runs agree RUN RUN ... --labels FILE`` names several runs and one labels file
    (the replay runs of several producers, say). A label goes to the first run, in the order
    given, with a verdict of ``scorer`` for its (sample, template) and, when the label carries
    the text that was read, with that text as its answer; a label no run holds goes to the
    first run, where it is counted as without a verdict (or of another text).

    Raises:
        LabelsError: as :func:`agree_runs` when ``scorer`` cannot be resolved, or no run is
            given.
    """
    if not runs:
        raise LabelsError("no run to compare with labels", hint="give at least one run.")
    chosen = {_scorer_of(run, scorer) for run in runs}
    if len(chosen) != 1:
        raise LabelsError(f"the runs' classifying scorers differ ({', '.join(sorted(chosen))})",
                          hint="choose one with --scorer NAME.")
    name = chosen.pop()
    answers = [{(i.sample_id, i.template): i.output for i in run.items
                if i.scorer == name and i.label is not None} for run in runs]
    routed: list[list[LabelRow]] = [[] for _ in runs]
    for row in labels:
        key = (row.sample_id, row.template)
        home = next((k for k, held in enumerate(answers) if key in held and (
            row.response is None or _same_text(row.response, held[key]))), 0)
        routed[home].append(row)
    return [(run, rows) for run, rows in zip(runs, routed, strict=True) if rows]


def _scorer_of(run: RunResults, scorer: str | None) -> str:
    """``scorer``, checked against the run's classifying scorers, or the run's only one."""
    run_id = run.info.run_id
    known = classifying_scorers(run)
    if scorer is None:
        if len(known) != 1:
            raise LabelsError(
                f"run {run_id} has {len(known)} scorers that give labels"
                + (f" ({', '.join(known)})" if known else ""),
                hint="choose one with --scorer NAME." if known else
                "only a classifying scorer (or judge) can be compared with labels.")
        return known[0]
    if scorer not in known:
        raise LabelsError(f"run {run_id} has no labels from scorer {scorer!r}",
                          hint=f"its classifying scorers: {', '.join(known) or '(none)'}.")
    return scorer


def _measure(run_id: str, scorer: str, labels_path: Path, labellers: tuple[str, ...],
             gold: list[str], predicted: list[str], no_verdict: list[str], differs: list[str],
             other: int, resamples: int, seed: int, z: float | None) -> RunAgreement:
    classes = tuple(sorted({*gold, *predicted}))
    order, matrix = confusion(gold, predicted, labels=classes)
    n = len(gold)
    hits = sum(g == p for g, p in zip(gold, predicted, strict=True))
    code = {c: k for k, c in enumerate(order)}
    g = np.array([code[x] for x in gold], dtype=np.int64)
    p = np.array([code[x] for x in predicted], dtype=np.int64)
    size = len(order)

    def agreement_per_resample(indexes: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        values = np.empty(indexes.shape[0])
        for r, row in enumerate(indexes):
            counts = np.bincount(g[row] * size + p[row], minlength=size * size)
            kappa = kappa_from_matrix(counts.reshape(size, size).tolist())
            values[r] = np.nan if kappa is None else kappa
        return values

    def f1s(positive: int) -> Any:
        def statistic(indexes: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
            gs, ps = g[indexes] == positive, p[indexes] == positive
            tp = (gs & ps).sum(axis=1)
            fp = (~gs & ps).sum(axis=1)
            fn = (gs & ~ps).sum(axis=1)
            return prf(tp, fp, fn)[2]
        return statistic

    per_class = []
    for label in order:
        counts = class_scores(gold, predicted, label)
        tp, fp, fn = counts.true_positives, counts.false_positives, counts.false_negatives
        per_class.append(ClassAgreement(
            label=label, support=tp + fn, predicted=tp + fp, precision=counts.precision,
            recall=counts.recall, f1=counts.f1,
            precision_ci=wilson_ci(tp, tp + fp, z=z) if tp + fp else None,
            recall_ci=wilson_ci(tp, tp + fn, z=z) if tp + fn else None,
            f1_ci=paired_bootstrap_ci(n, f1s(code[label]), resamples=resamples, seed=seed)
            if counts.f1 is not None else None))
    defined = [c.f1 for c in per_class if c.f1 is not None]
    return RunAgreement(
        run_id=run_id, scorer=scorer, labels_path=labels_path, labellers=labellers, n=n,
        accuracy=hits / n, accuracy_ci=wilson_ci(hits, n, z=z),
        kappa=kappa_from_matrix(matrix),
        kappa_ci=paired_bootstrap_ci(n, agreement_per_resample, resamples=resamples, seed=seed),
        classes=order, matrix=matrix, per_class=tuple(per_class),
        macro_f1=sum(defined) / len(defined) if defined else None,
        no_verdict=tuple(no_verdict), text_differs=tuple(differs), other_scorer=other)
