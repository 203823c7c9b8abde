"""In-process GGUF models through llama-cpp-python.

One loaded model per (file, context size, threads) per process, shared by every client,
because a 1.5B model costs 2 GB of RAM. llama.cpp contexts are not thread-safe, so calls to
one model are serialised by a lock and run in a worker thread to keep the event loop free.

Prompt prefixes are reused two ways: llama-cpp-python keeps the KV cache of the previous call
and evaluates only the part of the new prompt that differs, and a RAM prompt cache keeps the
states of earlier calls so interleaved prompts (few-shot templates shared across a benchmark)
also skip their shared prefix.

Answer features (:meth:`LocalBackend.answer_features`) are the final hidden state at the last
token of prompt + answer. They come from a second llama.cpp context over the same GGUF file,
created with ``embedding=True`` and last-token pooling the first time features are asked for:
an embedding context marks every token as an output and has no sampler state to share, so
switching the generation context back and forth would throw away its KV and prompt caches.
The weights are memory-mapped, so the second context costs its KV cache, not another copy of
the model.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from freshwiki.llm import models
from freshwiki.llm._errors import LLMRequestError, ModelError
from freshwiki.llm._features import FeatureVector
from freshwiki.llm._types import Completion, GenerationParams, Message, Usage

_LOADED: dict[tuple[str, int, int, int], tuple[Any, threading.Lock]] = {}
_LOADED_LOCK = threading.Lock()
_FEATURE_LOADED: dict[tuple[str, int, int], tuple[Any, threading.Lock]] = {}


@atexit.register
def _close_loaded_models() -> None:
    """Free every loaded model before the interpreter tears its modules down.

    Models stay loaded for the whole process (clients share them). Left to garbage
    collection at exit, ``Llama.__del__`` runs after llama_cpp's own globals are gone and
    prints a traceback; closing them here, while everything still exists, exits cleanly.
    """
    for cache in (_FEATURE_LOADED, _LOADED):
        for llama, lock in list(cache.values()):
            # A generation still running in a worker thread (Ctrl-C) must not hang the exit.
            if lock.acquire(timeout=2.0):
                try:
                    llama.close()
                finally:
                    lock.release()
        cache.clear()
PROMPT_CACHE_BYTES = 1 << 30


def resolve_model_path(name_or_path: str, models_dir: Path,
                       sha_cache: Path | None = None) -> tuple[Path, str]:
    """Map a ``local:`` spec to (verified file, model identity for cache keys and run ids).

    A named model is ``NAME@SHA12`` (its card's sha256). A file given by path is identified
    by its own sha256 (:func:`~freshwiki.llm.models.gguf_sha256`, cached in ``sha_cache`` by
    path, size and mtime): ``gguf@SHA12``, or the named model's identity when the file *is* a
    named model's weights. Not by its name, size or mtime: a moved, copied or renamed file is
    the same model, and a file changed in place is not.
    """
    if name_or_path in models.MODELS:
        card = models.get_card(name_or_path)
        return models.ensure_model(name_or_path, models_dir), f"{card.name}@{card.sha256[:12]}"
    if name_or_path.endswith(".gguf") or os.sep in name_or_path:
        path = models.check_gguf(Path(name_or_path).expanduser())
        digest = models.gguf_sha256(path, sha_cache)
        for card in models.MODELS.values():
            if card.sha256 == digest:
                return path, f"{card.name}@{digest[:12]}"
        return path, f"gguf@{digest[:12]}"
    models.get_card(name_or_path)  # raises the "unknown model" error with the list
    raise AssertionError("unreachable")


def load_llama(path: Path, n_ctx: int, n_threads: int, lookup_tokens: int = 0
               ) -> tuple[Any, threading.Lock]:
    """Load (or reuse) a llama.cpp model. Raises :class:`ModelError` when llama.cpp can't.

    ``lookup_tokens`` > 0 turns on llama.cpp's prompt-lookup decoding: up to that many next
    tokens are guessed by matching the last few generated tokens against the prompt, and
    checked in one batch; at temperature 0 the output is the same token for token. The grounded
    chat's replies and cloze answers copy spans of their evidence, which is where it can pay.
    """
    key = (str(path), n_ctx, n_threads, lookup_tokens)
    with _LOADED_LOCK:
        if key in _LOADED:
            return _LOADED[key]
        try:
            import llama_cpp
        except ImportError as exc:  # pragma: no cover - install problem
            raise ModelError(
                "llama-cpp-python is not installed",
                backend="local",
                model=path.name,
                hint="run the README's set-up command; it builds llama-cpp-python.",
            ) from exc
        draft = None
        if lookup_tokens > 0:
            from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

            draft = LlamaPromptLookupDecoding(num_pred_tokens=lookup_tokens)
        try:
            llama = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=n_threads or os.cpu_count() or 1,
                n_batch=512,
                draft_model=draft,
                # With a draft model llama-cpp-python 0.3.36 keeps every position's logits
                # but sizes their buffer from this flag: left False, the buffer has n_batch
                # rows and a prompt longer than 512 tokens fails ("could not broadcast").
                logits_all=draft is not None,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise ModelError(
                f"llama.cpp could not load {path}: {exc}",
                backend="local",
                model=path.name,
                hint="the file may be truncated or not a supported GGUF; re-install it "
                "(`freshwiki models install NAME --force`).",
            ) from exc
        if draft is None:
            # Lookup decoding keeps every position's logits, which the compact state cache
            # (one row of logits per state) cannot restore; the KV prefix of the previous
            # call is still reused without it.
            llama.set_cache(_compact_prompt_cache(llama_cpp, PROMPT_CACHE_BYTES))
        _count_evaluations(llama)
        entry = (llama, threading.Lock())
        _LOADED[key] = entry
        return entry


def load_feature_llama(path: Path, n_ctx: int, n_threads: int) -> tuple[Any, threading.Lock]:
    """Load (or reuse) the hidden-state context of a model: embeddings, last-token pooling.

    ``n_batch`` and ``n_ubatch`` equal ``n_ctx`` so a whole prompt + answer is decoded as one
    sequence in one batch (``llama_decode`` refuses a batch larger than ``n_batch``).
    """
    key = (str(path), n_ctx, n_threads)
    with _LOADED_LOCK:
        if key in _FEATURE_LOADED:
            return _FEATURE_LOADED[key]
        import llama_cpp

        try:
            llama = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_batch=n_ctx,
                n_ubatch=n_ctx,
                n_threads=n_threads or os.cpu_count() or 1,
                embedding=True,
                pooling_type=llama_cpp.LLAMA_POOLING_TYPE_LAST,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise ModelError(
                f"llama.cpp could not load {path} for hidden-state features: {exc}",
                backend="local",
                model=path.name,
                hint="the file may be truncated or not a supported GGUF; re-install it "
                "(`freshwiki models install NAME --force`).",
            ) from exc
        entry = (llama, threading.Lock())
        _FEATURE_LOADED[key] = entry
        return entry


class _PromptCaptured(Exception):
    """Raised by :class:`_CapturePrompt` to stop a chat handler once it has the prompt."""

    def __init__(self, prompt: Any) -> None:
        super().__init__("prompt captured")
        self.prompt = prompt


class _CapturePrompt:
    """Stands in for a ``Llama`` in its own chat handler, to get the prompt tokens it builds.

    ``create_chat_completion`` formats messages with the model's chat handler (the GGUF's
    Jinja template, or a named format), tokenizes the result (special tokens parsed, BOS as the
    template dictates) and passes the token list to ``create_completion``. Running the same
    handler with this proxy and stopping at ``create_completion`` gives exactly the tokens
    generation evaluates, without re-implementing any template logic.
    """

    def __init__(self, llama: Any) -> None:
        self._llama = llama

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llama, name)

    def create_completion(self, *, prompt: Any, **_: Any) -> Any:
        raise _PromptCaptured(prompt)


def chat_prompt_tokens(llama: Any, messages: Sequence[Message]) -> list[int]:
    """The tokens ``llama.create_chat_completion(messages)`` evaluates before generating."""
    import llama_cpp.llama_chat_format as chat_format

    handler: Any = (
        llama.chat_handler
        or llama._chat_handlers.get(llama.chat_format)
        or chat_format.get_chat_completion_handler(llama.chat_format)
    )
    try:
        handler(llama=_CapturePrompt(llama), messages=[m.to_dict() for m in messages])
    except _PromptCaptured as captured:
        prompt = captured.prompt
    else:  # pragma: no cover - a handler that never calls create_completion
        raise AssertionError("chat handler returned without building a prompt")
    if isinstance(prompt, str):  # handlers may pass text; tokenize it as create_completion does
        return list(llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True))
    return [int(t) for t in prompt]


def last_hidden_state(llama: Any, tokens: Sequence[int]) -> list[float]:
    """Decode ``tokens`` as one sequence and return the pooled (last-token) hidden state.

    Uses the C API rather than ``Llama.embed``: ``embed`` takes text, tokenizes it without
    parsing special tokens (so a chat template's ``<|im_start|>`` would become ordinary text)
    and silently truncates to ``n_batch`` tokens, which would move the "last" token.
    """
    import llama_cpp

    n = len(tokens)
    ctx = llama.ctx
    llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(ctx), True)
    batch = llama_cpp.llama_batch_init(n, 0, 1)
    try:
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            # Embedding mode outputs every token anyway; saying so avoids a warning per call.
            batch.logits[i] = True
        batch.n_tokens = n
        code = llama_cpp.llama_decode(ctx, batch)
        if code != 0:
            raise RuntimeError(f"llama_decode returned {code}")
        pointer = llama_cpp.llama_get_embeddings_seq(ctx, 0)
        if not pointer:
            raise RuntimeError("llama.cpp returned no pooled embedding")
        return [float(x) for x in pointer[: llama.n_embd()]]
    finally:
        llama_cpp.llama_batch_free(batch)
        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(ctx), True)


def _count_evaluations(llama: Any) -> None:
    """Record the size of every ``eval`` batch, to tell how much of a prompt was reused.

    In one generation the first ``eval`` holds the prompt tokens not found in the KV cache;
    the rest are sampled tokens. So ``prompt_tokens - first_batch`` is the reused prefix,
    which makes prefix caching visible in usage and the call log rather than only in timings.
    """
    original = llama.eval
    llama.freshwiki_eval_batches = []

    def counting_eval(tokens: Any) -> Any:
        llama.freshwiki_eval_batches.append(len(tokens))
        return original(tokens)

    llama.eval = counting_eval


def _reused_prefix(llama: Any, prompt_tokens: int) -> int:
    batches: list[int] = llama.freshwiki_eval_batches
    evaluated = batches[0] if batches else 0
    return max(prompt_tokens - evaluated, 0)


def _compact_prompt_cache(llama_cpp: Any, capacity_bytes: int) -> Any:
    """A RAM prompt cache that does not hoard logits.

    ``Llama.save_state`` copies the whole n_batch x n_vocab logits buffer into every saved
    state (311 MB for Qwen2.5), and ``LlamaRAMCache`` does not count it against its capacity:
    memory grew ~100-300 MB per call. With ``logits_all=False`` those logits are never read
    back (``load_state`` marks the context for re-evaluation), so one row is kept; numpy
    broadcasts it on load.
    """

    class CompactRAMCache(llama_cpp.llama_cache.LlamaRAMCache):  # type: ignore[misc]
        def __setitem__(self, key: Any, value: Any) -> None:
            value.scores = value.scores[-1:].copy()
            super().__setitem__(key, value)

    return CompactRAMCache(capacity_bytes=capacity_bytes)


class LocalBackend:
    """A GGUF model run in this process."""

    name = "local"
    retries_bounded_by_timeout = False
    default_concurrency = 1
    feature_kind = "hidden-state"

    def __init__(
        self, name_or_path: str, *, models_dir: Path, n_ctx: int = 4096, n_threads: int = 0,
        lookup_tokens: int = 0, sha_cache: Path | None = None,
    ) -> None:
        self.path, self.model_id = resolve_model_path(name_or_path, models_dir, sha_cache)
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.lookup_tokens = lookup_tokens

    def _kwargs(self, messages: Sequence[Message], params: GenerationParams) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "messages": [m.to_dict() for m in messages],
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "seed": params.seed,
        }
        if params.stop:
            kwargs["stop"] = list(params.stop)
        if params.json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": params.json_schema}
        return kwargs

    def _generate(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        llama, lock = load_llama(self.path, self.n_ctx, self.n_threads, self.lookup_tokens)
        with lock:
            llama.freshwiki_eval_batches = []
            try:
                response = llama.create_chat_completion(**self._kwargs(messages, params))
            except ValueError as exc:  # e.g. prompt longer than the context window
                raise LLMRequestError(
                    str(exc),
                    backend=self.name,
                    model=self.model_id,
                    hint=f"shorten the prompt or raise FRESHWIKI_N_CTX (now {self.n_ctx}).",
                ) from exc
            usage = response.get("usage") or {}
            reused = _reused_prefix(llama, int(usage.get("prompt_tokens", 0)))
        choice = response["choices"][0]
        return Completion(
            text=choice["message"].get("content") or "",
            finish_reason=choice.get("finish_reason") or "stop",
            usage=Usage(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
                cached_prompt_tokens=reused,
            ),
            model=self.model_id,
        )

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        """Generate in a worker thread."""
        return await asyncio.to_thread(self._generate, messages, params)

    async def stream(
        self, messages: Sequence[Message], params: GenerationParams
    ) -> AsyncIterator[str | Completion]:
        """Bridge llama.cpp's token generator (in a thread) to async deltas."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        cancelled = threading.Event()

        def produce() -> None:
            try:
                llama, lock = load_llama(self.path, self.n_ctx, self.n_threads, self.lookup_tokens)
                parts: list[str] = []
                finish = "stop"
                with lock:
                    llama.freshwiki_eval_batches = []
                    chunks = llama.create_chat_completion(
                        **self._kwargs(messages, params), stream=True
                    )
                    for chunk in chunks:
                        if cancelled.is_set():
                            finish = "cancelled"
                            break
                        choice = chunk["choices"][0]
                        delta = choice.get("delta", {}).get("content")
                        if delta:
                            parts.append(delta)
                            loop.call_soon_threadsafe(queue.put_nowait, ("delta", delta))
                        if choice.get("finish_reason"):
                            finish = choice["finish_reason"]
                    n_generated = len(parts)
                    n_prompt = max(int(llama.n_tokens) - n_generated, 0)
                    reused = _reused_prefix(llama, n_prompt)
                usage = Usage(
                    prompt_tokens=n_prompt,
                    completion_tokens=n_generated,
                    cached_prompt_tokens=reused,
                )
                final = Completion("".join(parts), finish, usage, model=self.model_id)
                loop.call_soon_threadsafe(queue.put_nowait, ("done", final))
            except Exception as exc:  # forwarded to the consumer, re-raised there
                loop.call_soon_threadsafe(queue.put_nowait, ("error", exc))

        worker = threading.Thread(target=produce, name="freshwiki-llama-stream", daemon=True)
        worker.start()
        try:
            while True:
                kind, value = await queue.get()
                if kind == "delta":
                    yield value
                elif kind == "done":
                    yield value
                    return
                else:
                    if isinstance(value, ValueError):
                        raise LLMRequestError(
                            str(value), backend=self.name, model=self.model_id
                        ) from value
                    raise value
        finally:
            cancelled.set()

    def feature_dim(self) -> int:
        """The hidden size: loads the feature context (once per process, as a call would)."""
        llama, _ = load_feature_llama(self.path, self.n_ctx, self.n_threads)
        return int(llama.n_embd())

    async def answer_features(self, messages: Sequence[Message], answer: str) -> FeatureVector:
        """The last-token hidden state of prompt + answer, computed in a worker thread."""
        return await asyncio.to_thread(self._hidden_state, messages, answer)

    def _hidden_state(self, messages: Sequence[Message], answer: str) -> FeatureVector:
        llama, lock = load_feature_llama(self.path, self.n_ctx, self.n_threads)
        with lock:
            prompt = chat_prompt_tokens(llama, messages)
            # The reply as the model produced it: plain text after the generation prompt,
            # no end-of-turn token (the state that decides whether to stop is the one kept).
            reply = (
                list(llama.tokenize(answer.encode("utf-8"), add_bos=False, special=False))
                if answer else []
            )
            tokens = prompt + reply
            if len(tokens) > self.n_ctx:
                raise LLMRequestError(
                    f"prompt + answer is {len(tokens)} tokens, more than the context window "
                    f"({self.n_ctx})",
                    backend=self.name,
                    model=self.model_id,
                    hint=f"shorten the prompt or raise FRESHWIKI_N_CTX (now {self.n_ctx}).",
                )
            try:
                values = last_hidden_state(llama, tokens)
            except RuntimeError as exc:
                raise LLMRequestError(
                    f"llama.cpp could not compute the hidden state: {exc}",
                    backend=self.name,
                    model=self.model_id,
                ) from exc
        return FeatureVector(
            tuple(values),
            kind=self.feature_kind,
            model=self.model_id,
            detail={"prompt_tokens": len(prompt), "answer_tokens": len(reply)},
        )

    async def aclose(self) -> None:
        """Models stay loaded for the process; other clients may share them."""
