"""Wikitext → clean paragraphs with their section path and maintenance tags.

The rest of freshwiki needs what a reader sees in an article, not its markup. It also needs
what editors flagged: ``{{Inconsistent}}``, ``{{Citation needed}}``, ``{{Update}}``... These
tags are how Wikipedia marks contradictory or stale text, so they are kept as
:class:`~freshwiki.records.MaintenanceTag` records, anchored where they stood, not thrown away
with the other templates.

How a page is processed, and why:

1. **Sanitize, in linear time.** mwparserfromhell backtracks from every construct that is
   never closed: 240 KB of ``[[a|[[b]] c`` lines took 400 s to parse, and an unclosed
   ``{{``, ``{|``, ``<span>`` or ``<ref>`` is just as bad. A single pass matches ``{{ }}``,
   ``[[ ]]``, ``{| |}`` and paired HTML tags with stacks (as MediaWiki's preprocessor does)
   and removes the markup of openers that are never closed and of stray closers. The text
   stays. Comments go first (an unclosed ``<!--`` runs to the end of the page, as in
   MediaWiki). ``<ref>`` and other extension tags are taken out before parsing: refs and
   galleries are dropped, ``<nowiki>``/``<pre>`` become plain text, and ``<math>`` becomes
   :data:`MATH_PLACEHOLDER`.
2. **Chunk.** The text is cut at blank lines and heading lines that lie outside every
   template, link, table and tag, into chunks of about :data:`CHUNK_CHARS`. Each chunk is
   parsed on its own, so any left-over superlinear behaviour of the parser stays bounded
   by the chunk size. Cutting there changes nothing: paragraphs end at blank lines anyway.
3. **Parse and render.** mwparserfromhell parses each chunk (``skip_style_tags``: the
   quote markup is stripped from the text instead, which is faster and never backtracks).
   Its tokenizer is C but its node builder is Python, so nodes are built only for the
   top-level constructs that need them; text, list markers and plain headings and links are
   rendered from their tokens (:meth:`_Renderer.render_chunk`), with the same result.
   The nodes are rendered to a stream of text, headings, list markers and table blocks.
   Links become their text, and refs, files, categories, interlanguage links and
   templates go away. A small, data-driven set of inline templates is rendered instead
   (:data:`INLINE_TEMPLATES`). Maintenance tags leave a private-use sentinel in the text
   where they stood.
4. **Assemble.** The stream is cut into :class:`~freshwiki.records.Paragraph` records at
   blank lines, list boundaries, headings and tables. The whitespace and punctuation left
   behind by removed markup is tidied, and each tag sentinel becomes a ``sentence_offset``
   in the final text.

If the parser or the renderer fails on a chunk, including ``RecursionError``, or the chunk
nests deeper than :data:`DEPTH_LIMIT`, that chunk goes through a fallback instead: a
conservative regex strip (linear, any depth) that keeps the chunk's text, headings, lists,
maintenance tags and whitelisted templates, and drops other templates and every table.
``on_error="raise"`` turns this off (useful to find such pages); the module constant
:data:`FALLBACK_ON_ERROR` sets the default.

Tag scope follows where the editor put the tag, not only which template it is. Editors put
``{{Inconsistent}}`` mid-sentence (all 68 uses in WikiContradict are inline), so:

* A tag that has text of its paragraph before it is ``inline``. Its ``sentence_offset``
  is where it stood in the final text, i.e. the end of the text it qualifies.
* A block-family tag (:data:`MAINTENANCE_TAGS`, scope ``block``) with nothing of its
  paragraph before it is ``block``, with ``sentence_offset=None``. It attaches to the next
  paragraph: the first paragraph of its section, or of the lead for a banner at the top.
  A line holding only block tags also ends the paragraph before it, since MediaWiki
  renders a banner there. A tag in a heading is a block tag of that section.
* A tag whose paragraph turns out empty (the template stood alone) becomes a block tag of
  the next paragraph. If its section (and subsections) has no paragraph left, the tags are
  emitted on a paragraph with empty text, so that no tag is ever lost.
* Tags inside content that is dropped (tables and infoboxes when not kept, refs, files,
  lists when ``keep_lists=False``, boilerplate sections) are not attached to anything.
  :func:`extract_tags` still reports them.
"""

from __future__ import annotations

import bisect
import functools
import html
import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

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

from freshwiki.errors import FreshwikiError
from freshwiki.records import MaintenanceTag, Paragraph

__all__ = [
    "BOILERPLATE_SECTIONS",
    "CHUNK_CHARS",
    "DEPTH_LIMIT",
    "FALLBACK_ON_ERROR",
    "INLINE_TEMPLATES",
    "MAINTENANCE_TAGS",
    "MATH_PLACEHOLDER",
    "TagSpec",
    "TemplateArgs",
    "WikitextError",
    "canonical_tag_name",
    "clean_wikitext",
    "extract_tags",
]

MATH_PLACEHOLDER: Final = "[formula]"
"""What ``<math>`` becomes. A placeholder keeps the sentence readable ("the area is
[formula]"); raw TeX would add noise that retrieval and readers cannot use."""

FALLBACK_ON_ERROR: Final = True
"""Default for ``on_error``: regex-strip a chunk the parser cannot handle instead of raising."""

CHUNK_CHARS: Final = 32_000
"""Target size of the pieces parsed separately (cut only where no construct is open)."""

