"""Renamed headings and the author's own later edits, on hand-built histories.

The hand check of real Anarchism labels (experiments/data/real_histories/README.md) found
rejected labels wrong for two reasons: a later heading rename made the edit's section look
removed (a full undo), and the author's own later edits counted as the revert. Every history
here has Lp = 4 paragraphs after the edit (lead, two History, one Uses), so N = 2 + 4 // 10 = 2;
each expected outcome is worked out in the comments from the rules in the labeller's docstring.
"""

from __future__ import annotations

from pathlib import Path

from freshwiki.changes.edits import Discarded, LabelledEdit, LabelReport, label_history
from tests.changes.edits.histories import ADDED, HISTORY, USES, Rev, article, write_history

BASE = article()
EDITED = article(sections={"History": [HISTORY[0] + " " + ADDED, HISTORY[1]], "Uses": USES})
# ADDED is 14 words: In 1923 a fire destroyed the original factory which was rebuilt within a
# year ("a" twice).


def renamed(history: list[str], uses: list[str] = USES) -> str:
    """The page with "== History ==" renamed "== Early history ==" (paragraphs as given)."""
    return article(sections={"Early history": history, "Uses": uses})


def run(tmp_path: Path, revisions: list[Rev]) -> dict[int, LabelledEdit | Discarded]:
    path = write_history(tmp_path / "h.xml", revisions)
    report = LabelReport()
    outcomes = list(label_history([path], report=report))
    assert len(outcomes) == report.revisions == len(revisions)
    return {(o.edit.revision_id if isinstance(o, LabelledEdit) else o.revision_id): o
            for o in outcomes}


def test_heading_renamed_after_the_edit_is_not_a_revert(tmp_path: Path) -> None:
    # 101 Bob adds ADDED under History. 102 Carol renames History to "Early history", text
    # unchanged. The path ("History",) is gone from 102, so 101 is looked for in the whole
    # article: its paragraph is there and none of its words is gone (undone 0) -> unchanged,
    # 1 of 2. 103 Dave edits Uses -> 2 of 2: accepted, decided at 103. (Measured in the
    # absent section, 102 undid 14/14 words: a revert, and 103, 104 made it "rejected".)
    # 102 itself moves both History paragraphs to a new section: two substantial changes.
    done = [HISTORY[0] + " " + ADDED, HISTORY[1]]
    out = run(tmp_path, [
        Rev(BASE), Rev(EDITED, user="Bob"), Rev(renamed(done), user="Carol"),
        Rev(renamed(done, [USES[0] + " Also in toys."]), user="Dave"),
        Rev(renamed(done, [USES[0] + " Also in cars."]), user="Erin"),
    ])
    edit = out[101]
    assert isinstance(edit, LabelledEdit), edit
    assert (edit.label, edit.decided_at, edit.later_edits_required) == ("accepted", 103, 2)
    assert edit.reverting_revision_id is None
    assert out[102].reason == "several_changes"  # type: ignore[union-attr]


def test_revert_after_a_rename_is_still_found_in_the_whole_article(tmp_path: Path) -> None:
    # As above, but 103 Dave takes ADDED out under the new heading. Against the whole article
    # as 101 left it, the 14 added words are gone and nothing else changed: undone 14/14 = 1.0
    # >= 0.8 and more than before (0 at 102) -> a text undo by 103 (not an identity revert:
    # 103's text, with the new heading, equals no earlier revision). The paragraph 101
    # replaced is back (in the whole article), and 104, 105 leave it so -> rejected at 105.
    done = [HISTORY[0] + " " + ADDED, HISTORY[1]]
    out = run(tmp_path, [
        Rev(BASE), Rev(EDITED, user="Bob"), Rev(renamed(done), user="Carol"),
        Rev(renamed(HISTORY), user="Dave"),
        Rev(renamed(HISTORY, [USES[0] + " Also in toys."]), user="Erin"),
        Rev(renamed(HISTORY, [USES[0] + " Also in cars."]), user="Frank"),
    ])
    edit = out[101]
    assert isinstance(edit, LabelledEdit), edit
    assert (edit.label, edit.reverting_revision_id, edit.decided_at) == ("rejected", 103, 105)
    assert edit.signals == ("text_undo",)
    assert edit.undo_fraction == 1.0


