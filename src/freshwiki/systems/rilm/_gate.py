"""The certainty gate: a small classifier from hidden states to reliable/misleading/uncertain.

As GrowOVER §4.1 has it, the gate reads one (query, document) prompt at a time: the features
are the model's last hidden state after the prompt that holds the question and that single
document, before any answer is generated, so the gate can pick the document to answer from.

Multinomial logistic regression on standardised features, with balanced class weights (the
labelled classes are far from equal in size: most benchmark questions are unchanged facts).
It is trained with scikit-learn but predicts with numpy from the saved coefficients (the
numerics are :mod:`freshwiki.llm.heads`, shared with the chat's verifier probe), so a saved
gate is a plain JSON file that needs nothing but numpy to use and can be read and diffed by
a person.

Features mean something only to the model and the extraction that produced them (a hidden
state of one model is noise to another), so a gate records the feature ``kind`` and ``model``
identity it was trained on and refuses anything else with :class:`GateMismatchError`.

File format (``format: freshwiki-rilm-gate``, ``version: 2``; version 1 gates read
prompt + answer states of a k-document prompt and are refused)::

    {"format": ..., "version": 2, "feature_kind": "hidden-state", "model": "smollm2@...",
     "dim": 576, "feature_names": [], "classes": ["misleading", "reliable", "uncertain"],
     "scaler": {"mean": [...], "scale": [...]},
     "coef": [[...], ...],      # one row per class (one row in total for two classes)
     "intercept": [...],
     "training": {...}}         # seed, counts, held-out report, source run: for people
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from freshwiki.errors import FreshwikiError
from freshwiki.llm import FeatureVector
from freshwiki.llm.heads import LogisticHead, fit_logistic_head

RELIABLE = "reliable"
MISLEADING = "misleading"
UNCERTAIN = "uncertain"
CLASSES: tuple[str, ...] = (RELIABLE, MISLEADING, UNCERTAIN)
FORMAT = "freshwiki-rilm-gate"
VERSION = 2


class GateError(FreshwikiError):
    """A gate cannot be trained, read or written."""


class GateMismatchError(GateError):
    """Features from another kind of extraction or another model than the gate was trained on."""


@dataclass(frozen=True)
class GateReport:
    """How a gate did on held-out examples.

    Attributes:
        classes: Class order of ``confusion`` rows (true) and columns (predicted).
        n_train: Training examples.
        n_test: Held-out examples (0 when there were too few to hold any out).
        accuracy: Share of held-out examples predicted right; ``None`` without any.
        recall: Per class, share of its held-out examples predicted as it (``None`` when the
            held-out set has none of that class).
        confusion: ``confusion[i][j]``: held-out examples of class ``classes[i]`` predicted
            as ``classes[j]``.
        train_counts: Training examples per class.
    """

    classes: tuple[str, ...]
    n_train: int
    n_test: int
    accuracy: float | None
    recall: Mapping[str, float | None]
    confusion: tuple[tuple[int, ...], ...]
    train_counts: Mapping[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (stored in the gate file)."""
        return {
            "classes": list(self.classes),
            "n_train": self.n_train,
            "n_test": self.n_test,
            "accuracy": self.accuracy,
            "recall": dict(self.recall),
            "confusion": [list(row) for row in self.confusion],
            "train_counts": dict(self.train_counts),
        }


