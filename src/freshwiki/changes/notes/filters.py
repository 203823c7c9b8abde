"""HelloFresh's filters on Community Notes: posts in English, posts without media.

The paper (§4.1.1) keeps only notes on posts written in English that carry no media, before
it balances each month. Each filter uses the best evidence the data has, and says which:

* **No media.** Excluded when the posts file says the post has media (``post_has_media``),
  when the note is a media note (``isMediaNote``, a column of the downloads since 2023), or
  when the writer ticked *manipulated media* as a reason the post misleads (the only media
  evidence the early downloads have: such a note is about an image or a video in the post).
  With none of these, the note is kept (counted as ``media unknown``).
* **English.** The post's language when the posts file gives one (X's ``lang``); else the
  language of the post's text; else, in the note-only regime, the language of the note
  itself, a proxy: a note is written for the readers of its post. A text is taken as
  not English only when py3langid names another language with probability at least
  :data:`MIN_CONFIDENCE` on at least :data:`MIN_WORDS` words (addresses and @handles
  removed): on the real 2021 notes, shorter texts ("Joe Lied.", "Tweet is tweet") are
  misread as Luxembourgish or Dutch with low confidence, while the Spanish and Italian notes
  are named with 0.75 to 0.999. Those thresholds were chosen by reading those rows, so the
  language filter is in sample for them.

:func:`filter_notes` applies them and counts every exclusion by reason, and the evidence each
decision rested on, so a dataset's summary shows what the filters could and could not see.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from freshwiki.changes.notes.records import LabelledNote, NotesRecordError

MEDIA: Final = "media"
ENGLISH: Final = "english"
FILTERS: Final[tuple[str, ...]] = (MEDIA, ENGLISH)
PAPER_FILTERS: Final[tuple[str, ...]] = FILTERS
"""What the paper applies; ``notes build`` applies it unless told not to."""

MANIPULATED_MEDIA: Final = "misleadingManipulatedMedia"
MIN_CONFIDENCE: Final = 0.5
MIN_WORDS: Final = 4
_NOISE = re.compile(r"https?://\S+|www\.\S+|@\w+|&\w+;")


@lru_cache(maxsize=1)
def _identifier() -> Any:
    # Loaded once, on first use: the model is a few megabytes and most commands never need it.
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def detect_language(text: str) -> tuple[str, float]:
    """py3langid's language code for ``text`` and its probability (addresses removed)."""
    language, probability = _identifier().classify(_NOISE.sub(" ", text))
    return str(language), float(probability)


def is_english(text: str) -> bool:
    """``False`` only when another language is named confidently on enough words."""
    cleaned = _NOISE.sub(" ", text)
    if len(re.findall(r"\w+", cleaned)) < MIN_WORDS:
        return True
    language, probability = detect_language(cleaned)
    return language == "en" or probability < MIN_CONFIDENCE


def media_evidence(record: LabelledNote) -> tuple[str, bool | None]:
    """Where the media decision comes from, and whether the post has media (``None``: unknown)."""
    if record.post_has_media is not None:
        return "posts file", record.post_has_media
    if record.note.is_media_note:
        return "isMediaNote", True
    if MANIPULATED_MEDIA in record.note.misleading_reasons:
        return "manipulated-media reason", True
    if record.note.is_media_note is False:
        return "isMediaNote", False
    return "unknown", None


def language_evidence(record: LabelledNote) -> tuple[str, bool]:
    """Where the language decision comes from, and whether it is English."""
    if record.post_lang:
        return "post lang", record.post_lang.lower().split("-")[0] == "en"
    if record.post_text and record.post_text.strip():
        return "post text", is_english(record.post_text)
    return "note text", is_english(record.note.summary)


@dataclass
class FilterReport:
    """What the filters did.

    Attributes:
        filters: The filters applied, in order.
        read: Records read.
        kept: Records kept.
        excluded: Records excluded, by reason (the first filter that excluded each).
        evidence: Per filter, how many decisions rested on each kind of evidence.
    """

    filters: tuple[str, ...]
    read: int = 0
    kept: int = 0
    excluded: Counter[str] = field(default_factory=Counter)
    evidence: dict[str, Counter[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, for the dataset's summary file."""
        return {"filters": list(self.filters), "read": self.read, "kept": self.kept,
                "excluded": dict(self.excluded),
                "evidence": {k: dict(v) for k, v in self.evidence.items()}}


def filter_notes(records: Iterable[LabelledNote], filters: Sequence[str] = PAPER_FILTERS,
                 ) -> tuple[list[LabelledNote], FilterReport]:
    """Keep the records every filter in ``filters`` lets through (see the module docstring).

    Raises:
        NotesRecordError: an unknown filter name.
    """
    unknown = [f for f in filters if f not in FILTERS]
    if unknown:
        raise NotesRecordError(f"unknown notes filter {', '.join(map(repr, unknown))}",
                               hint=f"use {', '.join(FILTERS)}, or none.")
    report = FilterReport(filters=tuple(filters),
                          evidence={f: Counter() for f in filters})
    kept = []
    for record in records:
        report.read += 1
        reason = ""
        for name in filters:
            if name == MEDIA:
                source, has_media = media_evidence(record)
                report.evidence[name][source] += 1
                if has_media:
                    reason = f"post has media ({source})"
            else:
                source, english = language_evidence(record)
                report.evidence[name][source] += 1
                if not english:
                    reason = f"not English ({source})"
            if reason:
                break
        if reason:
            report.excluded[reason] += 1
        else:
            kept.append(record)
    report.kept = len(kept)
    return kept, report
