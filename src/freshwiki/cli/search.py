"""``freshwiki search``: search the corpus index from the terminal."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

if TYPE_CHECKING:
    pass
from freshwiki.cli._common import ATTRIBUTION, err, open_index, out, state


def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    k: Annotated[int, typer.Option("-k", help="Number of passages.")] = 5,
    time: Annotated[str, typer.Option(
        "--time", help="Time intent: recent, year=YYYY or none.")] = "none",
    method: Annotated[str, typer.Option(help="hybrid, bm25 or dense.")] = "hybrid",
    title: Annotated[list[str] | None, typer.Option(
        "--title", help="Only these articles (repeatable).")] = None,
    since: Annotated[str | None, typer.Option(help="Passages dated on/after YYYY-MM-DD.")] = None,
    until: Annotated[str | None, typer.Option(help="Passages dated on/before YYYY-MM-DD.")
                     ] = None,
    name: Annotated[str | None, typer.Option(
        help="Index name (default: your `main` index if built, else the default corpus).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Search the corpus index (hybrid BM25 + dense, time-aware)."""
    import datetime as dt

    from freshwiki.retrieval import METHODS
    from freshwiki.serve import search_payload

    if method not in METHODS:
        raise typer.BadParameter(f"{method!r} is not one of {', '.join(METHODS)}",
                                 param_hint="--method")

    def day(value: str | None, flag: str) -> dt.date | None:
        if value is None:
            return None
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise typer.BadParameter(f"{value!r} is not a YYYY-MM-DD date",
                                     param_hint=flag) from None

    settings = state.resolved().settings
    index = open_index(settings, name)
    try:
        hits = index.search(query, k, method=method, time_intent=time,  # type: ignore[arg-type]
                            titles=title or None, since=day(since, "--since"),
                            until=day(until, "--until"))
    finally:
        index.close()
    if as_json:
        out.print_json(json.dumps(search_payload(query, hits, k=k, time=time, method=method)))
        return
    if not hits:
        out.print("no passages found")
    for h in hits:
        when = h.passage.timestamp.date().isoformat() if h.passage.timestamp else "undated"
        out.print(f"[bold]{h.rank}. {escape(h.passage.heading)}[/bold] [dim]({when}, "
                  f"score {h.score:.3f})[/dim]", soft_wrap=True)
        out.print(escape(h.passage.text), soft_wrap=True, highlight=False)
        out.print()
    err.print(f"[dim]{ATTRIBUTION}[/dim]")