BOILERPLATE_SECTIONS: Final = frozenset(
    {
        "references",
        "external links",
        "see also",
        "further reading",
        "notes",
        "bibliography",
        "sources",
        "citations",
        "footnotes",
        "notes and references",
        "references and notes",
        "works cited",
        "explanatory notes",
        "general references",
        "cited sources",
    }
)
"""Section titles (case-insensitive) dropped with their subsections: lists of references and
links, not article text. "Bibliography" is dropped too although for authors it lists works."""

OnError = Literal["fallback", "raise"]


class WikitextError(FreshwikiError):
    """The parser failed on a page and ``on_error="raise"`` was asked for."""


# --------------------------------------------------------------------------------------
# Maintenance tags: which templates, canonical names, default scope
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TagSpec:
    """A maintenance template family.

    Attributes:
        name: Canonical name reported in :attr:`MaintenanceTag.name`.
        scope: ``inline`` for templates that qualify the text before them (``[citation
            needed]``), ``block`` for banners that qualify what follows. Position decides in
            the end (see the module docstring); this is the family's default.
        aliases: Other spellings and redirects, matched case-insensitively with ``_`` as
            a space.
    """

    name: str
    scope: Literal["inline", "block"]
    aliases: tuple[str, ...] = ()


_TAG_SPECS: Final[tuple[TagSpec, ...]] = (
    # -- inline: qualify the sentence or words they follow --------------------------------
    TagSpec(
        "Citation needed",
        "inline",
        ("cn", "fact", "citation-needed", "citationneeded", "cite needed", "cite-needed",
         "citeneeded", "citation required", "need citation", "needs citation", "needcite",
         "ref needed", "reference needed", "source needed", "sourceneeded"),
    ),
    TagSpec("Citation needed span", "inline", ("cn span", "fact span", "cn-span")),
    TagSpec("Dubious", "inline", ("dubious-inline", "dubious inline", "dubious discuss",
                                  "dubiousdiscuss", "doubtful")),
    TagSpec("Disputed inline", "inline", ("disputed-inline", "disputedinline",
                                          "dispute-inline", "dispute inline")),
    TagSpec(
        "Contradict-inline",
        "inline",
        ("contradict inline", "contradicts-inline", "contradicts inline",
         "contradiction-inline", "contradiction inline", "contradictory inline",
         "contradictory-inline", "self-contradictory inline", "contradict-inline-section"),
    ),
    TagSpec("Clarify", "inline", ("clarification needed", "clarify-inline", "clarification")),
    TagSpec("When", "inline", ("when?",)),
    TagSpec("Update inline", "inline", ("update-inline", "updateinline", "outdated inline",
                                        "out of date inline", "update-small")),
    TagSpec("Update after", "inline", ()),
    TagSpec("Better source needed", "inline", ("better source", "bettersource",
                                               "better-source", "bsn",
                                               "better source needed inline")),
    TagSpec("Unreliable source?", "inline", ("unreliable source", "unreliable source inline",
                                             "unreliable-source")),
    TagSpec("Failed verification", "inline", ("failed-verification", "fv", "not in source",
                                              "verification failed")),
    TagSpec("Who", "inline", ("who?",)),
    TagSpec("Which", "inline", ("which?",)),
    TagSpec("By whom", "inline", ("by whom?",)),
    TagSpec("According to whom", "inline", ("according to whom?",)),
    TagSpec("Vague", "inline", ()),
    TagSpec("Specify", "inline", ()),
    TagSpec("Weasel inline", "inline", ("weasel-inline", "weasel word", "weasel-word")),
    TagSpec("Original research inline", "inline", ("or-inline", "or inline",
                                                   "original research-inline")),
    TagSpec("Relevance inline", "inline", ("relevance-inline", "irrelevant inline")),
    # -- block: banners over a section, paragraph or article -------------------------------
    TagSpec("Inconsistent", "block", ()),
    TagSpec("Self-contradictory", "block", ("self contradictory", "selfcontradictory",
                                            "self-contradicting", "self contradicting")),
    TagSpec("Contradict", "block", ("contradiction", "contradicts")),
    TagSpec("Contradictory", "block", ()),
    TagSpec("Contradict-other", "block", ("contradict other", "contradicts-other",
                                          "contradicts other", "contradictother",
                                          "contradict-other-multiple")),
    TagSpec("Update", "block", ("out of date", "outdated", "out-of-date", "update section",
                                "outdated section")),
    TagSpec("Disputed", "block", ("disputed section", "disputed-section", "dispute",
                                  "accuracy", "factual accuracy")),
    TagSpec("More citations needed", "block", ("refimprove", "ref improve",
                                               "refimprove section",
                                               "more citations needed section",
                                               "improve references", "more sources")),
    TagSpec("Unreferenced", "block", ("unreferenced section", "unsourced", "no references")),
    TagSpec("Original research", "block", ("or", "original research section")),
)


_SPACES_RE: Final = re.compile(r"\s+")
_SUBST_RE: Final = re.compile(r"^(?:safesubst:|subst:|msgnw:)\s*", re.IGNORECASE)
_TEMPLATE_NS_RE: Final = re.compile(r"^template\s*:\s*", re.IGNORECASE)


def _fold(name: str) -> str:
    return _SPACES_RE.sub(" ", name.replace("_", " ")).strip().casefold()


MAINTENANCE_TAGS: Final[Mapping[str, TagSpec]] = {
    _fold(alias): spec for spec in _TAG_SPECS for alias in (spec.name, *spec.aliases)
}
"""Folded template name (or alias) → its family. Extend :data:`_TAG_SPECS` to add tags."""

