"""Evaluation: run benchmarks against systems, store the results, and report on them.

Statistics and reports consume only the run-result types (:mod:`freshwiki.results`), so they
are tested on hand-built results without running a model. Nothing here knows a particular
benchmark or system: what one adds to reports comes from the analysis registered for its name.
"""

from freshwiki.evaluation._diff import Difference, diff_runs
from freshwiki.evaluation._fingerprint import Fingerprint, fingerprint
from freshwiki.evaluation._judge_choice import JudgeChoice, default_judge, same_model
from freshwiki.evaluation._leaderboard import (
    Board,
    BoardRun,
    LeaderboardError,
    LeaderboardSite,
    build_boards,
    load_runs,
    write_leaderboard,
    write_site,
)
from freshwiki.evaluation._report import write_report
from freshwiki.evaluation._runner import (
    EvaluationError,
    RunSummary,
    ScoreMean,
    SystemicFailureError,
    evaluate,
    load_plugins,
    make_run_id,
    resolve_identities,
    run_evaluation,
    run_identity,
)
from freshwiki.evaluation._stats import (
    Agreement,
    GroupSummary,
    PairedComparison,
    label_agreement,
    paired_comparison,
    summarize,
)
from freshwiki.evaluation._store import (
    MergeCounts,
    ResultsStore,
    RunConflictError,
    RunOverview,
    StoreError,
    UnknownRunError,
    default_results_path,
)
from freshwiki.evaluation._transfer import (
    ExportSummary,
    FileContents,
    ImportSummary,
    SchemaMismatchError,
    TransferError,
    check_runs_files,
    export_runs,
    import_runs,
    merge_runs_files,
    read_runs_file,
    select_runs,
)
from freshwiki.evaluation._types import (
    FailedItem,
    RunInfo,
    RunResults,
    ScoredItem,
)
from freshwiki.stats import (  # the statistics' home; kept here for existing callers
    Interval,
    bootstrap_ci,
    cluster_bootstrap_ci,
    sign_flip_p,
    wilson_ci,
)

__all__ = [
    "Agreement",
    "Board",
    "BoardRun",
    "Difference",
    "EvaluationError",
    "ExportSummary",
    "FailedItem",
    "FileContents",
    "Fingerprint",
    "GroupSummary",
    "ImportSummary",
    "Interval",
    "JudgeChoice",
    "LeaderboardError",
    "LeaderboardSite",
    "MergeCounts",
    "PairedComparison",
    "ResultsStore",
    "RunConflictError",
    "RunInfo",
    "RunOverview",
    "RunResults",
    "RunSummary",
    "SchemaMismatchError",
    "ScoreMean",
    "ScoredItem",
    "StoreError",
    "SystemicFailureError",
    "TransferError",
    "UnknownRunError",
    "bootstrap_ci",
    "build_boards",
    "check_runs_files",
    "cluster_bootstrap_ci",
    "default_judge",
    "default_results_path",
    "diff_runs",
    "evaluate",
    "export_runs",
    "fingerprint",
    "import_runs",
    "label_agreement",
    "load_plugins",
    "load_runs",
    "make_run_id",
    "merge_runs_files",
    "paired_comparison",
    "read_runs_file",
    "resolve_identities",
    "run_evaluation",
    "run_identity",
    "same_model",
    "select_runs",
    "sign_flip_p",
    "summarize",
    "wilson_ci",
    "write_leaderboard",
    "write_report",
    "write_site",
]
