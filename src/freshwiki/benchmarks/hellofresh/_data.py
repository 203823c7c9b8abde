"""Dataset files to HelloFresh samples: labelled notes and labelled edits, one sample each.

Both loaders keep the file order (the dataset builders write records by time, so ``--limit N``
takes the earliest N) and refuse a file that is missing or holds something else, naming the
command that makes the right one: a silently empty benchmark would still print a score.

What a sample carries (``Sample.metadata``), for scoring and for breaking results down:

* ``label``: the gold answer, ``yes`` (the note was rated helpful / the edit was kept) or
  ``no``; ``gold`` keeps the dataset's own word (``helpful``, ``rejected``...).
* ``period``: the note's creation month (option ``period``) or the edit's week (the period
  the balanced file was built with, else the ISO week).
* notes: ``classification``, ``regime``, ``vote_total`` (every rating row), ``votes_answered``
  (ratings that answered the helpfulness question) and ``vote_quartile`` (``Q1``..``Q4`` of
  ``votes_answered`` over the whole file, see :func:`quartile_labels`).
* edits: ``user_type``, ``title``, ``section``, ``kind``.
* ``source``: ``{"title", "sites"}``, the item's own source, which a search must not return:
  the edited article (title, and its URL for web search) or, for a note, the post's site.
* ``control``: the unrelated sample whose search a control run shows instead
  (``{"id", "subject", "source"}``, see :func:`control_partners`), or ``None`` when the file
  holds a single sample.
"""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from freshwiki.changes.edits import LabelledEdit
from freshwiki.changes.edits import period_key as edit_period_key
from freshwiki.changes.notes import LabelledNote, NotesRecordError, period_key
from freshwiki.errors import FreshwikiError
from freshwiki.seams import Sample

POST_SITES: tuple[str, ...] = ("twitter.com", "x.com")
"""Where a Community Note's post lives: excluded from web searches about the note."""

SUBJECT_CHARS = 1500
"""How much of an edit's text a search query is written from (long rewrites are clipped)."""

EDIT_TEXT_CHARS = 8000
"""At most this many characters of paragraph, deletion and addition together in an edit prompt.

The paper shows an edit's texts whole, to models with long contexts. The local models read
4,096 tokens, and a few real edits rewrite a whole section at once (2 of the first 171 real
edits made prompts of 9,786 and 19,394 tokens, too long for the backend). Cut to 8,000
characters, those two prompts are 1,876 and 1,882 tokens with the instruction: room to spare
for wikitext denser in tokens, and for the answer.
All but 12 of the 978 real edits of the real histories are under it and are shown unchanged
(see :func:`fit_texts`).
"""


class DatasetError(FreshwikiError):
    """A HelloFresh dataset file is missing, unreadable, or not a dataset of that kind."""


@dataclass(frozen=True)
class Item:
    """One record ready to become a sample: everything but the control partner.

    Attributes:
        id: The sample id.
        input: The text a template shows as the item (note text, edit summary).
        subject: What a search agent writes its query from.
        title: The source article (edits), ``""`` for notes.
        metadata: The sample metadata, without ``control``.
        fields: Everything a template may show (see the templates).
    """

    id: str
    input: str
    subject: str
    title: str
    metadata: Mapping[str, Any]
    fields: Mapping[str, Any]


def quartile_labels(values: Sequence[float]) -> list[str]:
    """``Q1``..``Q4`` for each value, by the quartiles of ``values`` themselves.

    The cut points are the 25th, 50th and 75th percentiles with linear interpolation
    (``statistics.quantiles(..., method="inclusive")``, numpy's default); a value equal to a
    cut point belongs to the lower quartile, so tied counts never straddle two quartiles.
    Fewer than two values all get ``Q1``.
    """
    if len(values) < 2:
        return ["Q1"] * len(values)
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    out = []
    for v in values:
        out.append("Q1" if v <= q1 else "Q2" if v <= q2 else "Q3" if v <= q3 else "Q4")
    return out


