"""``freshwiki llm``: what the LLM calls cost (the call log), and the response cache's files."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

if TYPE_CHECKING:
    pass
from freshwiki.cli._common import out, state

app = typer.Typer(help="Inspect LLM usage; carry stored responses between machines.",
                  no_args_is_help=True)
cache_app = typer.Typer(
    help="Export or import stored LLM responses, so answers made on one machine (or in one "
         "session) are served, not generated again, on another.",
    no_args_is_help=True)
app.add_typer(cache_app, name="cache")


@app.command("calls")
def llm_calls(
    tag: Annotated[str | None, typer.Option(help="Only calls with this tag.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Aggregate the call log: calls, cache hits, tokens and latency per model."""
    from freshwiki.llm import CallLog

    settings = state.resolved().settings
    log = CallLog(settings.call_log_path)
    try:
        rows = log.summary(tag=tag)
    finally:
        log.close()
    if as_json:
        out.print_json(json.dumps([dataclasses.asdict(r) for r in rows]))
        return
    table = Table(title=f"LLM calls ({settings.call_log_path})")
    for col in ("backend", "model", "calls", "cache hits", "errors", "prompt tok",
                "prefix-reused tok", "completion tok", "mean latency s"):
        table.add_column(col)
    for r in rows:
        table.add_row(r.backend, r.model, str(r.calls), str(r.cache_hits), str(r.errors),
                      str(r.prompt_tokens), str(r.cached_prompt_tokens), str(r.completion_tokens),
                      f"{r.mean_latency_s:.3f}")
    out.print(table)


@cache_app.command("export")
def cache_export(
    out_path: Annotated[Path, typer.Option("--out", help="File to write (.jsonl.gz).")],
    model: Annotated[str | None, typer.Option(
        help="Only responses of models whose id starts with this (e.g. qwen2.5-coder-1.5b).")]
        = None,
) -> None:
    """Write stored responses, prompts included, to a file another machine can import.

    The prompts are in the file: export only what may be shared.
    """
    from freshwiki.llm import ResponseCache, export_responses

    settings = state.resolved().settings
    cache = ResponseCache(settings.response_cache_path)
    try:
        written = export_responses(cache, out_path, model=model)
    finally:
        cache.close()
    size = out_path.stat().st_size
    out.print(f"exported {written:,} response(s) from {settings.response_cache_path} to "
              f"{out_path} ({size:,} bytes)")
    out.print(f"on the other machine: freshwiki llm cache import {out_path.name}")


@cache_app.command("import")
def cache_import(
    path: Annotated[Path, typer.Argument(help="A file `freshwiki llm cache export` wrote.")],
) -> None:
    """Add a file's responses to this machine's cache (every row checked first; all or none)."""
    from freshwiki.llm import ResponseCache, import_responses

    settings = state.resolved().settings
    cache = ResponseCache(settings.response_cache_path)
    try:
        done = import_responses(cache, path)
    finally:
        cache.close()
    out.print(f"imported {done.added:,} of {done.rows:,} response(s) into "
              f"{settings.response_cache_path} ({done.present:,} were already there)")
