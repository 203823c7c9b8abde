"""What every search backend of the search agent shares: documents, exclusions, the protocol.

Kept apart from :mod:`freshwiki.systems.search_agent` so that a backend module (the web
search in :mod:`._web_search`) can be written against these types without importing the
agent, which imports and registers the backends: no import circle either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Doc:
    """One search result.

    Attributes:
        title: Page or article title.
        text: The text the agent summarises (a passage, a page extract, a snippet).
        url: Where it lives (a web result), or ``None``.
        id: The backend's id for it (passage id), for traces.
        section: Section path within the page, ``""`` when none.
        score: The backend's relevance score, when it has one.
    """

    title: str
    text: str
    url: str | None = None
    id: str = ""
    section: str = ""
    score: float | None = None


def _norm_title(title: str) -> str:
    return " ".join(title.replace("_", " ").split()).casefold()


def on_site(url: str | None, site: str) -> bool:
    """Whether ``url`` is on ``site``: a domain (its subdomains too) or a URL prefix.

    A domain matches by host, never by substring: ``x.com`` covers ``mobile.x.com`` but not
    ``notx.com``. A prefix (a site containing ``/``) matches over ``http`` and ``https``.
    """
    if not url:
        return False
    if "/" in site:
        return url.startswith(site) or url.startswith(site.replace("https://", "http://"))
    host = (urlsplit(url).hostname or "").lower()
    site = site.lower()
    return host == site or host.endswith("." + site)


@dataclass(frozen=True)
class Exclusion:
    """What a search must not return: the item's own source.

    Attributes:
        titles: Page titles (compared case-insensitively, ``_`` as space): the edited
            Wikipedia article.
        sites: Domains (``x.com`` also drops ``mobile.x.com``) or URL prefixes
            (``https://en.wikipedia.org/wiki/Pear``) for backends that return URLs.
    """

    titles: tuple[str, ...] = ()
    sites: tuple[str, ...] = ()
    _titles: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_titles", frozenset(_norm_title(t) for t in self.titles))

    @classmethod
    def of_source(cls, source: Any) -> Exclusion:
        """From a sample's ``metadata["source"]`` (``{"title", "sites"}``); empty when absent."""
        if not isinstance(source, Mapping):
            return cls()
        title = source.get("title")
        sites = source.get("sites") or ()
        return cls(titles=(str(title),) if title else (), sites=tuple(str(s) for s in sites))

    def excludes_title(self, title: str) -> bool:
        """Whether ``title`` is one of the excluded pages."""
        return _norm_title(title) in self._titles

    def excludes_url(self, url: str | None) -> bool:
        """Whether ``url`` is on an excluded site (domain or subdomain) or under a prefix."""
        return any(on_site(url, site) for site in self.sites)

    def excludes(self, doc: Doc) -> bool:
        """Whether ``doc`` comes from the excluded source."""
        return self.excludes_title(doc.title) or self.excludes_url(doc.url)

    def to_json(self) -> dict[str, list[str]]:
        """For traces."""
        return {"titles": list(self.titles), "sites": list(self.sites)}


NO_EXCLUSION = Exclusion()
"""Nothing excluded (the default of :meth:`SearchBackend.search`)."""


@dataclass(frozen=True)
class Skipped:
    """A result a backend passed over, and why (excluded site, fetch failure, no text).

    Attributes:
        url: The result's address.
        reason: Why it is not among the documents, for a reader of the trace.
    """

    url: str
    reason: str


@dataclass(frozen=True)
class SearchReport:
    """A search's documents and what it passed over on the way.

    Attributes:
        docs: The documents, best first.
        skipped: Results not used, in the order they were met.
        notes: Anything else worth keeping (e.g. search engines that did not answer).
    """

    docs: tuple[Doc, ...]
    skipped: tuple[Skipped, ...] = ()
    notes: tuple[str, ...] = ()


@runtime_checkable
class SearchBackend(Protocol):
    """Finds documents for a query; see :mod:`freshwiki.systems.search_agent` for writing one."""

    name: str

    def describe(self) -> Mapping[str, Any]:
        """What determines its results (index name, provider): part of the run identity."""
        ...

    async def search(self, query: str, k: int, *, exclude: Exclusion = NO_EXCLUSION) -> list[Doc]:
        """The best ``k`` documents for ``query`` that ``exclude`` does not exclude."""
        ...

    async def aclose(self) -> None:
        """Release what it holds."""
        ...


@runtime_checkable
class ReportingSearchBackend(SearchBackend, Protocol):
    """A backend that also says what it passed over.

    The web search does: a failed page fetch is recorded in the output's trace rather than
    lost or fatal.
    """

    async def search_report(self, query: str, k: int, *,
                            exclude: Exclusion = NO_EXCLUSION) -> SearchReport:
        """Like :meth:`SearchBackend.search`, with the skipped results."""
        ...


async def search_with_report(backend: SearchBackend, query: str, k: int,
                             exclude: Exclusion) -> SearchReport:
    """``backend``'s report when it gives one, else its documents with nothing skipped."""
    if isinstance(backend, ReportingSearchBackend):
        return await backend.search_report(query, k, exclude=exclude)
    return SearchReport(docs=tuple(await backend.search(query, k, exclude=exclude)))
