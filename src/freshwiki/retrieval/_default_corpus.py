"""The corpus freshwiki works on out of the box: 10,419 real Wikipedia lead paragraphs.

The first command that needs an index on a fresh home (``freshwiki ask``, ``search``, ``serve``)
ingests the WikiChat topic files (head, tail and recent articles) from ``Settings.data_dir`` into
the corpus store and indexes them as the ``main`` index, once; every later run loads that index
from disk. A user who ingested their own corpus keeps it: the default is only built into an empty
store.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from freshwiki.config import Settings
from freshwiki.corpus.ingest import ingest
from freshwiki.corpus.store import CorpusStore
from freshwiki.errors import FreshwikiError
from freshwiki.retrieval._embed import Embedder
from freshwiki.retrieval._errors import IndexNotFoundError
from freshwiki.retrieval._hybrid import MANIFEST, HybridIndex, default_index_dir, index_content

TOPIC_FILES = ("head_articles_en.json", "tail_articles_en.json", "recent_articles_en.json")
"""The WikiChat topic sets: popular, rarely viewed and recently created articles."""

USER_INDEX = "main"
"""The index ``freshwiki index build`` writes by default: the user's own corpus."""

DEFAULT_INDEX = "default"
"""The index of the default corpus, beside (never inside) the user's."""

StageProgress = Callable[[str, int, int | None], None]
"""``(stage, done, total)``; ``total`` is ``None`` while unknown."""


def default_corpus_path(settings: Settings) -> Path:
    """The default corpus's own store, so it never mixes with a corpus the user ingests."""
    return settings.home / "corpus" / "default.sqlite"


def default_corpus_sources(settings: Settings) -> list[Path]:
    """The topic files the default corpus is built from.

    Raises:
        FreshwikiError: when ``data_dir`` lacks them, saying where they were looked for.
    """
    folder = settings.data_dir / "wikipedia" / "topics"
    files = [folder / name for name in TOPIC_FILES]
    missing = [f for f in files if not f.is_file()]
    if missing:
        raise FreshwikiError(
            f"the default corpus needs {', '.join(f.name for f in missing)} in {folder}",
            hint="point FRESHWIKI_DATA_DIR (or data_dir in freshwiki.toml) at the shared data "
            "folder, or build your own corpus: `freshwiki corpus ingest PATH` then "
            "`freshwiki index build`.",
        )
    return files


def has_index(settings: Settings, name: str) -> bool:
    """Whether an index called ``name`` has been built (and saved) in this home."""
    return (default_index_dir(settings, name) / MANIFEST).is_file()


def resolve_index_name(settings: Settings, name: str | None = None) -> str:
    """The index :func:`open_search_index` opens: ``name``, else ``main`` if built, else default."""
    if name is not None:
        return name
    return USER_INDEX if has_index(settings, USER_INDEX) else DEFAULT_INDEX


def open_search_index(
    settings: Settings, name: str | None = None, progress: StageProgress | None = None
) -> HybridIndex:
    """The index a command searches: ``name`` if given, else the user's, else the default.

    Without a name, the user's ``main`` index wins when it exists; otherwise the default
    corpus is loaded, and built first if this home has never built it (a few minutes, once:
    ingesting ~10k leads, then embedding them).

    Raises:
        FreshwikiError: a named index that does not exist (with the command that builds it),
            or missing topic files for the default corpus.
    """
    name = resolve_index_name(settings, name)
    if name == DEFAULT_INDEX:
        return build_default_index(settings, progress=progress)
    directory = default_index_dir(settings, name)
    try:
        return HybridIndex.load(directory, embedder=_embedder_of(settings, directory))
    except IndexNotFoundError as exc:
        raise FreshwikiError(
            exc.message,
            hint=f"build it with `freshwiki index build --name {name}` "
            "(after `freshwiki corpus ingest PATH`).",
        ) from exc


def _embedder_of(settings: Settings, directory: Path) -> Embedder:
    """The embedder of the runtime the index in ``directory`` was built with.

    So a changed ``embedder_runtime`` setting never leaves an older index unsearchable: its
    queries are still embedded as its passages were. The configured runtime when there is
    no index yet.
    """
    try:
        name = str(index_content(directory)["embedder"]["name"])
    except IndexNotFoundError:
        return Embedder.default(settings)
    return Embedder.named(name, settings)


def build_default_index(
    settings: Settings,
    *,
    progress: StageProgress | None = None,
    embedder: Embedder | None = None,
    rebuild: bool = False,
) -> HybridIndex:
    """Load the default corpus's index, building store and index first when missing.

    An interrupted build leaves no index manifest, so the next call simply builds again:
    ingesting is idempotent and embeddings already computed come from the embedding cache.
    Without ``embedder``, an existing index embeds queries with the runtime it was built
    with, and a new one is built with the configured runtime.
    """
    directory = default_index_dir(settings, DEFAULT_INDEX)
    if not rebuild:
        try:
            return HybridIndex.load(directory,
                                    embedder=embedder or _embedder_of(settings, directory))
        except IndexNotFoundError:
            pass
    sources = default_corpus_sources(settings)
    path = default_corpus_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    with CorpusStore(path) as store:
        for number, source in enumerate(sources):
            if progress:
                progress(f"reading {source.name}", number, len(sources))
            ingest(source, store, workers=1)
        return HybridIndex.build(store.passages(latest_only=True), directory,
                                 embedder=embedder or Embedder.default(settings),
                                 progress=progress, overwrite=True)
