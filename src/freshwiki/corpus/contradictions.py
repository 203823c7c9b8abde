"""Mine the paragraphs Wikipedia editors tagged as contradictory, for WikiContradict annotation.

WikiContradict (Hou et al., 2024, §3.1) starts from the maintenance tags editors put on
inconsistent text: ``{{Inconsistent}}``, ``{{Self-contradictory}}`` and ``{{Contradict-other}}``.
The tagged paragraph and the editor's date and reason are what an annotator reads first; for a
tag naming another article, the annotator also needs that article's passage. This module finds
all of that in any dump the corpus readers accept and hands it over as candidates, so that a
person only has to judge and write the questions.

What counts, and as which type
    The cleaner already keeps maintenance tags on paragraphs (:mod:`freshwiki.corpus.wikitext`),
    with every spelling and redirect the data showed (``contradictory inline``, ``contradict``,
    ``Self_contradictory``, ``Template:``/``subst:`` prefixes, any case). The template families
    become the paper's three tag types (:data:`TAG_TYPES`): ``Inconsistent``; the families that
    file an article under Wikipedia's *self-contradictory articles* category (``Contradict``,
    ``Contradictory``, ``Contradict-inline`` and ``Self-contradictory`` itself) as
    ``Self-contradictory``; ``Contradict-other``. A tag of any of these families that names
    another article with ``article=`` (one WikiContradict item does: ``{{contradict|article=
    Tornadoes of 2010|about=...}}``) is ``Contradict-other``: it is what the editor meant. The
    template as written is kept beside the type, so nothing is lost by the grouping.

One candidate per tag
    A paragraph with two tags gives two candidates (the dataset also keeps one tag per item).
    Each carries the page, revision, section path, the clean paragraph, the sentence the tag
    follows (inline tags) or the text of the whole section (banners, which the cleaner attaches
    to their section's first paragraph), the paragraphs either side, the tag's parameters as
    written, its date and reason, and for ``Contradict-other`` the other article(s). Tables and
    infoboxes are kept as text rows here (unlike the ingest default), since contradictions with
    an infobox are one of the dataset's modalities and a tag in an infobox would otherwise be
    dropped. An article named only in the reason's prose ("In the article 'Harold Chapman'
    it says...") is not looked up.

Histories
    A full-history dump holds a tag in every revision that carries it. Each tag is reported
    once, from the **latest** revision that carries it, with the first revision of that
    uninterrupted run (``first_seen``: when it was added, if the run does not start at the
    earliest revision in the file) and the revision that removed it (``removed_in``). A tag is
    followed from revision to revision by its type, the other articles it names and its rank
    among the page's tags with the same two (so a bot adding ``date=`` keeps it the same tag;
    removing one of two alike tags may be seen as removing the second). Revisions are taken in
    file order, which is chronological in MediaWiki exports.

Cost
    Cleaning is the expensive part, and almost no revision holds one of these tags, so a
    revision is cleaned only if its wikitext has ``contradict`` or ``inconsistent`` in a
    template name or a ``{{Multiple issues}}`` parameter name (:data:`_HINT_RE`), a superset
    of what the cleaner recognises (a test checks that this prefilter changes nothing).

The other article's passages
    When the article a ``Contradict-other`` tag names is in the same source, a second read of
    the source finds it (following one redirect, which costs a third read only when needed),
    takes its revision current at the tagged revision's time (else its earliest), cuts it into
    the corpus's passages and ranks them against the tagged sentence (the paragraph for block
    tags) plus the reason: a BM25-style sum, over the words they share (crudely stemmed), of
    each word's inverse document frequency among that article's passages, doubled for numbers
    (most contradictions are about dates and counts). Retrieval's own BM25 lives a layer up;
    a handful of passages needs no index. The best few come with their score and shared words so an
    annotator sees why; when no passage shares a word, the lead passage is given with score 0.

Export
    :func:`annotation_record` lays a candidate out as a WikiContradict item (Appendix E): the
    top-level fields filled (``paragraph_A`` is the clean paragraph with the tags' markup put
    back where they stood, since the dump's raw paragraph is not kept), the ``annotationResult``
    fields the release has, empty for the annotator, and everything mined under ``candidate``.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

from freshwiki.corpus.ingest import is_redirect
from freshwiki.corpus.readers import ARTICLE_NAMESPACES, ReadReport, read_source
from freshwiki.corpus.segment import make_passages, split_sentences
from freshwiki.corpus.wikitext import clean_wikitext, extract_tags
from freshwiki.errors import FreshwikiError
from freshwiki.records import MaintenanceTag, Paragraph, Revision

TAG_TYPES: Final[Mapping[str, str]] = {
    "Inconsistent": "Inconsistent",
    "Self-contradictory": "Self-contradictory",
    "Contradict": "Self-contradictory",
    "Contradictory": "Self-contradictory",
    "Contradict-inline": "Self-contradictory",
    "Contradict-other": "Contradict-other",
}
"""Canonical tag family (:attr:`MaintenanceTag.name`) → WikiContradict tag type."""

TYPE_ORDER: Final = ("Inconsistent", "Self-contradictory", "Contradict-other")

ENWIKI: Final = "https://en.wikipedia.org/wiki/"
"""Default base of ``url`` in exported records (dumps of other wikis: pass their own)."""

DEFAULT_OTHER_PASSAGES: Final = 3

_HINT_RE: Final = re.compile(
    r"\{\{[^{}|]*(?:contradict|inconsistent)|\|[^{}|=]*(?:contradict|inconsistent)[^{}|=]*=",
    re.IGNORECASE,
)
"""A template name, or a ``{{Multiple issues|contradict=...}}`` parameter name, holding one
of the two words every family's spellings contain. Only revisions matching it are cleaned."""

