"""``chat_latency``: per-turn time of each system on the chat evaluation set's questions.

See ``_benchmark`` for what is timed and how. Options (``--benchmark-option key=value``):
``path`` (the chat_eval folder; default the repository's) and ``split`` (default ``test``);
``--limit N`` times the first N questions. Templates ``qa`` and ``dated``. No scorers: the
analysis reports each run's seconds per turn and its ratio to rag's on the same questions.
"""

from __future__ import annotations

from freshwiki.benchmarks.chat_latency._benchmark import (
    OPTIONS,
    REPLY_TOKENS,
    SETS,
    TEMPLATES,
    ChatLatency,
    chat_latency_benchmark,
    pick_questions,
)

__all__ = [
    "OPTIONS",
    "REPLY_TOKENS",
    "SETS",
    "TEMPLATES",
    "ChatLatency",
    "chat_latency_benchmark",
    "pick_questions",
]
