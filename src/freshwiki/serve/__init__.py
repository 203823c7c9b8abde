"""HTTP interfaces on 127.0.0.1: search, OpenAI-compatible grounded chat, and a chat web page.

>>> app = create_app(settings, index=index, index_name="default", engine=chat)  # doctest: +SKIP
>>> uvicorn.run(app, host="127.0.0.1", port=8765)  # or `freshwiki serve`

Routes: ``/v1/search``, ``/v1/chat/completions``, ``/v1/conversations[/ID]``, ``/`` (the page),
``/healthz``, and ``/docs`` for the interactive reference.
"""

from freshwiki.serve._app import create_app
from freshwiki.serve._chat import MAX_HISTORY_MESSAGES, ChatAPIError, ChatService
from freshwiki.serve._search import ATTRIBUTION, hit_payload, search_payload

__all__ = [
    "ATTRIBUTION",
    "MAX_HISTORY_MESSAGES",
    "ChatAPIError",
    "ChatService",
    "create_app",
    "hit_payload",
    "search_payload",
]