_ARTICLE_KEY_RE: Final = re.compile(r"article\d*", re.IGNORECASE)

_NOT_AN_ARTICLE: Final = frozenset({"section", "article", "list", "table", "paragraph",
                                    "sentence", "part", "lead", "intro", "introduction",
                                    "infobox", "page", "small", "inline", "yes", "left"})
"""Positional words that say where the banner applies, not which article it names."""

_DATE_RE: Final = re.compile(
    r"(?:\d{1,2}\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?,?\s+\d{4}"
    r"|\d{4}(?:-\d{2}(?:-\d{2})?)?",
    re.IGNORECASE,
)

_LINK_RE: Final = re.compile(r"^\[\[\s*:?([^|\]]*)(?:\|[^\]]*)?\]\]$")

_TOKEN_RE: Final = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")

_STOPWORDS: Final = frozenset({
    "a", "about", "above", "after", "also", "an", "and", "are", "article", "as", "at", "be",
    "been", "below", "but", "by", "claims", "contradict", "contradiction", "contradicts",
    "earlier", "following", "for", "from", "had", "has", "have", "he", "her", "here", "his",
    "in", "inconsistent", "into", "is", "it", "its", "later", "no", "not", "of", "on", "one",
    "or", "other", "previous", "said", "says", "section", "she", "stated", "states", "than",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to",
    "two", "was", "were", "what", "when", "where", "which", "while", "who", "with",
})
"""Function words, and the words editors use to say *that* text conflicts (not *what*)."""

_NEIGHBOUR_CHARS: Final = 1500
"""Paragraphs either side of a candidate are cut to this many characters."""

_SECTION_CHARS: Final = 6000
"""A banner's section text is cut to this many characters."""


class ContradictionMiningError(FreshwikiError):
    """The source cannot be mined, or the export cannot be written."""


@dataclass(frozen=True)
class RevisionRef:
    """A revision, by id and time (ISO 8601; ``None`` for sources without dates)."""

    id: int
    timestamp: str | None


@dataclass(frozen=True)
class OtherPassage:
    """A passage of the other article, ranked against the tagged text."""

    section_path: tuple[str, ...]
    text: str
    score: float
    shared: tuple[str, ...]
    """The words it shares with the tagged text and the reason, best first."""


@dataclass
class OtherArticle:
    """An article a ``Contradict-other`` tag names, and what was found of it."""

    title: str
    """As the tag names it (link brackets and anchor removed)."""
    anchor: str | None = None
    """``#Section`` part of the name, if any (without ``#``)."""
    status: str = "not searched"
    """``found``, ``not in source``, ``redirect not followed`` or ``not searched``."""
    found_title: str | None = None
    """The page that was read: the title, or where its redirect led."""
    via_redirect: bool = False
    revision: RevisionRef | None = None
    passages: list[OtherPassage] = field(default_factory=list)


