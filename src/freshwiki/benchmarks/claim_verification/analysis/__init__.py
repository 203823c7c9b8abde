"""Claim verification's analysis of stored runs: per-label precision and recall per verifier.

Kept out of the benchmark's own import graph (the benchmark never imports it), so changing how
results are analysed does not change the run ids. ``experiments/claim_verification.py``
writes its result file with :func:`scores`.
"""

from freshwiki.benchmarks.claim_verification.analysis._tables import (
    SCORER,
    ClaimVerificationAnalysis,
    VerifierRow,
    run_rows,
    scores,
    share_ci,
    verdict_row,
    verifier_rows,
)

__all__ = [
    "SCORER",
    "ClaimVerificationAnalysis",
    "VerifierRow",
    "run_rows",
    "scores",
    "share_ci",
    "verdict_row",
    "verifier_rows",
]