_CONTAINERS: Final = frozenset({"multiple issues", "multipleissues", "article issues",
                                "articleissues", "issues"})
"""Templates that wrap banners (``{{Multiple issues|{{Update}}{{Refimprove}}}}``) or name
them as parameters (old style ``{{Multiple issues|refimprove=May 2010}}``)."""

_SCOPE_WORDS: Final = frozenset({"section", "article", "list", "table", "paragraph",
                                 "sentence", "part", "lead", "intro", "introduction",
                                 "infobox", "page", "small", "inline", "yes"})

_MONTHS: Final = ("January", "February", "March", "April", "May", "June", "July",
                  "August", "September", "October", "November", "December")
_DATE_LIKE_RE: Final = re.compile(
    r"(?:\d{1,2}\s+)?(?:" + "|".join(m[:3] + "[a-z]*" for m in _MONTHS)
    + r")\.?,?\s+\d{4}|\d{4}(?:-\d{2}(?:-\d{2})?)?",
    re.IGNORECASE,
)

_REASON_KEYS: Final = ("reason", "about", "text")
_LATE_REASON_KEYS: Final = ("talk", "discuss", "article")


def canonical_tag_name(template_name: str) -> str | None:
    """The canonical maintenance-tag name for a template name as written, or ``None``.

    ``"contradictory inline"`` → ``"Contradict-inline"``, ``"cn"`` → ``"Citation needed"``,
    ``"Inconsistent citations"`` → ``None`` (a citation-format note, not a content tag).
    """
    spec = MAINTENANCE_TAGS.get(_fold(_strip_template_prefix(template_name)))
    return spec.name if spec else None


def _strip_template_prefix(name: str) -> str:
    name = name.strip()
    if ":" not in name:
        return name
    return _TEMPLATE_NS_RE.sub("", _SUBST_RE.sub("", name))


# --------------------------------------------------------------------------------------
# Inline templates whose text matters
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TemplateArgs:
    """A template's arguments, already rendered to clean text, as a renderer sees them.

    Positional arguments are named ``"1"``, ``"2"``..., as in MediaWiki.
    """

    values: Mapping[str, str]

    def pos(self, index: int, default: str = "") -> str:
        """The ``index``-th positional argument (1-based), stripped."""
        return self.values.get(str(index), default).strip()

    def get(self, name: str, default: str = "") -> str:
        """A named argument, stripped."""
        return self.values.get(name, default).strip()

    def positional(self) -> list[str]:
        """All positional arguments in order, up to the first missing index."""
        out: list[str] = []
        i = 1
        while str(i) in self.values:
            out.append(self.values[str(i)].strip())
            i += 1
        return out


Renderer = Callable[[TemplateArgs], str]


def _month(value: str) -> str:
    if value.isdigit() and 1 <= int(value) <= 12:
        return _MONTHS[int(value) - 1]
    return value


def _format_date(year: str, month: str = "", day: str = "", *, mdy: bool = False) -> str:
    """``1900, 1, 2`` → ``2 January 1900`` (``January 2, 1900`` with ``mdy``)."""
    year, month, day = year.strip(), _month(month.strip()), day.strip().lstrip("0")
    if month and day:
        return f"{month} {day}, {year}" if mdy else f"{day} {month} {year}"
    return f"{month} {year}".strip()


def _is_mdy(args: TemplateArgs) -> bool:
    return any(args.get(k).casefold() in {"y", "yes", "1", "true"} for k in ("mf", "md"))


def _iso_date(text: str, *, mdy: bool = False) -> str:
    m = re.fullmatch(r"(\d{4})-(\d{1,2})(?:-(\d{1,2}))?", text.strip())
    if not m:
        return text.strip()
    return _format_date(m.group(1), m.group(2), m.group(3) or "", mdy=mdy)


def _render_date(args: TemplateArgs) -> str:
    parts = args.positional()
    if not parts:
        return ""
    if len(parts) == 1 or not parts[0].isdigit():
        return _iso_date(parts[0], mdy=_is_mdy(args) or parts[-1].casefold() == "mdy")
    return _format_date(*[*parts, "", ""][:3], mdy=_is_mdy(args))


def _render_death_date_and_age(args: TemplateArgs) -> str:
    p = [*args.positional(), "", "", "", "", "", ""]
    died = _format_date(p[0], p[1], p[2], mdy=_is_mdy(args))
    nums = p[:6]
    if all(x.isdigit() for x in nums):
        y1, m1, d1, y2, m2, d2 = (int(x) for x in nums)
        age = y1 - y2 - ((m1, d1) < (m2, d2))
        return f"{died} (aged {age})"
    return died


def _render_as_of(args: TemplateArgs) -> str:
    p = args.positional()
    if args.get("alt"):
        return args.get("alt")
    when = _format_date(*[*p, "", "", ""][:3], mdy=args.get("df").casefold() == "us")
    lead = "Since" if args.get("since").casefold() in {"y", "yes"} else "As of"
    if args.get("lc").casefold() in {"y", "yes"}:
        lead = lead.lower()
    return f"{lead} {when}{args.get('post')}".strip()


def _render_frac(args: TemplateArgs) -> str:
    p = [x for x in args.positional() if x]
    if len(p) == 1:
        return f"1/{p[0]}"
    if len(p) == 2:
        return f"{p[0]}/{p[1]}"
    if len(p) >= 3:
        return f"{p[0]} {p[1]}/{p[2]}"
    return ""


