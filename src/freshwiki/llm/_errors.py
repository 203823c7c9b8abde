"""Typed LLM errors. Each names the backend and model, and says what to do."""

from __future__ import annotations

from freshwiki.errors import FreshwikiError


class LLMError(FreshwikiError):
    """Any failure of an LLM call."""

    def __init__(
        self, message: str, *, backend: str = "", model: str = "", hint: str | None = None
    ) -> None:
        prefix = f"[{backend}:{model}] " if backend else ""
        super().__init__(prefix + message, hint=hint)
        self.backend = backend
        self.model = model


class LLMUnavailableError(LLMError):
    """The backend kept failing transiently (timeouts, 429, 5xx, dropped connections)."""

    def __init__(
        self, message: str, *, backend: str, model: str, attempts: int, cause: str
    ) -> None:
        super().__init__(
            message,
            backend=backend,
            model=model,
            hint="check that the server is running and reachable, or raise "
            "FRESHWIKI_TIMEOUT / FRESHWIKI_MAX_RETRIES.",
        )
        self.attempts = attempts
        self.cause = cause


class LLMRequestError(LLMError):
    """The backend rejected the request itself (bad parameters, auth, unknown model)."""


class LLMOutputError(LLMError):
    """The model's output could not be used: JSON that does not parse or fit the schema."""

    def __init__(
        self, message: str, *, backend: str, model: str, raw_text: str, hint: str | None = None
    ) -> None:
        super().__init__(message, backend=backend, model=model, hint=hint)
        self.raw_text = raw_text


class LLMRefusalError(LLMError):
    """The model refused, so a structured answer the caller required does not exist."""


class ModelError(LLMError):
    """Model weights are unknown, missing, or corrupt."""


class ScriptExhaustedError(LLMError):
    """The scripted backend ran out of recorded responses (a test asked for more calls)."""


class TransientBackendError(Exception):
    """Raised by backends for failures worth retrying. Never escapes the LLM client.

    Args:
        cause: A short human description (``HTTP 429``, ``timeout``, ``connection refused``).
        retry_after: Seconds the server asked us to wait, when it said so.
    """

    def __init__(self, cause: str, retry_after: float | None = None) -> None:
        super().__init__(cause)
        self.cause = cause
        self.retry_after = retry_after
