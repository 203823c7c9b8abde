"""Labels on the real histories in ../shared/data/wikipedia/histories, checked by hand.

The hand check, revision by revision (clean text is what clean_wikitext makes of it):

Pyrus (article-pyrus.xml, page 9261472, schema 0.3, no <parentid>):
  104997415 redirect to "Pyrus (brand)": first revision -> page_creation.
  104997738 redirect to "Pear": a redirect cleans to no paragraph either way -> markup_only.
  189729426 Jkokemueller, "Added disambiguation": replaces the redirect by "Pyrus may refer
      to:" and a two-item list (lead, insert, 148 characters) -> an edit. Lp = 2, N = 2.
  190346463 IceCreamAntisocial, "rv": text is exactly "#REDIRECT [[Pear]]", i.e. 104997738's
      -> identity revert of 189729426, all its words gone (undo 1.0), summary says "rv".
  238138507 adds [[Category:Maloideae]] to the redirect: the clean lead stays empty (1st
      edit after the revert); 238392911 removes it again (2nd) -> 189729426 is REJECTED,
      decided at 238392911. The revert 190346463 is itself an edit (deleting the two
      paragraphs) that stays for those two edits -> ACCEPTED.
User:Ryulong (simplewiki sample, namespace 2):
  558764 adds "Ryulong is a fascist bastard who deletes user pages of random users" (67
      chars); 558766 restores the {{babel|en}}-only text (identity); 857580 ({{babel|...}}
      vandalism: clean text unchanged) and 857621 are the two edits after -> REJECTED.
  1552830 adds a 100-character shout; 1552889 restores the babel text (identity); then
      1643771 (1st edit), 1714215 (text suppressed: not counted), 1714216 (2nd) ->
      REJECTED. 558766 and 1552889, the reverts, are kept -> ACCEPTED.
Talk:Cristiano Ronaldo (namespace 1):
  6187125 adds a 199-character comment in a new "Recent transfer" section; 6187126 (the
      same user) changes "in the top" to "on the top" -> changed_before_stable.
"""

from __future__ import annotations

from pathlib import Path

from freshwiki.changes.edits import Discarded, LabelledEdit, LabelReport, label_history


def by_revision(outcomes: list[LabelledEdit | Discarded]) -> dict[int, LabelledEdit | Discarded]:
    return {(o.edit.revision_id if isinstance(o, LabelledEdit) else o.revision_id): o
            for o in outcomes}


def test_pyrus_disambiguation_reverted_by_rv(shared_data: Path) -> None:
    report = LabelReport()
    out = by_revision(list(label_history(
        [shared_data / "wikipedia/histories/article-pyrus.xml"], report=report)))
    assert report.revisions == 6 == len(out)
    rejected = out[189729426]
    assert isinstance(rejected, LabelledEdit)
    assert rejected.label == "rejected"
    assert rejected.reverting_revision_id == 190346463
    assert rejected.decided_at == 238392911
    assert rejected.later_edits_required == 2
    assert set(rejected.signals) == {"identity_revert", "text_undo", "revert_comment"}
    edit = rejected.edit
    assert (edit.title, edit.section_path, edit.kind) == ("Pyrus", (), "insert")
    assert edit.added_text.startswith("Pyrus may refer to:")
    assert "Main//Pyrus DMS, a Document Management System" in edit.added_text
    # "Pyrus may refer to:" (19) + blank line (2) + the two list items (127 with the newline)
    assert edit.chars_changed == 19 + 2 + 127
    assert edit.comment == "Added disambiguation"
    assert edit.parent_id == 104997738  # inferred: schema 0.3 has no <parentid>
    assert edit.user_type == "registered" and edit.user == "Jkokemueller"
    accepted = out[190346463]
    assert isinstance(accepted, LabelledEdit) and accepted.label == "accepted"
    assert accepted.edit.kind == "delete"
    assert {r: o.reason for r, o in out.items() if isinstance(o, Discarded)} == {
        104997415: "page_creation", 104997738: "markup_only", 238138507: "markup_only",
        238392911: "markup_only"}


def test_simplewiki_user_and_talk_pages(shared_data: Path) -> None:
    report = LabelReport()
    out = by_revision(list(label_history(
        [shared_data / "wikipedia/histories/simplewiki-history-sample.xml"],
        namespaces=None, report=report)))
    assert report.revisions == 33 == len(out)
    assert report.labelled + sum(report.discarded.values()) == 33  # one record each
    labels = {r: o.label for r, o in out.items() if isinstance(o, LabelledEdit)}
    assert labels == {558764: "rejected", 1552830: "rejected",
                      558766: "accepted", 1552889: "accepted"}
    vandal = out[1552830]
    assert isinstance(vandal, LabelledEdit)
    assert vandal.reverting_revision_id == 1552889
    assert vandal.decided_at == 1714216  # the suppressed 1714215 is not counted
    assert vandal.edit.added_text.startswith("FACE IT, YOU ARE ABOUT TO GET BANNED")
    assert report.discarded["text_deleted"] == 4  # 1714215, 4997170, 4670942, 4670944
    assert out[4997170].reason == "text_deleted"  # type: ignore[union-attr]
    typo = out[6187125]
    assert isinstance(typo, Discarded) and typo.reason == "changed_before_stable"
    assert "changed by 6187126" in typo.detail
    assert typo.edit is not None and typo.edit.section_path == ("Recent transfer",)


def test_default_namespace_filter_and_missing_parent(shared_data: Path) -> None:
    folder = shared_data / "wikipedia/histories"
    report = LabelReport()
    out = by_revision(list(label_history([folder], report=report)))
    # articles only: the simplewiki sample (user/talk pages) and Talk:Çullu are left out
    assert report.revisions == 1 + 4 + 6 + 2 == len(out)
    # article-pear-0.10.xml holds one revision whose parent 638548865 is not in the file
    assert out[638548877].reason == "missing_parent"  # type: ignore[union-attr]
    # Çullu: redirect -> disambiguation page (70 characters), and nothing after it
    assert out[237383099].reason == "history_ended"  # type: ignore[union-attr]
    # Pear 2002: link text "propagating apples and other fruit trees" (40) became
    # "Fruit tree propagation" (22): 62 characters, an edit; 188924 is a null revision
    assert out[185408].reason == "history_ended"  # type: ignore[union-attr]
    assert out[185241].reason == "too_short"  # type: ignore[union-attr]
    assert out[188924].reason == "no_change"  # type: ignore[union-attr]
    assert (report.accepted, report.rejected) == (1, 1)
