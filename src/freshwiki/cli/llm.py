"""``freshwiki llm``: what the LLM calls cost (the call log)."""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

if TYPE_CHECKING:
    pass
from freshwiki.cli._common import out, state

app = typer.Typer(help="Inspect LLM usage.", no_args_is_help=True)


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
