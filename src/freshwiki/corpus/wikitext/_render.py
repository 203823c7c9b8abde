"""Stage 3: parse a chunk with mwparserfromhell and render it to the item stream.

Nodes are built only for the top-level constructs that need them; plain text, list markers,
headings and simple links are rendered straight from the tokens, which is faster with the
same result.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

import mwparserfromhell
import mwparserfromhell.parser
from mwparserfromhell.nodes import (
    Argument,
    Comment,
    ExternalLink,
    Heading,
    HTMLEntity,
    Tag,
    Template,
    Text,
    Wikilink,
)
from mwparserfromhell.parser import builder as _builder
from mwparserfromhell.parser import tokens as _tok
from mwparserfromhell.parser.tokenizer import Tokenizer

from freshwiki.corpus.wikitext._assemble import _squash
from freshwiki.corpus.wikitext._fallback import _FallbackMixin, _shown_target
from freshwiki.corpus.wikitext._sanitize import _escape_wiki
from freshwiki.corpus.wikitext._sentinels import _BR, _sentinel
from freshwiki.corpus.wikitext._shared import MATH_PLACEHOLDER
from freshwiki.corpus.wikitext._stream import (
    _DROP_TAG_CONTENT,
    _MAGIC_WORD_RE,
    _QUOTES_RE,
    _Block,
    _Heading,
    _Item,
    _ListMark,
    _make_tag_info,
    _quotes,
    _TagInfo,
)
from freshwiki.corpus.wikitext._tags import (
    _CONTAINERS,
    _SPACES_RE,
    MAINTENANCE_TAGS,
    TagSpec,
    _fold,
    _strip_template_prefix,
)
from freshwiki.corpus.wikitext._templates import (
    _COMMAS_RE,
    _FILE_VALUE_RE,
    _INFOBOX_NAMES,
    _INFOBOX_SKIP_FIELD_RE,
    _MAGIC_FUNCTIONS,
    _PAGENAME_WORDS,
    _PREFIX_TEMPLATES,
    INLINE_TEMPLATES,
    TemplateArgs,
)

_LEFTOVER_RE: Final = re.compile(r"\{\{|\}\}|\[\[|\]\]|\{\||\|\}|<[A-Za-z/]")


# The C tokenizer, as mwparserfromhell.parse uses; the pure-Python one where it is not built.
_TOKENIZER: Final[Any] = getattr(mwparserfromhell.parser, "CTokenizer", None) or Tokenizer


_BUILDER: Final[Any] = _builder.Builder


_OPENERS: Final = frozenset({
    _tok.TemplateOpen, _tok.ArgumentOpen, _tok.WikilinkOpen, _tok.ExternalLinkOpen,
    _tok.HeadingStart, _tok.CommentStart, _tok.TagOpenOpen, _tok.HTMLEntityStart,
})


_CLOSERS: Final = frozenset({
    _tok.TemplateClose, _tok.ArgumentClose, _tok.WikilinkClose, _tok.ExternalLinkClose,
    _tok.HeadingEnd, _tok.CommentEnd, _tok.TagCloseSelfclose, _tok.TagCloseClose,
    _tok.HTMLEntityEnd,
})
"""Tokens that open and close a node. Every node's tokens nest, so a top-level node ends
where the count of the two first returns to zero."""


def _node_end(tokens: Sequence[Any], start: int) -> int:
    """Index just past the top-level node whose first token is ``tokens[start]``."""
    depth = 0
    for j in range(start, len(tokens)):
        kind = type(tokens[j])
        if kind in _OPENERS:
            depth += 1
        elif kind in _CLOSERS:
            depth -= 1
        if depth <= 0:
            return j + 1
    return len(tokens)  # never closed: the builder raises on it, as for the whole chunk


def _texts(tokens: Sequence[Any]) -> list[str] | None:
    """The strings of ``tokens`` if every one is text, else ``None``."""
    if all(type(t) is _tok.Text for t in tokens):
        return [t.text for t in tokens]
    return None


def _split_at(tokens: Sequence[Any], separator: type) -> tuple[Sequence[Any], Sequence[Any] | None]:
    """Tokens before and after the first ``separator`` (``None`` after if there is none)."""
    for i, token in enumerate(tokens):
        if type(token) is separator:
            return tokens[:i], tokens[i + 1:]
    return tokens, None


class _Renderer(_FallbackMixin):
    """Turns mwparserfromhell nodes into stream items, registering tags as it goes."""

    def __init__(
        self, *, title: str, keep_tables: bool, keep_infobox: bool, collect: bool = True
    ) -> None:
        self.title = title
        self.keep_tables = keep_tables
        self.keep_infobox = keep_infobox
        self.tags: list[_TagInfo] = []
        self._collect = collect

    # -- tags ------------------------------------------------------------------------------

    def text(self, value: str) -> str:
        """A text node: quote markup and magic words go; leftover markup is regex-stripped."""
        if "''" in value:
            value = _QUOTES_RE.sub(_quotes, value)
        if "__" in value:
            value = _MAGIC_WORD_RE.sub("", value)
        if _LEFTOVER_RE.search(value):
            value = self.fb_text(value)
        return value

    def register(self, tag: _TagInfo) -> str:
        if not self._collect:
            return ""
        self.tags.append(tag)
        return _sentinel(len(self.tags) - 1)

    def plain(self, wikicode: Any) -> str:
        """Render without registering tags (for tag parameters themselves)."""
        saved, self._collect = self._collect, False
        try:
            return _squash(self.inline(wikicode.nodes))
        finally:
            self._collect = saved

    def make_tag(self, node: Any, spec: TagSpec) -> _TagInfo:
        params = {str(p.name).strip(): str(p.value).strip() for p in node.params}
        rendered = {str(p.name).strip(): self.plain(p.value) for p in node.params}
        return _make_tag_info(str(node.name).strip(), spec, params, rendered)

    # -- body level --------------------------------------------------------------------------

    def render_chunk(self, chunk: str, out: list[_Item]) -> None:
        """Parse a chunk and render it to ``out``, building nodes only where they are needed.

        mwparserfromhell tokenizes in C, but building its node tree (in Python) took most
        of the parse. Top-level text, list markers, plain headings and links of plain text
        are rendered straight from their tokens, with the same methods as their nodes;
        every other top-level node is built alone (the builder builds each top-level node
        from its own tokens, so alone it is the same node) and rendered by :meth:`body`.
        """
        tokens = _TOKENIZER().tokenize(chunk, 0, True)
        i, n = 0, len(tokens)
        while i < n:
            token = tokens[i]
            if type(token) is _tok.Text:
                out.append(self.text(token.text))
                i += 1
                continue
            end = _node_end(tokens, i)
            group = tokens[i:end]
            item = self.from_tokens(group)
            if item is None:
                self.body(_BUILDER().build(group).nodes, out)
            else:
                out.append(item)
            i = end

    def from_tokens(self, group: Sequence[Any]) -> _Item | None:
        """What :meth:`body` renders for this top-level node, without building it.

        ``None`` where its tokens are not simple enough: the caller builds it then.
        """
        kind, inner = type(group[0]), group[1:-1]
        if kind is _tok.TagOpenOpen:  # "*", "#", ":", ";" at a line start
            markup = group[0].wiki_markup
            if (markup and len(group) == 3 and type(group[1]) is _tok.Text
                    and type(group[2]) is _tok.TagCloseSelfclose
                    and group[1].text.strip().lower() in ("li", "dt", "dd")):
                return _ListMark(str(markup))
            return None
        if kind is _tok.HeadingStart:
            title = _texts(inner)
            if title is None:
                return None
            return _Heading(group[0].level, "".join([self.text(t) for t in title]))
        if kind is _tok.WikilinkOpen:
            before, after = _split_at(inner, _tok.WikilinkSeparator)
            target, label = _texts(before), None if after is None else _texts(after)
            if target is None or (after is not None and label is None):
                return None
            raw_label = None if label is None else "".join(label)
            return self.link(
                "".join([self.text(t) for t in target]),
                None if label is None else [Text(t) for t in label],
                lambda: raw_label is not None and ("|" + raw_label).endswith("|"),
            )
        if kind is _tok.ExternalLinkOpen:
            before, after = _split_at(inner, _tok.ExternalLinkSeparator)
            if _texts(before) is None:
                return None
            if after is None:
                return ""  # a bare or untitled link shows nothing, as in node()
            title = _texts(after)
            return None if title is None else "".join([self.text(t) for t in title])
        return None

    def body(self, nodes: Iterable[Any], out: list[_Item]) -> None:
        for node in nodes:
            if isinstance(node, Text):
                out.append(self.text(node.value))
            elif isinstance(node, Heading):
                out.append(_Heading(node.level, self.inline(node.title.nodes)))
            elif isinstance(node, Tag):
                tag = str(node.tag).strip().lower()
                if node.wiki_markup and tag in ("li", "dt", "dd"):
                    out.append(_ListMark(str(node.wiki_markup)))
                elif tag == "table":
                    if self.keep_tables:
                        out.append(_Block(self.table(node), infobox=False))
                else:
                    out.append(self.tag(node))
            elif isinstance(node, Template) and _is_infobox(node):
                if self.keep_infobox:
                    out.append(_Block(self.infobox(node), infobox=True))
            else:
                out.append(self.node(node))

    # -- inline level ------------------------------------------------------------------------

    def inline(self, nodes: Iterable[Any]) -> str:
        return "".join([self.node(n) for n in nodes])

    def node(self, node: Any) -> str:
        if isinstance(node, Text):
            return self.text(node.value)
        if isinstance(node, Wikilink):
            return self.wikilink(node)
        if isinstance(node, Template):
            return self.template(node)
        if isinstance(node, Tag):
            return self.tag(node)
        if isinstance(node, ExternalLink):
            return self.inline(node.title.nodes) if node.title is not None else ""
        if isinstance(node, HTMLEntity):
            try:
                return str(node.normalize())
            except (ValueError, OverflowError):
                return ""
        if isinstance(node, Heading):
            return "\n" + self.inline(node.title.nodes) + "\n"
        if isinstance(node, Argument):
            return self.inline(node.default.nodes) if node.default is not None else ""
        if isinstance(node, Comment):
            return ""
        return ""

    def wikilink(self, node: Any) -> str:
        return self.link(
            self.inline(node.title.nodes),
            None if node.text is None else node.text.nodes,
            lambda: str(node).endswith("|]]"),
        )

    def link(
        self, title: str, label_nodes: Iterable[Any] | None, bare_pipe: Callable[[], bool]
    ) -> str:
        """What a wikilink shows, from its rendered title and its label's nodes.

        ``bare_pipe`` says whether the link's source ends in ``|]]``: with an empty label
        that is the pipe trick. The label is rendered only if the link shows at all.
        """
        target = _shown_target(_squash(title))
        if target is None:
            return ""
        if label_nodes is not None:
            label = self.inline(label_nodes)
            if label.strip() or not bare_pipe():
                return label
            # Pipe trick: [[Foo (bar)|]] shows "Foo".
            target = re.sub(r"\s*\([^()]*\)\s*$", "", target.split(":", 1)[-1])
        page, _, fragment = target.partition("#")
        return (page or fragment).replace("_", " ")

    def tag(self, node: Any) -> str:
        tag = str(node.tag).strip().lower()
        if node.wiki_markup and tag in ("li", "dt", "dd"):
            return ""
        if tag == "br":
            return _BR
        if tag == "hr":
            return "\n\n"
        if tag == "table":
            return self.table(node) if self.keep_tables else ""
        if tag in _DROP_TAG_CONTENT:
            return _escape_wiki(MATH_PLACEHOLDER) if tag == "math" else ""
        if node.contents is None:
            return ""
        if tag in ("nowiki", "pre"):
            return str(node.contents)
        inner = self.inline(node.contents.nodes)
        if tag == "poem":  # each line of a poem is a line break, not a joined line
            inner = inner.strip("\n").replace("\n", _BR)
        if tag in ("p", "div", "blockquote", "ul", "ol", "dl", "center", "poem"):
            return "\n" + inner + "\n" if tag != "p" else "\n\n" + inner + "\n\n"
        if tag in ("li", "dt", "dd", "tr"):
            return "\n" + inner
        if tag in ("td", "th"):
            return " " + inner
        return inner

    def template(self, node: Any) -> str:
        written = str(node.name).strip()
        key = _fold(_strip_template_prefix(written))
        spec = MAINTENANCE_TAGS.get(key)
        if spec is not None:
            info = self.make_tag(node, spec)
            shown = ""
            if spec.scope == "inline" and (info.params.get("text") or key.endswith("span")):
                shown = self.inline(node.get("text").value.nodes) if node.has("text") else (
                    self.inline(node.get("1").value.nodes) if node.has("1") else "")
            return shown + self.register(info)
        if key in _CONTAINERS:
            return self.container(node)
        renderer = INLINE_TEMPLATES.get(key)
        if renderer is None:
            renderer = next((r for p, r in _PREFIX_TEMPLATES if key.startswith(p)), None)
        if renderer is not None:
            values = {str(p.name).strip(): _squash(self.inline(p.value.nodes))
                      for p in node.params}
            return renderer(TemplateArgs(values))
        if ":" in written and not key.startswith("#"):
            rendered = _squash(self.inline(node.name.nodes))
            head, _, rest = rendered.partition(":")
            magic = _MAGIC_FUNCTIONS.get(head.strip().casefold())
            if magic is not None:
                return magic(rest.strip())
            return ""
        if key in _PAGENAME_WORDS:
            return self.title
        return ""

    def container(self, node: Any) -> str:
        """``{{Multiple issues}}``: the banners it holds, as block tags."""
        out: list[str] = []
        for param in node.params:
            if param.showkey:
                spec = MAINTENANCE_TAGS.get(_fold(str(param.name)))
                if spec is not None:
                    value = str(param.value).strip()
                    info = _TagInfo(spec.name, str(param.name).strip(), {"date": value},
                                    value or None, None, "block")
                    out.append(self.register(info))
                continue
            for inner in param.value.filter_templates(recursive=False):
                key = _fold(_strip_template_prefix(str(inner.name)))
                spec = MAINTENANCE_TAGS.get(key)
                if spec is not None:
                    info = self.make_tag(inner, spec)
                    info.family = "block"
                    out.append(self.register(info))
        return "".join(out)

    # -- tables and infoboxes ----------------------------------------------------------------

    def cell(self, node: Any) -> str:
        if node.contents is None:
            return ""
        return _squash(self.inline(node.contents.nodes).replace("\n", " ").replace(_BR, " "))

    def table(self, node: Any) -> str:
        """Rows as ``Header: value; Header2: value2`` lines, headers from all-``!`` rows."""
        rows: list[list[tuple[bool, str, int]]] = []
        caption = ""
        current: list[tuple[bool, str, int]] | None = None
        for child in node.contents.nodes if node.contents is not None else ():
            if not isinstance(child, Tag):
                continue
            tag = str(child.tag).strip().lower()
            if tag == "tr":
                current = None
                cells = [
                    self._cell_entry(c)
                    for c in (child.contents.nodes if child.contents is not None else ())
                    if isinstance(c, Tag) and str(c.tag).strip().lower() in ("td", "th")
                ]
                rows.append(cells)
            elif tag in ("td", "th"):
                raw = str(child.contents) if child.contents is not None else ""
                if tag == "td" and not rows and raw.startswith("+"):
                    caption = _squash(self.cell(child).lstrip("+"))
                    continue
                if current is None:
                    current = []
                    rows.append(current)
                current.append(self._cell_entry(child))
            elif tag == "caption":
                caption = self.cell(child)
        lines = [caption] if caption else []
        headers: list[str] = []
        for row in rows:
            if row and all(is_header for is_header, _, _ in row):
                headers = [text for _, text, span in row for _ in range(span)]
                continue
            parts: list[str] = []
            col = 0
            for _, text, span in row:
                header = headers[col] if col < len(headers) else ""
                col += span
                if not text:
                    continue
                parts.append(f"{header}: {text}" if header and header != text else text)
            if parts:
                lines.append("; ".join(parts))
        return "\n".join(lines)

    def _cell_entry(self, node: Any) -> tuple[bool, str, int]:
        span = 1
        if node.has("colspan"):
            digits = re.match(r"\s*\"?'?(\d+)", str(node.get("colspan").value))
            span = max(1, min(int(digits.group(1)), 100)) if digits else 1
        return str(node.tag).strip().lower() == "th", self.cell(node), span

    def infobox(self, node: Any) -> str:
        """``field: value`` lines; images, maps and styling fields are left out."""
        lines: list[str] = []
        for param in node.params:
            if not param.showkey:
                continue
            key = _SPACES_RE.sub(" ", str(param.name).replace("_", " ")).strip()
            if not key or _INFOBOX_SKIP_FIELD_RE.match(key.replace(" ", "_")):
                continue
            rendered = self.inline(param.value.nodes).replace(_BR, "\n")
            value = ", ".join(
                t for t in (_squash(line) for line in rendered.split("\n")) if t)
            value = _COMMAS_RE.sub(", ", value).strip(" ,")
            if value and not _FILE_VALUE_RE.fullmatch(value):
                lines.append(f"{key}: {value}")
        return "\n".join(lines)


def _is_infobox(node: Any) -> bool:
    key = _fold(_strip_template_prefix(str(node.name)))
    return key.startswith("infobox") or key in _INFOBOX_NAMES
