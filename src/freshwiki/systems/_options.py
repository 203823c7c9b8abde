"""What every system shares when it is built: options read and checked, and the setup error.

Kept apart from the registry so that a system module imports only this, and the registry
(which names the system modules) imports none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from freshwiki.errors import FreshwikiError


class SystemSetupError(FreshwikiError):
    """A system cannot answer anything (its index is missing, an option is invalid).

    Unlike an error raised for one task, the runner does not record it per sample: it stops
    the run at once, because every remaining sample would fail the same way.
    """


def read_options(
    system: str, options: Mapping[str, Any], defaults: Mapping[str, Any]
) -> dict[str, Any]:
    """``defaults`` updated with ``options``, each coerced to its default's type.

    Unknown keys are an error rather than ignored: ``--option kk=3`` silently doing nothing
    would produce a run that looks like it tested something it did not.

    Raises:
        SystemSetupError: naming the system, the option and the accepted ones.
    """
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        accepted = ", ".join(f"{k} (default {v!r})" for k, v in defaults.items()) or "none"
        raise SystemSetupError(
            f"system {system!r} has no option {', '.join(map(repr, unknown))}",
            hint=f"options of {system!r}: {accepted}.",
        )
    values = dict(defaults)
    for key, raw in options.items():
        kind = type(defaults[key])
        try:
            if kind is bool and not isinstance(raw, bool):
                raise ValueError("expected true or false")
            if isinstance(raw, bool) and kind is not bool:
                raise ValueError("got a boolean")
            # int(str(...)) so that 3.5 is refused instead of silently becoming 3.
            values[key] = raw if isinstance(raw, kind) else kind(str(raw))
        except (TypeError, ValueError) as exc:
            raise SystemSetupError(
                f"system {system!r}: option {key}={raw!r} is not a {kind.__name__} ({exc})",
                hint=f"pass e.g. --option {key}={defaults[key]!r}.",
            ) from None
    return values
