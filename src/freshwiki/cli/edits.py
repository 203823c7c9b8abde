"""``freshwiki edits``: label Wikipedia edit streams and build balanced datasets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from freshwiki.cli._common import ATTRIBUTION, err, out, progress, settings
from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    pass

app = typer.Typer(
    help="Wikipedia edit streams → paragraph edits labelled accepted/rejected (HelloFresh).",
    no_args_is_help=True,
)

LABELLED_FILE = "labelled.jsonl"
DISCARDED_FILE = "discarded.jsonl"
SUMMARY_FILE = "summary.json"


def _edits_home() -> Path:
    return settings().home / "edits"


@app.command("label")
def edits_label(
    paths: Annotated[list[Path], typer.Argument(
        help="pages-meta-history XML dumps (.xml, .bz2, .gz, .xz), MediaWiki API JSON "
        "exports, or folders of them.")],
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Folder for labelled.jsonl, discarded.jsonl and summary.json "
        "[default: FRESHWIKI_HOME/edits].")] = None,
    all_namespaces: Annotated[bool, typer.Option(
        help="Label pages of every namespace (talk, user...), not only articles.")] = False,
    skip_bad_pages: Annotated[bool, typer.Option(
        help="Skip malformed pages of a dump (counted) instead of stopping.")] = False,
    min_chars: Annotated[int, typer.Option(
        help="An edit must change more than this many characters of text.")] = 50,
    revert_window: Annotated[int, typer.Option(
        help="Revisions before and after an edit within which identity reverts count.")] = 15,
    as_json: Annotated[bool, typer.Option("--json", help="Print the counts as JSON.")] = False,
) -> None:
    """Label every substantial edit accepted or rejected; print counts per label."""
    from freshwiki.changes.edits import (
        DISCARD_REASONS,
        LabelledEdit,
        LabelOptions,
        LabelReport,
        RecordWriter,
        history_files,
        label_history,
    )
    from freshwiki.corpus import ReadReport

    if min_chars < 0 or revert_window < 1:
        raise FreshwikiError(f"--min-chars {min_chars} / --revert-window {revert_window} "
                             "out of range", hint="use --min-chars >= 0 and --revert-window >= 1")
    files = history_files(paths)  # fails now, naming a missing path, before any output
    target = out_dir if out_dir is not None else _edits_home()
    report = LabelReport()
    read_report = ReadReport()
    options = LabelOptions(min_chars=min_chars, revert_window=revert_window)
    with (
        RecordWriter(target / LABELLED_FILE) as labelled,
        RecordWriter(target / DISCARDED_FILE) as discarded,
        progress("{task.completed:,} revisions", "{task.fields[tally]}", bar=False, spinner=True,
                 elapsed=True, transient=as_json) as bars,
    ):
        task = bars.add_task(f"labelling {len(files)} file(s)", total=None, tally="")

        def update(file: Path, done: int) -> None:
            if done % 50 == 0:
                bars.update(task, completed=done, description=file.name,
                            tally=f"{report.accepted} accepted, {report.rejected} rejected")

        for outcome in label_history(files, options=options, report=report,
                                     namespaces=None if all_namespaces else {0},
                                     skip_bad_pages=skip_bad_pages, read_report=read_report,
                                     on_revision=update):
            (labelled if isinstance(outcome, LabelledEdit) else discarded).write(outcome)
        bars.update(task, completed=report.revisions,
                    tally=f"{report.accepted} accepted, {report.rejected} rejected")
    summary: dict[str, Any] = {
        **report.as_dict(),
        "files": [str(f) for f in files],
        "pages_skipped_as_faulty": read_report.pages_skipped,
        "labelled_path": str(target / LABELLED_FILE),
        "discarded_path": str(target / DISCARDED_FILE),
    }
    (target / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    if as_json:
        out.print_json(json.dumps(summary))
        return
    table = Table(title=f"{report.revisions:,} revisions of {report.pages:,} pages")
    table.add_column("label / reason")
    table.add_column("count", justify="right")
    table.add_column("meaning")
    table.add_row("[green]accepted[/green]", str(report.accepted), "kept for N later edits")
    table.add_row("[red]rejected[/red]", str(report.rejected), "reverted, and stayed reverted")
    for reason, count in sorted(report.discarded.items(), key=lambda kv: (-kv[1], kv[0])):
        table.add_row(f"[dim]{reason}[/dim]", str(count), DISCARD_REASONS.get(reason, ""))
    out.print(table)
    if read_report.skipped:
        err.print(f"[yellow]{read_report.pages_skipped} faulty page(s) skipped:[/yellow]")
        for fault in read_report.skipped:
            err.print(f"  {escape(str(fault))}", highlight=False)
    out.print(f"labelled: {target / LABELLED_FILE}\ndiscarded: {target / DISCARDED_FILE}",
              soft_wrap=True, markup=False, highlight=False)
    out.print(f"[dim]{ATTRIBUTION}[/dim]")


@app.command("build")
def edits_build(
    period: Annotated[str, typer.Option(
        help="Balance per day, week (ISO), month, year, or all.")] = "week",
    seed: Annotated[int, typer.Option(help="Seed of the downsampling (same seed, same "
                                      "dataset).")] = 0,
    input_path: Annotated[Path | None, typer.Option(
        "--input", help="labelled.jsonl to read [default: FRESHWIKI_HOME/edits/"
        "labelled.jsonl].")] = None,
    out_path: Annotated[Path | None, typer.Option(
        "--out", help="File to write [default: FRESHWIKI_HOME/edits/"
        "balanced-PERIOD-seedN.jsonl].")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the counts as JSON.")] = False,
) -> None:
    """Make a balanced dataset: per period, equal numbers of accepted and rejected edits."""
    from freshwiki.changes.edits import (
        PERIODS,
        LabelledEdit,
        Period,
        build_balanced,
        read_jsonl,
        write_balanced,
    )

    if period not in PERIODS:
        raise FreshwikiError(f"unknown --period {period!r}",
                             hint=f"use one of: {', '.join(PERIODS)}")
    chosen: Period = period
    source = input_path if input_path is not None else _edits_home() / LABELLED_FILE
    labelled = [r for r in read_jsonl(source) if isinstance(r, LabelledEdit)]
    dataset = build_balanced(labelled, period=chosen, seed=seed)
    target = out_path if out_path is not None else (
        _edits_home() / f"balanced-{period}-seed{seed}.jsonl")
    written = write_balanced(dataset, target, period=chosen, seed=seed)
    rows = {key: len(items) // 2 for key, items in dataset.items()}
    summary = {"input": str(source), "output": str(target), "period": period, "seed": seed,
               "labelled_read": len(labelled), "records": written, "per_class": rows}
    if as_json:
        out.print_json(json.dumps(summary))
        return
    table = Table(title=f"balanced per {period}, seed {seed}")
    table.add_column(period)
    table.add_column("accepted", justify="right")
    table.add_column("rejected", justify="right")
    for key, half in rows.items():
        table.add_row(key, str(half), str(half))
    out.print(table)
    if not dataset:
        err.print(f"[yellow]no {period} has both accepted and rejected edits among the "
                  f"{len(labelled)} labelled: the dataset is empty[/yellow]")
    out.print(f"{written} records → {target}", soft_wrap=True, markup=False, highlight=False)
