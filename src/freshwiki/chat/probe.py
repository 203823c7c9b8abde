"""The verifier probe: a learned reading of the model's state after evidence and claim.

The cloze reading (``verify.py``) asks the model to fill blanks and compares values by rule;
the probe asks nothing. The model reads one prompt (``prompts/probe_system.j2`` and
``probe_user.j2``: the evidence, the question when there is one, then the claim) and the probe
reads its final hidden state at the point where the reply would begin, through the llm layer's
feature API (:meth:`freshwiki.llm.LLM.features` with no answer, cached like a reply), the way
RiLM's certainty gate reads a (question, document) state. A logistic head
(:mod:`freshwiki.llm.heads`: standardised features, balanced class weights) maps that state
to SUPPORTS, REFUTES or NOT ENOUGH INFO. Nothing is generated, so one claim costs one prompt
evaluation.

A hidden state means something only to the model, the extraction and the prompt that made it,
so a probe file records the feature ``kind``, the ``model`` identity, the ``dim`` and the
prompt's hash, and refuses vectors of another kind, model or size with
:class:`ProbeMismatchError` (and a file made with another prompt with :class:`ProbeError`).

File format (``format: freshwiki-verifier-probe``, ``version: 1``)::

    {"format": ..., "version": 1, "feature_kind": "hidden-state", "model": "...", "dim": 1536,
     "prompt_sha256": "...", "classes": ["NOT ENOUGH INFO", "REFUTES", "SUPPORTS"],
     "scaler": {"mean": [...], "scale": [...]}, "coef": [[...], ...], "intercept": [...],
     "training": {...}}   # set, commit, counts, chosen C and the cross-validation: for people
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from freshwiki.chat._calls import PROMPTS, messages_for, prompt
from freshwiki.chat._evidence import neutralise, quote_data
from freshwiki.chat._types import ClaimCheck, Evidence, Verdict
from freshwiki.errors import FreshwikiError
from freshwiki.llm import LLM, FeatureVector, Message
from freshwiki.llm.heads import LogisticHead, fit_logistic_head

FORMAT = "freshwiki-verifier-probe"
VERSION = 1
LABELS: tuple[Verdict, ...] = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
"""The classes, in the order reports list them."""
C_GRID: tuple[float, ...] = (0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 1.0)
"""Inverse regularisation strengths :func:`train_probe` chooses from by cross-validation."""
DEFAULT_PROBE = Path(__file__).parent / "probes" / "qwen2.5-coder-1.5b.json"
"""The committed probe for the default model (``local:qwen2.5-coder-1.5b``)."""
_TEMPLATES = ("probe_system", "probe_user")
_EVIDENCE_TAG = re.compile(r"</?\s*evidence\b[^>]*>", re.IGNORECASE)


class ProbeError(FreshwikiError):
    """A probe cannot be trained, read or written."""


class ProbeMismatchError(ProbeError):
    """Features of another kind, model or size than the probe was trained on."""


def prompt_sha256() -> str:
    """Hash of the probe's two prompt templates: a new wording makes new features."""
    digest = hashlib.sha256()
    folder = Path(__file__).resolve().parent.parent / PROMPTS
    for name in _TEMPLATES:
        digest.update((folder / f"{name}.j2").read_bytes())
    return digest.hexdigest()


def _quoted(text: str) -> str:
    """``text`` with the chat's delimiter tags and this prompt's own ``<evidence>`` removed."""
    return quote_data(_EVIDENCE_TAG.sub(" ", text))


def probe_messages(claim: str, evidence: str, *, question: str | None = None,
                   title: str = "") -> list[Message]:
    """The prompt the probe reads the state of: evidence, question (optional), claim."""
    user = prompt("probe_user", title=_quoted(title).replace('"', "'"),
                  evidence=_quoted(neutralise(evidence)),
                  question=_quoted(question) if question else None, claim=_quoted(claim))
    return messages_for(prompt("probe_system"), user)


async def probe_features(llm: LLM, claim: str, evidence: str, *, question: str | None = None,
                         title: str = "", use_cache: bool = True) -> FeatureVector:
    """The model's state after :func:`probe_messages` (cached by the llm layer)."""
    messages = probe_messages(claim, evidence, question=question, title=title)
    return await llm.features(messages, "", tag="chat:probe", use_cache=use_cache)


