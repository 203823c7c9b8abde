"""Mining contradiction tags: types, parameters, histories, the other article's passages.

Real wikitext where the data has it: WikiContradict's ``paragraph_A`` (raw tagged paragraphs,
each expected value below checked by hand against the raw text) and the sample dump's Albedo
article. No real text uses ``{{Contradict-other}}``, so its forms are written here from the
template's documented usage (``{{Contradict-other|[[Article]]}}``, more articles as further
positional parameters) and say so. Text from Wikipedia, CC BY-SA 4.0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from freshwiki.corpus import (
    Candidate,
    annotation_record,
    mine_contradictions,
    normalize_title,
    rank_passages,
    write_annotation_jsonl,
)
from freshwiki.corpus.contradictions import ContradictionMiningError
from tests.corpus.contradiction_pages import write_dump


@pytest.fixture(scope="module")
def release(shared_data: Path) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads(
        (shared_data / "wikicontradict" / "wikicontradict.json").read_text(encoding="utf-8"))
    return items


def _candidates(tmp_path: Path, text: str, title: str = "Page") -> list[Candidate]:
    dump = write_dump(tmp_path / f"{len(list(tmp_path.iterdir()))}.xml.bz2",
                      [(title, [("2024-02-26T00:00:00Z", text)])])
    return mine_contradictions(dump, resolve_others=False).candidates


def _summary(c: Candidate) -> tuple[Any, ...]:
    return (c.tag_type, c.family, c.template, c.date, c.reason, c.scope, c.section_path,
            [(o.title, o.anchor) for o in c.others])


# -- the release's real tags ---------------------------------------------------------------


def test_tags_of_the_release_become_the_papers_three_types(
        release: list[dict[str, Any]], tmp_path: Path) -> None:
    # Nymphaea nouchali var. caerulea: "...present{{Inconsistent|date=September 2021}}. Other..."
    (c,) = _candidates(tmp_path, release[0]["paragraph_A"])
    assert _summary(c) == ("Inconsistent", "Inconsistent", "Inconsistent", "September 2021",
                           None, "inline", (), [])
    assert c.tagged_sentence == "Apomorphine is said to be main psychoactive compound present."
    assert c.paragraph_with_tags == release[0]["paragraph_A"]  # the tag put back where it stood
    assert c.paragraph == release[0]["paragraph_A_clean"]
    # October 2010 North American storm complex: {{contradict|article=...}} names another
    # article, so the editor meant Contradict-other whatever the template's family.
    (c,) = _candidates(tmp_path, release[98]["paragraph_A"])
    assert _summary(c) == (
        "Contradict-other", "Contradict", "contradict", "July 2021",
        "number of tornadoes in the event (this article claims 69, but that article claims 87)",
        "block", (), [("Tornadoes of 2010", None)])
    assert c.tag_text == release[98]["tag"]
    # Beat Hotel: "| reason = ..." with spaces; the article its reason names in prose is not
    # a parameter, so it stays Self-contradictory with no other article.
    (c,) = _candidates(tmp_path, release[85]["paragraph_A"])
    assert _summary(c)[:2] == ("Self-contradictory", "Contradict-inline")
    assert c.reason == ("In the article 'Harold Chapman' it says that the nickname was "
                        "conferred by Verta Kali Smart") and c.others == []
    assert c.tag_text == " ".join(release[85]["tag"].replace(" = ", "=").replace(
        "| ", "|").split())
    # Acne: a section banner on a heading line; its section keeps the heading.
    (c,) = _candidates(tmp_path, release[70]["paragraph_A"])
    assert _summary(c) == ("Self-contradictory", "Self-contradictory", "Self-contradictory",
                           "December 2023", "efficacy", "block", ("Azelaic acid",), [])
    assert c.params == {"1": "section", "about": "efficacy", "date": "December 2023"}
    # Blackburn Blackburn: {{contradiction|the number of aircraft built|...}}, reason positional.
    (c,) = _candidates(tmp_path, release[109]["paragraph_A"])
    assert _summary(c)[:5] == ("Self-contradictory", "Contradict", "contradiction", "May 2023",
                               "the number of aircraft built")


def test_two_tags_in_one_paragraph_are_two_candidates(
        release: list[dict[str, Any]], tmp_path: Path) -> None:
    # Margery de Burgh: "...at Arklow,{{Contradictory inline|...}} County
    # Limerick.{{Contradictory inline|...}} On 27 April 1250, ..."
    first, second = _candidates(tmp_path, release[93]["paragraph_A"], "Margery de Burgh")
    assert (first.paragraph, first.paragraph_index) == (second.paragraph, 0)
    assert first.id.endswith(":0:0") and second.id.endswith(":0:1")
    assert first.tagged_sentence == second.tagged_sentence == (
        "He was buried before 3 August 1248 at Arklow, County Limerick.")
    assert first.paragraph[: first.sentence_offset].endswith("at Arklow,")
    assert second.paragraph[: second.sentence_offset].endswith("County Limerick.")


# -- Contradict-other's forms (constructed from the template's documented usage) ----------


@pytest.mark.parametrize(("wikitext", "expected"), [
    ("Text.\n\n{{Contradict-other|[[Penny black]]|date=May 2020}}\nThe stamp was second.",
     ("May 2020", None, [("Penny black", None)], "The stamp was second.")),
    ("{{contradict other|Penny_black#History|section|date=May 2020}}\nA.",
     ("May 2020", None, [("Penny black", "History")], "A.")),
    ("A.{{contradicts other|1=Penny black|2=[[two penny blue|the blue]]|about=which came first}}",
     (None, "which came first", [("Penny black", None), ("Two penny blue", None)], "A.")),
    ("{{Template:Contradict-other|May 2020}}\nA.", ("May 2020", None, [], "A.")),
    ("{{Contradict-other|talk=Talk:Penny black#Dates}}\nA.",
     (None, "Talk:Penny black#Dates", [], "A.")),
    ("{{Multiple issues|{{Contradict-other|Penny black|date=May 2020}}{{Refimprove}}}}\nLead.",
     ("May 2020", None, [("Penny black", None)], "Lead.")),
])
def test_contradict_other_names_its_articles(tmp_path: Path, wikitext: str,
                                             expected: tuple[Any, ...]) -> None:
    (c,) = _candidates(tmp_path, wikitext)
    assert c.tag_type == "Contradict-other"
    assert (c.date, c.reason, [(o.title, o.anchor) for o in c.others], c.paragraph) == expected


def test_old_style_multiple_issues_and_near_misses(tmp_path: Path) -> None:
    (c,) = _candidates(tmp_path, "{{Multiple issues|contradict=May 2010|refimprove=May 2010}}\n"
                                 "Lead text.")
    assert _summary(c) == ("Self-contradictory", "Contradict", "contradict", "May 2010", None,
                           "block", (), [])
    # A citation-format note, in a ref and in text (the sample dump has nine of the first).
    assert _candidates(tmp_path, "A.<ref>{{Inconsistent citations}}</ref> B.{{inconsistent "
                                 "citations}}") == []


def test_a_tag_inside_dropped_content_is_counted_not_mined(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "ref.xml.bz2",
                      [("P", [("2024-02-26T00:00:00Z", "A.<ref>x{{Inconsistent}}</ref> B.")])])
    result = mine_contradictions(dump)
    assert result.candidates == [] and result.report.tags_unattached == 1
    assert (result.report.revisions_cleaned, result.report.revisions_without_tag) == (1, 1)


def test_normalize_title() -> None:
    assert normalize_title("  penny_black  ") == "Penny black"
    assert normalize_title("iPod   touch") == "IPod touch"


# -- histories -----------------------------------------------------------------------------


def test_each_tag_is_reported_once_from_its_latest_revision(
        release: list[dict[str, Any]], tmp_path: Path) -> None:
    # Two penny blue (real text): untagged, tagged without a date, the date added (as a bot
    # would: still the same tag), an edit elsewhere, tag removed, tag back.
    tagged = release[26]["paragraph_A"]  # "...second official postage stamp,{{inconsistent|..."
    undated = tagged.replace("{{inconsistent|date=May 2020}}", "{{inconsistent}}")
    clean = release[26]["paragraph_A_clean"]
    revisions = [("2019-01-01T00:00:00Z", clean), ("2020-04-01T00:00:00Z", undated),
                 ("2020-05-01T00:00:00Z", tagged), ("2020-06-01T00:00:00Z", tagged + " More."),
                 ("2021-01-01T00:00:00Z", clean + " More."), ("2022-01-01T00:00:00Z", tagged)]
    dump = write_dump(tmp_path / "history.xml.bz2", [
        ("Two penny blue", revisions), ("Tagged from the start", [revisions[2]])])
    first, second, third = mine_contradictions(dump).candidates
    stamp = "T00:00:00+00:00"
    assert first.title == second.title == "Two penny blue"
    assert (first.revision.timestamp, first.date) == (f"2020-06-01{stamp}", "May 2020")
    assert first.history.revisions_of_page == 6
    assert first.history.first_seen.timestamp == f"2020-04-01{stamp}"
    assert first.history.removed_in is not None
    assert first.history.removed_in.timestamp == f"2021-01-01{stamp}"
    assert not first.history.first_seen_is_earliest
    assert second.revision.timestamp == second.history.first_seen.timestamp == f"2022-01-01{stamp}"
    assert second.history.removed_in is None
    assert third.history.first_seen_is_earliest and third.history.revisions_of_page == 1


# -- the other article ----------------------------------------------------------------------


def _sample_xml(shared_data: Path) -> str:
    import bz2

    path = shared_data / "wikipedia" / "dumps" / "enwiki-pages-articles-sample.xml.bz2"
    return bz2.decompress(path.read_bytes()).decode("utf-8")


def test_the_other_article_is_found_through_a_redirect_at_the_tagged_time(
        release: list[dict[str, Any]], shared_data: Path, tmp_path: Path) -> None:
    # Constructed claim against the real Albedo article, named through a redirect; and item
    # 98's tag against "Tornadoes of 2010" holding the release's passage B (2019), then the
    # same passage with 87 changed to 88 (2022, constructed): the tag (2021) gets the 2019 one.
    tornadoes = release[98]["annotationResult"]["paragraphB_information"]
    dump = write_dump(tmp_path / "others.xml.bz2", [
        ("Snow claim", [("2024-02-26T00:00:00Z", "The albedo of freshly fallen snow is only "
                         "about 0.5.{{Contradict-other|Snow albedo|Nowhere page|date=May 2020}}")]),
        ("October 2010 North American storm complex",
         [("2021-07-15T00:00:00Z", release[98]["paragraph_A"])]),
        ("Tornadoes of 2010", [("2019-01-01T00:00:00Z", tornadoes),
                               ("2022-01-01T00:00:00Z", tornadoes.replace("87", "88"))]),
    ], before=_sample_xml(shared_data), redirects={"Snow albedo": "Albedo"})
    result = mine_contradictions(dump, other_passages=2)
    snow, storm = result.candidates
    albedo, nowhere = snow.others
    assert (albedo.title, albedo.status, albedo.via_redirect, albedo.found_title) == (
        "Snow albedo", "found", True, "Albedo")
    assert albedo.revision is not None and albedo.revision.id == 715952044
    # Checked by hand: the "Sample albedos" table (Fresh snow 0.80-0.90) and the Snow section
    # ("as high as 0.9 for freshly fallen snow") are the two passages about fresh snow.
    best, runner_up = albedo.passages
    assert best.section_path == ("Terrestrial albedo",) and "Fresh snow" in best.text
    assert runner_up.section_path == ("Examples of terrestrial albedo effects", "Snow")
    assert {"fresh", "snow"} <= set(runner_up.shared) and best.score > runner_up.score > 0
    assert (nowhere.title, nowhere.status, nowhere.passages) == ("Nowhere page",
                                                                 "not in source", [])
    (tornado,) = storm.others
    assert tornado.status == "found" and tornado.revision is not None
    assert tornado.revision.timestamp == "2019-01-01T00:00:00+00:00"
    assert "with 87 tornadoes confirmed" in tornado.passages[0].text
    assert "87" in tornado.passages[0].shared
    assert result.report.passes == 3  # the redirect's target came before it in the dump
    assert dict(result.report.others) == {"found": 2, "not in source": 1}


def test_rank_passages_without_a_shared_word_gives_the_lead() -> None:
    passages = [((), "Lead about pears."), (("History",), "Pears came from Asia in 1850.")]
    (lead,) = rank_passages("Nothing in common here", passages)
    assert (lead.text, lead.score, lead.shared) == ("Lead about pears.", 0.0, ())
    (best,) = rank_passages("Pears reached Asia in 1850", passages, k=1)
    assert best.section_path == ("History",) and best.shared[0] == "1850"
    assert rank_passages("x", []) == []


# -- prefilter and export ------------------------------------------------------------------


def test_the_prefilter_changes_nothing(release: list[dict[str, Any]], shared_data: Path,
                                       tmp_path: Path) -> None:
    pages = [(f"Item {i:03d}", [("2024-02-26T00:00:00Z", item["paragraph_A"])])
             for i, item in enumerate(release)]
    dump = write_dump(tmp_path / "all.xml.bz2", pages, before=_sample_xml(shared_data))
    fast = mine_contradictions(dump, resolve_others=False)
    slow = mine_contradictions(dump, resolve_others=False, prefilter=False)
    assert [c.as_dict() for c in fast.candidates] == [c.as_dict() for c in slow.candidates]
    # 130 items: the 1920 and 1927 Volta a Catalunya hold five tags each, Margery de Burgh
    # and Another Suitcase in Another Hall two (as the wikitext tests count them).
    assert len(fast.candidates) == 140
    # 130 tagged paragraphs and the 8 sample articles with {{inconsistent citations}} are
    # cleaned, not the other 98 sample articles.
    assert (fast.report.revisions_cleaned, slow.report.revisions_cleaned) == (138, 236)


def test_annotation_record_is_a_wikicontradict_item_to_fill_in(
        release: list[dict[str, Any]], tmp_path: Path) -> None:
    (c,) = _candidates(tmp_path, release[0]["paragraph_A"], "Nymphaea nouchali var. caerulea")
    record = annotation_record(c)
    expected_top = {k: release[0][k] for k in ("title", "url", "paragraph_A",
                                               "paragraph_A_clean", "tag", "tagDate",
                                               "tagReason")}
    assert {k: record[k] for k in expected_top} == expected_top
    annotation = record["annotationResult"]
    assert annotation["taxonomy"] == [] and annotation["question1"] == ""
    # Every field is one the release uses, spelled as it spells it.
    assert set(annotation) <= {k for item in release for k in item["annotationResult"]}
    assert all(v == "" for k, v in annotation.items() if k != "taxonomy")
    assert record["candidate"]["id"] == c.id
    out = tmp_path / "out.jsonl"
    assert write_annotation_jsonl([c, c], out) == 2
    assert [json.loads(line)["title"] for line in out.read_text().splitlines()] == [c.title] * 2
    assert not list(tmp_path.glob(".*.part"))


def test_an_export_into_a_missing_folder_names_it(tmp_path: Path) -> None:
    with pytest.raises(ContradictionMiningError, match="nowhere"):
        write_annotation_jsonl([], tmp_path / "nowhere" / "out.jsonl")
