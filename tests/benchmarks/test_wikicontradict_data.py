"""The WikiContradict loader on the real release file, and its refusals on broken copies.

Expected values were read by hand from ``../shared/data/wikicontradict/wikicontradict.json``.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from freshwiki.benchmarks import Benchmark, load_benchmark
from freshwiki.benchmarks.wikicontradict import (
    DatasetError,
    WikiContradict,
    clean_passage,
    load_wikicontradict,
)
from freshwiki.config import Settings, load_settings


def test_real_file_has_253_questions_with_stable_ids(wikicontradict: WikiContradict) -> None:
    samples = list(wikicontradict.samples())
    assert len(samples) == 253
    ids = [s.id for s in samples]
    assert len(set(ids)) == 253
    assert ids[:3] == ["wc-000-q1", "wc-001-q1", "wc-002-q1"]
    # item 124 has ten questions: numeric order, not string order (q10 after q9)
    assert [i for i in ids if i.startswith("wc-124-")] == [f"wc-124-q{n}" for n in range(1, 11)]
    assert all(len(s.targets) == 2 and len(s.documents) == 2 for s in samples)
    assert isinstance(wikicontradict, Benchmark)


def test_taxonomy_counts_match_the_paper(wikicontradict: WikiContradict) -> None:
    samples = list(wikicontradict.samples())
    # The paper: 161 explicit, 92 implicit; the file leaves two questions (items 0, 9) unlabelled.
    assert Counter(s.metadata["contradiction"] for s in samples) == {
        "explicit": 161, "implicit": 90, "unknown": 2,
    }
    assert {s.id for s in samples if s.metadata["contradiction"] == "unknown"} == {
        "wc-000-q1", "wc-009-q1",
    }
    # 8 items are across articles; they hold 13 questions (7, 26, 46, 76x2, 82x2, 85x2, 98x2,
    # 125x2), counted by hand from the listing of question keys.
    across = [s for s in samples if s.metadata["scope"] == "across"]
    assert len({s.metadata["item"] for s in across}) == 8
    assert len(across) == 13
    assert Counter(s.metadata["question_type"] for s in samples)["yes_no"] == 134


def test_hand_checked_lusitania_sample(wikicontradict: WikiContradict) -> None:
    s = next(x for x in wikicontradict.samples() if x.id == "wc-044-q1")
    assert s.input == "How many survivors there were after the Sinking of the RMS Lusitania?"
    assert s.targets == ("761", "764")
    assert s.documents[0].title == s.documents[1].title == "Sinking of the RMS Lusitania"
    assert "There were 761 survivors out of the 1,266 passengers" in s.documents[0].text
    assert s.documents[1].text == "Outcome 1,195 of the 1,959 people aboard killed"
    assert s.documents[0].source == "https://en.wikipedia.org/wiki/Sinking_of_the_RMS_Lusitania"
    assert s.metadata == {
        "item": 44,
        "title": "Sinking of the RMS Lusitania",
        "url": "https://en.wikipedia.org/wiki/Sinking_of_the_RMS_Lusitania",
        "tag": "Inconsistent",
        "tag_date": "March 2023",
        "tag_reason": "Numbers differ from those elswhere in this article, and the main article "
        "for the ship.",
        "contradiction": "implicit",
        "scope": "within",
        "types": ["number"],
        "modality": ["text-infobox"],
        "question_number": 1,
        "question_type": "wh",
    }
    json.dumps(dict(s.metadata))  # JSON-serialisable


def test_hand_checked_across_article_sample(wikicontradict: WikiContradict) -> None:
    s = next(x for x in wikicontradict.samples() if x.id == "wc-076-q2")
    assert s.input == "Did María Josefa Zozaya die in 1860?"
    assert s.targets == ("Yes", "No")
    assert [d.title for d in s.documents] == ["Battle of Monterrey", "María Josefa Zozaya"]
    assert s.documents[1].source == "https://en.wikipedia.org/wiki/Mar%C3%ADa_Josefa_Zozaya"
    m = s.metadata
    assert (m["contradiction"], m["scope"], m["types"], m["question_type"]) == (
        "explicit", "across", ["date"], "yes_no",
    )
    assert (m["tag"], m["tag_date"], m["tag_reason"]) == ("contradict-inline", "April 2023", "")


def test_unlabelled_item_zero_and_marker_removal(wikicontradict: WikiContradict) -> None:
    s = next(iter(wikicontradict.samples()))
    assert s.targets == ("Apomorphine", "Aporphine")
    assert s.input.startswith("Which of the following are present in Nymphaea nouchali")
    assert s.metadata["scope"] == "within"  # same article on both sides, no type III label
    assert s.metadata["types"] == [] and s.metadata["modality"] == ["text-text"]
    # the raw passage says "aporphine[inconsistent] (not to be confused ..."
    assert "[inconsistent]" not in s.documents[1].text
    assert "psychoactive alkaloid aporphine (not to be confused" in s.documents[1].text


def test_clean_passage_removes_markers_only() -> None:
    assert clean_passage("born 1911[contradictory] in  Ohio{{Inconsistent|date=May 2020}}.") == (
        "born 1911 in Ohio."
    )
    assert clean_passage("see [1] and [...]") == "see [1] and [...]"


def test_registry_builds_it_from_the_path_option(
    settings: Settings, wikicontradict_path: Path
) -> None:
    bench = load_benchmark("wikicontradict", settings, {"path": str(wikicontradict_path)})
    assert isinstance(bench, WikiContradict)
    assert bench.describe()["samples"] == 253
    assert len(bench.describe()["sha256"]) == 64


def test_default_path_is_in_the_data_dir(wikicontradict_path: Path) -> None:
    bench = load_benchmark("wikicontradict", load_settings().settings)
    assert isinstance(bench, WikiContradict)
    assert bench.path == load_settings().settings.data_dir / "wikicontradict/wikicontradict.json"
    assert bench.path.resolve() == wikicontradict_path.resolve()


def test_default_path_missing_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FRESHWIKI_DATA_DIR", str(tmp_path / "empty"))
    with pytest.raises(DatasetError, match="not found") as err:
        load_benchmark("wikicontradict", load_settings().settings)
    assert str(tmp_path / "empty") in err.value.message
    assert "path" in (err.value.hint or "")


# -- broken copies -----------------------------------------------------------------------


def _write(tmp_path: Path, items: Any) -> Path:
    path = tmp_path / "wc.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def raw_items(shared_data: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(
        (shared_data / "wikicontradict" / "wikicontradict.json").read_text(encoding="utf-8")
    )
    return data


def test_a_truncated_file_fails_the_count(tmp_path: Path, raw_items: list[Any]) -> None:
    path = _write(tmp_path, raw_items[:10])
    with pytest.raises(DatasetError, match=r"found 10 questions, expected 253"):
        load_wikicontradict(path)
    assert len(load_wikicontradict(path, expected=None)) == 10


def test_placeholder_answer_on_a_real_question_is_refused(
    tmp_path: Path, raw_items: list[Any]
) -> None:
    items = copy.deepcopy(raw_items[:3])
    items[1]["annotationResult"]["question1_answer2"] = "add the answer based on Passage 2"
    with pytest.raises(DatasetError, match=r"wc.json: item 1: question1 has no real answer 2"):
        load_wikicontradict(_write(tmp_path, items), expected=None)


def test_orphan_real_answer_is_refused(tmp_path: Path, raw_items: list[Any]) -> None:
    items = copy.deepcopy(raw_items[:1])
    items[0]["annotationResult"]["question2_answer1"] = "Aporphine"
    with pytest.raises(DatasetError, match="item 0: question2_answer1 holds an answer"):
        load_wikicontradict(_write(tmp_path, items), expected=None)


def test_unknown_taxonomy_value_is_refused(tmp_path: Path, raw_items: list[Any]) -> None:
    items = copy.deepcopy(raw_items[1:2])
    items[0]["annotationResult"]["taxonomy"].append(["Contradict type IV", "Sarcastic"])
    with pytest.raises(DatasetError, match="item 0: unknown Contradict type IV value 'Sarcastic'"):
        load_wikicontradict(_write(tmp_path, items), expected=None)


def test_missing_field_and_bad_json_are_refused(tmp_path: Path, raw_items: list[Any]) -> None:
    items = copy.deepcopy(raw_items[:2])
    del items[1]["tagReason"]
    with pytest.raises(DatasetError, match="item 1 has no 'tagReason' field"):
        load_wikicontradict(_write(tmp_path, items), expected=None)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad\.json: not valid JSON"):
        load_wikicontradict(bad)
    with pytest.raises(DatasetError, match="expected a JSON list"):
        load_wikicontradict(_write(tmp_path, {"items": []}))
