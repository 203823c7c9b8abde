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

Identity (:meth:`OpenAICompatibleBackend.identify`): what a run id records for a served
model is what the server says it serves, from ``GET /v1/models``: the entry's ``id`` and its
stable fields (``owned_by``, vLLM's ``root`` and ``parent``, llama.cpp's ``meta``: parameter
count, file size, vocabulary, training context), plus the revision the user names in the spec
(``openai:MODEL#REVISION@URL``), for servers that report nothing that changes with the
weights. ``created`` is left out: llama.cpp and vLLM report the time of the request there.
The server's URL is never part of it: the same model served on another port or host is the
same set-up. When ``/v1/models`` cannot be read the identity falls back to the model name
and revision, with a warning. The response cache keys on :attr:`model_id` (name and URL) as
before.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx
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

SERVED_FIELDS = ("id", "owned_by", "root", "parent", "meta")
"""Fields of a ``/v1/models`` entry that identify the served model (see the module doc)."""

IDENTIFY_TIMEOUT_S = 10.0


def served_identity(entry: Mapping[str, Any] | None, model: str,
                    revision: str | None) -> str:
    """The identity string of a served model: canonical JSON, no URL.

    Args:
        entry: The server's ``/v1/models`` entry for the model (``None``: not read).
        model: The model name the spec gives.
        revision: The user's revision, if any.
    """
    ident: dict[str, Any] = (
        {"served": {k: entry[k] for k in SERVED_FIELDS if entry.get(k) is not None}}
        if entry is not None else {"name": model})
    if revision:
        ident["revision"] = revision
    return json.dumps(ident, sort_keys=True, separators=(",", ":"), default=str)


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
        revision: str | None = None,
    ) -> None:
        self.model = model
        self.revision = revision or None
        self.base_url = (base_url or OPENAI_DEFAULT_URL).rstrip("/")
        self.model_id = model if base_url is None else f"{model}@{self.base_url}"
        self.identity: str | None = None
        """The run identity once :meth:`identify` has asked the server (``None`` before)."""
        self._api_key = api_key or "not-needed"
        self._timeout_s = timeout_s
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

    async def identify(self) -> str:
        """What the server reports serving, plus the revision: the model's run identity.

        Asked once (``GET {base_url}/models``) and kept in :attr:`identity`. The entry whose
        ``id`` is the spec's model name is used; a server that lists one model only (llama.cpp
        serves whatever name is asked for) gives that one. When the list cannot be read or
        has no such entry, the identity is the model name and revision, and a warning says
        that a changed model behind the same name will not be noticed.
        """
        if self.identity is not None:
            return self.identity
        entry: Mapping[str, Any] | None = None
        problem = ""
        try:
            async with httpx.AsyncClient(timeout=min(self._timeout_s, IDENTIFY_TIMEOUT_S)) as c:
                response = await c.get(f"{self.base_url}/models",
                                       headers={"Authorization": f"Bearer {self._api_key}"})
            response.raise_for_status()
            listed = response.json().get("data")
            entries = [e for e in listed if isinstance(e, dict)] if isinstance(listed, list) else []
            named = [e for e in entries if e.get("id") == self.model]
            entry = named[0] if named else entries[0] if len(entries) == 1 else None
            if entry is None:
                problem = (f"it lists {len(entries)} models, none called {self.model!r}"
                           if entries else "it lists no models")
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            problem = f"{type(exc).__name__}: {exc}"
        if entry is None:
            warnings.warn(
                f"cannot read the served model's identity from {self.base_url}/models "
                f"({problem}); the run is identified by the model name {self.model!r}"
                + (f" and revision {self.revision!r}" if self.revision else "")
                + " only. Name a revision (openai:MODEL#REVISION@URL) so that other weights "
                "behind the same name start a new run.", UserWarning, stacklevel=2)
        self.identity = served_identity(entry, self.model, self.revision)
        return self.identity

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
