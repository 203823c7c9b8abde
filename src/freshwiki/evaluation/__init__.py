"""Evaluation: run benchmarks against systems, store the results, and report on them.

Statistics and reports consume only the run-result types in ``_types``, so they are tested
on hand-built results without running a model.
"""

from freshwiki.evaluation._diff import Difference, diff_runs
from freshwiki.evaluation._fingerprint import Fingerprint, fingerprint
from freshwiki.evaluation._gate_training import (
    GateTraining,
    PairPrompts,
    label_for,
    train_gate_from_run,
)
from freshwiki.evaluation._report import write_report
from freshwiki.evaluation._runner import (
    EvaluationError,
    RunSummary,
    ScoreMean,
    SystemicFailureError,
    evaluate,
    load_plugins,
    run_evaluation,
)
from freshwiki.evaluation._stats import (
    Agreement,
    GroupSummary,
    Interval,
    PairedComparison,
    bootstrap_ci,
    cluster_bootstrap_ci,
    label_agreement,
    paired_comparison,
    summarize,
)
from freshwiki.evaluation._store import (
    ResultsStore,
    RunOverview,
    UnknownRunError,
    default_results_path,
)
from freshwiki.evaluation._types import FailedItem, RunInfo, RunResults, ScoredItem

__all__ = [
    "Agreement",
    "Difference",
    "EvaluationError",
    "FailedItem",
    "Fingerprint",
    "GateTraining",
    "GroupSummary",
    "Interval",
    "PairPrompts",
    "PairedComparison",
    "ResultsStore",
    "RunInfo",
    "RunOverview",
    "RunResults",
    "RunSummary",
    "ScoreMean",
    "ScoredItem",
    "SystemicFailureError",
    "UnknownRunError",
    "bootstrap_ci",
    "cluster_bootstrap_ci",
    "default_results_path",
    "diff_runs",
    "evaluate",
    "fingerprint",
    "label_agreement",
    "label_for",
    "load_plugins",
    "paired_comparison",
    "run_evaluation",
    "summarize",
    "train_gate_from_run",
    "write_report",
]
