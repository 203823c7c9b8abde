"""Load ``wikicontradict.json`` into typed samples, validating it on the way in.

The release file is annotation-tool output, not a clean table: unused question slots hold
placeholder answers, the taxonomy is a list of ``[type, value]`` pairs (sometimes repeated,
sometimes missing), and passages may still carry Wikipedia's inline maintenance markers. The
loader turns it into one :class:`~freshwiki.benchmarks.Sample` per real question and refuses a
file that does not look like the benchmark, because a silently short or mislabelled dataset
would still produce plausible-looking scores.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from freshwiki.errors import FreshwikiError
from freshwiki.seams import Document, Sample

EXPECTED_QUESTIONS = 253
"""Questions in the published benchmark (Hou et al., 2024)."""

_QUESTION_KEY = re.compile(r"question(\d+)")
_ANSWER_KEY = re.compile(r"question(\d+)_answer([12])")
_PLACEHOLDER = re.compile(r"^\s*add the answer based on passage [12]\s*$", re.IGNORECASE)

# Inline maintenance markers rendered from templates such as {{Inconsistent}}: they would tell
# the model where the contradiction is, so they are removed from the passages it is shown.
_MARKER = re.compile(
    r"\s*(?:\[(?:inconsistent|self-contradictory|contradictory(?: inline)?|"
    r"contradict(?:s|ion)?(?:[ -]inline)?|contradiction[ -]inline)\]|\{\{[^{}]*\}\})",
    re.IGNORECASE,
)

_TYPE_I: dict[str, str] = {
    "(PhraseLevel) Entity - Date/time": "date",
    "(PhraseLevel) Entity - Number": "number",
    "(PhraseLevel) Entity - Person": "person",
    "(PhraseLevel) Entity - Location/GPE (Non-GPE locations, mountain ranges, bodies of water, "
    "and Countries, cities, states)": "location",
    "(PhraseLevel) Entity - Organization (Companies, agencies, institutions, etc.)": "organization",
    "(PhraseLevel) Entity - Event (Named hurricanes, battles, wars, sports events, etc.)": "event",
    "(PhraseLevel) Entity - FAC (Buildings, airports, highways, bridges, etc.)": "facility",
    "(PhraseLevel) Entity - Language (Any named language)": "language",
    "(PhraseLevel) Entity - Work-of-Art (Titles of books, songs, etc.)": "work_of_art",
    "(PhraseLevel) Entity - Other": "entity_other",
    "(PhraseLevel) Event/Relation (e.g., verb)": "relation",
    "(PhraseLevel) NP-related (non-entity)": "noun_phrase",
    "(DiscourseLevel) Event/Relation-related": "discourse_relation",
    "(DiscourseLevel) NP-related": "discourse_noun_phrase",
}
_TYPE_II = {
    "Text - Text": "text-text",
    "Text - Infobox/table": "text-infobox",
    "Infobox/table - Infobox/table": "infobox-infobox",
}
_TYPE_III = {"Within the same article": "within", "Across different articles": "across"}
_TYPE_IV = {"Explicit": "explicit", "Implicit (reasoning required)": "implicit"}
_KNOWN = {
    "Contradict type I": _TYPE_I,
    "Contradict type II": _TYPE_II,
    "Contradict type III": _TYPE_III,
    "Contradict type IV": _TYPE_IV,
}


_FIX = "use the published release JSON file, or fix this item."


class DatasetError(FreshwikiError):
    """The WikiContradict file is missing or not in the expected shape."""


def load_wikicontradict(
    path: Path, *, expected: int | None = EXPECTED_QUESTIONS
) -> list[Sample]:
    """Every question of the dataset at ``path`` as a :class:`Sample`, in file order.

    Args:
        path: The release JSON (a list of annotated passage pairs).
        expected: The number of questions the file must hold; ``None`` skips the check (for
            a deliberately cut-down file).

    Raises:
        DatasetError: the file is missing, not JSON, an item lacks a field, an answer is a
            placeholder, a taxonomy value is unknown, or the question count is wrong; the
            message names the file and the item.
    """
    if not path.is_file():
        raise DatasetError(
            f"WikiContradict dataset not found at {path}",
            hint="point FRESHWIKI_DATA_DIR at the shared data folder (it holds "
            "wikicontradict/wikicontradict.json), or pass the file as the benchmark option "
            "'path' (`--benchmark-option path=FILE`).",
        )
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetError(
            f"{path}: not valid JSON ({exc})", hint="use the benchmark's release JSON file."
        ) from exc
    if not isinstance(raw, list):
        raise DatasetError(
            f"{path}: expected a JSON list of items, found {type(raw).__name__}",
            hint="use the benchmark's release JSON file (a list of passage pairs).",
        )
    samples: list[Sample] = []
    for index, item in enumerate(raw):
        samples.extend(_item_samples(path, index, item))
    if expected is not None and len(samples) != expected:
        raise DatasetError(
            f"{path}: found {len(samples)} questions, expected {expected}",
            hint="the file is not the published WikiContradict release, or it was edited.",
        )
    return samples


def _item_samples(path: Path, index: int, item: Any) -> list[Sample]:
    where = f"{path}: item {index}"
    if not isinstance(item, Mapping):
        raise DatasetError(f"{where} is not an object", hint="use the release JSON file.")
    for key in ("title", "url", "tag", "tagDate", "tagReason", "annotationResult"):
        if key not in item:
            raise DatasetError(f"{where} has no {key!r} field", hint="use the release JSON file.")
    ann = item["annotationResult"]
    if not isinstance(ann, Mapping):
        raise DatasetError(f"{where}: 'annotationResult' is not an object", hint=_FIX)
    for key in ("paragraphA_article", "paragraphA_information", "paragraphB_article",
                "paragraphB_information", "taxonomy"):
        if not isinstance(ann.get(key), str if key != "taxonomy" else list):
            raise DatasetError(
                f"{where}: annotationResult has no usable {key!r}",
                hint="use the release JSON file.",
            )
    metadata = _metadata(where, index, item, ann)
    documents = (
        _document(ann["paragraphA_article"], ann["paragraphA_information"], item),
        _document(ann["paragraphB_article"], ann["paragraphB_information"], item),
    )
    numbers = sorted(int(m.group(1)) for k in ann if (m := _QUESTION_KEY.fullmatch(k)))
    _check_orphan_answers(where, ann, set(numbers))
    samples = []
    for n in numbers:
        question = ann[f"question{n}"]
        answers = (ann.get(f"question{n}_answer1"), ann.get(f"question{n}_answer2"))
        if not isinstance(question, str) or not question.strip():
            raise DatasetError(f"{where}: question{n} is empty", hint="fix or remove it.")
        for side, answer in enumerate(answers, 1):
            if not isinstance(answer, str) or not answer.strip() or _PLACEHOLDER.match(answer):
                raise DatasetError(
                    f"{where}: question{n} has no real answer {side} ({answer!r})",
                    hint="every question needs one answer per passage.",
                )
        a1, a2 = (str(a).strip() for a in answers)
        samples.append(
            Sample(
                id=f"wc-{index:03d}-q{n}",
                input=" ".join(question.split()),
                targets=(a1, a2),
                documents=documents,
                metadata={
                    **metadata,
                    "question_number": n,
                    "question_type": "yes_no" if _is_yes_no(a1, a2) else "wh",
                },
            )
        )
    return samples


def _check_orphan_answers(where: str, ann: Mapping[str, Any], questions: set[int]) -> None:
    """Answers without a question must be the annotation tool's placeholders, nothing real."""
    for key, value in ann.items():
        m = _ANSWER_KEY.fullmatch(key)
        if m and int(m.group(1)) not in questions and not _PLACEHOLDER.match(str(value)):
            raise DatasetError(
                f"{where}: {key} holds an answer ({value!r}) but question{m.group(1)} is missing",
                hint="the file is not the published release, or it was edited.",
            )


