"""``freshwiki index``: build a search index over the corpus store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    pass
from freshwiki.cli._common import open_corpus_or_fail, out, progress, state

app = typer.Typer(help="Build search indexes over the corpus.", no_args_is_help=True)


@app.command("build")
def index_build(
    name: Annotated[str, typer.Option(help="Index name (a folder under FRESHWIKI_HOME/indexes).")
                    ] = "main",
    all_revisions: Annotated[bool, typer.Option(
        help="Index every stored revision, not only each page's latest.")] = False,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing index.")] = False,
    embedder_runtime: Annotated[str | None, typer.Option(
        help="torch, onnx or onnx-int8 (default: the embedder_runtime setting, torch). The "
        "index keeps the runtime it was built with; its queries are embedded the same way.")
    ] = None,
) -> None:
    """Index the corpus's passages: BM25 + dense embeddings, persisted for `freshwiki search`."""
    from freshwiki.retrieval import Embedder, HybridIndex, default_index_dir

    settings = state.resolved().settings
    embedder = Embedder.default(settings, embedder_runtime)
    directory = default_index_dir(settings, name)
    with open_corpus_or_fail(settings) as store:
        total = store.counts()["passages"]
        with progress("{task.completed}/{task.total}") as bars:
            task = bars.add_task("indexing", total=total)

            def report(stage: str, done: int, of: int | None) -> None:
                bars.update(task, description=stage, completed=done,
                            total=of if of is not None else total)

            index = HybridIndex.build(store.passages(latest_only=not all_revisions), directory,
                                      embedder=embedder, progress=report, overwrite=overwrite)
    stats = index.stats()
    index.close()
    out.print(f"[green]✓[/green] index {name!r} at {directory}: "
              + ", ".join(f"{k}={v}" for k, v in stats.items()), soft_wrap=True)
