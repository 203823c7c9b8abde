"""Each labelling rule on a constructed history, with the expected outcome worked out here."""

from __future__ import annotations

from pathlib import Path

from freshwiki.changes.edits import (
    Discarded,
    LabelledEdit,
    LabelReport,
    label_history,
)
from tests.changes.edits.histories import ADDED, HISTORY, LEAD, USES, Rev, article, write_history

BASE = article()
# ADDED appended to the first History paragraph: a 'replace' of one paragraph by one
EDITED = article(sections={"History": [HISTORY[0] + " " + ADDED, HISTORY[1]], "Uses": USES})
# unrelated later edits, each in the Uses section (so the History paragraph is untouched)
USES_2 = article(sections={"History": [HISTORY[0] + " " + ADDED, HISTORY[1]],
                           "Uses": [USES[0] + " Also in toys."]})
USES_3 = article(sections={"History": [HISTORY[0] + " " + ADDED, HISTORY[1]],
                           "Uses": [USES[0] + " Also in toys and cars."]})


def run(tmp_path: Path, revisions: list[Rev], **kw: object) -> dict[int, LabelledEdit | Discarded]:
    path = write_history(tmp_path / "h.xml", revisions)
    report = LabelReport()
    outcomes = list(label_history([path], report=report, **kw))  # type: ignore[arg-type]
    # every revision yields exactly one record
    assert len(outcomes) == report.revisions == len(revisions)
    return {(o.edit.revision_id if isinstance(o, LabelledEdit) else o.revision_id): o
            for o in outcomes}


def test_accepted_after_n_later_edits(tmp_path: Path) -> None:
    # Lp = 4 paragraphs (lead, 2 history, 1 uses) -> N = 2 + 4 // 10 = 2: the edit (101)
    # is accepted once two later edits (102, 103) leave its paragraph as it was.
    out = run(tmp_path, [Rev(BASE), Rev(EDITED, comment="fire"), Rev(USES_2), Rev(USES_3)])
    edit = out[101]
    assert isinstance(edit, LabelledEdit)
    assert edit.label == "accepted"
    assert edit.later_edits_required == 2
    assert edit.decided_at == 103
    assert edit.edit.section_path == ("History",)
    assert edit.edit.paragraph_before == HISTORY[0]
    assert edit.edit.added_text == ADDED
    assert edit.edit.deleted_text == ""
    assert edit.edit.kind == "replace"
    assert edit.edit.comment == "fire"
    assert edit.edit.article_paragraphs == 4
    assert out[100].reason == "page_creation"  # type: ignore[union-attr]


def test_one_later_edit_is_not_enough(tmp_path: Path) -> None:
    out = run(tmp_path, [Rev(BASE), Rev(EDITED), Rev(USES_2)])
    assert isinstance(out[101], Discarded)
    assert out[101].reason == "history_ended"
    assert "1 of 2" in out[101].detail
    assert out[101].edit is not None  # the undecided edit is kept for inspection


def test_n_grows_with_paragraph_count(tmp_path: Path) -> None:
    # 1 lead + 11 history + 1 uses = 13 paragraphs after the edit -> N = 2 + 13 // 10 = 3
    many = [f"Widget fact number {i} is recorded in the annual report of the guild." for i in
            range(11)]
    base = article(sections={"History": many, "Uses": USES})
    edited = article(sections={"History": [*many, ADDED], "Uses": USES})
    later = [article(sections={"History": [*many, ADDED], "Uses": [USES[0] + " x" * i]})
             for i in range(1, 4)]
    out = run(tmp_path, [Rev(base), Rev(edited), *(Rev(t) for t in later)])
    edit = out[101]
    assert isinstance(edit, LabelledEdit)
    assert edit.later_edits_required == 3
    assert edit.decided_at == 104
    assert edit.edit.kind == "insert"
    assert edit.edit.paragraph_before == ""