def _metadata(
    where: str, index: int, item: Mapping[str, Any], ann: Mapping[str, Any]
) -> dict[str, Any]:
    found: dict[str, list[str]] = {name: [] for name in _KNOWN}
    for pair in ann["taxonomy"]:
        if not isinstance(pair, Sequence) or not pair or pair[0] not in _KNOWN:
            raise DatasetError(f"{where}: unreadable taxonomy entry {pair!r}", hint=_FIX)
        if len(pair) < 2:  # an empty slot the annotation tool left behind
            continue
        table = _KNOWN[pair[0]]
        value = str(pair[1]).strip()
        if value not in table:
            raise DatasetError(
                f"{where}: unknown {pair[0]} value {value!r}",
                hint="the loader knows the taxonomy of the 2024 release; extend _data.py.",
            )
        if table[value] not in found[pair[0]]:
            found[pair[0]].append(table[value])
    reasoning = found["Contradict type IV"]
    scope = found["Contradict type III"]
    same_article = ann["paragraphA_article"].strip() == ann["paragraphB_article"].strip()
    if len(reasoning) > 1 or len(scope) > 1:
        raise DatasetError(f"{where}: conflicting type III/IV labels {found}", hint=_FIX)
    return {
        "item": index,
        "title": str(item["title"]).strip(),
        "url": str(item["url"]).strip(),
        "tag": str(item["tag"]).split("|")[0].strip(),
        "tag_date": str(item["tagDate"]).strip(),
        "tag_reason": str(item["tagReason"]).strip(),
        "contradiction": reasoning[0] if reasoning else "unknown",
        "scope": scope[0] if scope else ("within" if same_article else "across"),
        "types": found["Contradict type I"],
        "modality": found["Contradict type II"],
    }


def _document(article: str, text: str, item: Mapping[str, Any]) -> Document:
    title = article.strip()
    if title == str(item["title"]).strip():
        source = str(item["url"]).strip()
    else:
        source = "https://en.wikipedia.org/wiki/" + quote(title.replace(" ", "_"))
    return Document(title=title, text=clean_passage(text), source=source)


def clean_passage(text: str) -> str:
    """``text`` without inline maintenance markers and with whitespace collapsed.

    Markers such as ``[inconsistent]`` point at the contradiction; showing them to a model
    would turn the benchmark into spotting a tag.
    """
    return " ".join(_MARKER.sub("", text).split())


def _is_yes_no(a1: str, a2: str) -> bool:
    words = {re.sub(r"[^a-z]", "", a.lower()) for a in (a1, a2)}
    return words == {"yes", "no"}
