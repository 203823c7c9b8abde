"""Benchmark options checked against their defaults, the same way for every benchmark."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from freshwiki.errors import FreshwikiError


def options_with_defaults(name: str, options: Mapping[str, Any], defaults: Mapping[str, Any],
                          error: type[FreshwikiError] = FreshwikiError) -> dict[str, Any]:
    """``defaults`` updated with ``options``; an unknown option raises ``error`` at once.

    A misspelt option would otherwise be ignored and the run would quietly use the default,
    so the message names the benchmark, the unknown keys and every accepted one.
    """
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        accepted = ", ".join(f"{k} (default {v!r})" for k, v in defaults.items())
        raise error(f"benchmark {name!r} has no option {', '.join(unknown)}",
                    hint=f"options: {accepted}.")
    return {**defaults, **options}
