"""HelloFresh's notes filters (no media, English) on the real Birdwatch rows.

The expected exclusions were found by reading: the 17 labelled notes whose writer ticked
``misleadingManipulatedMedia`` in notes-00000.tsv (``awk -F'\\t' '$13 == 1'`` joined with the
labelled ids), each read: 12 name a photo, image, video or screenshot in the post, 3 call the
post a fake tweet or fake post (an image of one), and 2 (1357437161780477962,
1362855818748719110) name no media, but their writers ticked the box, which is the evidence
the filter has; the non-English rows are real Spanish and Italian notes of the same file, found
by reading the rows py3langid named other than English and kept only where a reader agrees.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from freshwiki.changes.notes import (
    PAPER_FILTERS,
    LabelledNote,
    LoadResult,
    NotesRecordError,
    filter_notes,
    is_english,
    load_notes,
    parse_has_media,
)

MEDIA_NOTES = {
    "1354827055444201474",  # "The headline in this photo does not appear on CNN.com."
    "1354869279548649477",  # "The image in this tweet contains an edited headline ..."
    "1354933402240229380",  # "This video has been doctored ..."
    "1357414416011038721",  # "This is a fake image. ..."
    "1357437161780477962",  # AOC's office (no media named; the box is ticked)
    "1357532978021347333",  # "The attached screenshot is fabricated ..."
    "1361897169968504835",  # viral abuse-story scam (screenshots of posts)
    "1362651254627782661",  # "This is a fake tweet." (an image of a tweet)
    "1362825165256724480",  # "The video does not show new footage of the Perseverance rover"
    "1362839722041761792",  # "This is an old video from the Curiosity rover"
    "1362855818748719110",  # "... posts fake Tweets"
    "1362901061019725825",  # "... very likely a falsified image"
    "1362940233457815553",  # "Photo is fake."
    "1363005651065036800",  # "This tweet contains an altered screenshot"
    "1364614515531350017",  # "This photo is fake."
    "1370120210615783431",  # "This is a digitally altered screenshot."
    "1370130524493209602",  # "This is not a real post from the Verge." (a fake screenshot)
}
# Real note texts of notes-00000.tsv, by note id: (text excerpt as read, English?)
LANGUAGE_ROWS = {
    "1354875903764017155": ("Este tuit promueve teor?as conspirativas ...", False),
    "1368906616830103562": ("Non sono mai stati rilevati casi di leucemia ...", False),
    "1354849938631344130": ("Alpidio Alonso junto a Fernando Rojas agredieron ...", False),
    "1361393702594367488": ("No le han cumplido a Colombia", False),
    "1354865435288731658": ("Joe Lied.", True),
    "1357779296220303366": ("The Dodgers have signed Bauer.", True),
    "1362181456374624259": ("Birdwatch for birds!", True),
    "1354838634457931781": ("Tweet is tweet", True),
}


@pytest.fixture(scope="module")
def real(shared_data: Path) -> LoadResult:
    return load_notes(shared_data / "communitynotes")


def test_real_labelled_notes_lose_their_media_notes_only(real: LoadResult) -> None:
    assert len(real.records) == 118
    kept, report = filter_notes(real.records)
    excluded = {r.note.note_id for r in real.records} - {r.note.note_id for r in kept}
    assert excluded == MEDIA_NOTES
    assert report.read == 118 and report.kept == 101
    assert dict(report.excluded) == {"post has media (manipulated-media reason)": 17}
    # The early download has no isMediaNote column and no posts: what the filters saw.
    assert dict(report.evidence["media"]) == {"manipulated-media reason": 17, "unknown": 101}
    assert dict(report.evidence["english"]) == {"note text": 101}
    # Filtering nothing keeps everything (the option the CLI's --no-paper-filters passes).
    assert filter_notes(real.records, ())[0] == real.records


def test_english_is_judged_on_real_note_texts(shared_data: Path) -> None:
    header, *rows = (shared_data / "communitynotes" / "notes-00000.tsv").read_text(
        encoding="utf-8").splitlines()
    summary_at = header.split("\t").index("summary")
    texts = {row.split("\t")[0]: row.split("\t")[summary_at] for row in rows
             if row.split("\t")[0] in LANGUAGE_ROWS}
    assert set(texts) == set(LANGUAGE_ROWS)
    for note_id, (excerpt, english) in LANGUAGE_ROWS.items():
        assert texts[note_id].startswith(excerpt.removesuffix(" ...")), note_id
        assert is_english(texts[note_id]) is english, (note_id, texts[note_id])


def test_the_posts_file_decides_when_it_knows(tmp_path: Path, shared_data: Path) -> None:
    folder = tmp_path / "dl"
    folder.mkdir()
    for name in ("notes-00000.tsv", "scoredNotes.tsv"):
        shutil.copy(shared_data / "communitynotes" / name, folder / name)
    labelled = load_notes(folder).records
    post_of = {r.note.note_id: r.note.post_id for r in labelled}
    media_post = post_of["1354865435288731658"]  # "Joe Lied.": no media tick
    spanish_post = post_of["1357779296220303366"]  # English note, post said to be Spanish
    plain_post = post_of["1354827055444201474"]  # a media tick, the post file says no media
    posts = tmp_path / "posts.jsonl"
    posts.write_text("\n".join(json.dumps(p) for p in [
        {"id": media_post, "text": "He lied again", "lang": "en",
         "attachments": {"media_keys": ["3_1"]}},
        {"id": spanish_post, "text": "Los Dodgers firman a Bauer", "lang": "es",
         "attachments": {}},
        {"id": plain_post, "text": "Read the headline", "lang": "en", "attachments": {}},
    ]) + "\n", encoding="utf-8")
    records = load_notes(folder, posts).records
    by_id = {r.note.note_id: r for r in records}
    assert by_id["1354865435288731658"].post_has_media is True
    assert by_id["1357779296220303366"].post_lang == "es"
    assert LabelledNote.from_dict(by_id["1357779296220303366"].to_dict()) == by_id[
        "1357779296220303366"]
    kept, report = filter_notes(records)
    gone = {r.note.note_id for r in records} - {r.note.note_id for r in kept}
    assert "1354865435288731658" in gone and "1357779296220303366" in gone
    assert "1354827055444201474" not in gone  # the posts file outranks the writer's tick
    assert report.excluded["post has media (posts file)"] == 1
    assert report.excluded["not English (post lang)"] == 1
    assert report.evidence["media"]["posts file"] == 3


@pytest.mark.parametrize(("value", "expected"), [
    (None, None), ("", None), ("1", True), ("false", False), ([], False), (["3_1"], True),
    ({"media_keys": []}, False), ({"media_keys": ["3_1"]}, True), ('["3_1"]', True),
    ("[]", False), ("https://pbs.example/img.jpg", True),
])
def test_media_column_values(value: object, expected: bool | None) -> None:
    assert parse_has_media(value) is expected


def test_unknown_filter_is_refused() -> None:
    with pytest.raises(NotesRecordError, match="unknown notes filter 'lang'"):
        filter_notes([], ("lang",))
    assert PAPER_FILTERS == ("media", "english")
