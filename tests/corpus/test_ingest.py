"""Ingest end to end: real dump → real parser → passages → SQLite store."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from freshwiki.corpus.ingest import IngestOptions, ingest, process_all
from freshwiki.corpus.readers import read_source
from freshwiki.corpus.store import CorpusStore
from freshwiki.records import Revision

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
    assert [r.id for r, _ in pooled] == [r.id for r, _ in serial]  # input order kept
    assert [p for _, ps in pooled for p in ps] == [p for _, ps in serial for p in ps]


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
