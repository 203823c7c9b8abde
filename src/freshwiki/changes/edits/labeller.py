"""The streaming labeller: revisions in dump order → labelled edits and discarded revisions.

Rules (HelloFresh's, made precise)
    * Every revision is compared with the revision before it in the stream (its parent: the
      dump's ``<parentid>`` must name it when given). Its clean paragraphs are diffed
      section by section (:mod:`~freshwiki.changes.edits.paragraphs`).
    * Substantial only: more than ``min_chars`` (50) characters of text changed, URLs not
      counted; a change of only URLs or only markup is dropped.
    * One place per edit. A revision with exactly one substantial run of changed
      paragraphs is an :class:`~freshwiki.changes.edits.Edit` (minor changes elsewhere in
      the same revision are ignored). A revision with several substantial runs is discarded
      (``several_changes``): a revert answers for the whole revision, so showing a model one
      of its places and labelling it by the fate of all of them would be noise.
    * The section heading must be unique in the edited revision and in every later revision
      the label looks at (``ambiguous_section`` otherwise).
    * N = 2 + Lp // 10 later edits, Lp the paragraphs of the article after the edit. A null
      revision (same text as the one before, e.g. a protection) is not an edit and is not
      counted; neither is a revision whose text is deleted (it cannot be looked at; the
      next visible revision shows whether the paragraph changed).
    * **accepted**: the changed paragraph(s) stay exactly as the edit left them for N later
      edits (for a deletion: the deleted paragraphs stay absent).
    * **rejected**: a later revision reverts the edit, and for N edits after that the
      section stays as reverted (the words the revert took away stay away, the paragraphs
      it restored stay). A revert is either an *identity revert* (the wikitext equals that
      of one of the ``revert_window`` revisions before the edit, within ``revert_window``
      revisions after it) or a *text undo*: at least ``undo_threshold`` of the words the
      edit changed are undone in the section (``undo_threshold_with_comment`` when the
      summary says it reverts; a summary alone never suffices). Either way more of the
      edit must be undone than the author's own revisions had left undone (see the next
      rule).
    * The revert must be by another user (the paper: "reverted by another user"). A later
      revision by the edit's author (same username, or same IP) is looked at as an ordinary
      later edit: if it leaves the paragraph alone it counts among the N, if it changes or
      takes back the paragraph the edit is changed (and rejected only if someone else then
      reverts it, undoing more of it than the author had), so a self-revert or the author's
      own rewording never makes it rejected.
    * Where the edit is looked for: its section, found by its heading path. When a later
      revision has no section under that path but still has some of the section's
      paragraphs (a renamed or re-levelled heading, a reorganised page), the whole article
      is looked at instead, and the undo is measured against the whole article as the edit
      left it; a renamed section is not read as the edit's text removed. A section whose
      heading and text are both gone was removed, and is looked at as empty.
    * Everything else is :class:`~freshwiki.changes.edits.Discarded` with a reason, among
      them: changed by a non-revert edit before N edits (``changed_before_stable``; an
      identity revert within the window still counts, as vandals often edit twice before
      the rollback), changed again after the revert (``changed_after_revert``), history
      ends first (``history_ended``).

Stream and memory
    A page's revisions are processed as they come; the state kept is the previous
    revision's paragraphs, the digests of the last ``revert_window`` revisions, the ids seen
    on the page (to catch duplicates), a small cache of cleaned texts (reverts restore old
    texts, which need not be cleaned again) and the edits whose label is pending. A pending
    edit is decided after at most ``max(N, revert_window) + N`` later edits, so the window
    is bounded; nothing of the dump is held beyond it.

Every revision read yields exactly one record, labelled or discarded (in the order the
decisions are made, not the order of the revisions), so counts always add up.
"""

from __future__ import annotations

import os
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from freshwiki.changes.edits.paragraphs import (
    FRAGMENT_SEPARATOR,
    ArticleView,
    Hunk,
    SectionChange,
    changed_text,
    contains_run,
    diff_views,
    judge_substance,
    only_urls_changed,
    text_digest,
)
from freshwiki.changes.edits.records import Discarded, Edit, LabelledEdit, UserType
from freshwiki.changes.edits.reverts import is_revert_comment
from freshwiki.changes.edits.sources import history_files, iter_history
from freshwiki.corpus import ARTICLE_NAMESPACES, ReadReport
from freshwiki.records import PageRef, Revision

__all__ = [
    "EditLabeller",
    "LabelOptions",
    "LabelReport",
    "is_text_deleted",
    "label_history",
    "label_revisions",
    "later_edits_required",
]

