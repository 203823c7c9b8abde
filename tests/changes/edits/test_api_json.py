"""MediaWiki API revision exports, formatversion 1 and 2, labelled like XML dumps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from freshwiki.changes.edits import (
    ApiExportError,
    LabelledEdit,
    LabelReport,
    iter_api_revisions,
    label_history,
)
from tests.changes.edits.histories import ADDED, HISTORY, USES, article

BASE = article()
EDITED = article(sections={"History": [HISTORY[0] + " " + ADDED, HISTORY[1]], "Uses": USES})
LATER = [article(sections={"History": HISTORY, "Uses": [USES[0] + s]}) for s in (" A.", " B.")]
# (revid, parentid, timestamp, user, anon, comment, text): 1001 by an IP adds ADDED, 1002
# undoes it exactly, 1003 and 1004 touch only Uses -> 1001 is rejected (identity revert).
ROWS = [
    (1000, 0, "2024-03-01T10:00:00Z", "Alice", False, "start", BASE),
    (1001, 1000, "2024-03-02T10:00:00Z", "198.51.100.7", True, "fire", EDITED),
    (1002, 1001, "2024-03-03T10:00:00Z", "Bob", False, "Undid revision 1001", BASE),
    (1003, 1002, "2024-03-04T10:00:00Z", "Bob", False, "", LATER[0]),
    (1004, 1003, "2024-03-05T10:00:00Z", "Carol", False, "tidy", LATER[1]),
]


def v1(rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    revisions = []
    for revid, parent, stamp, user, anon, comment, text in rows:
        rev: dict[str, Any] = {"revid": revid, "parentid": parent, "user": user,
                               "timestamp": stamp, "comment": comment, "sha1": "ab" * 20,
                               "slots": {"main": {"contentmodel": "wikitext",
                                                  "contentformat": "text/x-wiki",
                                                  "*": text}}}
        if anon:
            rev["anon"] = ""
        revisions.append(rev)
    return {"batchcomplete": "", "query": {"pages": {"77": {
        "pageid": 77, "ns": 0, "title": "Widget", "revisions": revisions}}}}


def v2(rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    revisions = []
    for revid, parent, stamp, user, anon, comment, text in rows:
        revisions.append({"revid": revid, "parentid": parent, "minor": False, "user": user,
                          "anon": bool(anon), "timestamp": stamp,
                          "comment": comment, "sha1": "cd" * 20,
                          "slots": {"main": {"contentmodel": "wikitext",
                                             "contentformat": "text/x-wiki",
                                             "content": text}}})
        if not anon:
            del revisions[-1]["anon"]
    return {"batchcomplete": True, "query": {"pages": [
        {"pageid": 77, "ns": 0, "title": "Widget", "revisions": revisions}]}}


@pytest.mark.parametrize("shape", [v1, v2])
def test_both_formatversions_label_the_same(tmp_path: Path, shape: Any) -> None:
    path = tmp_path / "export.json"
    # the API lists newest first by default (rvdir=older): the reader must sort
    path.write_text(json.dumps(shape(list(reversed(ROWS)))), encoding="utf-8")
    revisions = list(iter_api_revisions(path))
    assert [r.id for r in revisions] == [1000, 1001, 1002, 1003, 1004]
    assert revisions[0].parent_id is None  # the API's parentid 0 means none
    assert revisions[1].contributor is not None and revisions[1].contributor.is_anonymous
    assert revisions[2].contributor is not None and revisions[2].contributor.username == "Bob"
    assert revisions[3].comment is None  # empty summary
    report = LabelReport()
    labelled = [o for o in label_history([path], report=report) if isinstance(o, LabelledEdit)]
    assert [(o.edit.revision_id, o.label) for o in labelled] == [(1001, "rejected"),
                                                                  (1002, "accepted")]
    assert labelled[0].edit.user_type == "ip"
    assert labelled[0].reverting_revision_id == 1002
    assert report.revisions == 5


def test_hidden_text_continuations_and_namespaces(tmp_path: Path) -> None:
    first = v2(ROWS[:2])
    second = v2(ROWS[2:])
    hidden = second["query"]["pages"][0]["revisions"][0]
    hidden["slots"]["main"] = {"texthidden": True}
    hidden["commenthidden"] = True
    del hidden["comment"], hidden["sha1"]
    hidden["sha1hidden"] = True
    path = tmp_path / "pages.jsonl"  # continuation responses, one a line
    path.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n", encoding="utf-8")
    revisions = {r.id: r for r in iter_api_revisions(path)}
    assert (revisions[1002].text, revisions[1002].sha1, revisions[1002].comment) == (
        "", None, None)
    out = {getattr(o, "revision_id", None): o for o in label_history([path])}
    assert out[1002].reason == "text_deleted"  # type: ignore[union-attr]
    assert list(iter_api_revisions(path, namespaces={1})) == []


def test_not_an_export(tmp_path: Path) -> None:
    path = tmp_path / "topics.json"
    path.write_text(json.dumps({"Pear": "A fruit."}))
    with pytest.raises(ApiExportError, match=r"topics.json: no query.pages"):
        list(iter_api_revisions(path))
    path.write_text(json.dumps({"error": {"code": "badvalue", "info": "Bad rvprop"}}))
    with pytest.raises(ApiExportError, match="API error: Bad rvprop"):
        list(iter_api_revisions(path))
