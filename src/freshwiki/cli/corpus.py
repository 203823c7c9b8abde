"""``freshwiki corpus``: ingest dumps and text files into the corpus store; show its size."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    pass
from freshwiki.cli._common import err, out, progress, state

app = typer.Typer(help="Build and inspect the Wikipedia corpus store.",
                         no_args_is_help=True)


@app.command("ingest")
def corpus_ingest(
    paths: Annotated[list[Path], typer.Argument(
        help="Dumps (.xml/.bz2/.gz, articles or history), JSONL, WikiExtractor folders, "
        "or {title: text} topic files.")],
    workers: Annotated[int, typer.Option(help="Processes for cleaning (0: one per core).")] = 0,
    skip_bad_pages: Annotated[bool, typer.Option(
        help="Skip unreadable pages (each one reported) instead of stopping.")] = False,
    all_namespaces: Annotated[bool, typer.Option(
        help="Keep every namespace, not only articles.")] = False,
    keep_tables: Annotated[bool, typer.Option(help="Keep tables as text rows.")] = False,
    keep_infobox: Annotated[bool, typer.Option(help="Keep infoboxes as text rows.")] = False,
    keep_text: Annotated[bool, typer.Option(
        help="Store each revision's wikitext (needed to re-process; large for histories).")
    ] = True,
    engine: Annotated[str, typer.Option(
        help="local (process pool) or ray (Ray tasks; a cluster via --ray-address).")
    ] = "local",
    ray_address: Annotated[str | None, typer.Option(
        help="Ray cluster address for --engine ray [RAY_ADDRESS].")] = None,
    max_in_flight: Annotated[int, typer.Option(
        min=0, help="Batches of 16 revisions out at most, bounding memory (0: 2 per worker, or "
        "per CPU of the Ray cluster).")] = 0,
) -> None:
    """Read sources into the corpus store: clean text, sections, tags, passages."""
    from freshwiki.corpus.ingest import IngestOptions, ingest
    from freshwiki.corpus.store import CorpusStore

    settings = state.resolved().settings
    options = IngestOptions(keep_tables=keep_tables, keep_infobox=keep_infobox,
                            keep_text=keep_text)
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise FreshwikiError(
            f"no such file or folder: {', '.join(map(str, missing))}",
            hint="pass dump files, JSONL files, WikiExtractor folders or topic JSON files.",
        )
    with CorpusStore(settings.corpus_path) as store:
        for path in paths:
            with progress("{task.completed} revisions", "{task.fields[mb]:.1f} MB", bar=False,
                          spinner=True, elapsed=True) as bars:
                task = bars.add_task(path.name, total=None, mb=0.0)

                def update(done: int, nbytes: int, task: Any = task) -> None:
                    bars.update(task, completed=done, mb=nbytes / 1e6)

                report = ingest(path, store, options=options, workers=workers or None,
                                skip_bad_pages=skip_bad_pages,
                                namespaces=None if all_namespaces else {0},
                                on_progress=update, engine=engine, ray_address=ray_address,
                                max_in_flight=max_in_flight or None)
            out.print(
                f"[green]✓[/green] {path}: {report.revisions_added} revisions added, "
                f"{report.revisions_skipped_existing} already stored, "
                f"{report.redirects_skipped} redirects skipped, {report.passages} passages",
                soft_wrap=True,
            )
            if report.bad_pages:
                err.print(f"[yellow]{len(report.bad_pages)} bad page(s) skipped:[/yellow]")
                for line in report.bad_pages:
                    err.print(f"  {escape(line)}", highlight=False)
        counts = store.counts()
    out.print(f"corpus {settings.corpus_path}: " + ", ".join(f"{v} {k}" for k, v in
                                                             counts.items()), soft_wrap=True)


@app.command("info")
def corpus_info(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show what the corpus store holds."""
    from freshwiki.corpus.store import CorpusStore

    settings = state.resolved().settings
    if not settings.corpus_path.exists():
        raise FreshwikiError(
            f"no corpus at {settings.corpus_path}",
            hint="build one with `freshwiki corpus ingest PATH`.",
        )
    with CorpusStore(settings.corpus_path) as store:
        counts = store.counts()
    if as_json:
        out.print_json(json.dumps({"path": str(settings.corpus_path), **counts}))
        return
    out.print(f"corpus {settings.corpus_path}")
    for name, value in counts.items():
        out.print(f"  {name:10} {value}")