def test_identity_revert_then_stable_is_rejected(tmp_path: Path) -> None:
    # 102 restores BASE exactly (identity revert of 101); 103 and 104 leave the History
    # section as reverted -> rejected after N = 2 edits following the revert.
    uses_a = article(sections={"History": HISTORY, "Uses": [USES[0] + " Also in toys."]})
    uses_b = article(sections={"History": HISTORY, "Uses": [USES[0] + " Also in cars."]})
    out = run(tmp_path, [Rev(BASE), Rev(EDITED, ip="203.0.113.9"),
                         Rev(BASE, comment="Undid revision 101 by 203.0.113.9"),
                         Rev(uses_a), Rev(uses_b)])
    edit = out[101]
    assert isinstance(edit, LabelledEdit)
    assert edit.label == "rejected"
    assert edit.reverting_revision_id == 102
    assert edit.decided_at == 104
    assert edit.signals == ("identity_revert", "text_undo", "revert_comment")
    assert edit.undo_fraction == 1.0
    assert edit.edit.user_type == "ip"
    assert edit.edit.user == "203.0.113.9"


def test_identity_revert_over_two_vandal_edits(tmp_path: Path) -> None:
    # 101 adds the sentence, 102 (same vandal) changes the paragraph further, 103 restores
    # 100 verbatim: 101 was changed before it could be stable, but the identity revert
    # within the window still makes it rejected; 102 is rejected the same way. The vandal
    # is one IP, the revert by Alice (another user).
    further = article(sections={"History": [HISTORY[0] + " " + ADDED + " Nobody was hurt "
                                            "in the fire, said the owner in a long letter.",
                                            HISTORY[1]], "Uses": USES})
    uses_a = article(sections={"History": HISTORY, "Uses": [USES[0] + " Also in toys."]})
    uses_b = article(sections={"History": HISTORY, "Uses": [USES[0] + " Also in cars."]})
    vandal = "203.0.113.9"
    out = run(tmp_path, [Rev(BASE), Rev(EDITED, ip=vandal), Rev(further, ip=vandal), Rev(BASE),
                         Rev(uses_a), Rev(uses_b)])
    for rev_id in (101, 102):
        edit = out[rev_id]
        assert isinstance(edit, LabelledEdit), out[rev_id]
        assert edit.label == "rejected"
        assert edit.reverting_revision_id == 103
        assert "identity_revert" in edit.signals


def test_reverted_then_readded_is_discarded(tmp_path: Path) -> None:
    # Bob adds, Alice reverts, Bob adds again (an edit war).
    out = run(tmp_path, [Rev(BASE), Rev(EDITED, user="Bob"), Rev(BASE, comment="rv"),
                         Rev(EDITED, user="Bob"), Rev(USES_2), Rev(USES_3)])
    assert isinstance(out[101], Discarded)
    assert out[101].reason == "changed_after_revert"
    assert "reverted by 102, then changed by 103" in out[101].detail
    # 103 re-adds the text: an edit of its own, kept for 104 and 105 -> accepted
    assert isinstance(out[103], LabelledEdit) and out[103].label == "accepted"


def test_partial_undo_detected_from_text(tmp_path: Path) -> None:
    # 102 removes the added sentence but also rewrites Uses: not identical to any earlier
    # revision, so only the text shows the undo (all 14 added words gone -> undone 1.0).
    undone = article(sections={"History": HISTORY, "Uses": [USES[0] + " Also in toys."]})
    later = article(sections={"History": HISTORY, "Uses": [USES[0] + " Also in cars."]})
    later2 = article(sections={"History": HISTORY, "Uses": [USES[0] + " Also in carts."]})
    out = run(tmp_path, [Rev(BASE), Rev(EDITED, user="Bob"), Rev(undone, comment="copyedit"),
                         Rev(later), Rev(later2)])
    edit = out[101]
    assert isinstance(edit, LabelledEdit)
    assert edit.label == "rejected"
    assert edit.signals == ("text_undo",)
    assert edit.reverting_revision_id == 102


