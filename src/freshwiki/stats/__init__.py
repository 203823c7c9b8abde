"""Statistics every layer uses, written once: intervals, agreement, ranks and percentiles.

A foundation module (it imports nothing of freshwiki), so a benchmark's agreement figures, the
runner's report, the leaderboard and the experiment scripts all compute a Wilson interval, a
kappa or a percentile the same way. ``tests/stats/`` holds hand-worked values and the check
that no other module defines its own.
"""

from freshwiki.stats._agreement import (
    ClassCounts,
    class_scores,
    cohens_kappa,
    confusion,
    kappa_from_matrix,
    prf,
)
from freshwiki.stats._intervals import (
    Interval,
    as_array,
    bootstrap_ci,
    cluster_bootstrap_ci,
    paired_bootstrap_ci,
    percentile_interval,
    ratio_bootstrap_ci,
    wilson_ci,
)
from freshwiki.stats._paired import mcnemar_exact_p, sign_flip_p
from freshwiki.stats._ranks import kendall_tau_b, percentile, ranks

__all__ = [
    "ClassCounts",
    "Interval",
    "as_array",
    "bootstrap_ci",
    "class_scores",
    "cluster_bootstrap_ci",
    "cohens_kappa",
    "confusion",
    "kappa_from_matrix",
    "kendall_tau_b",
    "mcnemar_exact_p",
    "paired_bootstrap_ci",
    "percentile",
    "percentile_interval",
    "prf",
    "ranks",
    "ratio_bootstrap_ci",
    "sign_flip_p",
    "wilson_ci",
]
