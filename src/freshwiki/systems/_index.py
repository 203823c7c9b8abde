"""The corpus index a retrieving system opens on its first task and closes when done."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from freshwiki.errors import FreshwikiError
from freshwiki.retrieval import HybridIndex, open_search_index
from freshwiki.systems._base import SystemSetupError

if TYPE_CHECKING:
    from freshwiki.config import Settings


class LazyIndex:
    """Opens ``name`` once, on first use, however many tasks ask for it at the same time.

    Opening on first use keeps building a system instant (option errors stay cheap) and
    lets a missing index surface as a :class:`SystemSetupError`, which stops the run at once.

    Args:
        system: The system's name, for error messages.
        settings: Where the index lives.
        name: The index name (``default`` builds the default corpus on first use).
        index: An already-open index to use instead; the caller keeps ownership.
    """

    def __init__(self, system: str, settings: Settings, name: str,
                 index: HybridIndex | None = None) -> None:
        self.system = system
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
                    raise SystemSetupError(
                        f"system {self.system!r}: no index {self.name!r} ({exc.message})",
                        hint=f"build it with `freshwiki index build --name {self.name}` "
                        "(after `freshwiki corpus ingest PATH`), or pick another with "
                        "--option index=NAME.",
                    ) from exc
            return self._index

    def close(self) -> None:
        """Close the index if it was opened here."""
        if self._index is not None and self._owned:
            self._index.close()
            self._index = None
