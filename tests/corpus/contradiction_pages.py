"""Small MediaWiki exports for the contradiction-mining tests, written from given page texts.

The texts the tests pass are real wikitext where they can be (WikiContradict's ``paragraph_A``,
the sample dump's articles) and say so where they are constructed.
"""

from __future__ import annotations

import bz2
from html import escape
from pathlib import Path

Page = tuple[str, list[tuple[str, str]]]
"""(title, [(ISO timestamp, wikitext), ...]): one page and its revisions, oldest first."""


def pages_xml(pages: list[Page], *, first_id: int = 9_000_001, redirects: dict[str, str]
              | None = None) -> str:
    """``<page>`` elements for ``pages`` (ids from ``first_id``), then ``redirects`` pages."""
    parts = []
    rev_id = first_id * 10
    entries = [(t, revs, None) for t, revs in pages] + [
        (src, [("2024-01-01T00:00:00Z", f"#REDIRECT [[{dst}]]")], dst)
        for src, dst in (redirects or {}).items()]
    for offset, (title, revisions, target) in enumerate(entries):
        redirect = f'    <redirect title="{escape(target)}" />\n' if target else ""
        parts.append(f"  <page>\n    <title>{escape(title, quote=False)}</title>\n"
                     f"    <ns>0</ns>\n    <id>{first_id + offset}</id>\n{redirect}")
        for stamp, text in revisions:
            rev_id += 1
            parts.append(f"    <revision>\n      <id>{rev_id}</id>\n"
                         f"      <timestamp>{stamp}</timestamp>\n"
                         f'      <text xml:space="preserve">{escape(text, quote=False)}</text>\n'
                         "    </revision>\n")
        parts.append("  </page>\n")
    return "".join(parts)


def write_dump(path: Path, pages: list[Page], *, before: str = "",
               redirects: dict[str, str] | None = None) -> Path:
    """A bz2 export of ``pages``; ``before`` is a whole export whose pages come first."""
    head = '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">\n'
    if before:
        head = before[: before.rindex("</mediawiki>")]
    body = head + pages_xml(pages, redirects=redirects) + "</mediawiki>\n"
    path.write_bytes(bz2.compress(body.encode("utf-8")))
    return path