@dataclass(frozen=True)
class TagHistory:
    """Where a tag sits in the page's history, as far as the source shows it."""

    revisions_of_page: int
    """Revisions of the page the source holds (1 in an articles dump)."""
    first_seen: RevisionRef
    """First revision of the uninterrupted run that ends at the candidate's revision."""
    first_seen_is_earliest: bool
    """The run starts at the page's earliest revision in the source: the tag may be older."""
    removed_in: RevisionRef | None
    """The first revision after the run without the tag; ``None``: still there at the end."""


@dataclass
class Candidate:
    """One contradiction tag on one paragraph, with what an annotator needs around it."""

    id: str
    """``page:revision:paragraph:tag``, stable for a given source."""
    title: str
    page_id: int
    revision: RevisionRef
    section_path: tuple[str, ...]
    paragraph_index: int
    paragraph_kind: str
    paragraph: str
    """The clean paragraph (what WikiContradict calls ``paragraph_A_clean``)."""
    paragraph_with_tags: str
    """The paragraph with every maintenance tag's markup put back where it stood."""
    tagged_sentence: str | None
    """Inline tags: the sentence the tag follows; block tags: ``None``."""
    before: str | None
    after: str | None
    """The paragraphs either side in the same section (cut to 1,500 characters)."""
    section_text: str | None
    """Block tags (banners): every paragraph of the section they head, for a banner over a
    section names no paragraph (cut to 6,000 characters); inline tags: ``None``."""
    tag_type: str
    family: str
    template: str
    tag_text: str
    """The template's inside as written (``Inconsistent|date=June 2019|reason=...``), with
    whitespace around names and values trimmed."""
    params: dict[str, str]
    date: str | None
    reason: str | None
    scope: str
    sentence_offset: int | None
    others: list[OtherArticle]
    history: TagHistory

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (tuples become lists)."""
        return asdict(self)


@dataclass
class MiningReport:
    """What a mining run read and found."""

    source: str
    pages: int = 0
    revisions: int = 0
    redirects: int = 0
    revisions_cleaned: int = 0
    """Revisions that passed the prefilter and were cleaned (all, without the prefilter)."""
    revisions_without_tag: int = 0
    """Cleaned revisions holding no contradiction tag (``{{Inconsistent citations}}``...)."""
    tags_unattached: int = 0
    """Contradiction tags inside content the cleaner drops (refs, galleries): not mined."""
    by_type: Counter[str] = field(default_factory=Counter)
    by_template: Counter[str] = field(default_factory=Counter)
    """Per template name as written, case-folded."""
    by_scope: Counter[str] = field(default_factory=Counter)
    others: Counter[str] = field(default_factory=Counter)
    """Other articles of ``Contradict-other`` candidates, per :attr:`OtherArticle.status`."""
    passes: int = 0
    read: str = ""
    """The readers' summary of the first pass (pages, bytes, faults)."""
    skipped_pages: list[str] = field(default_factory=list)

    @property
    def candidates(self) -> int:
        """Candidates found, all types."""
        return sum(self.by_type.values())

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, types in the paper's order."""
        return {
            "source": self.source, "pages": self.pages, "revisions": self.revisions,
            "redirects": self.redirects, "revisions_cleaned": self.revisions_cleaned,
            "revisions_without_tag": self.revisions_without_tag,
            "tags_unattached": self.tags_unattached, "candidates": self.candidates,
            "by_type": {t: self.by_type.get(t, 0) for t in TYPE_ORDER},
            "by_template": dict(self.by_template.most_common()),
            "by_scope": dict(self.by_scope), "others": dict(self.others),
            "passes": self.passes, "read": self.read, "skipped_pages": self.skipped_pages,
        }


@dataclass
class MiningResult:
    """The candidates, in source order, and the report."""

    candidates: list[Candidate]
    report: MiningReport


Progress = Callable[[str, ReadReport, int], None]
"""Called as reading goes: (stage, the stage's read report, candidates so far)."""


