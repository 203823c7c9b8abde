"""An index opened on first use and shared by every concurrent user of it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from freshwiki.errors import FreshwikiError
from freshwiki.retrieval._default_corpus import open_search_index, resolve_index_name
from freshwiki.retrieval._errors import IndexNotFoundError
from freshwiki.retrieval._hybrid import default_index_dir, index_content

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.retrieval._hybrid import HybridIndex


class LazyIndex:
    """Opens index ``name`` once, on first use, however many tasks ask for it at once.

    Opening on first use keeps building whatever holds it instant (so option errors stay
    cheap), and loading runs in a worker thread so an event loop keeps serving meanwhile.

    Args:
        settings: Where the index lives.
        name: The index name (``default`` builds the default corpus on first use).
        index: An already-open index to use instead; the caller keeps ownership.
    """

    def __init__(self, settings: Settings, name: str, index: HybridIndex | None = None) -> None:
        self.name = name
        self._settings = settings
        self._index = index
        self._owned = index is None
        self._lock = asyncio.Lock()

    async def get(self) -> HybridIndex:
        """The index, opened by the first caller; concurrent callers wait for that one load."""
        async with self._lock:
            if self._index is None:
                try:
                    self._index = await asyncio.to_thread(
                        open_search_index, self._settings, self.name)
                except FreshwikiError as exc:
                    raise self.open_failed(exc) from exc
            return self._index

    def content_digest(self) -> str | None:
        """The digest of what the index holds (:func:`~freshwiki.retrieval.index_content`).

        What a run identity records instead of the index's name: a rebuilt index gets a new
        digest, the same index in another folder the same one. Read from the index's manifest
        without loading it, so describing a system stays cheap. ``None`` while the index is not
        built (a named index that is missing stops the run at its first search anyway; the
        default corpus's index is built then, so a first run on a fresh home records ``None``
        and the next one the digest).
        """
        if self._index is not None:
            return str(self._index.content["digest"])
        directory = default_index_dir(self._settings,
                                      resolve_index_name(self._settings, self.name))
        try:
            return str(index_content(directory)["digest"])
        except IndexNotFoundError:
            return None

    def open_failed(self, error: FreshwikiError) -> Exception:
        """The exception to raise when opening fails (subclasses name who needed it)."""
        return error

    def close(self) -> None:
        """Close the index if it was opened here."""
        if self._index is not None and self._owned:
            self._index.close()
            self._index = None
