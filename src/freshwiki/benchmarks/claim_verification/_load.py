"""The ``claim_verification`` benchmark by its options: the project's claims or a public set."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from freshwiki.benchmarks._options import options_with_defaults
from freshwiki.benchmarks.claim_verification._benchmark import (
    KINDS,
    OPTIONS,
    ClaimsError,
    ClaimVerification,
    own_claims_benchmark,
)
from freshwiki.benchmarks.claim_verification._external import ExternalClaims, external_benchmark

if TYPE_CHECKING:
    from freshwiki.config import Settings

_OWN_ONLY = {"path": "", "data_dir": "", "kinds": ",".join(KINDS)}
"""Options that choose among the project's claims; with a public set they would be ignored."""


def claim_verification_benchmark(settings: Settings, options: Mapping[str, Any]
                                 ) -> ClaimVerification | ExternalClaims:
    """``claim_verification``: the project's claims, or ``external=NAME`` / ``external_path=``.

    Raises:
        ClaimsError: an unknown option, split or kind; an own-claims option given with a
            public set; a missing or malformed file.
    """
    values = options_with_defaults("claim_verification", options, OPTIONS, ClaimsError)
    if not (values["external"] or values["external_path"]):
        return own_claims_benchmark(settings, values)
    mixed = sorted(k for k, default in _OWN_ONLY.items() if values[k] != default)
    if mixed:
        raise ClaimsError(f"claim_verification: {', '.join(mixed)} choose among the project's "
                          "claims, not a public set's",
                          hint="with external= or external_path= use split= and ids= only.")
    return external_benchmark(values)