_CONVERT_UNITS: Final[Mapping[str, str]] = {
    "km2": "km²", "m2": "m²", "cm2": "cm²", "mi2": "sq mi", "sqmi": "sq mi", "ft2": "sq ft",
    "sqft": "sq ft", "m3": "m³", "km3": "km³", "cm3": "cm³", "cuft": "cu ft", "acre": "acres",
    "C": "°C", "F": "°F", "ftin": "ft", "kph": "km/h", "mph": "mph", "kn": "kn",
}
_CONVERT_RANGE: Final[Mapping[str, str]] = {
    "-": "–", "–": "–", "to": "to", "and": "and", "or": "or", "by": "by", "x": "×",
    "+/-": "±", "&": "&", "to(-)": "to",
}
_NUMBER_RE: Final = re.compile(r"[-+−]?[\d,]*\.?\d+(?:e\d+)?(?:[+/]\d+(?:/\d+)?)?")


def _render_convert(args: TemplateArgs) -> str:
    """``{{convert|5|km|mi}}`` → ``5 km``; ranges and ``ft|in`` pairs are kept."""
    p = args.positional()
    if not p:
        return ""
    out = [p[0]]
    i = 1
    while i + 1 < len(p) and p[i] in _CONVERT_RANGE and _NUMBER_RE.fullmatch(p[i + 1]):
        word = _CONVERT_RANGE[p[i]]
        out.append(word if word == "–" else f" {word} ")
        out.append(p[i + 1])
        i += 2
    text = "".join(out)
    if i < len(p) and p[i]:
        text += " " + _CONVERT_UNITS.get(p[i], p[i])
        # A second value and unit, e.g. {{convert|6|ft|2|in}} (not the output unit).
        if (i + 2 < len(p) and _NUMBER_RE.fullmatch(p[i + 1]) and p[i + 2]
                and not _NUMBER_RE.fullmatch(p[i + 2])):
            text += f" {p[i + 1]} {_CONVERT_UNITS.get(p[i + 2], p[i + 2])}"
    return text


def _join_list(args: TemplateArgs) -> str:
    items = [x for x in args.positional() if x]
    if len(items) == 1:  # {{Plainlist| * a * b}}: one argument holding a wikitext list
        items = [line.strip() for line in items[0].split("\n") if line.strip()]
    return ", ".join(items)


def _arg(index: int) -> Renderer:
    def render(args: TemplateArgs) -> str:
        return args.pos(index) or args.get("text")
    return render


def _last_arg(args: TemplateArgs) -> str:
    p = [x for x in args.positional() if x]
    return p[-1] if p else ""


def _const(text: str) -> Renderer:
    def render(args: TemplateArgs) -> str:
        return text
    return render


def _prefixed(prefix: str) -> Renderer:
    def render(args: TemplateArgs) -> str:
        name, ident = args.pos(1), args.pos(2)
        if not name:
            return prefix
        return f"{prefix} {name}" + (f" ({ident})" if ident else "")
    return render


def _render_circa(args: TemplateArgs) -> str:
    return f"c. {args.pos(1)}".strip()


def _render_quote(args: TemplateArgs) -> str:
    return args.get("text") or args.get("quote") or args.pos(1)


def _render_nihongo(args: TemplateArgs) -> str:
    en, native, romaji = args.pos(1), args.pos(2), args.pos(3)
    extra = ", ".join(x for x in (native, romaji) if x)
    return f"{en} ({extra})" if en and extra else en or extra


def _render_marriage(args: TemplateArgs) -> str:
    name, start, end = args.pos(1), args.pos(2), args.pos(3)
    years = f"{start}–{end}" if end else start
    return f"{name} (m. {years})" if years else name


def _render_sortname(args: TemplateArgs) -> str:
    return " ".join(x for x in (args.pos(1), args.pos(2)) if x)


def _render_val(args: TemplateArgs) -> str:
    unit = args.get("u") or args.get("ul")
    return f"{args.pos(1)} {unit}".strip()