def test_revert_comment_alone_is_not_a_revert(tmp_path: Path) -> None:
    # 102 says "rv" but touches only Uses: the History paragraph is as 101 left it, so
    # 101 is accepted, not rejected.
    out = run(tmp_path, [Rev(BASE), Rev(EDITED), Rev(USES_2, comment="rv"), Rev(USES_3)])
    edit = out[101]
    assert isinstance(edit, LabelledEdit)
    assert edit.label == "accepted"


def test_revert_comment_lowers_the_undo_threshold(tmp_path: Path) -> None:
    # The edit adds two sentences (ADDED: 14 words, second: 10 words). 102 removes only
    # ADDED: 14/24 = 0.58 undone, under 0.8 but over 0.5. With a revert summary that is a
    # (partial) revert; without one it is an ordinary change.
    second = "The new building had electric lights on every single floor."
    edited = article(sections={"History": [HISTORY[0] + " " + ADDED + " " + second,
                                           HISTORY[1]], "Uses": USES})
    partial = article(sections={"History": [HISTORY[0] + " " + second, HISTORY[1]],
                                "Uses": USES})
    later = [article(sections={"History": [HISTORY[0] + " " + second, HISTORY[1]],
                               "Uses": [USES[0] + s]}) for s in (" A.", " B.")]
    with_comment = run(tmp_path, [Rev(BASE), Rev(edited, user="Bob"),
                                  Rev(partial, comment="rv fire"), *(Rev(t) for t in later)])
    edit = with_comment[101]
    assert isinstance(edit, LabelledEdit) and edit.label == "rejected"
    assert edit.signals == ("text_undo", "revert_comment")
    assert edit.undo_fraction == round(14 / 24, 4)
    without = run(tmp_path, [Rev(BASE), Rev(edited, user="Bob"), Rev(partial, comment="tidy"),
                             *(Rev(t) for t in later)])
    assert isinstance(without[101], Discarded)
    assert without[101].reason == "changed_before_stable"


def test_changed_by_a_non_revert_is_discarded(tmp_path: Path) -> None:
    rewritten = article(sections={"History": [HISTORY[0] + " " + ADDED + " More.",
                                              HISTORY[1]], "Uses": USES})
    out = run(tmp_path, [Rev(BASE), Rev(EDITED), Rev(rewritten)])
    assert isinstance(out[101], Discarded)
    assert out[101].reason == "changed_before_stable"


def test_short_url_and_markup_edits_are_dropped(tmp_path: Path) -> None:
    short = article(sections={"History": [HISTORY[0] + " It was cold.", HISTORY[1]],
                              "Uses": USES})
    url = article(sections={"History": [HISTORY[0] + " It was cold. https://example.org/"
                                        "a/very/long/path/to/an/archived/page/about/widgets",
                                        HISTORY[1]], "Uses": USES})
    markup = url.replace("Leeds", "[[Leeds]]")
    out = run(tmp_path, [Rev(BASE), Rev(short), Rev(url), Rev(markup)])
    assert out[101].reason == "too_short"  # type: ignore[union-attr]
    assert out[102].reason == "url_only"  # type: ignore[union-attr]
    assert out[103].reason == "markup_only"  # type: ignore[union-attr]


def test_several_substantial_changes_are_dropped(tmp_path: Path) -> None:
    both = article(sections={"History": [HISTORY[0] + " " + ADDED, HISTORY[1]],
                             "Uses": [USES[0] + " " + ADDED]})
    out = run(tmp_path, [Rev(BASE), Rev(both)])
    assert out[101].reason == "several_changes"  # type: ignore[union-attr]
    assert "History; Uses" in out[101].detail  # type: ignore[union-attr]


def test_ambiguous_section_heading_is_dropped(tmp_path: Path) -> None:
    # Two "== History ==" headings: an edit under either cannot be located uniquely.
    base = article(sections={"History": HISTORY, "Uses": USES, "History#2": [LEAD + " Again."]})
    edited = article(sections={"History": [HISTORY[0] + " " + ADDED, HISTORY[1]],
                               "Uses": USES, "History#2": [LEAD + " Again."]})
    out = run(tmp_path, [Rev(base), Rev(edited)])
    assert out[101].reason == "ambiguous_section"  # type: ignore[union-attr]


