"""Value types of the LLM interface: what goes in, what comes out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Role
    content: str

    @classmethod
    def system(cls, content: str) -> Message:
        """A system message."""
        return cls("system", content)

    @classmethod
    def user(cls, content: str) -> Message:
        """A user message."""
        return cls("user", content)

    @classmethod
    def assistant(cls, content: str) -> Message:
        """An assistant message."""
        return cls("assistant", content)

    def to_dict(self) -> dict[str, str]:
        """The OpenAI wire shape."""
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class GenerationParams:
    """Decoding parameters. Part of the response-cache key, so keep them explicit.

    Greedy decoding (temperature 0) is the default because evaluations must be reproducible.
    """

    max_tokens: int = 512
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    stop: tuple[str, ...] = ()
    json_schema: dict[str, Any] | None = None
    schema_name: str = "response"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view used in cache keys and logs."""
        return {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "stop": list(self.stop),
            "json_schema": self.json_schema,
            "schema_name": self.schema_name,
        }


@dataclass(frozen=True)
class Usage:
    """Token counts of one call. For a cache hit, the counts of the call that was stored."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Completion:
    """What a backend returns for one request (before caching, parsing, refusal checks)."""

    text: str
    finish_reason: str = "stop"
    usage: Usage = field(default_factory=Usage)
    refusal: str | None = None
    model: str = ""


@dataclass(frozen=True)
class LLMResult:
    """The outcome of one call through :class:`freshwiki.llm.LLM`.

    Attributes:
        text: The generated text (for JSON calls, the raw JSON text).
        parsed: The parsed object for JSON-schema calls, else ``None``.
        usage: Token counts.
        latency_s: Wall-clock seconds of this call, including retries and repair.
        cache_hit: Whether the response came from the persistent response cache.
        refused: Whether the model declined to answer (API refusal field, content filter, or
            a refusal phrase at the start of the reply).
        finish_reason: ``stop``, ``length``, ``content_filter``...
        backend: Backend name (``local``, ``openai``, ``scripted``).
        model: Model identifier the backend reports.
        attempts: Backend attempts made (1 when no retry happened, 0 on a cache hit).
        repaired: Whether the JSON needed the repair round-trip.
    """

    text: str
    usage: Usage
    latency_s: float
    cache_hit: bool
    refused: bool
    finish_reason: str
    backend: str
    model: str
    parsed: Any = None
    attempts: int = 1
    repaired: bool = False
