"""Sentence alignment of two versions of an article, cheapest evidence first.

1. **Hashing.** Exact and normalised sentence keys are matched in page order (a longest
   common subsequence over keys): these pairs are the *anchors*. A key left unmatched on both
   sides is then matched out of order (a moved sentence). On consecutive revisions this step
   settles almost every sentence and costs microseconds.
2. **Groups between anchors.** Wikipedia keeps sentence order, so what an edit touched lies
   in the runs of unmatched sentences between two anchors. Inside each run, joined keys of up
   to ``max_group`` consecutive sentences find merges and splits ("A. B." → "A; b.").
   Within a run, an old and a new sentence that are each other's closest in wording and
   keep most of their words (``lexical_min``, 0.8) are the commonest edit of all: one
   sentence touched. Their words decide it when they can: a number replaced or a negation
   flipped is changed, a rewording that touches no name, number or negation is unchanged;
   anything else goes on to step 3.
3. **Embeddings.** Only sentences still unmatched are embedded, and each is compared with
   the still-unmatched sentences of the other side: this is where the speed comes from (the
   GrowOVER method embeds every sentence and compares all pairs). A close pair (≥ 0.6) whose
   numbers were replaced, or a very close one (≥ 0.9) whose negation flipped, is changed by
   rule, even above 0.99 (an encoder hardly sees one digit change); otherwise cosine ≥ 0.99
   is unchanged, ≥ 0.9 a rewording (unchanged), and below 0.5 a sentence is new.
4. **LLM check.** Pairs in between are ambiguous: an LLM tells the NLI relation under a JSON
   schema (contradiction with similarity ≥ 0.6 → changed; entailment → unchanged; neutral →
   unchanged when similarity ≥ 0.7, else new, as GrowOVER's "max similarity < 0.7 and not
   entailed"). All of an article's ambiguous pairs go to the judge at once, so a batching
   judge can decide several per call.

Without an LLM, ambiguous pairs get the similarity-only answer (unchanged at ≥ 0.7, else new)
and are flagged ``ambiguous=True``: the label is usable, and visibly unverified.
"""

from __future__ import annotations

import asyncio
import difflib
import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from freshwiki.changes.snapshots._judge import Encoder, Judge
from freshwiki.changes.snapshots._text import (
    negation_flipped,
    normalize,
    numbers_replaced,
    word_edit,
)
from freshwiki.changes.snapshots._types import (
    Alignment,
    AlignOptions,
    EmptySnapshotError,
    Label,
    NoEncoderError,
    Relation,
    SentenceLabel,
    Snapshot,
    SnapshotMismatchError,
    Step,
)

_LEXICAL_MAX_PAIRS = 36
"""Gaps with more (old x new) sentence pairs than this skip the word comparison."""


@dataclass
class _Decision:
    label: Label
    counterparts: tuple[int, ...] = ()
    similarity: float | None = None
    step: Step = "none"
    ambiguous: bool = False
    relation: Relation | None = None
    reason: str = ""


@dataclass
class _Pending:
    new: int
    old: int
    similarity: float


@dataclass
class _Work:
    old: Snapshot
    new: Snapshot
    okeys: list[str]
    nkeys: list[str]
    new_dec: dict[int, _Decision] = field(default_factory=dict)
    old_links: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    old_step: dict[int, tuple[Step, float | None, str]] = field(default_factory=dict)
    anchors: list[tuple[int, int]] = field(default_factory=list)
    pending: list[_Pending] = field(default_factory=list)
    old_best: dict[int, tuple[int, float]] = field(default_factory=dict)
    embedded: int = 0
    llm_calls: int = 0
    changed_old: set[int] = field(default_factory=set)
    """Old sentences already decided changed (their new counterpart holds the decision)."""

    def unmatched_old(self) -> list[int]:
        return [i for i in range(len(self.okeys))
                if i not in self.old_step and i not in self.changed_old]

    def unmatched_new(self) -> list[int]:
        return [j for j in range(len(self.nkeys)) if j not in self.new_dec]

    def link(self, olds: Sequence[int], news: Sequence[int], step: Step, reason: str,
             similarity: float | None = 1.0) -> None:
        for j in news:
            self.new_dec[j] = _Decision("unchanged", tuple(olds), similarity, step, reason=reason)
        for i in olds:
            self.old_links[i].update(news)
            self.old_step[i] = (step, similarity, reason)