@dataclass(frozen=True)
class VerifierProbe:
    """A trained probe; build one with :func:`train_probe` or :meth:`load`.

    Attributes:
        feature_kind: The :attr:`FeatureVector.kind` it accepts.
        model: The :attr:`FeatureVector.model` it accepts.
        head: Standardisation and logistic weights over the features.
        prompt_sha256: :func:`prompt_sha256` when it was trained.
        training: Facts about the training, for people (set, commit, counts, C, CV).
    """

    feature_kind: str
    model: str
    head: LogisticHead
    prompt_sha256: str
    training: Mapping[str, Any] = field(default_factory=dict)

    @property
    def dim(self) -> int:
        """Number of features it expects."""
        return self.head.dim

    def check(self, kind: str | None, model: str, dim: int | None, *,
              source: str = "the features") -> None:
        """Refuse features of another kind, model or size (``dim`` ``None``: not known yet).

        Raises:
            ProbeMismatchError: naming both sides and what to do.
        """
        if kind != self.feature_kind or model != self.model:
            raise ProbeMismatchError(
                f"{source} are {kind or 'unavailable'} features of model {model!r}, but the "
                f"probe was trained on {self.feature_kind} features of {self.model!r}",
                hint="use the probe's model, or train a probe for this one "
                "(experiments/verifier_probe.py features + train --model SPEC).")
        if dim is not None and dim != self.dim:
            raise ProbeMismatchError(
                f"{source} have {dim} values, but the probe was trained on {self.dim}",
                hint="the extraction changed since the probe was trained; train it again.")

    def probabilities(self, features: FeatureVector) -> dict[str, float]:
        """P(label) for each of :data:`LABELS`.

        Raises:
            ProbeMismatchError: the vector's kind, model or size is not the probe's.
        """
        self.check(features.kind, features.model, features.dim)
        row = self.head.probabilities(np.asarray([features.values], dtype=np.float64))[0]
        out: dict[str, float] = dict.fromkeys(LABELS, 0.0)
        out.update({c: float(p) for c, p in zip(self.head.classes, row, strict=True)})
        return out

    def verdict(self, features: FeatureVector) -> tuple[Verdict, dict[str, float]]:
        """The most probable label and every label's probability."""
        probs = self.probabilities(features)
        best = max(LABELS, key=lambda label: probs[label])
        return best, probs

    # -- files -----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The JSON document :meth:`save` writes (see the module docstring)."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "feature_kind": self.feature_kind,
            "model": self.model,
            "dim": self.dim,
            "prompt_sha256": self.prompt_sha256,
            **self.head.to_fields(),
            "training": dict(self.training),
        }

    def save(self, path: Path) -> None:
        """Write the probe as compact JSON, atomically (a crash never leaves half a file)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), separators=(",", ":")) + "\n",
                       encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path | None = None) -> VerifierProbe:
        """Read a probe written by :meth:`save` (default: :data:`DEFAULT_PROBE`).

        Raises:
            ProbeError: the file is missing, unreadable, damaged or made with another prompt.
        """
        path = path or DEFAULT_PROBE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ProbeError(f"no probe file {path}",
                             hint="pass --option probe=PATH, or train one "
                                  "(experiments/verifier_probe.py train).") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ProbeError(f"{path} is not a readable probe ({exc})",
                             hint="train the probe again.") from exc
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "probe") -> VerifierProbe:
        """The inverse of :meth:`to_dict`, validating shapes, classes and the prompt.

        Raises:
            ProbeError: not a probe of this version, damaged, or made with another prompt.
        """
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ProbeError(f"{source} is not a freshwiki verifier probe",
                             hint="pass a file experiments/verifier_probe.py train wrote.")
        if data.get("version") != VERSION:
            raise ProbeError(f"{source} is probe format version {data.get('version')!r}; "
                             f"this freshwiki reads version {VERSION}",
                             hint="train the probe again with this freshwiki.")
        try:
            head = LogisticHead.from_fields(data)
            probe = cls(feature_kind=str(data["feature_kind"]), model=str(data["model"]),
                        head=head, prompt_sha256=str(data["prompt_sha256"]),
                        training=dict(data.get("training", {})))
            dim = int(data["dim"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ProbeError(f"{source} is a damaged probe ({exc!r})",
                             hint="train the probe again.") from exc
        if not head.shapes_agree() or dim != head.dim or not set(head.classes) <= set(LABELS):
            raise ProbeError(f"{source} is a damaged probe (shapes or classes do not agree)",
                             hint="train the probe again.")
        if probe.prompt_sha256 != prompt_sha256():
            raise ProbeError(f"{source} was trained on another wording of the probe prompt",
                             hint="train the probe again (experiments/verifier_probe.py "
                                  "features + train): its features changed with the prompt.")
        return probe


def _balanced_accuracy(truth: Sequence[str], guess: Sequence[str]) -> float:
    """Mean per-class recall (the classes present in ``truth``)."""
    recalls = []
    for label in sorted(set(truth)):
        rows = [g for t, g in zip(truth, guess, strict=True) if t == label]
        recalls.append(sum(g == label for g in rows) / len(rows))
    return sum(recalls) / len(recalls)


def train_probe(
    features: Sequence[FeatureVector],
    labels: Sequence[str],
    *,
    c_grid: Sequence[float] = C_GRID,
    folds: int = 5,
    seed: int = 0,
    extra: Mapping[str, Any] | None = None,
) -> VerifierProbe:
    """Train a probe, choosing C by stratified cross-validation on these rows only.

    Each candidate C is scored by the mean balanced accuracy (mean per-class recall) over
    ``folds`` folds, each fold standardised on its own training part; the best C (the
    smallest among ties: the stronger regularisation) is then fitted on every row. The
    cross-validation scores are kept under ``training.cv``.

    Args:
        features: One vector per row, all of one kind, model and size.
        labels: One of :data:`LABELS` per row.
        c_grid: Candidate inverse regularisation strengths.
        folds: Cross-validation folds (at most the smallest class's count; fewer than two
            skips the choice and uses the first C).
        seed: Seeds the folds and the solver.
        extra: More facts to store under ``training`` (set, commit, ...).

    Raises:
        ProbeError: no rows, unknown labels, fewer than two classes, or mixed features.
    """
    if len(features) != len(labels):
        raise ValueError("one label per feature vector")
    if not features:
        raise ProbeError("no labelled rows to train on", hint="extract features first.")
    unknown = sorted(set(labels) - set(LABELS))
    if unknown:
        raise ProbeError(f"unknown labels {unknown}", hint=f"labels are {', '.join(LABELS)}.")
    counts = Counter(labels)
    if len(counts) < 2:
        raise ProbeError(f"only the class {sorted(counts)} to train on",
                         hint="a probe needs rows of two labels or more.")
    kinds = {(f.kind, f.model, f.dim) for f in features}
    if len(kinds) != 1:
        raise ProbeError(f"feature vectors of different kinds, models or sizes: {sorted(kinds)}",
                         hint="compute every row's features with one model.")
    kind, model, _ = kinds.pop()
    x = np.asarray([f.values for f in features], dtype=np.float64)
    y = [str(v) for v in labels]
    k = min(folds, min(counts.values()))
    cv: dict[str, float] = {}
    chosen = float(c_grid[0])
    if k >= 2 and len(c_grid) > 1:
        from sklearn.model_selection import StratifiedKFold  # type: ignore[import-untyped]

        splits = list(StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(x, y))
        for c in c_grid:
            scores = []
            for train, test in splits:
                head = fit_logistic_head(x[train], [y[i] for i in train], c=c, seed=seed)
                scores.append(_balanced_accuracy([y[i] for i in test], head.predict(x[test])))
            cv[repr(float(c))] = float(np.mean(scores))
        chosen = float(max(c_grid, key=lambda c: (cv[repr(float(c))], -c)))
    head = fit_logistic_head(x, y, c=chosen, seed=seed)
    training = {
        "seed": seed,
        "c": chosen,
        "cv": {"folds": k, "metric": "balanced accuracy", "scores": cv},
        "n_train": len(y),
        "train_counts": {label: counts[label] for label in LABELS if label in counts},
        **(extra or {}),
    }
    return VerifierProbe(feature_kind=kind, model=model, head=head,
                         prompt_sha256=prompt_sha256(), training=training)


async def probe_check(llm: LLM, probe: VerifierProbe, claim: str, passage: Evidence, *,
                      question: str | None = None) -> ClaimCheck:
    """The probe's verdict on ``claim`` against one passage, as the chat's checks give it.

    Raises:
        ProbeMismatchError: the model's features are not the probe's kind, model or size.
    """
    features = await probe_features(llm, claim, passage.text, question=question or None,
                                     title=passage.title)
    verdict, probs = probe.verdict(features)
    rationale = "probe: " + ", ".join(f"P({label}) {probs[label]:.2f}" for label in LABELS)
    return ClaimCheck(claim=claim, verdict=verdict, evidence=(passage,), rationale=rationale)
