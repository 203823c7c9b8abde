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

_FALLBACKS_SHOWN = 10
"""Fallback pages an ingest names on the terminal; `corpus info --fallbacks` has them all."""


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
                f"{report.redirects_skipped} redirects skipped, {report.passages} passages, "
                f"{report.fallback_revisions} revisions with regex fallback "
                f"({report.fallback_chunks} chunks)",
                soft_wrap=True,
            )
            if report.fallback_pages:
                err.print(f"[yellow]{report.fallback_revisions} revision(s) partly cleaned by "
                          "the regex fallback (the parser failed on these chunks):[/yellow]")
                for line in report.fallback_pages[:_FALLBACKS_SHOWN]:
                    err.print(f"  {escape(line)}", highlight=False)
                if len(report.fallback_pages) > _FALLBACKS_SHOWN:
                    err.print(f"  ... and {len(report.fallback_pages) - _FALLBACKS_SHOWN} "
                              "more (`freshwiki corpus info --fallbacks` lists them)")
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
    list_fallbacks: Annotated[bool, typer.Option(
        "--fallbacks", help="Also list every stored revision the regex fallback cleaned.")
    ] = False,
) -> None:
    """Show what the corpus store holds.

    ``regex fallback`` counts the stored revisions (and their chunks) whose wikitext the
    parser failed on, so the cleaner stripped those chunks with regexes instead: text kept,
    tables and most templates dropped. It describes what the store holds, not how many
    ingests ran: ingesting the same pages again skips them and adds nothing.
    """
    from freshwiki.corpus.store import CorpusStore

    settings = state.resolved().settings
    if not settings.corpus_path.exists():
        raise FreshwikiError(
            f"no corpus at {settings.corpus_path}",
            hint="build one with `freshwiki corpus ingest PATH`.",
        )
    with CorpusStore(settings.corpus_path) as store:
        counts = store.counts()
        fallback = store.fallback_summary()
        listed = list(store.fallbacks()) if list_fallbacks else []
    if as_json:
        payload: dict[str, Any] = {"path": str(settings.corpus_path), **counts,
                                   "fallback": fallback.as_dict()}
        if list_fallbacks:
            payload["fallback_revisions"] = [
                {"revision_id": f.revision_id, "page_id": f.page_id, "title": f.title,
                 "reasons": [x.reason for x in f.fallbacks],
                 "chunk_chars": [x.chunk_chars for x in f.fallbacks]}
                for f in listed
            ]
        out.print_json(json.dumps(payload))
        return
    out.print(f"corpus {settings.corpus_path}")
    for name, value in counts.items():
        out.print(f"  {name:10} {value}")
    reasons = ", ".join(f"{k}: {v}" for k, v in fallback.reasons.items())
    out.print(f"  regex fallback: {fallback.revisions} revisions, {fallback.chunks} chunks"
              + (f" ({reasons})" if reasons else ""), soft_wrap=True)
    if fallback.uncounted_revisions:
        out.print(f"  ({fallback.uncounted_revisions} revisions were stored before fallbacks "
                  "were recorded and are not counted)")
    for f in listed:
        out.print(f"    {escape(f.title)} (revision {f.revision_id}): "
                  + ", ".join(f"{x.reason} ({x.chunk_chars} chars)" for x in f.fallbacks),
                  highlight=False, soft_wrap=True)
