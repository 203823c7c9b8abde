"""Ingest end to end: real dump → real parser → passages → SQLite store."""

from __future__ import annotations

import bz2
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from freshwiki.corpus import TOO_DEEP, Fallback, FallbackSummary
from freshwiki.corpus.ingest import IngestOptions, ingest, process_all
from freshwiki.corpus.readers import read_source
from freshwiki.corpus.store import CorpusStore
from freshwiki.records import Revision
from tests.corpus.test_wikitext import nested_page, two_chunk_page

SAMPLE = "wikipedia/dumps/enwiki-pages-articles-sample.xml.bz2"


def test_sample_dump_ingests_every_article_once(shared_data: Path, tmp_path: Path) -> None:
    with CorpusStore(tmp_path / "c.sqlite") as store:
        report = ingest(shared_data / SAMPLE, store, workers=1)
        # Checked by hand with ElementTree: 205 pages in ns 0, of which 99 are redirects.
        assert report.revisions_added == 106
        assert report.redirects_skipped == 99
        assert report.passages > 106 * 3
        counts = store.counts()
        assert counts["revisions"] == 106 and counts["passages"] == report.passages
        # Idempotent: the same dump again adds nothing.
        again = ingest(shared_data / SAMPLE, store, workers=1)
        assert (again.revisions_added, again.revisions_skipped_existing) == (0, 106)
        assert store.counts()["passages"] == counts["passages"]
        page = store.page("Anarchism")
        assert page is not None and page.id == 12
        passages = [p for p in store.passages() if p.page_id == 12]
        assert passages[0].section_path == ()  # the lead comes first
        assert all(len(p.text.split()) <= 120 for p in passages)
        assert any(p.section_path and p.section_path[0] == "History" for p in passages)
        assert not any("References" in p.section_path for p in passages)
        assert all("[[" not in p.text and "{{" not in p.text for p in passages)


def test_process_pool_gives_the_same_passages_as_in_process(shared_data: Path) -> None:
    revisions = list(read_source(shared_data / SAMPLE))[:40]
    options = IngestOptions()
    serial = [x for batch in process_all(revisions, options, workers=1) for x in batch]
    pooled = [x for batch in process_all(revisions, options, workers=2, batch_size=7)
              for x in batch]
    assert [x.revision.id for x in pooled] == [x.revision.id for x in serial]  # input order
    assert [p for x in pooled for p in x.passages] == [p for x in serial for p in x.passages]


def test_topics_file_ingests_plain_text(shared_data: Path, tmp_path: Path) -> None:
    source = shared_data / "wikipedia/topics/recent_articles_en.json"
    titles = json.loads(source.read_text())
    with CorpusStore(tmp_path / "c.sqlite") as store:
        report = ingest(source, store, workers=1)
        assert report.revisions_added == len(titles) == 419
        title, text = next(iter(titles.items()))
        (page,) = [p for p in store.passages() if p.title == title][:1]
        assert page.section_path == ()
        first_sentence = page.sentences[0]
        assert first_sentence in text  # plain text is segmented, not wiki-parsed
        # The file gives no dates: passages carry none (not the file's mtime, issue 12).
        assert all(p.timestamp is None for p in store.passages())


