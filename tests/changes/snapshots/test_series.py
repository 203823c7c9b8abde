"""Snapshot series sliced from history dumps, consecutive revisions, and two-dump diffs."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from freshwiki.changes.snapshots import (
    Aligner,
    Alignment,
    Skip,
    SnapshotError,
    diff_dumps,
    diff_revisions,
    diff_series,
    iter_series,
    monthly_cuts,
    parse_cut,
)
from tests.changes.snapshots.helpers import FakeEncoder

UTC = dt.UTC
HEAD = ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" '
        'xml:lang="en"><siteinfo><sitename>Wikipedia</sitename><namespaces>'
        '<namespace key="0" /></namespaces></siteinfo>')


def revision(rid: int, when: str, text: str) -> str:
    return (f"<revision><id>{rid}</id><timestamp>{when}</timestamp>"
            f"<contributor><username>U</username><id>1</id></contributor>"
            f'<text xml:space="preserve">{text}</text></revision>')


def page(pid: int, title: str, *revisions: str) -> str:
    return f"<page><title>{title}</title><ns>0</ns><id>{pid}</id>{''.join(revisions)}</page>"


def dump(path: Path, *pages: str) -> Path:
    path.write_text(HEAD + "".join(pages) + "</mediawiki>", encoding="utf-8")
    return path


@pytest.fixture
def history(tmp_path: Path) -> Path:
    return dump(
        tmp_path / "history.xml",
        page(10, "Alpha",
             revision(101, "2020-01-05T10:00:00Z", "Alpha is a town. It has 100 people."),
             revision(102, "2020-01-20T10:00:00Z", "Alpha is a town. It has 120 people."),
             revision(103, "2020-03-10T10:00:00Z", "Alpha is a town in Spain. It has 120 people."),
             revision(104, "2020-03-31T23:00:00Z", "#REDIRECT [[Beta]]")),
        # Listed out of time order: the series must go by timestamp, not by position.
        page(11, "Gamma",
             revision(201, "2020-02-15T08:00:00Z", "Gamma is a river. It is long."),
             revision(202, "2020-01-10T08:00:00Z", "Gamma is a stream.")),
        page(12, "Delta",
             revision(301, "2020-01-02T00:00:00Z", "Delta is a lake."),
             revision(302, "2020-02-02T00:00:00Z", "")),
    )


def test_parse_cut_reads_a_date_as_the_end_of_that_day() -> None:
    assert parse_cut("2020-03-31") == dt.datetime(2020, 3, 31, 23, 59, 59, 999999, tzinfo=UTC)
    assert parse_cut("2020-03-31T12:00:00Z") == dt.datetime(2020, 3, 31, 12, tzinfo=UTC)
    assert parse_cut(dt.datetime(2020, 1, 1)) == dt.datetime(2020, 1, 1, tzinfo=UTC)
    with pytest.raises(SnapshotError, match="'March' is not a date"):
        parse_cut("March")


def test_monthly_cuts_are_the_bounds_and_month_ends_across_a_year_boundary() -> None:
    cuts = monthly_cuts(parse_cut("2019-11-15"), parse_cut("2020-02-03"))
    assert [c.date().isoformat() for c in cuts] == [
        "2019-11-15", "2019-11-30", "2019-12-31", "2020-01-31", "2020-02-03"]
    assert cuts[1] == dt.datetime(2019, 11, 30, 23, 59, 59, 999999, tzinfo=UTC)
    # A bound that is itself a month end is not repeated.
    ends = monthly_cuts(parse_cut("2020-01-31"), parse_cut("2020-02-29"))
    assert [c.date().isoformat() for c in ends] == ["2020-01-31", "2020-02-29"]


def test_series_keeps_the_revision_current_at_each_cut(history: Path) -> None:
    cuts = [parse_cut(d) for d in ("2020-01-31", "2020-02-29", "2020-03-15", "2020-03-31")]
    series = {s.page.title: [r.id if r else None for r in s.revisions]
              for s in iter_series(history, cuts)}
    # By hand: Alpha's 102 (Jan 20) stands until 103 (Mar 10); 104 is saved at 23:00 on
    # Mar 31, inside the end-of-day cut. Gamma did not exist before 202 (Jan 10, listed
    # second) and 201 (Feb 15) replaced it. Delta was blanked on Feb 2.
    assert series == {
        "Alpha": [102, 102, 103, 104],
        "Gamma": [202, 201, 201, 201],
        "Delta": [301, 302, 302, 302],
    }


def test_series_before_a_page_existed_is_none_and_titles_filter(history: Path) -> None:
    cuts = [parse_cut("2020-01-06"), parse_cut("2020-02-20")]
    got = [(s.page.title, [r.id if r else None for r in s.revisions])
           for s in iter_series(history, cuts, titles={"Gamma"})]
    assert got == [("Gamma", [None, 201])]


def test_series_snapshots_clean_each_revision_once_and_carry_the_cut(history: Path) -> None:
    cuts = [parse_cut("2020-01-31"), parse_cut("2020-02-29")]
    alpha = next(s for s in iter_series(history, cuts) if s.page.title == "Alpha")
    first, second = alpha.snapshots()
    assert first is not None and second is not None
    assert first.sentences is second.sentences  # the same revision, cleaned once
    assert (first.cut, second.cut) == (cuts[0], cuts[1])
    assert first.texts == ["Alpha is a town.", "It has 120 people."]


def test_diff_series_aligns_and_records_skips(history: Path) -> None:
    enc = FakeEncoder([("Alpha is a town.", "Alpha is a town in Spain.", 0.93)])
    cuts = [parse_cut(d) for d in ("2020-01-31", "2020-03-15", "2020-03-31")]
    results = list(diff_series(history, Aligner(enc), cuts))
    kinds = [(type(r).__name__, r.new.title if isinstance(r, Alignment) else r.title)
             for r in results]
    assert kinds == [("Alignment", "Alpha"), ("Skip", "Alpha"), ("Alignment", "Gamma"),
                     ("Alignment", "Gamma"), ("Skip", "Delta"), ("Skip", "Delta")]
    first = results[0]
    assert isinstance(first, Alignment)
    assert (first.old.revision_id, first.new.revision_id) == (102, 103)
    assert first.to_growover() == {"S": {0: 0, 1: 1}, "C": [], "N": [], "D": []}
    assert first.new_labels[0].step == "rule"  # rewording at 0.93
    redirect = results[1]
    assert isinstance(redirect, Skip)
    assert redirect.reason == "the new version at 2020-03-31 (revision 104) is a redirect to 'Beta'"
    blank = results[4]
    assert isinstance(blank, Skip) and "(revision 302) is empty" in blank.reason
    gamma = results[2]
    assert isinstance(gamma, Alignment)
    # 202 "Gamma is a stream." -> 201 "Gamma is a river. It is long." (unrelated vectors).
    assert gamma.to_growover() == {"S": {}, "C": [], "N": [0, 1], "D": [0]}


def test_diff_series_skips_a_cut_before_the_page_existed(history: Path) -> None:
    cuts = [parse_cut("2020-01-06"), parse_cut("2020-02-20")]
    (skip,) = diff_series(history, Aligner(FakeEncoder()), cuts, titles={"Gamma"})
    assert isinstance(skip, Skip)
    assert skip.reason == "the page did not exist yet at 2020-01-06 23:59"
    assert skip.new_revision == 201


def test_diff_series_needs_a_cut(history: Path) -> None:
    with pytest.raises(SnapshotError, match="no cut dates"):
        list(diff_series(history, Aligner(None), []))


def test_diff_revisions_walks_consecutive_revisions(history: Path) -> None:
    enc = FakeEncoder([("It has 100 people.", "It has 120 people.", 0.97)])
    results = list(diff_revisions(history, Aligner(enc), titles={"Alpha"},
                                  end=parse_cut("2020-01-31")))
    (only,) = results
    assert isinstance(only, Alignment)
    assert (only.old.revision_id, only.new.revision_id) == (101, 102)
    assert only.to_growover() == {"S": {0: 0}, "C": [[1, 1]], "N": [], "D": []}
    assert only.new_labels[1].reason.startswith("a number was replaced")


# -- real histories ------------------------------------------------------------------------------

def test_real_pyrus_history_slices_by_hand(shared_data: Path) -> None:
    path = shared_data / "wikipedia/histories/article-pyrus.xml"
    cuts = [parse_cut(c) for c in ("2007-02-01", "2007-02-02T02:40:00", "2007-12-31",
                                   "2008-02-08", "2008-09-13", "2010-01-01")]
    (series,) = iter_series(path, cuts)
    # From the XML: 104997415 at 2007-02-02 02:39:52, 104997738 at 02:41:24, the
    # disambiguation 189729426 at 2008-02-07 14:06, 190346463 (rv) 2008-02-10, 238138507 at
    # 2008-09-13 12:57 and 238392911 at 2008-09-14.
    assert [r.id if r else None for r in series.revisions] == [
        None, 104997415, 104997738, 189729426, 238138507, 238392911]
    disambiguation = series.snapshots()[3]
    assert disambiguation is not None
    assert disambiguation.texts == [
        "Pyrus may refer to:",
        "Pear, trees of the genus Pyrus and the fruit of that tree, edible in some species",
        "Main//Pyrus DMS, a Document Management System",
    ]
    assert [s.paragraph for s in disambiguation.sentences] == [0, 1, 1]
    assert [s.position for s in disambiguation.sentences] == [0, 0, 1]


def test_real_pyrus_series_records_redirects_as_skips(shared_data: Path) -> None:
    path = shared_data / "wikipedia/histories/article-pyrus.xml"
    cuts = [parse_cut("2008-02-08"), parse_cut("2008-02-29")]
    (skip,) = diff_series(path, Aligner(FakeEncoder(fail=True)), cuts)
    assert isinstance(skip, Skip)
    assert skip.reason == ("the new version at 2008-02-29 (revision 190346463) is a redirect "
                           "to 'Pear'")
    assert (skip.old_revision, skip.new_revision) == (189729426, 190346463)


def test_real_pear_first_edit_adds_one_sentence(shared_data: Path) -> None:
    path = shared_data / "wikipedia/histories/article-pear.xml"
    (result,) = diff_revisions(path, Aligner(FakeEncoder(fail=True)),
                               end=parse_cut("2002-08-31T02:20:00"))
    # By hand: revision 185241 only appends the link line [[propagating apples and other
    # fruit trees]] to the 13 sentences of 185185.
    assert isinstance(result, Alignment)
    assert (result.old.revision_id, result.new.revision_id) == (185185, 185241)
    assert result.to_growover() == {
        "S": {i: i for i in range(13)}, "C": [], "N": [13], "D": []}
    assert result.new.texts[13] == "propagating apples and other fruit trees"


def test_real_dumps_of_two_years_join_by_page_id(shared_data: Path) -> None:
    old = shared_data / "wikipedia/histories/article-pear.xml"
    new = shared_data / "wikipedia/histories/article-pear-0.10.xml"
    (result,) = diff_dumps(old, new, Aligner(FakeEncoder()))
    assert isinstance(result, Alignment)
    assert (result.old.revision_id, result.new.revision_id) == (188924, 638548877)
    # Only one sentence survived 2002 -> 2014 word for word (checked by reading both).
    exact = {lab.index: lab.counterparts for lab in result.old_labels if lab.step == "exact"}
    assert exact == {6: (42,)}
    assert result.new.texts[42] == result.old.texts[6] == (
        "Other species are used as rootstocks for European and Asian pears and as "
        "ornamental trees.")


def test_dump_pages_on_one_side_only_are_skips(tmp_path: Path) -> None:
    old = dump(tmp_path / "old.xml",
               page(10, "Alpha", revision(1, "2020-01-01T00:00:00Z", "Alpha is a town.")),
               page(12, "Delta", revision(3, "2020-01-01T00:00:00Z", "Delta is a lake.")))
    new = dump(tmp_path / "new.xml",
               page(10, "Alpha", revision(5, "2021-01-01T00:00:00Z", "Alpha is a town.")),
               page(11, "Gamma", revision(6, "2021-01-01T00:00:00Z", "Gamma is a river.")))
    results = list(diff_dumps(old, new, Aligner(FakeEncoder(fail=True))))
    assert isinstance(results[0], Alignment) and results[0].old_to_new == {0: 0}
    created, deleted = results[1], results[2]
    assert isinstance(created, Skip) and created.title == "Gamma"
    assert created.reason.startswith("created: the page is not in the old dump")
    assert isinstance(deleted, Skip) and deleted.title == "Delta"
    assert deleted.reason.startswith("deleted: the page is not in the new dump")


def test_dump_out_of_page_order_is_an_error(tmp_path: Path) -> None:
    unordered = dump(tmp_path / "unordered.xml",
                     page(12, "Delta", revision(3, "2020-01-01T00:00:00Z", "Delta is a lake.")),
                     page(10, "Alpha", revision(1, "2020-01-01T00:00:00Z", "Alpha is a town.")))
    with pytest.raises(SnapshotError, match=r"unordered\.xml lists page 10 after page 12"):
        list(diff_dumps(unordered, unordered, Aligner(FakeEncoder(fail=True))))
