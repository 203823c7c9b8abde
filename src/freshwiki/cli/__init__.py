"""The ``freshwiki`` command (Typer), one module per command group.

``_root`` builds the app and is the only module that imports the command modules; ``_common``
holds what they share (consoles, global options, the one ``progress()`` display, option
parsing, opening the index or corpus). Command modules: ``ask``, ``search``, ``serve``,
``evaluation`` (``eval``, ``report``), ``eval_set`` (``eval-set``), ``runs``, ``models``,
``config``, ``llm``, ``corpus``, ``index``, ``chat`` (with the REPL), ``changes``, ``edits``,
``growover``, ``notes``.
"""

from freshwiki.cli._root import app, main

__all__ = ["app", "main"]
