"""Grounded chat: answer from the corpus, verify every claim, say "I don't know", show conflicts.

The pipeline implements :class:`ChatEngine`; interfaces (REPL, HTTP, web page) and evaluation
depend only on the types re-exported here.
"""

from freshwiki.chat._types import (
    ChatEngine,
    ChatMessage,
    Citation,
    ClaimCheck,
    Conflict,
    Evidence,
    Fact,
    Mode,
    Reply,
    ReplyStream,
    Role,
    SearchQuery,
    StageRecord,
    TurnTrace,
    Verdict,
)

__all__ = [
    "ChatEngine",
    "ChatMessage",
    "Citation",
    "ClaimCheck",
    "Conflict",
    "Evidence",
    "Fact",
    "Mode",
    "Reply",
    "ReplyStream",
    "Role",
    "SearchQuery",
    "StageRecord",
    "TurnTrace",
    "Verdict",
]
