"""Conflict-free revisions of WikiContradict passages, for templates 5.3 and 5.4.

The paper's additional study (§4) shows models passages that annotators revised by hand so that
they no longer contradict each other on the question: 5.3 asks the question on them, 5.4 asks
whether they contradict each other (they do not). The release does not include those
revisions, so freshwiki ships its own (``data/revisions.jsonl``, written by careful reading; its
first line says who wrote it, how and when).

File format (JSON lines). The first line is ``{"provenance": {...}}``. Every other line revises
one item (one pair of passages)::

    {"item": 34,
     "edits": [{"passage": 2, "find": "Died 3 March 1881", "replace": "Died 2 March 1881"}],
     "keep": {"wc-034-q1": 1, "wc-034-q2": 1},
     "note": "what was changed and why"}

``edits`` are applied to the passages as the loader cleans them (``passage`` 1 or 2; ``find``
must occur exactly once; ``replace`` may be empty to delete). Only the edits are stored, never
whole passages: the original text is read from the dataset at run time, and an edit whose text
is not found means the dataset is not the one the revision was written for. ``keep`` names the
questions the revision resolves and which gold answer the revised passages now support (1 or
2); the other gold answer is the one a response must no longer give.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from freshwiki.errors import FreshwikiError
from freshwiki.seams import Sample

BUILTIN_REVISIONS = "data/revisions.jsonl"
"""The shipped revisions, relative to this package."""


class RevisionsError(FreshwikiError):
    """A revisions file that cannot be read or does not fit the dataset."""


@dataclass(frozen=True)
class Edit:
    """One text replacement in one passage (``passage`` is 1 or 2)."""

    passage: int
    find: str
    replace: str


@dataclass(frozen=True)
class Revision:
    """The revision of one item's passages.

    Attributes:
        item: Index of the item in the dataset file.
        edits: Replacements, applied in order.
        keep: Sample id → the gold answer (1 or 2) the revised passages support.
        note: What was changed and why.
    """

    item: int
    edits: tuple[Edit, ...]
    keep: Mapping[str, int]
    note: str


@dataclass(frozen=True)
class Revisions:
    """A revisions file: who wrote it, and one revision per item.

    Attributes:
        source: Where it was read from (for messages).
        sha256: Its content hash, part of a run's data identity.
        provenance: The file's own account of who wrote it, how and when.
        items: Item index → revision.
    """

    source: str
    sha256: str
    provenance: Mapping[str, Any]
    items: Mapping[int, Revision]

    def by_sample(self) -> dict[str, Revision]:
        """Sample id → the revision that covers it."""
        return {sid: r for r in self.items.values() for sid in r.keep}


NO_REVISIONS = Revisions(source="none", sha256="", provenance={}, items={})
"""No revisions at all: templates 5.3 and 5.4 then apply to no question."""


def builtin_revisions() -> Revisions:
    """The revisions that ship with freshwiki."""
    resource = resources.files("freshwiki.benchmarks.wikicontradict").joinpath(
        BUILTIN_REVISIONS
    )
    return parse_revisions(BUILTIN_REVISIONS, resource.read_bytes())


def load_revisions(path: Path) -> Revisions:
    """Read a revisions file (format in the module docstring).

    Raises:
        RevisionsError: the file is missing or malformed; the message names the line.
    """
    if not path.is_file():
        raise RevisionsError(
            f"revisions file {path} not found",
            hint="give a JSONL file of passage revisions (see freshwiki.benchmarks."
            "wikicontradict), or 'none' to run without templates 5.3 and 5.4.",
        )
    return parse_revisions(str(path), path.read_bytes())


def _fail(where: str, what: str) -> RevisionsError:
    return RevisionsError(
        f"{where}: {what}",
        hint='each line after the provenance line is {"item": N, "edits": [{"passage": 1|2, '
        '"find": TEXT, "replace": TEXT}], "keep": {SAMPLE_ID: 1|2}, "note": TEXT}.',
    )


def parse_revisions(source: str, data: bytes) -> Revisions:
    """Parse the bytes of a revisions file read from ``source``.

    Raises:
        RevisionsError: malformed JSON or fields, a repeated item, a missing provenance line.
    """
    lines = [(n, line) for n, line in enumerate(data.decode("utf-8").splitlines(), 1)
             if line.strip()]
    if not lines:
        raise _fail(source, "empty file")
    objects: list[tuple[str, Any]] = []
    for n, line in lines:
        try:
            objects.append((f"{source}:{n}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise _fail(f"{source}:{n}", f"not valid JSON ({exc.msg})") from exc
    where, head = objects[0]
    if not isinstance(head, dict) or not isinstance(head.get("provenance"), dict):
        raise _fail(where, "the first line must be {\"provenance\": {...}}")
    items: dict[int, Revision] = {}
    for where, obj in objects[1:]:
        revision = _revision(where, obj)
        if revision.item in items:
            raise _fail(where, f"item {revision.item} is revised twice")
        items[revision.item] = revision
    return Revisions(source=source, sha256=hashlib.sha256(data).hexdigest(),
                     provenance=head["provenance"], items=items)


def _revision(where: str, obj: Any) -> Revision:
    if not isinstance(obj, dict):
        raise _fail(where, "expected a JSON object")
    item, edits, keep, note = (obj.get(k) for k in ("item", "edits", "keep", "note"))
    if not isinstance(item, int) or isinstance(item, bool) or item < 0:
        raise _fail(where, f"'item' must be an item index, got {item!r}")
    if not isinstance(note, str) or not note.strip():
        raise _fail(where, f"item {item}: 'note' must say what was changed and why")
    if not isinstance(edits, list) or not edits:
        raise _fail(where, f"item {item}: 'edits' must be a non-empty list")
    parsed: list[Edit] = []
    for edit in edits:
        if (not isinstance(edit, dict) or edit.get("passage") not in (1, 2)
                or not isinstance(edit.get("find"), str) or not edit["find"]
                or not isinstance(edit.get("replace"), str)):
            raise _fail(where, f"item {item}: bad edit {edit!r}")
        parsed.append(Edit(edit["passage"], edit["find"], edit["replace"]))
    prefix = f"wc-{item:03d}-q"
    if (not isinstance(keep, dict) or not keep
            or any(not str(k).startswith(prefix) or v not in (1, 2) for k, v in keep.items())):
        raise _fail(where, f"item {item}: 'keep' must map its sample ids ({prefix}N) to 1 or 2")
    return Revision(item=item, edits=tuple(parsed), keep=dict(keep), note=note.strip())


def apply_edits(texts: tuple[str, str], edits: Iterable[Edit], where: str) -> tuple[str, str]:
    """``texts`` (passage 1, passage 2) with ``edits`` applied in order.

    Raises:
        RevisionsError: an edit's text does not occur exactly once in its passage.
    """
    out = list(texts)
    for edit in edits:
        text = out[edit.passage - 1]
        count = text.count(edit.find)
        if count != 1:
            raise RevisionsError(
                f"{where}: the text {edit.find!r} occurs {count} times in passage "
                f"{edit.passage}, not once",
                hint="the revision was written for the published WikiContradict release; use "
                "that file, or fix the edit so that its text is unique in the passage.",
            )
        out[edit.passage - 1] = text.replace(edit.find, edit.replace)
        out[edit.passage - 1] = " ".join(out[edit.passage - 1].split())
    return out[0], out[1]


def revised_samples(samples: Iterable[Sample], revisions: Revisions) -> dict[str, Sample]:
    """Sample id → the sample as templates 5.3 and 5.4 show it, for every revised question.

    The revised sample keeps id, question and metadata (plus ``revised_keep``); its documents
    are the revised passages and its targets are (the kept answer, the dropped answer).
    Revisions of items the dataset does not hold (a cut-down copy) are skipped.

    Raises:
        RevisionsError: an edit does not fit its passage, or a revision names a question its
            item does not have.
    """
    by_item: dict[int, list[Sample]] = {}
    for sample in samples:
        by_item.setdefault(int(sample.metadata["item"]), []).append(sample)
    out: dict[str, Sample] = {}
    for item, revision in revisions.items.items():
        found = by_item.get(item)
        if not found:
            continue
        where = f"{revisions.source}: item {item}"
        unknown = set(revision.keep) - {s.id for s in found}
        if unknown:
            raise RevisionsError(
                f"{where} names {', '.join(sorted(unknown))}, which the dataset lacks",
                hint="name the questions of the item as the loader numbers them (wc-NNN-qN).",
            )
        first = found[0]
        texts = apply_edits((first.documents[0].text, first.documents[1].text),
                            revision.edits, where)
        documents = tuple(dataclasses.replace(d, text=t)
                          for d, t in zip(first.documents, texts, strict=True))
        for sample in found:
            keep = revision.keep.get(sample.id)
            if keep is None:
                continue
            kept, dropped = sample.targets[keep - 1], sample.targets[2 - keep]
            out[sample.id] = dataclasses.replace(
                sample, documents=documents, targets=(kept, dropped),
                metadata={**sample.metadata, "revised_keep": keep},
            )
    return out

