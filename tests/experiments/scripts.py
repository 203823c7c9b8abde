"""Loading an experiment script as a module, for the tests of ``experiments/*.py``.

The scripts are not a package (they run as ``python experiments/NAME.py`` and import their
sibling ``_provenance``), so a test loads one by path, with ``experiments/`` on ``sys.path``
for its own imports, and registers it under its name so dataclasses and pickling that look
the module up by name work.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def load_script(name: str) -> ModuleType:
    """``experiments/NAME.py`` as the module ``NAME``."""
    if str(EXPERIMENTS) not in sys.path:
        sys.path.insert(0, str(EXPERIMENTS))
    spec = importlib.util.spec_from_file_location(name, EXPERIMENTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
