"""A backend that replays recorded responses, for deterministic tests. Never a default.

A script is a sequence of steps consumed in order. A step is a reply text, a
:class:`ScriptedFailure` (``timeout``, ``rate_limit``, ``server_error``, ``connection``,
``bad_request``), or a callable that receives the messages and returns text. Every request is
recorded in :attr:`ScriptedBackend.requests` so tests can assert what was sent.

Answer features (:meth:`ScriptedBackend.answer_features`, kind ``scripted``) come from the
``features`` callable when one is given, else from a hash of the texts
(:func:`~freshwiki.llm.hashed_features`); requests go to :attr:`ScriptedBackend.feature_requests`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from freshwiki.llm._errors import (
    LLMRequestError,
    ScriptExhaustedError,
    TransientBackendError,
)
from freshwiki.llm._features import FeatureVector, hashed_features
from freshwiki.llm._types import Completion, GenerationParams, Message, Usage

_TRANSIENT = {
    "timeout": "timeout (scripted)",
    "rate_limit": "HTTP 429 (scripted)",
    "server_error": "HTTP 500 (scripted)",
    "connection": "connection dropped (scripted)",
}


@dataclass(frozen=True)
class ScriptedFailure:
    """A scripted failure.

    One of ``timeout``, ``rate_limit``, ``server_error``, ``connection`` (all retried) or
    ``bad_request`` (not retried).
    """

    kind: str

    def __post_init__(self) -> None:
        if self.kind not in (*_TRANSIENT, "bad_request"):
            raise ValueError(f"unknown scripted failure {self.kind!r}")


Step = str | ScriptedFailure | Callable[[Sequence[Message]], str]
FeatureFn = Callable[[Sequence[Message], str], Sequence[float]]
"""Scripted answer features: (messages, answer) -> values."""


@dataclass(frozen=True)
class ScriptedCall:
    """One request the scripted backend received."""

    messages: tuple[Message, ...]
    params: GenerationParams


class ScriptedBackend:
    """Replays a script of responses; see the module docstring."""

    name = "scripted"
    retries_bounded_by_timeout = True
    feature_kind = "scripted"

    def __init__(
        self,
        steps: Iterable[Step],
        *,
        model_id: str = "scripted",
        delay_s: float = 0.0,
        concurrency: int = 4,
        features: FeatureFn | None = None,
        feature_dim: int | None = None,
    ) -> None:
        self._steps = list(steps)
        self._features = features
        self._feature_dim = feature_dim
        self.feature_requests: list[tuple[tuple[Message, ...], str]] = []
        self.model_id = model_id
        self.delay_s = delay_s
        self.default_concurrency = concurrency
        self.requests: list[ScriptedCall] = []
        self.in_flight = 0
        self.max_in_flight = 0

    @classmethod
    def from_file(cls, path: Path) -> ScriptedBackend:
        """Load a JSONL script: one ``{"text": ...}`` or ``{"error": KIND}`` per line."""
        if not path.is_file():
            raise LLMRequestError(
                f"script file {path} not found",
                backend="scripted",
                model=str(path),
                hint='scripted:PATH needs a JSONL file of {"text": ...} or {"error": ...} lines.',
            )
        steps: list[Step] = []
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                steps.append(ScriptedFailure(item["error"]) if "error" in item else item["text"])
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise LLMRequestError(
                    f"{path}:{lineno}: not a script step ({exc})",
                    backend="scripted",
                    model=str(path),
                    hint='each line must be {"text": "..."} or {"error": "timeout|rate_limit|'
                    'server_error|connection|bad_request"}.',
                ) from exc
        return cls(steps, model_id=f"script:{path.name}")

    @property
    def remaining(self) -> int:
        """Steps not yet consumed."""
        return len(self._steps)

    def _next_text(self, messages: Sequence[Message], params: GenerationParams) -> str:
        self.requests.append(ScriptedCall(tuple(messages), params))
        if not self._steps:
            raise ScriptExhaustedError(
                f"no scripted response left for request #{len(self.requests)}",
                backend=self.name,
                model=self.model_id,
                hint="add a step to the script, or the code made more calls than expected.",
            )
        step = self._steps.pop(0)
        if isinstance(step, ScriptedFailure):
            if step.kind == "bad_request":
                raise LLMRequestError("HTTP 400 (scripted)", backend=self.name, model=self.model_id)
            raise TransientBackendError(_TRANSIENT[step.kind])
        if callable(step):
            return step(messages)
        return step

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        """Return the next scripted step."""
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            text = self._next_text(messages, params)
        finally:
            self.in_flight -= 1
        return _completion(text, messages, params, self.model_id)

    async def stream(
        self, messages: Sequence[Message], params: GenerationParams
    ) -> AsyncIterator[str | Completion]:
        """Yield the next scripted reply word by word, then the completion."""
        text = self._next_text(messages, params)
        for i, word in enumerate(text.split(" ")):
            yield word if i == 0 else " " + word
        yield _completion(text, messages, params, self.model_id)

    def feature_dim(self) -> int | None:
        """The size given to the constructor; 8 for hashed features; else unknown (``None``)."""
        if self._feature_dim is not None or self._features is not None:
            return self._feature_dim
        return len(hashed_features([], ""))

    async def answer_features(self, messages: Sequence[Message], answer: str) -> FeatureVector:
        """The ``features`` callable's values for (messages, answer), else a hash of them."""
        self.feature_requests.append((tuple(messages), answer))
        if self._features is not None:
            values = tuple(float(v) for v in self._features(messages, answer))
        else:
            values = hashed_features(messages, answer)
        return FeatureVector(values, kind=self.feature_kind, model=self.model_id)

    async def aclose(self) -> None:
        """Nothing to release."""


def _completion(
    text: str, messages: Sequence[Message], params: GenerationParams, model: str
) -> Completion:
    words = len(text.split())
    prompt_words = sum(len(m.content.split()) for m in messages)
    finish = "length" if words >= params.max_tokens else "stop"
    return Completion(
        text=text,
        finish_reason=finish,
        usage=Usage(prompt_tokens=prompt_words, completion_tokens=words),
        model=model,
    )
