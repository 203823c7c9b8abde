"""The web-search backend end to end: a SearXNG-style JSON API and saved HTML pages on 127.0.0.1.

One threading HTTP server plays two parts. Asked directly (``/search?format=json``), it is the
SearXNG instance. Asked as an HTTP proxy (``HTTP_PROXY`` points at it, as a user behind a
proxy would have it), it is the web: the request line names the page's full URL, so the server
sees every page the backend fetches, by host, and can prove the excluded sites were never
asked for. The pages are small hand-written HTML files in ``web_pages/`` with navigation,
cookie banners, sidebars and comments around the article, so the main-text extractor matters.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from freshwiki.benchmarks import Sample, Task
from freshwiki.config import Settings, load_settings
from freshwiki.llm import LLM, Message
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.systems import SystemSetupError, load_system
from freshwiki.systems.search_agent import (
    EXCLUDED_SITES,
    Exclusion,
    SearchAgent,
    SearxngBackend,
    WebSearchError,
)

PAGES = Path(__file__).parent / "web_pages"
NEWS = "http://news.example.test/2024/03/kessler-bridge-reopens"
MISSING = "http://news.example.test/2024/03/removed-story"
CUT_OFF = "http://news.example.test/2024/03/cut-off"
FORUM = "http://forum.example.test/threads/kessler-bridge"
PDF = "http://city.example.test/documents/bridge-report.pdf"
BLOG = "http://blog.example.test/posts/bridge-bearings"
FAQ = "http://city.example.test/roads/faq"
UNUSED = "http://travel.example.test/harbourton"
WIKI = "https://en.wikipedia.org/wiki/Kessler_Street_bridge"
X_POST = "https://x.com/someone/status/1767000000000000000"
TWEET = "http://mobile.twitter.com/someone/status/1767000000000000001"
SITE_PAGES = {
    NEWS: PAGES / "harbour-gazette-bridge.html",
    BLOG: PAGES / "riverside-notes-bearings.html",
    FAQ: PAGES / "city-roadworks-faq.html",
    UNUSED: PAGES / "unused-result.html",
}
ROBOTS = {"forum.example.test": "User-agent: *\nDisallow: /threads/\n",
          "blog.example.test": "User-agent: *\nDisallow: /drafts/\n"}
QUERY = "Kessler Street bridge reopened"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens there once the socket is closed


@dataclass
class Web:
    """What the server was asked, and the results its search endpoint gives."""

    results: list[dict[str, Any]] = field(default_factory=list)
    searches: list[dict[str, list[str]]] = field(default_factory=list)
    fetched: list[str] = field(default_factory=list)
    port: int = 0
    pages: dict[str, bytes] = field(default_factory=dict)
    """The HTML the web serves, by URL."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def handler(web: Web) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def send(self, status: int, kind: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path.startswith("http://"):  # asked as a proxy: a page of the web
                return self.page(self.path)
            parts = urlsplit(self.path)
            if parts.path == "/search":
                web.searches.append(parse_qs(parts.query))
                body = {"query": parse_qs(parts.query)["q"][0], "number_of_results": 0,
                        "results": web.results, "answers": [], "suggestions": [],
                        "unresponsive_engines": [["qwant", "timeout"]]}
                return self.send(200, "application/json", json.dumps(body).encode())
            if parts.path == "/html/search":  # an instance that only speaks HTML
                return self.send(200, "text/html; charset=utf-8",
                                 b"<html><body><form>SearXNG</form></body></html>")
            if parts.path == "/forbidden/search":  # JSON output disabled in settings.yml
                return self.send(403, "text/html", b"<h1>403 Forbidden</h1>")
            if parts.path == "/busy/search":
                return self.send(503, "text/plain", b"busy")
            return self.send(404, "text/plain", b"not found")

        def page(self, url: str) -> None:
            web.fetched.append(url)
            host = urlsplit(url).hostname or ""
            if url.endswith("/robots.txt"):
                if host in ROBOTS:
                    return self.send(200, "text/plain", ROBOTS[host].encode())
                return self.send(404, "text/html", b"<h1>Not found</h1>")
            if url in web.pages:
                return self.send(200, "text/html; charset=utf-8", web.pages[url])
            if url == CUT_OFF:  # the connection drops halfway through the page
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                                 b"Content-Length: 5000\r\n\r\n<html><body><p>Half a")
                self.wfile.flush()
                self.close_connection = True
                return None
            if url == PDF:
                return self.send(200, "application/pdf", b"%PDF-1.4 not really a report")
            if host.endswith("example.test"):
                return self.send(404, "text/html", b"<h1>Page not found</h1>")
            return self.send(502, "text/plain", b"the test proxy reaches no other host")

    return Handler


@pytest.fixture
def web(monkeypatch: pytest.MonkeyPatch) -> Iterator[Web]:
    yield from serving(Web(pages={url: path.read_bytes() for url, path in SITE_PAGES.items()}),
                       monkeypatch)