def control_partners(ids: Sequence[str], titles: Sequence[str], seed: int) -> list[int | None]:
    """For each item, the index of an unrelated item, the same for the same ids and seed.

    The items are put in a random order (``random.Random(seed)`` over the ids sorted, so the
    pairing does not depend on file order) and each is paired with the next one in that order,
    cyclically, so nobody is their own partner and every item is someone's partner once. An
    item whose next one has the same non-empty title (two edits of one article are not
    unrelated) takes the first later one with another title, when there is one.

    Returns:
        Per item, its partner's index into ``ids``; ``None`` for a lone item.
    """
    n = len(ids)
    if n < 2:
        return [None] * n
    order = sorted(range(n), key=lambda i: ids[i])
    random.Random(seed).shuffle(order)
    partners: list[int | None] = [None] * n
    for pos, i in enumerate(order):
        chosen = order[(pos + 1) % n]
        for step in range(1, n):
            candidate = order[(pos + step) % n]
            if not titles[i] or titles[candidate] != titles[i]:
                chosen = candidate
                break
        partners[i] = chosen
    return partners


def attach_controls(items: Sequence[Item], seed: int) -> list[Sample]:
    """Samples of ``items``, each with its control partner (:func:`control_partners`)."""
    partners = control_partners([i.id for i in items], [i.title for i in items], seed)
    samples = []
    for item, partner in zip(items, partners, strict=True):
        control = None
        if partner is not None:
            other = items[partner]
            control = {"id": other.id, "subject": other.subject,
                       "source": dict(other.metadata["source"])}
        samples.append(Sample(
            id=item.id, input=item.input, targets=(str(item.metadata["label"]),),
            metadata={**item.metadata, "control": control},
        ))
    return samples


def _lines(path: Path, kind: str, command: str) -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise DatasetError(
            f"no {kind} dataset at {path}",
            hint=f"create it with `{command}`, or pass --benchmark-option path=FILE.",
        )
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}, line {number}: not JSON ({exc.msg})",
                                   hint=f"regenerate the file with `{command}`.") from None
            if not isinstance(data, dict):
                raise DatasetError(f"{path}, line {number}: not a JSON object",
                                   hint=f"regenerate the file with `{command}`.")
            yield number, data


NOTES_COMMAND = ("freshwiki notes load /path/to/communitynotes && "
                 "freshwiki notes build --period month --seed 0")
EDITS_COMMAND = ("freshwiki edits label HISTORY... && "
                 "freshwiki edits build --period week --seed 0")


def load_note_items(path: Path, period: str = "month") -> list[Item]:
    """The labelled notes in ``path`` (``freshwiki notes load`` / ``notes build`` output).

    Raises:
        DatasetError: missing file, a line that is not a labelled note, a note without text,
            or no notes at all.
    """
    records: list[LabelledNote] = []
    for number, data in _lines(path, "labelled notes", NOTES_COMMAND):
        try:
            records.append(LabelledNote.from_dict(data))
        except NotesRecordError as exc:
            raise DatasetError(f"{path}, line {number}: not a labelled note ({exc.message})",
                               hint=f"is this a notes dataset? Make one with "
                               f"`{NOTES_COMMAND}`.") from None
    if not records:
        raise DatasetError(f"{path} holds no labelled notes",
                           hint=f"make a dataset with `{NOTES_COMMAND}`.")
    try:
        periods = [period_key(r.note.created_at, period) for r in records]
    except NotesRecordError as exc:
        raise DatasetError(f"benchmark option period={period!r}: {exc.message}",
                           hint="use month, week or year.") from None
    quartiles = quartile_labels([float(r.votes.answered) for r in records])
    items = []
    for record, key, quartile in zip(records, periods, quartiles, strict=True):
        note = record.note
        text = " ".join(note.summary.split())
        if not text:  # `notes load` skips blank notes; an older or hand-made file may not
            raise DatasetError(f"{path}: note {note.note_id} has no text to classify",
                               hint=f"rebuild the dataset with `{NOTES_COMMAND}` (it skips "
                               "blank notes), or remove that line.")
        metadata: dict[str, Any] = {
            "label": "yes" if record.label == "helpful" else "no",
            "gold": record.label,
            "period": key,
            "classification": note.classification,
            "regime": record.regime,
            "vote_total": record.votes.total,
            "votes_answered": record.votes.answered,
            "vote_quartile": quartile,
            "note_id": note.note_id,
            "post_id": note.post_id,
            "created_at": note.created_at.isoformat(),
            "source": {"title": None, "sites": list(POST_SITES)},
        }
        fields = {
            "note": text,
            "claims_misleading": note.classification.startswith("MISINFORMED"),
            "post": record.post_text,
            "date": note.created_at.date().isoformat(),
            # The paper dates the post; without a posts file the note's date stands in.
            "post_date": (record.post_date or note.created_at).date().isoformat(),
        }
        items.append(Item(id=f"note-{note.note_id}", input=text, subject=text, title="",
                          metadata=metadata, fields=fields))
    return items


