"""experiments/snapshot_growover_labels.py on hand-written rows in GrowOVER's release format.

The rows are made up (one article, three stages, the shapes of the released files), so the
tests pin how the script reads the format: which side an index belongs to, which sentences
are tagged C / N / D / NS, that a malformed file is refused with the file and the field, and
that the aligner's labels line up with the units they belong to.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.experiments.scripts import load_script

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


S = load_script("snapshot_growover_labels")

OLD = ["The bridge opened in 1901.", "It is 300 m long.", "It carries a railway.",
       "It was painted red in 1950."]
NEW = ["The bridge opened in 1901.", "It is 350 m long.", "It carries a railway.",
       "A footpath was added in 2020.", "It was painted red in 1950."]


def release() -> dict[str, Any]:
    """One article: old 1 -> new 1 changed (a number), new 3 inserted, the rest identical."""
    page = "7"
    not_same_old = {page: {
        "S": {"indices": [0, 2, 3], "match_indices": [0, 2, 4]},
        "NS": {"indices": [[1]], "sentences": [[OLD[1]]]},
        "D": {"indices": [], "sentences": []}}}
    not_same_new = {page: {
        "S": {"indices": [0, 2, 4], "match_indices": [0, 2, 3]},
        "NS": {"indices": [[1]], "sentences": [[NEW[1]]]},
        "N": {"indices": [[3]], "sentences": [[NEW[3]]]}}}
    nli_old = {page: {"S": {"0": "0", "2": "2", "3": "4"}, "D": {"indices": [], "sentences": []},
                      "C": {"indices": [[1, 1]], "sentences": [[OLD[1], NEW[1]]]}}}
    nli_new = {page: {"NS": not_same_new[page]["NS"],
                      "N": {"indices": [3], "sentences": [[NEW[3]]]}}}
    return {"not_same_old": not_same_old, "not_same_new": not_same_new, "nli_old": nli_old,
            "nli_new": nli_new, "filtered_old": nli_old}


def test_units_tagged_from_the_release() -> None:
    units, counts = S.units_from_release(release())
    by_id = {u.id: u for u in units}
    assert counts == {"articles": 1, "S_old_without_text": 3, "S_new_without_text": 3,
                      "C_before_gpt4_filter": 1}
    assert by_id["growover:0809:7:old1"].tag == "C"
    assert by_id["growover:0809:7:new1"].label == "changed"
    inserted = by_id["growover:0809:7:new3"]
    assert (inserted.tag, inserted.one_sided, inserted.text) == ("N", True, NEW[3])
    assert by_id["growover:0809:7:old1"].run == by_id["growover:0809:7:new1"].run == 0
    assert inserted.run == 1


def test_unlabelled_not_same_sentence_compares_as_unchanged() -> None:
    files = release()
    files["filtered_old"] = {"7": {**files["nli_old"]["7"],
                                   "C": {"indices": [], "sentences": []}}}
    units, _ = S.units_from_release(files)
    old1 = next(u for u in units if u.id == "growover:0809:7:old1")
    assert (old1.tag, old1.label) == ("NS", "unchanged")


def test_missing_field_names_file_and_field() -> None:
    files = release()
    del files["not_same_new"]["7"]["NS"]
    with pytest.raises(S.GrowoverFormatError, match=r"label_not_same/0809/09.*'NS'"):
        S.units_from_release(files)


def test_malformed_units_row_names_line_and_field(tmp_path: Path) -> None:
    units, _ = S.units_from_release(release())
    path = tmp_path / "units.jsonl"
    rows = [u.to_json() for u in units]
    del rows[1]["tag"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(S.GrowoverFormatError, match=r"units.jsonl:2: .*'tag'"):
        S.read_units(path, manifest=None)


def test_units_file_round_trips_and_hash_is_checked(tmp_path: Path) -> None:
    units, _ = S.units_from_release(release())
    path, manifest = tmp_path / "units.jsonl", tmp_path / "manifest.json"
    path.write_bytes(S.units_bytes(units))
    manifest.write_text(json.dumps({"units_sha256": S.sha256(S.units_bytes(units))}))
    assert S.read_units(path, manifest) == units
    path.write_bytes(S.units_bytes(units[:-1]))
    with pytest.raises(S.GrowoverFormatError, match="sha256"):
        S.read_units(path, manifest)


class BagOfWords:
    """A tiny deterministic encoder: unit vectors of hashed word counts."""

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for r, text in enumerate(texts):
            for word in text.lower().split():
                out[r, sum(map(ord, word)) % 64] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


def test_aligner_labels_land_on_their_units() -> None:
    units, _ = S.units_from_release(release())
    ours = S.align_units(units, BagOfWords())
    assert set(ours) == {u.id for u in units}
    assert ours["growover:0809:7:new1"]["label"] == "changed"  # 300 -> 350, a replaced number
    assert ours["growover:0809:7:new3"]["label"] == "new"
    old, new, where = S.article_snapshots(units)
    assert old.texts[where["growover:0809:7:old1"][1]] == OLD[1]
    assert new.texts[where["growover:0809:7:new3"][1]] == NEW[3]
    assert old.texts[0] == new.texts[0]  # the anchors standing for unreleased text match


def test_who_is_right_follows_the_reading() -> None:
    units, _ = S.units_from_release(release())
    ours = {u.id: {"label": u.label, "step": "exact", "ambiguous": False} for u in units}
    ours["growover:0809:7:new1"]["label"] = "unchanged"
    reading = {u.id: {"label": u.label, "extends_old": False, "reason": "r"} for u in units}
    reading["growover:0809:7:new1"]["label"] = "unchanged"
    result = S.agreement(units, ours, reading)
    assert result["disagreements"]["who_is_right"] == {"ours": 1}
    assert result["per_label"]["changed"]["hits"] == 1  # the old side still agrees
    assert result["one_sided"]["n"] == 1