def test_self_revert_is_not_a_rejection(tmp_path: Path) -> None:
    # 101 Bob adds ADDED; 102 Bob restores 100 exactly ("my mistake"): an identity revert,
    # but by the author, so an ordinary change of the paragraph -> 101 is changed at 102.
    # 103 Carol ("rv vandalism") and 104 Dave edit only Uses: History stays as 102 left it,
    # undone 1.0 as before, so neither undoes anything of 101 (and neither text equals an
    # earlier one) -> no revert; the history ends -> changed_before_stable. (Before, 102
    # was the revert and 103, 104 made 101 rejected.)
    # 102 is an edit of its own (Bob removes 79 characters), kept by 103 and 104 -> accepted.
    out = run(tmp_path, [
        Rev(BASE), Rev(EDITED, user="Bob"), Rev(BASE, user="Bob", comment="rv, my mistake"),
        Rev(article(sections={"History": HISTORY, "Uses": [USES[0] + " Also in toys."]}),
            user="Carol", comment="rv vandalism"),
        Rev(article(sections={"History": HISTORY, "Uses": [USES[0] + " Also in cars."]}),
            user="Dave"),
    ])
    edit = out[101]
    assert isinstance(edit, Discarded), edit
    assert edit.reason == "changed_before_stable"
    assert edit.detail == ("changed by 102 (the edit's own author); the history ends before "
                           "a revert")
    own = out[102]
    assert isinstance(own, LabelledEdit) and (own.label, own.decided_at) == ("accepted", 104)


def test_own_rewording_by_the_same_ip_is_not_a_revert_but_another_ips_is(
    tmp_path: Path,
) -> None:
    # 101 by IP 198.51.100.4 adds ADDED; 102 replaces it by a sentence sharing none of its
    # words: 14/14 of the added words gone, undone 1.0 >= 0.8, a text undo by the rules.
    # 103 and 104 (Alice) edit only Uses.
    # - 102 by the same IP: the author's own rewording -> 101 changed at 102, nothing after
    #   undoes more of it -> changed_before_stable when the history ends.
    # - 102 by another IP: a revert (text_undo); History stays as 102 left it (the words it
    #   took away stay away, the paragraph is HISTORY[0] + other sentence, and 101 restored
    #   none of its paragraphs verbatim) for 103, 104 -> rejected, decided at 104.
    other = "Local papers later printed several reports on that event."
    reworded = article(sections={"History": [HISTORY[0] + " " + other, HISTORY[1]],
                                 "Uses": USES})
    later = [article(sections={"History": [HISTORY[0] + " " + other, HISTORY[1]],
                               "Uses": [USES[0] + s]}) for s in (" Also in toys.",
                                                                 " Also in cars.")]
    author = "198.51.100.4"
    for reviser, expected in ((author, "changed_before_stable"), ("198.51.100.5", "rejected")):
        out = run(tmp_path, [Rev(BASE), Rev(EDITED, user=None, ip=author),
                             Rev(reworded, user=None, ip=reviser), *(Rev(t) for t in later)])
        edit = out[101]
        if expected == "rejected":
            assert isinstance(edit, LabelledEdit), edit
            assert (edit.label, edit.reverting_revision_id, edit.decided_at) == (
                "rejected", 102, 104)
            assert edit.signals == ("text_undo",) and edit.undo_fraction == 1.0
        else:
            assert isinstance(edit, Discarded), edit
            assert edit.reason == expected
            assert "(the edit's own author)" in edit.detail


def test_revert_by_another_user_still_rejects(tmp_path: Path) -> None:
    # 101 Bob adds ADDED; 102 Carol restores 100 exactly ("Undid revision 101 by Bob"):
    # identity revert (100 is within the window before 101), undone 14/14 = 1.0 -> text undo
    # too, with a revert summary. 103 Dave and 104 Erin edit only Uses; History stays as 100
    # -> rejected after N = 2, decided at 104.
    out = run(tmp_path, [
        Rev(BASE), Rev(EDITED, user="Bob"),
        Rev(BASE, user="Carol", comment="Undid revision 101 by Bob"),
        Rev(article(sections={"History": HISTORY, "Uses": [USES[0] + " Also in toys."]}),
            user="Dave"),
        Rev(article(sections={"History": HISTORY, "Uses": [USES[0] + " Also in cars."]}),
            user="Erin"),
    ])
    edit = out[101]
    assert isinstance(edit, LabelledEdit), edit
    assert (edit.label, edit.reverting_revision_id, edit.decided_at) == ("rejected", 102, 104)
    assert edit.signals == ("identity_revert", "text_undo", "revert_comment")
    assert edit.undo_fraction == 1.0


