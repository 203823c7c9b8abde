"""MkDocs hook: the repository's README becomes the site's home page.

The README is the front door on a code host and the docs site's first page; keeping one text
means the two cannot drift. On a code host its links are relative to the repository root
(``docs/results.md``); on the site the home page sits beside the other pages, so the hook drops
the ``docs/`` prefix. Any other relative link would point outside the site, and the strict build
reports it like any broken link.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

_DOCS_LINK = re.compile(r"\]\(docs/")


def readme_as_home(readme: str) -> str:
    """The README's text with its ``docs/`` links made relative to the site's pages."""
    return _DOCS_LINK.sub("](", readme)


def on_files(files: Files, config: Any) -> Files:
    """Add the README as ``index.md`` (a page of that name in ``docs/`` would be shadowed)."""
    readme = Path(config["config_file_path"]).parent / "README.md"
    existing = files.get_file_from_path("index.md")
    if existing is not None:
        files.remove(existing)
    files.append(File.generated(config, "index.md",
                                content=readme_as_home(readme.read_text(encoding="utf-8"))))
    return files
