#!/usr/bin/env python
r"""Construct a ``pages-meta-history`` dump of real articles with designed edit histories.

Why: the edits benchmark (HelloFresh: "will this edit be kept?") needs many edits labelled
accepted and rejected, spread over weeks so that weekly balanced datasets exist. The real
histories in ``../shared/data/wikipedia/histories`` give three of each, and no large
main-namespace history dump is available. So this script starts from real articles (the
``pages-articles`` sample dump) and writes, for each, a sequence of revisions over several
weeks whose intended fate is known by design. A sidecar JSON records, for every revision,
what it was made to be (its *kind*) and the label the labelling rules should give it, so
the labeller (:mod:`freshwiki.changes.edits`) can be checked against the design, not
against itself.

Run from the repository root::

    .venv/bin/python experiments/construct_edit_histories.py --articles 40 --seed 0 \\
        --out /tmp/edits-constructed/history.xml
    .venv/bin/freshwiki edits label /tmp/edits-constructed/history.xml --out /tmp/lab
    .venv/bin/python experiments/construct_edit_histories.py --check /tmp/lab \\
        --out /tmp/edits-constructed/history.xml

Pass the XML *file* to ``freshwiki edits label``: the sidecar sits beside it and is not a
history (a folder would be searched for ``.json`` files too).

What each article gets (all deterministic given ``--seed``):

* Revision 1 is the real revision of the sample dump (real id, parent id, user, date): the
  history starts mid-way, as partial exports do, so the labeller reports it
  ``missing_parent``.
* *Episodes*, each on its own prose paragraph (a "slot": a wikitext line that cleans to
  exactly one paragraph of a section whose heading is unique):

  - constructive edits by registered users that stay: ``add_sentence`` (a sentence of the
    same article's text from another section, joined with a connective), ``sourced_fact``
    (the same with a ``<ref>`` citation), ``expand`` (two sentences), ``copyedit`` (two
    plain sentences reordered, or a redundant one trimmed), ``update_number`` (a figure
    updated, with a sentence and citation saying so) → intended **accepted**;
  - bad edits, mostly by IPs, reverted 0-3 revisions later: ``nonsense``, ``insult``
    (mild), ``false_claim``, ``number_change``, ``blanking``, ``spam``, ``opinion``,
    ``pov`` → intended **rejected**. Reverts are rollbacks ("Reverted edits by X"), ClueBot
    NG, "rv"/"rvv" (all identity reverts, right after), "Undid revision N by X" after one
    or two other editors' edits elsewhere (a text undo), or a manual partial revert that
    leaves a changed number in place. A vandal sometimes edits twice before the rollback;
    both edits are then rejected and the rollback, changing two places, is discarded
    ``several_changes``. Reverts that change one place are edits too, intended accepted;
  - designed undecided cases: an edit refined again by someone else before it is stable
    (``changed_before_stable``), a reverted edit whose paragraph is then improved by
    someone else (``changed_after_revert``; the revert itself ``changed_before_stable``),
    one revision expanding two sections at once (``several_changes``), and the last edits
    of a history, which lack N later edits (``history_ended``).
* Fillers between episodes, as real histories have them: a category or wikilink added
  (``markup_only``), a URL moved to https (``url_only``), a short wording fix
  (``too_short``).

The design keeps the labelling rules' assumptions true, so the intended label follows from
it: a slot is edited by one episode only; while an episode waits for its label (until N =
2 + Lp // 10 later revisions after its last revision), no other episode or text-changing
filler touches its *section* (the labeller measures undoing on a section's words, so an
unrelated sentence added beside a reverted one could blur it); every constructed
revision's text differs from all earlier ones; and each episode edit is checked on the
clean text (``freshwiki.corpus.clean_wikitext``) to change exactly one paragraph by at
least 60 characters (the rule is more than 50), fillers to change at most 35 or none.
Timestamps spread each article over ``--weeks`` weeks (reverts come minutes after the
vandalism); revision ids grow with time across the whole file, as in real dumps.

IP addresses are drawn from the documentation ranges (RFC 5737, RFC 3849) so that no real
address is shown vandalising; usernames are invented. Text from Wikipedia, CC BY-SA 4.0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import difflib
import hashlib
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from xml.sax.saxutils import escape

from freshwiki.changes.edits.paragraphs import ArticleView
from freshwiki.config import load_settings
from freshwiki.corpus import clean_wikitext, iter_latest, split_sentences
from freshwiki.records import PageRef, Revision

ROOT: Final = Path(__file__).resolve().parents[1]
SOURCE: Final = (load_settings().settings.data_dir / "wikipedia" / "dumps"
                 / "enwiki-pages-articles-sample.xml.bz2")
DEFAULT_OUT: Final = Path("/tmp/edits-constructed/history.xml")

MIN_EDIT_CHARS: Final = 60
"""Episode edits change at least this much clean text (the labeller's rule: more than 50)."""
MAX_FILLER_CHARS: Final = 35
"""Text-changing fillers change at most this much (well under the 50-character rule)."""
REVERT_WINDOW: Final = 15
"""The labeller's identity-revert window; reverts here come far sooner."""

ACCEPT_KINDS: Final = ("add_sentence", "sourced_fact", "expand", "copyedit", "update_number")
REJECT_KINDS: Final = ("nonsense", "insult", "false_claim", "number_change", "blanking",
                       "spam", "opinion", "pov")
SEVERAL_MARK: Final = "several"

Section = tuple[str, ...]


# --------------------------------------------------------------------------- articles


@dataclass(frozen=True)
class Slot:
    """A wikitext line that is exactly one clean paragraph of a uniquely headed section."""

    line: int
    section: Section


@dataclass
class Article:
    """A real article chosen as the start of a constructed history."""

    revision: Revision
    slots: list[Slot]
    sentences: list[tuple[Section, str]]
    """Clean sentences of the article with their section: material for added text."""
    numbers: int = 0


_EPOCH: Final = dt.datetime(2001, 1, 15, tzinfo=dt.UTC)


def clean_sections(text: str, title: str
                   ) -> tuple[dict[Section, tuple[str, ...]], frozenset[Section], int]:
    """Clean paragraphs by section, the sections whose heading repeats, and Lp.

    Exactly the labeller's view of a revision (:class:`~freshwiki.changes.edits.ArticleView`:
    non-empty clean paragraphs grouped by section path; a path met again after another
    section is ambiguous), so the generator checks its own edits on the same footing.
    """
    view = ArticleView.of(Revision(page=PageRef(id=0, title=title), id=0, timestamp=_EPOCH,
                                   text=text))
    return view.sections, view.ambiguous, view.paragraph_count


_HEADING_RE: Final = re.compile(r"^=+[^=].*=+\s*$")
_NON_PROSE_RE: Final = re.compile(r"^\[\[(?:file|image|category):", re.IGNORECASE)
_PLAIN_RE: Final = re.compile(r"^[A-Z][^\[\]{}<>'|=\n]*[a-z)][.]$")
_SENTENCE_SPLIT_RE: Final = re.compile(r"(?<=[a-z)][.])\s+(?=[A-Z])")
_MONTH_RE: Final = re.compile(r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\b")
_NUMBER_RE: Final = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d{2,})(?![\w.,]?\d)")


def find_slots(text: str, title: str) -> list[Slot]:
    """Prose lines that are a paragraph on their own, in sections with a unique heading.

    A line qualifies when it stands between blank lines (or right under a heading), starts
    like prose, and cleans, alone, to one paragraph that occurs exactly once in the
    cleaned article: then editing the line edits that paragraph and nothing else.
    """
    grouped, ambiguous, _ = clean_sections(text, title)
    where: dict[str, list[Section]] = {}
    for path, paragraphs in grouped.items():
        for body in paragraphs:
            where.setdefault(body, []).append(path)
    lines = text.split("\n")
    slots: list[Slot] = []
    for i, line in enumerate(lines):
        if len(line) < 150 or line != line.strip() or _NON_PROSE_RE.match(line):
            continue
        if not (line[0].isalnum() or line.startswith(("''", "[["))):
            continue
        before = lines[i - 1] if i else ""
        after = lines[i + 1] if i + 1 < len(lines) else ""
        if before.strip() and not _HEADING_RE.match(before):
            continue
        if after.strip():
            continue
        alone = [p.text.strip() for p in clean_wikitext(line, title=title) if p.text.strip()]
        if len(alone) != 1 or len(alone[0]) < 100:
            continue
        paths = where.get(alone[0], [])
        if len(paths) != 1 or paths[0] in ambiguous:
            continue
        slots.append(Slot(i, paths[0]))
    return slots


def article_sentences(text: str, title: str) -> list[tuple[Section, str]]:
    """Plain clean sentences (60-220 characters, one line, ending in a full stop)."""
    grouped, _, _ = clean_sections(text, title)
    found: list[tuple[Section, str]] = []
    for path, paragraphs in grouped.items():
        for body in paragraphs:
            for sentence in split_sentences(body):
                s = sentence.text.strip()
                if (60 <= len(s) <= 220 and s.endswith(".") and s[0].isupper()
                        and "\n" not in s and "(-)" not in s and '"' not in s
                        and s.count("(") == s.count(")")):
                    found.append((path, s))
    return found


def load_articles(source: Path, *, limit: int, rng: random.Random) -> list[Article]:
    """Main-namespace, non-redirect articles with enough editable paragraphs and sections.

    Chosen by seed among all eligible ones (sorted by page id), so different seeds give
    different mixes of long and short articles.
    """
    eligible: list[Article] = []
    for revision in iter_latest(source):
        title = revision.page.title
        if (revision.page.redirect is not None or revision.page.namespace != 0
                or revision.text.lstrip()[:9].upper() == "#REDIRECT"
                or "(disambiguation)" in title or title.startswith("List of")):
            continue
        _, _, count = clean_sections(revision.text, title)
        if count < 15:
            continue
        slots = find_slots(revision.text, title)
        if len(slots) < 8 or len({s.section for s in slots}) < 4:
            continue
        sentences = article_sentences(revision.text, title)
        if len(sentences) < 10:
            continue
        eligible.append(Article(revision, slots, sentences))
    eligible.sort(key=lambda a: a.revision.page.id)
    chosen = rng.sample(eligible, min(limit, len(eligible)))
    return sorted(chosen, key=lambda a: a.revision.page.id)


# --------------------------------------------------------------------------- people


_NAME_HEADS: Final = ("Harbor", "Quill", "Marten", "Juniper", "Ledger", "Osprey", "Cobalt",
                      "Thistle", "Meridian", "Fennel", "Basalt", "Wren", "Alder", "Corvid",
                      "Saltmarsh", "Tamarind", "Lindqvist", "Okonkwo", "Pemberly", "Rosalind")
_NAME_TAILS: Final = ("", "42", "_uk", "Reader", "Ed", "77", "-wiki", "Archivist", "2011", "J")
_PATROLLERS: Final = ("Vigilant Heron", "Kestrelwatch", "MopAndBucket", "Tidewrangler",
                      "Grey Lantern")
CLUEBOT: Final = ("ClueBot NG", 13286072)


@dataclass(frozen=True)
class Person:
    """A contributor: a registered user (name and id) or an IP address."""

    name: str
    user_id: int | None = None

    @property
    def is_ip(self) -> bool:
        """Whether the contributor is anonymous."""
        return self.user_id is None


class People:
    """Deterministic pools of editors, vandals (mostly IPs) and patrollers."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        names = sorted({h + t for h in _NAME_HEADS for t in _NAME_TAILS})
        self.editors = [Person(n, rng.randint(100_000, 40_000_000))
                        for n in rng.sample(names, 40)]
        self.patrollers = [Person(n, rng.randint(100_000, 40_000_000)) for n in _PATROLLERS]
        self.newbies = [Person(f"{n}{rng.randint(1, 999)}", rng.randint(40_000_000, 48_000_000))
                        for n in rng.sample(names, 12)]

    def editor(self) -> Person:
        """A registered editor."""
        return self.rng.choice(self.editors)

    def vandal(self) -> Person:
        """An IP (IPv4 or IPv6 documentation range) four times in five, else a new account."""
        if self.rng.random() < 0.8:
            if self.rng.random() < 0.8:
                net = self.rng.choice(("192.0.2", "198.51.100", "203.0.113"))
                return Person(f"{net}.{self.rng.randint(1, 254)}")
            groups = ":".join(f"{self.rng.randint(0, 0xFFFF):x}" for _ in range(4))
            return Person(f"2001:DB8:{groups}".upper())
        return self.rng.choice(self.newbies)

    def patroller(self) -> Person:
        """A registered user who reverts vandalism."""
        return self.rng.choice(self.patrollers)


def user_link(person: Person) -> str:
    """How tool summaries name a contributor."""
    name = person.name
    return f"[[Special:Contributions/{name}|{name}]] ([[User talk:{name}|talk]])"


# --------------------------------------------------------------------------- planning


@dataclass
class Planned:
    """One revision of the constructed history, with what it was designed to be.

    ``comment`` may hold ``{N}`` placeholders naming revision ``N`` of the same page (its
    id is known only once all pages are dated); ``intended`` and ``reason`` are filled in
    at the end of the page's plan.
    """

    text: str
    kind: str
    person: Person
    comment: str | None
    fast: bool = False
    minor: bool = False
    episode: int | None = None
    rule: str = "accept"
    """``accept`` (needs N later revisions), ``reject`` (needs its revert, then N), or a
    discard reason decided by design."""
    required: int = 0
    revert_at: int | None = None
    intended: str = ""
    reason: str | None = None
    rev_id: int = 0
    parent_id: int | None = None
    timestamp: dt.datetime | None = None


def _tokens(text: str) -> list[str]:
    return re.findall(r"\s+|\w+|[^\w\s]", text)


def changed_chars(before: str, after: str) -> int:
    """Characters deleted plus added between two clean texts (word-level diff)."""
    old, new = _tokens(before), _tokens(after)
    total = 0
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            total += len("".join(old[i1:i2]).strip()) + len("".join(new[j1:j2]).strip())
    return total


@dataclass(frozen=True)
class Change:
    """The clean-text change between two revisions: per changed run, section and size."""

    runs: tuple[tuple[Section, int], ...]
    paragraphs: int
    """Lp of the newer revision."""


def clean_change(old: str, new: str, title: str) -> Change:
    """Every changed run of clean paragraphs, section by section, with its size."""
    a, _, _ = clean_sections(old, title)
    b, ambiguous, count = clean_sections(new, title)
    runs: list[tuple[Section, int]] = []
    for path in list(b) + [p for p in a if p not in b]:
        before, after = a.get(path, ()), b.get(path, ())
        if before == after:
            continue
        if path in ambiguous:
            runs.append((path, -1))
            continue
        matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                if i2 - i1 > 1 or j2 - j1 > 1:
                    runs.append((path, -1))  # more than one paragraph: not a designed edit
                else:
                    runs.append((path, changed_chars("\n\n".join(before[i1:i2]),
                                                     "\n\n".join(after[j1:j2]))))
    return Change(tuple(runs), count)


class ArticlePlan:
    """Plans one article's history: episodes on free sections, fillers, the tail."""

    def __init__(self, article: Article, rng: random.Random, people: People) -> None:
        self.article = article
        self.title = article.revision.page.title
        self.rng = rng
        self.people = people
        self.lines = article.revision.text.split("\n")
        real = article.revision
        who = real.contributor
        first = Person(who.username or who.ip or "unknown", who.user_id) if who else Person("?")
        self.revs: list[Planned] = [Planned(real.text, "real_start", first, real.comment,
                                            rule="missing_parent")]
        self.texts: set[str] = {real.text}
        self.free_slots = list(article.slots)
        rng.shuffle(self.free_slots)
        self.busy: dict[Section, int] = {}
        self.queue: list[tuple[int, int, Callable[[], bool]]] = []
        self.episodes = 0
        self.lp = clean_sections(real.text, self.title)[2]
        self.used_sentences: set[str] = set()
        self.filler_count = 0

    # ----------------------------------------------------------------- primitives

    @property
    def position(self) -> int:
        """Index the next revision will get."""
        return len(self.revs)

    def required(self, lp: int) -> int:
        """N = 2 + Lp // 10, the labeller's stability horizon."""
        return 2 + lp // 10

    def section_free(self, section: Section) -> bool:
        """Whether no undecided episode holds the section."""
        return self.busy.get(section, -1) < self.position

    def hold(self, section: Section, until: int) -> None:
        """Keep other episodes and text fillers out of a section until revision ``until``."""
        self.busy[section] = max(self.busy.get(section, -1), until)

    def try_commit(self, lines: list[str], planned: Planned, *, expect: str,
                   section: Section | None = None) -> bool:
        """Append the revision if its clean change is what ``expect`` says; else refuse.

        ``expect``: ``edit`` (one paragraph of ``section``, at least MIN_EDIT_CHARS),
        ``several`` (two runs in different sections, each that large), ``small`` (one run
        of at most MAX_FILLER_CHARS) or ``none`` (clean text unchanged).
        """
        text = "\n".join(lines)
        if text in self.texts:
            return False
        change = clean_change(self.revs[-1].text, text, self.title)
        runs = change.runs
        if expect == "edit":
            ok = len(runs) == 1 and runs[0][0] == section and runs[0][1] >= MIN_EDIT_CHARS
        elif expect == "several":
            ok = (len(runs) == 2 and runs[0][0] != runs[1][0]
                  and all(size >= MIN_EDIT_CHARS for _, size in runs))
        elif expect == "small":
            ok = len(runs) == 1 and 0 < runs[0][1] <= MAX_FILLER_CHARS
        else:
            ok = not runs
        if not ok:
            return False
        planned.text = text
        planned.required = self.required(change.paragraphs)
        self.lp = change.paragraphs
        self.revs.append(planned)
        self.texts.add(text)
        self.lines = lines
        return True

    # ----------------------------------------------------------------- text material

    def sentence(self, avoid: Section) -> str | None:
        """An unused sentence of the article from another section, minimally rephrased."""
        pool = [s for path, s in self.article.sentences
                if path != avoid and s not in self.used_sentences]
        if not pool:
            return None
        chosen = self.rng.choice(pool)
        self.used_sentences.add(chosen)
        first = chosen.split(" ", 1)[0]
        connective = self.rng.choice(("", "", "In addition, ", "Notably, ", "Moreover, "))
        if connective and first in {"The", "This", "It", "In", "A", "An", "These", "Its",
                                    "Their", "There", "During", "By", "After", "Many"}:
            chosen = chosen[0].lower() + chosen[1:]
        elif connective:
            connective = ""
        return connective + chosen

    def citation(self) -> str:
        """A plausible citation template naming the article's subject."""
        year = self.rng.randint(2009, 2016)
        kind = self.rng.choice(("book", "web", "journal"))
        return (f"<ref>{{{{cite {kind} |title={self.title}: a survey |year={year} "
                f"|publisher=Academic Press}}}}</ref>")

    def plain_pieces(self, line: str) -> list[str]:
        """The line cut at sentence ends; plain pieces have no markup at all."""
        return _SENTENCE_SPLIT_RE.split(line)

    # ----------------------------------------------------------------- edits

    def constructive(self, kind: str, line: str, section: Section) -> tuple[str, str] | None:
        """A good-faith edit of ``line`` and its summary, or None when it does not apply."""
        rng = self.rng
        if kind in ("add_sentence", "sourced_fact", "expand"):
            first = self.sentence(section)
            if first is None:
                return None
            added = first
            if kind == "sourced_fact":
                added += self.citation()
            if kind == "expand":
                second = self.sentence(section)
                if second is None:
                    return None
                added += " " + second
            comment = {"add_sentence": ("add info", "added detail", "+ info", "add info from "
                                        "later in the article"),
                       "sourced_fact": ("add sourced info", "+ref", "added info with source"),
                       "expand": ("expand", "expanded paragraph", "expand section")}[kind]
            return line.rstrip() + " " + added, rng.choice(comment)
        if kind == "copyedit":
            pieces = self.plain_pieces(line)
            plain = [i for i, p in enumerate(pieces) if _PLAIN_RE.match(p) and len(p) >= 60]
            pairs = [i for i in plain if i + 1 in plain]
            if pairs and rng.random() < 0.5:
                i = rng.choice(pairs)
                pieces[i], pieces[i + 1] = pieces[i + 1], pieces[i]
                return " ".join(pieces), rng.choice(("copyedit", "ce: reorder for flow",
                                                     "copyedit for flow"))
            trimmable = [i for i in plain if i > 0]
            if trimmable and len(pieces) >= 3:
                del pieces[rng.choice(trimmable)]
                return " ".join(pieces), rng.choice(("copyedit: trim redundant sentence",
                                                     "tighten prose", "ce"))
            return None
        if kind == "update_number":
            found = self.number_in(line)
            if found is None:
                return None
            start, end, value = found
            new_value = value + max(1, round(value * rng.uniform(0.02, 0.08)))
            note = rng.choice((
                " The figure was revised in a later edition of the standard reference work.",
                " This number was updated to match the most recently published estimate.",
            ))
            text = line[:start] + f"{new_value:,}" + line[end:]
            return text.rstrip() + note + self.citation(), rng.choice((
                "update figure per newer source", "updated number", "update stats"))
        raise ValueError(kind)

    def number_in(self, line: str) -> tuple[int, int, int] | None:
        """A quantity (not a year) in plain text of the line: span and value."""
        spans = []
        for match in _NUMBER_RE.finditer(line):
            value = int(match.group(1).replace(",", ""))
            head = line[:match.start()]
            if (1000 <= value <= 2030 and "," not in match.group(1)) or value < 32:
                continue  # years, days of months and small counts are not figures
            if _MONTH_RE.search(line[max(0, match.start() - 16):match.end() + 12]):
                continue  # "March 13" or "13 March 1928": a date
            if head.count("{{") != head.count("}}") or head.count("<ref") != head.count(
                    "</ref>") or head.count("[[") != head.count("]]"):
                continue
            spans.append((match.start(1), match.end(1), value))
        return self.rng.choice(spans) if spans else None

    def vandalism(self, kind: str, line: str) -> tuple[str, str | None] | None:
        """A bad edit of ``line`` and its summary (often none)."""
        rng = self.rng
        subject = self.title.split(" (")[0]
        comment = rng.choice((None, None, None, "fixed", "updated", "added facts", "lol"))
        if kind == "blanking":
            return "", rng.choice((None, None, "removed wrong stuff", "this is false"))
        if kind == "nonsense":
            junk = rng.choice((
                "asdfghjkl qwertyuiop zxcvbnm lol lol lol hahahahaha im so bored in class",
                "BLAH BLAH BLAH BLAH this is so random hahaha xD xD xD who even reads this",
                "jdjdjdjd kekekeke poop poop poop banana banana banana wooooo lolololol",
            ))
            words = line.split(" ")
            cut = rng.randint(len(words) // 3, 2 * len(words) // 3)
            if any(w.count(c) for w in words[:cut] for c in "[{<") and rng.random() < 0.5:
                return line.rstrip() + " " + junk, comment
            return " ".join([*words[:cut], junk, *words[cut:]]), comment
        if kind == "insult":
            insult = rng.choice((
                f"Honestly {subject} is boring and whoever wrote this article is a total dummy.",
                f"My teacher Mr Peters loves {subject} because he is a huge nerd with no friends.",
                f"Anyone who actually cares about {subject} is a loser, stop reading this now.",
            ))
            return line.rstrip() + " " + insult, comment
        if kind == "false_claim":
            year = rng.randint(1950, 2015)
            claim = rng.choice((
                f"In {year}, {subject} was officially banned by the United Nations after a "
                "worldwide public vote.",
                f"{subject} was secretly invented by a teenager from Ohio in {year} as a school "
                "project.",
                f"Scientists proved in {year} that {subject} was entirely made up by a "
                "newspaper.",
            ))
            return line.rstrip() + " " + claim, comment
        if kind == "number_change":
            found = self.number_in(line)
            boast = rng.choice((" and this is the highest number ever recorded anywhere on "
                                "Earth.", " which is more than every other country combined!!!"))
            if found is None:
                return line.rstrip() + boast, comment
            start, end, value = found
            wrong = value * rng.choice((10, 100)) + rng.randint(1, 9)
            return (line[:start] + f"{wrong:,}" + line[end:]).rstrip() + boast, comment
        if kind == "spam":
            slug = re.sub(r"[^a-z]+", "", subject.lower())[:12] or "best"
            spam = (f"For the best {subject} deals visit [http://www.{slug}-deals.example.com "
                    f"cheap {subject} products online] with free worldwide shipping today!")
            return line.rstrip() + " " + spam, rng.choice((None, "added useful link", "link"))
        if kind == "opinion":
            opinion = rng.choice((
                f"In my opinion {subject} is the most overrated thing in history and nobody "
                "should care about it.",
                f"{subject} is clearly the greatest thing ever and everyone who disagrees is "
                "simply wrong.",
                "Many people think this is the worst part of the whole story and they are "
                "completely right.",
            ))
            return line.rstrip() + " " + opinion, rng.choice((None, "my view", "true"))
        if kind == "pov":
            pieces = self.plain_pieces(line)
            plain = [i for i, p in enumerate(pieces) if _PLAIN_RE.match(p)]
            clause = rng.choice((
                ", a disgraceful episode that fair-minded critics still rightly condemn today.",
                ", which was an absolutely brilliant achievement that no one could ever match.",
                ", a shameful fact that the mainstream sources always try to hide from readers.",
            ))
            if not plain:
                return line.rstrip() + " Sadly" + clause, comment
            i = rng.choice(plain)
            pieces[i] = pieces[i][:-1] + clause
            return " ".join(pieces), rng.choice((None, "more accurate", "npov"))
        raise ValueError(kind)

    # ----------------------------------------------------------------- episodes

    def pick_slot(self) -> Slot | None:
        """An unused slot in a free section."""
        for i, slot in enumerate(self.free_slots):
            if self.section_free(slot.section):
                return self.free_slots.pop(i)
        return None

    def any_constructive(self, kinds: Sequence[str], slot: Slot) -> tuple[str, str] | None:
        """The first of ``kinds`` that applies to the slot's line."""
        for kind in kinds:
            made = self.constructive(kind, self.lines[slot.line], slot.section)
            if made is not None:
                return made
        return None

    def ensure_fresh(self, line_no: int, new_line: str) -> None:
        """Make sure restoring ``new_line`` will not recreate an earlier text exactly.

        A text undo that happens to equal an older revision would be an identity revert
        of every revision since then, other episodes' reverts included; a category
        edit first keeps the undo what it is meant to be, an undo of one edit.
        """
        lines = list(self.lines)
        lines[line_no] = new_line
        if "\n".join(lines) in self.texts:
            self.category_filler()

    def category_filler(self) -> bool:
        """Add a category: markup only, and a text never seen before."""
        self.filler_count += 1
        lines = [*self.lines, f"[[Category:{self.title} topics {self.filler_count}]]"]
        return self.try_commit(lines, Planned("", "markup_category", self.people.editor(),
                                              self.rng.choice(("+cat", "add category")),
                                              minor=True), expect="none")

    def settled_at(self, episode: int) -> int:
        """The revision by which every edit of the episode so far has had its N later edits.

        An episode's last revision needs its own N; its first (say the vandal edit) needs N
        after the revert, and Lp, hence N, can differ between them (a blanking removes a
        paragraph).
        """
        last = self.position - 1
        needed = max(r.required for r in self.revs if r.episode == episode)
        return last + needed

    def new_episode(self) -> int:
        """Number the next episode."""
        self.episodes += 1
        return self.episodes

    def accept_episode(self, slot: Slot) -> bool:
        """One constructive edit that stays."""
        kinds = list(ACCEPT_KINDS)
        self.rng.shuffle(kinds)
        for kind in kinds:
            made = self.constructive(kind, self.lines[slot.line], slot.section)
            if made is None:
                continue
            lines = list(self.lines)
            lines[slot.line] = made[0]
            planned = Planned("", kind, self.people.editor(), made[1],
                              minor=kind == "copyedit" and self.rng.random() < 0.3,
                              episode=self.new_episode())
            if self.try_commit(lines, planned, expect="edit", section=slot.section):
                self.hold(slot.section, self.position - 1 + planned.required)
                return True
            self.episodes -= 1
        return False

    def vandal_edit(self, slot: Slot, person: Person, episode: int,
                    kinds: Sequence[str] = REJECT_KINDS) -> Planned | None:
        """One bad edit of the slot, committed, or None when no kind applies."""
        order = list(kinds)
        self.rng.shuffle(order)
        for kind in order:
            made = self.vandalism(kind, self.lines[slot.line])
            if made is None:
                continue
            lines = list(self.lines)
            lines[slot.line] = made[0]
            planned = Planned("", kind, person, made[1], episode=episode, rule="reject")
            if self.try_commit(lines, planned, expect="edit", section=slot.section):
                return planned
        return None

    def reject_episode(self, slot: Slot) -> bool:
        """A bad edit and its revert: identity revert now, or an undo / partial revert later."""
        rng = self.rng
        episode = self.new_episode()
        vandal = self.people.vandal()
        original = self.lines[slot.line]
        before_vandal = len(self.revs) - 1
        roll = rng.random()
        if roll < 0.45:  # identity revert right after
            planned = self.vandal_edit(slot, vandal, episode)
            if planned is None:
                self.episodes -= 1
                return False
            at = self.position - 1
            self.identity_revert(at, before_vandal, [vandal], slot.section, rule="accept")
            self.hold(slot.section, self.settled_at(episode))
            return True
        if roll < 0.6:  # the vandal edits twice, then one rollback of both
            second = self.pick_slot()
            if second is None or second.section == slot.section:
                if second is not None:
                    self.free_slots.append(second)
                self.free_slots.append(slot)
                self.episodes -= 1
                return False
            first = self.vandal_edit(slot, vandal, episode)
            if first is None:
                self.episodes -= 1
                return False
            again = self.vandal_edit(second, vandal, episode)
            if again is None:
                self.free_slots.append(second)
                self.identity_revert(self.position - 1, before_vandal, [vandal], slot.section,
                                     rule="accept")
                self.hold(slot.section, self.settled_at(episode))
                return True
            self.identity_revert(self.position - 1, before_vandal, [vandal], None,
                                 rule="several_changes")
            self.hold(slot.section, self.settled_at(episode))
            self.hold(second.section, self.settled_at(episode))
            return True
        if roll < 0.85:  # "Undid revision N": after one or two other edits elsewhere
            planned = self.vandal_edit(slot, vandal, episode)
            if planned is None:
                self.episodes -= 1
                return False
            at = self.position - 1
            self.hold(slot.section, 10**9)
            delay = rng.randint(1, 2)

            def undo() -> bool:
                self.ensure_fresh(slot.line, original)
                lines = list(self.lines)
                lines[slot.line] = original
                reverter = self.people.patroller() if rng.random() < 0.7 else (
                    self.people.editor())
                comment = rng.choice((f"Undid revision {{{at}}} by {user_link(vandal)}",
                                      f"Undid revision {{{at}}} by {user_link(vandal)} "
                                      "unsourced"))
                ok = self.try_commit(lines, Planned("", "revert_undo", reverter, comment,
                                                    episode=episode), expect="edit",
                                     section=slot.section)
                if ok:
                    self.revs[at].revert_at = self.position - 1
                    self.busy[slot.section] = self.settled_at(episode)
                return ok

            self.follow_up(self.position + delay - 1, at + planned.required, undo)
            return True
        # manual partial revert: a number change plus a claim; the claim is taken out
        found = self.number_in(original)
        if found is None:
            self.episodes -= 1
            return self.reject_episode_identity(slot)
        start, end, value = found
        wrong = value + rng.randint(2, 9) * 10 ** max(0, len(str(value)) - 2)
        claim = rng.choice((
            f" Since then {self.title.split(' (')[0]} has been widely regarded as a total "
            "failure by almost every serious expert in the field.",
            " This made it by far the most important event of the entire century according "
            "to most ordinary people who lived through it.",
        ))
        line_without_claim = original[:start] + f"{wrong:,}" + original[end:]
        changed = line_without_claim.rstrip() + claim
        lines = list(self.lines)
        lines[slot.line] = changed
        planned = Planned("", "number_change", vandal, rng.choice((None, "updated")),
                          episode=episode, rule="reject")
        if not self.try_commit(lines, planned, expect="edit", section=slot.section):
            self.episodes -= 1
            return False
        at = self.position - 1
        self.hold(slot.section, 10**9)

        def partial() -> bool:
            self.ensure_fresh(slot.line, line_without_claim)
            lines = list(self.lines)
            lines[slot.line] = line_without_claim
            comment = rng.choice(("partial revert: rm unsourced claim",
                                  "revert unsourced opinion"))
            ok = self.try_commit(lines, Planned("", "revert_partial", self.people.editor(),
                                                comment, episode=episode),
                                 expect="edit", section=slot.section)
            if ok:
                self.revs[at].revert_at = self.position - 1
                self.busy[slot.section] = self.settled_at(episode)
            return ok

        self.follow_up(self.position + rng.randint(0, 2), at + planned.required, partial)
        return True

    def reject_episode_identity(self, slot: Slot) -> bool:
        """A bad edit reverted by the next revision (the fallback of other patterns)."""
        episode = self.new_episode()
        vandal = self.people.vandal()
        before_vandal = len(self.revs) - 1
        if self.vandal_edit(slot, vandal, episode) is None:
            self.episodes -= 1
            return False
        self.identity_revert(self.position - 1, before_vandal, [vandal], slot.section,
                             rule="accept")
        self.hold(slot.section, self.settled_at(episode))
        return True

    def identity_revert(self, last_bad: int, restore: int, vandals: list[Person],
                        section: Section | None, *, rule: str) -> None:
        """Restore revision ``restore`` exactly (rollback, ClueBot NG or a manual "rv")."""
        rng = self.rng
        vandal = vandals[0]
        good = self.revs[restore].person
        roll = rng.random()
        if roll < 0.35:
            who, kind = self.people.patroller(), "revert_rollback"
            comment = (f"Reverted edits by {user_link(vandal)} to last version by {good.name}")
        elif roll < 0.6:
            who, kind = Person(*CLUEBOT), "revert_cluebot"
            comment = (f"Reverting possible vandalism by [[Special:Contributions/{vandal.name}|"
                       f"{vandal.name}]] to version by {good.name}. [[WP:CBFP|Report False "
                       f"Positive?]] Thanks, [[WP:CBNG|ClueBot NG]]. "
                       f"({rng.randint(1_000_000, 3_000_000)}) (Bot)")
        else:
            who, kind = rng.choice((self.people.patroller(), self.people.editor())), "revert_rv"
            comment = rng.choice(("rv vandalism", "rvv", "rv unsourced", "Reverted to "
                                  f"revision {{{restore}}} by {good.name}"))
        text = self.revs[restore].text
        planned = Planned(text, kind, who, comment, fast=True, minor=kind != "revert_rv",
                          episode=self.revs[last_bad].episode, rule=rule)
        change = clean_change(self.revs[-1].text, text, self.title)
        planned.required = self.required(change.paragraphs)
        self.lp = change.paragraphs
        self.revs.append(planned)  # equal to an earlier text on purpose
        self.lines = text.split("\n")
        at = self.position - 1
        for i in range(restore + 1, at):
            if self.revs[i].rule == "reject":
                self.revs[i].revert_at = at
                self.revs[i].fast = i > restore + 1  # a vandal's second edit comes quickly
        del section

    def refine_episode(self, slot: Slot) -> bool:
        """An edit refined again by someone else before it is stable: undecided."""
        if not self.accept_episode(slot):
            return False
        first = self.position - 1
        self.revs[first].rule = "changed_before_stable"
        self.busy[slot.section] = 10**9
        delay = self.rng.randint(1, max(1, min(2, self.revs[first].required - 1)))

        def refine() -> bool:
            made = self.any_constructive(("expand", "add_sentence", "sourced_fact",
                                          "update_number", "copyedit"), slot)
            if made is None:
                return False
            lines = list(self.lines)
            lines[slot.line] = made[0]
            ok = self.try_commit(lines, Planned("", "expand", self.people.editor(),
                                                "expand further", episode=self.revs[first].
                                                episode), expect="edit", section=slot.section)
            if ok:
                self.busy[slot.section] = self.position - 1 + self.revs[-1].required
            return ok

        self.follow_up(self.position + delay - 1, first + self.revs[first].required, refine)
        return True

    def fix_after_revert_episode(self, slot: Slot) -> bool:
        """A reverted edit whose paragraph is improved soon after the revert: undecided."""
        if not self.reject_episode_identity(slot):
            return False
        revert = self.position - 1
        self.revs[revert].rule = "changed_before_stable"
        self.revs[revert - 1].rule = "changed_after_revert"
        self.busy[slot.section] = 10**9
        delay = self.rng.randint(1, max(1, min(2, self.revs[revert].required - 2)))

        def improve() -> bool:
            made = self.any_constructive(("add_sentence", "sourced_fact", "expand",
                                          "update_number", "copyedit"), slot)
            if made is None:
                return False
            lines = list(self.lines)
            lines[slot.line] = made[0]
            ok = self.try_commit(lines, Planned("", "add_sentence", self.people.editor(),
                                                made[1], episode=self.revs[revert].episode),
                                 expect="edit", section=slot.section)
            if ok:
                self.busy[slot.section] = self.position - 1 + self.revs[-1].required
            return ok

        self.follow_up(self.position + delay - 1, revert + min(
            self.revs[revert].required, self.revs[revert - 1].required), improve)
        return True

    def several_episode(self) -> bool:
        """One revision expanding two sections at once: several_changes."""
        first = self.pick_slot()
        second = self.pick_slot()
        pair = [s for s in (first, second) if s is not None]
        if len(pair) < 2 or pair[0].section == pair[1].section:
            self.free_slots.extend(pair)
            return False
        lines = list(self.lines)
        for slot in pair:
            made = self.constructive("add_sentence", lines[slot.line], slot.section)
            if made is None:
                self.free_slots.extend(pair)
                return False
            lines[slot.line] = made[0]
        planned = Planned("", "several_places", self.people.editor(),
                          self.rng.choice(("expand several sections", "add info throughout")),
                          episode=self.new_episode(), rule="several_changes")
        if not self.try_commit(lines, planned, expect="several"):
            self.episodes -= 1
            self.free_slots.extend(pair)
            return False
        return True

    # ----------------------------------------------------------------- fillers

    def filler(self) -> bool:
        """A small edit that is no labelled edit: markup, URL or a short wording fix."""
        rng = self.rng
        self.filler_count += 1
        order = ["markup_category", "markup_link", "url_https", "small_wording"]
        rng.shuffle(order)
        for kind in order:
            lines = list(self.lines)
            if kind == "markup_category":
                made = self.category_filler()
            elif kind == "markup_link":
                made = self.link_a_word(lines)
            elif kind == "url_https":
                made = False
                for i, line in enumerate(lines):
                    if "http://" in line:
                        lines[i] = line.replace("http://", "https://", 1)
                        made = self.try_commit(lines, Planned(
                            "", kind, self.people.editor(), "http → https", minor=True),
                            expect="none")
                        break
            else:
                made = self.small_wording(lines)
            if made:
                return True
        return False

    def link_a_word(self, lines: list[str]) -> bool:
        """Wikilink one plain capitalised word of a prose line (clean text unchanged)."""
        candidates = [i for i, line in enumerate(lines) if len(line) > 150
                      and line[:1].isalpha()]
        self.rng.shuffle(candidates)
        for i in candidates[:5]:
            words = [m for m in re.finditer(r"(?<=[ ])([A-Z][a-z]{4,})(?=[ ,.])", lines[i])]
            if not words:
                continue
            m = self.rng.choice(words)
            head = lines[i][:m.start()]
            if head.count("[[") != head.count("]]") or head.count("{{") != head.count("}}"):
                continue
            new = list(lines)
            new[i] = head + f"[[{m.group(1)}]]" + lines[i][m.end():]
            if self.try_commit(new, Planned("", "markup_link", self.people.editor(),
                                            "link", minor=True), expect="none"):
                return True
        return False

    def small_wording(self, lines: list[str]) -> bool:
        """A short insertion in a prose line of a free section: too short to be an edit."""
        free = [s for s in self.free_slots if self.section_free(s.section)]
        self.rng.shuffle(free)
        phrase = self.rng.choice((" also", " later", " mainly", " largely", " first"))
        for slot in free[:4]:
            line = lines[slot.line]
            spots = [m.end() for m in re.finditer(r" (?:was|were|is|are|has|had)(?= [a-z])",
                                                  line)]
            spots = [p for p in spots if line[:p].count("[[") == line[:p].count("]]")
                     and line[:p].count("{{") == line[:p].count("}}")]
            if not spots:
                continue
            at = self.rng.choice(spots)
            new = list(lines)
            new[slot.line] = line[:at] + phrase + line[at:]
            if self.try_commit(new, Planned("", "small_wording", self.people.editor(),
                                            self.rng.choice(("wording", "ce", "typo")),
                                            minor=True), expect="small"):
                return True
        return False

    # ----------------------------------------------------------------- the plan

    def follow_up(self, due: int, deadline: int, action: Callable[[], bool]) -> None:
        """Queue an episode's later revision: due at ``due``, at the latest ``deadline``.

        The deadline is what keeps the design true: a revert must come no later than the
        N-th edit after the bad edit (or the labeller has already found it stable), a
        refinement before the refined edit is stable. New episodes add up to three
        revisions at once and an undo may need a filler first, so a follow-up is done
        early when its deadline is less than four revisions away.
        """
        self.queue.append((due, deadline, action))

    def run_queue(self) -> bool:
        """Do the first due queued action; give up on one that cannot be done."""
        self.queue.sort(key=lambda item: (item[1], item[0]))
        for i, (due, deadline, action) in enumerate(self.queue):
            if due <= self.position or self.position + 4 > deadline:
                del self.queue[i]
                if not action():
                    raise RuntimeError(f"{self.title}: planned follow-up "
                                       f"{getattr(action, '__name__', '?')} failed at "
                                       f"revision {self.position}")
                return True
        return False

    def plan(self, target: int) -> None:
        """Episodes and fillers up to about ``target`` revisions, then a short tail."""
        rng = self.rng
        stalls = 0
        while (len(self.revs) < target or self.queue) and stalls < 50:
            if self.run_queue():
                continue
            if len(self.revs) >= target:
                if not self.filler():
                    stalls += 1
                continue
            slot = self.pick_slot() if rng.random() > 0.2 else None
            done = False
            if slot is not None:
                roll = rng.random()
                if roll < 0.44:
                    done = self.accept_episode(slot)
                elif roll < 0.88:
                    done = self.reject_episode(slot)
                elif roll < 0.93:
                    done = self.refine_episode(slot)
                else:
                    done = self.fix_after_revert_episode(slot)
                if not done and slot not in self.free_slots:
                    self.free_slots.append(slot)
            elif rng.random() < 0.05:
                done = self.several_episode()
            if not done and not self.filler():
                stalls += 1
        if self.queue:
            raise RuntimeError(f"{self.title}: follow-ups left unplanned")
        for _ in range(rng.randint(0, self.required(self.lp))):
            self.filler()

    def decide(self) -> None:
        """Each revision's intended label, from the design and the history's length."""
        last = len(self.revs) - 1
        for i, rev in enumerate(self.revs):
            rule = rev.rule
            if rev.kind in ("markup_category", "markup_link"):
                rev.intended, rev.reason = "discarded", "markup_only"
            elif rev.kind == "url_https":
                rev.intended, rev.reason = "discarded", "url_only"
            elif rev.kind == "small_wording":
                rev.intended, rev.reason = "discarded", "too_short"
            elif rule == "accept":
                if last - i >= rev.required:
                    rev.intended = "accepted"
                else:
                    rev.intended, rev.reason = "discarded", "history_ended"
            elif rule == "reject":
                if rev.revert_at is None or rev.revert_at - i > rev.required:
                    raise RuntimeError(f"{self.title}: revision {i} is not reverted within "
                                       f"its {rev.required} later edits")
                if last - rev.revert_at >= rev.required:
                    rev.intended = "rejected"
                else:
                    rev.intended, rev.reason = "discarded", "history_ended"
            else:
                rev.intended, rev.reason = "discarded", rule


# --------------------------------------------------------------------------- dating, XML


def sha1_base36(text: str) -> str:
    """MediaWiki's ``<sha1>``: the SHA-1 of the UTF-8 text in base 36, 31 digits."""
    value = int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while value:
        value, rest = divmod(value, 36)
        out = digits[rest] + out
    return out.rjust(31, "0")


def date_revisions(revs: list[Planned], start: dt.datetime, weeks: int,
                   rng: random.Random) -> None:
    """Spread revisions 2.. over the window; fast ones (reverts) minutes after the last."""
    span = dt.timedelta(weeks=weeks).total_seconds()
    begin = start + dt.timedelta(seconds=rng.uniform(0, 4 * 86400))
    end_at = span - rng.uniform(0, 4 * 86400) - (begin - start).total_seconds()
    slow = [r for r in revs[1:] if not r.fast]
    weights = [rng.expovariate(1.0) for _ in slow]
    scale = end_at / max(sum(weights), 1e-9)
    moment = begin
    gaps = iter(weights)
    for rev in revs[1:]:
        if rev.fast:
            moment += dt.timedelta(seconds=rng.randint(20, 40 * 60))
        else:
            moment += dt.timedelta(seconds=max(60.0, next(gaps) * scale))
        rev.timestamp = moment.replace(microsecond=0)


def write_xml(path: Path, plans: list[ArticlePlan], siteinfo: str) -> None:
    """The dump: siteinfo, then each page with its revisions, in the real schema (0.10)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with open(partial, "w", encoding="utf-8") as fh:
        fh.write('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" '
                 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
                 'xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.10/ '
                 'http://www.mediawiki.org/xml/export-0.10.xsd" version="0.10" xml:lang="en">\n')
        fh.write(siteinfo)
        for plan in plans:
            page = plan.article.revision.page
            fh.write(f"  <page>\n    <title>{escape(page.title)}</title>\n"
                     f"    <ns>{page.namespace}</ns>\n    <id>{page.id}</id>\n")
            for rev in plan.revs:
                assert rev.timestamp is not None
                fh.write(f"    <revision>\n      <id>{rev.rev_id}</id>\n")
                if rev.parent_id is not None:
                    fh.write(f"      <parentid>{rev.parent_id}</parentid>\n")
                fh.write(f"      <timestamp>{rev.timestamp.strftime('%Y-%m-%dT%H:%M:%SZ')}"
                         "</timestamp>\n      <contributor>\n")
                if rev.person.is_ip:
                    fh.write(f"        <ip>{escape(rev.person.name)}</ip>\n")
                else:
                    fh.write(f"        <username>{escape(rev.person.name)}</username>\n"
                             f"        <id>{rev.person.user_id}</id>\n")
                fh.write("      </contributor>\n")
                if rev.minor:
                    fh.write("      <minor/>\n")
                if rev.comment:
                    fh.write(f"      <comment>{escape(rev.comment)}</comment>\n")
                size = len(rev.text.encode("utf-8"))
                fh.write("      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
                         f"      <text xml:space=\"preserve\" bytes=\"{size}\">"
                         f"{escape(rev.text)}</text>\n"
                         f"      <sha1>{sha1_base36(rev.text)}</sha1>\n    </revision>\n")
            fh.write("  </page>\n")
        fh.write("</mediawiki>\n")
    partial.replace(path)


def read_siteinfo(source: Path) -> str:
    """The source dump's ``<siteinfo>`` block, namespaces and all, copied verbatim."""
    import bz2

    head = []
    with bz2.open(source, "rt", encoding="utf-8") as fh:
        inside = False
        for line in fh:
            if "<siteinfo>" in line:
                inside = True
            if inside:
                head.append(line)
            if "</siteinfo>" in line:
                break
    if not head:
        raise RuntimeError(f"{source}: no <siteinfo>")
    return "".join(head)


# --------------------------------------------------------------------------- driver


@dataclass
class Construction:
    """What :func:`construct` wrote."""

    xml: Path
    sidecar: Path
    intended: dict[int, dict[str, Any]]
    counts: dict[str, Counter[str]] = field(default_factory=dict)


def sidecar_path(out: Path) -> Path:
    """Where the intended labels go: beside the XML, ``NAME.intended.json``."""
    return out.with_name(out.name.removesuffix(".xml") + ".intended.json")


def construct(out: Path, *, articles: int = 40, seed: int = 0, weeks: int = 10,
              source: Path = SOURCE, start: dt.date | None = None) -> Construction:
    """Plan, date and write the histories and the sidecar of intended labels.

    Args:
        out: The XML file to write.
        articles: How many real articles to use (fewer if the sample has fewer eligible).
        seed: Everything random (articles, episodes, people, dates) follows from it.
        weeks: How many weeks each article's constructed revisions are spread over.
        source: The ``pages-articles`` dump to start from.
        start: First day of the window; default the Monday after the newest source
            revision, so the constructed edits follow the real ones.
    """
    rng = random.Random(seed)
    chosen = load_articles(source, limit=articles, rng=rng)
    people = People(random.Random(f"{seed}:people"))
    if start is None:
        newest = max(a.revision.timestamp for a in chosen).date()
        start = newest + dt.timedelta(days=7 - newest.weekday())
    window = dt.datetime.combine(start, dt.time(0, 0), tzinfo=dt.UTC)
    plans: list[ArticlePlan] = []
    for article in chosen:
        page_rng = random.Random(f"{seed}:{article.revision.page.id}")
        plan = ArticlePlan(article, page_rng, people)
        n = plan.required(plan.lp)
        plan.plan(target=page_rng.randint(4 * n + 10, 6 * n + 14))
        plan.decide()
        date_revisions(plan.revs, window, weeks, page_rng)
        plans.append(plan)
    # ids grow with time across the file, as the wiki hands them out
    constructed = sorted(
        ((r.timestamp or window, plan.article.revision.page.id, i), r)
        for plan in plans for i, r in enumerate(plan.revs) if i > 0)
    next_id = max(a.revision.id for a in chosen) + rng.randint(10**6, 10**7)
    for _, rev in constructed:
        next_id += rng.randint(1, 4000)
        rev.rev_id = next_id
    intended: dict[int, dict[str, Any]] = {}
    counts: dict[str, Counter[str]] = {"intended": Counter(), "kind": Counter()}
    for plan in plans:
        real = plan.article.revision
        plan.revs[0].rev_id, plan.revs[0].parent_id = real.id, real.parent_id
        plan.revs[0].timestamp = real.timestamp
        ids = [r.rev_id for r in plan.revs]
        for i, rev in enumerate(plan.revs):
            if i:
                rev.parent_id = ids[i - 1]
                if rev.comment:
                    rev.comment = re.sub(r"\{(\d+)\}",
                                         lambda m, ids=ids: str(ids[int(m.group(1))]),
                                         rev.comment)
            intended[rev.rev_id] = {
                "page_id": real.page.id, "title": real.page.title, "position": i,
                "kind": rev.kind, "episode": rev.episode, "intended": rev.intended,
                "reason": rev.reason, "required": rev.required,
                "reverted_by": (plan.revs[rev.revert_at].rev_id if rev.revert_at is not None
                                else None),
                "user_type": "ip" if rev.person.is_ip else "registered",
            }
            counts["intended"][rev.reason or rev.intended] += 1
            counts["kind"][f"{rev.intended}:{rev.kind}"] += 1
    write_xml(out, plans, read_siteinfo(source))
    side = sidecar_path(out)
    side.write_text(json.dumps({
        "about": "Intended labels of the constructed history (experiments/"
                 "construct_edit_histories.py); text from Wikipedia, CC BY-SA 4.0.",
        "seed": seed, "articles": len(plans), "weeks": weeks, "xml": str(out),
        "revisions": {str(k): v for k, v in intended.items()},
    }, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return Construction(out, side, intended, counts)


def read_intended(path: Path) -> dict[int, dict[str, Any]]:
    """The sidecar's intended labels by revision id."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {int(k): v for k, v in data["revisions"].items()}


def compare(intended: dict[int, dict[str, Any]],
            outcomes: dict[int, tuple[str, str | None]]) -> dict[str, Any]:
    """Agreement of the labeller's outcomes (label, reason) with the intended ones, by kind."""
    table: dict[str, Counter[str]] = {}
    mismatches: list[dict[str, Any]] = []
    for rev_id, want in sorted(intended.items()):
        got_label, got_reason = outcomes.get(rev_id, ("missing", None))
        key = f"{want['intended']}:{want['kind']}"
        agree = got_label == want["intended"] and (
            want["intended"] != "discarded" or got_reason == want["reason"])
        table.setdefault(key, Counter())["agree" if agree else "disagree"] += 1
        if not agree:
            mismatches.append({"revision": rev_id, "title": want["title"],
                               "kind": want["kind"], "intended": want["intended"],
                               "reason": want["reason"], "got": got_label,
                               "got_reason": got_reason})
    return {"by_kind": {k: dict(v) for k, v in sorted(table.items())},
            "agree": sum(v["agree"] for v in table.values()),
            "total": len(intended), "mismatches": mismatches}


def outcomes_from_dir(folder: Path) -> dict[int, tuple[str, str | None]]:
    """The labeller's outcome per revision from ``freshwiki edits label`` output."""
    found: dict[int, tuple[str, str | None]] = {}
    for name in ("labelled.jsonl", "discarded.jsonl"):
        for line in (folder / name).read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record["record"] == "labelled":
                found[int(record["revision_id"])] = (record["label"], None)
            else:
                found[int(record["revision_id"])] = ("discarded", record["reason"])
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: construct (default) or ``--check`` a labelling against the sidecar."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--articles", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--weeks", type=int, default=10)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--source", type=Path, default=SOURCE)
    parser.add_argument("--check", type=Path, default=None, metavar="LABEL_DIR",
                        help="compare `freshwiki edits label --out LABEL_DIR` with the "
                        "sidecar of --out instead of constructing")
    args = parser.parse_args(argv)
    if args.check is not None:
        result = compare(read_intended(sidecar_path(args.out)), outcomes_from_dir(args.check))
        print(f"agreement: {result['agree']} of {result['total']} revisions")
        for key, tally in result["by_kind"].items():
            print(f"  {key:40s} agree {tally.get('agree', 0):5d}  "
                  f"disagree {tally.get('disagree', 0):5d}")
        for miss in result["mismatches"]:
            print(json.dumps(miss, ensure_ascii=False))
        return 0 if result["agree"] == result["total"] else 1
    made = construct(args.out, articles=args.articles, seed=args.seed, weeks=args.weeks,
                     source=args.source)
    pages = len({v["page_id"] for v in made.intended.values()})
    print(f"wrote {len(made.intended)} revisions of {pages} articles to {made.xml}")
    print(f"intended labels: {made.sidecar}")
    for name in ("intended", "kind"):
        print(f"by {name}:")
        for key, count in sorted(made.counts[name].items()):
            print(f"  {key:40s} {count:5d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