def test_authors_own_tidy_then_a_revert_by_another_user_rejects(tmp_path: Path) -> None:
    # 101 Bob adds ADDED. 102 Bob changes "a year" to "two years": of the 14 added words
    # "a" (one of two) and "year" are gone, undone 2/14 = 0.14, by the author -> 101 changed
    # at 102 (102 itself changes 15 characters: too short). 103 Carol restores 100 exactly:
    # 100 is within the window before 101 and undone rises 0.14 -> 1.0, so an identity revert
    # (and a text undo) by another user. 104, 105 (Uses only) leave History as 100 ->
    # rejected, decided at 105.
    tidied = article(sections={"History": [HISTORY[0] + " " + ADDED.replace(
        "a year", "two years"), HISTORY[1]], "Uses": USES})
    out = run(tmp_path, [
        Rev(BASE), Rev(EDITED, user="Bob"), Rev(tidied, user="Bob", comment="tidy"),
        Rev(BASE, user="Carol", comment="rv"),
        Rev(article(sections={"History": HISTORY, "Uses": [USES[0] + " Also in toys."]}),
            user="Dave"),
        Rev(article(sections={"History": HISTORY, "Uses": [USES[0] + " Also in cars."]}),
            user="Erin"),
    ])
    assert out[102].reason == "too_short"  # type: ignore[union-attr]
    edit = out[101]
    assert isinstance(edit, LabelledEdit), edit
    assert (edit.label, edit.reverting_revision_id, edit.decided_at) == ("rejected", 103, 105)
    assert edit.signals == ("identity_revert", "text_undo", "revert_comment")
    assert edit.undo_fraction == 1.0


def test_section_removed_by_the_revert_stays_reverted(tmp_path: Path) -> None:
    # 101 Bob adds a section "Films" with one paragraph (11 words: The Dispossessed is a
    # film made in 2006 about a strike). Lp = 5 -> N = 2. 102 Carol restores 100 exactly:
    # an identity revert (undone 11/11 = 1.0: "Films" is gone, heading and paragraph). 103
    # Dave writes "2006 a film about the strike was made" into History: measured against
    # the whole article, 6 of the 11 words would be "back" (undone 5/11, under the
    # 1.0 - 0.1 the revert must keep), but the section's text is gone, so it is looked at
    # as removed: still 1.0 -> stays reverted (1 of 2); 104 Erin edits Uses -> rejected,
    # decided at 104.
    film = "The Dispossessed is a film made in 2006 about a strike."
    history_2 = [HISTORY[0] + " In 2006 a film about the strike was made.", HISTORY[1]]
    out = run(tmp_path, [
        Rev(BASE), Rev(article(sections={"History": HISTORY, "Uses": USES, "Films": [film]}),
                       user="Bob"),
        Rev(BASE, user="Carol", comment="film does not appear to be notable"),
        Rev(article(sections={"History": history_2, "Uses": USES}), user="Dave"),
        Rev(article(sections={"History": history_2, "Uses": [USES[0] + " Also in toys."]}),
            user="Erin"),
    ])
    edit = out[101]
    assert isinstance(edit, LabelledEdit), edit
    assert (edit.label, edit.reverting_revision_id, edit.decided_at) == ("rejected", 102, 104)
    assert edit.signals == ("identity_revert", "text_undo")
    assert edit.undo_fraction == 1.0


def test_authors_edit_elsewhere_does_not_take_over_anothers_undo(tmp_path: Path) -> None:
    # 101 Bob adds ADDED (14 words) and a second sentence (10 words). 102 Carol removes
    # ADDED ("tidy"): undone 14/24 = 0.58, under 0.8 and no revert summary -> 101 changed.
    # 103 edits only Uses, by Bob (the author) or by Erin: nothing of 101 changes (still
    # 0.58), so whoever made it, 103 neither reverts 101 nor counts as its author taking it
    # back. 104 Dave edits Uses with "rv" in the summary: 0.58 >= 0.5 and more than the
    # author had undone (0) -> the revert, as the rules read it; 105, 106 keep History ->
    # rejected at 106 both times.
    second = "The new building had electric lights on every single floor."
    edited = article(sections={"History": [HISTORY[0] + " " + ADDED + " " + second,
                                           HISTORY[1]], "Uses": USES})
    partial = [HISTORY[0] + " " + second, HISTORY[1]]
    uses = [article(sections={"History": partial, "Uses": [USES[0] + s]})
            for s in (" A.", " B.", " C.", " D.")]
    for third in ("Bob", "Erin"):
        out = run(tmp_path, [
            Rev(BASE), Rev(edited, user="Bob"),
            Rev(article(sections={"History": partial, "Uses": USES}), user="Carol",
                comment="tidy"),
            Rev(uses[0], user=third), Rev(uses[1], user="Dave", comment="rv"),
            Rev(uses[2], user="Frank"), Rev(uses[3], user="Gina"),
        ])
        edit = out[101]
        assert isinstance(edit, LabelledEdit), (third, edit)
        assert (edit.label, edit.reverting_revision_id, edit.decided_at) == (
            "rejected", 104, 106)
        assert edit.undo_fraction == round(14 / 24, 4)
