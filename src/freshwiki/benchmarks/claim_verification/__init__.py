"""``claim_verification``: the chat's claim verifiers on labelled real claims (see ``_benchmark``).

Options (``--benchmark-option key=value``): ``path`` (claims.jsonl; default the repository's
``experiments/data/claims.jsonl``), ``data_dir`` (the topic leads' folder; default the
``data_dir`` setting), ``split`` (``test``, ``dev`` or ``all``; default ``test``), ``kinds``
(comma-separated) and ``ids`` (comma-separated claim ids). Systems: ``claim-verifier`` with
``--option verifier=cloze-fast|legacy-fast|cloze-full|legacy-full``.
"""

from __future__ import annotations

from freshwiki.benchmarks.claim_verification._benchmark import (
    KINDS,
    LABEL_SET,
    OPTIONS,
    TEMPLATE,
    TOPIC_FILES,
    ClaimsError,
    ClaimVerification,
    VerdictScorer,
    claim_verification_benchmark,
    default_claims_path,
    read_claims,
    read_leads,
    verdict_scorer,
)

__all__ = [
    "KINDS",
    "LABEL_SET",
    "OPTIONS",
    "TEMPLATE",
    "TOPIC_FILES",
    "ClaimVerification",
    "ClaimsError",
    "VerdictScorer",
    "claim_verification_benchmark",
    "default_claims_path",
    "read_claims",
    "read_leads",
    "verdict_scorer",
]