@pytest.mark.e2e
def test_cli_ingest_and_info(shared_data: Path, tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("freshwiki")
    home = tmp_path / "home"
    proc = subprocess.run(
        [str(exe), "--home", str(home), "corpus", "ingest", str(shared_data / SAMPLE),
         "--workers", "2"],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "106 revisions added" in proc.stdout
    info = subprocess.run([str(exe), "--home", str(home), "corpus", "info", "--json"],
                          capture_output=True, text=True, timeout=60)
    data = json.loads(info.stdout)
    assert data["revisions"] == 106 and data["pages"] == 106
    missing = subprocess.run([str(exe), "--home", str(home), "corpus", "ingest",
                              str(tmp_path / "nope.xml")], capture_output=True, text=True)
    assert missing.returncode == 2 and "nope.xml" in missing.stderr


def test_a_rerun_does_not_clean_what_is_already_stored(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (The package re-exports the function ``ingest``, which hides the module's name.)
    ingest_module = importlib.import_module("freshwiki.corpus.ingest")
    source = shared_data / "wikipedia/topics/recent_articles_en.json"
    with CorpusStore(tmp_path / "c.sqlite") as store:
        first = ingest(source, store, workers=1)
        cleaned: list[int] = []
        process = ingest_module.process_revision

        def counting(revision: Revision, options: IngestOptions) -> object:
            cleaned.append(revision.id)
            return process(revision, options)

        monkeypatch.setattr(ingest_module, "process_revision", counting)
        again = ingest(source, store, workers=1)
    assert first.revisions_added == 419 and cleaned == []
    assert (again.revisions_added, again.revisions_skipped_existing) == (0, 419)


# -- regex fallbacks, counted ------------------------------------------------------------------


def _page_xml(page_id: int, revision_id: int, title: str, text: str, stamp: str) -> bytes:
    return (
        f"  <page>\n    <title>{title}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n"
        f"    <revision>\n      <id>{revision_id}</id>\n      <timestamp>{stamp}</timestamp>\n"
        f'      <text bytes="{len(text.encode())}" xml:space="preserve">{text}</text>\n'
        "    </revision>\n  </page>\n"
    ).encode()


NESTED_TITLE, LONG_TITLE = "Nested templates", "Long nested page"


def fallback_dump(shared_data: Path, path: Path) -> Path:
    """The sample's first 40 articles, with two pages that nest 40 templates deep.

    "Nested templates" (page 900) is one chunk of 460 characters, 40 deep: 1 fallback
    chunk. "Long nested page" (page 901) is 38,745 characters cut into 2 chunks of 32,574
    and 6,171 (arithmetic in ``two_chunk_page``), each 40 deep: 2 fallback chunks. They
    stand 6th and 31st of 42, so in batches of 16 they are in the first and second batch,
    which two workers clean apart. Past depth 32 mwparserfromhell stops seeing templates
    (tests/corpus/test_wikitext.py), so both really defeat the parser. None of the sample's
    articles falls back (measured, and checked below).
    """
    xml = bz2.decompress((shared_data / SAMPLE).read_bytes())
    first, end = xml.index(b"  <page>"), xml.rindex(b"</mediawiki>")
    pages = [b"  <page>" + c for c in xml[first:end].split(b"  <page>")[1:]]
    articles = [p for p in pages if b"<redirect" not in p and b"<ns>0</ns>" in p][:40]
    articles.insert(5, _page_xml(900, 9000, NESTED_TITLE, nested_page(), "2024-01-02T03:04:05Z"))
    articles.insert(30, _page_xml(901, 9010, LONG_TITLE, two_chunk_page(),
                                  "2024-01-02T03:04:05Z"))
    path.write_bytes(xml[:first] + b"".join(articles) + xml[end:])
    return path


# Counted by hand from fallback_dump's docstring: 2 revisions, 1 + 2 = 3 chunks, all too deep.
EXPECTED_FALLBACKS = {
    "fallback_revisions": 2,
    "fallback_chunks": 3,
    "fallback_reasons": {TOO_DEEP: 3},
    "fallback_pages": [f"{NESTED_TITLE} (revision 9000): 1 chunk(s), {TOO_DEEP}",
                       f"{LONG_TITLE} (revision 9010): 2 chunk(s), {TOO_DEEP}"],
}


def test_fallbacks_are_counted_exactly_whatever_the_worker_count(
    shared_data: Path, tmp_path: Path
) -> None:
    source = fallback_dump(shared_data, tmp_path / "fallbacks.xml")
    revisions = list(read_source(source))
    processed = {w: [x for batch in process_all(revisions, IngestOptions(), workers=w)
                     for x in batch] for w in (1, 2)}
    assert processed[1] == processed[2]
    assert {x.revision.page.title: x.fallbacks for x in processed[2] if x.fallbacks} == {
        NESTED_TITLE: (Fallback(TOO_DEEP, 460),),
        LONG_TITLE: tuple(Fallback(TOO_DEEP, n) for n in (32_574, 6_171)),
    }
    reports = {}
    for workers in (1, 2):
        with CorpusStore(tmp_path / f"w{workers}.sqlite") as store:
            report = ingest(source, store, workers=workers)
            assert report.revisions_added == 42
            assert {k: report.as_dict()[k] for k in EXPECTED_FALLBACKS} == EXPECTED_FALLBACKS
            again = ingest(source, store, workers=workers)  # re-ingest: nothing new
            assert (again.revisions_added, again.fallback_revisions) == (0, 0)
            assert store.fallback_summary() == FallbackSummary(
                2, 3, 460 + 32_574 + 6_171, {TOO_DEEP: 3})
            (nested,) = [p for p in store.passages() if p.page_id == 900]
            assert nested.text == "Start core text end."  # the text the parser would lose
        reports[workers] = report.as_dict()
    assert reports[1] == reports[2]


@pytest.mark.e2e
@pytest.mark.parametrize("workers", [1, 2])
def test_cli_reports_and_stores_the_fallback_count(
    shared_data: Path, tmp_path: Path, workers: int
) -> None:
    exe = str(Path(sys.executable).with_name("freshwiki"))
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRESHWIKI_")}
    env["COLUMNS"] = "1000"  # no line wrapping to undo

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([exe, "--home", str(home), *args], capture_output=True,
                              text=True, timeout=300, env=env)
        assert proc.returncode == 0, proc.stderr
        return proc

    def info() -> dict[str, object]:
        data: dict[str, object] = json.loads(run("corpus", "info", "--json").stdout)
        return data["fallback"]  # type: ignore[return-value]

    source = fallback_dump(shared_data, tmp_path / "fallbacks.xml")
    first = run("corpus", "ingest", str(source), "--workers", str(workers))
    assert ("42 revisions added, 0 already stored, 0 redirects skipped, " in first.stdout
            and ", 2 revisions with regex fallback (3 chunks)" in first.stdout)
    assert f"{NESTED_TITLE} (revision 9000): 1 chunk(s), {TOO_DEEP}" in first.stderr
    assert f"{LONG_TITLE} (revision 9010): 2 chunk(s), {TOO_DEEP}" in first.stderr
    counted = {"revisions": 2, "chunks": 3, "chunk_chars": 460 + 32_574 + 6_171,
               "reasons": {TOO_DEEP: 3}, "uncounted_revisions": 0}
    assert info() == counted
    # The same pages again: skipped before cleaning, so the store's count does not move.
    again = run("corpus", "ingest", str(source), "--workers", str(workers))
    assert ("0 revisions added, 42 already stored" in again.stdout
            and ", 0 revisions with regex fallback (0 chunks)" in again.stdout)
    assert info() == counted
    # A new revision of a page that falls back is a new stored revision: counted.
    later = tmp_path / "later.xml"
    head = source.read_bytes()[: source.read_bytes().index(b"  <page>")]
    later.write_bytes(head + _page_xml(900, 9001, NESTED_TITLE, nested_page(core="core texts"),
                                       "2024-02-02T03:04:05Z") + b"</mediawiki>\n")
    run("corpus", "ingest", str(later), "--workers", str(workers))
    assert info() == {**counted, "revisions": 3, "chunks": 4,
                      "chunk_chars": counted["chunk_chars"] + 461,  # type: ignore[operator]
                      "reasons": {TOO_DEEP: 4}}
    shown = run("corpus", "info", "--fallbacks").stdout
    assert "regex fallback: 3 revisions, 4 chunks (nested deeper than 20: 4)" in shown
    assert f"{NESTED_TITLE} (revision 9001): {TOO_DEEP} (461 chars)" in shown
