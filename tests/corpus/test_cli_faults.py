"""Bad input through the real ``freshwiki corpus ingest`` command, as a user meets it.

The reader and the cleaner are tested on these inputs on their own (test_readers.py,
test_wikitext.py, test_ingest_faults.py); here the whole command runs in a subprocess: a
50 MB page and templates nested 500 deep must be ingested, a broken page after them must
stop the run with its file, page id and byte offset named and everything before it stored,
and ``--skip-bad-pages`` must go on past it and report what it skipped.
"""

from __future__ import annotations

import bz2
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from freshwiki.corpus import CorpusStore, DumpReadError, read_source

pytestmark = pytest.mark.e2e

SAMPLE = "wikipedia/dumps/enwiki-pages-articles-sample.xml.bz2"
EXE = str(Path(sys.executable).with_name("freshwiki"))

TABLE_ROW = "|-\n| Cell one || Cell two || 12,345\n"
HUGE_TEXT = (
    "'''Huge''' is a test page with a very long table.\n\n"
    '{| class="wikitable"\n! A !! B !! C\n'
    + TABLE_ROW * (50 * 2**20 // len(TABLE_ROW) + 1)
    + "|}\n\n== After ==\nText after the table stays.\n"
)
DEEP_TEXT = "Start " + "{{nowrap|" * 500 + "core{{cn|date=May 2020}} text" + "}}" * 500 + " end."


def _page(page_id: int, title: str, text: str, *, close: str = "</text>") -> bytes:
    return (
        f"  <page>\n    <title>{title}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n"
        f"    <revision>\n      <id>{page_id * 10}</id>\n"
        "      <timestamp>2024-01-02T03:04:05Z</timestamp>\n"
        f'      <text bytes="{len(text.encode())}" xml:space="preserve">{text}{close}\n'
        "    </revision>\n  </page>\n"
    ).encode()


@pytest.fixture(scope="module")
def dump(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    """Two real articles around a 50 MB page, a 500-deep page and a malformed page.

    Returns the file and the byte range of the malformed page in it.
    """
    xml = bz2.decompress((shared_data / SAMPLE).read_bytes())
    first, end = xml.index(b"  <page>"), xml.rindex(b"</mediawiki>")
    pages = [b"  <page>" + c for c in xml[first:end].split(b"  <page>")[1:]]
    anarchism, autism = [p for p in pages if b"<redirect" not in p and b"<ns>0</ns>" in p][:2]
    assert b"<id>12</id>" in anarchism and b"<id>25</id>" in autism
    before = xml[:first] + anarchism + _page(900, "Huge", HUGE_TEXT) + _page(901, "Deep", DEEP_TEXT)
    broken = _page(902, "Broken", "A page whose text element is never closed.",
                   close="</txet>")
    path = tmp_path_factory.mktemp("cli-faults") / "faulty.xml"
    path.write_bytes(before + broken + autism + xml[end:])
    return path, len(before), len(before) + len(broken)


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRESHWIKI_")}
    env["COLUMNS"] = "1000"  # rich folds words longer than the line (a tmp path) otherwise
    return subprocess.run([EXE, "--home", str(home), *args], capture_output=True, text=True,
                          timeout=300, env=env)


def _flat(text: str) -> str:
    """Output with the console's line wrapping undone."""
    return " ".join(text.split())


def _stored(home: Path) -> dict[str, int]:
    info = _run(home, "corpus", "info", "--json")
    assert info.returncode == 0, info.stderr
    counts: dict[str, int] = json.loads(info.stdout)
    return counts


def test_a_50_mb_page_and_500_deep_templates_ingest_and_a_bad_page_after_them_is_named(
    dump: tuple[Path, int, int], tmp_path: Path
) -> None:
    path, bad_start, bad_end = dump
    home = tmp_path / "home"

    stop = _run(home, "corpus", "ingest", str(path), "--workers", "1")
    assert stop.returncode == 2, stop.stdout + stop.stderr
    said = _flat(stop.stderr)
    assert "Traceback" not in said
    assert "faulty.xml" in said and "page id 902 'Broken'" in said
    offset = re.search(r"at byte ([\d,]+) of the file", said)
    assert offset is not None and bad_start <= int(offset[1].replace(",", "")) < bad_end
    assert "--skip-bad-pages" in said
    assert "The 3 revision(s) read before it are stored" in said
    assert _stored(home)["revisions"] == 3  # Anarchism, Huge, Deep: all before the fault

    go = _run(home, "corpus", "ingest", str(path), "--skip-bad-pages")  # the process pool
    assert go.returncode == 0, go.stderr
    assert "1 revisions added, 3 already stored" in _flat(go.stdout)
    skipped = _flat(go.stderr)
    assert "1 bad page(s) skipped" in skipped and "page id 902 'Broken'" in skipped
    assert _stored(home)["revisions"] == 4

    with CorpusStore(home / "corpus" / "corpus.sqlite") as store:
        (huge,) = store.revisions(900)
        assert huge.text == HUGE_TEXT  # 50 MB stored whole
        assert [(p.section_path, p.text) for p in store.passages(revision_id=9000)] == [
            ((), "Huge is a test page with a very long table."),
            (("After",), "Text after the table stays."),
        ]
        (deep,) = store.passages(revision_id=9010)
        assert deep.text == "Start core text end."
        assert [(t.name, t.date) for t in deep.tags] == [("Citation needed", "May 2020")]
        assert {p.page_id for p in store.passages()} == {12, 25, 900, 901}


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("empty.xml.bz2", b"", "is empty (0 bytes)"),
        ("cut-small.xml.bz2", bz2.compress(b"<mediawiki>\n  <page>\n" + b"x" * 5000)[:-20],
         "compressed data ends early"),
    ],
)
def test_an_empty_or_cut_dump_is_an_error_naming_the_file_even_with_skip(
    tmp_path: Path, name: str, data: bytes, expected: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    done = _run(tmp_path / "home", "corpus", "ingest", str(path), "--skip-bad-pages")
    said = _flat(done.stderr)
    assert done.returncode == 2 and "Traceback" not in said
    assert f"{name}: {expected}" in said and "hint:" in said


def test_a_truncated_dump_stops_naming_the_file_and_keeps_every_article_before_the_cut(
    shared_data: Path, tmp_path: Path
) -> None:
    data = (shared_data / SAMPLE).read_bytes()
    path = tmp_path / "cut.xml.bz2"
    path.write_bytes(data[: len(data) // 2])
    readable = []
    with pytest.raises(DumpReadError):
        for revision in read_source(path):
            readable.append(revision)
    articles = [r for r in readable if r.page.redirect is None]
    home = tmp_path / "home"
    done = _run(home, "corpus", "ingest", str(path), "--skip-bad-pages")
    said = _flat(done.stderr)
    assert done.returncode == 2 and "Traceback" not in said
    assert "cut.xml.bz2: compressed data ends early" in said and "incomplete" in said
    assert f"The {len(articles)} revision(s) read before it are stored" in said
    assert _stored(home)["revisions"] == len(articles) > 10