# --------------------------------------------------------------------------------------
# Tags → types and other articles
# --------------------------------------------------------------------------------------


def normalize_title(title: str) -> str:
    """A page title as MediaWiki stores it: ``_`` as spaces, spaces collapsed, first letter up."""
    text = " ".join(title.replace("_", " ").split())
    return text[:1].upper() + text[1:]


def _article_name(value: str) -> tuple[str, str | None] | None:
    """``[[Foo#Bar|x]]`` / ``Foo#Bar`` → (``Foo``, ``Bar``); ``None`` if it names no article."""
    value = value.strip()
    link = _LINK_RE.match(value)
    if link:
        value = link.group(1)
    if "[[" in value or "{{" in value or "<" in value:
        return None
    name, _, anchor = value.partition("#")
    name = normalize_title(name)
    if not name or name.casefold() in _NOT_AN_ARTICLE or _DATE_RE.fullmatch(name):
        return None
    return name, (anchor.strip() or None)


def other_articles(tag: MaintenanceTag) -> list[tuple[str, str | None]]:
    """The articles a tag names as the ones the text contradicts, in the order written.

    ``Contradict-other`` names them positionally (``{{Contradict-other|A|B}}``, often as
    links) or with ``article=``; any contradiction family may use ``article=``/``article2=``.
    """
    found: list[tuple[str, str | None]] = []
    keys = [k for k in tag.params if _ARTICLE_KEY_RE.fullmatch(k)]
    if tag.name == "Contradict-other":
        keys = [k for k in tag.params if k.isdigit()] + keys
    for key in keys:
        named = _article_name(tag.params[key])
        if named and named[0] not in (n for n, _ in found):
            found.append(named)
    return found


def tag_type(tag: MaintenanceTag) -> str | None:
    """The WikiContradict type of a tag, or ``None`` when it is not a contradiction tag."""
    kind = TAG_TYPES.get(tag.name)
    if kind is None:
        return None
    if kind != "Contradict-other" and any(
        _ARTICLE_KEY_RE.fullmatch(k) and _article_name(v) for k, v in tag.params.items()
    ):
        return "Contradict-other"
    return kind


def tag_text(tag: MaintenanceTag) -> str:
    """The template's inside as written: name, then ``value`` / ``name=value`` in order."""
    parts = [tag.template]
    for key, value in tag.params.items():
        parts.append(value if key.isdigit() and "=" not in value else f"{key}={value}")
    return "|".join(parts)


def _reason(tag: MaintenanceTag, kind: str) -> str | None:
    """The editor's explanation: as the cleaner reads it, but never the other article's name."""
    if kind != "Contradict-other" or any(
        tag.params.get(k, "").strip() for k in ("reason", "about", "text")
    ):
        return tag.reason
    return next((tag.params[k].strip() for k in ("talk", "discuss")
                 if tag.params.get(k, "").strip()), None)


# --------------------------------------------------------------------------------------
# One revision → candidate drafts
# --------------------------------------------------------------------------------------


@dataclass
class _Draft:
    """A candidate before its history is known: what one revision says about one tag."""

    key: tuple[str, tuple[str, ...], int]
    candidate: Candidate


def _with_tags(paragraph: Paragraph) -> str:
    text = paragraph.text
    block = "".join("{{" + tag_text(t) + "}}" for t in paragraph.tags
                    if t.sentence_offset is None)
    inline = sorted((t for t in paragraph.tags if t.sentence_offset is not None),
                    key=lambda t: t.sentence_offset or 0, reverse=True)
    for tag in inline:
        at = min(tag.sentence_offset or 0, len(text))
        text = text[:at] + "{{" + tag_text(tag) + "}}" + text[at:]
    return f"{block}\n{text}" if block and text else (block or text)


def _tagged_sentence(text: str, offset: int | None) -> str | None:
    if offset is None or offset <= 0 or not text:
        return None
    last = offset - 1
    best = None
    for sentence in split_sentences(text):
        if sentence.start <= last < sentence.end:
            return sentence.text
        if sentence.end <= offset:
            best = sentence.text
    return best


def _cut(text: str | None, limit: int = _NEIGHBOUR_CHARS) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " …"


