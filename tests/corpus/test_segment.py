from __future__ import annotations

import datetime as dt
from pathlib import Path

from freshwiki.corpus.segment import make_passages, split_sentences
from freshwiki.records import MaintenanceTag, Paragraph

TS = dt.datetime(2021, 3, 1, tzinfo=dt.UTC)


def test_sentences_respect_abbreviations_decimals_and_offsets() -> None:
    text = (
        "Dr. Smith moved to Washington, D.C. in 1990.  The city had 2.1 million people. Zoë left."
    )
    got = split_sentences(text)
    assert [s.text for s in got] == [
        "Dr. Smith moved to Washington, D.C. in 1990.",
        "The city had 2.1 million people.",
        "Zoë left.",
    ]
    for s in got:
        assert text[s.start : s.end] == s.text  # character offsets, Unicode-safe
    assert split_sentences("") == [] and split_sentences("   \n") == []


def _words(n: int, stem: str) -> str:
    """An n-word sentence starting with a capital, so a segmenter sees a boundary before it."""
    return " ".join(f"{stem}{i}" for i in range(n)).capitalize() + "."


def test_passages_pack_sentences_within_sections_up_to_the_word_limit() -> None:
    lead = Paragraph((), "Pears are fruit. They grow on trees.")
    # Three 50-word sentences: 50+50 fits in 120, the third starts a new passage.
    history = Paragraph(("History",), " ".join(_words(50, w) for w in ("a", "b", "c")))
    other = Paragraph(("History", "Modern"), "Short one.")
    passages = make_passages(
        [lead, history, other], page_id=7, revision_id=99, title="Pear", timestamp=TS
    )
    assert [p.section_path for p in passages] == [
        (), ("History",), ("History",), ("History", "Modern")
    ]
    assert [len(p.sentences) for p in passages] == [2, 2, 1, 1]
    assert all(len(p.text.split()) <= 120 for p in passages)
    assert passages[0].text == "Pears are fruit. They grow on trees."
    assert [p.id for p in passages] == ["7-99-0", "7-99-1", "7-99-2", "7-99-3"]
    assert passages[3].indexed_text == "Pear > History > Modern\nShort one."
    assert all(p.timestamp == TS and p.revision_id == 99 for p in passages)


def test_paragraphs_of_one_section_share_passages() -> None:
    a = Paragraph(("S",), "One fact here.")
    b = Paragraph(("S",), "Another fact there.")
    (p,) = make_passages([a, b], page_id=1, revision_id=1, title="T", timestamp=None)
    assert p.text == "One fact here. Another fact there."


def test_a_sentence_longer_than_the_limit_is_cut_at_words() -> None:
    para = Paragraph((), _words(300, "w"))
    passages = make_passages([para], page_id=1, revision_id=2, title="T", timestamp=None,
                             max_words=120)
    assert [len(p.text.split()) for p in passages] == [120, 120, 60]
    assert " ".join(p.text for p in passages) == para.text  # nothing lost


def test_inline_tag_is_reanchored_to_the_sentence_it_qualifies() -> None:
    text = "The tower is 300 m tall. It opened in 1887. Millions visit."
    # {{Citation needed}} stood right after "It opened in 1887." (offset 43 in the paragraph).
    assert text[:43].endswith("1887.")
    cn = MaintenanceTag("Citation needed", "cn", {"date": "May 2020"}, date="May 2020",
                        sentence_offset=43)
    block = MaintenanceTag("Inconsistent", "Inconsistent", scope="block", sentence_offset=None)
    lead = Paragraph((), "Intro sentence.")
    para = Paragraph(("History",), text, tags=(block, cn))
    _, passage = make_passages([lead, para], page_id=1, revision_id=1, title="Eiffel Tower",
                               timestamp=None)
    tags = {t.name: t for t in passage.tags}
    assert tags["Inconsistent"].sentence_offset is None
    end = tags["Citation needed"].sentence_offset
    assert end is not None and passage.text[:end].endswith("It opened in 1887.")
    assert tags["Citation needed"].date == "May 2020"


def test_list_items_are_units_not_merged_into_one_sentence() -> None:
    items = Paragraph(("Varieties",), "Bartlett\nBosc\nAnjou", kind="list")
    (p,) = make_passages([items], page_id=1, revision_id=1, title="Pear", timestamp=None)
    assert p.sentences == ("Bartlett", "Bosc", "Anjou")


def test_empty_paragraphs_make_no_passages() -> None:
    assert make_passages([Paragraph((), "  ")], page_id=1, revision_id=1, title="T",
                         timestamp=None) == []


def test_a_banner_over_a_textless_section_moves_to_the_next_text() -> None:
    banner = MaintenanceTag("Self-contradictory", "Self-contradictory", scope="block")
    empty = Paragraph(("Results",), "", tags=(banner,))
    after = Paragraph(("Results", "Round 2"), "Smith won.")
    late = MaintenanceTag("Update", "Update", scope="block")
    tail = Paragraph(("Notes",), "", tags=(late,))
    passages = make_passages([empty, after, tail], page_id=1, revision_id=1, title="T",
                             timestamp=None)
    (p,) = passages
    assert [t.name for t in p.tags] == ["Self-contradictory", "Update"]
    assert all(t.sentence_offset is None for t in p.tags)


def test_fast_split_equals_blingfire_offsets_on_real_text(shared_data: Path) -> None:
    """The str.find fast path must give exactly the offsets API's sentences and spans."""
    import json

    from freshwiki.corpus.segment import _split_with_offsets

    leads = json.loads((shared_data / "wikipedia/topics/tail_articles_en.json").read_text())
    tricky = "Tab\tand  double  spaces.  Next\u00a0one.\nLast."
    texts = [*list(leads.values())[:1500], tricky]
    for text in texts:
        assert split_sentences(text) == _split_with_offsets(text), text[:80]


def test_c_sentences_equals_blingfires_own_wrapper(shared_data: Path) -> None:
    """The direct call reuses one buffer; a long text then short ones must not leak bytes."""
    import json

    import blingfire

    from freshwiki.corpus.segment import _c_sentences

    leads = json.loads((shared_data / "wikipedia/topics/recent_articles_en.json").read_text())
    long_text = " ".join(leads.values())
    assert len(long_text.encode()) > 1 << 17  # grows the buffer past its first size
    texts = [long_text, "Short. Text.", "", "A\x00B. C.", "Zoë naïve café. 東京 is big. 🙂 ok.",
             "Line one\nline two. Three.", *list(leads.values())[:300]]
    for text in texts:
        assert _c_sentences(text) == blingfire.text_to_sentences(text), text[:80]
