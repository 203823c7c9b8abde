"""A seeded slice of the Community Notes loader's fuzzing, and what it found.

Inputs are real rows of the shared notes and scoredNotes downloads with fields replaced,
headers damaged, and files gzipped, zipped, cut short or not UTF-8. Every failure must be a
NotesFormatError naming the folder; a bad value in a row is a counted skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from freshwiki.changes.notes import NotesFormatError, load_notes
from tests.changes.notes.builders import (
    CRH,
    NOTES_HEADER,
    SCORED_HEADER,
    millis,
    note_row,
    scored_row,
    tsv,
    write,
)
from tests.fuzzing import fuzz, notes_target


def test_loader_raises_only_its_error_on_a_seeded_slice() -> None:
    outcome = fuzz(notes_target(), 300, seed=16)
    assert outcome.inputs == 300
    assert outcome.unhandled == [], outcome.as_dict()


@pytest.mark.parametrize(("note_id", "created", "skipped"), [
    # Found by fuzzing: "²".isdigit() is true but int("²") raises ValueError.
    ("201²", str(millis(2024, 5, 3)), "noteId is not a number"),
    ("٢٠١", str(millis(2024, 5, 3)), "noteId is not a number"),
    # "--5".lstrip("-") is digits; int("--5") raises.
    ("201", "--5", "createdAtMillis is not a number"),
    ("201", "²", "createdAtMillis is not a number"),
    # Far past the year 9999 a datetime can hold: timedelta overflowed.
    ("201", "9" * 30, "createdAtMillis is not a number"),
])
def test_a_bad_number_in_a_row_is_a_counted_skip(tmp_path: Path, note_id: str, created: str,
                                                 skipped: str) -> None:
    good = note_row(202, millis(2024, 5, 4), 9002, "A good note.")
    bad = note_row(201, millis(2024, 5, 3), 9001, "A bad note.")
    bad[NOTES_HEADER.index("noteId")] = note_id
    bad[NOTES_HEADER.index("createdAtMillis")] = created
    write(tmp_path / "notes.tsv", tsv(NOTES_HEADER, [bad, good]))
    write(tmp_path / "scored.tsv", tsv(SCORED_HEADER, [scored_row(201, CRH),
                                                       scored_row(202, CRH)]))
    result = load_notes(tmp_path)
    assert [r.note.note_id for r in result.records] == ["202"]
    notes_file = next(f for f in result.report.files if f.kind == "notes")
    assert notes_file.skipped == {skipped: 1}


def test_a_zip_member_with_an_unknown_compression_method_is_a_format_error(
        tmp_path: Path) -> None:
    # Found by fuzzing: a damaged zip whose member names an unknown compression method made
    # zipfile raise NotImplementedError while the loader read the header.
    import io
    import struct
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes.tsv", tsv(NOTES_HEADER, [note_row(201, millis(2024, 5, 3),
                                                                  9001, "A note.")]))
    data = bytearray(buffer.getvalue())
    data[8:10] = struct.pack("<H", 99)  # the local header's method
    central = data.find(b"PK\x01\x02")
    data[central + 10:central + 12] = struct.pack("<H", 99)
    (tmp_path / "notes.zip").write_bytes(bytes(data))
    write(tmp_path / "scored.tsv", tsv(SCORED_HEADER, [scored_row(201, CRH)]))
    with pytest.raises(NotesFormatError, match="no notes file") as caught:
        load_notes(tmp_path)
    assert str(tmp_path) in str(caught.value)


def test_a_zip_member_flagged_encrypted_is_a_format_error(tmp_path: Path) -> None:
    # Found by the 10^5 fuzzing run: a flipped flag bit marks a member encrypted, and
    # zipfile's open() then raised a bare RuntimeError ("password required").
    import io
    import struct
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("scored.tsv", tsv(SCORED_HEADER, [scored_row(201, CRH)]))
    data = bytearray(buffer.getvalue())
    data[6:8] = struct.pack("<H", 0x1)  # the local header's flag bits: encrypted
    central = data.find(b"PK\x01\x02")
    data[central + 8:central + 10] = struct.pack("<H", 0x1)
    write(tmp_path / "notes.tsv", tsv(NOTES_HEADER, [note_row(201, millis(2024, 5, 3),
                                                              9001, "A note.")]))
    (tmp_path / "scored.zip").write_bytes(bytes(data))
    with pytest.raises(NotesFormatError, match="encrypted") as caught:
        load_notes(tmp_path)
    assert str(tmp_path / "scored.zip") in str(caught.value)
    assert "scored.tsv" in str(caught.value)
