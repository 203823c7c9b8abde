"""``freshwiki notes``: Community Notes downloads to labelled and balanced datasets.

``load`` reads a
folder of downloads (streaming the ratings, which run to tens of gigabytes, behind a progress
bar) and writes every labelled note; ``build`` balances that file per period. Both print the
counts a user needs to judge the data (per label and period, exclusions, skipped rows) as a
table or, with ``--json``, for scripts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.progress import (
    DownloadColumn,
    TaskID,
    TransferSpeedColumn,
)
from rich.table import Table

from freshwiki.changes.notes import (
    LABELS,
    PAPER_FILTERS,
    PERIODS,
    BalancedDataset,
    FilterReport,
    LoadReport,
    build_balanced,
    counts_by_period,
    filter_notes,
    load_notes,
    read_jsonl,
    write_jsonl,
    write_summary,
)
from freshwiki.cli._common import err, out, progress, settings

if TYPE_CHECKING:
    from freshwiki.config import Settings

LABELLED_FILE = "labelled.jsonl"
REPORT_FILE = "load-report.json"

app = typer.Typer(
    help="Community Notes downloads as labelled datasets (helpful / not helpful per month).",
    no_args_is_help=True,
)


def notes_dir(settings: Settings) -> Path:
    """Where datasets go by default: beside every other store, under the freshwiki home."""
    return settings.home / "notes"


def balanced_name(period: str, seed: int, *, filtered: bool = True) -> str:
    """File name of a balanced dataset, so datasets of other periods or seeds sit side by side.

    A dataset built without the paper's filters gets its own name (``-unfiltered``), so it
    never replaces the filtered one the benchmark reads by default.
    """
    return f"balanced-{period}-seed{seed}{'' if filtered else '-unfiltered'}.jsonl"


def _print_filters(report: FilterReport) -> None:
    if not report.filters:
        err.print("[yellow]no filters: notes on media posts and in other languages are kept "
                  "(the paper drops them)[/yellow]", soft_wrap=True, highlight=False)
        return
    excluded = ", ".join(f"{n} {escape(reason)}" for reason, n in
                         sorted(report.excluded.items())) or "none"
    evidence = "; ".join(f"{name}: " + ", ".join(f"{escape(src)} {n}" for src, n in
                                                  sorted(counts.items()))
                         for name, counts in report.evidence.items())
    out.print(f"filters ({', '.join(report.filters)}): {report.kept} of {report.read} kept; "
              f"excluded: {excluded}", soft_wrap=True, highlight=False)
    out.print(f"decided from: {evidence}", soft_wrap=True, highlight=False)


def _check_period(period: str) -> None:
    if period not in PERIODS:
        raise typer.BadParameter(f"must be one of {', '.join(PERIODS)}, got {period!r}",
                                 param_hint="--period")


def _counts_table(title: str, counts: dict[str, dict[str, int]]) -> Table:
    table = Table(title=title)
    for col in ("period", *LABELS, "total"):
        table.add_column(col, justify="left" if col == "period" else "right")
    totals = dict.fromkeys(LABELS, 0)
    for key, by_label in counts.items():
        table.add_row(key, *(str(by_label[label]) for label in LABELS),
                      str(sum(by_label.values())))
        for label in LABELS:
            totals[label] += by_label[label]
    table.add_row("[bold]all[/bold]", *(f"[bold]{totals[label]}[/bold]" for label in LABELS),
                  f"[bold]{sum(totals.values())}[/bold]")
    return table


def _print_report(report: LoadReport) -> None:
    if report.excluded:
        out.print("excluded (no label): " + ", ".join(
            f"{n} {escape(reason)}" for reason, n in sorted(report.excluded.items())),
            soft_wrap=True)
    if report.status_sources:
        out.print("statuses from: " + ", ".join(
            f"{source} {n}" for source, n in sorted(report.status_sources.items())),
            soft_wrap=True)
    out.print(f"ratings: {report.ratings} rows read, {report.ratings_counted} counted into the "
              "labelled notes' votes", soft_wrap=True)
    for file in report.files:
        if file.note:
            err.print(f"[dim]{escape(file.name)}: {escape(file.note)}[/dim]", soft_wrap=True,
                      highlight=False)
        if file.skipped:
            reasons = ", ".join(f"{n} {escape(r)}" for r, n in sorted(file.skipped.items()))
            err.print(f"[yellow]{escape(file.name)} ({file.kind}): {sum(file.skipped.values())} "
                      f"row(s) skipped:[/yellow] {reasons}", soft_wrap=True, highlight=False)
    if report.posts is not None and report.posts.skipped:
        reasons = ", ".join(f"{n} {escape(r)}" for r, n in sorted(report.posts.skipped.items()))
        err.print(f"[yellow]posts file: rows skipped:[/yellow] {reasons}", soft_wrap=True,
                  highlight=False)
    for warning in report.warnings:
        err.print(f"[yellow]warning:[/yellow] {escape(warning)}", soft_wrap=True,
                  highlight=False)


@app.command("load")
def notes_load(
    folder: Annotated[Path, typer.Argument(
        help="Folder of Community Notes downloads: notes, ratings, noteStatusHistory and/or "
        "scoredNotes (.tsv, gzip or zip; recognised by their header, any file name).")],
    posts: Annotated[Path | None, typer.Option(
        help="Posts file (CSV, TSV or JSONL: tweetId/postId/id, text, date) joined on the "
        "note's tweetId. Without it the dataset is note-only.")] = None,
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Folder to write labelled.jsonl and load-report.json "
        "[default: HOME/notes].")] = None,
    period: Annotated[str, typer.Option(help="Counts per month, week or year.")] = "month",
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable counts.")] = False,
) -> None:
    """Label every note currently rated helpful or not helpful; count per label and period."""
    _check_period(period)
    target = out_dir or notes_dir(settings())
    with progress(DownloadColumn(), TransferSpeedColumn(), transient=True) as bars:
        tasks: dict[str, TaskID] = {}

        def update(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = bars.add_task(Path(name).name, total=total)
            bars.update(tasks[name], completed=done, total=total)

        result = load_notes(folder, posts, on_progress=update)
    labelled_path = target / LABELLED_FILE
    write_jsonl(result.records, labelled_path)
    counts = counts_by_period(result.records, period)
    summary: dict[str, Any] = {
        "labelled": str(labelled_path),
        "records": len(result.records),
        "period": period,
        "counts": counts,
        **result.report.to_dict(),
    }
    write_summary(summary, target / REPORT_FILE)
    if as_json:
        out.print_json(json.dumps(summary))
        return
    out.print(_counts_table(f"labelled notes per {period} ({result.report.regime})", counts))
    _print_report(result.report)
    out.print(f"[green]✓[/green] {len(result.records)} labelled notes: {labelled_path}",
              soft_wrap=True, highlight=False)
    out.print(f"balance per {period} with: freshwiki notes build --period {period} --seed 0"
              + (f" --out {target}" if out_dir else ""), soft_wrap=True, highlight=False)


def _balance_table(dataset: BalancedDataset) -> Table:
    table = Table(title=f"balanced per {dataset.period}, seed {dataset.seed}")
    for col in ("period", "helpful", "not_helpful", "kept per label", ""):
        table.add_column(col, justify="left" if col in ("period", "") else "right")
    for p in dataset.periods:
        status = "" if p.balanced else "[yellow]one label empty: not in dataset[/yellow]"
        table.add_row(p.period, str(p.helpful), str(p.not_helpful), str(p.kept_per_label),
                      status)
    return table


@app.command("build")
def notes_build(
    source: Annotated[Path | None, typer.Option(
        "--from", help="Labelled notes from `notes load` [default: OUT/labelled.jsonl].")
    ] = None,
    period: Annotated[str, typer.Option(help="Balance per month, week or year.")] = "month",
    seed: Annotated[int, typer.Option(help="Which notes of the larger label are kept.")] = 0,
    paper_filters: Annotated[bool, typer.Option(
        "--paper-filters/--no-paper-filters",
        help="Drop notes on posts with media and on posts not in English, as the HelloFresh "
        "paper does, before balancing.")] = True,
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Folder of the labelled notes and the balanced dataset "
        "[default: HOME/notes].")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable summary.")] = False,
) -> None:
    """Filter as the paper, then balance: equal helpful and not helpful in every period."""
    _check_period(period)
    target = out_dir or notes_dir(settings())
    records, filtered = filter_notes(read_jsonl(source or target / LABELLED_FILE),
                                     PAPER_FILTERS if paper_filters else ())
    dataset = build_balanced(records, period=period, seed=seed)
    path = target / balanced_name(period, seed, filtered=paper_filters)
    write_jsonl(dataset.records, path)
    summary = {"dataset": str(path), "filtering": filtered.to_dict(), **dataset.summary()}
    write_summary(summary, path.with_suffix(".json"))
    if as_json:
        out.print_json(json.dumps(summary))
        return
    _print_filters(filtered)
    out.print(_balance_table(dataset))
    dropped = dataset.unbalanced_periods
    if dropped:
        err.print(f"[yellow]{len(dropped)} period(s) have notes of one label only and are not "
                  f"in the dataset:[/yellow] {', '.join(p.period for p in dropped)}",
                  soft_wrap=True, highlight=False)
    out.print(f"[green]✓[/green] {len(dataset.records)} notes: {path}", soft_wrap=True,
              highlight=False)
