"""``freshwiki eval`` and ``report``: run systems on benchmarks, report on runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    pass
from freshwiki.cli._common import err, key_values, out, state


def eval_command(
    benchmark: Annotated[str, typer.Argument(help="Benchmark name, e.g. wikicontradict.")],
    system: Annotated[str, typer.Option("--system", "-s", help="System under test: vanilla, "
                                        "rag, ...")] = "vanilla",
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="Model spec of the system (default: the configured model).")
    ] = None,
    templates: Annotated[str | None, typer.Option(
        help="Comma-separated template ids, e.g. 4,5 (default: the benchmark's).")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N samples.")] = None,
    judge: Annotated[str | None, typer.Option(
        help="Judge model spec, or 'none' (default: the strongest installed model, the "
        "system's own when no other is as strong).")] = None,
    scorer: Annotated[list[str] | None, typer.Option(
        "--scorer", help="Scorer name, repeatable (default: the benchmark's scorers).")] = None,
    option: Annotated[list[str] | None, typer.Option(
        "--option", "-o", help="System option KEY=VALUE, repeatable (rag: k, index, time; "
        "grounded: mode, k, index, refine; ralm: k, method; ralm-best: gate, k; rilm: gate, "
        "dialogue_gate, k, tau, arr; search-agent: k, backend, control; replay: answers, "
        "filter; an unknown key lists "
        "a system's options).")
    ] = None,
    benchmark_option: Annotated[list[str] | None, typer.Option(
        "--benchmark-option", help="Benchmark option KEY=VALUE, repeatable (e.g. path=FILE).")
    ] = None,
    concurrency: Annotated[int | None, typer.Option(
        help="Items in flight (default: twice the model's concurrency).")] = None,
    max_consecutive_failures: Annotated[int, typer.Option(
        help="Stop when this many attempts in a row fail with the same error (0: never).")
    ] = 10,
    label: Annotated[str, typer.Option(help="Display name in reports (default system/model).")
                     ] = "",
    cache: Annotated[bool, typer.Option(help="Reuse stored answers to identical requests.")
                     ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Run a system on a benchmark; re-running the same command resumes the same run."""
    from freshwiki.evaluation import run_evaluation

    settings = state.resolved().settings
    chosen = [t.strip() for t in templates.split(",") if t.strip()] if templates else None
    summary = asyncio.run(run_evaluation(
        benchmark, system=system, model=model, judge=judge if judge is not None else "default",
        templates=chosen, limit=limit, scorers=scorer or None,
        options=key_values(option, "--option"),
        benchmark_options=key_values(benchmark_option, "--benchmark-option"),
        concurrency=concurrency, max_consecutive_failures=max_consecutive_failures,
        label=label, settings=settings, cache=settings.cache and cache, console=err,
    ))
    if as_json:
        out.print_json(json.dumps(summary.to_json()))
    else:
        info = summary.info
        table = Table(title=f"{info.benchmark} · {info.system} · {info.model}")
        failed = any(m.n_failed for m in summary.means)
        columns = ["template", "scorer", "mean", "scored / total"]
        if failed:
            columns.append("mean, failures = incorrect")
        for col in columns:
            table.add_column(col, justify="left" if col in ("template", "scorer") else "right")
        for m in summary.means:
            row = [m.template, m.scorer, "-" if m.n == 0 else f"{m.mean:.3f}",
                   f"{m.n} / {m.n_total}"]
            if failed:
                row.append("-" if not m.n_total else f"{m.mean_with_failures:.3f}")
            table.add_row(*row)
        out.print(table)
        out.print(f"{summary.complete}/{summary.items} sample x template items complete "
                  f"({summary.new_outputs} new outputs, {summary.new_scores} new scores)",
                  soft_wrap=True)
    if summary.failures:
        groups: dict[tuple[str, str, str], list[Any]] = {}
        for f in summary.failures:
            groups.setdefault((f.stage, f.scorer or "", f.error_type), []).append(f)
        err.print(f"[bold yellow]{len(summary.failures)} item(s) failed[/bold yellow] (recorded; "
                  "re-run the same command to retry them):", soft_wrap=True)
        for (stage, name, kind), items in groups.items():
            where = f"{stage} {name}".strip()
            first = items[0].message.splitlines()[0][:200] if items[0].message else ""
            ids = ", ".join(f"{i.sample_id}/{i.template}" for i in items[:5])
            more = f" +{len(items) - 5} more" if len(items) > 5 else ""
            err.print(f"  {len(items)} x {escape(where)}: {escape(kind)}: {escape(first)} "
                      f"[dim]({escape(ids)}{more})[/dim]", soft_wrap=True, highlight=False)
    err.print(f"run id: [bold]{summary.info.run_id}[/bold]  (`freshwiki runs` lists runs)",
              soft_wrap=True)


def report(
    run_ids: Annotated[list[str], typer.Argument(
        help="Run ids or unique prefixes (see `freshwiki runs`); two or more are compared.")],
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Folder for report.html and report.md (default: HOME/reports/ID-ID).")
    ] = None,
    by: Annotated[list[str] | None, typer.Option(
        "--by", help="Sample-metadata key to break results down by (repeatable; default: "
        "the benchmark's breakdowns).")] = None,
) -> None:
    """Write a self-contained HTML report and a Markdown summary of evaluation runs."""
    from freshwiki.evaluation import ResultsStore, default_results_path, write_report

    settings = state.resolved().settings
    store_path = default_results_path(settings)
    if not store_path.exists():  # don't create an empty store just to say a run is missing
        raise FreshwikiError(
            f"no evaluation results at {store_path}, so no run {run_ids[0]!r}",
            hint="`freshwiki runs` lists stored runs; `freshwiki eval` makes one "
            "(is FRESHWIKI_HOME the same?).",
        )
    with ResultsStore(store_path) as store:
        results = [store.load_run(run_id) for run_id in run_ids]
    ids = [r.info.run_id for r in results]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise FreshwikiError(f"run {', '.join(repeated)} given more than once",
                             hint="name each run once; `freshwiki runs` lists them.")
    target = out_dir if out_dir is not None else settings.home / "reports" / "-".join(ids)
    html_path, md_path = write_report(results, target, by=by)
    out.print(f"HTML report:      {html_path}", soft_wrap=True, markup=False, highlight=False)
    out.print(f"Markdown summary: {md_path}", soft_wrap=True, markup=False, highlight=False)
