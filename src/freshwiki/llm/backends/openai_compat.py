"""Any OpenAI-compatible chat server (OpenAI, vLLM, llama.cpp, Ollama, TGI) via the SDK.

The SDK's own retries are off: the :class:`~freshwiki.llm.LLM` client retries with jittered
backoff under one overall deadline, the same way for every backend. Here we only sort
failures into transient (timeouts, 429, 5xx, dropped connections, garbled bodies) and final.

Servers disagree on how to ask for schema-constrained JSON: OpenAI, vLLM and Ollama take
``{"type": "json_schema", ...}``; llama-cpp-python's server takes
``{"type": "json_object", "schema": ...}``. We try the former and, if the server rejects the
request, switch to the latter for the rest of this backend's life.

Answer features (:meth:`OpenAICompatibleBackend.answer_features`) are ``logprob-summary``
vectors: the chat API cannot score a given reply, so the reply is regenerated greedily with
``logprobs`` and ``top_logprobs`` and summarised. For an answer this model produced greedily
(every benchmark answer), the regeneration is the same text; the trace says whether it was.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import openai

from freshwiki.llm._errors import LLMRequestError, TransientBackendError
from freshwiki.llm._features import (
    LOGPROB_FEATURES,
    FeatureVector,
    TokenLogprob,
    logprob_summary,
)
from freshwiki.llm._types import Completion, GenerationParams, Message, Usage

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"


class OpenAICompatibleBackend:
    """Chat completions over HTTP through the ``openai`` SDK."""

    name = "openai"
    retries_bounded_by_timeout = True
    feature_kind = "logprob-summary"
    top_logprobs = 5

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
        body = self._request(messages, params, stream=False)
        try:
            response = await self._client.chat.completions.create(**body)
        except openai.APIStatusError as exc:
            if params.json_schema is None or not self._rejects_json_schema(exc):
                raise self._map(exc) from exc
            # Perhaps a server with the older JSON dialect (llama-cpp-python): try it, and
            # keep it only if the server accepts it.
            fallback = self._request(messages, params, stream=False)
            fallback["response_format"] = {"type": "json_object", "schema": params.json_schema}
            response = await self._create(fallback)
            self._json_mode = "json_object"
        except openai.OpenAIError as exc:
            raise self._map(exc) from exc
        except json.JSONDecodeError as exc:  # a 200 labelled JSON whose body is not JSON
            raise TransientBackendError(f"malformed response body ({exc})") from exc
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
            chunks = await self._client.chat.completions.create(**body)
        except openai.APIStatusError as exc:
            if "stream_options" not in f"{exc.message} {exc.body}":
                raise self._map(exc) from exc
            # Some servers reject stream_options; usage is then counted from chunks.
            body.pop("stream_options")
            chunks = await self._create(body)
        except openai.OpenAIError as exc:
            raise self._map(exc) from exc
        except json.JSONDecodeError as exc:
            raise TransientBackendError(f"malformed response body ({exc})") from exc
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
        except openai.APIError as exc:  # an {"error": ...} event inside the stream
            raise TransientBackendError(f"server error mid-stream: {exc.message}") from exc
        except json.JSONDecodeError as exc:  # a garbled data: line
            raise TransientBackendError(f"malformed stream chunk ({exc})") from exc
        if usage.completion_tokens == 0:
            usage = Usage(prompt_tokens=usage.prompt_tokens, completion_tokens=n_chunks)
        yield Completion(text="".join(parts), finish_reason=finish, usage=usage, model=model)

    def feature_dim(self) -> int:
        """Always ``len(LOGPROB_FEATURES)``: the summary has a fixed size."""
        return len(LOGPROB_FEATURES)

    async def answer_features(self, messages: Sequence[Message], answer: str) -> FeatureVector:
        """Regenerate the reply greedily with logprobs and summarise them (``LOGPROB_FEATURES``).

        The generation budget follows the answer's length (about two characters per token,
        which over-counts for English), so the summary covers the answer's span rather than
        whatever a model might ramble on to.

        Raises:
            LLMRequestError: the server returned no logprobs (it does not support them).
        """
        budget = max(16, min(1024, len(answer) // 2 + 16))
        body = self._request(
            messages, GenerationParams(max_tokens=budget, temperature=0.0), stream=False
        )
        body["logprobs"] = True
        body["top_logprobs"] = self.top_logprobs
        response = await self._create(body)
        if not getattr(response, "choices", None):
            raise TransientBackendError("malformed response: no choices in the body")
        choice = response.choices[0]
        content = getattr(getattr(choice, "logprobs", None), "content", None)
        if content is None:
            raise LLMRequestError(
                f"{self.base_url} returned no logprobs",
                backend=self.name,
                model=self.model_id,
                hint="answer features need a server that supports logprobs=true (OpenAI, vLLM, "
                "llama-cpp-python's server with logits_all); or use a local: model.",
            )
        tokens = [
            TokenLogprob(
                float(item.logprob),
                tuple(float(alt.logprob) for alt in (getattr(item, "top_logprobs", None) or ())),
            )
            for item in content
        ]
        text = choice.message.content or ""
        return FeatureVector(
            logprob_summary(tokens),
            kind=self.feature_kind,
            model=self.model_id,
            names=LOGPROB_FEATURES,
            detail={"scored_text": text, "matches_answer": text.strip() == answer.strip(),
                    "tokens": len(tokens)},
        )

    def _rejects_json_schema(self, exc: openai.APIStatusError) -> bool:
        """Whether the server refused the ``json_schema`` response format.

        Any status code counts: llama-cpp-python's server answers its own validation error
        with HTTP 500.
        """
        if self._json_mode != "json_schema" or exc.status_code == 429:
            return False
        text = f"{exc.message} {exc.body}"
        return "response_format" in text or "json_schema" in text

    async def _create(self, body: dict[str, Any]) -> Any:
        try:
            return await self._client.chat.completions.create(**body)
        except openai.OpenAIError as exc:
            raise self._map(exc) from exc
        except json.JSONDecodeError as exc:
            raise TransientBackendError(f"malformed response body ({exc})") from exc

    def _map(self, exc: openai.OpenAIError) -> Exception:
        """Sort an SDK error into transient (retried by the client) or final."""
        if isinstance(exc, openai.APITimeoutError):
            return TransientBackendError(f"timeout talking to {self.base_url}")
        if isinstance(exc, openai.APIConnectionError):
            return TransientBackendError(
                f"connection to {self.base_url} failed ({_root_cause(exc)})"
            )
        if isinstance(exc, openai.RateLimitError):
            return TransientBackendError("HTTP 429 rate limited", _retry_after(exc))
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code in (408, 409, 425) or exc.status_code >= 500:
                return TransientBackendError(f"HTTP {exc.status_code} server error")
            return self._final(exc)
        if isinstance(exc, openai.APIResponseValidationError):
            return TransientBackendError(f"malformed response body ({exc})")
        return LLMRequestError(str(exc), backend=self.name, model=self.model_id)

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
