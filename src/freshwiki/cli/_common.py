"""What every command module shares: consoles, global options, progress, option parsing.

Command modules import this and the library, never each other or the root, so the root
(:mod:`freshwiki.cli._root`) is the only module that knows them all, and nothing imports back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from freshwiki.config import ResolvedSettings, load_settings
from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    from freshwiki.chat import Mode
    from freshwiki.config import Settings
    from freshwiki.corpus.store import CorpusStore
    from freshwiki.retrieval import HybridIndex

ATTRIBUTION = "Text from Wikipedia, CC BY-SA 4.0."

out = Console()
err = Console(stderr=True)


@dataclass
class State:
    """The global options (``--home``, ``--models-dir``, ``--config``), set by the root callback.

    Settings are resolved once per invocation, on first use, so a command that needs none
    never reads the configuration.
    """

    overrides: dict[str, Any] = field(default_factory=dict)
    config_file: Path | None = None
    _resolved: ResolvedSettings | None = None

    def resolved(self, **extra: Any) -> ResolvedSettings:
        """The settings, with ``extra`` flags (e.g. ``model=``) on top when given."""
        if extra:
            return load_settings({**self.overrides, **extra}, config_file=self.config_file)
        if self._resolved is None:
            self._resolved = load_settings(self.overrides, config_file=self.config_file)
        return self._resolved

    def reset(self, overrides: dict[str, Any], config_file: Path | None) -> None:
        """Start an invocation with these global options."""
        self.overrides = overrides
        self.config_file = config_file
        self._resolved = None


state = State()


def settings(**extra: Any) -> Settings:
    """Shorthand for ``state.resolved(**extra).settings``."""
    return state.resolved(**extra).settings


def progress(*columns: str | ProgressColumn, bar: bool = True, bar_width: int | None = 40,
             spinner: bool = False, elapsed: bool = False, transient: bool = False) -> Progress:
    """The progress display of every command, on stderr (stdout stays for results).

    Always the task's description first; then a spinner (``spinner``, for work of unknown
    size) or a bar; then ``columns`` (a string is a :class:`~rich.progress.TextColumn`
    format); then the time remaining, or the time elapsed (``elapsed``).
    """
    parts: list[ProgressColumn] = [SpinnerColumn()] if spinner else []
    parts.append(TextColumn("{task.description}"))
    if bar:
        parts.append(BarColumn(bar_width=bar_width))
    parts += [TextColumn(c) if isinstance(c, str) else c for c in columns]
    parts.append(TimeElapsedColumn() if elapsed else TimeRemainingColumn())
    return Progress(*parts, console=err, transient=transient)


def open_corpus_or_fail(settings: Settings) -> CorpusStore:
    """The corpus store, or an error saying how to build one."""
    from freshwiki.corpus.store import CorpusStore

    if not settings.corpus_path.exists():
        raise FreshwikiError(
            f"no corpus at {settings.corpus_path}",
            hint="build one first: `freshwiki corpus ingest PATH` (e.g. a topics file or dump).",
        )
    return CorpusStore(settings.corpus_path)


def open_index(settings: Settings, name: str | None) -> HybridIndex:
    """The named index, or the user's `main`, or the default corpus (built once, with a bar)."""
    from freshwiki.retrieval import (
        DEFAULT_INDEX,
        has_index,
        open_search_index,
        resolve_index_name,
    )

    name = resolve_index_name(settings, name)
    if name != DEFAULT_INDEX or has_index(settings, DEFAULT_INDEX):
        return open_search_index(settings, name)
    err.print("[bold]Building the default corpus once[/bold]: 10,419 Wikipedia lead paragraphs "
              f"from {settings.data_dir}/wikipedia/topics (a few minutes; later runs load it).",
              soft_wrap=True)
    with progress("{task.completed}/{task.total}") as bars:
        task = bars.add_task("default corpus", total=None)

        def report(stage: str, done: int, of: int | None) -> None:
            bars.update(task, description=stage, completed=done, total=of)

        return open_search_index(settings, name, progress=report)


def chat_mode(mode: str) -> Mode:
    """``--mode``: ``checked`` or ``wikichat``; an old name (fast, full) with a notice."""
    from freshwiki.chat import ChatError, resolve_mode

    try:
        resolved, notice = resolve_mode(mode)
    except ChatError as exc:
        raise typer.BadParameter(f"{mode!r} is not checked or wikichat (old names: fast, "
                                 "full)", param_hint="--mode") from exc
    if notice:
        err.print(f"[yellow]note:[/yellow] {notice}", soft_wrap=True)
    return resolved


def key_values(pairs: list[str] | None, flag: str) -> dict[str, Any]:
    """``KEY=VALUE`` flags → a dict; a value that parses as JSON (3, true, 0.5) is typed."""
    values: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint=flag)
        try:
            values[key.strip()] = json.loads(raw)
        except ValueError:
            values[key.strip()] = raw
    return values

