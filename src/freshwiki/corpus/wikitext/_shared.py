"""What every stage of the cleaner shares: its knobs, its error, the sections it drops."""

from __future__ import annotations

from typing import Final, Literal

from freshwiki.errors import FreshwikiError

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


_EXT_KEEP: Final = frozenset({"nowiki", "pre", "chem", "ce", "syntaxhighlight", "source"})


_EXT_DROP: Final = frozenset({"ref", "references", "gallery", "score", "timeline", "graph",
                              "hiero", "templatedata", "templatestyles", "mapframe",
                              "maplink", "imagemap", "categorytree", "inputbox", "indicator",
                              "charinsert", "section", "includeonly"})
