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


def _show(value: object) -> str:
    if value is None:
        return "[dim](absent)[/dim]"
    return escape(json.dumps(value) if not isinstance(value, str) else value)


@app.command("diff")
def diff(
    run_a: Annotated[str, typer.Argument(help="First run id or unique prefix.")],
    run_b: Annotated[str, typer.Argument(help="Second run id or unique prefix.")],
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show what differs between two runs: why they are two runs, not one."""
    from freshwiki.errors import FreshwikiError
    from freshwiki.evaluation import ResultsStore, default_results_path, diff_runs

    path = default_results_path(state.resolved().settings)
    if not path.exists():
        raise FreshwikiError(f"no evaluation results at {path}, so no run {run_a!r}",
                             hint="`freshwiki runs` lists stored runs (is FRESHWIKI_HOME the "
                             "same?).")
    with ResultsStore(path) as store:
        a = store.run_info(store.resolve_run_id(run_a))
        b = store.run_info(store.resolve_run_id(run_b))
    differences = diff_runs(a, b)
    if as_json:
        out.print_json(json.dumps({
            "a": a.run_id, "b": b.run_id,
            "differences": [{"key": d.key, "kind": d.kind, "identity": d.identity,
                             "a": d.a, "b": d.b} for d in differences]}, default=str))
        return
    if not any(d.identity for d in differences):
        out.print(f"{a.run_id} and {b.run_id}: same identity"
                  + ("" if a.run_id != b.run_id else " (the same run)"), soft_wrap=True)
    table = Table(title=f"{a.run_id} ({escape(a.label)}) vs {b.run_id} ({escape(b.label)})")
    table.add_column("key", overflow="fold")
    table.add_column("", no_wrap=True)
    table.add_column(a.run_id, overflow="fold")
    table.add_column(b.run_id, overflow="fold")
    for d in differences:
        where = "identity" if d.identity else "[dim]other[/dim]"
        table.add_row(escape(d.key), where, _show(d.a), _show(d.b))
    if differences:
        out.print(table)
    out.print(f"{sum(d.identity for d in differences)} identity key(s) differ; code.* are "
              "modules (digest of their code without docstrings), prompts.* files beside them.",
              soft_wrap=True)