def serving(state: Web, monkeypatch: pytest.MonkeyPatch) -> Iterator[Web]:
    """Run the server for ``state`` on 127.0.0.1, as the HTTP proxy too, until closed."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(state))
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", state.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    yield state
    server.shutdown()
    server.server_close()


def result(url: str, title: str, score: float = 1.0) -> dict[str, Any]:
    return {"url": url, "title": title, "content": "snippet", "engine": "duckduckgo",
            "engines": ["duckduckgo"], "score": score, "category": "general"}


def ranked_results(dead_port: int) -> list[dict[str, Any]]:
    """Excluded sites first, then every kind of failure, then the readable pages."""
    return [
        result(WIKI, "Kessler Street bridge - Wikipedia"),
        result(X_POST, "Someone on X"),
        result(TWEET, "Someone on Twitter"),
        result(NEWS, "Kessler Street bridge reopens after repairs"),
        result(MISSING, "Removed story"),
        result(CUT_OFF, "A page that breaks off"),
        result(FORUM, "Forum thread about the bridge"),
        result(PDF, "Bridge inspection report (PDF)"),
        result(f"http://127.0.0.1:{dead_port}/bridge", "A site that is down"),
        result(BLOG, "Why bridge bearings rust"),
        result(FAQ, "Roadworks and closures: questions and answers"),
        result(UNUSED, "A weekend in Harbourton"),
        {"title": "a result without an address"},
    ]


def replies(summary_of: dict[str, str]) -> Any:
    """The model's side: a query, a summary per page (by its URL), then the answer."""

    def reply(messages: Sequence[Message]) -> str:
        prompt = messages[-1].content
        if "Write one search query" in prompt:
            return f'Query: "{QUERY}"'
        if prompt.startswith("WEB PAGE ("):
            url = prompt.split(", ", 1)[1].split(")", 1)[0]
            return summary_of[url]
        return "Yes"

    return reply


def task() -> Task:
    sample = Sample(id="note-1", input="The bridge is still closed.",
                    metadata={"source": {"title": None, "sites": ["x.com", "twitter.com"]}})
    return Task(sample=sample, template="manual",
                messages=(Message.user("NOTE: The bridge is still closed. Answer yes or no."),),
                query="The Kessler Street bridge is still closed to traffic.", max_tokens=15)


async def test_search_fetch_extract_and_summarise_end_to_end(
    web: Web, settings: Settings,
) -> None:
    web.results = ranked_results(closed_port())
    summaries = {NEWS: "News: reopened 12 March.", BLOG: "Blog: bearings explained.",
                 FAQ: "FAQ: open since 12 March; cycle path closed until 30 April."}
    llm = ScriptedBackend([replies(summaries)] * 5)
    system = load_system("search-agent", LLM(llm), settings,
                         {"backend": "searxng", "searxng_url": web.url + "/", "k": 3})
    assert isinstance(system, SearchAgent)
    out = await system.respond(task())
    await system.aclose()

    # SearXNG was asked once, for the model's query, in JSON.
    assert web.searches == [{"q": [QUERY], "format": ["json"]}]
    # Pages in rank order until three were read; every failure recorded, none fatal.
    assert [d["url"] for d in out.trace["docs"]] == [NEWS, BLOG, FAQ]
    reasons = {s["url"]: s["reason"] for s in out.trace["skipped"]}
    assert reasons[WIKI] == "excluded site (wikipedia.org)"
    assert reasons[X_POST] == "excluded site (x.com)"
    assert reasons[TWEET] == "excluded site (twitter.com)"
    assert reasons[MISSING] == "HTTP 404"
    assert reasons[CUT_OFF].startswith("fetch failed: RemoteProtocolError")
    assert reasons[FORUM] == "robots.txt disallows it"
    assert reasons[PDF] == "not an HTML page (application/pdf)"
    dead = next(u for u in reasons if u.startswith("http://127.0.0.1"))
    assert reasons[dead].startswith("site unreachable (robots.txt: ConnectError")
    assert len(reasons) == 8 and UNUSED not in reasons
    assert out.trace["search_notes"] == ["engines that did not answer: qwant"]
    # The excluded sites and the result past the third page were never requested; each
    # site's robots.txt was read once (two results on news.example.test).
    hosts = {urlsplit(u).hostname for u in web.fetched}
    assert not hosts & {"en.wikipedia.org", "x.com", "mobile.twitter.com",
                        "travel.example.test"}
    assert web.fetched.count("http://news.example.test/robots.txt") == 1
    assert FORUM not in web.fetched  # robots.txt said no: the page itself was not asked for

    # One summary per page, each from the page's main text without its boilerplate.
    prompts = {r.messages[0].content.split(", ", 1)[1].split(")", 1)[0]: r.messages[0].content
               for r in llm.requests[1:4]}
    assert set(prompts) == {NEWS, BLOG, FAQ}
    news = prompts[NEWS]
    assert news.startswith(f"WEB PAGE (Kessler Street bridge reopens after repairs, {NEWS})")
    assert "eleven weeks of repairs to its corroded steel bearings" in news
    assert "at least twenty years" in news  # the article's last paragraph is kept
    for boilerplate in ("Accept all cookies", "Subscribe to our newsletter", "Most read",
                        "Harbour festival", "All rights reserved", "Share on Facebook"):
        assert boilerplate not in news
    assert "The Kessler Street bridge is still closed to traffic." in news  # the item
    assert "no more than 200 words" in news
    assert "Leave a comment" not in prompts[BLOG] and "First!" not in prompts[BLOG]
    assert "Popular posts" not in prompts[BLOG]
    assert "until 30 April 2024" in prompts[FAQ] and "Bins and recycling" not in prompts[FAQ]

    final = llm.requests[-1].messages[-1].content
    assert all(s in final for s in summaries.values())
    assert final.endswith("NOTE: The bridge is still closed. Answer yes or no.")
    assert out.text == "Yes"
    # The backend is part of what the run records about the system.
    described = system.describe()
    assert described["backend"] == "searxng" and described["searxng_url"] == web.url + "/"
    assert described["page_words"] == 1000 and described["summary_words"] == 200
    assert described["excluded_sites"] == list(EXCLUDED_SITES)
    assert str(described["extractor"]).startswith("trafilatura ")


