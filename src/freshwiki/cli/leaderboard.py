"""``freshwiki leaderboard``: the static leaderboard site of every stored run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from freshwiki.cli._common import out, progress, state


def _scorer_choice(values: list[str] | None) -> dict[str, str]:
    """``--scorer NAME`` (every benchmark) or ``--scorer BENCHMARK=NAME``."""
    chosen: dict[str, str] = {}
    for value in values or []:
        benchmark, sep, name = value.partition("=")
        key, scorer = (benchmark.strip(), name.strip()) if sep else ("*", value.strip())
        if not key or not scorer:
            raise typer.BadParameter(f"{value!r} is not NAME or BENCHMARK=NAME",
                                     param_hint="--scorer")
        if key in chosen and chosen[key] != scorer:
            raise typer.BadParameter(f"two scorers for {key if key != '*' else 'every benchmark'}"
                                     f": {chosen[key]} and {scorer}", param_hint="--scorer")
        chosen[key] = scorer
    return chosen


def leaderboard(
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Folder for the site (default: HOME/leaderboard); a previous "
        "leaderboard there is replaced whole, any other non-empty folder is refused.")
    ] = None,
    scorer: Annotated[list[str] | None, typer.Option(
        "--scorer", help="Headline scorer: NAME for every benchmark that has it, or "
        "BENCHMARK=NAME (repeatable; default: each benchmark's first scorer).")] = None,
    reports: Annotated[bool, typer.Option(
        help="Write each run's full report into the site and link it.")] = True,
    from_dir: Annotated[Path | None, typer.Option(
        "--from", help="Build from the run bundles in this folder (files `freshwiki runs "
        "export` writes, e.g. experiments/runs) instead of the runs store, which is not "
        "touched.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Build a static leaderboard site (HTML, works offline) from every stored run (or --from).

    One board per benchmark and dataset: a table per period x run with means, 95 % CIs and
    scored / total answers, a line plot over the periods, Kendall's tau between the rankings
    of consecutive periods, and links to each run's report. `freshwiki serve` shows the same
    site at /leaderboard.
    """
    from contextlib import AbstractContextManager

    from freshwiki.errors import FreshwikiError
    from freshwiki.evaluation import (
        ResultsStore,
        bundle_files,
        bundle_store,
        default_results_path,
        write_leaderboard,
    )

    settings = state.resolved().settings
    chosen = _scorer_choice(scorer)
    source: AbstractContextManager[ResultsStore]
    if from_dir is not None:
        # Every bundle is checked before any is read into a throw-away store.
        source = bundle_store(bundle_files(from_dir))
    else:
        store_path = default_results_path(settings)
        if not store_path.exists():  # don't create an empty store just to show nothing
            raise FreshwikiError(
                f"no evaluation results at {store_path}, so nothing to rank",
                hint="`freshwiki eval` makes runs; `freshwiki runs import FILE` brings them "
                "from another machine; --from DIR builds from run bundles (is "
                "FRESHWIKI_HOME the same?).")
        source = ResultsStore(store_path)
    target = out_dir if out_dir is not None else settings.home / "leaderboard"
    with source as store, progress("{task.completed}/{task.total}", transient=True) as bars:
        task = bars.add_task("leaderboard", total=None)
        site = write_leaderboard(store, target, scorer=chosen, reports=reports,
                                 progress=lambda what, done, total: bars.update(
                                     task, description=what, completed=done, total=total))
    if as_json:
        out.print_json(json.dumps({
            "index": str(site.index.resolve()), "runs": site.runs, "reports": site.reports,
            "boards": [{"slug": b.slug, "benchmark": b.benchmark, "dataset": b.dataset_hash,
                        "runs": len(b.entries), "periods": list(b.periods),
                        "scorer": b.scorer, "page": str((site.root / "boards" /
                                                         f"{b.slug}.html").resolve())}
                       for b in site.boards]}))
        return
    table = Table(title=f"leaderboard of {site.runs} run(s)")
    for column in ("board", "runs", "periods", "headline scorer", "leader (all periods)"):
        table.add_column(column, overflow="fold")
    for b in site.boards:
        leaders = b.leaders
        lead = "—"
        if leaders and leaders[0].overall.summary is not None:
            mean = leaders[0].overall.summary.mean or 0.0
            lead = ("tie: " if len(leaders) > 1 else "") + ", ".join(
                e.label for e in leaders) + f" ({mean:.3f})"
        periods = f"{len(b.periods)} {b.period_kind}s" if b.period_key else "none"
        table.add_row(escape(b.title), str(len(b.entries)), periods, escape(b.scorer or "—"),
                      escape(lead))
    out.print(table)
    out.print(f"open {site.index.resolve().as_uri()}", soft_wrap=True, markup=False,
              highlight=False)
