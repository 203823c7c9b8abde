"""The public entry points of the cleaner.

:func:`clean_wikitext` runs the four stages on a page (:func:`clean_wikitext_result` also says
which chunks the regex fallback cleaned); :func:`extract_tags` lists every maintenance tag of a
page, including those inside content the cleaner drops.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

import mwparserfromhell
import mwparserfromhell.parser
from mwparserfromhell.nodes import (
    Template,
)

from freshwiki.corpus.wikitext._assemble import _Assembler
from freshwiki.corpus.wikitext._fallback import _BRACE_RE
from freshwiki.corpus.wikitext._render import _Renderer
from freshwiki.corpus.wikitext._sanitize import (
    _TAG_HEAD_RE,
    DEPTH_LIMIT,
    _balance,
    _chunks,
    _extract_ext_tags,
    _strip_comments,
)
from freshwiki.corpus.wikitext._sentinels import _PRIVATE_RE
from freshwiki.corpus.wikitext._shared import (
    FALLBACK_ON_ERROR,
    OnError,
    WikitextError,
)
from freshwiki.corpus.wikitext._stream import _Item
from freshwiki.corpus.wikitext._tags import (
    _CONTAINERS,
    MAINTENANCE_TAGS,
    _fold,
    _strip_template_prefix,
)
from freshwiki.records import MaintenanceTag, Paragraph

_REDIRECT_RE: Final = re.compile(r"\s*#\s*redirect\s*:?\s*\[\[", re.IGNORECASE)


TOO_DEEP: Final = f"nested deeper than {DEPTH_LIMIT}"
"""The :attr:`Fallback.reason` of a chunk sent to the regex strip without parsing it.

