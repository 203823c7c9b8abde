"""Grounded chat: answer from the corpus, verify every claim, say "I don't know", show conflicts.

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
from freshwiki.chat.factcheck import check_reply
from freshwiki.chat.pipeline import ChatError, GroundedChat, GroundedReplyStream

__all__ = [
    "ChatEngine",
    "ChatError",
    "ChatMessage",
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
    "StageRecord",
    "TurnCalls",
    "TurnTrace",
    "Verdict",
    "check_reply",
]
