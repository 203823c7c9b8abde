"""``freshwiki runs``: list, compare, export and import evaluation runs.

``freshwiki runs`` alone lists them (as it always did); the subcommands work on the runs
store at ``FRESHWIKI_HOME/runs/runs.sqlite``.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from freshwiki.cli._common import out, state

app = typer.Typer(help="List, compare, export and import evaluation runs.",
                  invoke_without_command=True)


@app.callback()
def main(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List evaluation runs (no subcommand), or work on them (subcommands)."""
    if ctx.invoked_subcommand is None:
        list_runs(as_json=as_json)


@app.command("list")
def list_runs(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List evaluation runs: id, benchmark, system, model, progress and failures."""
    from freshwiki.evaluation import ResultsStore, default_results_path

    settings = state.resolved().settings
    path = default_results_path(settings)
    overviews = []
    if path.exists():
        with ResultsStore(path) as store:
            overviews = store.list_runs()
    rows = [{
        "run_id": o.info.run_id, "benchmark": o.info.benchmark, "system": o.info.system,
        "model": o.info.model, "label": o.info.label,
        "created": o.info.created_at.isoformat(), "updated": o.info.updated_at.isoformat(),
        "outputs": o.outputs, "scores": o.scores, "failures": o.failures,
        "templates": list(o.info.config.get("templates") or []),
        "limit": o.info.config.get("limit"), "code_version": o.info.code_version,
    } for o in overviews]
    if as_json:
        out.print_json(json.dumps(rows))
        return
    if not rows:
        out.print(f"no runs in {path}; start one with `freshwiki eval BENCHMARK`", soft_wrap=True)
        return
    table = Table(title=f"runs in {path}")
    table.add_column("run id", no_wrap=True)
    for col in ("benchmark", "system", "model"):
        table.add_column(col, overflow="fold")
    table.add_column("created (UTC)", overflow="fold")
    table.add_column("done", justify="right")
    table.add_column("failed", justify="right")
    for r in rows:
        failures = f"[red]{r['failures']}[/red]" if r["failures"] else "0"
        table.add_row(str(r["run_id"]), str(r["benchmark"]), str(r["system"]),
                      escape(str(r["model"])), str(r["created"])[:16].replace("T", " "),
                      str(r["outputs"]), failures)
    out.print(table)
    out.print("done: sample x template outputs committed; `freshwiki runs --json` has more.",
              soft_wrap=True)
