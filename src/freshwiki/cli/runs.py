"""``freshwiki runs``: list, compare, analyse, export and import evaluation runs.

``freshwiki runs`` alone lists them (as it always did); the subcommands work on the runs
store at ``FRESHWIKI_HOME/runs/runs.sqlite``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from freshwiki.cli._common import out, progress, state

app = typer.Typer(help="List, compare, analyse, export and import evaluation runs.",
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


@app.command("analyse")
def analyse(
    run_id: Annotated[str, typer.Argument(help="Run id or unique prefix of a grounded-system "
                                          "run (`freshwiki runs` lists them).")],
    by: Annotated[str | None, typer.Option(
        "--by", help="Sample-metadata key to add a column per value of (default: the "
        "benchmark's first breakdown, e.g. category for simulated-chat; 'none': all only).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """WikiChat's analysis of a grounded run: claims, verdicts, reply sources, latency."""
    from freshwiki.errors import FreshwikiError
    from freshwiki.evaluation import ResultsStore
    from freshwiki.systems.analysis import analyse_chat, run_turns

    with ResultsStore(_existing_store()) as store:
        results = store.load_run(run_id)
    info = results.info
    turns = run_turns(results)
    if not turns:
        raise FreshwikiError(
            f"run {info.run_id} ({info.benchmark}, system {info.system}) has no grounded chat "
            "turns to analyse",
            hint="the analysis reads the traces the grounded system stores: run e.g. "
            "`freshwiki eval simulated-chat --system grounded`.")
    breakdowns = list(info.config.get("breakdowns") or [])
    key = None if by == "none" else by or (breakdowns[0] if breakdowns else None)
    if key is not None and all(key not in t.metadata for t in turns):
        known = sorted({k for t in turns for k in t.metadata})
        raise FreshwikiError(f"no sample of run {info.run_id} has metadata {key!r}",
                             hint=f"use one of: {', '.join(known) or '(none)'}, or --by none.")
    analysis = analyse_chat(turns, key)
    assert analysis is not None  # there are turns
    if as_json:
        out.print_json(json.dumps({"run_id": info.run_id, **analysis.as_json()}))
        return
    table = Table(title=f"{info.run_id} · {escape(info.benchmark)} · {escape(info.system)} "
                        f"· {escape(info.model)}")
    table.add_column("measure", overflow="fold")
    for column in analysis.columns:
        table.add_column(escape(column), justify="right")
    table.add_column("over")
    for title, rows in analysis.sections:
        table.add_section()
        table.add_row(f"[bold]{escape(title)}[/bold]", *[""] * (len(analysis.columns) + 1))
        for row in rows:
            table.add_row(escape(row.label), *row.shown(), row.over)
    out.print(table)
    out.print("notes from the draft = verified claims ÷ (facts + verified claims), as WikiChat "
              "§7.5; cited reply sentences by the passages they cite; latency = mean / median "
              "seconds over the turns that ran the stage.", soft_wrap=True, markup=False,
              highlight=False)


def _existing_store() -> Path:
    from freshwiki.errors import FreshwikiError
    from freshwiki.evaluation import default_results_path

    path = default_results_path(state.resolved().settings)
    if not path.exists():  # exporting from nothing must not create an empty store
        raise FreshwikiError(f"no evaluation results at {path}, so no runs to export",
                             hint="`freshwiki eval` makes runs (is FRESHWIKI_HOME the same?).")
    return path


