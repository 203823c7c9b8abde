"""Article text → sentence records, and the cheap text keys the hashing steps compare.

Normalisation decides what counts as "the same sentence" before any model runs, so it only
removes what never carries meaning in a Wikipedia diff: case, punctuation, quote and dash
variants, whitespace. Numbers are kept digit for digit, because a changed number is the most
common real change between snapshots.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import unicodedata
from collections.abc import Iterable

from freshwiki.changes.snapshots._types import Snapshot, SnapshotSentence
from freshwiki.corpus import clean_wikitext, numbers_in, split_sentences
from freshwiki.records import Paragraph, Revision

_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
_UNDERSCORE = re.compile(r"_+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[a-z']+")
_LETTERS = re.compile(r"[^\W\d_]+")
_TOKEN = re.compile(r"\w+", re.UNICODE)
_NEGATIONS = frozenset({"not", "no", "never", "none", "neither", "nor", "cannot", "without"})


def normalize(text: str) -> str:
    """The key two sentences share when they differ only in case, punctuation or spacing."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_UNDERSCORE.sub(" ", _NON_WORD.sub(" ", folded)).split())


def negations(text: str) -> int:
    """How many negation words a sentence has ("n't" counts as one)."""
    words = _WORD.findall(text.lower())
    return sum(1 for w in words if w in _NEGATIONS or w.endswith("n't"))


def numbers_replaced(old: str, new: str, *, min_overlap: float = 0.5) -> bool:
    """Whether ``new`` restates ``old`` with a number replaced by another.

    Only a replacement (a number gone *and* a number added) signals a contradiction; a number
    merely added ("3 species" → "3 species and 2 hybrids") is more detail, not a change. The
    other words must largely agree (Jaccard ≥ ``min_overlap``), or the two sentences are just
    about different things that both have numbers.
    """
    before, after = numbers_in(old, ordinals=True), numbers_in(new, ordinals=True)
    if not (before - after and after - before):
        return False
    words_old = set(_LETTERS.findall(_NUMBER.sub(" ", old.casefold())))
    words_new = set(_LETTERS.findall(_NUMBER.sub(" ", new.casefold())))
    union = words_old | words_new
    return bool(union) and len(words_old & words_new) / len(union) >= min_overlap


def negation_flipped(old: str, new: str) -> bool:
    """Whether one sentence negates and the other does not (different negation parity)."""
    return negations(old) % 2 != negations(new) % 2


def word_edit(old: str, new: str) -> tuple[float, bool]:
    """How much of a sentence's wording an edit kept, and whether it touched a name or number.

    Returns:
        The share of words kept (difflib ratio over case-folded words: 1.0 for the same
        words) and whether any word that differs holds a digit or is capitalised other than
        as the sentence's first word (a name: "born in Paris" → "born in Lyon" is a fact
        changed, not a rewording).
    """
    old_words, new_words = _TOKEN.findall(old), _TOKEN.findall(new)
    matcher = difflib.SequenceMatcher(
        None, [w.casefold() for w in old_words], [w.casefold() for w in new_words],
        autojunk=False)
    content = False
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        for words, start, stop in ((old_words, i1, i2), (new_words, j1, j2)):
            for k in range(start, stop):
                word = words[k]
                if any(c.isdigit() for c in word) or (k > 0 and word[:1].isupper()):
                    content = True
    return matcher.ratio(), content


def sentences_of(paragraphs: Iterable[Paragraph]) -> tuple[list[SnapshotSentence], list[str]]:
    """Sentence records of cleaned paragraphs, each line of a list paragraph split alone.

    List items are separate statements (the segmenter would glue lines without a full stop
    into one "sentence"), so every line is segmented on its own; offsets stay relative to the
    paragraph text.
    """
    sentences: list[SnapshotSentence] = []
    texts: list[str] = []
    for paragraph in paragraphs:
        if not paragraph.text.strip():
            continue
        index = len(texts)
        texts.append(paragraph.text)
        position = 0
        offset = 0
        for line in paragraph.text.split("\n"):
            for piece in split_sentences(line):
                sentences.append(
                    SnapshotSentence(
                        text=piece.text,
                        paragraph=index,
                        section_path=paragraph.section_path,
                        position=position,
                        start=offset + piece.start,
                        end=offset + piece.end,
                    )
                )
                position += 1
            offset += len(line) + 1
    return sentences, texts


def snapshot_of(revision: Revision, *, cut: dt.datetime | None = None) -> Snapshot:
    """The snapshot of one revision: cleaned, segmented, with its identity.

    A redirect, or a page whose text cleans to nothing, gives a snapshot without sentences;
    the aligner refuses those with a clear error rather than labelling everything deleted.
    """
    title = revision.page.title
    redirect = _redirect_target(revision)
    if revision.text_format == "plain":
        paragraphs = [Paragraph((), block.strip()) for block in revision.text.split("\n\n")]
    elif redirect is not None:
        paragraphs = []
    else:
        paragraphs = clean_wikitext(revision.text, title=title)
    sentences, texts = sentences_of(paragraphs)
    return Snapshot(
        page_id=revision.page.id,
        title=title,
        revision_id=revision.id,
        timestamp=revision.timestamp,
        sentences=tuple(sentences),
        paragraphs=tuple(texts),
        redirect=redirect,
        cut=cut,
    )


_REDIRECT = re.compile(r"^\s*#redirect\s*:?\s*\[\[([^\]|#]*)", re.IGNORECASE)


def _redirect_target(revision: Revision) -> str | None:
    match = _REDIRECT.match(revision.text)
    if match:
        return match.group(1).strip() or revision.page.redirect or "?"
    return None
