"""Bad input through the whole ingest path: what is read before a fault is kept, faults are
named, and --skip-bad-pages continues and reports."""

from __future__ import annotations

import bz2
import subprocess
import sys
from pathlib import Path

import pytest

from freshwiki.corpus import CorpusStore, DumpReadError, ingest

SAMPLE = "wikipedia/dumps/enwiki-pages-articles-sample.xml.bz2"
# The first five articles (not redirects) of the sample dump, checked by hand.
FIRST_ARTICLES = [(12, "Anarchism"), (25, "Autism"), (39, "Albedo"), (290, "A"), (303, "Alabama")]


def five_articles(shared_data: Path, break_third: bool) -> bytes:
    xml = bz2.decompress((shared_data / SAMPLE).read_bytes())
    first, end = xml.index(b"  <page>"), xml.rindex(b"</mediawiki>")
    pages = [b"  <page>" + c for c in xml[first:end].split(b"  <page>")[1:]]
    articles = [p for p in pages if b"<redirect" not in p and b"<ns>0</ns>" in p][:5]
    if break_third:
        assert articles[2].count(b"</text>") == 1
        articles[2] = articles[2].replace(b"</text>", b"</txet>")  # mismatched tag
    return xml[:first] + b"".join(articles) + xml[end:]


@pytest.mark.parametrize("workers", [1, 2])
def test_truncated_dump_keeps_every_page_read_before_the_fault(
    shared_data: Path, tmp_path: Path, workers: int
) -> None:
    data = (shared_data / SAMPLE).read_bytes()
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(data[: len(data) // 2])
    with CorpusStore(tmp_path / "c.sqlite") as store:
        with pytest.raises(DumpReadError) as info:
            ingest(cut, store, workers=workers)
        assert "cut.xml.bz2" in info.value.message
        stored = store.counts()["revisions"]
    # Every article the reader produced before the fault is in the store, none twice.
    from freshwiki.corpus.readers import read_source

    seen = []
    with pytest.raises(DumpReadError):
        for revision in read_source(cut):
            if revision.page.redirect is None:
                seen.append(revision.id)
    assert stored == len(seen) > 10


def test_malformed_page_stops_with_its_id_or_is_skipped_and_reported(
    shared_data: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_bytes(five_articles(shared_data, break_third=True))
    with CorpusStore(tmp_path / "stop.sqlite") as store:
        with pytest.raises(DumpReadError) as info:
            ingest(bad, store, workers=1)
        assert "id 39 'Albedo'" in info.value.message and "byte" in info.value.message
        assert sorted(r.page.id for r in _revisions(store)) == [12, 25]
    with CorpusStore(tmp_path / "skip.sqlite") as store:
        report = ingest(bad, store, workers=1, skip_bad_pages=True)
        assert report.revisions_added == 4
        assert len(report.bad_pages) == 1 and "Albedo" in report.bad_pages[0]
        assert sorted(r.page.id for r in _revisions(store)) == [12, 25, 290, 303]


def _revisions(store: CorpusStore) -> list:  # type: ignore[type-arg]
    return [r for pid, _ in FIRST_ARTICLES for r in store.revisions(pid)]


@pytest.mark.e2e
def test_cli_names_the_fault_and_skip_flag_reports_counts(
    shared_data: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_bytes(five_articles(shared_data, break_third=True))
    exe = str(Path(sys.executable).with_name("freshwiki"))
    home = ["--home", str(tmp_path / "home")]
    stop = subprocess.run([exe, *home, "corpus", "ingest", str(bad), "--workers", "1"],
                          capture_output=True, text=True, timeout=300)
    assert stop.returncode == 2
    assert "bad.xml" in stop.stderr and "Albedo" in stop.stderr
    assert "--skip-bad-pages" in stop.stderr and "Traceback" not in stop.stderr
    go = subprocess.run([exe, *home, "corpus", "ingest", str(bad), "--skip-bad-pages"],
                        capture_output=True, text=True, timeout=300)
    assert go.returncode == 0, go.stderr
    # Two pages were stored by the failed run; the rerun adds the other two and skips one.
    assert "2 revisions added, 2 already stored" in go.stdout
    assert "1 bad page(s) skipped" in go.stderr and "Albedo" in go.stderr
