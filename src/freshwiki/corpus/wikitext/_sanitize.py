"""Stages 1 and 2: linear-time sanitizing, then cutting into chunks that parse on their own.

mwparserfromhell backtracks on constructs that are never closed; one stack-based pass removes
the markup of unclosed openers and stray closers (keeping the text), takes extension tags out,
and finds safe places to cut so each chunk's parse time stays bounded.
"""

from __future__ import annotations

import bisect
import functools
import html
import itertools
import re
from dataclasses import dataclass
from typing import Final

from freshwiki.corpus.wikitext._assemble import _squash
from freshwiki.corpus.wikitext._sentinels import _GAP
from freshwiki.corpus.wikitext._shared import _EXT_KEEP, CHUNK_CHARS, MATH_PLACEHOLDER
from freshwiki.corpus.wikitext._tags import (
    _CONTAINERS,
    MAINTENANCE_TAGS,
    _fold,
    _strip_template_prefix,
)
from freshwiki.corpus.wikitext._templates import (
    _INFOBOX_NAMES,
    _MAGIC_FUNCTIONS,
    _PAGENAME_WORDS,
    _PREFIX_TEMPLATES,
    INLINE_TEMPLATES,
)

_WIKI_SPECIAL: Final = {ord(c): f"&#{ord(c)};" for c in "[]{}|<>'=*#:;~_!&-"}


def _escape_wiki(text: str) -> str:
    """Literal text the parser must not read as markup (``<nowiki>`` content)."""
    return text.translate(_WIKI_SPECIAL)


def _strip_comments(text: str) -> str:
    """Drop ``<!-- -->`` (to the end when unclosed); a comment alone on its line goes whole."""
    if "<!--" not in text:
        return text
    out: list[str] = []
    pos = 0
    n = len(text)
    while True:
        i = text.find("<!--", pos)
        if i < 0:
            out.append(text[pos:])
            break
        j = text.find("-->", i + 4)
        end = n if j < 0 else j + 3
        # A comment alone on its line takes the line with it, so no blank line appears.
        ls = i
        while ls > pos and text[ls - 1] in " \t":
            ls -= 1
        le = end
        while le < n and text[le] in " \t":
            le += 1
        if (ls == 0 or text[ls - 1] == "\n") and le < n and text[le] == "\n":
            out.append(text[pos:ls])
            pos = le + 1
        else:
            out.append(text[pos:i])
            pos = end
        if j < 0:
            break
    return "".join(out)


_EXT_RE: Final = re.compile(
    r"<(?P<name>nowiki|pre|chem|ce|syntaxhighlight|source|math|ref|references|gallery|score|"
    r"timeline|graph|hiero|templatedata|templatestyles|mapframe|maplink|imagemap|"
    r"categorytree|inputbox|indicator|charinsert|section|includeonly)"
    r"(?=[\s/>])[^<>]*?(?P<self>/)?>",
    re.IGNORECASE,
)


_EXT_CLOSE: Final[dict[str, re.Pattern[str]]] = {}


def _ext_close(name: str) -> re.Pattern[str]:
    pattern = _EXT_CLOSE.get(name)
    if pattern is None:
        pattern = _EXT_CLOSE[name] = re.compile(rf"</{name}\s*>", re.IGNORECASE)
    return pattern


def _extract_ext_tags(text: str, *, keep_refs: bool = False) -> str:
    """Replace extension tags whose content is not wikitext, in one left-to-right pass.

    With ``keep_refs`` (used by :func:`extract_tags`) ``<ref>`` content stays, since tags
    inside citations still count there; ``<nowiki>``-like content is neutralized either way.
    """
    out: list[str] = []
    pos = 0
    no_closer: set[str] = set()
    next_close: dict[str, tuple[int, int]] = {}
    for_keep_refs = {"ref", "references"} if keep_refs else set()
    while True:
        m = _EXT_RE.search(text, pos)
        if m is None:
            out.append(text[pos:])
            break
        name = m.group("name").lower()
        out.append(text[pos:m.start()])
        if name in for_keep_refs:
            out.append(m.group(0))
            pos = m.end()
            continue
        if m.group("self"):
            pos = m.end()
            continue
        close: tuple[int, int] | None = None
        if name not in no_closer:
            cached = next_close.get(name)
            if cached is not None and cached[0] >= m.end():
                close = cached
            else:
                c = _ext_close(name).search(text, m.end())
                if c is None:
                    no_closer.add(name)
                else:
                    close = (c.start(), c.end())
                    next_close[name] = close
        if close is None:  # unclosed: drop the opening tag, keep what follows
            pos = m.end()
            continue
        inner = text[m.end():close[0]]
        if name == "math":
            out.append(_escape_wiki(MATH_PLACEHOLDER))
        elif name in _EXT_KEEP:
            out.append(_escape_wiki(html.unescape(inner)))
        pos = close[1]
    return "".join(out)