INLINE_TEMPLATES: Final[Mapping[str, Renderer]] = {
    # units, numbers, fractions
    "convert": _render_convert,
    "cvt": _render_convert,
    "frac": _render_frac,
    "sfrac": _render_frac,
    "fraction": _render_frac,
    "val": _render_val,
    "nts": _arg(1),
    "ntsh": _arg(1),
    "us$": lambda a: f"US${a.pos(1)}",
    "£": lambda a: f"£{a.pos(1)}",
    "€": lambda a: f"€{a.pos(1)}",
    "chem": lambda a: "".join(a.positional()),
    # dates (ages relative to today are left out: they depend on when the text is read)
    "date": _render_date,
    "dts": _render_date,
    "start date": _render_date,
    "start-date": _render_date,
    "end date": _render_date,
    "end-date": _render_date,
    "start date and age": _render_date,
    "film date": lambda a: _format_date(*[*a.positional(), "", "", ""][:3],
                                        mdy=_is_mdy(a)),
    "birth date": _render_date,
    "birth-date": _render_date,
    "dob": _render_date,
    "birth date and age": _render_date,
    "bda": _render_date,
    "birth year and age": _arg(1),
    "death date": _render_date,
    "death-date": _render_date,
    "death date and age": _render_death_date_and_age,
    "dda": _render_death_date_and_age,
    "death year and age": _arg(1),
    "as of": _render_as_of,
    "circa": _render_circa,
    "c.": _render_circa,
    "marriage": _render_marriage,
    # languages and scripts: the text, not the language label
    "lang": _arg(2),
    "langx": _arg(2),
    "native name": _arg(2),
    "transl": _last_arg,
    "transliteration": _last_arg,
    "script": _last_arg,
    "nastaliq": _arg(1),
    "nihongo": _render_nihongo,
    # formatting wrappers: their content
    "nowrap": _arg(1),
    "nobr": _arg(1),
    "nobreak": _arg(1),
    "small": _arg(1),
    "smaller": _arg(1),
    "midsize": _arg(1),
    "big": _arg(1),
    "large": _arg(1),
    "larger": _arg(1),
    "resize": _last_arg,
    "nobold": _arg(1),
    "noitalic": _arg(1),
    "sc": _arg(1),
    "smallcaps": _arg(1),
    "small caps": _arg(1),
    "em": _arg(1),
    "strong": _arg(1),
    "var": _arg(1),
    "mvar": _arg(1),
    "math": _arg(1),
    "sub": _arg(1),
    "sup": _arg(1),
    "longitem": _arg(1),
    "vanchor": _arg(1),
    "visible anchor": _arg(1),
    "not a typo": _arg(1),
    "proper name": _arg(1),
    "sic": lambda a: _last_arg(a),
    "abbr": _arg(1),
    "tooltip": _arg(1),
    "nq": _arg(1),
    "center": _arg(1),
    "keypress": lambda a: "+".join(x for x in a.positional() if x),
    "linktext": lambda a: "".join(a.positional()),
    "angbr": lambda a: f"⟨{a.pos(1)}⟩",
    "sortname": _render_sortname,
    "sort": lambda a: a.pos(2) or a.pos(1),
    "flag": _arg(1),
    "flagcountry": _arg(1),
    "flagu": _arg(1),
    "ill": lambda a: a.get("lt") or a.pos(1),
    "interlanguage link": lambda a: a.get("lt") or a.pos(1),
    "interlanguage link multi": lambda a: a.get("lt") or a.pos(1),
    # quotations: article text
    "quote": _render_quote,
    "blockquote": _render_quote,
    "bquote": _render_quote,
    "cquote": _render_quote,
    "quotation": _render_quote,
    # lists inside infobox values and text
    "hlist": _join_list,
    "flatlist": _join_list,
    "plainlist": _join_list,
    "unbulleted list": _join_list,
    "ubl": _join_list,
    "ubil": _join_list,
    "bulleted list": _join_list,
    "cslist": _join_list,
    # ships
    "uss": _prefixed("USS"),
    "hms": _prefixed("HMS"),
    "ss": _prefixed("SS"),
    "hmas": _prefixed("HMAS"),
    "hmcs": _prefixed("HMCS"),
    "rms": _prefixed("RMS"),
    "usns": _prefixed("USNS"),
    # characters
    "nbsp": _const(" "),
    "thinsp": _const(" "),
    "spaces": _const(" "),
    "snd": _const(" – "),
    "spaced ndash": _const(" – "),
    "snds": _const(" – "),
    "ndash": _const("–"),
    "mdash": _const("—"),
    "mdashb": _const("—"),
    "·": _const(" · "),
    "dot": _const(" · "),
    "bull": _const(" • "),
    "!": _const("|"),
    "=": _const("="),
    "'": _const("'"),
    "'s": _const("'s"),
    "pipe": _const("|"),
}
"""Folded template name → renderer. Every other template is dropped (navboxes, sidebars,
stubs, hatnotes, citations, ``{{IPA...}}``...). ``{{lang-xx|text}}`` is handled by prefix."""

_PREFIX_TEMPLATES: Final[tuple[tuple[str, Renderer], ...]] = (("lang-", _arg(1)),)

_MAGIC_FUNCTIONS: Final[Mapping[str, Callable[[str], str]]] = {
    "formatnum": lambda s: s,
    "lc": str.lower,
    "uc": str.upper,
    "lcfirst": lambda s: s[:1].lower() + s[1:],
    "ucfirst": lambda s: s[:1].upper() + s[1:],
}

_PAGENAME_WORDS: Final = frozenset({"pagename", "fullpagename", "subjectpagename",
                                    "articlepagename"})
_INFOBOX_NAMES: Final = frozenset({"taxobox", "automatic taxobox", "speciesbox",
                                   "subspeciesbox", "infraspeciesbox", "chembox",
                                   "drugbox", "geobox"})
_FILE_VALUE_RE: Final = re.compile(r"[^\n]*\.(?:svg|png|jpe?g|gif|tiff?|webp)", re.IGNORECASE)
_COMMAS_RE: Final = re.compile(r"\s*,(?:\s*,)+\s*")
_INFOBOX_SKIP_FIELD_RE: Final = re.compile(
    r"^(?:image|img|logo|map|signature|seal|pushpin|alt|upright|caption|coordinates|coords|"
    r"footnotes|module|embed|child|bodystyle|.*_?(?:size|alt|style|width)$)",
    re.IGNORECASE,
)

# --------------------------------------------------------------------------------------
# Sentinels: where tags and line breaks stood, carried through the text
# --------------------------------------------------------------------------------------

_SENT_OPEN: Final = "\ue000"
_SENT_CLOSE: Final = "\ue001"
_DIGIT0: Final = 0xE010
_SENT_RE: Final = re.compile("\ue000[\ue010-\ue019]+\ue001")
_SENT: Final = "(?:\ue000[\ue010-\ue019]+\ue001)"
_BR: Final = "\u2028"
"""``<br>``: a newline in text paragraphs, a space in headings, list items and cells."""
_GAP: Final = "\ue002"
"""Left where markup was dropped before parsing, so text around it does not merge (two
italic quotes either side of a dropped template are not four quotes), as around the node the
parser would have built; removed when the text is tidied."""
_PRIVATE_RE: Final = re.compile("[\ue000-\ue01f]")


