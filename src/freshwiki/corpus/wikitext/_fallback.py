"""The fallback: a conservative regex strip of a chunk the parser cannot handle.

Linear at any depth, it keeps a chunk's text, headings, lists, maintenance tags and whitelisted
templates, and drops other templates and every table, so no page loses its text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from typing import Final

from freshwiki.corpus.wikitext._assemble import _squash
from freshwiki.corpus.wikitext._sanitize import _HTML_TAGS, _template_renders
from freshwiki.corpus.wikitext._sentinels import _BR, _SENT_RE, _sentinel_index
from freshwiki.corpus.wikitext._stream import (
    _HIDDEN_NAMESPACES,
    _INTERWIKI_LANG_RE,
    _MAGIC_WORD_RE,
    _QUOTES_RE,
    _Heading,
    _Item,
    _ListMark,
    _make_tag_info,
    _quotes,
    _TagInfo,
)
from freshwiki.corpus.wikitext._tags import (
    _CONTAINERS,
    MAINTENANCE_TAGS,
    _fold,
    _strip_template_prefix,
)
from freshwiki.corpus.wikitext._templates import (
    _MAGIC_FUNCTIONS,
    _PREFIX_TEMPLATES,
    INLINE_TEMPLATES,
    TemplateArgs,
)

_BRACE_RE: Final = re.compile(r"\{\{|\}\}")


_EXT_LINK_RE: Final = re.compile(r"\[(?:https?:|ftp:|mailto:|//)[^\s\]]*\s*([^\]\n]*)\]")


_BARE_URL_RE: Final = re.compile(r"(?:https?|ftp)://[^\s<>\[\]]+")


_HTML_TAG_RE: Final = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")


_KNOWN_TAG_RE: Final = re.compile(
    r"</?(?:" + "|".join(sorted(_HTML_TAGS | {"br", "hr", "li", "dt", "dd", "tr", "td", "th"}))
    + r")\b[^<>]*>",
    re.IGNORECASE,
)


_BR_TAG_RE: Final = re.compile(r"<\s*/?\s*br\b[^<>]*>", re.IGNORECASE)


_TABLE_MARKUP_LINE_RE: Final = re.compile(r"^[ \t:]*(?:\{\||\|\}|\|-|\|\+|[|!])[^\n]*$",
                                          re.MULTILINE)


_HEADING_LINE_RE: Final = re.compile(r"^(={1,6})\s*(.+?)\s*\1\s*$")


_LIST_LINE_RE: Final = re.compile(r"^([*#:;]+)\s*")


def _split_top_level(content: str) -> list[str]:
    """Split a template's inside on ``|`` outside nested ``[[ ]]`` (and ``{{ }}``)."""
    if "[[" not in content and "{{" not in content:
        return content.split("|")
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    n = len(content)
    while i < n:
        two = content[i:i + 2]
        if two in ("{{", "[["):
            depth += 1
            i += 2
            continue
        if two in ("}}", "]]"):
            depth = max(0, depth - 1)
            i += 2
            continue
        if content[i] == "|" and depth == 0:
            parts.append(content[start:i])
            start = i + 1
        i += 1
    parts.append(content[start:])
    return parts


def _shown_target(target: str) -> str | None:
    """A link target without its leading ``:``, or ``None`` if the link shows nothing.

    Files, categories and interlanguage links render nothing in the text, unless a leading
    ``:`` (``[[:Category:X]]``) makes them ordinary links.
    """
    visible = target.startswith(":")
    target = target.lstrip(":").strip()
    if ":" in target and not visible:
        prefix = target.split(":", 1)[0].strip().casefold()
        if prefix in _HIDDEN_NAMESPACES or _INTERWIKI_LANG_RE.fullmatch(prefix):
            return None
    return target


def _fb_link(inner: str) -> str:
    raw_target, _, label = inner.partition("|")
    target = _shown_target(raw_target)
    if target is None:
        return ""
    if label:
        return label
    return target.partition("#")[0] or target.partition("#")[2]


_LINK_TOKEN_RE: Final = re.compile(r"\[\[|\]\]")


def _reduce_nested(
    text: str,
    tokens: re.Pattern[str],
    opener: str,
    closed: Callable[[str], str],
    unclosed: Callable[[str], str],
) -> str:
    """Replace each ``opener ... closer`` pair, innermost first, by ``closed(inside)``.

    A stack of buffers, so linear at any depth (the parser's recursion is what fails on deep
    nesting). ``tokens`` matches the opener and the closer; a stray closer is left as text,
    and what an opener never closed becomes ``unclosed(inside)``.
    """
    stack: list[list[str]] = [[]]
    pos = 0
    for m in tokens.finditer(text):
        stack[-1].append(text[pos:m.start()])
        pos = m.end()
        if m.group(0) == opener:
            stack.append([])
        elif len(stack) > 1:
            inner = "".join(stack.pop())
            stack[-1].append(closed(inner))
    stack[-1].append(text[pos:])
    while len(stack) > 1:
        inner = "".join(stack.pop())
        stack[-1].append(unclosed(inner))
    return "".join(stack[0])


def _keep(text: str) -> str:
    return text


def _fb_links(text: str) -> str:
    """Reduce links innermost first (file captions go with their file); linear, any depth."""
    if "[[" not in text and "]]" not in text:
        return text
    return _reduce_nested(text, _LINK_TOKEN_RE, "[[", _fb_link, _keep)  # unclosed: keep text