_HTML_TAGS: Final = frozenset({
    "b", "i", "u", "s", "strike", "del", "ins", "small", "big", "sub", "sup", "span", "div",
    "p", "center", "font", "blockquote", "poem", "code", "tt", "kbd", "samp", "var", "abbr",
    "cite", "q", "dfn", "em", "strong", "mark", "bdi", "bdo", "ruby", "rb", "rp", "rt", "rtc",
    "table", "caption", "thead", "tbody", "tfoot", "ul", "ol", "dl", "h1", "h2", "h3", "h4",
    "h5", "h6", "onlyinclude", "noinclude", "data", "time",
})
"""Paired tags balanced by the sanitizer. ``br``, ``hr``, ``li``, ``dt``, ``dd``, ``tr``,
``td``, ``th`` may stand alone; the parser accepts them unclosed without backtracking."""


_SIMPLE_LINK: Final = r"\[\[(?P<target>[^\[\]{}|<>:'\n]+)(?:\|(?P<label>[^\[\]{}|<>\n]+))?\]\]"
"""A link with no markup, nesting or namespace: ``[[A]]``, ``[[A|b]]``."""


_SIMPLE_LINK_RE: Final = re.compile(_SIMPLE_LINK)


_TOKEN_RE: Final = re.compile(
    # The lookahead is implied by every alternative (each starts with one of these characters
    # or at a line start), so it changes no match; it lets the engine reject the other
    # characters with one test instead of trying all seven alternatives at each of them,
    # which made this scan 3x faster (it was 3/4 of _balance's time).
    # A simple link is one token: it holds no bracket, brace or tag, so its "[[" and "]]"
    # would pair with each other anyway, and taking them at once halves the tokens.
    r"(?=[{}\[\]<]|^)(?:"
    rf"(?P<topen>\{{\{{)|(?P<tclose>\}}\}})|(?P<slink>{_SIMPLE_LINK})"
    r"|(?P<lopen>\[\[)|(?P<lclose>\]\])"
    r"|(?P<tabopen>^[ \t]*:*[ \t]*\{\|)|(?P<tabclose>^[ \t]*\|\}(?!\}))"
    r"|(?P<tag><(?P<slash>/?)(?P<name>[A-Za-z][A-Za-z0-9]*)(?=[\s/>])[^<>]*?(?P<self>/?)>))",
    re.MULTILINE,
)


_TAG_HEAD_RE: Final = re.compile(r"\{\{\s*([^{}|\n]*?)\s*(?=\||\}\})")


_UNCLOSED_TEMPLATE_HEAD_RE: Final = re.compile(r"\{\{[^{}\[\]|\n]*\|?")


DEPTH_LIMIT: Final = 20
"""Nesting of templates, links, tables and tags beyond which a chunk skips the parser.
Past its own limit mwparserfromhell silently mangles the structure (it split 500 nested
``{{nowrap|`` into one template with 468 parameters); real articles stay far below 20."""


@dataclass
class _Sanitized:
    text: str
    cuts: list[int]
    deep: list[int]
    """Positions where nesting exceeds :data:`DEPTH_LIMIT` (sorted)."""


@functools.lru_cache(maxsize=4096)
def _template_renders(name: str, *, keep_infobox: bool) -> bool:
    """Whether a template with this name can produce any output (else it is dropped early).

    Cached: pages repeat a few names ({{cite web}}, {{sfn}}...) hundreds of times.
    """
    key = _fold(_strip_template_prefix(name))
    if (key in MAINTENANCE_TAGS or key in _CONTAINERS or key in INLINE_TEMPLATES
            or key in _PAGENAME_WORDS or any(key.startswith(p) for p, _ in _PREFIX_TEMPLATES)):
        return True
    if ":" in key and key.split(":", 1)[0].strip() in _MAGIC_FUNCTIONS:
        return True
    return keep_infobox and (key.startswith("infobox") or key in _INFOBOX_NAMES)


