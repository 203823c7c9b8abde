"""Web search for the search agent: a SearXNG instance's JSON API, then the pages themselves.

HelloFresh's web-search regime (§5.3 of the paper) searches the web, takes the first five
result pages that allow crawling, leaves out pages on X and on Wikipedia (the post's own
site, and the encyclopedia whose edits are being judged), keeps the first 1,000 words of each
page's text and has the model summarise each one. This module does everything up to the
summary (the agent writes those, :mod:`freshwiki.systems.search_agent`):

1. **Search.** ``GET {url}/search?q=QUERY&format=json`` on a SearXNG instance the user runs
   or trusts (SearXNG is a metasearch engine with a documented JSON output; an instance must
   list ``json`` in ``search.formats`` of its ``settings.yml``). Results are taken in the
   order SearXNG ranks them, from its first result page.
2. **Skip** a result on an excluded site (:data:`EXCLUDED_SITES`, plus the item's own source)
   without fetching it, one whose site's ``robots.txt`` disallows us (RFC 9309: a missing
   file allows everything, an unreachable one nothing), and a non-``http(s)`` or malformed
   address (a bad port, an invalid IDNA label).
3. **Fetch** the page (redirects followed, at most :data:`MAX_PAGE_BYTES`), and keep it only
   when it is HTML with a main text: the text comes from trafilatura, a maintained extractor
   that drops navigation, cookie banners, sidebars and footers, which would otherwise take
   most of the 1,000 words. A page that cannot be fetched or has no main text is recorded
   (:class:`Skipped`) and the next result is tried, until ``k`` pages are kept or the results
   run out: one broken site never fails a sample.

The instance's address is configuration, not code: ``--option searxng_url=URL`` or the
``searxng_url`` setting (``FRESHWIKI_SEARXNG_URL``). A run records the backend, address,
word limit, excluded sites and extractor version in its identity, so reports say which
search produced the summaries. Problems with the instance itself (unreachable, JSON output
disabled, not SearXNG) stop the run with the address and what to change; a slow or failing
answer fails that sample only (retried on the next run).
"""

from __future__ import annotations

import asyncio
import urllib.robotparser
from collections.abc import Mapping, Sequence
from importlib.metadata import version
from typing import Any, Final
from urllib.parse import urlsplit

import httpx
import trafilatura

from freshwiki import __version__
from freshwiki.errors import FreshwikiError
from freshwiki.systems._options import SystemSetupError
from freshwiki.systems._search_base import (
    NO_EXCLUSION,
    Doc,
    Exclusion,
    SearchReport,
    Skipped,
    on_site,
)

EXCLUDED_SITES: Final[tuple[str, ...]] = ("x.com", "twitter.com", "wikipedia.org")
"""Never fetched, whatever the item (the paper excludes the X and Wikipedia domains)."""
PAGE_WORDS: Final = 1000
"""Words of each page's main text kept for its summary (the paper's 1,000)."""
MAX_PAGE_BYTES: Final = 5_000_000
"""A page is read up to this size; the first 1,000 words are far inside it."""
TIMEOUT_S: Final = 20.0
"""Per request (search, robots.txt or page): a stuck site costs at most this."""
USER_AGENT: Final = f"freshwiki/{__version__} (research; search-agent)"
ROBOTS_AGENT: Final = "freshwiki"
"""The token matched against ``User-agent`` lines of robots.txt."""
HTML_TYPES: Final = ("text/html", "application/xhtml+xml")
_BAD_ADDRESS: Final = (httpx.InvalidURL, UnicodeError, ValueError)
"""What a malformed result address raises (a bad port, an IDNA label, an open ``[``): httpx
refuses it before any request, and none of these is an ``httpx.HTTPError``."""


class WebSearchError(FreshwikiError):
    """One search failed in a way that may pass (timeout, rate limit, server error)."""


def _endpoint(url: str) -> str:
    """The search endpoint of an instance given by its base address (or the endpoint)."""
    base = url.rstrip("/")
    return base if base.endswith("/search") else base + "/search"


def _setup_hint(url: str) -> str:
    return (f"check the instance with: curl '{_endpoint(url)}?q=test&format=json'; pass "
            "another address with --option searxng_url=URL (or FRESHWIKI_SEARXNG_URL), or "
            "search offline with --option backend=wikipedia.")