Outcome = LabelledEdit | Discarded

_VIEW_CACHE = 32


def later_edits_required(paragraphs: int) -> int:
    """N = 2 + Lp/10 (integer division), the paper's stability horizon."""
    return 2 + paragraphs // 10


def is_text_deleted(revision: Revision) -> bool:
    """Whether a revision's text is deleted/suppressed rather than really empty.

    The reader gives a suppressed revision ``text=""`` with no size and no sha1, while a
    blanked page has ``size=0`` and a sha1. Old dumps (schema 0.3) give neither for any
    revision, so there a blanked page also counts as deleted: it is then skipped, never
    mistaken for a revert.
    """
    return revision.text == "" and revision.size is None and revision.sha1 is None


@dataclass(frozen=True)
class LabelOptions:
    """Thresholds of the labelling rules (see the module docstring).

    Attributes:
        min_chars: An edit must change more than this many characters of text.
        revert_window: Identity reverts restore one of this many revisions before the edit
            and come within this many revisions after it (mwreverts' default radius).
        undo_threshold: Share of the edit's words undone that makes a revision a revert.
        undo_threshold_with_comment: The same when the revision's summary announces a
            revert.
        stay_tolerance: After a revert, how much the undone share may drop (other edits to
            the section) while the section still counts as staying reverted.
    """

    min_chars: int = 50
    revert_window: int = 15
    undo_threshold: float = 0.8
    undo_threshold_with_comment: float = 0.5
    stay_tolerance: float = 0.1


