"""Settings: defaults that work with no configuration, overridden in layers.

Precedence, lowest to highest: built-in defaults, ``freshwiki.toml``, ``FRESHWIKI_*``
environment variables, then explicit overrides (CLI flags or keyword arguments). Every value
remembers where it came from so ``freshwiki config show`` can explain itself.

``home`` holds every store, index, cache and run, so pointing ``FRESHWIKI_HOME`` at an empty
folder gives a clean slate. Model weights live apart in ``models_dir`` so a clean slate does
not re-assemble a gigabyte of weights.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from freshwiki.errors import ConfigError

DEFAULT_MODEL = "local:qwen2.5-coder-1.5b"
CONFIG_FILE_NAME = "freshwiki.toml"
ENV_PREFIX = "FRESHWIKI_"


def _default_home() -> Path:
    return Path(platformdirs.user_data_dir("freshwiki"))


def _default_models_dir() -> Path:
    return Path(platformdirs.user_cache_dir("freshwiki")) / "models"


def _default_data_dir() -> Path:
    """The shared real-data folder: ``../shared/data`` beside the working folder or the clone.

    Checked in that order so a user running from their own project folder can keep data beside
    it, while a developer's editable install finds the data beside the repository.
    """
    candidates = [Path.cwd().parent / "shared" / "data",
                  Path(__file__).resolve().parents[3] / "shared" / "data"]
    return next((c for c in candidates if c.is_dir()), candidates[-1])


@dataclass(frozen=True)
class Settings:
    """Every tunable of freshwiki, resolved. Build one with :func:`load_settings`."""

    home: Path = field(
        default_factory=_default_home,
        metadata={"help": "Folder holding every store, index, cache and run."},
    )
    models_dir: Path = field(
        default_factory=_default_models_dir,
        metadata={"help": "Folder holding assembled model weights (kept apart from home)."},
    )
    model: str = field(
        default=DEFAULT_MODEL,
        metadata={"help": "Default model spec: local:NAME|PATH.gguf, openai:MODEL, scripted:FILE."},
    )
    openai_base_url: str | None = field(
        default=None,
        metadata={"help": "Base URL of an OpenAI-compatible server (…/v1) for openai: specs."},
    )
    openai_api_key: str | None = field(
        default=None,
        metadata={"help": "API key for openai: specs (falls back to OPENAI_API_KEY).",
                  "secret": True},
    )
    timeout: float = field(
        default=120.0,
        metadata={"help": "Seconds an HTTP call may take in all, retries included."},
    )
    max_retries: int = field(
        default=4,
        metadata={"help": "Retries after a timeout, HTTP 429/5xx or dropped connection."},
    )
    http_concurrency: int = field(
        default=8,
        metadata={"help": "Requests in flight at once per HTTP backend."},
    )
    local_concurrency: int = field(
        default=1,
        metadata={"help": "Generations at once per in-process model (llama.cpp is serial)."},
    )
    n_ctx: int = field(
        default=4096,
        metadata={"help": "Context window, in tokens, of local models."},
    )
    n_threads: int = field(
        default=0,
        metadata={"help": "CPU threads for local models (0: one per core)."},
    )
    lookup_tokens: int = field(
        default=0,
        metadata={"help": "Prompt-lookup decoding for local models: tokens guessed ahead from "
                          "n-grams of the prompt and checked in one batch (0: off). Greedy "
                          "output is unchanged; it only pays when replies copy the prompt."},
    )
    cache: bool = field(
        default=True,
        metadata={"help": "Reuse stored LLM responses for identical requests."},
    )
    api_key: str | None = field(
        default=None,
        metadata={"help": "Bearer token `freshwiki serve` requires of every request (needed "
                  "to listen on a non-loopback address).", "secret": True},
    )
    allowed_hosts: str = field(
        default="",
        metadata={"help": "Extra host names `freshwiki serve` answers to, comma-separated "
                  "(localhost, 127.0.0.1, ::1 and the listening address always)."},
    )
    allowed_origins: str = field(
        default="",
        metadata={"help": "Extra web origins (scheme://host:port) allowed to call the "
                  "server, comma-separated."},
    )
    max_body_bytes: int = field(
        default=1_000_000,
        metadata={"help": "Largest request body `freshwiki serve` accepts."},
    )
    chat_queue: int = field(
        default=4,
        metadata={"help": "Chat turns the server takes at once (answering or waiting); "
                  "more get 503 with Retry-After."},
    )
    searxng_url: str | None = field(
        default=None,
        metadata={"help": "SearXNG instance (http://HOST:PORT, JSON output enabled) the "
                  "search agent's web backend searches (--option backend=searxng)."},
    )
    embedder_runtime: str = field(
        default="torch",
        metadata={"help": "How new indexes embed passages: torch, onnx (the same float model "
                  "under ONNX Runtime) or onnx-int8 (its weights in int8: faster, vectors "
                  "slightly off). An index keeps the runtime it was built with."},
    )
    data_dir: Path = field(
        default_factory=_default_data_dir,
        metadata={"help": "Folder of real public data (topics, WikiContradict, dumps); "
                  "the default corpus is built from its wikipedia/topics."},
    )

    @property
    def response_cache_path(self) -> Path:
        """SQLite file of stored LLM responses."""
        return self.home / "cache" / "llm-responses.sqlite"

    @property
    def corpus_path(self) -> Path:
        """SQLite file of the corpus store (pages, revisions, passages)."""
        return self.home / "corpus" / "corpus.sqlite"

    @property
    def call_log_path(self) -> Path:
        """SQLite file recording every LLM call (model, tokens, latency, cache hit)."""
        return self.home / "logs" / "llm-calls.sqlite"


@dataclass(frozen=True)
class ResolvedSettings:
    """Settings plus, for each field, where its value came from."""

    settings: Settings
    sources: Mapping[str, str]
    config_file: Path | None


def _fields() -> dict[str, dataclasses.Field[Any]]:
    return {f.name: f for f in dataclasses.fields(Settings)}


def _coerce(name: str, raw: Any, origin: str) -> Any:
    """Turn a raw value (TOML scalar or environment string) into the field's type."""
    target = _fields()[name].type
    text = str(raw)
    try:
        if target in ("Path",):
            return Path(text).expanduser()
        if target == "bool":
            if isinstance(raw, bool):
                return raw
            lowered = text.strip().lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError(f"expected true/false, got {text!r}")
        if target == "int":
            if isinstance(raw, bool):
                raise ValueError("expected an integer")
            return int(text)
        if target == "float":
            return float(text)
        if target == "str | None":
            return text or None
        return text
    except ValueError as exc:
        raise ConfigError(
            f"{origin}: invalid value {raw!r} for {name!r} ({exc})",
            hint=f"{name} expects a {target}; see `freshwiki config show` for current values.",
        ) from exc