def _fb_inline(text: str) -> str:
    """Inline markup other than templates, by regex: links, URLs, tags, quotes, entities."""
    text = _fb_links(text)
    if "[" in text:
        text = _EXT_LINK_RE.sub(r"\1", text)
    if "://" in text:
        text = _BARE_URL_RE.sub("", text)
    if "<" in text:
        text = _BR_TAG_RE.sub(_BR, text)
        text = _HTML_TAG_RE.sub("", text)
    if "''" in text:
        text = _QUOTES_RE.sub(_quotes, text)
    if "__" in text:
        text = _MAGIC_WORD_RE.sub("", text)
    return html.unescape(text) if "&" in text else text


def _fb_params(parts: Sequence[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    index = 1
    for part in parts:
        name, eq, value = part.partition("=")
        if eq and "[[" not in name:
            params[name.strip()] = value.strip()
        else:
            params[str(index)] = part.strip()
            index += 1
    return params


def _fb_drop_tables(text: str) -> str:
    out: list[str] = []
    depth = 0
    for line in text.split("\n"):
        if line.lstrip(" \t:").startswith("{|"):
            depth += 1
            continue
        if depth and line.lstrip().startswith("|}"):
            depth -= 1
            continue
        if not depth:
            out.append(line)
    return "\n".join(out)


class _FallbackMixin:
    """Regex rendering for what the parser failed on or left as text."""

    tags: list[_TagInfo]

    def register(self, tag: _TagInfo) -> str:
        raise NotImplementedError

    def fb_templates(self, text: str) -> str:
        """Render ``{{...}}`` innermost first with a stack of buffers: linear, any depth.

        Maintenance tags leave sentinels, whitelisted templates are rendered from their
        (regex-cleaned) arguments, other templates are dropped. The braces of unclosed
        templates are rendered if they would be, else dropped with their text kept.
        """
        if "{{" not in text and "}}" not in text:
            return text
        return _reduce_nested(text, _BRACE_RE, "{{", self.fb_template, self.fb_unclosed)

    def fb_unclosed(self, content: str) -> str:
        """An unclosed template: rendered if it renders, else its text is kept."""
        head, bar, rest = content.partition("|")
        if _template_renders(head, keep_infobox=False):
            return self.fb_template(content)
        return rest if bar else content

    def fb_template(self, content: str) -> str:
        parts = _split_top_level(content)
        written = parts[0].strip()
        key = _fold(_strip_template_prefix(written))
        spec = MAINTENANCE_TAGS.get(key)
        if spec is not None:
            raw = _fb_params(parts[1:])
            rendered = {k: _squash(_SENT_RE.sub("", _fb_inline(v))) for k, v in raw.items()}
            return self.register(_make_tag_info(written, spec, raw, rendered))
        if key in _CONTAINERS:
            found: list[str] = []
            for name, value in _fb_params(parts[1:]).items():
                inner = MAINTENANCE_TAGS.get(_fold(name))
                if inner is not None:
                    found.append(self.register(_TagInfo(inner.name, name, {"date": value},
                                                        value or None, None, "block")))
            for token in _SENT_RE.findall(content):  # banners nested inside it
                self.tags[_sentinel_index(token)].family = "block"
                found.append(token)
            return "".join(found)
        renderer = INLINE_TEMPLATES.get(key)
        if renderer is None:
            renderer = next((r for p, r in _PREFIX_TEMPLATES if key.startswith(p)), None)
        if renderer is not None:
            values = {k: _squash(_fb_inline(v)) for k, v in _fb_params(parts[1:]).items()}
            return renderer(TemplateArgs(values))
        head, colon, rest = written.partition(":")
        magic = _MAGIC_FUNCTIONS.get(head.strip().casefold()) if colon else None
        if magic is not None:
            return magic(_squash(_fb_inline(rest)))
        return ""

    def fb_text(self, value: str) -> str:
        """Markup left in a text node (nesting past the parser's depth limit)."""
        if "{{" in value or "}}" in value:
            value = self.fb_templates(value)
        if "[[" in value or "]]" in value:
            value = _fb_links(value)
        if "<" in value:
            value = _BR_TAG_RE.sub(_BR, value)
            value = _KNOWN_TAG_RE.sub("", value)
        if "{|" in value or "|}" in value:
            value = _TABLE_MARKUP_LINE_RE.sub("", value).replace("{|", "").replace("|}", "")
        return value

    def fallback_stream(self, chunk: str) -> list[_Item]:
        """The chunk's text, headings, lists and tags by regex; other templates and tables go.

        Used when the parser or the renderer fails on a chunk. It renders the same
        whitelisted templates from regex-split arguments, and keeps maintenance tags.
        """
        text = self.fb_templates(chunk)
        text = _fb_drop_tables(text)
        text = _fb_inline(text)
        out: list[_Item] = []
        lines = text.split("\n")
        for i, line in enumerate(lines):
            heading = _HEADING_LINE_RE.match(line)
            if heading:
                out.append(_Heading(len(heading.group(1)), heading.group(2)))
                out.append("\n")
                continue
            marks = _LIST_LINE_RE.match(line)
            if marks:
                out.extend(_ListMark(c) for c in marks.group(1))
                line = line[marks.end():]
            out.append(line + ("\n" if i < len(lines) - 1 else ""))
        return out