@app.command("export")
def export(
    out_path: Annotated[Path, typer.Option(
        "--out", "-o", help="File to write (gzip JSON lines, e.g. runs-laptop.jsonl.gz); "
        "replaced if it exists.")],
    run_ids: Annotated[list[str] | None, typer.Argument(
        help="Run ids or unique prefixes (default: every run).")] = None,
    benchmark: Annotated[list[str] | None, typer.Option(
        "--benchmark", "-b", help="Also every run of this benchmark (repeatable).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Write runs, with every output, score and failure, to one file for another machine."""
    from freshwiki.evaluation import ResultsStore, export_runs, select_runs

    with ResultsStore(_existing_store()) as store:
        ids = select_runs(store, run_ids or [], benchmark or [])
        with progress("{task.completed} rows", transient=True) as bars:
            task = bars.add_task("exporting", total=None)
            summary = export_runs(store, out_path, ids, progress=lambda _, done, total:
                                  bars.update(task, completed=done, total=total))
    if as_json:
        out.print_json(json.dumps({"path": str(summary.path), "runs": list(summary.run_ids),
                                   "rows": dict(summary.counts), "sha256": summary.sha256,
                                   "bytes": summary.size}))
        return
    c = summary.counts
    out.print(f"exported {len(summary.run_ids)} run(s) ({c.get('outputs', 0):,} outputs, "
              f"{c.get('scores', 0):,} scores, {c.get('failures', 0):,} failures) to "
              f"{summary.path} ({summary.size:,} bytes, sha256 {summary.sha256[:16]}…)",
              soft_wrap=True, markup=False, highlight=False)
    out.print("on the other machine: freshwiki runs import "
              f"{summary.path.name}", soft_wrap=True, markup=False, highlight=False)


@app.command("import")
def import_(
    files: Annotated[list[Path], typer.Argument(
        help="Runs files written by `freshwiki runs export` (several: all or nothing).")],
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Check the files and count what would be added; change nothing.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Merge runs files into this machine's runs store: each result once, all or nothing."""
    from freshwiki.evaluation import (
        ResultsStore,
        check_runs_files,
        default_results_path,
        merge_runs_files,
    )

    path = default_results_path(state.resolved().settings)
    with progress("{task.percentage:>3.0f}%", transient=True) as bars:
        task = bars.add_task("checking", total=None)

        def report(stage: str, done: int, total: int | None) -> None:
            bars.update(task, description=stage, completed=done, total=total)

        # Every file is checked before the store is opened: a bad file must not even leave
        # a new, empty store behind.
        checked = check_runs_files(files, progress=report)
        with tempfile.TemporaryDirectory() as scratch:
            # A dry run with no store yet counts against an empty one it then throws away.
            target = path if path.exists() or not dry_run else Path(scratch) / "runs.sqlite"
            with ResultsStore(target) as store:
                summary = merge_runs_files(store, checked, dry_run=dry_run, progress=report)
    m = summary.merged
    rows = {t: {"added": m.added[t], "already_present": m.present[t]} for t in m.added}
    if as_json:
        out.print_json(json.dumps({
            "store": str(path), "dry_run": dry_run,
            "files": [{"path": str(f.path), "schema": f.header.get("schema"),
                       "freshwiki": f.header.get("freshwiki"),
                       "exported_at": f.header.get("exported_at"), "rows": dict(f.counts)}
                      for f in summary.files],
            "runs_added": list(m.runs_added), "runs_merged": list(m.runs_merged),
            "rows": rows, "different_answers_kept_local": m.diverged,
            "scores_of_other_answers_skipped": m.of_other_answers,
            "failures_already_resolved": m.failures_resolved}))
        return
    table = Table(title=("would import into " if dry_run else "imported into ") + str(path))
    table.add_column("rows")
    table.add_column("added", justify="right")
    table.add_column("already here", justify="right")
    for name, counts in rows.items():
        table.add_row(name, f"{counts['added']:,}", f"{counts['already_present']:,}")
    out.print(table)
    new = ", ".join(m.runs_added) or "none"
    out.print(f"new runs: {new}; runs already here (work sets merged): "
              f"{', '.join(m.runs_merged) or 'none'}", soft_wrap=True, markup=False,
              highlight=False)
    if m.diverged:
        out.print(f"{m.diverged} answer(s) differ from the ones stored here: the stored ones "
                  f"are kept, and {m.of_other_answers} score(s) of the other answers skipped.",
                  soft_wrap=True)
    if m.failures_resolved:
        out.print(f"{m.failures_resolved} failure(s) not imported: their results are stored "
                  "here.", soft_wrap=True)
    if dry_run:
        out.print("dry run: nothing was changed.")


@app.command("agree")
def agree_command(
    run_ids: Annotated[list[str], typer.Argument(
        help="Run id or unique prefix; several runs (e.g. replay runs of several producers) "
        "are pooled, each label compared in the first run that holds its answer.")],
    labels: Annotated[Path, typer.Option(
        "--labels", help="JSONL labels: sample_id, template, label (optional: scorer, "
        "response, labeller).")],
    scorer: Annotated[str | None, typer.Option(
        "--scorer", help="The scorer or judge to compare (default: the run's only classifying "
        "scorer).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """A scorer's or judge's verdicts in one or more runs against labels: kappa, P/R/F1."""
    from freshwiki.evaluation import ResultsStore, agree_runs, read_labels, split_labels

    rows = read_labels(labels)
    with ResultsStore(_existing_store()) as store:
        runs = [store.load_run(run_id) for run_id in run_ids]
    result = agree_runs(split_labels(runs, rows, scorer), labels, scorer)
    if as_json:
        out.print_json(json.dumps(result.to_json()))
        return

    def num(value: float | None) -> str:
        return "—" if value is None else f"{value:.3f}"

    def ci(interval: object) -> str:
        low, high = getattr(interval, "low", None), getattr(interval, "high", None)
        return "" if low is None or high is None else f" ({low:.3f}–{high:.3f})"

    who = ", ".join(result.labellers) or "not named in the file"
    out.print(f"run {result.run_id}, scorer {result.scorer} vs {labels} (labelled by: {who})",
              soft_wrap=True, markup=False, highlight=False)
    out.print(f"n {result.n}; accuracy {num(result.accuracy)}{ci(result.accuracy_ci)}; "
              f"Cohen's κ {num(result.kappa)}{ci(result.kappa_ci)}; macro F1 "
              f"{num(result.macro_f1)}", soft_wrap=True, markup=False, highlight=False)
    table = Table(title="per class (95 % CI: Wilson for P and R, bootstrap for F1)")
    for column in ("class", "labelled", "predicted", "precision", "recall", "F1"):
        table.add_column(column, justify="left" if column == "class" else "right")
    for c in result.per_class:
        table.add_row(escape(c.label), str(c.support), str(c.predicted),
                      num(c.precision) + ci(c.precision_ci), num(c.recall) + ci(c.recall_ci),
                      num(c.f1) + ci(c.f1_ci))
    out.print(table)
    matrix = Table(title="confusion: rows = labels, columns = scorer")
    matrix.add_column("")
    for label in result.classes:
        matrix.add_column(escape(label), justify="right")
    for label, row in zip(result.classes, result.matrix, strict=True):
        matrix.add_row(escape(label), *map(str, row))
    out.print(matrix)
    left = [f"{len(result.no_verdict)} label(s) without a verdict in the run",
            f"{len(result.text_differs)} whose read text differs from the run's answer",
            f"{result.other_scorer} meant for another scorer"]
    out.print("left out: " + "; ".join(left), soft_wrap=True, markup=False, highlight=False)