def find_config_file(explicit: Path | None = None) -> Path | None:
    """Locate ``freshwiki.toml``: an explicit path, ``FRESHWIKI_CONFIG``, or the current folder."""
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError(
                f"config file {explicit} does not exist",
                hint="pass an existing freshwiki.toml, or omit --config to use defaults.",
            )
        return explicit
    from_env = os.environ.get(f"{ENV_PREFIX}CONFIG")
    if from_env:
        return find_config_file(Path(from_env))
    local = Path.cwd() / CONFIG_FILE_NAME
    return local if local.is_file() else None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid TOML ({exc})", hint="fix the syntax or remove the file."
        ) from exc
    # Accept both flat keys and a [freshwiki] table.
    table = data.get("freshwiki", data)
    unknown = sorted(set(table) - set(_fields()))
    if unknown:
        raise ConfigError(
            f"{path}: unknown setting(s) {', '.join(unknown)}",
            hint=f"valid settings: {', '.join(sorted(_fields()))}.",
        )
    return dict(table)


def load_settings(
    overrides: Mapping[str, Any] | None = None,
    *,
    config_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> ResolvedSettings:
    """Resolve settings from defaults, ``freshwiki.toml``, environment and overrides.

    Args:
        overrides: Highest-precedence values (CLI flags); ``None`` values are ignored so a
            flag left unset does not mask the layers below it.
        config_file: An explicit TOML file; otherwise ``FRESHWIKI_CONFIG`` or
            ``./freshwiki.toml`` when present.
        environ: The environment to read (defaults to ``os.environ``); injectable for tests.
    """
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    sources: dict[str, str] = {name: "default" for name in _fields()}

    path = find_config_file(config_file)
    if path is not None:
        for name, raw in _read_toml(path).items():
            values[name] = _coerce(name, raw, str(path))
            sources[name] = str(path)

    for name in _fields():
        var = f"{ENV_PREFIX}{name.upper()}"
        if var in env:
            values[name] = _coerce(name, env[var], f"environment variable {var}")
            sources[name] = f"env {var}"
    if "openai_api_key" not in values and env.get("OPENAI_API_KEY"):
        values["openai_api_key"] = env["OPENAI_API_KEY"]
        sources["openai_api_key"] = "env OPENAI_API_KEY"

    for name, raw in (overrides or {}).items():
        if raw is None:
            continue
        if name not in _fields():
            raise ConfigError(f"unknown setting {name!r}", hint=f"valid: {sorted(_fields())}")
        values[name] = raw if not isinstance(raw, str) else _coerce(name, raw, "command line")
        sources[name] = "command line"

    settings = Settings(**values)
    _validate(settings)
    return ResolvedSettings(settings=settings, sources=sources, config_file=path)


def _validate(settings: Settings) -> None:
    if settings.timeout <= 0:
        raise ConfigError(f"timeout must be positive, got {settings.timeout}")
    if settings.max_retries < 0:
        raise ConfigError(f"max_retries must be >= 0, got {settings.max_retries}")
    if settings.http_concurrency < 1 or settings.local_concurrency < 1:
        raise ConfigError("concurrency settings must be >= 1")


def describe(resolved: ResolvedSettings) -> list[tuple[str, str, str, str]]:
    """Rows of (name, value, source, help) for display; secrets are masked."""
    rows = []
    for f in dataclasses.fields(Settings):
        value = getattr(resolved.settings, f.name)
        shown = "***" if f.metadata.get("secret") and value else str(value)
        rows.append((f.name, shown, resolved.sources[f.name], str(f.metadata.get("help", ""))))
    return rows
