"""HTTP interfaces on 127.0.0.1: search, OpenAI-compatible grounded chat, and a chat web page.

>>> app = create_app(settings, index=index, index_name="default", engine=chat)  # doctest: +SKIP
>>> uvicorn.run(app, host="127.0.0.1", port=8765)  # or `freshwiki serve`

Routes: ``/v1/search``, ``/v1/chat/completions``, ``/v1/conversations[/ID]``, ``/`` (the page),
``/leaderboard/`` (the evaluation leaderboard of the server's runs store), ``/healthz``, and
``/docs`` for the interactive reference. Every request first passes the
checks of :class:`RequestGuard` (host, origin, API key, JSON content type, body size).
"""

from freshwiki.serve._app import create_app
from freshwiki.serve._chat import (
    KEEP_ALIVE_S,
    MAX_ASSISTANT_CHARS,
    MAX_HISTORY_MESSAGES,
    RETRY_AFTER_S,
    ChatAPIError,
    ChatService,
)
from freshwiki.serve._guard import RequestGuard, is_loopback
from freshwiki.serve._search import ATTRIBUTION, MAX_QUERY_CHARS, hit_payload, search_payload

__all__ = [
    "ATTRIBUTION",
    "KEEP_ALIVE_S",
    "MAX_ASSISTANT_CHARS",
    "MAX_HISTORY_MESSAGES",
    "MAX_QUERY_CHARS",
    "RETRY_AFTER_S",
    "ChatAPIError",
    "ChatService",
    "RequestGuard",
    "create_app",
    "hit_payload",
    "is_loopback",
    "search_payload",
]
