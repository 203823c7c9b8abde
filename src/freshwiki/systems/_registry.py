"""Systems by name: the built-ins as a table, plug-ins by decorator or entry point.

Each built-in name maps to the ``"module:attr"`` of its factory, imported on first lookup (see
:class:`freshwiki.plugins.Registry`): this module imports no system, so no system module can
close a circle through it. Third-party systems come in through the ``freshwiki.systems``
entry-point group, or a ``FRESHWIKI_PLUGINS`` module through :func:`register_system`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from freshwiki.plugins import Registry, UnknownNameError
from freshwiki.seams import System, SystemFactory

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.llm import LLM

BUILTIN_SYSTEMS: Mapping[str, str] = {
    "grounded": "freshwiki.systems.grounded:grounded_system",
    "rag": "freshwiki.systems.rag:rag_system",
    "ralm": "freshwiki.systems.ralm:ralm_system",
    "ralm-best": "freshwiki.systems.rilm:ralm_best_system",
    "rilm": "freshwiki.systems.rilm:rilm_system",
    "search-agent": "freshwiki.systems.search_agent:search_agent_system",
    "vanilla": "freshwiki.systems.vanilla:vanilla_system",
    "zero-shot": "freshwiki.systems.zero_shot:zero_shot_system",
}
"""Built-in system name -> ``"module:attr"`` of its factory."""


class UnknownSystemError(UnknownNameError):
    """A system name nobody provides."""


SYSTEMS: Registry[SystemFactory] = Registry(
    "system", "freshwiki.systems", BUILTIN_SYSTEMS, UnknownSystemError)


def register_system(name: str) -> Callable[[SystemFactory], SystemFactory]:
    """Register a system factory under ``name`` (decorator)."""
    return SYSTEMS.register(name)


def system_names() -> list[str]:
    """Every system name available, sorted."""
    return SYSTEMS.names()


def load_system(
    name: str, llm: LLM, settings: Settings, options: Mapping[str, Any] | None = None
) -> System:
    """Build the system named ``name`` around ``llm``.

    Raises:
        UnknownSystemError: naming the known systems.
    """
    return SYSTEMS.get(name)(llm, settings, options or {})
