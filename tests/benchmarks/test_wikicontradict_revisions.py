"""Conflict-free passage revisions (templates 5.3, 5.4): the shipped file, its checks, its use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from freshwiki.benchmarks import load_benchmark
from freshwiki.benchmarks.wikicontradict import (
    NO_REVISIONS,
    RevisionsError,
    WikiContradict,
    builtin_revisions,
    load_revisions,
    load_wikicontradict,
    revised_samples,
)
from freshwiki.benchmarks.wikicontradict._match import answer_key, key_present
from freshwiki.config import Settings

PROVENANCE = {"provenance": {"written_by": "a test", "method": "by hand", "date": "2026-11-25"}}


def _write(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "revisions.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_shipped_revisions_cover_thirty_questions_with_provenance(
    wikicontradict: WikiContradict,
) -> None:
    revisions = builtin_revisions()
    provenance = revisions.provenance
    for key in ("written_by", "method", "date", "dataset", "licence"):
        assert str(provenance[key]).strip(), key
    revised = revised_samples(wikicontradict.samples(), revisions)
    assert len(revised) >= 30 and len(revised) == sum(len(r.keep) for r in revisions.items.values())
    original = {s.id: s for s in wikicontradict.samples()}
    for sample_id, sample in revised.items():
        revision = revisions.items[int(sample.metadata["item"])]
        assert revision.note and all(e.find != e.replace for e in revision.edits)
        before = original[sample_id]
        edited = {e.passage for e in revision.edits}
        for index, (old, new) in enumerate(zip(before.documents, sample.documents,
                                               strict=True), 1):
            # only the edited passages change, and nothing but their text
            assert (old.text != new.text) == (index in edited), (sample_id, index)
            assert (old.title, old.source) == (new.title, new.source)
        keep = revision.keep[sample_id]
        assert sample.targets == (before.targets[keep - 1], before.targets[2 - keep])
        assert sample.input == before.input and sample.metadata["revised_keep"] == keep


# Revisions that replace the dropped figure or name itself (checked by reading each edit in
# data/revisions.jsonl): after them only the kept answer can be read from the passages.
VALUE_REPLACED = [
    "wc-008-q1", "wc-010-q1", "wc-011-q1", "wc-012-q1", "wc-022-q1", "wc-023-q1", "wc-024-q1",
    "wc-025-q1", "wc-027-q1", "wc-027-q2", "wc-029-q1", "wc-033-q1", "wc-034-q1", "wc-035-q1",
    "wc-038-q1", "wc-041-q1",
]


@pytest.mark.parametrize("sample_id", VALUE_REPLACED)
def test_revised_passages_no_longer_give_the_dropped_answer(
    wikicontradict: WikiContradict, sample_id: str,
) -> None:
    sample = wikicontradict.render(
        next(s for s in wikicontradict.samples() if s.id == sample_id), "5.3").sample
    kept, dropped = sample.targets
    text = " ".join(d.text for d in sample.documents)
    assert key_present(answer_key(kept, dropped, sample.input), text)
    assert not key_present(answer_key(dropped, kept, sample.input), text)


def test_revised_templates_apply_only_to_revised_questions(
    wikicontradict: WikiContradict, wikicontradict_path: Path, settings: Settings,
) -> None:
    samples = {s.id: s for s in wikicontradict.samples()}
    revised, plain = samples["wc-034-q1"], samples["wc-001-q1"]  # item 1 has no revision
    assert all(wikicontradict.applies(revised, t) for t in wikicontradict.templates)
    assert [t for t in wikicontradict.templates if not wikicontradict.applies(plain, t)] == [
        "5.3", "5.4"]
    with pytest.raises(RevisionsError, match="sample wc-001-q1 has no revision") as err:
        wikicontradict.render(plain, "5.3")
    assert "applies()" in (err.value.hint or "")
    assert wikicontradict.describe()["revisions"]["questions"] == 40  # type: ignore[index]
    none = load_benchmark("wikicontradict", settings,
                          {"path": str(wikicontradict_path), "revisions": "none"})
    assert isinstance(none, WikiContradict) and none.revisions is NO_REVISIONS
    assert not none.applies(revised, "5.3") and none.applies(revised, "5")


def test_a_revisions_file_given_as_an_option(
    tmp_path: Path, wikicontradict_path: Path, settings: Settings,
) -> None:
    path = _write(tmp_path, PROVENANCE, {
        "item": 11, "edits": [{"passage": 2, "find": "27 August", "replace": "21 August"}],
        "keep": {"wc-011-q1": 1}, "note": "infobox date made to agree with the lead"})
    bench = load_benchmark("wikicontradict", settings,
                           {"path": str(wikicontradict_path), "revisions": str(path)})
    assert isinstance(bench, WikiContradict)
    sample = next(s for s in bench.samples() if s.id == "wc-011-q1")
    task = bench.render(sample, "5.4")
    assert "Julian Lewis Jones Born 21 August 1968" in task.messages[0].content
    assert task.sample.targets == ("August 21st 1968", "27 August 1968")
    assert [s.id for s in bench.samples() if bench.applies(s, "5.3")] == ["wc-011-q1"]


@pytest.mark.parametrize(("lines", "message"), [
    ([{"item": 1}], "first line must be"),
    ([PROVENANCE, {"item": 11, "edits": [], "keep": {"wc-011-q1": 1}, "note": "x"}],
     "'edits' must be a non-empty list"),
    ([PROVENANCE, {"item": 11, "edits": [{"passage": 3, "find": "a", "replace": "b"}],
                   "keep": {"wc-011-q1": 1}, "note": "x"}], "bad edit"),
    ([PROVENANCE, {"item": 11, "edits": [{"passage": 1, "find": "a", "replace": "b"}],
                   "keep": {"wc-012-q1": 1}, "note": "x"}], "wc-011-qN"),
    ([PROVENANCE, {"item": 11, "edits": [{"passage": 1, "find": "a", "replace": "b"}],
                   "keep": {"wc-011-q1": 1}, "note": " "}], "'note' must say"),
    ([PROVENANCE] + [{"item": 11, "edits": [{"passage": 1, "find": "a", "replace": "b"}],
                      "keep": {"wc-011-q1": 1}, "note": "x"}] * 2, "revised twice"),
])
def test_malformed_revisions_are_refused_naming_the_line(
    tmp_path: Path, lines: list[object], message: str,
) -> None:
    with pytest.raises(RevisionsError, match=message) as err:
        load_revisions(_write(tmp_path, *lines))
    assert "revisions.jsonl:" in str(err.value) and err.value.hint


def test_an_edit_that_does_not_fit_the_dataset_names_item_and_passage(
    tmp_path: Path, wikicontradict_path: Path,
) -> None:
    path = _write(tmp_path, PROVENANCE, {
        "item": 11, "edits": [{"passage": 2, "find": "28 August", "replace": "21 August"}],
        "keep": {"wc-011-q1": 1}, "note": "x"})
    with pytest.raises(RevisionsError, match=r"item 11: the text '28 August' occurs 0 times "
                                             r"in passage 2") as err:
        WikiContradict.from_file(wikicontradict_path, revisions=load_revisions(path))
    assert "published WikiContradict release" in (err.value.hint or "")
    with pytest.raises(RevisionsError, match="not found"):
        load_revisions(tmp_path / "missing.jsonl")


def test_revisions_of_items_a_cut_down_dataset_lacks_are_skipped(
    tmp_path: Path, wikicontradict_path: Path,
) -> None:
    items = json.loads(wikicontradict_path.read_text(encoding="utf-8"))[:12]
    small = tmp_path / "small.json"
    small.write_text(json.dumps(items), encoding="utf-8")
    bench = WikiContradict(small, load_wikicontradict(small, expected=None))
    # items 0-11 hold 12 questions; the shipped file revises 8 of them (not 1, 4, 6, 7)
    assert sorted(s.id for s in bench.samples() if bench.applies(s, "5.4")) == [
        "wc-000-q1", "wc-002-q1", "wc-003-q1", "wc-005-q1", "wc-008-q1", "wc-009-q1",
        "wc-010-q1", "wc-011-q1"]
