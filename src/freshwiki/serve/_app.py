"""The FastAPI application: one process, one loaded index, routes per capability."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from freshwiki import __version__
from freshwiki.config import Settings
from freshwiki.retrieval import HybridIndex
from freshwiki.serve._search import SearchService
from freshwiki.serve._search import router as search_router


def create_app(settings: Settings, *, index: HybridIndex, index_name: str) -> FastAPI:
    """Build the app around an already loaded index.

    The index is loaded (or the default corpus built) by the caller before the server starts
    listening, so the first request never waits minutes and a missing index is a start-up
    error on the terminal rather than a 500 on every request.

    Args:
        settings: Resolved settings (kept on ``app.state`` for later routes).
        index: The index ``/v1/search`` answers from; the caller, who opened it, closes it.
        index_name: Its name, echoed in responses and ``/healthz``.
    """
    app = FastAPI(title="freshwiki", version=__version__,
                  description="Search (and soon chat with) a Wikipedia corpus.")
    app.state.settings = settings
    app.state.search = SearchService(index, index_name)
    app.include_router(search_router)

    @app.get("/healthz", tags=["meta"])
    def healthz() -> dict[str, Any]:
        """Liveness plus what is loaded."""
        return {"status": "ok", "version": __version__, "index": index_name,
                "passages": len(index)}

    return app
