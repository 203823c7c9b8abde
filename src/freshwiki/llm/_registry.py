"""Model spec strings → backends, and the factory every layer uses: :func:`open_llm`.

Spec forms::

    local:qwen2.5-coder-1.5b          a named model (see `freshwiki models list`)
    local:/path/to/model.gguf         any GGUF file
    openai:gpt-4o-mini                OpenAI, or FRESHWIKI_OPENAI_BASE_URL when set
    openai:MODEL@http://host:8000/v1  any OpenAI-compatible server
    openai:MODEL#REVISION@URL         the same, with a revision for the run identity
    openai-compatible:MODEL@URL       the same, spelled out
    scripted:responses.jsonl          replay recorded responses (tests only)

A served model's run identity is what its server reports at ``/v1/models`` (see
:mod:`freshwiki.llm.backends.openai_compat`), never its URL; ``#REVISION`` (after the model
name, or at the end of the spec) adds a label of the user's for servers that report nothing
that changes with the weights. It is not sent to the server.

New backend kinds register a factory with :func:`register_backend`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from freshwiki.config import Settings, load_settings
from freshwiki.errors import ConfigError
from freshwiki.llm import models
from freshwiki.llm._backend import Backend
from freshwiki.llm._cache import ResponseCache
from freshwiki.llm._calllog import CallLog
from freshwiki.llm._client import LLM, RetryPolicy

BackendFactory = Callable[[str, Settings], Backend]
_FACTORIES: dict[str, BackendFactory] = {}


def register_backend(prefix: str, factory: BackendFactory) -> None:
    """Make ``prefix:...`` specs build backends with ``factory(rest_of_spec, settings)``."""
    _FACTORIES[prefix] = factory


def backend_kinds() -> list[str]:
    """Registered spec prefixes."""
    return sorted(_FACTORIES)


def _local(rest: str, settings: Settings) -> Backend:
    from freshwiki.llm.backends.local import LocalBackend

    return LocalBackend(
        rest, models_dir=settings.models_dir, n_ctx=settings.n_ctx, n_threads=settings.n_threads,
        lookup_tokens=settings.lookup_tokens,
        sha_cache=settings.home / "cache" / models.SHA_CACHE_FILE,
    )


def _split_url(rest: str) -> tuple[str, str | None]:
    for marker in ("@http://", "@https://"):
        if marker in rest:
            model, url = rest.split(marker, 1)
            return model, marker[1:] + url
    return rest, None


def split_revision(rest: str) -> tuple[str, str | None, str | None]:
    """``MODEL[#REVISION][@URL][#REVISION]`` → (model, url, revision)."""
    model, url = _split_url(rest)
    revision: str | None = None
    if "#" in model:
        model, revision = model.split("#", 1)
    elif url is not None and "#" in url:  # a URL's fragment is never sent anyway
        url, revision = url.split("#", 1)
    return model, url, (revision.strip() or None) if revision is not None else None


def _openai(rest: str, settings: Settings) -> Backend:
    from freshwiki.llm.backends.openai_compat import OpenAICompatibleBackend

    model, url, revision = split_revision(rest)
    return OpenAICompatibleBackend(
        model,
        base_url=url or settings.openai_base_url,
        api_key=settings.openai_api_key,
        timeout_s=settings.timeout,
        concurrency=settings.http_concurrency,
        revision=revision,
    )


def _openai_compatible(rest: str, settings: Settings) -> Backend:
    _, url = _split_url(rest)
    if not (url or settings.openai_base_url):
        raise ConfigError(
            f"openai-compatible:{rest} has no server URL",
            hint="write openai-compatible:MODEL@http://HOST:PORT/v1 or set "
            "FRESHWIKI_OPENAI_BASE_URL.",
        )
    return _openai(rest, settings)


def _scripted(rest: str, settings: Settings) -> Backend:
    from freshwiki.llm.backends.scripted import ScriptedBackend

    return ScriptedBackend.from_file(Path(rest))


register_backend("local", _local)
register_backend("openai", _openai)
register_backend("openai-compatible", _openai_compatible)
register_backend("scripted", _scripted)


def build_backend(spec: str, settings: Settings) -> Backend:
    """The backend a spec names."""
    prefix, sep, rest = spec.partition(":")
    if not sep or prefix not in _FACTORIES or not rest:
        raise ConfigError(
            f"model spec {spec!r} is not of the form KIND:MODEL",
            hint=f"KIND is one of {', '.join(backend_kinds())}; e.g. local:qwen2.5-coder-1.5b "
            "or openai:MODEL@http://127.0.0.1:8000/v1.",
        )
    return _FACTORIES[prefix](rest, settings)


def open_llm(
    spec: str | None = None,
    *,
    settings: Settings | None = None,
    backend: Backend | None = None,
    cache: bool | None = None,
) -> LLM:
    """Build the LLM client for a spec (default: ``settings.model``) with cache and call log.

    Args:
        spec: A model spec string; ``None`` uses the configured default model.
        settings: Resolved settings; ``None`` loads them from file and environment.
        backend: An already-built backend (e.g. a :class:`ScriptedBackend` in tests); wins
            over ``spec``.
        cache: Override ``settings.cache`` for this client.
    """
    settings = settings or load_settings().settings
    chosen = backend or build_backend(spec or settings.model, settings)
    use_cache = settings.cache if cache is None else cache
    concurrency = (
        settings.local_concurrency
        if chosen.name == "local"
        else settings.http_concurrency
        if chosen.name == "openai"
        else None
    )
    return LLM(
        chosen,
        cache=ResponseCache(settings.response_cache_path) if use_cache else None,
        call_log=CallLog(settings.call_log_path),
        retry=RetryPolicy(max_retries=settings.max_retries, timeout_s=settings.timeout),
        concurrency=concurrency,
    )