def _sentinel(index: int) -> str:
    return _SENT_OPEN + "".join(chr(_DIGIT0 + int(d)) for d in str(index)) + _SENT_CLOSE


def _sentinel_index(token: str) -> int:
    return int("".join(str(ord(c) - _DIGIT0) for c in token[1:-1]))


# --------------------------------------------------------------------------------------
# Stage 1: linear sanitizing
# --------------------------------------------------------------------------------------

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


_EXT_KEEP: Final = frozenset({"nowiki", "pre", "chem", "ce", "syntaxhighlight", "source"})
_EXT_DROP: Final = frozenset({"ref", "references", "gallery", "score", "timeline", "graph",
                              "hiero", "templatedata", "templatestyles", "mapframe",
                              "maplink", "imagemap", "categorytree", "inputbox", "indicator",
                              "charinsert", "section", "includeonly"})
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
    deep = _too_deep([*spans, *templates, *table_spans])
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


# --------------------------------------------------------------------------------------
# Stage 3: rendering parsed nodes to a stream
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Heading:
    level: int
    title: str


@dataclass(frozen=True, slots=True)
class _ListMark:
    marker: str


@dataclass(frozen=True, slots=True)
class _Block:
    text: str
    infobox: bool


_Item = str | _Heading | _ListMark | _Block


@dataclass
class _TagInfo:
    """A maintenance tag before its scope and offset are known."""

    name: str
    template: str
    params: dict[str, str]
    date: str | None
    reason: str | None
    family: str

    def finish(self, scope: str, offset: int | None) -> MaintenanceTag:
        return MaintenanceTag(self.name, self.template, dict(self.params), self.date,
                              self.reason, scope, offset)


_MAGIC_WORD_RE: Final = re.compile(
    r"__(?:NOTOC|FORCETOC|TOC|NOEDITSECTION|NEWSECTIONLINK|NONEWSECTIONLINK|NOGALLERY|"
    r"HIDDENCAT|INDEX|NOINDEX|STATICREDIRECT|NOTITLECONVERT|NOTC|NOCONTENTCONVERT|NOCC|"
    r"DISAMBIG|EXPECTUNUSEDCATEGORY|NOGLOBAL|EXPECTED_UNCONNECTED_PAGE|ARCHIVEDTALK|"
    r"NOTALK)__"
)
_QUOTES_RE: Final = re.compile(r"'{2,}")
_INTERWIKI_LANG_RE: Final = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]+)*|simple")
_HIDDEN_NAMESPACES: Final = frozenset({"file", "image", "category", "media"})
_DROP_TAG_CONTENT: Final = frozenset({*_EXT_DROP, "math", "style",
                                      "script"})


def _quotes(match: re.Match[str]) -> str:
    n = len(match.group(0))
    if n == 4:
        return "'"
    return "'" * (n - 5) if n > 5 else ""


# --------------------------------------------------------------------------------------
# Fallback: a conservative regex strip of one chunk
# --------------------------------------------------------------------------------------

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


def _make_tag_info(
    written: str, spec: TagSpec, params: dict[str, str], rendered: Mapping[str, str]
) -> _TagInfo:
    """Pick ``date`` and ``reason`` out of a tag's parameters.

    ``date`` is ``date=``, else a positional argument that looks like a date
    (``{{inconsistent|April 2019}}``). ``reason`` is the first non-empty of ``reason=``,
    ``about=``, ``text=``, the first positional argument (the other article for
    Contradict-other, the talk section for Dubious/Disputed, free text editors put there)
    unless it is a scope word like ``section`` or a date, then ``talk=``, ``discuss=``,
    ``article=``.
    """
    date = rendered.get("date", "").strip() or None
    positional = [rendered[k].strip() for k in sorted(
        (k for k in rendered if k.isdigit()), key=int)]
    if date is None:
        date = next((p for p in positional if _DATE_LIKE_RE.fullmatch(p)), None)
    reason = next((rendered[k].strip() for k in _REASON_KEYS if rendered.get(k, "").strip()),
                  None)
    if reason is None and positional:
        first = positional[0]
        if first and first.casefold() not in _SCOPE_WORDS and not _DATE_LIKE_RE.fullmatch(
                first):
            reason = first
    if reason is None:
        reason = next(
            (rendered[k].strip() for k in _LATE_REASON_KEYS if rendered.get(k, "").strip()),
            None)
    return _TagInfo(spec.name, written, params, date, reason, spec.scope)


def _squash(text: str) -> str:
    """Collapse runs of spaces (not newlines) and strip."""
    return _collapse_spaces(text.replace(_GAP, "")).strip()


# --------------------------------------------------------------------------------------
# Stage 4: assembling paragraphs
# --------------------------------------------------------------------------------------

