"""``freshwiki config``: show the settings in force and where each value came from."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from freshwiki.config import describe

if TYPE_CHECKING:
    pass
from freshwiki.cli._common import out, state

app = typer.Typer(help="Inspect configuration.", no_args_is_help=True)


@app.command("show")
def config_show(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show every setting, its value and where the value came from."""
    resolved = state.resolved()
    rows = describe(resolved)
    if as_json:
        out.print_json(json.dumps({n: {"value": v, "source": s} for n, v, s, _ in rows}))
        return
    table = Table(title=f"config file: {resolved.config_file or '(none)'}")
    for col in ("setting", "value", "source", "meaning"):
        table.add_column(col)
    for name, value, source, help_text in rows:
        table.add_row(name, value, source, help_text)
    out.print(table)
    out.print("override with FRESHWIKI_<SETTING> or a freshwiki.toml (flat keys).")
