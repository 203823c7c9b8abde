"""The root of the ``freshwiki`` command: global options, and every command group wired in.

This is the only module that imports the command modules; each of them imports only
:mod:`freshwiki.cli._common` and the library, so no command module can import another or
import this one back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from freshwiki import __version__
from freshwiki.cli import (
    ask,
    changes,
    chat,
    config,
    contradictions,
    corpus,
    edits,
    eval_set,
    evaluation,
    growover,
    index,
    leaderboard,
    llm,
    models,
    notes,
    runs,
    search,
    serve,
)
from freshwiki.cli._common import err, out, state
from freshwiki.errors import FreshwikiError

app = typer.Typer(
    help="freshwiki: LLMs and knowledge that is recent, changing or contradictory.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

# Top-level commands first, then the groups: `freshwiki --help` lists them in this order.
app.command()(ask.ask)
app.command()(search.search)
app.command()(serve.serve)
app.command("eval")(evaluation.eval_command)
app.command("report")(evaluation.report)
app.command("leaderboard")(leaderboard.leaderboard)
app.add_typer(eval_set.app, name="eval-set")
app.add_typer(runs.app, name="runs")
app.add_typer(models.app, name="models")
app.add_typer(config.app, name="config")
app.add_typer(llm.app, name="llm")
app.add_typer(corpus.app, name="corpus")
app.add_typer(contradictions.app, name="contradictions")
app.add_typer(index.app, name="index")
app.add_typer(chat.app, name="chat")
app.add_typer(changes.app, name="changes")
app.add_typer(edits.app, name="edits")
app.add_typer(growover.app, name="growover")
app.add_typer(notes.app, name="notes")


def _version(value: bool) -> None:
    if value:
        out.print(f"freshwiki {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    home: Annotated[
        Path | None, typer.Option(help="Folder for stores, caches and runs [FRESHWIKI_HOME].")
    ] = None,
    models_dir: Annotated[
        Path | None, typer.Option(help="Folder for model weights [FRESHWIKI_MODELS_DIR].")
    ] = None,
    config: Annotated[
        Path | None, typer.Option(help="A freshwiki.toml to read [FRESHWIKI_CONFIG].")
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show version.")
    ] = False,
) -> None:
    """Global options apply to every command."""
    state.reset({"home": home, "models_dir": models_dir}, config)


def main() -> None:
    """Entry point: run the app, turning expected errors into a message and exit code 2."""
    try:
        app()
    except FreshwikiError as exc:
        err.print(f"[bold red]error:[/bold red] {escape(exc.message)}", highlight=False)
        if exc.hint:
            err.print(f"[yellow]hint:[/yellow] {escape(exc.hint)}", highlight=False)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        err.print("[red]interrupted[/red]")
        raise SystemExit(130) from None