_WS_RE: Final = re.compile(r"[ \t\r\f\v\xa0\u1680\u2000-\u200a\u202f\u205f\u3000]+")
_ODD_SPACE_RE: Final = re.compile(r"[\t\r\f\v\xa0\u1680\u2000-\u200a\u202f\u205f\u3000]")
_TRAIL_HINT_RE: Final = re.compile(r"[,;:]\s*\)")
_PUNCT_HINT_RE: Final = re.compile(" [,.;:!?)\\]\ue000]")
_ZERO_WIDTH_RE: Final = re.compile("[\u200b\u200e\u200f\ufeff\u00ad\ue002]")
_EMPTY_PARENS_RE: Final = re.compile(rf"\((?:[\s,;:]|{_SENT})*\)")
_PAREN_LEAD_RE: Final = re.compile(r"\(\s*[,;:]+\s*")
_PAREN_TRAIL_RE: Final = re.compile(r"\s*[,;:]+\s*\)")
_SPACE_BEFORE_SENT_RE: Final = re.compile(rf" +(?={_SENT})")
_SPACE_BEFORE_PUNCT_RE: Final = re.compile(rf" +(?={_SENT}*[,.;:!?)\]](?:[\s\ue000]|$))")
_SPACE_AFTER_OPEN_RE: Final = re.compile(r"([(\[]) +")
_BR_SPACES_RE: Final = re.compile("[ ]*\u2028[\u2028 ]*")
_HR_RE: Final = re.compile(r"-{4,}")
_MULTI_SPACE_RE: Final = re.compile(" {2,}")
_REPEATED_COMMA_RE: Final = re.compile(r",(?: ?,)+")


def _keep_sentinels(match: re.Match[str]) -> str:
    return "".join(_SENT_RE.findall(match.group(0)))


def _collapse_spaces(text: str) -> str:
    """``_WS_RE.sub(" ", text)``, without the substitution where it would change nothing.

    Every single space matches ``_WS_RE``, and replacing each by itself cost more than the
    two quick scans that say no run needs changing (true of nine paragraphs in ten).
    """
    if "  " in text or _ODD_SPACE_RE.search(text):
        return _WS_RE.sub(" ", text)
    return text


def _tidy(text: str, br: str) -> str:
    """Whitespace and punctuation left behind by removed markup; sentinels stay put.

    The passes run in this order, each on what the last left. A pass whose pattern cannot
    match is skipped after a cheaper test that is true wherever it can (a substring, or a
    pattern that starts with a rare character instead of a space): most paragraphs need
    few passes, and each full pass over the text took as long as the whole test.
    """
    text = _ZERO_WIDTH_RE.sub("", text)
    text = _collapse_spaces(text)
    if "(" in text:
        text = _EMPTY_PARENS_RE.sub(_keep_sentinels, text)
        text = _PAREN_LEAD_RE.sub("(", text)
        if _TRAIL_HINT_RE.search(text):
            text = _PAREN_TRAIL_RE.sub(")", text)
    if _BR in text:
        text = _BR_SPACES_RE.sub(_BR, text)
    if "  " in text:
        text = _MULTI_SPACE_RE.sub(" ", text)
    if ", ," in text or ",," in text:
        text = _REPEATED_COMMA_RE.sub(",", text)
    if _SENT_OPEN in text:
        text = _SPACE_BEFORE_SENT_RE.sub("", text)
    if _PUNCT_HINT_RE.search(text):
        text = _SPACE_BEFORE_PUNCT_RE.sub("", text)
    if "( " in text or "[ " in text:
        text = _SPACE_AFTER_OPEN_RE.sub(r"\1", text)
    return text.replace(_BR, br)


def _take_sentinels(text: str) -> tuple[str, list[tuple[int, int, bool]]]:
    """Remove sentinels; return the clean, stripped text and (tag, offset, leading) each."""
    if _SENT_OPEN not in text:
        return text.strip(), []
    pieces: list[str] = []
    found: list[tuple[int, int, bool]] = []
    length = 0
    seen_text = False
    pos = 0
    for m in _SENT_RE.finditer(text):
        piece = text[pos:m.start()]
        if not seen_text:
            piece = piece.lstrip()
        if piece:
            seen_text = True
        pieces.append(piece)
        length += len(piece)
        found.append((_sentinel_index(m.group(0)), length, not seen_text))
        pos = m.end()
    tail = text[pos:]
    pieces.append(tail if seen_text else tail.lstrip())
    clean = "".join(pieces).rstrip()
    end = len(clean)
    return clean, [(i, min(off, end), lead) for i, off, lead in found]


