"""The FastAPI application: one process, one loaded index, routes per capability."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from freshwiki import __version__
from freshwiki.chat import ChatEngine
from freshwiki.chat.conversations import ConversationStore
from freshwiki.config import Settings
from freshwiki.retrieval import HybridIndex
from freshwiki.serve._chat import ChatService, install_chat
from freshwiki.serve._guard import LOOPBACK_NAMES, RequestGuard
from freshwiki.serve._leaderboard import install_leaderboard
from freshwiki.serve._page import install_page
from freshwiki.serve._search import SearchService
from freshwiki.serve._search import router as search_router


def create_app(
    settings: Settings,
    *,
    index: HybridIndex,
    index_name: str,
    engine: ChatEngine | None = None,
    model_name: str = "",
    on_shutdown: Sequence[Callable[[], Awaitable[None]]] = (),
    host: str = "127.0.0.1",
    leaderboard_from: Path | None = None,
) -> FastAPI:
    """Build the app around an already loaded index (and, for chat, an engine).

    The index is loaded (or the default corpus built) by the caller before the server starts
    listening, so the first request never waits minutes and a missing index is a start-up
    error on the terminal rather than a 500 on every request. The same holds for the engine:
    a wrong model spec fails before the port opens.

    Args:
        settings: Resolved settings; ``settings.home`` holds the conversation store, and
            the runs store the leaderboard at ``/leaderboard`` is built from.
        index: The index ``/v1/search`` answers from; the caller, who opened it, closes it.
        index_name: Its name, echoed in responses and ``/healthz``.
        engine: The grounded chat behind ``/v1/chat/completions`` and the page at ``/``;
            without one those answer 503 and the page says chat is off.
        model_name: What chat responses name as their ``model`` (the engine's model spec).
        on_shutdown: Coroutines run when the server stops (e.g. the LLM's ``aclose``, which
            must run on the server's own event loop).
        host: The address the server listens on: requests may name it as their host (see
            :class:`~freshwiki.serve._guard.RequestGuard` for every check at the door).
        leaderboard_from: Build ``/leaderboard`` from the run bundles in this folder
            (``freshwiki serve --leaderboard-from``) instead of the runs store.
    """
    store = ConversationStore.open(settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            for close in on_shutdown:
                await close()
            store.close()

    app = FastAPI(title="freshwiki", version=__version__, lifespan=lifespan,
                  description="Search, and chat grounded in, a Wikipedia corpus.")
    app.state.settings = settings
    app.state.search = SearchService(index, index_name)
    app.include_router(search_router)
    install_chat(app, ChatService(engine, store, model_name or "freshwiki",
                                  queue=settings.chat_queue))
    install_page(app)
    install_leaderboard(app, settings, leaderboard_from)
    hosts = {*LOOPBACK_NAMES, *_listed(settings.allowed_hosts)}
    if host not in ("0.0.0.0", "::", ""):
        hosts.add(host)
    app.add_middleware(RequestGuard, hosts=hosts, origins=_listed(settings.allowed_origins),
                       api_key=settings.api_key, max_body_bytes=settings.max_body_bytes)

    @app.get("/healthz", tags=["meta"])
    def healthz() -> dict[str, Any]:
        """Liveness plus what is loaded."""
        return {"status": "ok", "version": __version__, "index": index_name,
                "passages": len(index), "chat": engine is not None,
                "model": model_name or None}

    return app


def _listed(text: str) -> list[str]:
    """The items of a comma-separated setting."""
    return [item.strip() for item in text.split(",") if item.strip()]