@dataclass(frozen=True)
class CertaintyGate:
    """A trained gate; build one with :func:`train_gate` or :meth:`load`.

    Attributes:
        feature_kind: The :attr:`FeatureVector.kind` it accepts.
        model: The :attr:`FeatureVector.model` it accepts.
        classes: Class names in the order of ``coef`` rows (sorted, as scikit-learn has them).
        mean: Standardisation mean per feature.
        scale: Standardisation scale per feature (1 where a feature never varied).
        coef: Weights, one row per class; a single row for a two-class gate.
        intercept: One bias per row of ``coef``.
        feature_names: Names of the features when they have any.
        training: Facts about the training, for people (seed, counts, held-out report).
    """

    feature_kind: str
    model: str
    classes: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[tuple[float, ...], ...]
    intercept: tuple[float, ...]
    feature_names: tuple[str, ...] = ()
    training: Mapping[str, Any] = field(default_factory=dict)

    @property
    def dim(self) -> int:
        """Number of features it expects."""
        return len(self.mean)

    @property
    def head(self) -> LogisticHead:
        """The numerics (:mod:`freshwiki.llm.heads`), shared with the chat's verifier probe."""
        return LogisticHead(classes=self.classes, mean=self.mean, scale=self.scale,
                            coef=self.coef, intercept=self.intercept)

    def check(self, kind: str | None, model: str, *, source: str = "the features") -> None:
        """Refuse features of another kind or model than the gate was trained on.

        Raises:
            GateMismatchError: naming both and what to do.
        """
        if kind != self.feature_kind or model != self.model:
            raise GateMismatchError(
                f"{source} are {kind or 'unavailable'} features of model {model!r}, but the "
                f"gate was trained on {self.feature_kind} features of {self.model!r}",
                hint="train a gate for this model (`freshwiki growover train-gate RUN_ID "
                "--out PATH` on a run of this model), or answer with the gate's model.",
            )

    def check_dim(self, dim: int | None, *, source: str = "the features",
                  path: Path | None = None) -> None:
        """Refuse features of another size (``None``: unknown yet, checked at first use).

        Raises:
            GateMismatchError: naming both sizes, the gate file and what to do.
        """
        if dim is None or dim == self.dim:
            return
        where = f"gate {path}" if path is not None else "the gate"
        raise GateMismatchError(
            f"{source} have {dim} values (the hidden size), but {where} was trained on "
            f"{self.dim}",
            hint="the gate comes from another model or feature extraction: train it again "
            "with this model (`freshwiki growover train-gate RUN_ID --out PATH`).",
        )

    def probabilities(self, features: FeatureVector, *,
                      temperature: float = 1.0) -> dict[str, float]:
        """P(class) for every class in :data:`CLASSES` (0 for a class it never saw).

        Args:
            features: One feature vector of the gate's kind and model.
            temperature: Divides the logits before the softmax (GrowOVER Eq. 2 computes the
                re-retrieval weight ω this way with a hyper-parameter of 2.0); 1 gives the
                classifier's own probabilities.

        Raises:
            GateMismatchError: the vector's kind, model or size is not the gate's.
        """
        self.check(features.kind, features.model)
        if features.dim != self.dim:
            raise GateMismatchError(
                f"the features have {features.dim} values, the gate expects {self.dim}",
                hint="the extraction changed since the gate was trained; train it again.",
            )
        probs = self.predict_proba(np.asarray([features.values], dtype=np.float64),
                                   temperature=temperature)[0]
        out = dict.fromkeys(CLASSES, 0.0)
        out.update({c: float(p) for c, p in zip(self.classes, probs, strict=True)})
        return out

    def predict_proba(self, x: npt.NDArray[np.float64], *,
                      temperature: float = 1.0) -> npt.NDArray[np.float64]:
        """Class probabilities (columns in :attr:`classes` order) of the rows of ``x``.

        Raises:
            ValueError: ``temperature`` is not positive.
        """
        return self.head.probabilities(x, temperature=temperature)

    def predict(self, x: npt.NDArray[np.float64]) -> list[str]:
        """The most probable class of each row of ``x``."""
        return [self.classes[i] for i in self.predict_proba(x).argmax(axis=1)]

    def evaluate(self, x: npt.NDArray[np.float64], labels: Sequence[str]) -> GateReport:
        """Accuracy, per-class recall and the confusion matrix on ``(x, labels)``."""
        predicted = self.predict(x) if len(labels) else []
        index = {c: i for i, c in enumerate(CLASSES)}
        confusion = [[0] * len(CLASSES) for _ in CLASSES]
        for truth, guess in zip(labels, predicted, strict=True):
            confusion[index[truth]][index[guess]] += 1
        recall: dict[str, float | None] = {}
        for c, i in index.items():
            total = sum(confusion[i])
            recall[c] = confusion[i][i] / total if total else None
        correct = sum(confusion[i][i] for i in range(len(CLASSES)))
        return GateReport(
            classes=CLASSES,
            n_train=int(self.training.get("n_train", 0)),
            n_test=len(labels),
            accuracy=correct / len(labels) if len(labels) else None,
            recall=recall,
            confusion=tuple(tuple(row) for row in confusion),
            train_counts=dict(self.training.get("train_counts", {})),
        )

    # -- files -----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The JSON document :meth:`save` writes (see the module docstring)."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "feature_kind": self.feature_kind,
            "model": self.model,
            "dim": self.dim,
            "feature_names": list(self.feature_names),
            **self.head.to_fields(),
            "training": dict(self.training),
        }

    def save(self, path: Path) -> None:
        """Write the gate as JSON (atomically: a crash never leaves half a gate)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> CertaintyGate:
        """Read a gate written by :meth:`save`.

        Raises:
            GateError: the file is missing or is not a gate of this version.
        """
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise GateError(
                f"no gate file {path}",
                hint="train one with `freshwiki growover train-gate RUN_ID --out PATH`.",
            ) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise GateError(f"{path} is not a readable gate ({exc})",
                            hint="train the gate again.") from exc
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "gate") -> CertaintyGate:
        """The inverse of :meth:`to_dict`, validating shapes."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise GateError(f"{source} is not a freshwiki RiLM gate",
                            hint="pass the file `freshwiki growover train-gate` wrote.")
        if data.get("version") != VERSION:
            raise GateError(f"{source} is gate format version {data.get('version')!r}; "
                            f"this freshwiki reads version {VERSION} (per-document prompt "
                            "states, GrowOVER §4.1)",
                            hint="train the gate again with this freshwiki (`freshwiki "
                            "growover train-gate RUN_ID --out PATH`).")
        try:
            head = LogisticHead.from_fields(data)
            gate = cls(
                feature_kind=str(data["feature_kind"]),
                model=str(data["model"]),
                classes=head.classes,
                mean=head.mean,
                scale=head.scale,
                coef=head.coef,
                intercept=head.intercept,
                feature_names=tuple(str(n) for n in data.get("feature_names", ())),
                training=dict(data.get("training", {})),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise GateError(f"{source} is a damaged gate ({exc!r})",
                            hint="train the gate again.") from exc
        if (
            not head.shapes_agree()
            or not set(gate.classes) <= set(CLASSES)
            or RELIABLE not in gate.classes
        ):
            raise GateError(f"{source} is a damaged gate (shapes or classes do not agree)",
                            hint="train the gate again.")
        return gate


def train_gate(
    features: Sequence[FeatureVector],
    labels: Sequence[str],
    *,
    holdout: float = 0.2,
    seed: int = 0,
    c: float = 1.0,
    extra: Mapping[str, Any] | None = None,
) -> tuple[CertaintyGate, GateReport]:
    """Train a gate on labelled feature vectors and report on a held-out share of them.

    The split is stratified by class when every class has at least two examples, so a rare
    class is represented on both sides. The gate returned is the one trained on the training
    split (the one the report describes), not a refit on everything.

    Args:
        features: One vector per example, all of the same kind, model and size.
        labels: One of :data:`CLASSES` per example.
        holdout: Share of examples held out for the report, in [0, 1).
        seed: Seeds the split and the solver, so the same data gives the same gate.
        c: Inverse regularisation strength of the logistic regression.
        extra: More facts to store under ``training`` (e.g. the source run).

    Raises:
        GateError: mixed feature kinds or models, unknown labels, fewer than two classes or
            no ``reliable`` examples in the training split.
    """
    if len(features) != len(labels):
        raise ValueError("one label per feature vector")
    if not 0.0 <= holdout < 1.0:
        raise GateError(f"holdout must be in [0, 1), got {holdout}", hint="e.g. --holdout 0.2.")
    if not features:
        raise GateError("no labelled examples to train on",
                        hint="use a finished run with unchanged hits and changed/new misses.")
    unknown = sorted(set(labels) - set(CLASSES))
    if unknown:
        raise GateError(f"unknown labels {unknown}", hint=f"labels are {', '.join(CLASSES)}.")
    kinds = {(f.kind, f.model, f.dim) for f in features}
    if len(kinds) != 1:
        raise GateError(f"feature vectors of different kinds, models or sizes: {sorted(kinds)}",
                        hint="compute every example's features with one model.")
    kind, model, _ = kinds.pop()

    from sklearn.model_selection import train_test_split  # type: ignore[import-untyped]

    x = np.asarray([f.values for f in features], dtype=np.float64)
    y = np.asarray(labels)
    counts = Counter(labels)
    n_test = round(holdout * len(labels))
    if n_test and len(labels) - n_test >= 1:
        stratify = y if min(counts.values()) >= 2 and n_test >= len(counts) else None
        x_train, x_test, y_train, y_test = train_test_split(
            x, y, test_size=n_test, random_state=seed, stratify=stratify
        )
    else:
        x_train, x_test, y_train, y_test = x, x[:0], y, y[:0]
    train_counts = Counter(str(v) for v in y_train)
    if len(train_counts) < 2 or RELIABLE not in train_counts:
        raise GateError(
            f"the training split has classes {dict(train_counts)}; a gate needs "
            f"'{RELIABLE}' and at least one other class",
            hint="use a bigger run (more unchanged hits and changed/new misses), or a "
            "smaller --holdout.",
        )
    head = fit_logistic_head(x_train, [str(v) for v in y_train], c=c, seed=seed)
    training = {
        "seed": seed,
        "holdout": holdout,
        "c": c,
        "n_train": len(y_train),
        "train_counts": {k: train_counts[k] for k in CLASSES if k in train_counts},
        **(extra or {}),
    }
    gate = CertaintyGate(
        feature_kind=kind,
        model=model,
        classes=head.classes,
        mean=head.mean,
        scale=head.scale,
        coef=head.coef,
        intercept=head.intercept,
        feature_names=features[0].names,
        training=training,
    )
    report = gate.evaluate(x_test, [str(v) for v in y_test])
    gate = CertaintyGate(**{**gate.__dict__, "training": {**training,
                                                         "report": report.to_dict()}})
    return gate, report
