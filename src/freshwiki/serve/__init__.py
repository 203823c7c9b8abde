"""HTTP interfaces on 127.0.0.1: the search API now; chat API, web UI and leaderboard later.

>>> app = create_app(settings, index=index)        # doctest: +SKIP
>>> uvicorn.run(app, host="127.0.0.1", port=8765)  # or `freshwiki serve`
"""

from freshwiki.serve._app import create_app
from freshwiki.serve._search import ATTRIBUTION, hit_payload, search_payload

__all__ = ["ATTRIBUTION", "create_app", "hit_payload", "search_payload"]
