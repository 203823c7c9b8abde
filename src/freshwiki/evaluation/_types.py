"""What a finished (or partly finished) run looks like to statistics and reports.

The results store produces these; statistics and reports consume only these, so they can be
built and tested without running a model.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from freshwiki.evaluation._chat_analysis import TurnStats


@dataclass(frozen=True)
class RunInfo:
    """A run's identity and configuration.

    Attributes:
        run_id: Short stable id derived from the configuration (same command → same run).
        benchmark: Benchmark name.
        system: System name.
        model: Model spec as given (``local:qwen2.5-coder-1.5b``).
        config: Everything that determines outputs: templates, system options, generation
            parameters, judge model, scorers, dataset path and hash.
        code_version: freshwiki version plus git commit (with ``+dirty`` when modified).
        model_hashes: Model identities (sha256 of local weights, or server URL + name) of the
            system's model and the judge's.
        created_at: When the run was first started (UTC).
        updated_at: When a result was last committed (UTC).
        label: Human-friendly name for reports (defaults to ``system/model``).
    """

    run_id: str
    benchmark: str
    system: str
    model: str
    config: Mapping[str, Any]
    code_version: str
    model_hashes: Mapping[str, str]
    created_at: dt.datetime
    updated_at: dt.datetime
    label: str = ""


@dataclass(frozen=True)
class ScoredItem:
    """One committed sample x template x scorer result.

    Attributes:
        sample_id: The sample's stable id.
        template: Template id.
        scorer: Scorer name.
        value: Score in [0, 1].
        label: Class label when the scorer classifies.
        explanation: The scorer's reason.
        metadata: The sample's metadata (for breakdowns such as explicit/implicit).
        output: The system's answer text (for reports' examples).
    """

    sample_id: str
    template: str
    scorer: str
    value: float
    label: str | None = None
    explanation: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    output: str = ""


@dataclass(frozen=True)
class FailedItem:
    """A sample x template (x scorer, if scoring failed) that raised, with its cause.

    Attributes:
        sample_id: The sample's stable id.
        template: Template id.
        stage: ``respond`` or ``score``.
        scorer: Scorer name when ``stage`` is ``score``.
        error_type: Exception class name.
        message: The error message.
    """

    sample_id: str
    template: str
    stage: str
    error_type: str
    message: str
    scorer: str | None = None


@dataclass(frozen=True)
class RiLMSample:
    """One answer of GrowOVER's ``rilm`` system with each stage scored (Tables 7 and 3).

    Attributes:
        sample_id: The sample's stable id.
        template: Template id.
        metadata: The sample's metadata (``snapshot``, ``type``, ``kind``).
        scores: Per scorer (``growover-f1``, ``-em``, ``-bleu``): ``final`` (the returned
            answer's value), ``first`` and ``second`` (each pass's answer; ``None`` when
            there was no such pass), ``adopted`` and ``chosen`` (the pass returned).
        arr: Whether each re-retrieval mode (``paper``, ``query``, ``append``) found the
            evidence; empty when the gate adopted the first answer.
        adopted: Whether the gate adopted the first answer.
    """

    sample_id: str
    template: str
    metadata: Mapping[str, Any]
    scores: Mapping[str, Mapping[str, Any]]
    arr: Mapping[str, float]
    adopted: bool


@dataclass(frozen=True)
class RunResults:
    """Everything a report needs about one run."""

    info: RunInfo
    items: tuple[ScoredItem, ...]
    failures: tuple[FailedItem, ...] = ()
    chat_turns: tuple[TurnStats, ...] = ()
    """The grounded system's chat turns, from the outputs' traces (empty for other systems):
    what the WikiChat analysis (``_chat_analysis``) is computed from."""
    rilm: tuple[RiLMSample, ...] = ()
    """GrowOVER ``rilm`` answers with each stage's score, from the GrowOVER scorers' data
    (empty for other runs): what the Tables 7 and 3 sections (``_growover``) count."""
