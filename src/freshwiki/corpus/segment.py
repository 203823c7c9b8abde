"""Sentences and passages: the units that claims are checked against and retrievers index.

Sentences come from blingfire, a trained finite-state segmenter: it handles abbreviations,
decimals and initials ("Dr. Smith", "2.1 million", "J. R. R. Tolkien", "U.S.") at ~20 MB/s on
one core, where rule-based Python segmenters manage well under 1 MB/s. It is not perfect (it
sometimes keeps "Mt. Everest is high. See ..." together); the cost of a missed split is a
longer sentence, never lost text.

Passages follow WikiChat: consecutive sentences of one section packed up to ``max_words``
words, never crossing a section boundary, each carrying page, revision, timestamp and the
maintenance tags that fall inside it.
"""

from __future__ import annotations

import ctypes
import dataclasses
import datetime as dt
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import blingfire

from freshwiki.records import MaintenanceTag, Paragraph, Passage

DEFAULT_MAX_WORDS = 120


@dataclass(frozen=True)
class Sentence:
    """A sentence with its character span in the text it came from."""

    text: str
    start: int
    end: int


_TEXT_TO_SENTENCES: Final[Any] = getattr(blingfire.blingfire, "TextToSentences", None)
_buffers = threading.local()


def _c_sentences(text: str) -> str:
    """``blingfire.text_to_sentences(text)``: the same C call, the same result, less around it.

    The wrapper allocates and zeroes a fresh output buffer of twice the input on every call,
    which cost a third of the time on Wikipedia paragraphs; this keeps one buffer per thread
    and grows it when needed. Like the wrapper it returns ``""`` when the C side reports an
    error, and the text up to the first NUL byte (which ends the C string).
    """
    data = text.encode("utf-8")
    need = len(data) * 2
    buffer = getattr(_buffers, "buffer", None)
    if buffer is None or len(buffer) < need:
        buffer = _buffers.buffer = ctypes.create_string_buffer(max(need, 1 << 16))
    written = _TEXT_TO_SENTENCES(data, len(data), buffer, need)
    if written == -1 or written > need:
        return ""
    return ctypes.string_at(buffer, written).split(b"\0", 1)[0].decode("utf-8")


_sentences_of: Final[Callable[[str], str]] = (
    _c_sentences if _TEXT_TO_SENTENCES is not None else blingfire.text_to_sentences
)


def split_sentences(text: str) -> list[Sentence]:
    """Split ``text`` into sentences with character offsets (whitespace-trimmed).

    blingfire's own offsets API maps UTF-8 byte offsets back to characters in a Python loop
    (most of segmentation's cost); its C split returns the sentence texts, which are found
    in order in the original with ``str.find``. Only if a sentence was altered by the split
    (whitespace normalised) does the slower offsets API answer for that text.
    """
    if not text.strip():
        return []
    sentences = []
    cursor = 0
    for piece in _sentences_of(text).split("\n"):
        stripped = piece.strip()
        if not stripped:
            continue
        begin = text.find(stripped, cursor)
        if begin < 0:
            return _split_with_offsets(text)
        sentences.append(Sentence(stripped, begin, begin + len(stripped)))
        cursor = begin + len(stripped)
    return sentences


def _split_with_offsets(text: str) -> list[Sentence]:
    _, offsets = blingfire.text_to_sentences_and_offsets(text)
    sentences = []
    for start, end in offsets:
        chunk = text[start:end]
        stripped = chunk.strip()
        if not stripped:
            continue
        lead = len(chunk) - len(chunk.lstrip())
        begin = start + lead
        sentences.append(Sentence(stripped, begin, begin + len(stripped)))
    return sentences


def _word_count(text: str) -> int:
    return len(text.split())


def _split_long(sentence: Sentence, max_words: int) -> list[Sentence]:
    """Cut a sentence longer than ``max_words`` (tables, run-on lists) at word boundaries."""
    words = sentence.text.split()
    if len(words) <= max_words:
        return [sentence]
    pieces = []
    cursor = sentence.start
    for i in range(0, len(words), max_words):
        piece = " ".join(words[i : i + max_words])
        pieces.append(Sentence(piece, cursor, cursor + len(piece)))
        cursor += len(piece) + 1
    return pieces


