"""Maintenance tags: which templates they are, their canonical names and default scope.

Editors flag contradictory or stale text with templates such as ``{{Inconsistent}}``; this
table decides which templates are such tags and whether each qualifies a sentence (inline) or a
whole section (block).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal


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
