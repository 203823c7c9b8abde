"""``freshwiki growover``: build and maintain a GrowOVER living benchmark from Wikipedia dumps.

``growover build`` generates the first snapshot and updates it at every later cut;
``growover update`` adds one snapshot to an existing dataset. Evaluation is the ordinary
``freshwiki eval growover --benchmark-option name=NAME --system ralm``. Kept apart from
``cli.py``; the global options (``--home``...) come from ``cli.py``'s state, imported when a
command runs. Other modules may add commands to :data:`growover_app`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

if TYPE_CHECKING:
    import datetime as dt

    from freshwiki.benchmarks.growover import Dataset, SnapshotInfo
    from freshwiki.config import Settings

ATTRIBUTION = "Text from Wikipedia, CC BY-SA 4.0."

growover_app = typer.Typer(
    help="GrowOVER: a QA and dialogue benchmark generated from Wikipedia snapshots and "
    "maintained as the articles change.",
    no_args_is_help=True,
)


def _consoles() -> tuple[Console, Console]:
    from freshwiki import cli

    return cli.out, cli.err


def _settings(model: str | None = None) -> Settings:
    from freshwiki import cli

    if model is not None:
        return cli._state.resolved(model=model).settings
    return cli._state.resolved().settings


@contextmanager
def _progress(err: Console, quiet: bool) -> Iterator[Callable[[str, int, int | None], None]]:
    """A rich progress bar on stderr, one line per stage (snapshot date, index)."""
    if quiet:
        yield lambda _what, _done, _total: None
        return
    bars = Progress(TextColumn("{task.description}"), BarColumn(bar_width=16),
                    MofNCompleteColumn(), TimeElapsedColumn(), console=err, transient=False)
    tasks: dict[str, Any] = {}

    def update(what: str, done: int, total: int | None) -> None:
        if what not in tasks:
            tasks[what] = bars.add_task(what, total=total)
        bars.update(tasks[what], completed=done, total=total)

    with bars:
        yield update


def _cuts(sources: list[Path], cuts: str | None, every: str | None, start: str | None,
          end: str | None) -> list[dt.datetime] | None:
    from freshwiki.benchmarks.growover import DatasetError
    from freshwiki.changes.snapshots import monthly_cuts, parse_cut
    from freshwiki.corpus import ARTICLE_NAMESPACES, iter_revisions

    if cuts and every:
        raise typer.BadParameter("give --cuts or --every, not both", param_hint="--cuts")
    if every not in (None, "month"):
        raise typer.BadParameter(f"{every!r}: only `month` is supported", param_hint="--every")
    if cuts:
        return [parse_cut(c) for c in cuts.split(",") if c.strip()]
    if every is None:
        return None
    lo, hi = (parse_cut(start) if start else None), (parse_cut(end) if end else None)
    if lo is None or hi is None:
        stamps = [r.timestamp for p in sources
                  for r in iter_revisions(p, namespaces=ARTICLE_NAMESPACES)]
        if not stamps:
            raise DatasetError("the sources hold no article revision",
                               hint="are they pages-meta-history dumps of articles?")
        lo, hi = lo or min(stamps), hi or max(stamps)
    return monthly_cuts(lo, hi)


def _report(dataset: Dataset, out: Console, as_json: bool,
            infos: list[SnapshotInfo] | None = None) -> None:
    shown = infos if infos is not None else dataset.snapshots
    if as_json:
        out.print_json(json.dumps({"path": str(dataset.root), "name": dataset.root.name,
                                   "snapshots": [s.to_dict() for s in shown]}))
        return
    table = Table(title=f"GrowOVER dataset {dataset.root.name}")
    columns = ("snapshot", "pages", "qa init/unch/new/chg", "dialogues init/unch/new",
               "skips")
    for col in columns:
        table.add_column(col, justify="left" if col == "snapshot" else "right")
    for s in shown:
        c = s.counts
        table.add_row(
            s.label + ("" if s.complete else " (incomplete)"), str(c.get("pages", "-")),
            "/".join(str(c.get(f"qa_{t}", 0)) for t in ("initial", "unchanged", "new",
                                                         "changed")),
            "/".join(str(c.get(f"dialogue_{t}", 0)) for t in ("initial", "unchanged", "new")),
            str(c.get("skips", "-")))
    out.print(table)
    out.print(f"dataset: {dataset.root}", soft_wrap=True, markup=False, highlight=False)
    out.print(ATTRIBUTION, style="dim")


def _kinds(value: str) -> list[Any]:
    from freshwiki.benchmarks.growover import KINDS

    kinds = [k.strip() for k in value.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        raise typer.BadParameter(f"{value!r}: kinds are {', '.join(KINDS)}", param_hint="--kinds")
    return [k for k in KINDS if k in kinds]


@growover_app.command("build")
def build(
    sources: Annotated[list[Path], typer.Argument(
        help="HISTORY.xml (pages-meta-history; several files are merged per page), or two "
        "or more dumps, oldest first (one snapshot each).", show_default=False)],
    name: Annotated[str, typer.Option(help="Dataset name (folder under HOME/growover).")],
    cuts: Annotated[str | None, typer.Option(
        help="Comma-separated cut dates for history sources (YYYY-MM-DD = end of that day).")
    ] = None,
    every: Annotated[str | None, typer.Option(
        help="`month`: a cut at the end of every month between --from and --to.")] = None,
    start: Annotated[str | None, typer.Option("--from", help="First cut for --every.")] = None,
    end: Annotated[str | None, typer.Option("--to", help="Last cut for --every.")] = None,
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="Generating model spec (default: the configured model).")] = None,
    seed: Annotated[int, typer.Option(help="KMeans seed for paragraph selection.")] = 0,
    kinds: Annotated[str, typer.Option(help="Instance kinds: qa,dialogue.")] = "qa,dialogue",
    title: Annotated[list[str] | None, typer.Option(
        "--title", help="Only this article (repeatable).")] = None,
    use_judge: Annotated[bool, typer.Option(
        "--judge/--no-judge", help="Ask the model about sentence pairs similarity cannot "
        "decide (slow); without, such sentences are left out and recorded.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the snapshots as JSON.")
                       ] = False,
) -> None:
    """Generate snapshot 0 and update it at each later cut; re-running resumes."""
    from freshwiki.benchmarks.growover import build_dataset, datasets_dir

    chosen_kinds = _kinds(kinds)
    cut_list = _cuts(sources, cuts, every, start, end)
    settings = _settings(model)
    out, err = _consoles()
    root = datasets_dir(settings.home) / name
    dataset = _run(settings, err, as_json, lambda llm, encoder, judge, progress: build_dataset(
        root, sources, llm=llm, model_spec=settings.model, encoder=encoder, cuts=cut_list,
        judge=judge, seed=seed, kinds=chosen_kinds, titles=set(title) if title else None,
        progress=progress, embedder=encoder), use_judge)
    _report(dataset, out, as_json)


@growover_app.command("update")
def update(
    name: Annotated[str, typer.Argument(help="Dataset name (folder under HOME/growover).")],
    source_or_cut: Annotated[str, typer.Argument(
        help="A new dump (one snapshot), or a later cut date of the dataset's history.")],
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="Generating model spec; must be the dataset's.")] = None,
    title: Annotated[list[str] | None, typer.Option(
        "--title", help="Only this article (repeatable).")] = None,
    use_judge: Annotated[bool, typer.Option(
        "--judge/--no-judge", help="As for build.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the snapshot as JSON.")
                       ] = False,
) -> None:
    """Add one snapshot: carry over, drop and generate; re-running resumes it."""
    from freshwiki.benchmarks.growover import Dataset, datasets_dir, update_dataset

    settings = _settings(model)
    root = datasets_dir(settings.home) / name
    dataset = Dataset.open(root)
    if model is None:
        settings = _settings(dataset.manifest["model"]["spec"])
    out, err = _consoles()
    _run(settings, err, as_json, lambda llm, encoder, judge, progress: update_dataset(
        root, source_or_cut, llm=llm, encoder=encoder, judge=judge,
        titles=set(title) if title else None, progress=progress, embedder=encoder), use_judge)
    dataset = Dataset.open(root)
    _report(dataset, out, as_json, dataset.snapshots[-1:])


def _run(settings: Settings, err: Console, quiet: bool, work: Callable[..., Any],
         use_judge: bool) -> Any:
    from freshwiki.changes.snapshots import LLMJudge
    from freshwiki.llm import open_llm
    from freshwiki.retrieval import Embedder

    encoder = Embedder.default(settings)

    async def main() -> Any:
        llm = open_llm(settings=settings)
        try:
            with _progress(err, quiet) as progress:
                return await work(llm, encoder, LLMJudge(llm) if use_judge else None, progress)
        finally:
            await llm.aclose()

    try:
        return asyncio.run(main())
    finally:
        encoder.close()
