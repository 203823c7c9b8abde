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
    engine: Annotated[str, typer.Option(
        help="local, or ray: passages are embedded by an actor pool on a Ray cluster (via "
        "--ray-address), then indexed here. Resumable: embedded shards are cached.")
    ] = "local",
    ray_address: Annotated[str | None, typer.Option(
        help="Ray cluster address for --engine ray [RAY_ADDRESS].")] = None,
) -> None:
    """Index the corpus's passages: BM25 + dense embeddings, persisted for `freshwiki search`."""
    from freshwiki.retrieval import Embedder, HybridIndex, default_index_dir

    if engine not in ("local", "ray"):
        raise typer.BadParameter(f"{engine!r}: use local or ray", param_hint="--engine")
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

            if engine == "ray":
                from freshwiki.retrieval import embed_on_ray

                assert embedder.cache is not None  # the default embedder caches
                computed, read = embed_on_ray(
                    store.passages(latest_only=not all_revisions), embedder.cache,
                    runtime=embedder.runtime, models_dir=settings.models_dir,
                    address=ray_address,
                    progress=lambda done, seen: report("embedding on Ray", done, None))
                out.print(f"embedded {computed} passages on Ray; {read - computed} were "
                          "cached already")
            index = HybridIndex.build(store.passages(latest_only=not all_revisions), directory,
                                      embedder=embedder, progress=report, overwrite=overwrite)
    if engine == "ray" and embedder.embedded:
        out.print(f"[yellow]{embedder.embedded} passages were not embedded on Ray and were "
                  "embedded here[/yellow]")
    stats = index.stats()
    index.close()
    out.print(f"[green]✓[/green] index {name!r} at {directory}: "
              + ", ".join(f"{k}={v}" for k, v in stats.items()), soft_wrap=True)
