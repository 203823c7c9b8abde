"""Any OpenAI-compatible chat server (OpenAI, vLLM, llama.cpp, Ollama, TGI) via the SDK.

The SDK's own retries are off: the :class:`~freshwiki.llm.LLM` client retries with jittered
backoff under one overall deadline, the same way for every backend. Here we only sort
failures into transient (timeouts, 429, 5xx, dropped connections, garbled bodies) and final.

Servers disagree on how to ask for schema-constrained JSON: OpenAI, vLLM and Ollama take
``{"type": "json_schema", ...}``; llama-cpp-python's server takes
``{"type": "json_object", "schema": ...}``. We try the former and, if the server rejects the
request, switch to the latter for the rest of this backend's life.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import openai

from freshwiki.llm._errors import LLMRequestError, TransientBackendError
from freshwiki.llm._types import Completion, GenerationParams, Message, Usage

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"


class OpenAICompatibleBackend:
    """Chat completions over HTTP through the ``openai`` SDK."""

    name = "openai"
    retries_bounded_by_timeout = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        concurrency: int = 8,
    ) -> None:
        self.model = model
        self.base_url = (base_url or OPENAI_DEFAULT_URL).rstrip("/")
        self.model_id = model if base_url is None else f"{model}@{self.base_url}"
        self.default_concurrency = concurrency
        self._json_mode = "json_schema"
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url,
            # Local servers accept any key; the SDK insists on one being set.
            api_key=api_key or "not-needed",
            timeout=timeout_s,
            max_retries=0,
        )

    def _request(
        self, messages: Sequence[Message], params: GenerationParams, stream: bool
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_dict() for m in messages],
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "seed": params.seed,
            "stream": stream,
        }
        if params.stop:
            body["stop"] = list(params.stop)
        if params.json_schema is not None:
            if self._json_mode == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": params.schema_name, "schema": params.json_schema},
                }
            else:
                body["response_format"] = {"type": "json_object", "schema": params.json_schema}
        return body

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        """One non-streaming chat completion."""
        try:
            response = await self._create(self._request(messages, params, stream=False))
        except openai.BadRequestError as exc:
            if params.json_schema is not None and self._json_mode == "json_schema":
                # Older llama.cpp-style servers: retry once with their JSON dialect.
                self._json_mode = "json_object"
                response = await self._create(self._request(messages, params, stream=False))
            else:
                raise self._final(exc) from exc
        if not getattr(response, "choices", None):
            raise TransientBackendError("malformed response: no choices in the body")
        choice = response.choices[0]
        usage = getattr(response, "usage", None)
        message = choice.message
        return Completion(
            text=message.content or "",
            finish_reason=choice.finish_reason or "stop",
            usage=Usage(
                prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            ),
            refusal=getattr(message, "refusal", None),
            model=response.model or self.model,
        )

    async def stream(
        self, messages: Sequence[Message], params: GenerationParams
    ) -> AsyncIterator[str | Completion]:
        """Server-sent events: yield deltas, then the assembled completion."""
        body = self._request(messages, params, stream=True)
        body["stream_options"] = {"include_usage": True}
        try:
            chunks = await self._create(body)
        except openai.BadRequestError:
            # Some servers reject stream_options; usage is then counted from chunks.
            body.pop("stream_options")
            chunks = await self._create(body)
        parts: list[str] = []
        finish = "stop"
        usage = Usage()
        n_chunks = 0
        model = self.model
        try:
            async for chunk in chunks:
                model = getattr(chunk, "model", None) or model
                if getattr(chunk, "usage", None):
                    usage = Usage(
                        prompt_tokens=chunk.usage.prompt_tokens or 0,
                        completion_tokens=chunk.usage.completion_tokens or 0,
                    )
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                delta = choice.delta.content if choice.delta else None
                if delta:
                    n_chunks += 1
                    parts.append(delta)
                    yield delta
                if choice.finish_reason:
                    finish = choice.finish_reason
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise TransientBackendError(f"stream dropped: {exc}") from exc
        if usage.completion_tokens == 0:
            usage = Usage(prompt_tokens=usage.prompt_tokens, completion_tokens=n_chunks)
        yield Completion(text="".join(parts), finish_reason=finish, usage=usage, model=model)

    async def _create(self, body: dict[str, Any]) -> Any:
        try:
            return await self._client.chat.completions.create(**body)
        except openai.APITimeoutError as exc:
            raise TransientBackendError(f"timeout talking to {self.base_url}") from exc
        except openai.APIConnectionError as exc:
            raise TransientBackendError(
                f"connection to {self.base_url} failed ({_root_cause(exc)})"
            ) from exc
        except openai.RateLimitError as exc:
            raise TransientBackendError("HTTP 429 rate limited", _retry_after(exc)) from exc
        except openai.InternalServerError as exc:
            raise TransientBackendError(f"HTTP {exc.status_code} server error") from exc
        except openai.BadRequestError:
            raise
        except openai.APIStatusError as exc:
            if exc.status_code in (408, 409, 425) or exc.status_code >= 500:
                raise TransientBackendError(f"HTTP {exc.status_code}") from exc
            raise self._final(exc) from exc
        except (openai.APIResponseValidationError, json.JSONDecodeError) as exc:
            raise TransientBackendError(f"malformed response body ({exc})") from exc

    def _final(self, exc: openai.APIStatusError) -> LLMRequestError:
        hints = {
            401: "set FRESHWIKI_OPENAI_API_KEY (or OPENAI_API_KEY) to a valid key.",
            403: "the key lacks access to this model.",
            404: f"check the model name {self.model!r} and the base URL {self.base_url}.",
        }
        return LLMRequestError(
            f"HTTP {exc.status_code} from {self.base_url}: {_body_message(exc)}",
            backend=self.name,
            model=self.model_id,
            hint=hints.get(exc.status_code, "the server rejected the request; see its message."),
        )

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._client.close()


def _retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after") if exc.response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _body_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and "message" in inner:
            return str(inner["message"])[:300]
    return str(exc.message)[:300]


def _root_cause(exc: BaseException) -> str:
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return str(exc) or type(exc).__name__