@dataclass
class LabelReport:
    """Counts of one labelling run, valid while it runs and after an error."""

    revisions: int = 0
    pages: int = 0
    accepted: int = 0
    rejected: int = 0
    discarded: Counter[str] = field(default_factory=Counter)

    def count(self, outcome: Outcome) -> None:
        """Add one outcome."""
        if isinstance(outcome, Discarded):
            self.discarded[outcome.reason] += 1
        elif outcome.label == "accepted":
            self.accepted += 1
        else:
            self.rejected += 1

    @property
    def labelled(self) -> int:
        """Accepted plus rejected."""
        return self.accepted + self.rejected

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready counts (discard reasons sorted by name)."""
        return {
            "revisions": self.revisions,
            "pages": self.pages,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "discarded": sum(self.discarded.values()),
            "discarded_by_reason": dict(sorted(self.discarded.items())),
        }


def _user(revision: Revision) -> tuple[UserType, str | None]:
    who = revision.contributor
    if who is None:
        return "unknown", None
    if who.is_anonymous:
        return "ip", who.ip
    return "registered", who.username


def _same_author(edit: Edit, revision: Revision) -> bool:
    """Whether a revision is by the edit's own author (same username, or same IP).

    HelloFresh counts an edit rejected when it is "reverted by another user": an author who
    takes back or rewrites their own text is not the community rejecting it. A deleted
    contributor matches nobody.
    """
    user_type, user = _user(revision)
    return user is not None and (user_type, user) == (edit.user_type, edit.user)


@dataclass
class _Pending:
    """An edit waiting for its label, and what has been seen of it so far."""

    edit: Edit
    hunk: Hunk
    required: int
    position: int
    before_digests: frozenset[str]
    change: SectionChange
    edit_view: ArticleView
    phase: Literal["watch", "changed", "reverted"] = "watch"
    stable: int = 0
    changed_at: int | None = None
    changed_by_author: bool = False
    reverting_id: int | None = None
    signals: tuple[str, ...] = ()
    undo_at_revert: float = 0.0
    restored: tuple[str, ...] = ()
    article_change: SectionChange | None = None
    author_undone: float = 0.0
    last_undone: float = 0.0

    def discard(self, reason: str, detail: str) -> Discarded:
        return Discarded(self.edit.page_id, self.edit.title, self.edit.revision_id, reason,
                         detail, self.edit)

    def kept(self, paragraphs: tuple[str, ...]) -> bool:
        """The edit's place is as the edit left it."""
        if self.hunk.after:
            return contains_run(paragraphs, self.hunk.after)
        return not any(p in paragraphs for p in self.hunk.before)

    def place(self, view: ArticleView) -> tuple[tuple[str, ...], float]:
        """The paragraphs to look for the edit in, and the share of it undone, in a view.

        Normally the edit's section. When its heading is not in the later revision but some
        paragraph of the section (as the edit left it) still is (a renamed or re-levelled
        heading, a reorganised page), the whole article: the absent section would read as
        the edit's words all gone and make a rename look like a full revert. The undo is
        then measured against the whole article as the edit left it, so words that also
        occur in other sections are neither "gone" nor "back" merely for being there.
        When none of the section's text is left either, the section was removed (often by
        the revert of an edit that added it), and the empty section is the right measure:
        the whole article's other changes would only add noise to it.
        """
        path = self.hunk.section_path
        if path in view.sections:
            return view.section(path), self.change.undone_by(view.section_words(path))
        if not any(p in view.paragraph_set for p in self.edit_view.section(path)):
            return (), self.change.undone_by(Counter())
        if self.article_change is None:
            self.article_change = SectionChange(after=self.edit_view.all_words,
                                                added=self.change.added,
                                                removed=self.change.removed)
        return view.all_paragraphs, self.article_change.undone_by(view.all_words)

    def observe(
        self, revision: Revision, view: ArticleView, position: int, options: LabelOptions
    ) -> Outcome | None:
        """Look at one later edit; return the outcome once it is decided."""
        path = self.hunk.section_path
        if path in view.ambiguous:
            return self.discard("ambiguous_section",
                                f"heading {' > '.join(path) or '(lead)'} occurs more than once "
                                f"in later revision {revision.id}")
        paragraphs, undone = self.place(view)
        if self.phase == "reverted":
            stays = (undone >= self.undo_at_revert - options.stay_tolerance
                     and all(p in paragraphs for p in self.restored))
            if not stays:
                return self.discard(
                    "changed_after_revert",
                    f"reverted by {self.reverting_id}, then changed by {revision.id} "
                    f"after {self.stable} of {self.required} edits (undone {undone:.2f})")
            self.stable += 1
            return self._decide("rejected", revision.id)
        since = position - self.position
        # The author's own later revision is never the revert (the paper: "reverted by
        # another user"); it is looked at like any other later edit of the paragraph below.
        # What the author took back of their own edit is not anyone else's undo either: a
        # revert by another user must undo more than the author's own revisions had left
        # undone (the share after the author's latest revision that changed it; one that
        # edits elsewhere leaves others' undoing to them), or a self-revert would be
        # "reverted" by the next revision of anyone. With no such revision that is more
        # than 0: restoring a text from before the edit can leave its section as the edit
        # left it, a rollback of something else.
        own = _same_author(self.edit, revision)
        if own and undone != self.last_undone:
            self.author_undone = undone
        self.last_undone = undone
        undoes = not own and undone > self.author_undone
        identity = (since <= options.revert_window and view.digest in self.before_digests
                    and undoes)
        comment = is_revert_comment(revision.comment)
        threshold = options.undo_threshold_with_comment if comment else options.undo_threshold
        if identity or (undoes and undone >= threshold):
            signals = ["identity_revert"] if identity else []
            if undone >= threshold:
                signals.append("text_undo")
            if comment:
                signals.append("revert_comment")
            self.phase, self.stable = "reverted", 0
            self.reverting_id, self.signals = revision.id, tuple(signals)
            self.undo_at_revert = undone
            self.restored = tuple(p for p in self.hunk.before if p in paragraphs)
            return None
        if self.phase == "changed":
            if since >= options.revert_window:
                return self.discard(
                    "changed_before_stable",
                    f"changed by {self.changed_at}{self._by_whom()} after {self.stable} of "
                    f"{self.required} edits and not reverted within {options.revert_window} "
                    "revisions")
            return None
        if self.kept(paragraphs):
            self.stable += 1
            return self._decide("accepted", revision.id)
        self.phase, self.changed_at, self.changed_by_author = "changed", revision.id, own
        if since >= options.revert_window:
            return self.discard("changed_before_stable",
                                f"changed by {revision.id}{self._by_whom()} after {self.stable} "
                                f"of {self.required} edits")
        return None

    def _by_whom(self) -> str:
        return " (the edit's own author)" if self.changed_by_author else ""

    def _decide(self, label: Literal["accepted", "rejected"], at: int) -> LabelledEdit | None:
        if self.stable < self.required:
            return None
        if label == "accepted":
            return LabelledEdit(self.edit, "accepted", self.required, at)
        return LabelledEdit(self.edit, "rejected", self.required, at,
                            reverting_revision_id=self.reverting_id, signals=self.signals,
                            undo_fraction=round(self.undo_at_revert, 4))

    def unfinished(self) -> Discarded:
        if self.phase == "changed":
            return self.discard("changed_before_stable",
                                f"changed by {self.changed_at}{self._by_whom()}; the history "
                                "ends before a revert")
        state = f"after the revert by {self.reverting_id}" if self.phase == "reverted" else (
            "unchanged")
        return self.discard("history_ended",
                            f"{self.stable} of {self.required} later edits seen ({state})")


