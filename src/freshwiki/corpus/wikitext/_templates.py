"""Inline templates whose text matters, rendered from a data table.

Most templates are dropped, but some carry text a reader sees (dates, conversions, quotes,
foreign names); each of those has a small renderer here, looked up by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from freshwiki.corpus.wikitext._tags import _MONTHS


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