def _balance(
    text: str, *, keep_tables: bool, keep_infobox: bool, chunk_chars: int = CHUNK_CHARS
) -> _Sanitized:
    """Remove never-closed openers and stray closers, and markup that would render to nothing.

    Dropping templates that render nothing (citations, navboxes, hatnotes...) and, when
    not kept, tables and infoboxes before parsing gives the same output as dropping them
    after, but spares the parser building their nodes: most of its time goes there.
    Also finds the safe places to cut the text into chunks.
    """
    edits: list[tuple[int, int, str]] = []
    spans: list[tuple[int, int]] = []
    templates: list[tuple[int, int]] = []
    simple_links: list[tuple[int, int, str]] = []
    table_spans: list[tuple[int, int]] = []
    braces: list[int] = []
    links: list[int] = []
    tables: list[tuple[int, int]] = []
    tag_stacks: dict[str, list[tuple[int, int]]] = {}
    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup
        start, end = m.start(), m.end()
        if kind == "topen":
            braces.append(start)
        elif kind == "tclose":
            if braces:
                templates.append((braces.pop(), end))
            else:
                edits.append((start, end, ""))
        elif kind == "slink":
            plain = _simple_link_shown(m)
            if plain is None:
                spans.append((start, end))
            else:
                simple_links.append((start, end, plain))
        elif kind == "lopen":
            links.append(start)
        elif kind == "lclose":
            if links:
                begin = links.pop()
                plain = _simple_link_text(text, begin, end)
                if plain is None:
                    spans.append((begin, end))
                else:
                    simple_links.append((begin, end, plain))
            else:
                edits.append((start, end, ""))
        elif kind == "tabopen":
            line_end = text.find("\n", end)
            tables.append((start, len(text) if line_end < 0 else line_end))
        elif kind == "tabclose":
            if tables:
                table_spans.append((tables.pop()[0], end))
            else:
                edits.append((end - 2, end, ""))
        else:
            name = m.group("name").lower()
            if name not in _HTML_TAGS or m.group("self"):
                continue
            stack = tag_stacks.setdefault(name, [])
            if m.group("slash"):
                if stack:
                    spans.append((stack.pop()[0], end))
                else:
                    edits.append((start, end, ""))
            else:
                stack.append((start, end))
    for start in braces:
        head = _UNCLOSED_TEMPLATE_HEAD_RE.match(text, start)
        edits.append((start, head.end() if head else start + 2, ""))
    edits.extend((start, start + 2, "") for start in links)
    edits.extend((start, end, "") for start, end in tables)
    for name, stack in tag_stacks.items():
        edits.extend((start, end, "\n\n" if name == "p" else "") for start, end in stack)
    drops: list[tuple[int, int]] = []
    kept_templates: list[tuple[int, int]] = []
    for start, end in templates:
        head = _TAG_HEAD_RE.match(text, start, end)
        if head is not None and not _template_renders(head.group(1), keep_infobox=keep_infobox):
            drops.append((start, end))
        else:
            kept_templates.append((start, end))
    spans.extend(kept_templates)
    edits.extend(_outside(simple_links, kept_templates))
    if keep_tables:
        spans.extend(table_spans)
    else:
        drops.extend(table_spans)
    drops.sort()
    covered = -1
    for start, end in drops:  # outermost only; inner ones go with them
        if start >= covered:
            edits.append((start, end, _GAP))
            covered = end
    # ``spans`` already holds the kept templates (and the tables, when kept): each span once,
    # or a kept template would count twice and 11 nested {{nowrap| would be "too deep".
    deep = _too_deep(sorted({*spans, *templates, *table_spans}))
    if edits:
        text, moved = _apply_edits(text, edits, spans + [(p, p) for p in deep])
        spans, deep = moved[:len(spans)], [p for p, _ in moved[len(spans):]]
    return _Sanitized(text, _safe_cuts(text, spans, chunk_chars), deep)


def _too_deep(spans: list[tuple[int, int]]) -> list[int]:
    """Where nested matched spans first go deeper than :data:`DEPTH_LIMIT`."""
    if len(spans) <= DEPTH_LIMIT:
        return []
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans],
                    key=lambda e: (e[0], e[1]))
    deep: list[int] = []
    depth = 0
    for pos, step in events:
        depth += step
        if step > 0 and depth == DEPTH_LIMIT + 1:
            deep.append(pos)
    return deep


