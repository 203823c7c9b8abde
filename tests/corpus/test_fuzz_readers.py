"""A seeded slice of the dump reader's fuzzing, and what it found.

Inputs are real pages of the enwiki dump slice and pages written from fuzzed fields, cut,
spliced and bit-flipped, plain or compressed (bz2, multistream bz2, gzip, xz) and damaged
after compression. Every failure must be a DumpReadError naming the file.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from freshwiki.corpus import DumpReadError, iter_revisions
from tests.fuzzing import dump_target, fuzz


def test_reader_raises_only_its_error_on_a_seeded_slice() -> None:
    outcome = fuzz(dump_target(), 300, seed=16)
    assert outcome.inputs == 300
    assert outcome.unhandled == [], outcome.as_dict()
    assert outcome.handled["DumpReadError"] > 0


def test_corrupt_gzip_data_is_a_dump_read_error(tmp_path: Path) -> None:
    # Found by fuzzing: gzip reports damaged deflate data as zlib.error, which escaped.
    data = bytearray(gzip.compress(b"<mediawiki><page><title>A</title>" * 50, mtime=0))
    data[12] ^= 0xFF
    path = tmp_path / "damaged.xml.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(DumpReadError, match="compressed data is corrupt") as caught:
        list(iter_revisions(path))
    assert str(path) in str(caught.value)


@pytest.mark.parametrize("stamp", ["<timestamp/>", "<timestamp>9999-12-31T23:00:00-05:00"
                                                   "</timestamp>"])
def test_an_empty_or_unrepresentable_timestamp_is_a_bad_page(tmp_path: Path, stamp: str
                                                             ) -> None:
    # Found by fuzzing: <timestamp/> has no text (AttributeError on None), and a time that
    # lands past the year 9999 in UTC overflowed.
    path = tmp_path / "dump.xml"
    path.write_text(f"<mediawiki><page><title>A</title><ns>0</ns><id>1</id><revision><id>2"
                    f"</id>{stamp}<text>x</text></revision></page></mediawiki>")
    with pytest.raises(DumpReadError, match="bad number or timestamp") as caught:
        list(iter_revisions(path))
    assert str(path) in str(caught.value)
