"""MediaWiki API revision exports (``action=query&prop=revisions``) → :class:`Revision`.

The expected request is ``action=query&prop=revisions&rvprop=ids|timestamp|user|comment|
sha1|content|flags&rvslots=main`` (``rvlimit=max`` and ``rvdir=newer`` welcome), saved as
JSON. Both output shapes are read:

* ``formatversion=1`` (the default): ``query.pages`` is an object keyed by page id; the
  content is ``slots.main["*"]`` (or ``rev["*"]`` without ``rvslots``); flags are keys with an
  empty-string value (``"anon": ""``, ``"minor": ""``, ``"texthidden": ""``).
* ``formatversion=2``: ``query.pages`` is a list; the content is ``slots.main.content``;
  flags are booleans (``"anon": true``).

A file may hold one response, a JSON array of responses, or one response a line (JSONL), so
the continuation pages of a long history (``rvcontinue``) can be saved together. A page's
revisions are collected across all of them and sorted oldest first (the API's default
``rvdir=older`` lists them newest first), which means one file is read into memory: API
exports are small by nature (at most a few thousand revisions a request); full histories
come as XML dumps, which are streamed.

Hidden (revision-deleted) content maps as the dump reader maps it: ``text=""``,
``size=None``, ``sha1=None``; a hidden user gives ``contributor=None``, a hidden comment
``comment=None``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from freshwiki.errors import FreshwikiError
from freshwiki.records import Contributor, PageRef, Revision

__all__ = ["ApiExportError", "iter_api_revisions", "looks_like_api_export"]

_HINT = (
    "save the output of action=query&prop=revisions&rvprop=ids|timestamp|user|comment|sha1|"
    "content|flags&rvslots=main&format=json (formatversion 1 or 2) as the file"
)


class ApiExportError(FreshwikiError):
    """A file is not a MediaWiki API revisions export that can be read."""


def looks_like_api_export(path: str | os.PathLike[str]) -> bool:
    """Whether a file starts like JSON (``{`` or ``[``): the cheap test that routes it here."""
    with open(path, "rb") as fh:
        head = fh.read(256).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head[:1] in (b"{", b"[")


def _flag(record: dict[str, Any], key: str) -> bool:
    """A formatversion=1 flag is present-with-"" ; a formatversion=2 flag is a boolean."""
    if key not in record:
        return False
    value = record[key]
    return value is not False


def _responses(path: Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:  # the API only writes UTF-8
        raise ApiExportError(f"{path}: not UTF-8 text ({exc})", hint=_HINT) from None
    try:
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            try:
                return [json.loads(line) for line in text.splitlines() if line.strip()]
            except json.JSONDecodeError as exc:
                raise ApiExportError(f"{path}: not JSON or JSONL ({exc})", hint=_HINT) from None
    except RecursionError:  # json recurses per level of nesting: [[[[... is not an export
        raise ApiExportError(f"{path}: JSON nested too deeply to be an API export",
                             hint=_HINT) from None
    return data if isinstance(data, list) else [data]


def _pages(response: Any, path: Path) -> list[dict[str, Any]]:
    if isinstance(response, dict) and "error" in response:
        error = response["error"]
        info = error.get("info") if isinstance(error, dict) else error
        raise ApiExportError(f"{path}: the saved response is an API error: {info}",
                             hint="fix the request and save its output again")
    query = response.get("query") if isinstance(response, dict) else None
    pages = query.get("pages") if isinstance(query, dict) else None
    if isinstance(pages, dict):
        return [p for p in pages.values() if isinstance(p, dict)]
    if isinstance(pages, list):
        return [p for p in pages if isinstance(p, dict)]
    raise ApiExportError(f"{path}: no query.pages in the response", hint=_HINT)


def _content(rev: dict[str, Any]) -> str | None:
    """The main slot's text; ``None`` when hidden or absent."""
    slots = rev.get("slots")
    holder = slots.get("main") if isinstance(slots, dict) else rev
    if not isinstance(holder, dict) or _flag(holder, "texthidden") or _flag(rev, "texthidden"):
        return None
    value = holder.get("content", holder.get("*"))
    return value if isinstance(value, str) else None


def _revision(page: PageRef, rev: dict[str, Any], path: Path) -> Revision:
    try:
        rev_id = int(rev["revid"])
        stamp = dt.datetime.fromisoformat(str(rev["timestamp"]).replace("Z", "+00:00"))
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise ApiExportError(
            f"{path}: page {page.title!r}: a revision without a valid revid/timestamp ({exc})",
            hint="request rvprop=ids|timestamp|... (see the hint of a missing field)",
        ) from None
    try:  # 0 or absent: none (the API gives parentid 0 for a page's first revision)
        parent = int(rev["parentid"]) if rev.get("parentid") else None
        user_id = int(rev["userid"]) if rev.get("userid") else None
    except (TypeError, ValueError, OverflowError) as exc:
        raise ApiExportError(
            f"{path}: page {page.title!r}: revision {rev_id}: parentid or userid is not a "
            f"number ({exc})", hint=_HINT) from None
    text = _content(rev)
    contributor: Contributor | None = None
    if not _flag(rev, "userhidden") and isinstance(rev.get("user"), str):
        if _flag(rev, "anon"):
            contributor = Contributor(ip=rev["user"])
        else:
            contributor = Contributor(username=rev["user"], user_id=user_id)
    comment = rev.get("comment")
    sha1 = rev.get("sha1")
    size = rev.get("size")
    return Revision(
        page=page,
        id=rev_id,
        timestamp=stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.UTC),
        text=text if text is not None else "",
        parent_id=parent,
        contributor=contributor,
        comment=(comment or None) if not _flag(rev, "commenthidden") else None,
        sha1=(sha1 or None) if text is not None and not _flag(rev, "sha1hidden") else None,
        size=int(size) if text is not None and isinstance(size, int) else (
            # JSON may escape a lone surrogate ("\ud800"), which strict UTF-8 cannot encode
            len(text.encode("utf-8", "surrogatepass")) if text is not None else None),
        minor=_flag(rev, "minor"),
    )


def iter_api_revisions(
    path: str | os.PathLike[str], *, namespaces: set[int] | frozenset[int] | None = None
) -> Iterator[Revision]:
    """Every revision of a saved API export, page by page, oldest first within a page.

    Args:
        path: The JSON (or JSONL) file.
        namespaces: Keep pages in these namespaces; ``None`` keeps all.

    Raises:
        ApiExportError: At call time, when the file is missing or not an API export, or a
            revision lacks its id or timestamp.
    """
    source = Path(path)
    if not source.is_file():
        raise ApiExportError(f"{source}: no such file", hint="check the path")
    by_page: dict[int, tuple[PageRef, list[Revision]]] = {}
    pages_seen = 0
    for response in _responses(source):
        for page_data in _pages(response, source):
            if "missing" in page_data or "invalid" in page_data:
                continue
            pages_seen += 1
            try:
                page = PageRef(id=int(page_data["pageid"]), title=str(page_data["title"]),
                               namespace=int(page_data.get("ns", 0)))
            except (KeyError, TypeError, ValueError, OverflowError):
                raise ApiExportError(f"{source}: a page without pageid/title",
                                     hint=_HINT) from None
            if namespaces is not None and page.namespace not in namespaces:
                continue
            listed = page_data.get("revisions", [])
            if not isinstance(listed, list):
                raise ApiExportError(f"{source}: page {page.title!r}: revisions is not a list",
                                     hint=_HINT)
            _, revisions = by_page.setdefault(page.id, (page, []))
            # A revision saved twice (overlapping continuations) is kept twice: the
            # labeller records it as a duplicate rather than this reader hiding it.
            revisions.extend(_revision(page, rev, source) for rev in listed)
    if not pages_seen:
        raise ApiExportError(f"{source}: the export holds no page with revisions",
                             hint=_HINT)

    def run() -> Iterator[Revision]:
        for _, revisions in by_page.values():
            yield from sorted(revisions, key=lambda r: (r.timestamp, r.id))

    return run()
