"""``freshwiki ask``: one question, answered from retrieved passages or by the model alone."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

if TYPE_CHECKING:
    pass
from freshwiki.cli._common import ATTRIBUTION, err, open_index, out, state


def ask(
    question: Annotated[str, typer.Argument(help="The question to answer.")],
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model spec, e.g. local:smollm2-135m.")
    ] = None,
    max_tokens: Annotated[int, typer.Option(help="Cap on generated tokens.")] = 512,
    stream: Annotated[bool, typer.Option(help="Print tokens as they are generated.")] = True,
    cache: Annotated[bool, typer.Option(help="Reuse a stored answer to the same request.")] = True,
    retrieve: Annotated[bool, typer.Option(
        help="Answer from passages retrieved from the corpus (--no-retrieve: the LLM alone).")
    ] = True,
    k: Annotated[int, typer.Option("-k", help="Passages to retrieve.")] = 3,
    time: Annotated[str, typer.Option(
        "--time", help="Time intent for retrieval: recent, year=YYYY or none.")] = "none",
    index_name: Annotated[str | None, typer.Option(
        "--index", help="Index to retrieve from (default: your `main` index if built, "
        "else the default corpus).")] = None,
) -> None:
    """Answer a question from Wikipedia passages (or the LLM alone), streaming the reply."""
    from freshwiki.llm import open_llm
    from freshwiki.systems.rag import context_messages
    from freshwiki.systems.vanilla import vanilla_messages

    if not question.strip():
        raise typer.BadParameter("the question is empty", param_hint="QUESTION")
    if k < 1:
        raise typer.BadParameter(f"must be at least 1, got {k}", param_hint="-k")
    settings = state.resolved(model=model).settings

    async def run() -> None:
        err.print(f"[dim]model {settings.model}[/dim]")
        # The model first: a wrong spec or missing weights fails in a second, before any
        # minutes spent building the default corpus.
        llm = open_llm(settings.model, settings=settings, cache=settings.cache and cache)
        messages = vanilla_messages(question)
        hits: list[Any] = []
        try:
            if retrieve:
                index = open_index(settings, index_name)
                try:
                    hits = index.search(question, k, time_intent=time)
                finally:
                    index.close()
                messages = list(context_messages(messages, hits))
            if stream:
                chat = llm.stream(messages, max_tokens=max_tokens, tag="ask")
                async for delta in chat:
                    sys.stdout.write(delta)
                    sys.stdout.flush()
                sys.stdout.write("\n")
                result = chat.result
            else:
                result = await llm.chat(messages, max_tokens=max_tokens, tag="ask")
                out.print(result.text, markup=False, highlight=False)
        finally:
            await llm.aclose()
        if hits:
            out.print("\nSources:")
            for number, hit in enumerate(hits, start=1):
                when = hit.passage.timestamp.date().isoformat() if hit.passage.timestamp else ""
                out.print(f"  [{number}] {escape(hit.passage.heading)}"
                          f"{f' ({when})' if when else ''}", soft_wrap=True, highlight=False)
            out.print(f"  [dim]{ATTRIBUTION}[/dim]")
        elif retrieve:
            err.print("[yellow]no passage matched: the answer comes from the model alone[/yellow]")
        if result is not None:
            speed = (
                f", {result.usage.completion_tokens / result.latency_s:.1f} tok/s"
                if result.latency_s > 0 and not result.cache_hit
                else ""
            )
            err.print(
                f"[dim]{result.usage.prompt_tokens} prompt + {result.usage.completion_tokens} "
                f"completion tokens, {result.latency_s:.2f} s{speed}"
                f"{', from cache' if result.cache_hit else ''}"
                f"{', REFUSED' if result.refused else ''}[/dim]"
            )

    asyncio.run(run())
