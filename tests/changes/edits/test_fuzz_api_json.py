"""A seeded slice of the API export reader's fuzzing, and what it found.

Inputs are formatversion 1 and 2 responses whose fields sometimes hold any JSON value
(NaN and infinities included), saved as one response, an array or JSONL, then damaged; or
bytes, or deep nesting. Every failure must be an ApiExportError naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from freshwiki.changes.edits import ApiExportError, iter_api_revisions
from tests.fuzzing import api_target, fuzz


def test_reader_raises_only_its_error_on_a_seeded_slice() -> None:
    outcome = fuzz(api_target(), 300, seed=16)
    assert outcome.inputs == 300
    assert outcome.unhandled == [], outcome.as_dict()


def export(**revision: Any) -> dict[str, Any]:
    rev = {"revid": 5, "timestamp": "2024-01-02T03:04:05Z", "user": "A",
           "slots": {"main": {"content": "Text."}}, **revision}
    return {"query": {"pages": [{"pageid": 1, "title": "P", "ns": 0, "revisions": [rev]}]}}


# Each of these raised something other than ApiExportError before fuzzing found it.
BAD: dict[str, bytes] = {
    "not UTF-8": b'{"query": {"pages": []}}\xe9',
    "deep nesting": b"[" * 100_000,
    "revisions not a list": json.dumps(
        {"query": {"pages": [{"pageid": 1, "title": "P", "revisions": 7}]}}).encode(),
    "infinite pageid": b'{"query": {"pages": [{"pageid": Infinity, "title": "P"}]}}',
    "infinite revid": json.dumps(export(revid=float("inf"))).encode(),
    "userid not a number": json.dumps(export(userid="abc")).encode(),
    "parentid an object": json.dumps(export(parentid={"a": 1})).encode(),
}


@pytest.mark.parametrize("name", list(BAD))
def test_malformed_exports_are_api_export_errors(tmp_path: Path, name: str) -> None:
    path = tmp_path / "export.json"
    path.write_bytes(BAD[name])
    with pytest.raises(ApiExportError) as caught:
        list(iter_api_revisions(path))
    assert str(path) in str(caught.value)


def test_a_lone_surrogate_in_the_text_is_read(tmp_path: Path) -> None:
    # JSON may escape one ("\ud800"); counting its bytes in strict UTF-8 raised.
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export(slots={"main": {"content": "a\ud800b"}})))
    [revision] = iter_api_revisions(path)
    assert revision.text == "a\ud800b" and revision.size == 5
