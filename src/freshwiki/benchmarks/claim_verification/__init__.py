"""``claim_verification``: the chat's claim verifiers on labelled claims (see ``_benchmark``).

Two kinds of data, chosen by the options (``--benchmark-option key=value``):

* the project's claims (labelled by its maintainers): ``path`` (claims.jsonl; default the
  repository's ``experiments/data/claims.jsonl``), ``data_dir`` (the topic leads' folder;
  default the ``data_dir`` setting), ``split`` (``test``, ``dev`` or ``all``; default
  ``test``), ``kinds`` (comma-separated) and ``ids`` (comma-separated claim ids);
* a public human-labelled set (``_external``): ``external=NAME`` reads
  ``experiments/data/external/NAME/claims.jsonl`` of the source checkout (rebuilt by
  ``python experiments/external_sets.py build NAME --source DIR``; not committed), or
  ``external_path=PATH`` any file in the same format (:func:`read_external`). ``split``
  (a split the file has, or ``all``) and ``ids`` filter it; ``path``, ``data_dir`` and
  ``kinds`` do not apply. Each row's evidence is the sample's one document; the query is the
  row's question, or the claim itself when it has none.

Systems: ``claim-verifier`` with ``--option verifier=cloze-fast|legacy-fast|cloze-full|
legacy-full|predicate|checked``.
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
    default_claims_path,
    own_claims_benchmark,
    read_claims,
    read_leads,
    verdict_scorer,
)
from freshwiki.benchmarks.claim_verification._external import (
    REBUILD,
    ExternalClaims,
    default_external_path,
    read_external,
)
from freshwiki.benchmarks.claim_verification._load import claim_verification_benchmark

__all__ = [
    "KINDS",
    "LABEL_SET",
    "OPTIONS",
    "REBUILD",
    "TEMPLATE",
    "TOPIC_FILES",
    "ClaimVerification",
    "ClaimsError",
    "ExternalClaims",
    "VerdictScorer",
    "claim_verification_benchmark",
    "default_claims_path",
    "default_external_path",
    "own_claims_benchmark",
    "read_claims",
    "read_external",
    "read_leads",
    "verdict_scorer",
]