@dataclass
class _Unit:
    """A sentence on its way into a passage, with the tags that belong to it."""

    text: str
    tags: list[MaintenanceTag]


def _units(paragraph: Paragraph, max_words: int) -> list[_Unit]:
    # Lists and table rows: one line is one unit; blingfire would merge short items (and
    # their newlines send it down the slow offsets path), so it is not run on them at all.
    lines = (
        split_sentences(paragraph.text) if paragraph.kind == "text"
        else _line_units(paragraph.text)
    )
    sentences = [piece for s in lines for piece in _split_long(s, max_words)]
    units = [_Unit(s.text, []) for s in sentences]
    if not units:
        return units
    for tag in paragraph.tags:
        if tag.scope == "block" or tag.sentence_offset is None:
            units[0].tags.append(tag)
            continue
        # An inline tag qualifies the sentence that ends at or before its offset.
        target = 0
        for i, s in enumerate(sentences):
            if s.start < tag.sentence_offset:
                target = i
        units[target].tags.append(tag)
    return units


def _line_units(text: str) -> list[Sentence]:
    units, cursor = [], 0
    for line in text.split("\n"):
        if line.strip():
            begin = cursor + len(line) - len(line.lstrip())
            units.append(Sentence(line.strip(), begin, begin + len(line.strip())))
        cursor += len(line) + 1
    return units


def make_passages(
    paragraphs: Sequence[Paragraph],
    *,
    page_id: int,
    revision_id: int,
    title: str,
    timestamp: dt.datetime | None,
    max_words: int = DEFAULT_MAX_WORDS,
) -> list[Passage]:
    """Pack the sentences of each section into passages of at most ``max_words`` words.

    Inline tags are re-anchored to the passage: their ``sentence_offset`` becomes the end of
    the sentence they qualify within the passage text, so a reader can highlight it.
    """
    passages: list[Passage] = []
    for section_path, units in _by_section(paragraphs, max_words):
        current: list[_Unit] = []
        words = 0
        for unit in units:
            n = _word_count(unit.text)
            if current and words + n > max_words:
                passages.append(
                    _passage(current, section_path, page_id, revision_id, title, timestamp,
                             len(passages))
                )
                current, words = [], 0
            current.append(unit)
            words += n
        if current:
            passages.append(
                _passage(current, section_path, page_id, revision_id, title, timestamp,
                         len(passages))
            )
    return passages


def _by_section(
    paragraphs: Iterable[Paragraph], max_words: int
) -> list[tuple[tuple[str, ...], list[_Unit]]]:
    groups: list[tuple[tuple[str, ...], list[_Unit]]] = []
    # A section banner over a section with no text left (e.g. only a table) must not vanish:
    # its tags move to the next text, or to the last text when nothing follows.
    carried: list[MaintenanceTag] = []
    for paragraph in paragraphs:
        units = _units(paragraph, max_words)
        if not units:
            carried.extend(
                dataclasses.replace(t, scope="block", sentence_offset=None)
                for t in paragraph.tags
            )
            continue
        if carried:
            units[0].tags[0:0] = carried
            carried = []
        if groups and groups[-1][0] == paragraph.section_path:
            groups[-1][1].extend(units)
        else:
            groups.append((paragraph.section_path, units))
    if carried and groups:
        groups[-1][1][-1].tags.extend(carried)
    return groups


def _passage(
    units: list[_Unit],
    section_path: tuple[str, ...],
    page_id: int,
    revision_id: int,
    title: str,
    timestamp: dt.datetime | None,
    index: int,
) -> Passage:
    text_parts: list[str] = []
    tags: list[MaintenanceTag] = []
    cursor = 0
    for unit in units:
        if text_parts:
            cursor += 1  # the joining space
        text_parts.append(unit.text)
        cursor += len(unit.text)
        for tag in unit.tags:
            offset = None if tag.scope == "block" else cursor
            tags.append(dataclasses.replace(tag, sentence_offset=offset))
    return Passage(
        id=f"{page_id}-{revision_id}-{index}",
        page_id=page_id,
        revision_id=revision_id,
        title=title,
        section_path=section_path,
        text=" ".join(text_parts),
        timestamp=timestamp,
        sentences=tuple(u.text for u in units),
        tags=tuple(tags),
    )
