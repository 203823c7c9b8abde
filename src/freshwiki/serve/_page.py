"""The chat web page at ``/``: one HTML template, one script, one stylesheet, nothing from a CDN.

The page is a client of the public API only (``/v1/chat/completions`` with ``stream: true``,
``/v1/conversations/ID`` to reopen ``/?c=ID``), so anything it shows a script can get too, and
it works offline. Files live beside this module: ``templates/chat.html.j2`` and ``static/``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from freshwiki.chat.conversations import MAX_MESSAGE_CHARS
from freshwiki.serve._search import ATTRIBUTION

_HERE = Path(__file__).parent


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(_HERE / "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    return env.get_template("chat.html.j2")


def install_page(app: FastAPI) -> None:
    """Serve the page at ``/`` and its script and stylesheet under ``/static``."""
    app.mount("/static", StaticFiles(directory=_HERE / "static"), name="static")

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def page(request: Request) -> HTMLResponse:
        """The chat UI."""
        chat = request.app.state.chat
        search = request.app.state.search
        html = _template().render(
            static="/static", max_chars=MAX_MESSAGE_CHARS, chat_enabled=chat.engine is not None,
            index_name=search.name, passages=len(search.index), model=chat.model_name,
            attribution=ATTRIBUTION)
        return HTMLResponse(html, headers={"Cache-Control": "no-cache"})