class SearxngBackend:
    """Searches the web through SearXNG and reads the result pages (see the module docstring).

    Args:
        url: The instance's base address (``http://127.0.0.1:8888``) or its ``/search``.
        page_words: Words of main text kept per page.
        excluded_sites: Domains never fetched, for every item.
        timeout: Seconds per HTTP request.
        client: An HTTP client to use (the caller keeps it); by default one is made, which
            honours the usual proxy variables (``HTTPS_PROXY``, ``NO_PROXY``).
    """

    name = "searxng"

    def __init__(self, url: str, *, page_words: int = PAGE_WORDS,
                 excluded_sites: Sequence[str] = EXCLUDED_SITES, timeout: float = TIMEOUT_S,
                 client: httpx.AsyncClient | None = None) -> None:
        if not url:
            raise SystemSetupError(
                "search backend 'searxng' needs the address of a SearXNG instance",
                hint="pass --option searxng_url=http://HOST:PORT or set searxng_url in "
                "freshwiki.toml / FRESHWIKI_SEARXNG_URL (the instance must allow "
                "format=json); without internet, use --option backend=wikipedia.")
        if urlsplit(url).scheme not in ("http", "https"):
            raise SystemSetupError(f"searxng_url {url!r} is not an http(s) address",
                                   hint="pass e.g. --option searxng_url=http://127.0.0.1:8888.")
        if page_words < 1:
            raise SystemSetupError(f"search backend 'searxng': page_words must be at least 1, "
                                   f"got {page_words}", hint=f"pass e.g. page_words={PAGE_WORDS}.")
        self.url = url
        self.page_words = page_words
        self.excluded_sites = tuple(excluded_sites)
        self._own_client = client is None
        self._client = client or httpx.AsyncClient(
            timeout=timeout, follow_redirects=True, max_redirects=5,
            headers={"User-Agent": USER_AGENT})
        self._robots: dict[str, asyncio.Task[urllib.robotparser.RobotFileParser | str]] = {}

    def describe(self) -> Mapping[str, Any]:
        """Backend, instance, word limit, exclusions and extractor: what shapes the pages."""
        return {"backend": self.name, "searxng_url": self.url, "page_words": self.page_words,
                "excluded_sites": list(self.excluded_sites), "robots_txt": True,
                "extractor": f"trafilatura {version('trafilatura')}"}

    async def search(self, query: str, k: int, *, exclude: Exclusion = NO_EXCLUSION) -> list[Doc]:
        """The first ``k`` readable result pages (see :meth:`search_report`)."""
        return list((await self.search_report(query, k, exclude=exclude)).docs)

    async def search_report(self, query: str, k: int, *,
                            exclude: Exclusion = NO_EXCLUSION) -> SearchReport:
        """Search, then read result pages in rank order until ``k`` are kept.

        Raises:
            SystemSetupError: the instance is unreachable, refuses JSON, or is not SearXNG.
            WebSearchError: the search timed out or the instance answered with an error.
        """
        results, notes = await self._results(query)
        skipped: list[Skipped] = []
        candidates: list[tuple[str, str, float | None]] = []
        for result in results:
            url = result["url"]
            try:
                reason = self._excluded(url, exclude)
            except ValueError as exc:  # urlsplit: e.g. an unclosed IPv6 bracket
                reason = f"not a valid address ({exc})"
            if reason:
                skipped.append(Skipped(url, reason))
            elif url not in {c[0] for c in candidates}:
                candidates.append((url, result["title"], result["score"]))
        docs: list[Doc] = []
        position = 0
        while len(docs) < k and position < len(candidates):
            # Fetch as many as are still needed at once; keep them in rank order.
            batch = candidates[position:position + k - len(docs)]
            position += len(batch)
            read = await asyncio.gather(*(self._read(url, title, score)
                                          for url, title, score in batch))
            for outcome in read:
                if isinstance(outcome, Doc):
                    docs.append(outcome)
                else:
                    skipped.append(outcome)
        return SearchReport(docs=tuple(docs), skipped=tuple(skipped), notes=tuple(notes))

    def _excluded(self, url: str, exclude: Exclusion) -> str:
        if urlsplit(url).scheme not in ("http", "https"):
            return "not an http(s) address"
        for site in self.excluded_sites:
            if on_site(url, site):
                return f"excluded site ({site})"
        if exclude.excludes_url(url):
            return "the item's own source"
        return ""

    async def _results(self, query: str) -> tuple[list[dict[str, Any]], list[str]]:
        """SearXNG's results for ``query``: ``url``, ``title``, ``score`` each, ranked."""
        endpoint = _endpoint(self.url)
        try:
            response = await self._client.get(endpoint, params={"q": query, "format": "json"})
        except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.ProxyError) as exc:
            raise SystemSetupError(f"cannot reach the SearXNG instance at {endpoint} ({exc})",
                                   hint="start it, or " + _setup_hint(self.url)) from None
        except httpx.HTTPError as exc:
            raise WebSearchError(
                f"SearXNG at {endpoint} did not answer for {query!r} ({type(exc).__name__}: "
                f"{exc})", hint="the sample is retried when the same command runs again; if "
                "it keeps failing, " + _setup_hint(self.url)) from None
        if response.status_code == 403:
            raise SystemSetupError(
                f"SearXNG at {endpoint} refused format=json (HTTP 403)",
                hint="enable JSON output in the instance's settings.yml (search: formats: "
                "[html, json]) and restart it; " + _setup_hint(self.url))
        if response.status_code == 429 or response.status_code >= 500:
            raise WebSearchError(
                f"SearXNG at {endpoint} answered HTTP {response.status_code} for {query!r}",
                hint="the instance is busy or rate-limiting (its limiter): run again later "
                "(finished samples are kept), or use an instance you run yourself.")
        if response.status_code >= 400:
            raise SystemSetupError(
                f"SearXNG at {endpoint} answered HTTP {response.status_code}",
                hint="is this the instance's address? " + _setup_hint(self.url))
        try:
            payload = response.json()
        except ValueError:
            kind = response.headers.get("content-type", "no content type")
            raise SystemSetupError(
                f"{endpoint} answered with {kind}, not JSON",
                hint="is this a SearXNG instance with JSON output enabled (search: formats: "
                "[html, json] in settings.yml)? " + _setup_hint(self.url)) from None
        raw = payload.get("results") if isinstance(payload, dict) else None
        if not isinstance(raw, list):
            raise SystemSetupError(f"{endpoint} answered JSON without a results list",
                                   hint="is this a SearXNG instance? " + _setup_hint(self.url))
        results = []
        for item in raw:
            if isinstance(item, dict) and isinstance(item.get("url"), str) and item["url"]:
                score = item.get("score")
                results.append({"url": item["url"], "title": str(item.get("title") or ""),
                                "score": float(score) if isinstance(score, int | float)
                                else None})
        notes = []
        dead = payload.get("unresponsive_engines") or []
        if dead:
            names = ", ".join(str(e[0]) if isinstance(e, list) and e else str(e) for e in dead)
            notes.append(f"engines that did not answer: {names}")
        if not results:
            notes.append(f"no results for {query!r}")
        return results, notes

    async def _refusal(self, url: str) -> str:
        """Why robots.txt keeps us from ``url`` (``""``: it does not); fetched once per site."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        task = self._robots.get(origin)
        if task is None:
            task = asyncio.ensure_future(self._load_robots(origin))
            self._robots[origin] = task
        rules = await task
        if isinstance(rules, str):
            return rules
        return "" if rules.can_fetch(ROBOTS_AGENT, url) else "robots.txt disallows it"

    async def _load_robots(self, origin: str) -> urllib.robotparser.RobotFileParser | str:
        """The site's rules, or why none could be read (then nothing there is fetched)."""
        rules = urllib.robotparser.RobotFileParser()
        try:
            response = await self._client.get(origin + "/robots.txt")
        except httpx.HTTPError as exc:
            return f"site unreachable (robots.txt: {type(exc).__name__}: {exc})"
        except _BAD_ADDRESS as exc:
            return f"not a valid address ({type(exc).__name__}: {exc})"
        if response.status_code >= 500:
            return f"robots.txt answered HTTP {response.status_code}"
        # A missing robots.txt (any 4xx) allows everything.
        rules.parse(response.text.splitlines() if response.status_code < 400 else [])
        return rules

    async def _read(self, url: str, title: str, score: float | None) -> Doc | Skipped:
        """The page's first ``page_words`` words of main text, or why there are none."""
        refusal = await self._refusal(url)
        if refusal:
            return Skipped(url, refusal)
        try:
            async with self._client.stream("GET", url) as response:
                if response.status_code >= 400:
                    return Skipped(url, f"HTTP {response.status_code}")
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if kind and kind not in HTML_TYPES:
                    return Skipped(url, f"not an HTML page ({kind})")
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) >= MAX_PAGE_BYTES:
                        break
        except httpx.HTTPError as exc:
            return Skipped(url, f"fetch failed: {type(exc).__name__}: {exc}")
        except _BAD_ADDRESS as exc:
            return Skipped(url, f"not a valid address ({type(exc).__name__}: {exc})")
        try:
            text = await asyncio.to_thread(
                trafilatura.extract, bytes(body[:MAX_PAGE_BYTES]), url=url,
                include_comments=False, include_tables=True, deduplicate=False)
        except Exception as exc:  # a malformed page must cost one result, not the sample
            return Skipped(url, f"text extraction failed: {type(exc).__name__}: {exc}")
        words = (text or "").split()
        if not words:
            return Skipped(url, "no main text found in the page")
        return Doc(title=title or url, text=" ".join(words[:self.page_words]), url=url, id=url,
                   score=score)

    async def aclose(self) -> None:
        """Close the HTTP client if this backend made it."""
        for task in self._robots.values():
            task.cancel()
        if self._own_client:
            await self._client.aclose()