def _simple_link_text(text: str, start: int, end: int) -> str | None:
    """What a plain ``[[A]]``/``[[A|b]]`` link shows, or ``None`` if it needs the parser.

    Plain links are most of the parser's nodes on real pages; showing their text before
    parsing gives the same output as rendering them after. Anything with a namespace, markup,
    a pipe trick or a label that could merge with the text around it is left to the parser.
    """
    m = _SIMPLE_LINK_RE.fullmatch(text, start, end)
    return None if m is None else _simple_link_shown(m)


def _simple_link_shown(m: re.Match[str]) -> str | None:
    """:func:`_simple_link_text` of a match of :data:`_SIMPLE_LINK` (``target``, ``label``)."""
    label = m.group("label")
    if label is not None:
        if "''" in label or label[0] in "'*#:;= \t-!" or label[-1] == "'":
            return None
        return label
    target = _squash(m.group("target"))
    page, _, fragment = target.partition("#")
    shown = (page or fragment).replace("_", " ")
    return shown if shown and shown[0] not in "*#:;=-!" else None


def _outside(
    edits: list[tuple[int, int, str]], regions: list[tuple[int, int]]
) -> list[tuple[int, int, str]]:
    """The edits that lie outside every region (both sorted by start; regions may nest)."""
    if not regions:
        return edits
    merged: list[tuple[int, int]] = []
    for a, b in sorted(regions):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    out: list[tuple[int, int, str]] = []
    k = 0
    for edit in sorted(edits):
        while k < len(merged) and merged[k][1] <= edit[0]:
            k += 1
        if k < len(merged) and merged[k][0] < edit[1]:
            continue
        out.append(edit)
    return out


def _apply_edits(
    text: str, edits: list[tuple[int, int, str]], spans: list[tuple[int, int]]
) -> tuple[str, list[tuple[int, int]]]:
    """Apply non-overlapping edits in one pass and move the span boundaries with them."""
    edits.sort()
    out: list[str] = []
    starts: list[int] = []  # original start of each applied edit
    ends: list[int] = []  # original end
    new_starts: list[int] = []  # where its replacement starts in the new text
    shifts: list[int] = []  # total length change up to and including it
    pos = 0
    shift = 0
    for start, end, repl in edits:
        if start < pos:  # inside an edit already applied (e.g. a dropped template)
            continue
        out.append(text[pos:start])
        out.append(repl)
        starts.append(start)
        ends.append(end)
        new_starts.append(start + shift)
        shift += len(repl) - (end - start)
        shifts.append(shift)
        pos = end
    out.append(text[pos:])

    def move(p: int) -> int:
        i = bisect.bisect_right(starts, p) - 1
        if i < 0:
            return p
        if p < ends[i]:  # inside removed text: clamp to where the edit now is
            return new_starts[i]
        return p + shifts[i]

    return "".join(out), [(move(a), move(b)) for a, b in spans]


_CUT_RE: Final = re.compile(r"\n[ \t]*\n|\n(?==)")


def _safe_cuts(text: str, spans: list[tuple[int, int]], chunk_chars: int) -> list[int]:
    """Positions at blank lines or heading lines outside every construct, ~chunk_chars apart."""
    if len(text) <= chunk_chars:
        return []
    spans.sort()
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            if b > merged[-1][1]:
                merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    cuts: list[int] = []
    last = 0
    k = 0
    for m in _CUT_RE.finditer(text):
        p = m.start() + 1
        if p - last < chunk_chars:
            continue
        while k < len(merged) and merged[k][1] <= p:
            k += 1
        if k < len(merged) and merged[k][0] < p:
            continue
        cuts.append(p)
        last = p
    return cuts


def _chunks(sanitized: _Sanitized) -> list[tuple[str, bool]]:
    """The chunks, each with whether it nests too deep for the parser."""
    bounds = [0, *sanitized.cuts, len(sanitized.text)]
    deep = sanitized.deep
    out: list[tuple[str, bool]] = []
    for a, b in itertools.pairwise(bounds):
        if b > a:
            i = bisect.bisect_left(deep, a)
            out.append((sanitized.text[a:b], i < len(deep) and deep[i] < b))
    return out