def _timestamp(revision: Revision) -> str | None:
    return revision.timestamp.isoformat() if revision.dated else None


def _drafts(revision: Revision, paragraphs: Sequence[Paragraph]) -> list[_Draft]:
    drafts: list[_Draft] = []
    rank: Counter[tuple[str, tuple[str, ...]]] = Counter()
    ref = RevisionRef(revision.id, _timestamp(revision))
    for index, paragraph in enumerate(paragraphs):
        for tag_index, tag in enumerate(paragraph.tags):
            kind = tag_type(tag)
            if kind is None:
                continue
            named = other_articles(tag) if kind == "Contradict-other" else []
            titles = tuple(n for n, _ in named)
            rank[(kind, titles)] += 1
            same = [p for p in paragraphs if p.section_path == paragraph.section_path]
            here = next(i for i, p in enumerate(same) if p is paragraph)
            candidate = Candidate(
                id=f"{revision.page.id}:{revision.id}:{index}:{tag_index}",
                title=revision.page.title,
                page_id=revision.page.id,
                revision=ref,
                section_path=paragraph.section_path,
                paragraph_index=index,
                paragraph_kind=paragraph.kind,
                paragraph=paragraph.text,
                paragraph_with_tags=_with_tags(paragraph),
                tagged_sentence=_tagged_sentence(paragraph.text, tag.sentence_offset),
                before=_cut(same[here - 1].text) if here > 0 else None,
                after=_cut(same[here + 1].text) if here + 1 < len(same) else None,
                section_text=None if tag.sentence_offset is not None else _cut(
                    "\n\n".join(p.text for p in same if p.text), _SECTION_CHARS),
                tag_type=kind,
                family=tag.name,
                template=tag.template,
                tag_text=tag_text(tag),
                params=dict(tag.params),
                date=tag.date,
                reason=_reason(tag, kind),
                scope=tag.scope,
                sentence_offset=tag.sentence_offset,
                others=[OtherArticle(n, a) for n, a in named],
                history=TagHistory(1, ref, True, None),
            )
            drafts.append(_Draft((kind, titles, rank[(kind, titles)]), candidate))
    return drafts


# --------------------------------------------------------------------------------------
# Pass 1: every revision → candidates with their history
# --------------------------------------------------------------------------------------


@dataclass
class _Run:
    first: RevisionRef
    first_is_earliest: bool
    latest: Candidate


class _Page:
    """The tags of one page followed across its revisions (one revision for articles dumps)."""

    def __init__(self) -> None:
        self.revisions = 0
        self.open: dict[tuple[str, tuple[str, ...], int], _Run] = {}
        self.done: list[tuple[Candidate, _Run, RevisionRef | None]] = []

    def see(self, revision: Revision, drafts: list[_Draft]) -> None:
        self.revisions += 1
        ref = RevisionRef(revision.id, _timestamp(revision))
        present = {d.key: d for d in drafts}
        for key in [k for k in self.open if k not in present]:
            run = self.open.pop(key)
            self.done.append((run.latest, run, ref))
        for key, draft in present.items():
            going = self.open.get(key)
            if going is None:
                self.open[key] = _Run(ref, self.revisions == 1, draft.candidate)
            else:
                going.latest = draft.candidate

    def finish(self) -> list[Candidate]:
        ended = [*self.done, *((run.latest, run, None) for run in self.open.values())]
        out = []
        for candidate, run, removed in ended:
            candidate.history = TagHistory(self.revisions, run.first, run.first_is_earliest,
                                           removed)
            out.append(candidate)
        out.sort(key=lambda c: (c.revision.id, c.paragraph_index, c.id))
        return out