def wikipedia_url(title: str) -> str:
    """The English Wikipedia URL of ``title`` (what a web search must not return for it)."""
    return "https://en.wikipedia.org/wiki/" + quote(title.replace(" ", "_"), safe="()_,'-.:")


def _shorten(text: str, keep: int) -> str:
    """``text`` cut to its first and last ``keep // 2`` characters, saying how much is left out.

    Both ends are kept because an edit can sit anywhere in a paragraph and a deletion or
    rewrite often changes its opening and its closing sentences.
    """
    if len(text) <= keep:
        return text
    head, tail = text[: keep // 2].rstrip(), text[len(text) - keep // 2 :].lstrip()
    return f"{head} [… {len(text) - len(head) - len(tail):,} characters left out …] {tail}"


def fit_texts(texts: Mapping[str, str], budget: int = EDIT_TEXT_CHARS) -> dict[str, str]:
    """``texts`` unchanged when they fit ``budget`` together, else the longest ones shortened.

    Every text gets an equal share: one longer than the share that the shorter ones leave is
    cut to it (:func:`_shorten`), so a short deletion is never cut to make room for a long
    paragraph.
    """
    lengths = sorted(len(t) for t in texts.values())
    if sum(lengths) <= budget:
        return dict(texts)
    spent, share = 0, budget
    for count, length in enumerate(lengths):
        share = (budget - spent) // (len(lengths) - count)
        if length > share:
            break
        spent += length
    return {name: _shorten(text, share) for name, text in texts.items()}


def edit_subject(edit: LabelledEdit) -> str:
    """What a search is written from: article, section, and the text removed and added."""
    e = edit.edit
    parts = [f"Wikipedia article: {e.title}", f"Section: {e.section}"]
    if e.deleted_text:
        parts.append(f"Removed: {e.deleted_text}")
    if e.added_text:
        parts.append(f"Added: {e.added_text}")
    text = "\n".join(parts)
    return text if len(text) <= SUBJECT_CHARS else text[:SUBJECT_CHARS].rstrip() + " …"


def load_edit_items(path: Path) -> list[Item]:
    """The labelled edits in ``path`` (``freshwiki edits build`` or ``edits label`` output).

    Discarded records (``"record": "discarded"``) are skipped; the period is the one the
    balanced file was built with (its ``period`` key), else the edit's ISO week.

    Raises:
        DatasetError: missing file, a line that is not an edit record, or no labelled edits.
    """
    items = []
    seen: set[str] = set()
    for number, data in _lines(path, "labelled edits", EDITS_COMMAND):
        kind = data.get("record")
        if kind == "discarded":
            continue
        if kind != "labelled":
            raise DatasetError(f"{path}, line {number}: not an edit record (no \"record\": "
                               "\"labelled\")", hint=f"make a dataset with `{EDITS_COMMAND}`.")
        try:
            record = LabelledEdit.from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise DatasetError(f"{path}, line {number}: not a labelled edit ({exc})",
                               hint=f"regenerate the file with `{EDITS_COMMAND}`.") from None
        e = record.edit
        sample_id = f"edit-{e.page_id}-{e.revision_id}"
        if sample_id in seen:
            continue  # the same edit twice (files concatenated): one sample
        seen.add(sample_id)
        period = data.get("period")
        metadata: dict[str, Any] = {
            "label": "yes" if record.label == "accepted" else "no",
            "gold": record.label,
            "period": str(period) if period else edit_period_key(record, "week"),
            "user_type": e.user_type,
            "title": e.title,
            "section": e.section,
            "kind": e.kind,
            "page_id": e.page_id,
            "revision_id": e.revision_id,
            "timestamp": e.timestamp.isoformat(),
            "source": {"title": e.title, "sites": [wikipedia_url(e.title)]},
        }
        texts = fit_texts({"before": e.paragraph_before, "deleted": e.deleted_text,
                           "added": e.added_text})
        fields = {
            "title": e.title,
            "section": e.section,
            **texts,
            "comment": e.comment or "",
            "user_type": e.user_type,
            "minor": e.minor,
            "date": e.timestamp.date().isoformat(),
        }
        summary = e.added_text or e.deleted_text
        items.append(Item(id=sample_id, input=f"{e.title}: {summary}",
                          subject=edit_subject(record), title=e.title, metadata=metadata,
                          fields=fields))
    if not items:
        raise DatasetError(f"{path} holds no labelled edits",
                           hint=f"make a dataset with `{EDITS_COMMAND}`.")
    return items
