"""``freshwiki contradictions``: find the text Wikipedia editors tagged as contradictory."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from freshwiki.cli._common import err, out, progress
from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    from freshwiki.corpus import MiningReport, ReadReport

app = typer.Typer(help="Mine contradiction tags from dumps for WikiContradict annotation.",
                  no_args_is_help=True)


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return path.stat().st_size


@app.command("mine")
def contradictions_mine(
    dump: Annotated[Path, typer.Argument(
        help="A MediaWiki XML dump, articles or full history (.xml/.bz2/.gz/.xz), or a "
        "folder of them.")],
    output: Annotated[Path | None, typer.Option(
        "-o", "--output", help="JSONL file to write (atomically); default: stdout.")] = None,
    all_namespaces: Annotated[bool, typer.Option(
        help="Read every namespace, not only articles.")] = False,
    skip_bad_pages: Annotated[bool, typer.Option(
        help="Skip unreadable pages (each one reported) instead of stopping.")] = False,
    resolve: Annotated[bool, typer.Option(
        help="Read the dump again to find the articles Contradict-other tags name.")] = True,
    other_passages: Annotated[int, typer.Option(
        min=1, help="Passages of the other article kept per candidate, best first.")] = 3,
    site_url: Annotated[str, typer.Option(
        help="Base of each record's url (the wiki the dump comes from).")
    ] = "https://en.wikipedia.org/wiki/",
) -> None:
    """Every paragraph carrying an Inconsistent, Self-contradictory or Contradict-other tag.

    One JSON line per tag, laid out as a WikiContradict item awaiting annotation: title, url,
    paragraph_A (the clean paragraph with the tag's markup where it stood), paragraph_A_clean,
    tag, tagDate, tagReason, an empty annotationResult, and under "candidate" what was mined:
    section, tag type and parameters as written, the tagged sentence, neighbouring text, the
    revision (for histories: the latest carrying the tag, when it was first seen and removed)
    and, for Contradict-other, the other article's best-matching passages when the dump has it.
    """
    from freshwiki.corpus import annotation_lines, mine_contradictions, write_annotation_jsonl

    if not dump.exists():
        raise FreshwikiError(
            f"no such file or folder: {dump}",
            hint="pass a MediaWiki XML dump (pages-articles or pages-meta-history, plain or "
            ".bz2/.gz/.xz) or a folder of them.",
        )
    if output is not None and not output.parent.is_dir():
        raise FreshwikiError(
            f"cannot write {output}: folder {output.parent} does not exist",
            hint="create the folder first, or pass another -o path.",
        )
    total = _size(dump)
    with progress("{task.percentage:>3.0f}%", "{task.fields[found]} candidates") as bars:
        task = bars.add_task(f"mining {dump.name}", total=total or None, found=0)

        def update(stage: str, read: ReadReport, found: int) -> None:
            done = read.compressed_bytes_read or read.bytes_read
            bars.update(task, description=f"{stage}: {dump.name}", completed=min(done, total),
                        found=found)

        result = mine_contradictions(
            dump, namespaces=None if all_namespaces else {0}, skip_bad_pages=skip_bad_pages,
            resolve_others=resolve, other_passages=other_passages, on_progress=update,
        )
        bars.update(task, completed=total)
    if output is None:
        for line in annotation_lines(result.candidates, site_url=site_url):
            sys.stdout.write(line)
        sys.stdout.flush()
        _summary(result.report, None, err)
    else:
        write_annotation_jsonl(result.candidates, output, site_url=site_url)
        _summary(result.report, output, out)


def _summary(report: MiningReport, output: Path | None, console: Any) -> None:
    data = report.as_dict()
    where = f" → {escape(str(output))}" if output is not None else ""
    console.print(
        f"[green]✓[/green] {escape(data['source'])}: {data['candidates']} candidate(s){where}",
        highlight=False, soft_wrap=True)
    console.print(f"  read: {escape(data['read'])}", highlight=False, soft_wrap=True)
    console.print(
        f"  {data['revisions_cleaned']} revision(s) mention a contradiction template and were "
        f"cleaned; {data['revisions_without_tag']} of them carry none (e.g. "
        "{{Inconsistent citations}})", highlight=False, soft_wrap=True)
    for kind, count in data["by_type"].items():
        console.print(f"  {kind:<20} {count}", highlight=False)
    if data["by_template"]:
        console.print("  templates as written: " + ", ".join(
            f"{escape(name)} {count}" for name, count in data["by_template"].items()),
            highlight=False, soft_wrap=True)
    if data["others"]:
        console.print("  other articles: " + ", ".join(
            f"{count} {status}" for status, count in data["others"].items()), highlight=False)
    if data["tags_unattached"]:
        console.print(f"  [yellow]{data['tags_unattached']} tag(s) inside dropped content "
                      "(refs, galleries) were not mined[/yellow]")
    for fault in data["skipped_pages"]:
        console.print(f"  [yellow]skipped:[/yellow] {escape(fault)}", highlight=False,
                      soft_wrap=True)
