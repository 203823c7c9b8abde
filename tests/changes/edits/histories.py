"""Build small pages-meta-history XML files (and API exports) for the labelling rules."""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

START = dt.datetime(2024, 1, 1, 12, 0, tzinfo=dt.UTC)

LEAD = ("Widgets are small mechanical devices used in many machines. "
        "They were first made in Leeds in 1901.")
HISTORY = [
    "The first widget factory opened in Leeds in 1901 and employed forty workers at first.",
    "By 1950 widgets were exported to thirty countries across Europe and Asia every year.",
]
USES = [
    "Widgets hold the moving parts of clocks, looms and printing presses in their place.",
]
# 79 characters: comfortably over the 50-character threshold
ADDED = "In 1923 a fire destroyed the original factory, which was rebuilt within a year."


def article(lead: str = LEAD, sections: dict[str, list[str]] | None = None) -> str:
    """Wikitext: a lead paragraph and ``== Heading ==`` sections of paragraphs."""
    if sections is None:
        sections = {"History": HISTORY, "Uses": USES}
    parts = [lead]
    for heading, paragraphs in sections.items():
        heading = heading.split("#")[0]  # "History#2" writes a second "History" heading
        parts.append(f"== {heading} ==")
        parts.extend(paragraphs)
    return "\n\n".join(parts)


@dataclass
class Rev:
    """One revision to write; ``None`` fields are filled in by :func:`write_history`."""

    text: str | None  # None: <text deleted="deleted" />
    user: str | None = "Alice"
    ip: str | None = None
    comment: str | None = None
    comment_deleted: bool = False
    id: int | None = None
    parent: int | bool | None = True  # True: the previous revision; False: no <parentid>
    timestamp: dt.datetime | None = None


def write_history(
    path: Path, revisions: list[Rev], *, title: str = "Widget", page_id: int = 1, ns: int = 0,
    first_id: int = 100,
) -> Path:
    """A one-page history dump: ids first_id, first_id+1..., one day apart, parent chain."""
    lines = ['<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">',
             "  <page>", f"    <title>{escape(title)}</title>", f"    <ns>{ns}</ns>",
             f"    <id>{page_id}</id>"]
    previous: int | None = None
    for number, rev in enumerate(revisions):
        rev_id = rev.id if rev.id is not None else first_id + number
        stamp = rev.timestamp or START + dt.timedelta(days=number)
        lines += ["    <revision>", f"      <id>{rev_id}</id>"]
        parent = previous if rev.parent is True else rev.parent
        if parent is not None and parent is not False:
            lines.append(f"      <parentid>{parent}</parentid>")
        lines.append(f"      <timestamp>{stamp.strftime('%Y-%m-%dT%H:%M:%SZ')}</timestamp>")
        if rev.ip is not None:
            lines.append(f"      <contributor><ip>{rev.ip}</ip></contributor>")
        elif rev.user is not None:
            lines.append(f"      <contributor><username>{rev.user}</username><id>7</id>"
                         "</contributor>")
        else:
            lines.append('      <contributor deleted="deleted" />')
        if rev.comment_deleted:
            lines.append('      <comment deleted="deleted" />')
        elif rev.comment is not None:
            lines.append(f"      <comment>{escape(rev.comment)}</comment>")
        if rev.text is None:
            lines += ['      <text bytes="-1" deleted="deleted" />', "      <sha1 />"]
        else:
            size = len(rev.text.encode("utf-8"))
            lines.append(f'      <text bytes="{size}" xml:space="preserve">{escape(rev.text)}'
                         "</text>")
            lines.append(f"      <sha1>{hashlib.sha1(rev.text.encode()).hexdigest()}</sha1>")
        lines.append("    </revision>")
        previous = rev_id
    lines += ["  </page>", "</mediawiki>", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
