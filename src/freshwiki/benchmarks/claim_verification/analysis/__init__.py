"""Claim verification's analysis of stored runs: per-label precision and recall per verifier.

Kept out of the benchmark's own import graph (the benchmark never imports it), so changing how
results are analysed does not change the run ids. ``experiments/claim_verification.py``
writes its result file with :func:`scores`, and the public sets' with :func:`supports_scores`
beside the :func:`majority_label` and always-SUPPORTS baselines (:func:`constant_rows`).
"""

from freshwiki.benchmarks.claim_verification.analysis._tables import (
    BASELINE_TIES,
    SCORER,
    ClaimVerificationAnalysis,
    VerifierRow,
    constant_rows,
    majority_label,
    run_rows,
    scores,
    share_ci,
    supports_scores,
    verdict_row,
    verifier_rows,
)

__all__ = [
    "BASELINE_TIES",
    "SCORER",
    "ClaimVerificationAnalysis",
    "VerifierRow",
    "constant_rows",
    "majority_label",
    "run_rows",
    "scores",
    "share_ci",
    "supports_scores",
    "verdict_row",
    "verifier_rows",
]
