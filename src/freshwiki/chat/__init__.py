"""Grounded chat: answer from the corpus, check every sentence, say "I don't know", show conflicts.

The pipeline implements :class:`ChatEngine`; interfaces (REPL, HTTP, web page) and evaluation
depend only on the types re-exported here.
"""

from freshwiki.chat._calls import TurnCalls
from freshwiki.chat._evidence import PassageBook
from freshwiki.chat._types import (
    ChatEngine,
    ChatMessage,
    Citation,
    ClaimCheck,
    Conflict,
    CriterionFeedback,
    Evidence,
    Fact,
    Mode,
    Refinement,
    Reply,
    ReplyStream,
    Role,
    SearchQuery,
    StageRecord,
    TurnTrace,
    Verdict,
)
from freshwiki.chat.factcheck import check_reply, only_abstains
from freshwiki.chat.pipeline import (
    DEFAULT_K,
    MODES,
    ChatError,
    GroundedChat,
    GroundedReplyStream,
    resolve_mode,
)
from freshwiki.chat.session import ChatSession, SessionTurn

__all__ = [
    "DEFAULT_K",
    "MODES",
    "ChatEngine",
    "ChatError",
    "ChatMessage",
    "ChatSession",
    "Citation",
    "ClaimCheck",
    "Conflict",
    "CriterionFeedback",
    "Evidence",
    "Fact",
    "GroundedChat",
    "GroundedReplyStream",
    "Mode",
    "PassageBook",
    "Refinement",
    "Reply",
    "ReplyStream",
    "Role",
    "SearchQuery",
    "SessionTurn",
    "StageRecord",
    "TurnCalls",
    "TurnTrace",
    "Verdict",
    "check_reply",
    "only_abstains",
    "resolve_mode",
]