@dataclass
class _Page:
    """What the labeller keeps of the page being read."""

    page: PageRef
    window: int
    seen: set[int] = field(default_factory=set)
    previous: Revision | None = None
    previous_view: ArticleView | None = None
    position: int = 0
    recent: deque[str] = field(default_factory=deque)
    pending: list[_Pending] = field(default_factory=list)
    views: OrderedDict[str, ArticleView] = field(default_factory=OrderedDict)

    def view_of(self, revision: Revision) -> ArticleView:
        digest = text_digest(revision.text)
        view = self.views.get(digest)
        if view is None:
            view = ArticleView.of(revision)
            self.views[digest] = view
            if len(self.views) > _VIEW_CACHE:
                self.views.popitem(last=False)
        else:
            self.views.move_to_end(digest)
        return view


class EditLabeller:
    """Label a stream of revisions, one revision at a time.

    Feed revisions in dump order with :meth:`feed` and call :meth:`finish` at the end; both
    return the outcomes decided by that call. :func:`label_revisions` does this for an
    iterable.
    """

    def __init__(self, options: LabelOptions | None = None,
                 report: LabelReport | None = None) -> None:
        self.options = options or LabelOptions()
        self.report = report if report is not None else LabelReport()
        self._page: _Page | None = None

    def feed(self, revision: Revision) -> list[Outcome]:
        """Take the next revision; return what it decided (possibly for earlier edits)."""
        out: list[Outcome] = []
        state = self._page
        if state is None or state.page.id != revision.page.id:
            out.extend(self._flush())
            state = self._page = _Page(revision.page, self.options.revert_window)
            self.report.pages += 1
        self.report.revisions += 1
        if revision.id in state.seen:
            out.append(self._skip(revision, "duplicate_revision",
                                  f"revision {revision.id} appears again"))
            return self._counted(out)
        state.seen.add(revision.id)
        if is_text_deleted(revision):
            out.append(self._skip(revision, "text_deleted", ""))
            state.previous, state.previous_view = revision, None
            state.position += 1
            return self._counted(out)
        view = state.view_of(revision)
        null = state.previous_view is not None and state.previous_view.digest == view.digest
        if not null:
            still: list[_Pending] = []
            for pending in state.pending:
                outcome = pending.observe(revision, view, state.position, self.options)
                if outcome is None:
                    still.append(pending)
                else:
                    out.append(outcome)
            state.pending = still
        made = self._edit_of(state, revision, view, null)
        if isinstance(made, Discarded):
            out.append(made)
        else:
            state.pending.append(made)
        state.previous, state.previous_view = revision, view
        state.recent.append(view.digest)
        if len(state.recent) > self.options.revert_window:
            state.recent.popleft()
        state.position += 1
        return self._counted(out)

    def finish(self) -> list[Outcome]:
        """End of the stream: every pending edit is discarded as undecided."""
        return self._counted(self._flush())

    def _flush(self) -> list[Outcome]:
        state, self._page = self._page, None
        return [] if state is None else [p.unfinished() for p in state.pending]

    def _counted(self, outcomes: list[Outcome]) -> list[Outcome]:
        for outcome in outcomes:
            self.report.count(outcome)
        return outcomes

    @staticmethod
    def _skip(revision: Revision, reason: str, detail: str) -> Discarded:
        return Discarded(revision.page.id, revision.page.title, revision.id, reason, detail)

    def _edit_of(
        self, state: _Page, revision: Revision, view: ArticleView, null: bool
    ) -> _Pending | Discarded:
        """The revision as an edit waiting for its label, or why it is none."""
        previous = state.previous
        if previous is None:
            if revision.parent_id is not None:
                return self._skip(revision, "missing_parent",
                                  f"parent {revision.parent_id} is not in the input")
            return self._skip(revision, "page_creation", "")
        if revision.parent_id is not None and revision.parent_id != previous.id:
            return self._skip(revision, "missing_parent",
                              f"parent {revision.parent_id} is not in the input (the "
                              f"revision before it is {previous.id})")
        parent_view = state.previous_view
        if parent_view is None:
            return self._skip(revision, "parent_text_deleted", f"parent {previous.id}")
        if revision.timestamp < previous.timestamp:
            return self._skip(revision, "out_of_order_timestamp",
                              f"{revision.timestamp.isoformat()} is before "
                              f"{previous.timestamp.isoformat()} of revision {previous.id}")
        if null:
            return self._skip(revision, "no_change", "")
        return self._judge(state, revision, previous, parent_view, view)

    def _judge(
        self, state: _Page, revision: Revision, previous: Revision,
        parent_view: ArticleView, view: ArticleView,
    ) -> _Pending | Discarded:
        hunks = diff_views(parent_view, view)
        if not hunks:
            if only_urls_changed(previous.text, revision.text):
                return self._skip(revision, "url_only", "the clean text is the same")
            return self._skip(revision, "markup_only", "")
        substantial: list[tuple[Hunk, list[str], list[str], int]] = []
        verdicts: set[str] = set()
        for hunk in hunks:
            before, after = "\n\n".join(hunk.before), "\n\n".join(hunk.after)
            verdict, chars = judge_substance(before, after, min_chars=self.options.min_chars)
            verdicts.add(verdict)
            if verdict == "ok":
                deleted, added = changed_text(before, after)
                substantial.append((hunk, deleted, added, chars))
        if not substantial:
            reason = next(r for r in ("too_short", "url_only", "markup_only") if r in verdicts)
            return self._skip(revision, reason, f"{len(hunks)} changed run(s) of paragraphs")
        if len(substantial) > 1:
            sections = sorted({" > ".join(h.section_path) or "(lead)" for h, *_ in substantial})
            return self._skip(revision, "several_changes",
                              f"{len(substantial)} substantial changes in: {'; '.join(sections)}")
        hunk, deleted, added, chars = substantial[0]
        user_type, user = _user(revision)
        edit = Edit(
            page_id=revision.page.id, title=revision.page.title, revision_id=revision.id,
            parent_id=previous.id, timestamp=revision.timestamp, comment=revision.comment,
            user_type=user_type, user=user, section_path=hunk.section_path,
            paragraph_before="\n\n".join(hunk.before), paragraph_after="\n\n".join(hunk.after),
            deleted_text=FRAGMENT_SEPARATOR.join(deleted),
            added_text=FRAGMENT_SEPARATOR.join(added),
            kind=hunk.kind, chars_changed=chars, article_paragraphs=view.paragraph_count,
            minor=revision.minor,
        )
        if hunk.ambiguous:
            return Discarded(revision.page.id, revision.page.title, revision.id,
                             "ambiguous_section",
                             f"heading {edit.section} occurs more than once in the edited "
                             "revision or its parent", edit)
        path = hunk.section_path
        return _Pending(
            edit=edit, hunk=hunk, required=later_edits_required(view.paragraph_count),
            position=state.position,
            before_digests=frozenset(state.recent) - {view.digest},
            change=SectionChange.between(parent_view.section_words(path),
                                         view.section_words(path)),
            edit_view=view,
        )


