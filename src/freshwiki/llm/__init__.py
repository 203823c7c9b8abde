"""One async LLM interface for every layer of freshwiki.

>>> llm = open_llm("local:qwen2.5-coder-1.5b")          # doctest: +SKIP
>>> result = await llm.chat([Message.user("Hi")])       # doctest: +SKIP
>>> result.text, result.usage, result.latency_s, result.cache_hit   # doctest: +SKIP
"""

from freshwiki.llm._backend import Backend
from freshwiki.llm._cache import ResponseCache
from freshwiki.llm._cache_files import (
    CacheFileError,
    CacheImport,
    export_responses,
    import_responses,
    read_responses,
)
from freshwiki.llm._calllog import CallLog, CallRecord, CallSummary
from freshwiki.llm._client import LLM, ChatStream, RetryPolicy
from freshwiki.llm._errors import (
    LLMError,
    LLMOutputError,
    LLMRefusalError,
    LLMRequestError,
    LLMUnavailableError,
    ModelError,
    ScriptExhaustedError,
    TransientBackendError,
)
from freshwiki.llm._features import (
    LOGPROB_FEATURES,
    FeatureBackend,
    FeatureVector,
    TokenLogprob,
    hashed_features,
    logprob_summary,
)
from freshwiki.llm._json import looks_like_refusal
from freshwiki.llm._registry import backend_kinds, build_backend, open_llm, register_backend
from freshwiki.llm._types import Completion, GenerationParams, LLMResult, Message, Usage

__all__ = [
    "LLM",
    "LOGPROB_FEATURES",
    "Backend",
    "CacheFileError",
    "CacheImport",
    "CallLog",
    "CallRecord",
    "CallSummary",
    "ChatStream",
    "Completion",
    "FeatureBackend",
    "FeatureVector",
    "GenerationParams",
    "LLMError",
    "LLMOutputError",
    "LLMRefusalError",
    "LLMRequestError",
    "LLMResult",
    "LLMUnavailableError",
    "Message",
    "ModelError",
    "ResponseCache",
    "RetryPolicy",
    "ScriptExhaustedError",
    "TokenLogprob",
    "TransientBackendError",
    "Usage",
    "backend_kinds",
    "build_backend",
    "export_responses",
    "hashed_features",
    "import_responses",
    "logprob_summary",
    "looks_like_refusal",
    "open_llm",
    "read_responses",
    "register_backend",
]
