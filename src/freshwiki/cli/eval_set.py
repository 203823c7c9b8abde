"""``freshwiki eval-set``: check and run an eval-set file (benchmarks x systems x models)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from freshwiki.cli._common import err, out, state

if TYPE_CHECKING:
    from freshwiki.evaluation import EvalSet

app = typer.Typer(help="Check and run eval sets: TOML files of benchmarks x systems x models "
                  "(see docs/evaluation.md).", no_args_is_help=True)

FileArg = Annotated[Path, typer.Argument(help="The eval-set file (TOML), e.g. "
                                         "experiments/evalsets/wikicontradict.toml.")]


def _plan_table(eval_set: EvalSet, model: str) -> Table:
    table = Table(title=f"{len(eval_set.runs)} run(s) in {escape(str(eval_set.path))}")
    for column in ("#", "line", "benchmark", "system", "model", "templates", "limit", "judge",
                   "options"):
        table.add_column(column, overflow="fold", justify="right" if column in (
            "#", "line", "limit") else "left")
    for number, run in enumerate(eval_set.runs, start=1):
        options = {**{f"benchmark.{k}": v for k, v in run.benchmark_options.items()},
                   **run.options}
        table.add_row(str(number), str(run.line), run.benchmark, run.system,
                      escape(run.model or f"{model} (configured)"),
                      ",".join(run.templates) if run.templates else "default",
                      str(run.limit) if run.limit else "all",
                      escape(run.judge or "none"),
                      escape(", ".join(f"{k}={v}" for k, v in options.items()) or "—"))
    return table


def check(
    file: FileArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print the runs as JSON.")] = False,
) -> None:
    """Check an eval-set file without a model and list the runs it expands to."""
    from freshwiki.evaluation import read_eval_set

    settings = state.resolved().settings
    eval_set = read_eval_set(file, settings=settings)
    if as_json:
        out.print_json(json.dumps({"path": str(file), "description": eval_set.description,
                                   "runs": [r.to_json() for r in eval_set.runs]}))
        return
    if eval_set.description:
        out.print(eval_set.description, soft_wrap=True, markup=False, highlight=False)
    out.print(_plan_table(eval_set, settings.model))
    out.print("checked: benchmarks, systems, scorers, templates and options are known; "
              "`freshwiki eval-set run FILE` runs them.", soft_wrap=True)


def run(
    file: FileArg,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Check and list the runs, run nothing (as `eval-set check`).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Run every run of an eval-set file; re-running the file resumes every run."""
    from freshwiki.evaluation import read_eval_set, run_eval_set, summary_rows

    if dry_run:
        check(file, as_json=as_json)
        return
    settings = state.resolved().settings
    eval_set = read_eval_set(file, settings=settings)  # everything checked before any run
    results = asyncio.run(run_eval_set(eval_set, settings=settings, console=err))
    rows = summary_rows(results)
    if as_json:
        out.print_json(json.dumps({"path": str(file), "runs": [r.to_json() for r in results],
                                   "summary": rows}))
        return
    table = Table(title=f"{escape(str(file))}: {len(results)} run(s)")
    for column in ("run id", "benchmark", "system", "model", "template", "scorer", "n",
                   "mean", "95 % CI"):
        table.add_column(column, overflow="fold",
                         justify="right" if column in ("n", "mean", "95 % CI") else "left")
    previous = ""
    for row in rows:
        if row["run_id"] != previous and previous:
            table.add_section()
        previous = row["run_id"]
        table.add_row(row["run_id"], row["benchmark"], row["system"], escape(row["model"]),
                      str(row["template"]), escape(str(row["scorer"])), _n(row),
                      _number(row["mean"]), _interval(row["ci"]))
    out.print(table)
    incomplete = [r for r in results if r.summary.complete < r.summary.items]
    for result in incomplete:
        s = result.summary
        err.print(f"run {s.info.run_id}: {s.complete}/{s.items} items complete, "
                  f"{len(s.failures)} failed (re-run the file to retry them)", soft_wrap=True)
    out.print("95 % CI: bootstrap over samples, as in `freshwiki report`; n: scored answers "
              "(+ failed ones).", soft_wrap=True)


def _n(row: dict[str, Any]) -> str:
    return f"{row['n']}" + (f" (+{row['n_failed']} failed)" if row["n_failed"] else "")


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _interval(ci: list[float] | None) -> str:
    return "—" if ci is None else f"{ci[0]:.3f}–{ci[1]:.3f}"


app.command("check")(check)
app.command("run")(run)