def label_revisions(
    revisions: Iterable[Revision],
    *,
    options: LabelOptions | None = None,
    report: LabelReport | None = None,
) -> Iterator[Outcome]:
    """Label a revision stream: one outcome per revision, as soon as each is decided."""
    labeller = EditLabeller(options, report)
    for revision in revisions:
        yield from labeller.feed(revision)
    yield from labeller.finish()


def label_history(
    paths: Sequence[str | os.PathLike[str]],
    *,
    options: LabelOptions | None = None,
    report: LabelReport | None = None,
    namespaces: AbstractSet[int] | None = ARTICLE_NAMESPACES,
    skip_bad_pages: bool = False,
    read_report: ReadReport | None = None,
    on_revision: Callable[[Path, int], None] | None = None,
) -> Iterator[Outcome]:
    """Label every history file (or folder of them); each file is a stream of its own.

    A page's history is not carried from one file to the next: two files are two exports,
    and a page met again in the next file starts afresh (its first revision is then a
    ``page_creation`` or ``missing_parent``), rather than being read as one history whose
    dates jump back.

    Args:
        paths: Files or folders (see :func:`~freshwiki.changes.edits.history_files`).
        options: Labelling thresholds.
        report: Counts, filled in as the run goes.
        namespaces: Pages to keep (``None``: all); default articles.
        skip_bad_pages: Skip malformed pages of XML dumps (recorded in ``read_report``).
        read_report: The XML reader's counts and faults.
        on_revision: Called with the file and the running revision count after each
            revision (for progress bars).
    """
    labeller = EditLabeller(options, report)
    for file in history_files(paths):
        for revision in iter_history([file], namespaces=namespaces,
                                     skip_bad_pages=skip_bad_pages, report=read_report):
            yield from labeller.feed(revision)
            if on_revision is not None:
                on_revision(file, labeller.report.revisions)
        yield from labeller.finish()