def _first_pass(
    path: Path,
    report: MiningReport,
    *,
    namespaces: AbstractSet[int] | None,
    skip_bad_pages: bool,
    prefilter: bool,
    on_progress: Progress | None,
) -> list[Candidate]:
    read = ReadReport()
    candidates: list[Candidate] = []
    page: _Page | None = None
    page_id: int | None = None
    for revision in read_source(path, namespaces=namespaces, skip_bad_pages=skip_bad_pages,
                                report=read):
        if revision.page.id != page_id:
            if page is not None:
                candidates.extend(page.finish())
            page, page_id = _Page(), revision.page.id
            report.pages += 1
        assert page is not None
        report.revisions += 1
        if is_redirect(revision):
            report.redirects += 1
            continue
        drafts: list[_Draft] = []
        if revision.text_format == "wikitext" and (not prefilter or _HINT_RE.search(
                revision.text)):
            report.revisions_cleaned += 1
            paragraphs = clean_wikitext(revision.text, title=revision.page.title,
                                        keep_tables=True, keep_infobox=True)
            drafts = _drafts(revision, paragraphs)
            if not drafts:
                report.revisions_without_tag += 1
            everywhere = sum(1 for t in extract_tags(revision.text) if tag_type(t))
            report.tags_unattached += max(0, everywhere - len(drafts))
        page.see(revision, drafts)
        if on_progress is not None and report.revisions % 64 == 0:
            on_progress("mining", read, len(candidates))
    if page is not None:
        candidates.extend(page.finish())
    report.read = read.summary()
    report.skipped_pages = [str(fault) for fault in read.skipped]
    if on_progress is not None:
        on_progress("mining", read, len(candidates))
    return candidates


# --------------------------------------------------------------------------------------
# Pass 2 (and 3): the other articles' passages
# --------------------------------------------------------------------------------------


@dataclass
class _Pending:
    other: OtherArticle
    candidate: Candidate
    target: str
    chosen: Revision | None = None

    @property
    def at(self) -> dt.datetime | None:
        """When the tagged revision was made: the other article is taken as it was then."""
        stamp = self.candidate.revision.timestamp
        return dt.datetime.fromisoformat(stamp) if stamp else None


_SUFFIX_RE: Final = re.compile(r"(?<=[^\W\d_]{4})(?:ly|ing|ed|es|s)$")
"""A crude stemmer, enough for "freshly" to meet "fresh" and "tornadoes" "tornado"."""


def _terms(text: str) -> list[str]:
    words = (t.replace(",", "") for t in _TOKEN_RE.findall(text.casefold()))
    return [w if w[0].isdigit() else _SUFFIX_RE.sub("", w) for w in words
            if w not in _STOPWORDS and (len(w) > 1 or w.isdigit())]


def rank_passages(query: str, passages: Sequence[tuple[tuple[str, ...], str]], *,
                  k: int = DEFAULT_OTHER_PASSAGES) -> list[OtherPassage]:
    """The ``k`` passages (section path, text) that share the most telling words with ``query``.

    Each shared word counts its inverse document frequency among these passages (BM25's
    form, so a word in every passage counts little), twice for numbers. Passages sharing no
    word are left out; if none shares one, the first passage (the lead) is returned with
    score 0, so an annotator still has somewhere to start.
    """
    if not passages:
        return []
    wanted = set(_terms(query))
    bags = [set(_terms(text)) for _, text in passages]
    n = len(bags)
    df = Counter(w for bag in bags for w in bag if w in wanted)
    scored = []
    for index, bag in enumerate(bags):
        shared = {w: math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5)) * (2 if w[0].isdigit()
                                                                        else 1)
                  for w in bag & wanted}
        score = sum(shared.values())
        if score > 0:
            words = tuple(sorted(shared, key=lambda w: (-shared[w], w)))
            scored.append((-score, index, OtherPassage(passages[index][0], passages[index][1],
                                                       round(score, 3), words)))
    if not scored:
        path, text = passages[0]
        return [OtherPassage(path, text, 0.0, ())]
    scored.sort(key=lambda item: (item[0], item[1]))
    return [p for _, _, p in scored[:k]]


def _query(candidate: Candidate) -> str:
    return " ".join(x for x in (candidate.tagged_sentence or candidate.paragraph,
                                candidate.reason or "") if x)


