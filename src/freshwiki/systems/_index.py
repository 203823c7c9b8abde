"""The corpus index a retrieving system opens on its first task and closes when done."""

from __future__ import annotations

from typing import TYPE_CHECKING

from freshwiki.errors import FreshwikiError
from freshwiki.retrieval import LazyIndex as _LazyIndex
from freshwiki.systems._options import SystemSetupError

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.retrieval import HybridIndex


class LazyIndex(_LazyIndex):
    """A :class:`freshwiki.retrieval.LazyIndex` whose failure to open stops the run.

    A missing index surfaces as a :class:`SystemSetupError`: every task would fail the same
    way, so the runner stops at once instead of recording each one.

    Args:
        system: The system's name, for error messages.
        settings: Where the index lives.
        name: The index name.
        index: An already-open index to use instead; the caller keeps ownership.
    """

    def __init__(self, system: str, settings: Settings, name: str,
                 index: HybridIndex | None = None) -> None:
        super().__init__(settings, name, index)
        self.system = system

    def open_failed(self, error: FreshwikiError) -> Exception:
        """A setup error naming the system and how to build or choose the index."""
        return SystemSetupError(
            f"system {self.system!r}: no index {self.name!r} ({error.message})",
            hint=f"build it with `freshwiki index build --name {self.name}` "
            "(after `freshwiki corpus ingest PATH`), or pick another with "
            "--option index=NAME.",
        )
