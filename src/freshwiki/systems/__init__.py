"""Systems under test: each turns a benchmark task into an answer.

``vanilla`` asks the model alone; ``rag`` retrieves from the corpus index first; ``grounded``
is the grounded chat; ``ralm``, ``ralm-best`` and ``rilm`` answer GrowOVER from its snapshot
indexes; ``search-agent`` and ``zero-shot`` answer HelloFresh; ``replay`` answers with
recorded texts (to validate a judge on labelled answers). Systems see only the seam types
(:mod:`freshwiki.seams`), never a benchmark.
"""

from freshwiki.seams import System, SystemFactory
from freshwiki.systems._options import SystemSetupError, read_options
from freshwiki.systems._registry import (
    BUILTIN_ANALYSES,
    BUILTIN_SYSTEMS,
    UnknownSystemError,
    load_system,
    register_system,
    register_system_analysis,
    system_analysis,
    system_names,
)

__all__ = [
    "BUILTIN_ANALYSES",
    "BUILTIN_SYSTEMS",
    "System",
    "SystemFactory",
    "SystemSetupError",
    "UnknownSystemError",
    "load_system",
    "read_options",
    "register_system",
    "register_system_analysis",
    "system_analysis",
    "system_names",
]