def _resolve_page(pendings: list[_Pending], k: int) -> None:
    cleaned: dict[int, list[tuple[tuple[str, ...], str]]] = {}
    for pending in pendings:
        revision = pending.chosen
        if revision is None:
            continue
        if revision.id not in cleaned:
            paragraphs = clean_wikitext(revision.text, title=revision.page.title,
                                        keep_tables=True, keep_infobox=True) \
                if revision.text_format == "wikitext" else \
                [Paragraph((), line.strip()) for line in revision.text.splitlines()
                 if line.strip()]
            passages = make_passages(paragraphs, page_id=revision.page.id,
                                     revision_id=revision.id, title=revision.page.title,
                                     timestamp=None)
            cleaned[revision.id] = [(p.section_path, p.text) for p in passages]
        other = pending.other
        other.status = "found"
        other.found_title = revision.page.title
        other.revision = RevisionRef(revision.id, _timestamp(revision))
        other.passages = rank_passages(_query(pending.candidate), cleaned[revision.id], k=k)


def _resolve_pass(
    path: Path,
    pendings: list[_Pending],
    *,
    namespaces: AbstractSet[int] | None,
    skip_bad_pages: bool,
    k: int,
    on_progress: Progress | None,
    found: int,
) -> list[_Pending]:
    """Read the source once, resolving ``pendings``; returns those that met a redirect."""
    by_title: dict[str, list[_Pending]] = {}
    for pending in pendings:
        by_title.setdefault(pending.target, []).append(pending)
    read = ReadReport()
    redirected: list[_Pending] = []
    current: list[_Pending] = []
    current_id: int | None = None
    seen = 0
    for revision in read_source(path, namespaces=namespaces, skip_bad_pages=skip_bad_pages,
                                report=read):
        seen += 1
        if on_progress is not None and seen % 256 == 0:
            on_progress("other articles", read, found)
        if revision.page.id != current_id:
            _resolve_page(current, k)
            current_id = revision.page.id
            current = by_title.pop(normalize_title(revision.page.title), [])
        if not current:
            continue
        if is_redirect(revision):
            target = revision.page.redirect or _redirect_target(revision.text)
            for pending in current:
                if target and not pending.other.via_redirect:
                    pending.other.via_redirect = True
                    pending.other.found_title = normalize_title(target)
                    pending.target = normalize_title(target)
                    redirected.append(pending)
                else:
                    pending.other.status = "redirect not followed"
            current = []
            continue
        for pending in current:
            # The first revision, then each later one made no later than the tagged one.
            at = pending.at
            if pending.chosen is None or (at is not None and revision.dated
                                          and revision.timestamp <= at):
                pending.chosen = revision
    _resolve_page(current, k)
    for rest in by_title.values():
        for pending in rest:
            pending.other.status = "not in source"
    if on_progress is not None:
        on_progress("other articles", read, found)
    return redirected


_REDIRECT_TARGET_RE: Final = re.compile(r"#\s*redirect\s*:?\s*\[\[([^|\]#]+)", re.IGNORECASE)


def _redirect_target(text: str) -> str | None:
    match = _REDIRECT_TARGET_RE.match(text.lstrip())
    return match.group(1).strip() if match else None


# --------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------


def mine_contradictions(
    path: str | os.PathLike[str],
    *,
    namespaces: AbstractSet[int] | None = ARTICLE_NAMESPACES,
    skip_bad_pages: bool = False,
    resolve_others: bool = True,
    other_passages: int = DEFAULT_OTHER_PASSAGES,
    prefilter: bool = True,
    on_progress: Progress | None = None,
) -> MiningResult:
    """Every contradiction tag in a source, as candidates for WikiContradict annotation.

    Args:
        path: Anything :func:`~freshwiki.corpus.readers.read_source` reads: an articles or
            full-history XML dump (plain, bz2, gz, xz), or a folder of them. Plain-text
            sources (JSONL, topics, WikiExtractor) carry no templates, so they give nothing.
        namespaces: Namespaces to read (``None``: all); the other articles are looked up in
            the same ones.
        skip_bad_pages: Skip malformed pages (listed in the report) instead of stopping.
        resolve_others: Read the source again to find the articles ``Contradict-other`` tags
            name and rank their passages.
        other_passages: How many of the other article's passages to keep per candidate.
        prefilter: Clean only revisions whose wikitext mentions one of the tags (see the
            module docstring); ``False`` cleans every revision (for checking the filter).
        on_progress: Called every few dozen revisions.

    Raises:
        DumpReadError: The source is missing, of an unknown format, or broken (names the
            file, page and byte offset).
    """
    source = Path(path)
    report = MiningReport(source=str(source))
    candidates = _first_pass(source, report, namespaces=namespaces,
                             skip_bad_pages=skip_bad_pages, prefilter=prefilter,
                             on_progress=on_progress)
    report.passes = 1
    pendings = [_Pending(o, c, normalize_title(o.title)) for c in candidates for o in c.others]
    if resolve_others and pendings:
        rest = pendings
        while rest and report.passes < 3:
            report.passes += 1
            rest = _resolve_pass(source, rest, namespaces=namespaces,
                                 skip_bad_pages=skip_bad_pages, k=other_passages,
                                 on_progress=on_progress, found=len(candidates))
        for pending in rest:
            pending.other.status = "redirect not followed"
    for candidate in candidates:
        report.by_type[candidate.tag_type] += 1
        report.by_template[" ".join(candidate.template.replace("_", " ").split()).casefold()] \
            += 1
        report.by_scope[candidate.scope] += 1
        for other in candidate.others:
            report.others[other.status] += 1
    return MiningResult(candidates, report)


