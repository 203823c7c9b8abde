"""Public human-labelled claim sets in one shared format, read strictly.

The project's own claims were labelled by its maintainers; these sets (Climate-FEVER,
HealthVer ...) were labelled by other people, so they show whether the verifiers hold on labels
nobody here wrote. ``experiments/external_sets.py build NAME --source DIR`` writes each one to
``experiments/data/external/NAME/claims.jsonl`` from a local copy of its source repository (the
sources carry no licence, so the rows are rebuilt, never committed). One JSON object a line::

    {"id": "...", "claim": "...", "evidence": "...", "title": "...", "question": null,
     "label": "SUPPORTS", "split": "test", "set": "climate_fever",
     "source": {"repo": "...", "commit": "...", "path": "...", "row": 0}}

Every row is checked before any is used: a row the verifiers would read wrongly (a missing
evidence text, a label spelt another way) would otherwise surface as a verdict scored against
the wrong thing, long after the file was written. The error names the file, the line and the
field.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshwiki.benchmarks.claim_verification._benchmark import (
    LABEL_SET,
    TEMPLATE,
    ClaimsError,
    VerdictScorer,
)
from freshwiki.llm import Message
from freshwiki.seams import Document, Sample, Scorer, Task

if TYPE_CHECKING:
    from freshwiki.llm import LLM

REBUILD = "python experiments/external_sets.py build {name} --source DIR"
"""The command that writes a set's claims file from a copy of its source repository."""

_TEXT_FIELDS = ("id", "claim", "evidence", "split", "set")
"""Fields that must be non-empty strings."""


def default_external_path(name: str) -> Path | None:
    """``experiments/data/external/NAME/claims.jsonl`` of the source checkout, if it exists.

    The checkout is found from this file's place (the folder holding ``experiments/data``),
    so the path is the same whether or not the set has been rebuilt yet.
    """
    for parent in Path(__file__).resolve().parents:
        if (parent / "experiments" / "data").is_dir():
            return parent / "experiments" / "data" / "external" / name / "claims.jsonl"
    return None


def _bad(path: Path, line: int, field: str, problem: str) -> ClaimsError:
    return ClaimsError(f"{path}, line {line}, field {field!r}: {problem}",
                       hint="fix the row, or rebuild the file with "
                            "experiments/external_sets.py build; the format is in the "
                            "freshwiki.benchmarks.claim_verification docstring.")


def _check_row(path: Path, line: int, row: Any) -> dict[str, Any]:
    """The row as read, when every field has its type; else the first problem."""
    if not isinstance(row, dict):
        raise _bad(path, line, "(row)", f"a JSON object was expected, not {type(row).__name__}")
    for field in _TEXT_FIELDS:
        value = row.get(field)
        if field not in row:
            raise _bad(path, line, field, "missing")
        if not isinstance(value, str) or not value.strip():
            raise _bad(path, line, field, f"a non-empty string was expected, not {value!r}")
    if "title" not in row:
        raise _bad(path, line, "title", "missing (write \"\" when the source has none)")
    if not isinstance(row["title"], str):
        raise _bad(path, line, "title", f"a string was expected, not {row['title']!r}")
    if "question" not in row:
        raise _bad(path, line, "question", "missing (write null when the source has none)")
    question = row["question"]
    if question is not None and (not isinstance(question, str) or not question.strip()):
        raise _bad(path, line, "question", f"a non-empty string or null, not {question!r}")
    if "label" not in row:
        raise _bad(path, line, "label", "missing")
    if row["label"] not in LABEL_SET:
        raise _bad(path, line, "label",
                   f"unknown label {row['label']!r} (one of {', '.join(LABEL_SET)})")
    source = row.get("source")
    if not isinstance(source, dict):
        raise _bad(path, line, "source", f"an object (repo, commit, path, row), not {source!r}")
    return row


def read_external(path: Path) -> list[dict[str, Any]]:
    """Every row of an external claims file, checked, in file order.

    Raises:
        ClaimsError: the file is missing; a line is not JSON; a row lacks a field, has one of
            the wrong type, an unknown label, or an id an earlier row has. The message names
            the file, the line (1-based) and the field.
    """
    if not path.is_file():
        raise ClaimsError(f"{path}: no external claims file",
                          hint="rebuild it with " + REBUILD.format(name="NAME") + ".")
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not text.strip():
            continue
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _bad(path, number, "(row)", f"not JSON ({exc.msg}, column {exc.colno})") \
                from exc
        row = _check_row(path, number, parsed)
        if row["id"] in seen:
            raise _bad(path, number, "id", f"duplicate id {row['id']!r} (first on line "
                                           f"{seen[row['id']]})")
        seen[row["id"]] = number
        rows.append(row)
    if not rows:
        raise ClaimsError(f"{path}: no rows", hint="rebuild it with experiments/external_sets.py "
                                                   "build.")
    return rows


