"""``freshwiki serve``: the HTTP API and chat page on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    pass
from freshwiki.cli._common import ATTRIBUTION, chat_mode, err, open_index, state


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on (loopback by default).")
                    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8765,
    name: Annotated[str | None, typer.Option(
        help="Index to serve (default: your `main` index if built, else the default corpus).")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model spec the chat answers with.")
    ] = None,
    mode: Annotated[str, typer.Option(
        help="Chat mode: checked (answer, then check each sentence) or wikichat (WikiChat's "
        "staged pipeline).")] = "checked",
    k: Annotated[int | None, typer.Option(
        "-k", help="Passages the chat retrieves per question (default: 3 checked, 5 "
        "wikichat).")] = None,
    chat: Annotated[bool, typer.Option(
        help="Serve the chat API and page (--no-chat: search only, no model loaded).")] = True,
    leaderboard_from: Annotated[Path | None, typer.Option(
        "--leaderboard-from", help="Build /leaderboard from the run bundles in this folder "
        "(e.g. experiments/runs) instead of the runs store.")] = None,
) -> None:
    """Serve the HTTP API, chat page and leaderboard: `/`, `/v1/chat/completions`, `/leaderboard`.

    Also `/v1/search`, and `/docs` for the API reference.
    """
    import uvicorn

    from freshwiki.retrieval import resolve_index_name
    from freshwiki.serve import KEEP_ALIVE_S, create_app

    pipeline_mode = chat_mode(mode)
    if k is not None and k < 1:
        raise typer.BadParameter(f"must be at least 1, got {k}", param_hint="-k")
    settings = state.resolved(model=model).settings
    from freshwiki.serve import is_loopback

    if not is_loopback(host) and not settings.api_key:
        raise typer.BadParameter(
            f"{host!r} is reachable from other machines, and no API key is set: anyone on the "
            "network could use this server's model and read its conversations. Set "
            "FRESHWIKI_API_KEY (clients then send 'Authorization: Bearer KEY'), or listen "
            "on 127.0.0.1.", param_hint="--host")
    llm = None
    if chat:  # the model first: a wrong spec fails in a second, before any corpus build
        from freshwiki.llm import open_llm

        llm = open_llm(settings.model, settings=settings)
    served = resolve_index_name(settings, name)
    index = open_index(settings, served)
    engine = None
    if llm is not None:
        from freshwiki.chat import GroundedChat

        engine = GroundedChat(llm, index, mode=pipeline_mode, k=k)
    what = f"chat with {settings.model} ({pipeline_mode} mode) and search" if chat else "search"
    err.print(f"serving {what} over index {served!r} ({len(index)} passages) on "
              f"http://{host}:{port} (leaderboard: /leaderboard)  [dim]{ATTRIBUTION}[/dim]",
              soft_wrap=True)
    try:
        uvicorn.run(create_app(settings, index=index, index_name=served, engine=engine,
                               model_name=settings.model if chat else "",
                               on_shutdown=[llm.aclose] if llm is not None else (),
                               host=host, leaderboard_from=leaderboard_from),
                    host=host, port=port, log_level="warning", timeout_keep_alive=KEEP_ALIVE_S)
    finally:
        index.close()