class _Assembler:
    """Cuts the rendered stream into paragraphs and anchors tags."""

    def __init__(self, tags: Sequence[_TagInfo], *, keep_lists: bool) -> None:
        self.tags = tags
        self.keep_lists = keep_lists
        self.paragraphs: list[Paragraph] = []
        self.sections: list[tuple[int, str]] = []
        self.skip_level: int | None = None
        self.pending: list[MaintenanceTag] = []
        self.pending_level = 0
        self.pending_path: tuple[str, ...] = ()
        self.line_marks = ""
        self.line_parts: list[str] = []
        self.par_kind: str | None = None
        self.par_lines: list[str] = []

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(title for _, title in self.sections)

    @property
    def level(self) -> int:
        return self.sections[-1][0] if self.sections else 0

    # -- input -------------------------------------------------------------------------------

    def feed(self, item: _Item) -> None:
        if isinstance(item, str):
            if "\n" not in item:
                self.line_parts.append(item)
                return
            lines = item.split("\n")
            for line in lines[:-1]:
                self.line_parts.append(line)
                self.end_line()
            self.line_parts.append(lines[-1])
        elif isinstance(item, _ListMark):
            if "".join(self.line_parts).strip():
                if item.marker == ":":  # "; term : definition"
                    self.line_parts.append(": ")
            else:
                self.line_marks += item.marker
        elif isinstance(item, _Heading):
            self.end_line()
            self.flush()
            self.heading(item)
        else:
            self.end_line()
            self.flush()
            self.block(item)

    def finish(self) -> list[Paragraph]:
        self.end_line()
        self.flush()
        self.flush_pending()
        return self.paragraphs

    # -- lines and paragraphs ----------------------------------------------------------------

    def end_line(self) -> None:
        line = "".join(self.line_parts)
        marks = self.line_marks
        self.line_parts = []
        self.line_marks = ""
        if self.skip_level is not None:
            return
        bare = (_SENT_RE.sub("", line) if _SENT_OPEN in line else line).replace(_GAP, "").strip()
        if not marks:
            if not bare or _HR_RE.fullmatch(bare):
                ids = [_sentinel_index(t) for t in _SENT_RE.findall(line)]
                if not ids:
                    self.flush()
                elif all(self.tags[i].family == "block" for i in ids):
                    self.flush()  # a banner line ends the paragraph above it
                    self.add_pending(self.tags[i].finish("block", None) for i in ids)
                else:
                    self.add_line("text", line)
                return
            self.add_line("text", line)
        elif marks[0] == ":" and self.par_kind not in ("list", "dropped"):
            self.add_line("indent", line)
        elif self.keep_lists:
            if bare or _SENT_OPEN in line:
                self.add_line("list", line)
        else:  # lists not kept: drop the line, and the ":" lines that continue it
            self.flush()
            self.par_kind = "dropped"

    def add_line(self, kind: str, line: str) -> None:
        if self.par_kind != kind:
            self.flush()
            self.par_kind = kind
        self.par_lines.append(line)

    def flush(self) -> None:
        if not self.par_lines:
            self.par_kind = None
            return
        kind, lines = self.par_kind, self.par_lines
        self.par_kind, self.par_lines = None, []
        if kind == "text":
            raw = _tidy(" ".join(lines), "\n")
            out_kind = "text"
        else:
            raw = "\n".join(t for t in (_tidy(line, " ").strip() for line in lines) if t)
            out_kind = "list" if kind == "list" else "text"
        self.emit(raw, out_kind, attach_pending=True)

    def emit(self, raw: str, kind: str, *, attach_pending: bool) -> None:
        text, found = _take_sentinels(raw)
        block: list[MaintenanceTag] = []
        inline: list[MaintenanceTag] = []
        for index, offset, leading in found:
            info = self.tags[index]
            if not text or (leading and info.family == "block"):
                block.append(info.finish("block", None))
            else:
                inline.append(info.finish("inline", offset))
        if not text:
            self.add_pending(block)
            return
        tags = [*block, *inline]
        if attach_pending:
            tags = [*self.pending, *tags]
            self.pending = []
        self.paragraphs.append(Paragraph(self.path, text, tuple(tags), kind))

    def add_pending(self, tags: Iterable[MaintenanceTag]) -> None:
        new = list(tags)
        if not new:
            return
        if not self.pending:
            self.pending_level = self.level
            self.pending_path = self.path
        self.pending.extend(new)

    def flush_pending(self) -> None:
        if self.pending:
            self.paragraphs.append(Paragraph(self.pending_path, "", tuple(self.pending)))
            self.pending = []

    # -- headings and blocks -----------------------------------------------------------------

    def heading(self, item: _Heading) -> None:
        title_raw = _tidy(item.title.replace("\n", " "), " ")
        title, found = _take_sentinels(title_raw)
        while self.sections and self.sections[-1][0] >= item.level:
            self.sections.pop()
        if self.skip_level is not None and item.level > self.skip_level:
            return
        self.skip_level = None
        if self.pending and item.level <= self.pending_level:
            self.flush_pending()
        if title.casefold() in BOILERPLATE_SECTIONS:
            self.flush_pending()
            self.skip_level = item.level
            return
        self.sections.append((item.level, title))
        self.add_pending(self.tags[i].finish("block", None) for i, _, _ in found)

    def block(self, item: _Block) -> None:
        if self.skip_level is not None:
            return
        raw = "\n".join(t for t in (_tidy(line, " ").strip() for line in item.text.split("\n"))
                        if t)
        text, found = _take_sentinels(raw)
        if not text:
            return
        tags = [self.tags[i].finish("inline", off) for i, off, _ in found]
        if not item.infobox:
            tags = [*self.pending, *tags]
            self.pending = []
        self.paragraphs.append(Paragraph(self.path, text, tuple(tags), "table"))


# --------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------

_REDIRECT_RE: Final = re.compile(r"\s*#\s*redirect\s*:?\s*\[\[", re.IGNORECASE)


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
        tags whose section has no text (see the module docstring).
    """
    if _REDIRECT_RE.match(wikitext):
        return []
    mode: OnError = on_error or ("fallback" if FALLBACK_ON_ERROR else "raise")
    text = _strip_comments(_PRIVATE_RE.sub("", wikitext).replace("\r\n", "\n"))
    text = _extract_ext_tags(text)
    renderer = _Renderer(title=title, keep_tables=keep_tables, keep_infobox=keep_infobox)
    stream: list[_Item] = []
    sanitized = _balance(text, keep_tables=keep_tables, keep_infobox=keep_infobox)
    for chunk, too_deep in _chunks(sanitized):
        mark = len(renderer.tags)
        if too_deep and mode == "fallback":
            stream.extend(renderer.fallback_stream(chunk))
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
        stream.extend(piece)
    assembler = _Assembler(renderer.tags, keep_lists=keep_lists)
    for item in stream:
        assembler.feed(item)
    return assembler.finish()


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