def test_heading_made_ambiguous_later_discards(tmp_path: Path) -> None:
    later = article(sections={"History": [HISTORY[0] + " " + ADDED, HISTORY[1]],
                              "Uses": USES, "History#2": ["A second history section."]})
    out = run(tmp_path, [Rev(BASE), Rev(EDITED), Rev(later)])
    assert out[101].reason == "ambiguous_section"  # type: ignore[union-attr]
    assert "later revision 102" in out[101].detail  # type: ignore[union-attr]


def test_registered_user_and_null_revisions(tmp_path: Path) -> None:
    # 102 is a null revision (same text, e.g. a protection): not counted among the N.
    out = run(tmp_path, [Rev(BASE), Rev(EDITED, user="Bob"), Rev(EDITED, comment="Protected"),
                         Rev(USES_2)])
    assert out[102].reason == "no_change"  # type: ignore[union-attr]
    assert out[101].reason == "history_ended"  # type: ignore[union-attr]
    edit = out[101].edit  # type: ignore[union-attr]
    assert edit is not None and edit.user_type == "registered" and edit.user == "Bob"


def test_deleted_paragraph_accepted(tmp_path: Path) -> None:
    removed = article(sections={"History": [HISTORY[0]], "Uses": USES})
    later = [article(sections={"History": [HISTORY[0]], "Uses": [USES[0] + s]})
             for s in (" A.", " B.")]
    out = run(tmp_path, [Rev(BASE), Rev(removed), *(Rev(t) for t in later)])
    edit = out[101]
    assert isinstance(edit, LabelledEdit) and edit.label == "accepted"
    assert edit.edit.kind == "delete"
    assert edit.edit.deleted_text == HISTORY[1]
    assert edit.edit.paragraph_after == ""


def test_a_page_restore_that_leaves_the_edits_section_alone_does_not_reject_it(
    tmp_path: Path,
) -> None:
    # 103 removes vandalism from Uses. 104 restores the text of 100, which undoes Bob's
    # History edit but leaves Uses exactly as 103 left it: 103 stays accepted (its paragraph is
    # unchanged for the N = 2 later edits 104, 105), and is not "reverted by 104".
    from freshwiki.changes.edits import label_history
    from tests.changes.edits.histories import Rev, article, write_history

    a = "The first widget factory opened in Leeds in 1901 and employed forty workers at first."
    b = "Widgets hold the moving parts of clocks, looms and printing presses in their place."
    x = " In 1923 a fire destroyed the original factory, which was rebuilt within a year."
    junk = " asdfghjkl qwertyuiop this page is so boring lol lol lol who even reads this stuff"
    base = article(sections={"History": [a], "Uses": [b]})
    with_x = article(sections={"History": [a + x], "Uses": [b]})
    vandal = article(sections={"History": [a + x], "Uses": [b + junk]})
    revs = [Rev(base), Rev(with_x, user="Bob"), Rev(vandal, user=None, ip="192.0.2.7"),
            Rev(with_x, user="Carol", comment="rv vandalism"),
            Rev(base, user="Dave", comment="rv to last good version"),
            Rev(base + "\n\n[[Category:A]]"), Rev(base + "\n\n[[Category:B]]"),
            Rev(base + "\n\n[[Category:C]]")]
    path = write_history(tmp_path / "h.xml", revs)
    outcomes = {o.edit.revision_id: o for o in label_history([path])
                if isinstance(o, LabelledEdit)}
    rollback = [o for o in outcomes.values() if o.edit.comment == "rv vandalism"]
    assert len(rollback) == 1 and rollback[0].label == "accepted"
    # Bob's edit was already decided at 103 (History unchanged for 102 and 103), before 104.
    bob = [o for o in outcomes.values() if "fire destroyed" in o.edit.added_text]
    assert len(bob) == 1 and (bob[0].label, bob[0].decided_at) == ("accepted", 103)
    assert rollback[0].reverting_revision_id is None and rollback[0].signals == ()