def check_pair(old: Snapshot, new: Snapshot) -> None:
    """Refuse pairs that would give wrong labels rather than an alignment.

    Raises:
        SnapshotMismatchError: Neither page id nor title agree (two different articles).
        EmptySnapshotError: A side has no sentences (redirect, blanked or boilerplate-only).
    """
    if old.page_id != new.page_id and old.title != new.title:
        raise SnapshotMismatchError(
            f"cannot align {old.describe()} with {new.describe()}: different articles",
            hint="align two versions of the same page (same page id or title).",
        )
    for side, snap in (("old", old), ("new", new)):
        if not snap.sentences:
            what = f"a redirect to {snap.redirect!r}" if snap.redirect else "empty (no sentences)"
            raise EmptySnapshotError(
                f"the {side} snapshot {snap.describe()} is {what}",
                hint="an article that was deleted, blanked or redirected has no sentences to "
                "label; series and dump diffs record such pairs as skipped.",
            )


class Aligner:
    """Labels sentences of article version pairs; see the module docstring for the steps.

    Args:
        encoder: Sentence encoder for step 3 (called only if sentences stay unmatched).
        judge: NLI judge for step 4; ``None`` flags those pairs ambiguous instead.
        options: Thresholds and limits.
    """

    def __init__(self, encoder: Encoder | None, judge: Judge | None = None,
                 options: AlignOptions | None = None) -> None:
        self.encoder = encoder
        self.judge = judge
        self.options = options or AlignOptions()

    # -- public ---------------------------------------------------------------------------

    def align(self, old: Snapshot, new: Snapshot) -> Alignment:
        """Align one pair (runs the event loop; use :meth:`align_async` inside one)."""
        return asyncio.run(self.align_async(old, new))

    def align_many(self, pairs: Sequence[tuple[Snapshot, Snapshot]]) -> list[Alignment]:
        """Align many pairs with one embedding batch (see :meth:`align_many_async`)."""
        return asyncio.run(self.align_many_async(pairs))

    async def align_async(self, old: Snapshot, new: Snapshot) -> Alignment:
        """Align one pair.

        Raises:
            SnapshotMismatchError: The snapshots are of different articles.
            EmptySnapshotError: A snapshot has no sentences.
        """
        return (await self.align_many_async([(old, new)]))[0]

    async def align_many_async(
        self, pairs: Sequence[tuple[Snapshot, Snapshot]]
    ) -> list[Alignment]:
        """Align many pairs; the leftover sentences of all of them are embedded in one batch.

        One batch because the encoder's fixed cost per call dominates when each pair leaves
        only a handful of sentences.

        Raises:
            SnapshotMismatchError, EmptySnapshotError: For the first bad pair, before any work.
        """
        for old, new in pairs:
            check_pair(old, new)
        works = [self._hash_steps(old, new) for old, new in pairs]
        vectors = self._embed(works)
        for work in works:
            self._embedding_step(work, vectors)
        if self.judge is not None:
            await asyncio.gather(*(self._llm_step(w) for w in works if w.pending))
        return [self._finish(w) for w in works]

    # -- steps 1 and 2 --------------------------------------------------------------------

    def _hash_steps(self, old: Snapshot, new: Snapshot) -> _Work:
        work = _Work(old, new, [normalize(t) for t in old.texts],
                     [normalize(t) for t in new.texts])
        matcher = difflib.SequenceMatcher(None, work.okeys, work.nkeys, autojunk=False)
        for block in matcher.get_matching_blocks():
            for k in range(block.size):
                i, j = block.a + k, block.b + k
                step: Step = "exact" if old.texts[i] == new.texts[j] else "normalized"
                work.link([i], [j], step, "same sentence" if step == "exact"
                          else "same sentence up to case, punctuation and spacing")
                work.anchors.append((i, j))
        # Moved sentences: a key unmatched on both sides, matched out of order.
        waiting: dict[str, list[int]] = defaultdict(list)
        for i in work.unmatched_old():
            waiting[work.okeys[i]].append(i)
        for j in work.unmatched_new():
            olds = waiting.get(work.nkeys[j])
            if olds:
                i = olds.pop(0)
                step = "exact" if old.texts[i] == new.texts[j] else "normalized"
                work.link([i], [j], step, "same sentence, moved")
        self._group_step(work)
        self._lexical_step(work)
        return work

    def _gaps(self, work: _Work) -> list[tuple[list[int], list[int]]]:
        """Runs of unmatched sentences between consecutive anchors (old run, new run)."""
        bounds = [(-1, -1), *sorted(work.anchors), (len(work.okeys), len(work.nkeys))]
        free_old, free_new = set(work.unmatched_old()), set(work.unmatched_new())
        gaps = []
        for (a_o, a_n), (b_o, b_n) in itertools.pairwise(bounds):
            olds = [i for i in range(a_o + 1, b_o) if i in free_old]
            news = [j for j in range(a_n + 1, b_n) if j in free_new]
            if olds and news:
                gaps.append((olds, news))
        return gaps

    def _group_step(self, work: _Work) -> None:
        size = max(1, self.options.max_group)
        for olds, news in self._gaps(work):
            by_key: dict[str, list[tuple[int, int]]] = defaultdict(list)
            for s in range(len(news)):
                for m in range(1, min(size, len(news) - s) + 1):
                    by_key[" ".join(work.nkeys[j] for j in news[s:s + m])].append((s, m))
            found: list[tuple[int, int, int, int]] = []
            for s in range(len(olds)):
                for k in range(1, min(size, len(olds) - s) + 1):
                    key = " ".join(work.okeys[i] for i in olds[s:s + k])
                    for ns, m in by_key.get(key, ()):
                        if k + m > 2:
                            found.append((k + m, s, k, ns * 1000 + m))
            taken_o: set[int] = set()
            taken_n: set[int] = set()
            for _, s, k, code in sorted(found, key=lambda f: -f[0]):
                ns, m = divmod(code, 1000)
                group_o, group_n = olds[s:s + k], news[ns:ns + m]
                if taken_o.intersection(group_o) or taken_n.intersection(group_n):
                    continue
                taken_o.update(group_o)
                taken_n.update(group_n)
                what = "merged" if k > m else "split"
                work.link(group_o, group_n, "group",
                          f"{k} sentence(s) {what} into {m}, same words")

    def _lexical_step(self, work: _Work) -> None:
        if self.options.lexical_min > 1.0:
            return
        for olds, news in self._gaps(work):
            if len(olds) * len(news) > _LEXICAL_MAX_PAIRS:
                continue  # a rewritten section: the embeddings compare it
            edits = {(i, j): word_edit(work.old.texts[i], work.new.texts[j])
                     for i in olds for j in news}
            best_new = {i: max(news, key=lambda n: edits[i, n][0]) for i in olds}
            best_old = {j: max(olds, key=lambda o: edits[o, j][0]) for j in news}
            for i, j in best_new.items():
                kept, touches_content = edits[i, j]
                if best_old[j] != i or kept < self.options.lexical_min:
                    continue
                self._decide_from_words(work, i, j, kept, touches_content)

    @staticmethod
    def _decide_from_words(work: _Work, i: int, j: int, kept: float,
                           touches_content: bool) -> None:
        old_text, new_text = work.old.texts[i], work.new.texts[j]
        share = f"{kept:.0%} of the words kept"
        if numbers_replaced(old_text, new_text):
            why = f"a number was replaced ({share})"
        elif negation_flipped(old_text, new_text):
            why = f"negation flipped ({share})"
        elif not touches_content:
            work.link([i], [j], "lexical", f"rewording ({share}; no name, number or negation "
                      "differs)", similarity=None)
            return
        else:  # a name or a number changed without a clear replacement: embeddings decide
            return
        work.new_dec[j] = _Decision("changed", (i,), None, "lexical", reason=why)
        work.changed_old.add(i)

    # -- step 3 ---------------------------------------------------------------------------

    def _embed(self, works: Sequence[_Work]) -> dict[str, npt.NDArray[np.float32]]:
        texts: dict[str, None] = {}
        for work in works:
            olds, news = work.unmatched_old(), work.unmatched_new()
            if not (olds and news):
                continue
            for i in olds:
                texts.setdefault(work.old.texts[i])
            for j in news:
                texts.setdefault(work.new.texts[j])
            work.embedded = len(olds) + len(news)
        if not texts:
            return {}
        if self.encoder is None:
            raise NoEncoderError(
                "sentences are left after the hashing steps but the aligner has no encoder",
                hint="pass an encoder, e.g. freshwiki.retrieval's Embedder.default(settings).",
            )
        ordered = list(texts)
        matrix = self.encoder.encode(ordered)
        return {t: matrix[i] for i, t in enumerate(ordered)}

    def _embedding_step(self, work: _Work, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        t = self.options.thresholds
        olds, news = work.unmatched_old(), work.unmatched_new()
        if not news:
            return
        if not olds:
            for j in news:
                work.new_dec[j] = _Decision("new", step="none",
                                            reason="no old sentence left to compare with")
            return
        omat = np.stack([vectors[work.old.texts[i]] for i in olds])
        nmat = np.stack([vectors[work.new.texts[j]] for j in news])
        sim = np.clip(nmat @ omat.T, -1.0, 1.0)
        best_new = sim.argmax(axis=0)
        for c, i in enumerate(olds):
            work.old_best[i] = (news[int(best_new[c])], round(float(sim[best_new[c], c]), 4))
        for r, j in enumerate(news):
            c = int(sim[r].argmax())
            i, s = olds[c], round(float(sim[r, c]), 4)
            old_text, new_text = work.old.texts[i], work.new.texts[j]
            # The rules come before the 0.99 cut: a sentence encoder barely moves when one
            # number changes ("1,200" → "1,450" stays above 0.99), yet that is the change.
            if s >= t.changed_min and numbers_replaced(old_text, new_text):
                work.new_dec[j] = _Decision("changed", (i,), s, "rule",
                                            reason=f"a number was replaced (similarity {s:.2f})")
            elif s >= t.minor_edit and negation_flipped(old_text, new_text):
                work.new_dec[j] = _Decision("changed", (i,), s, "rule",
                                            reason=f"negation flipped (similarity {s:.2f})")
            elif s >= t.unchanged:
                work.new_dec[j] = _Decision("unchanged", (i,), s, "embedding",
                                            reason=f"similarity {s:.2f} ≥ {t.unchanged}")
            elif s >= t.minor_edit:
                work.new_dec[j] = _Decision(
                    "unchanged", (i,), s, "rule",
                    reason=f"rewording (similarity {s:.2f}; numbers and negation agree)")
            elif s < t.new_sure:
                work.new_dec[j] = _Decision(
                    "new", (), s, "embedding",
                    reason=f"closest old sentence at {s:.2f} < {t.new_sure}")
            else:
                fallback: Label = "unchanged" if s >= t.new_max else "new"
                work.new_dec[j] = _Decision(
                    fallback, (i,) if fallback == "unchanged" else (), s, "fallback",
                    ambiguous=True,
                    reason=f"similarity {s:.2f}: needs an NLI check; no LLM given, "
                    f"so similarity alone decided ({fallback})")
                work.pending.append(_Pending(j, i, s))

    # -- step 4 ---------------------------------------------------------------------------

    async def _llm_step(self, work: _Work) -> None:
        assert self.judge is not None
        t = self.options.thresholds
        pairs = [(work.old.texts[p.old], work.new.texts[p.new]) for p in work.pending]
        relations = await self.judge.relations(pairs, title=work.new.title)
        work.llm_calls += len(pairs)
        for p, relation in zip(work.pending, relations, strict=True):
            if relation is None:
                work.new_dec[p.new].reason += "; the LLM's answer was unusable"
                continue
            s = p.similarity
            if relation == "contradiction" and s >= t.changed_min:
                dec = _Decision("changed", (p.old,), s, "llm", relation=relation,
                                reason=f"contradicts the old sentence (similarity {s:.2f})")
            elif relation == "entailment" or (relation == "neutral" and s >= t.new_max):
                why = ("entailed by" if relation == "entailment"
                       else "adds no contradiction to")
                dec = _Decision("unchanged", (p.old,), s, "llm", relation=relation,
                                reason=f"{why} the old sentence (similarity {s:.2f})")
            else:
                dec = _Decision("new", (), s, "llm", relation=relation,
                                reason=f"not entailed and similarity {s:.2f} < {t.new_max}")
            work.new_dec[p.new] = dec

    # -- labels ---------------------------------------------------------------------------

    def _finish(self, work: _Work) -> Alignment:
        t = self.options.thresholds
        new_labels: list[SentenceLabel] = []
        changed: list[tuple[int, int]] = []
        new_indices: list[int] = []
        old_changed: dict[int, list[int]] = defaultdict(list)
        old_ambiguous: set[int] = set()
        pointing: dict[int, list[int]] = defaultdict(list)
        for j in range(len(work.nkeys)):
            d = work.new_dec[j]
            new_labels.append(SentenceLabel("new", j, d.label, d.counterparts, d.similarity,
                                            d.step, d.ambiguous, d.relation, d.reason))
            if d.label == "changed":
                changed.extend((i, j) for i in d.counterparts)
                for i in d.counterparts:
                    old_changed[i].append(j)
            elif d.label == "new":
                new_indices.append(j)
            elif d.step in ("embedding", "rule", "llm", "fallback"):
                for i in d.counterparts:
                    pointing[i].append(j)
        # An old sentence's own counterparts among the new sentences judged unchanged from it:
        # the closest one, plus any other that is a near copy (a split with edits). Several
        # loosely related new sentences may point at one old sentence; its S entry should not.
        for i, news in pointing.items():
            sims = {j: work.new_dec[j].similarity or 0.0 for j in news}
            closest = max(news, key=lambda j: sims[j])
            keep = {j for j in news if sims[j] >= t.minor_edit} | {closest}
            work.old_links[i].update(keep)
            dec = work.new_dec[closest]
            work.old_step.setdefault(i, (dec.step, dec.similarity, dec.reason))
            if dec.ambiguous:
                old_ambiguous.add(i)
        # An old sentence folded into a new one that is already matched (a merge with edits).
        for i, (j, s) in work.old_best.items():
            if i in work.old_links or i in old_changed or s < t.minor_edit:
                continue
            if work.new_dec[j].label == "unchanged":
                work.old_links[i].add(j)
                work.old_step[i] = ("embedding", s, f"merged into new sentence {j} "
                                    f"(similarity {s:.2f})")
        old_labels: list[SentenceLabel] = []
        old_to_new: dict[int, int] = {}
        deleted: list[int] = []
        for i in range(len(work.okeys)):
            if work.old_links.get(i):
                step, sim, reason = work.old_step.get(i, ("none", None, ""))
                parts = tuple(sorted(work.old_links[i]))
                old_to_new[i] = parts[0]
                old_labels.append(SentenceLabel("old", i, "unchanged", parts, sim, step,
                                                i in old_ambiguous, None, reason))
            elif i in old_changed:
                parts = tuple(old_changed[i])
                dec = work.new_dec[parts[0]]
                old_labels.append(SentenceLabel("old", i, "changed", parts, dec.similarity,
                                                dec.step, dec.ambiguous, dec.relation,
                                                dec.reason))
            else:
                deleted.append(i)
                best = work.old_best.get(i)
                old_labels.append(SentenceLabel(
                    "old", i, "deleted", (), best[1] if best else None,
                    "embedding" if best else "none", False, None,
                    f"closest new sentence at {best[1]:.2f}" if best
                    else "no new sentence left to compare with"))
        return Alignment(
            old=work.old,
            new=work.new,
            old_labels=tuple(old_labels),
            new_labels=tuple(new_labels),
            old_to_new=old_to_new,
            changed=changed,
            new_indices=new_indices,
            deleted=deleted,
            llm_calls=work.llm_calls,
            embedded=work.embedded,
        )