_ANNOTATION_FIELDS: Final = (
    "wikitag_label_valid", "valid_comment",
    "paragraphA_article", "paragraphA_information", "paragraphA_information_standalone",
    "paragraphB_article", "paragraphB_information", "paragraphB_information_standalone",
    "wikitag_label_samepassage", "relevantInfo_comment_A", "relevantInfo_comment_B",
    "Contradict type I", "Contradict type II", "Contradict type III", "Contradict type IV",
)
"""The release's ``annotationResult`` fields (spelled as in its JSON, which the benchmark
loader reads), left empty. ``taxonomy`` is an empty list and ``question1`` with its two
answers empty strings: an annotator adds ``question2``... only when writing them (the loader
refuses a question left empty)."""


def annotation_record(candidate: Candidate, *, site_url: str = ENWIKI) -> dict[str, Any]:
    """A candidate as a WikiContradict item awaiting annotation (see the module docstring)."""
    annotation: dict[str, Any] = dict.fromkeys(_ANNOTATION_FIELDS, "")
    annotation["taxonomy"] = []
    annotation.update(question1="", question1_answer1="", question1_answer2="")
    return {
        "title": candidate.title,
        "url": site_url + quote(candidate.title.replace(" ", "_"), safe="/:(),'!*"),
        "paragraph_A": candidate.paragraph_with_tags,
        "paragraph_A_clean": candidate.paragraph,
        "tag": candidate.tag_text,
        "tagDate": candidate.date or "",
        "tagReason": candidate.reason or "",
        "annotationResult": annotation,
        "candidate": candidate.as_dict(),
    }


def write_annotation_jsonl(
    candidates: Iterable[Candidate], path: str | os.PathLike[str], *, site_url: str = ENWIKI
) -> int:
    """Write one :func:`annotation_record` per line, atomically; returns the count.

    Raises:
        ContradictionMiningError: the folder does not exist or cannot be written.
    """
    target = Path(path)
    if not target.parent.is_dir():
        raise ContradictionMiningError(
            f"cannot write {target}: folder {target.parent} does not exist",
            hint="create the folder first, or pass another -o path.",
        )
    temp = target.with_name(f".{target.name}.part")
    count = 0
    try:
        with temp.open("w", encoding="utf-8") as out:
            for line in _lines(candidates, site_url):
                out.write(line)
                count += 1
        os.replace(temp, target)
    except OSError as exc:
        raise ContradictionMiningError(
            f"cannot write {target}: {exc.strerror or exc}",
            hint="check the path and free space, or pass another -o path.",
        ) from exc
    finally:
        temp.unlink(missing_ok=True)
    return count


def annotation_lines(candidates: Iterable[Candidate], *, site_url: str = ENWIKI
                     ) -> Iterator[str]:
    """The JSONL lines :func:`write_annotation_jsonl` writes (for writing to a stream)."""
    return _lines(candidates, site_url)


def _lines(candidates: Iterable[Candidate], site_url: str) -> Iterator[str]:
    for candidate in candidates:
        yield json.dumps(annotation_record(candidate, site_url=site_url),
                         ensure_ascii=False) + "\n"
