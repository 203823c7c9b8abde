"""The root of freshwiki's exception tree.

Every error freshwiki raises on purpose derives from :class:`FreshwikiError` and carries a
``hint``: what the user can do about it. The CLI prints message and hint without a traceback,
so a message must name the input that caused it.
"""

from __future__ import annotations


class FreshwikiError(Exception):
    """An expected failure with a user-facing explanation and a remedy."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


class ConfigError(FreshwikiError):
    """A configuration file, variable or flag has a value freshwiki cannot use."""