async def test_only_the_first_page_words_are_kept(web: Web) -> None:
    web.results = [result(NEWS, "Bridge")]
    backend = SearxngBackend(web.url, page_words=12)
    [doc] = await backend.search("bridge", 5)
    await backend.aclose()
    # The extracted text opens with the headline, then the first paragraph (read by hand).
    assert doc.text == ("Kessler Street bridge reopens after repairs The Kessler Street "
                        "bridge reopened to")
    assert doc.url == NEWS and doc.title == "Bridge"


async def test_the_items_own_source_is_not_fetched(web: Web) -> None:
    web.results = [result(NEWS, "News"), result(BLOG, "Blog")]
    backend = SearxngBackend(web.url)
    report = await backend.search_report(
        "bridge", 5, exclude=Exclusion(sites=("http://news.example.test/2024/",)))
    await backend.aclose()
    assert [d.url for d in report.docs] == [BLOG]
    assert [(s.url, s.reason) for s in report.skipped] == [(NEWS, "the item's own source")]
    assert not any(u.startswith("http://news.example.test") for u in web.fetched)


async def test_a_malformed_result_address_costs_that_result_only(web: Web) -> None:
    # A port that is not a number, a label that is not valid IDNA, an unclosed IPv6 bracket:
    # each is skipped with the reason, and the page after them is still read.
    bad = ["http://news.example.test:abc/story", "http://xn--a.example.test/story",
           "http://[::1/story"]
    web.results = [*(result(u, "Bad") for u in bad), result(NEWS, "News")]
    backend = SearxngBackend(web.url)
    report = await backend.search_report("bridge", 5)
    await backend.aclose()
    assert [d.url for d in report.docs] == [NEWS]
    reasons = [(s.url, s.reason.split(" (")[0]) for s in report.skipped]
    assert reasons == [(u, "not a valid address") for u in (bad[2], bad[0], bad[1])]
    assert not any(":abc" in u or "xn--a" in u for u in web.fetched)


async def test_instance_problems_name_the_address_and_the_fix(web: Web) -> None:
    down = f"http://127.0.0.1:{closed_port()}"
    with pytest.raises(SystemSetupError) as info:
        await SearxngBackend(down).search("q", 5)
    assert f"cannot reach the SearXNG instance at {down}/search" in info.value.message
    assert "searxng_url" in (info.value.hint or "")

    with pytest.raises(SystemSetupError) as info:
        await SearxngBackend(web.url + "/html").search("q", 5)
    assert info.value.message == f"{web.url}/html/search answered with text/html; " \
        "charset=utf-8, not JSON"
    assert "formats: [html, json]" in (info.value.hint or "")

    with pytest.raises(SystemSetupError) as info:
        await SearxngBackend(web.url + "/forbidden/search").search("q", 5)
    assert "refused format=json (HTTP 403)" in info.value.message
    assert "settings.yml" in (info.value.hint or "")

    # A busy instance fails the sample only (the runner records it and retries next run).
    with pytest.raises(WebSearchError) as busy:
        await SearxngBackend(web.url + "/busy").search("q", 5)
    assert not isinstance(busy.value, SystemSetupError)
    assert f"{web.url}/busy/search answered HTTP 503" in busy.value.message


def test_the_address_comes_from_options_or_settings(
    web: Web, settings: Settings, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(SystemSetupError, match="needs the address of a SearXNG instance"):
        load_system("search-agent", LLM(ScriptedBackend([])), settings, {"backend": "searxng"})
    monkeypatch.setenv("FRESHWIKI_SEARXNG_URL", web.url)
    configured = load_settings().settings
    system = load_system("search-agent", LLM(ScriptedBackend([])), configured,
                         {"backend": "searxng"})
    assert system.describe()["searxng_url"] == web.url
    assert "index" not in system.describe()  # no local index is involved
    with pytest.raises(SystemSetupError, match="not an http"):
        load_system("search-agent", LLM(ScriptedBackend([])), settings,
                    {"backend": "searxng", "searxng_url": "127.0.0.1:8888"})
