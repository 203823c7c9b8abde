"""Where revisions come from: history dumps and API exports, given as files or folders."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Final

from freshwiki.changes.edits.api_json import iter_api_revisions, looks_like_api_export
from freshwiki.corpus import ARTICLE_NAMESPACES, ReadReport, iter_revisions
from freshwiki.errors import FreshwikiError
from freshwiki.records import Revision

__all__ = ["HISTORY_SUFFIXES", "HistorySourceError", "history_files", "iter_history"]

HISTORY_SUFFIXES: Final = (".xml", ".bz2", ".gz", ".xz", ".json", ".jsonl")
"""Files a folder is searched for: XML dumps (plain or compressed) and API exports."""


class HistorySourceError(FreshwikiError):
    """A path given as history input does not exist or holds no history file."""


def history_files(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The files to read: each file as given, each folder's history files in sorted order.

    Raises:
        HistorySourceError: A path does not exist, or a folder holds no history file.
    """
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            found = sorted(
                p for p in path.rglob("*")
                if p.is_file() and not p.name.startswith(".")
                and p.name.lower().endswith(HISTORY_SUFFIXES)
            )
            if not found:
                raise HistorySourceError(
                    f"{path}: folder holds no history file ({', '.join(HISTORY_SUFFIXES)})",
                    hint="pass pages-meta-history XML dumps or MediaWiki API JSON exports",
                )
            files.extend(found)
        else:
            raise HistorySourceError(f"{path}: no such file or folder", hint="check the path")
    return files


def iter_history(
    paths: Sequence[str | os.PathLike[str]],
    *,
    namespaces: AbstractSet[int] | None = ARTICLE_NAMESPACES,
    skip_bad_pages: bool = False,
    report: ReadReport | None = None,
) -> Iterator[Revision]:
    """Revisions of every history file in turn, each file in its own order.

    XML dumps are streamed by :func:`freshwiki.corpus.iter_revisions`; JSON files are read
    as API exports (:func:`~freshwiki.changes.edits.api_json.iter_api_revisions`).
    """
    for file in history_files(paths):
        if looks_like_api_export(file):
            keep = None if namespaces is None else frozenset(namespaces)
            yield from iter_api_revisions(file, namespaces=keep)
        else:
            yield from iter_revisions(file, namespaces=namespaces,
                                      skip_bad_pages=skip_bad_pages, report=report)
