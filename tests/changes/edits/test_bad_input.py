"""Bad input: missing parents, dates going back, suppressed text, duplicates, bad paths."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from freshwiki.changes.edits import (
    Discarded,
    HistorySourceError,
    LabelledEdit,
    LabelReport,
    is_text_deleted,
    label_history,
)
from freshwiki.corpus import DumpReadError, iter_revisions
from tests.changes.edits.histories import (
    ADDED,
    HISTORY,
    START,
    USES,
    Rev,
    article,
    write_history,
)

BASE = article()
EDITED = article(sections={"History": [HISTORY[0] + " " + ADDED, HISTORY[1]], "Uses": USES})
USES_2 = article(sections={"History": [HISTORY[0] + " " + ADDED, HISTORY[1]],
                           "Uses": [USES[0] + " Also in toys."]})
USES_3 = article(sections={"History": [HISTORY[0] + " " + ADDED, HISTORY[1]],
                           "Uses": [USES[0] + " Also in cars."]})


def reasons(tmp_path: Path, revisions: list[Rev]) -> tuple[dict[int, str], LabelReport]:
    path = write_history(tmp_path / "bad.xml", revisions)
    report = LabelReport()
    out: dict[int, str] = {}
    for o in label_history([path], report=report):
        if isinstance(o, LabelledEdit):
            out[o.edit.revision_id] = o.label
        else:
            out.setdefault(o.revision_id, o.reason)  # the first record of a duplicated id
    return out, report


def test_reader_maps_suppressed_text_comment_and_contributor(tmp_path: Path) -> None:
    # What the corpus reader does today with revision deletion (no crash, no fix needed):
    # text "" with size and sha1 None, comment None, contributor None.
    path = write_history(tmp_path / "s.xml", [
        Rev(BASE), Rev(None, user=None, comment_deleted=True), Rev("")])
    first, hidden, blank = list(iter_revisions(path))
    assert (hidden.text, hidden.size, hidden.sha1) == ("", None, None)
    assert hidden.comment is None and hidden.contributor is None
    assert is_text_deleted(hidden)
    assert not is_text_deleted(blank)  # a blanked page has bytes="0" and a sha1
    assert not is_text_deleted(first)


def test_suppressed_revision_is_skipped_and_not_counted(tmp_path: Path) -> None:
    # 102 is suppressed: recorded, its successor 103 cannot be diffed (parent unknown), and
    # 101's N = 2 later edits are 103 and 104.
    out, report = reasons(tmp_path, [Rev(BASE), Rev(EDITED), Rev(None, comment_deleted=True),
                                     Rev(USES_2), Rev(USES_3)])
    assert out == {100: "page_creation", 101: "accepted", 102: "text_deleted",
                   103: "parent_text_deleted", 104: "too_short"}
    assert report.discarded["text_deleted"] == 1


def test_missing_parent(tmp_path: Path) -> None:
    # 102 names parent 99, which the file does not hold; it is still the base for 103.
    out, _ = reasons(tmp_path, [Rev(BASE), Rev(EDITED), Rev(USES_2, parent=99), Rev(USES_3)])
    assert out[102] == "missing_parent"
    assert out[101] == "accepted"  # 102 and 103 still count as later edits


def test_first_revision_with_absent_parent(tmp_path: Path) -> None:
    out, _ = reasons(tmp_path, [Rev(BASE, parent=42), Rev(EDITED)])
    assert out[100] == "missing_parent"
    assert out[101] == "history_ended"


def test_out_of_order_timestamp(tmp_path: Path) -> None:
    earlier = START - dt.timedelta(days=30)
    out, report = reasons(tmp_path, [Rev(BASE), Rev(EDITED, timestamp=earlier)])
    assert out[101] == "out_of_order_timestamp"
    assert report.discarded == {"page_creation": 1, "out_of_order_timestamp": 1}


def test_duplicate_revision(tmp_path: Path) -> None:
    # 101 appears twice (as from two overlapping exports): the copy is recorded and ignored.
    out, report = reasons(tmp_path, [Rev(BASE), Rev(EDITED), Rev(EDITED, id=101, parent=100),
                                     Rev(USES_2, parent=101), Rev(USES_3)])
    assert report.discarded["duplicate_revision"] == 1
    assert out[101] == "accepted"
    assert report.revisions == 5 == report.labelled + sum(report.discarded.values())


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(HistorySourceError, match="no such file or folder"):
        list(label_history([tmp_path / "nope.xml"]))
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("x")
    with pytest.raises(HistorySourceError, match="holds no history file"):
        list(label_history([tmp_path / "empty"]))


def test_truncated_dump_names_the_file(tmp_path: Path) -> None:
    path = write_history(tmp_path / "cut.xml", [Rev(BASE), Rev(EDITED)])
    text = path.read_text()
    path.write_text(text[: text.index("</revision>") + 30])
    outcomes: list[LabelledEdit | Discarded] = []
    with pytest.raises(DumpReadError, match=r"cut\.xml"):
        outcomes.extend(label_history([path]))
