"""Systems under test: each turns a benchmark task into an answer.

``vanilla`` asks the model alone; ``rag`` retrieves from the corpus index first.
"""

from freshwiki.systems._base import (
    System,
    SystemFactory,
    SystemSetupError,
    UnknownSystemError,
    load_system,
    read_options,
    register_system,
    system_names,
)

__all__ = [
    "System",
    "SystemFactory",
    "SystemSetupError",
    "UnknownSystemError",
    "load_system",
    "read_options",
    "register_system",
    "system_names",
]
