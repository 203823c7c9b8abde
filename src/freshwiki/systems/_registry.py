"""Systems by name: the built-ins as a table, plug-ins by decorator or entry point.

Each built-in name maps to the ``"module:attr"`` of its factory, imported on first lookup (see
:class:`freshwiki.plugins.Registry`): this module imports no system, so no system module can
close a circle through it. Third-party systems come in through the ``freshwiki.systems``
entry-point group, or a ``FRESHWIKI_PLUGINS`` module through :func:`register_system`. The
analysis of a system's runs (report sections from its traces) is found the same way, by the
system's name: :data:`BUILTIN_ANALYSES`, :func:`register_system_analysis` or the
``freshwiki.system_analyses`` group.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from freshwiki.plugins import Registry, UnknownNameError
from freshwiki.results import AnalysisFactory
from freshwiki.seams import System, SystemFactory

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.llm import LLM

BUILTIN_SYSTEMS: Mapping[str, str] = {
    "claim-verifier": "freshwiki.systems.claim_verifier:claim_verifier_system",
    "grounded": "freshwiki.systems.grounded:grounded_system",
    "rag": "freshwiki.systems.rag:rag_system",
    "replay": "freshwiki.systems.replay:replay_system",
    "ralm": "freshwiki.systems.ralm:ralm_system",
    "ralm-best": "freshwiki.systems.rilm:ralm_best_system",
    "rilm": "freshwiki.systems.rilm:rilm_system",
    "search-agent": "freshwiki.systems.search_agent:search_agent_system",
    "vanilla": "freshwiki.systems.vanilla:vanilla_system",
    "zero-shot": "freshwiki.systems.zero_shot:zero_shot_system",
}
"""Built-in system name -> ``"module:attr"`` of its factory."""

BUILTIN_ANALYSES: Mapping[str, str] = {
    "grounded": "freshwiki.systems.analysis:GroundedChatAnalysis",
}
"""Built-in system name -> ``"module:attr"`` of the analysis of its runs' traces (see
:mod:`freshwiki.results`)."""


class UnknownSystemError(UnknownNameError):
    """A system name nobody provides."""


SYSTEMS: Registry[SystemFactory] = Registry(
    "system", "freshwiki.systems", BUILTIN_SYSTEMS, UnknownSystemError)
ANALYSES: Registry[AnalysisFactory] = Registry(
    "system analysis", "freshwiki.system_analyses", BUILTIN_ANALYSES)


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


def register_system_analysis(name: str) -> Callable[[AnalysisFactory], AnalysisFactory]:
    """Register the analysis of system ``name``'s runs (decorator): its report sections."""
    return ANALYSES.register(name)


def system_analysis(name: str) -> AnalysisFactory | None:
    """The analysis registered for system ``name``, or ``None`` when it has none."""
    return ANALYSES.get(name) if name in ANALYSES.names() else None