Past its own depth limit mwparserfromhell does not raise: it silently leaves the inner
constructs as text (40 nested ``{{nowrap|`` come back as 33 templates and text), so such a
chunk is a parser failure found before parsing rather than caught after."""


@dataclass(frozen=True, slots=True)
class Fallback:
    """One chunk of a page that the regex fallback cleaned instead of the parser.

    The fallback works chunk by chunk (the pieces stage 2 cuts a page into at blank and
    heading lines outside every construct, about :data:`CHUNK_CHARS` each; most articles are
    one chunk), so a chunk is what is counted. Its text is kept, but its tables and
    non-whitelisted templates are dropped, and it may keep markup the parser would have
    removed: a page with fallbacks is a page to look at.
    """

    reason: str
    """:data:`TOO_DEEP`, or the type name of what the parser or renderer raised
    (``RecursionError``, ``ParserError``...)."""
    chunk_chars: int
    """Length of the chunk (sanitized wikitext: comments and refs already gone)."""


@dataclass(frozen=True, slots=True)
class CleanResult:
    """What :func:`clean_wikitext_result` gives: the paragraphs, and how they were made."""

    paragraphs: list[Paragraph]
    chunks: int
    """Chunks the page was cut into (0 for a redirect): the denominator of a fallback rate."""
    fallbacks: tuple[Fallback, ...] = ()
    """The chunks that went through the regex fallback, in page order."""


def clean_wikitext(
    wikitext: str,
    *,
    title: str = "",
    keep_tables: bool = False,
    keep_infobox: bool = False,
    keep_lists: bool = True,
    on_error: OnError | None = None,
) -> list[Paragraph]:
    """Clean text of a page as paragraphs, each with its heading path and maintenance tags.

    Args:
        wikitext: The page's raw wikitext.
        title: The page title, for ``{{PAGENAME}}`` and error messages.
        keep_tables: Emit each ``{| |}`` table as a ``table`` paragraph of
            ``Header: value; Header2: value2`` rows (dropped by default: mostly numbers
            without the layout that makes them readable).
        keep_infobox: Emit infoboxes as ``table`` paragraphs of ``field: value`` lines.
        keep_lists: Keep ``*``/``#``/``;`` lists as ``list`` paragraphs (items one per
            line); when false they are dropped. ``:`` indented lines are text either way.
        on_error: ``"fallback"`` regex-strips a chunk the parser fails on, ``"raise"``
            raises :class:`WikitextError`. Default from :data:`FALLBACK_ON_ERROR`.

    Returns:
        Paragraphs in page order. Boilerplate sections (:data:`BOILERPLATE_SECTIONS`)
        and redirects yield nothing. A paragraph with empty text only occurs to carry block
        tags whose section has no text (see the module docstring). To learn which chunks
        went through the regex fallback, call :func:`clean_wikitext_result` instead.
    """
    return clean_wikitext_result(
        wikitext, title=title, keep_tables=keep_tables, keep_infobox=keep_infobox,
        keep_lists=keep_lists, on_error=on_error,
    ).paragraphs


def clean_wikitext_result(
    wikitext: str,
    *,
    title: str = "",
    keep_tables: bool = False,
    keep_infobox: bool = False,
    keep_lists: bool = True,
    on_error: OnError | None = None,
) -> CleanResult:
    """:func:`clean_wikitext`, also saying which chunks the regex fallback cleaned.

    The fallback keeps a page's text when the parser cannot, which is why it is silent; this
    is how ingest counts it, so a corpus says how much of it was cleaned the rough way.
    Arguments as for :func:`clean_wikitext`; with ``on_error="raise"`` nothing falls back.
    """
    if _REDIRECT_RE.match(wikitext):
        return CleanResult([], 0)
    mode: OnError = on_error or ("fallback" if FALLBACK_ON_ERROR else "raise")
    text = _strip_comments(_PRIVATE_RE.sub("", wikitext).replace("\r\n", "\n"))
    text = _extract_ext_tags(text)
    renderer = _Renderer(title=title, keep_tables=keep_tables, keep_infobox=keep_infobox)
    stream: list[_Item] = []
    fallbacks: list[Fallback] = []
    sanitized = _balance(text, keep_tables=keep_tables, keep_infobox=keep_infobox)
    chunks = _chunks(sanitized)
    for chunk, too_deep in chunks:
        mark = len(renderer.tags)
        if too_deep and mode == "fallback":
            stream.extend(renderer.fallback_stream(chunk))
            fallbacks.append(Fallback(TOO_DEEP, len(chunk)))
            continue
        piece: list[_Item] = []
        try:
            renderer.render_chunk(chunk, piece)
        except Exception as exc:  # RecursionError included: any parser/renderer failure
            if mode == "raise":
                raise WikitextError(
                    f"could not parse the wikitext of {title or 'a page'!r}: {exc!r}",
                    hint="use on_error='fallback' to strip it with regexes instead",
                ) from exc
            del renderer.tags[mark:]
            piece = renderer.fallback_stream(chunk)
            fallbacks.append(Fallback(type(exc).__name__, len(chunk)))
        stream.extend(piece)
    assembler = _Assembler(renderer.tags, keep_lists=keep_lists)
    for item in stream:
        assembler.feed(item)
    return CleanResult(assembler.finish(), len(chunks), tuple(fallbacks))


_LINE_PREFIX_BLOCK_RE: Final = re.compile(r"[ \t]*(?:=+[^=\n]*=+)?(?:[ \t]*\{\{[^\n]*?\}\})*[ \t]*")


def extract_tags(wikitext: str) -> list[MaintenanceTag]:
    """Every maintenance tag in the page, in order, without cleaning the text.

    A quick scan for indexing and statistics: it also finds tags in places
    :func:`clean_wikitext` drops (refs, tables, infoboxes, boilerplate sections).
    ``sentence_offset`` is always ``None``, since offsets only exist in clean text. ``scope``
    is ``block`` for a block-family tag at the start of its line or inside
    ``{{Multiple issues}}``, else ``inline``.
    """
    text = _strip_comments(_PRIVATE_RE.sub("", wikitext))
    text = _extract_ext_tags(text, keep_refs=True)
    renderer = _Renderer(title="", keep_tables=False, keep_infobox=False, collect=False)
    stack: list[int] = []
    spans: list[tuple[int, int]] = []
    for m in _BRACE_RE.finditer(text):
        if m.group(0) == "{{":
            stack.append(m.start())
        elif stack:
            spans.append((stack.pop(), m.end()))
    spans.sort()
    tags: list[MaintenanceTag] = []
    containers: list[int] = []  # ends of the {{Multiple issues}} spans we are inside
    for start, end in spans:
        while containers and containers[-1] <= start:
            containers.pop()
        head = _TAG_HEAD_RE.match(text, start, end)
        if head is None:
            continue
        key = _fold(_strip_template_prefix(head.group(1)))
        spec = MAINTENANCE_TAGS.get(key)
        if spec is None and key not in _CONTAINERS:
            continue
        try:
            nodes = mwparserfromhell.parse(text[start:end], skip_style_tags=True).nodes
        except Exception:  # a tag the parser cannot read is skipped, not fatal
            continue
        node = next((n for n in nodes if isinstance(n, Template)), None)
        if node is None:
            continue
        if spec is None:  # a container: old-style parameters name the banners
            containers.append(end)
            for param in node.params:
                inner = MAINTENANCE_TAGS.get(_fold(str(param.name))) if param.showkey else None
                if inner is not None:
                    value = str(param.value).strip()
                    tags.append(MaintenanceTag(inner.name, str(param.name).strip(),
                                               {"date": value}, value or None, None, "block"))
            continue
        line_start = text.rfind("\n", 0, start) + 1
        at_line_start = _LINE_PREFIX_BLOCK_RE.fullmatch(text, line_start, start) is not None
        info = renderer.make_tag(node, spec)
        block = info.family == "block" and (at_line_start or bool(containers))
        tags.append(info.finish("block" if block else "inline", None))
    return tags
