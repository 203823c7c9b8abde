"""The seam every backend implements. Kept tiny so a new backend is an afternoon's work."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from freshwiki.llm._types import Completion, GenerationParams, Message


@runtime_checkable
class Backend(Protocol):
    """A source of completions.

    The :class:`~freshwiki.llm.LLM` client adds caching, concurrency limits, retries, JSON
    handling, refusal detection and logging on top.

    Backends raise :class:`~freshwiki.llm._errors.TransientBackendError` for failures worth
    retrying and any :class:`~freshwiki.llm._errors.LLMError` for failures that are not.
    """

    name: str
    """Backend kind: ``local``, ``openai``, ``scripted``."""

    model_id: str
    """Stable identity of the model for cache keys (a name plus weights hash, or a server URL
    plus model name), so a different model never serves another model's cached answer."""

    default_concurrency: int
    """Requests this backend handles well at once."""

    retries_bounded_by_timeout: bool
    """Whether the overall call timeout applies (network backends) or not (in-process)."""

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        """Generate one full completion."""
        ...

    def stream(
        self, messages: Sequence[Message], params: GenerationParams
    ) -> AsyncIterator[str | Completion]:
        """Yield text deltas, then exactly one final :class:`Completion` with the full text."""
        ...

    async def aclose(self) -> None:
        """Release connections or models."""
        ...
