"""The LLM client: one async interface over every backend.

The client owns everything that is the same for all backends, so each behaviour is written
once: the persistent response cache, a concurrency bound, retries with exponential backoff and
full jitter (bounded by the overall timeout on network backends), JSON parsing under a schema
with one repair round-trip, refusal detection, and the call log.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from freshwiki.llm._backend import Backend
from freshwiki.llm._cache import ResponseCache, features_key, request_key
from freshwiki.llm._calllog import CallLog, CallRecord
from freshwiki.llm._errors import (
    LLMError,
    LLMOutputError,
    LLMRefusalError,
    LLMRequestError,
    LLMUnavailableError,
    TransientBackendError,
)
from freshwiki.llm._features import FeatureBackend, FeatureVector
from freshwiki.llm._json import JSONOutputInvalid, looks_like_refusal, parse_json_output
from freshwiki.llm._types import Completion, GenerationParams, LLMResult, Message, Usage
from freshwiki.prompting import render_prompt

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter: sleep U(0, min(max_delay, base * 2**n)).

    Full jitter spreads retries of many concurrent callers so they do not hit a recovering
    server in lockstep. A server's ``Retry-After`` raises the sleep to at least that long.
    """

    max_retries: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    timeout_s: float = 120.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to sleep after failed attempt number ``attempt`` (1-based)."""
        cap = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        sleep = rng.uniform(0.0, cap)
        if retry_after is not None:
            sleep = max(sleep, min(retry_after, self.max_delay_s * 4))
        return sleep


class LLM:
    """Chat with a model: ``await llm.chat([...])`` or ``async for delta in llm.stream([...])``.

    Build one with :func:`freshwiki.llm.open_llm`. Share a client between tasks: its semaphore
    is what bounds concurrency.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        cache: ResponseCache | None = None,
        call_log: CallLog | None = None,
        retry: RetryPolicy | None = None,
        concurrency: int | None = None,
        seed: int | None = None,
    ) -> None:
        self.backend = backend
        self.cache = cache
        self.call_log = call_log
        self.retry = retry or RetryPolicy()
        self.concurrency = concurrency or backend.default_concurrency
        self._semaphores: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}
        self._rng = random.Random(seed)

    @property
    def _semaphore(self) -> asyncio.Semaphore:
        """The concurrency bound for the running event loop (a semaphore is loop-bound)."""
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(loop)
        if sem is None:
            self._semaphores = {lp: s for lp, s in self._semaphores.items() if not lp.is_closed()}
            sem = self._semaphores[loop] = asyncio.Semaphore(self.concurrency)
        return sem

    @property
    def spec(self) -> str:
        """``backend:model`` for display."""
        return f"{self.backend.name}:{self.backend.model_id}"

    async def identity(self) -> str:
        """``backend:identity``: what a run id records for this model.

        A local model's :attr:`~freshwiki.llm.Backend.model_id` (its weights' sha256); for a
        backend that can say more about what it serves (an ``identify()`` coroutine, as the
        OpenAI-compatible backend has: the server's own report, never its URL), that.
        """
        identify = getattr(self.backend, "identify", None)
        if callable(identify):
            return f"{self.backend.name}:{await identify()}"
        return f"{self.backend.name}:{self.backend.model_id}"

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int = 0,
        stop: Sequence[str] = (),
        json_schema: dict[str, Any] | None = None,
        schema_name: str = "response",
        use_cache: bool = True,
        tag: str | None = None,
    ) -> LLMResult:
        """Send chat messages and return the reply.

        Args:
            messages: The conversation, oldest first.
            max_tokens: Cap on generated tokens. Be generous with JSON: truncation breaks it.
            temperature: 0 is greedy decoding (the default, for reproducibility).
            top_p: Nucleus sampling mass.
            seed: Sampling seed (part of the cache key).
            stop: Stop sequences.
            json_schema: When given, output is constrained to this schema where the backend
                can, parsed and validated; the object is in ``result.parsed``.
            schema_name: Name reported to backends that want one for the schema.
            use_cache: Read and write the response cache for this call.
            tag: Label stored in the call log (a run id, a pipeline stage).

        Raises:
            LLMUnavailableError: transient failures outlasted the retries or the timeout.
            LLMRequestError: the backend rejected the request.
            LLMOutputError: JSON was required and still invalid after one repair attempt.
            LLMRefusalError: JSON was required and the model refused instead.
        """
        params = GenerationParams(
            max_tokens=max_tokens,
            temperature=temperature,
            top_p=top_p,
            seed=seed,
            stop=tuple(stop),
            json_schema=json_schema,
            schema_name=schema_name,
        )
        started = time.perf_counter()
        completion, hit, attempts = await self._complete(list(messages), params, use_cache, tag)
        parsed: Any = None
        repaired = False
        usage = completion.usage
        if json_schema is not None:
            outcome = await self._parse_or_repair(
                list(messages), params, completion, use_cache, tag
            )
            parsed, repaired = outcome.parsed, outcome.repair is not None
            if outcome.repair is not None:
                completion = outcome.repair.completion
                attempts += outcome.repair.attempts
                hit = hit and outcome.repair.cache_hit
                usage = _add_usage(usage, completion.usage)
        return LLMResult(
            text=completion.text,
            usage=usage,
            latency_s=time.perf_counter() - started,
            cache_hit=hit,
            refused=_is_refusal(completion),
            finish_reason=completion.finish_reason,
            backend=self.backend.name,
            model=completion.model or self.backend.model_id,
            parsed=parsed,
            attempts=attempts,
            repaired=repaired,
        )

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int = 0,
        stop: Sequence[str] = (),
        use_cache: bool = True,
        tag: str | None = None,
    ) -> ChatStream:
        """Stream a reply as text deltas; ``stream.result`` holds the :class:`LLMResult` after.

        A failure before the first delta is retried like :meth:`chat`; once text has been
        shown it cannot be taken back, so a failure mid-stream raises.
        """
        params = GenerationParams(
            max_tokens=max_tokens, temperature=temperature, top_p=top_p, seed=seed, stop=tuple(stop)
        )
        return ChatStream(self, list(messages), params, use_cache, tag)

    @property
    def feature_kind(self) -> str | None:
        """The kind of answer features the backend computes; ``None`` when it cannot."""
        backend = self.backend
        return backend.feature_kind if isinstance(backend, FeatureBackend) else None

    def feature_dim(self) -> int | None:
        """How many values the backend's feature vectors have, known before any feature call.

        ``None`` when the backend cannot say, or computes no features. A classifier over
        features checks it when it is loaded, so a gate trained on another hidden size fails
        at start-up rather than on the first sample. A local model is loaded to read its
        hidden size (the run would load it anyway).
        """
        size = getattr(self.backend, "feature_dim", None)
        if not callable(size) or self.feature_kind is None:
            return None
        value = size()
        return None if value is None else int(value)

    async def features(
        self, messages: Sequence[Message], answer: str, *, tag: str | None = None,
        use_cache: bool = True,
    ) -> FeatureVector:
        """Certainty features of ``answer`` as the reply to ``messages`` (see ``_features``).

        Cached like :meth:`chat` (``use_cache``), by backend, model, messages and answer:
        RiLM reads the same (question, document) prompt in the gate's training, in
        ``ralm-best`` and in every re-retrieval mode, and each local reading is a whole prompt
        evaluation. Transient failures are retried like :meth:`chat`.

        Raises:
            LLMRequestError: the backend cannot compute features (e.g. ``scripted`` without
                them, or a server that returns no logprobs).
            LLMUnavailableError: transient failures outlasted the retries or the timeout.
        """
        backend = self.backend
        if not isinstance(backend, FeatureBackend):
            raise LLMRequestError(
                "this backend cannot compute answer features",
                backend=backend.name,
                model=backend.model_id,
                hint="use a local: model (hidden states) or an OpenAI-compatible server that "
                "returns logprobs (openai:...).",
            )
        started = time.perf_counter()
        attempts = 0
        label = f"{tag}:features" if tag else "features"
        key = features_key(backend.name, backend.model_id, messages, answer)
        if use_cache and self.cache is not None:
            cached = self.cache.get_features(key)
            if cached is not None:
                self._log(Usage(), time.perf_counter() - started, True, 0, None, label)
                return cached

        async def attempt() -> FeatureVector:
            nonlocal attempts
            attempts += 1
            async with self._semaphore:
                return await backend.answer_features(list(messages), answer)

        try:
            vector = await self._with_retries(attempt)
        except LLMError as exc:
            self._log(Usage(), time.perf_counter() - started, False, attempts,
                      type(exc).__name__, label)
            raise
        self._log(Usage(), time.perf_counter() - started, False, attempts, None, label)
        if use_cache and self.cache is not None:
            self.cache.put_features(key, backend.name, vector)
        return vector

    async def aclose(self) -> None:
        """Release the backend's resources."""
        await self.backend.aclose()

    # -- internals -----------------------------------------------------------------------

    async def _complete(
        self,
        messages: list[Message],
        params: GenerationParams,
        use_cache: bool,
        tag: str | None,
    ) -> tuple[Completion, bool, int]:
        """Cache lookup, then a retried backend call. Returns (completion, hit, attempts)."""
        key, request = request_key(self.backend.name, self.backend.model_id, messages, params)
        started = time.perf_counter()
        if use_cache and self.cache is not None:
            cached = self.cache.get(key)
            if cached is not None:
                self._log(cached.usage, time.perf_counter() - started, True, 0, None, tag)
                return cached, True, 0
        attempts = 0

        async def attempt() -> Completion:
            nonlocal attempts
            attempts += 1
            async with self._semaphore:
                return await self.backend.complete(messages, params)

        try:
            completion = await self._with_retries(attempt)
        except LLMError as exc:
            elapsed = time.perf_counter() - started
            self._log(Usage(), elapsed, False, attempts, type(exc).__name__, tag)
            raise
        self._log(completion.usage, time.perf_counter() - started, False, attempts, None, tag)
        if use_cache and self.cache is not None:
            self.cache.put(key, self.backend.name, request, completion)
        return completion, False, attempts

    async def _with_retries(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run ``attempt`` until it succeeds, a non-transient error, or retries/time run out."""
        policy = self.retry
        bounded = self.backend.retries_bounded_by_timeout
        deadline = time.monotonic() + policy.timeout_s if bounded else None
        tries = 0
        # A deadline that cuts the last attempt short would otherwise hide the error the
        # earlier attempts saw (e.g. "connection refused"), which is the one users can act on.
        backend_error: str | None = None
        while True:
            tries += 1
            try:
                if deadline is None:
                    return await attempt()
                remaining = deadline - time.monotonic()
                return await asyncio.wait_for(attempt(), timeout=max(remaining, 0.001))
            except TransientBackendError as exc:
                cause, retry_after = exc.cause, exc.retry_after
                backend_error = exc.cause
            except TimeoutError:
                cause, retry_after = f"no answer within the {policy.timeout_s:g} s timeout", None
                if backend_error is not None:
                    cause = f"{backend_error} (then {cause})"
            if tries > policy.max_retries:
                raise self._unavailable(cause, tries, "retries exhausted")
            sleep = policy.delay(tries, retry_after, self._rng)
            if deadline is not None and time.monotonic() + sleep >= deadline:
                raise self._unavailable(cause, tries, f"{policy.timeout_s:g} s timeout reached")
            await asyncio.sleep(sleep)

    def _unavailable(self, cause: str, attempts: int, why: str) -> LLMUnavailableError:
        return LLMUnavailableError(
            f"gave up after {attempts} attempt(s) ({why}); last error: {cause}",
            backend=self.backend.name,
            model=self.backend.model_id,
            attempts=attempts,
            cause=cause,
        )

    async def _parse_or_repair(
        self,
        messages: list[Message],
        params: GenerationParams,
        completion: Completion,
        use_cache: bool,
        tag: str | None,
    ) -> _JSONOutcome:
        """Parse JSON output; on failure make exactly one repair call, then give up typed."""
        schema = params.json_schema
        if completion.refusal is not None:
            raise LLMRefusalError(
                f"model refused instead of returning JSON: {completion.refusal}",
                backend=self.backend.name,
                model=self.backend.model_id,
            )
        try:
            return _JSONOutcome(parse_json_output(completion.text, schema), None)
        except JSONOutputInvalid as first_error:
            repair_messages = [
                *messages,
                Message.assistant(completion.text),
                Message.user(
                    render_prompt(
                        "llm/prompts/json_repair.j2",
                        error=str(first_error),
                        schema=json.dumps(schema, ensure_ascii=False),
                    )
                ),
            ]
            repaired, repair_hit, attempts = await self._complete(
                repair_messages, params, use_cache, f"{tag}:json-repair" if tag else "json-repair"
            )
            try:
                parsed = parse_json_output(repaired.text, schema)
            except JSONOutputInvalid as second_error:
                truncated = "length" in (completion.finish_reason, repaired.finish_reason)
                raise LLMOutputError(
                    f"reply is not usable JSON after one repair attempt: {second_error}",
                    backend=self.backend.name,
                    model=self.backend.model_id,
                    raw_text=repaired.text,
                    hint=(
                        f"the reply was cut at max_tokens={params.max_tokens}; raise it."
                        if truncated
                        else "simplify the schema or use a stronger model."
                    ),
                ) from second_error
            return _JSONOutcome(parsed, _Repair(repaired, attempts, repair_hit))

    def _log(
        self,
        usage: Usage,
        latency: float,
        hit: bool,
        attempts: int,
        error: str | None,
        tag: str | None,
    ) -> None:
        if self.call_log is None:
            return
        self.call_log.record(
            CallRecord(
                backend=self.backend.name,
                model=self.backend.model_id,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                cached_prompt_tokens=usage.cached_prompt_tokens,
                latency_s=latency,
                cache_hit=hit,
                attempts=attempts,
                error=error,
                tag=tag,
            )
        )


@dataclass(frozen=True)
class _Repair:
    """The one repair round-trip a JSON call may need."""

    completion: Completion
    attempts: int
    cache_hit: bool


@dataclass(frozen=True)
class _JSONOutcome:
    parsed: Any
    repair: _Repair | None


class ChatStream:
    """An async iterator of text deltas; :attr:`result` is set once it is exhausted."""

    def __init__(
        self,
        llm: LLM,
        messages: list[Message],
        params: GenerationParams,
        use_cache: bool,
        tag: str | None,
    ) -> None:
        self._llm = llm
        self._messages = messages
        self._params = params
        self._use_cache = use_cache
        self._tag = tag
        self._iterator: AsyncIterator[str] | None = None
        self.result: LLMResult | None = None

    def __aiter__(self) -> ChatStream:
        return self

    async def __anext__(self) -> str:
        if self._iterator is None:
            self._iterator = self._run()
        return await self._iterator.__anext__()

    async def _run(self) -> AsyncIterator[str]:
        llm = self._llm
        backend = llm.backend
        key, request = request_key(backend.name, backend.model_id, self._messages, self._params)
        started = time.perf_counter()
        if self._use_cache and llm.cache is not None:
            cached = llm.cache.get(key)
            if cached is not None:
                llm._log(cached.usage, time.perf_counter() - started, True, 0, None, self._tag)
                self.result = _result_from(llm, cached, started, hit=True, attempts=0)
                if cached.text:
                    yield cached.text
                return

        attempts = 0
        final: Completion | None = None
        policy = llm.retry
        deadline = started + policy.timeout_s if backend.retries_bounded_by_timeout else None
        while final is None:
            attempts += 1
            produced = False
            try:
                # The slot is held while generating, not while backing off between attempts.
                async with llm._semaphore:
                    async for item in backend.stream(self._messages, self._params):
                        if isinstance(item, Completion):
                            final = item
                        elif item:
                            produced = True
                            yield item
            except TransientBackendError as exc:
                why = None
                sleep = policy.delay(attempts, exc.retry_after, llm._rng)
                if produced:
                    why = "stream interrupted"
                elif attempts > policy.max_retries:
                    why = "retries exhausted"
                elif deadline is not None and time.perf_counter() + sleep >= deadline:
                    why = f"{policy.timeout_s:g} s timeout reached"
                if why is not None:
                    err = llm._unavailable(exc.cause, attempts, why)
                    llm._log(Usage(), time.perf_counter() - started, False, attempts,
                             type(err).__name__, self._tag)
                    raise err from exc
                await asyncio.sleep(sleep)
            except LLMError as exc:
                llm._log(Usage(), time.perf_counter() - started, False, attempts,
                         type(exc).__name__, self._tag)
                raise
        if final is None:  # pragma: no cover - a backend broke its contract
            raise LLMError("stream ended without a final completion",
                           backend=backend.name, model=backend.model_id)
        llm._log(final.usage, time.perf_counter() - started, False, attempts, None, self._tag)
        if self._use_cache and llm.cache is not None:
            llm.cache.put(key, backend.name, request, final)
        self.result = _result_from(llm, final, started, hit=False, attempts=attempts)


def _result_from(
    llm: LLM, completion: Completion, started: float, *, hit: bool, attempts: int
) -> LLMResult:
    return LLMResult(
        text=completion.text,
        usage=completion.usage,
        latency_s=time.perf_counter() - started,
        cache_hit=hit,
        refused=_is_refusal(completion),
        finish_reason=completion.finish_reason,
        backend=llm.backend.name,
        model=completion.model or llm.backend.model_id,
        attempts=attempts,
    )


def _is_refusal(completion: Completion) -> bool:
    return (
        completion.refusal is not None
        or completion.finish_reason == "content_filter"
        or looks_like_refusal(completion.text)
    )


def _add_usage(a: Usage, b: Usage) -> Usage:
    return Usage(
        prompt_tokens=a.prompt_tokens + b.prompt_tokens,
        completion_tokens=a.completion_tokens + b.completion_tokens,
        cached_prompt_tokens=a.cached_prompt_tokens + b.cached_prompt_tokens,
    )
