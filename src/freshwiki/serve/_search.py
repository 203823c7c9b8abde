"""``/v1/search``: the corpus index over HTTP, the same search as ``freshwiki search``.

One JSON shape serves the CLI's ``--json`` and the API, so a script can switch between them.
"""

from __future__ import annotations

import datetime as dt
import threading
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from pydantic import BaseModel, Field

from freshwiki.retrieval import METHODS, HybridIndex, RetrievalError, SearchHit

ATTRIBUTION = "Text from Wikipedia, CC BY-SA 4.0."
"""Shown with every passage: Wikipedia's licence requires attribution."""


def hit_payload(hit: SearchHit) -> dict[str, Any]:
    """One hit as JSON: the passage, where it sits, when it was written, why it ranked."""
    passage = hit.passage
    return {
        "rank": hit.rank,
        "score": hit.score,
        "id": passage.id,
        "title": passage.title,
        "section": list(passage.section_path),
        "text": passage.text,
        "timestamp": passage.timestamp.isoformat() if passage.timestamp else None,
        "page_id": passage.page_id,
        "revision_id": passage.revision_id,
        "bm25_rank": hit.bm25_rank,
        "dense_rank": hit.dense_rank,
        "time_score": hit.time_score,
    }


def search_payload(query: str, hits: list[SearchHit], **request: Any) -> dict[str, Any]:
    """The response body: the request echoed, the attribution, then the hits in rank order."""
    return {"query": query, **request, "attribution": ATTRIBUTION,
            "hits": [hit_payload(h) for h in hits]}


class SearchRequest(BaseModel):
    """Body of ``POST /v1/search`` (the GET form takes the same fields as query parameters)."""

    q: str = Field(min_length=1, description="What to look for.")
    k: int = Field(5, ge=1, le=100, description="Number of passages.")
    time: str = Field("none", description="Time intent: recent, year=YYYY or none.")
    method: str = Field("hybrid", description="hybrid, bm25 or dense.")
    title: list[str] | None = Field(None, description="Only these articles.")
    since: dt.date | None = Field(None, description="Passages dated on/after this day.")
    until: dt.date | None = Field(None, description="Passages dated on/before this day.")


class SearchService:
    """The loaded index behind the routes; searches one at a time.

    The index's SQLite table and the torch encoder are not safe to share across the
    threads FastAPI runs sync routes on, and a search takes ~12 ms, so a lock costs little.
    """

    def __init__(self, index: HybridIndex, name: str) -> None:
        self.index = index
        self.name = name
        self._lock = threading.Lock()

    def search(self, request: SearchRequest) -> dict[str, Any]:
        if not request.q.strip():
            raise HTTPException(422, detail="q is empty: say what to look for")
        if len(request.q) > MAX_QUERY_CHARS:
            raise HTTPException(422, detail=f"q has {len(request.q):,} characters; the limit "
                                f"is {MAX_QUERY_CHARS:,}: search with the words that matter")
        if request.method not in METHODS:
            raise HTTPException(
                422, detail=f"method {request.method!r} is not one of {', '.join(METHODS)}")
        try:
            with self._lock:
                hits = self.index.search(
                    request.q, request.k, method=request.method,  # type: ignore[arg-type]
                    time_intent=request.time, titles=request.title or None,
                    since=request.since, until=request.until)
        except RetrievalError as exc:
            detail = exc.message + (f" ({exc.hint})" if exc.hint else "")
            raise HTTPException(422, detail=detail) from exc
        return search_payload(request.q, hits, k=request.k, time=request.time,
                              method=request.method, index=self.name)


MAX_QUERY_CHARS = 1_000
"""Longest search query: a query is a few words; past this it is a document, not a search."""

router = APIRouter(tags=["search"])


def _service(request: Request) -> SearchService:
    service: SearchService = request.app.state.search
    return service


@router.get("/v1/search")
def search_get(
    request: Request,
    q: Annotated[str, Query(min_length=1, description="What to look for.")],
    k: Annotated[int, Query(ge=1, le=100)] = 5,
    time: str = "none",
    method: str = "hybrid",
    title: Annotated[list[str] | None, Query()] = None,
    since: dt.date | None = None,
    until: dt.date | None = None,
) -> dict[str, Any]:
    """Search the corpus: ``/v1/search?q=...&k=5&time=recent``."""
    body = SearchRequest(q=q, k=k, time=time, method=method, title=title, since=since,
                         until=until)
    return _service(request).search(body)


@router.post("/v1/search")
def search_post(request: Request, body: SearchRequest) -> dict[str, Any]:
    """Search the corpus with a JSON body (same fields as the GET form)."""
    return _service(request).search(body)