class ExternalClaims:
    """A public set's labelled claims, each with its evidence, one template (``claim``).

    Args:
        rows: The checked rows (:func:`read_external`).
        described: What :meth:`describe` reports besides the counts (no paths).
    """

    name = "claim_verification"
    templates: tuple[str, ...] = (TEMPLATE,)
    default_templates: tuple[str, ...] = (TEMPLATE,)
    breakdowns: tuple[str, ...] = ("label",)
    location_options: tuple[str, ...] = ("path", "data_dir", "external_path")
    """Options that only say where the data lives: its content hash identifies it."""

    def __init__(self, rows: Sequence[dict[str, Any]], *,
                 described: Mapping[str, Any] | None = None) -> None:
        # A fixed pseudo-random order by id (never by label): the sets' files are sorted by
        # label, and a ``--limit`` prefix should mix the labels as the whole set does.
        self.items = tuple(sorted(rows, key=lambda r: hashlib.sha256(
            str(r["id"]).encode("utf-8")).hexdigest()))
        self._described = dict(described or {})
        digest = hashlib.sha256()
        for row in self.items:  # what the verifiers read, never the labels
            digest.update(json.dumps([row["id"], row["claim"], row["title"], row["question"],
                                      row["evidence"]], ensure_ascii=False).encode("utf-8"))
        self.dataset_hash = digest.hexdigest()

    def describe(self) -> Mapping[str, Any]:
        """The set, the filters, and the claims counted by label."""
        labels = Counter(str(r["label"]) for r in self.items)
        return {**self._described, "claims": len(self.items),
                "labels": {label: labels.get(label, 0) for label in LABEL_SET}}

    def samples(self) -> Iterator[Sample]:
        """One sample per row: input the claim, target the label, the evidence as document."""
        for row in self.items:
            yield Sample(
                id=str(row["id"]), input=str(row["claim"]), targets=(str(row["label"]),),
                documents=(Document(title=str(row["title"]), text=str(row["evidence"]),
                                    source=str(row["id"])),),
                metadata={"kind": str(row["set"]), "label": row["label"],
                          "split": row["split"], "set": row["set"],
                          "question": row["question"]})

    def render(self, sample: Sample, template: str) -> Task:
        """The claim as one user message; the question, or the claim itself, as the query."""
        if template != TEMPLATE:
            raise ClaimsError(f"claim_verification has no template {template!r}",
                              hint=f"its only template is {TEMPLATE!r}.")
        question = sample.metadata.get("question")
        return Task(sample=sample, template=template, messages=(Message.user(sample.input),),
                    query=str(question) if question else sample.input)

    def scorers(self, judge: LLM | None) -> Sequence[Scorer]:
        """The verdict against the label (no judge needed)."""
        return [VerdictScorer()]


def external_benchmark(values: Mapping[str, Any]) -> ExternalClaims:
    """The benchmark over ``external=NAME`` or ``external_path=PATH`` (checked options).

    Raises:
        ClaimsError: both or an unknown set; the file is missing (with the rebuild command) or
            malformed; an unknown split.
    """
    name, given = str(values["external"]), str(values["external_path"])
    if name and given:
        raise ClaimsError("claim_verification: pass external= or external_path=, not both",
                          hint="external=NAME reads experiments/data/external/NAME/claims.jsonl.")
    if given:
        path = Path(given).expanduser()
    else:
        found = default_external_path(name)
        if found is None:
            raise ClaimsError(f"claim_verification: external={name!r} needs a source checkout",
                              hint="pass external_path= the set's claims.jsonl instead.")
        if not found.is_file():
            raise ClaimsError(f"{found}: the external set {name!r} has not been built here",
                              hint="rebuild it from a copy of its source repository: "
                                   + REBUILD.format(name=name) + ".")
        path = found
    rows = read_external(path)
    split = str(values["split"])
    splits = sorted({str(r["split"]) for r in rows})
    if split != "all" and split not in splits:
        raise ClaimsError(f"claim_verification: {path.name} has no split {split!r}",
                          hint=f"its splits: {', '.join(splits)} (or all).")
    ids = {i.strip() for i in str(values["ids"]).split(",") if i.strip()}
    chosen = [r for r in rows if (split == "all" or r["split"] == split)
              and (not ids or r["id"] in ids)]
    sets = sorted({str(r["set"]) for r in rows})
    return ExternalClaims(chosen, described={"set": name or ",".join(sets), "split": split,
                                             "ids": len(ids) or None})
