"""The search-agent system: write a query, search, summarise each hit, then classify.

HelloFresh's second regime. For each task:

1. **Query.** The model writes a search query of at most ``query_words`` (15) words from the
   item (``task.query``: the note, or the edited article and text), prompt
   ``systems/prompts/search_agent/query.j2``. The reply is cut to its first line and to
   the word limit, labels (``Query:``) and quotes removed; an empty reply falls back to the
   item's first words (``trace["query_fallback"]``).
2. **Search.** A :class:`SearchBackend` returns the top ``k`` (5) documents, never the item's
   own source (:class:`Exclusion`, from ``sample.metadata["source"]``): the edited article
   itself, or for a web search the post's site or the article's URL.
3. **Summaries.** One call per document, at most ``summary_words`` (200, the paper's §5.3)
   words each (the reply is also cut there): prompt ``prompts/summarize_page.j2`` for a web
   page (the page's text first, then the item, as the paper's summarisation prompt), else
   ``prompts/summarize.j2`` for an index passage.
4. **Classify.** The benchmark's messages with the numbered summaries put in front of the
   last user message (``prompts/context.j2``), greedy, the task's token cap.

Steps 1-3 do not depend on the phrasing, so they run once per sample and system instance and
are shared by its five templates (``trace["research_reused"]``; token usage is counted on the
output that paid for it). With the LLM response cache on, a later run repeats none of them.

**Control** (``--option control=true``): steps 1-3 are done for the sample's control partner
(``sample.metadata["control"]``, an unrelated sample the benchmark pairs deterministically by
its ``control_seed``) and those summaries are shown instead. The classification call is the
same, so control vs. search isolates what the *content* of the search adds over the mere
presence of search-shaped context. With the response cache on, the partner's research is the
very calls a search run already made.

**Backends.** ``--option backend=NAME`` picks a registered backend. The default,
``wikipedia``, searches our hybrid index (``--option index=NAME``; default: your ``main``
index when built, else the default corpus): it works offline, but for a Wikipedia edit the
index holds the edited article's neighbourhood, which the web search of the paper does not
favour. ``searxng`` is the paper's regime for users with internet access: a SearXNG
instance's JSON API (``--option searxng_url=URL`` or the ``searxng_url`` setting), the
result pages fetched and reduced to their main text, X/Twitter and Wikipedia never fetched,
the first ``page_words`` (1,000) words of each kept (:mod:`._web_search`). Whichever is used
is in :meth:`SearchAgent.describe`, hence in the run's identity and its report. Another
provider plugs in without changing this module::

    class MyWebSearch:
        name = "myweb"
        def describe(self): return {"provider": "myweb"}
        async def search(self, query, k, *, exclude=NO_EXCLUSION):
            results = await call_the_api(query, count=2 * k)        # your HTTP client
            docs = [Doc(title=r.title, text=r.snippet, url=r.url) for r in results]
            return [d for d in docs if not exclude.excludes(d)][:k]
        async def aclose(self): ...

    register_search_backend("myweb")(lambda settings, options: MyWebSearch())

and, in a module named in ``FRESHWIKI_PLUGINS``, it is available as ``--option backend=myweb``.
:meth:`Exclusion.excludes` drops a document whose URL is on an excluded site (a domain, its
subdomains, or a URL prefix) or whose title is excluded. A backend that also has
``search_report`` (:class:`ReportingSearchBackend`) can say which results it passed over.

Everything the agent saw goes to ``Output.trace``: the query (raw and cleaned), the documents
(title, section, id/URL, score), the summaries, the results passed over with the reason
(``skipped``: excluded site, robots.txt, fetch failure, no main text), notes from the search
(``search_notes``) and for a control the partner's id.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from freshwiki.errors import FreshwikiError
from freshwiki.llm import LLM, Message, Usage
from freshwiki.prompting import render_prompt
from freshwiki.retrieval import resolve_index_name
from freshwiki.seams import Output, System, Task
from freshwiki.systems._index import LazyIndex
from freshwiki.systems._options import SystemSetupError, read_options
from freshwiki.systems._search_base import (
    NO_EXCLUSION,
    Doc,
    Exclusion,
    ReportingSearchBackend,
    SearchBackend,
    SearchReport,
    Skipped,
    search_with_report,
)
from freshwiki.systems._web_search import (
    EXCLUDED_SITES,
    PAGE_WORDS,
    SearxngBackend,
    WebSearchError,
)

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.retrieval import HybridIndex

__all__ = [
    "DEFAULTS",
    "EXCLUDED_SITES",
    "NO_EXCLUSION",
    "PAGE_WORDS",
    "PROMPTS",
    "Doc",
    "Exclusion",
    "ReportingSearchBackend",
    "Research",
    "SearchAgent",
    "SearchBackend",
    "SearchReport",
    "SearxngBackend",
    "Skipped",
    "WebSearchError",
    "WikipediaIndexBackend",
    "clean_query",
    "clip_words",
    "context_messages",
    "load_search_backend",
    "register_search_backend",
    "search_agent_system",
    "search_backend_names",
]

PROMPTS = "systems/prompts/search_agent"
"""Folder (for :func:`freshwiki.prompting.render_prompt`) of the search agent's prompts."""

DEFAULTS: Mapping[str, Any] = {
    "k": 5, "backend": "wikipedia", "index": "main", "control": False,
    "query_words": 15, "summary_words": 200, "searxng_url": "", "page_words": PAGE_WORDS,
}
QUERY_TOKENS = 48
"""Generation cap of the query call: 15 words with room for a label the parse strips."""
OVERFETCH = 4
"""The Wikipedia backend asks the index for this many times ``k`` so exclusions leave ``k``."""


# ----------------------------------------------------------------------------- backends


SearchBackendFactory = Callable[["Settings", Mapping[str, Any]], SearchBackend]
"""Builds a backend from settings and the agent's options (``index``)."""

_BACKENDS: dict[str, SearchBackendFactory] = {}


def register_search_backend(name: str) -> Callable[[SearchBackendFactory], SearchBackendFactory]:
    """Register a search backend factory under ``name`` (decorator)."""

    def decorate(factory: SearchBackendFactory) -> SearchBackendFactory:
        _BACKENDS[name] = factory
        return factory

    return decorate


def search_backend_names() -> list[str]:
    """Registered search backends, sorted."""
    return sorted(_BACKENDS)


def load_search_backend(name: str, settings: Settings,
                        options: Mapping[str, Any] | None = None) -> SearchBackend:
    """Build the backend registered as ``name``.

    Raises:
        SystemSetupError: nobody registered ``name`` (naming those that exist).
    """
    try:
        factory = _BACKENDS[name]
    except KeyError:
        raise SystemSetupError(
            f"system 'search-agent': no search backend {name!r}",
            hint=f"choose one of: {', '.join(search_backend_names())} (a web provider is "
            "registered by a plugin module, see freshwiki.systems.search_agent).",
        ) from None
    return factory(settings, options or {})


class WikipediaIndexBackend:
    """Searches our hybrid Wikipedia index; drops passages of excluded articles.

    The index cannot filter titles *out*, so it is asked for ``OVERFETCH x k`` hits (more,
    up to 64 x k, while exclusions leave fewer than ``k``) and the excluded ones are dropped.

    Args:
        settings: Where the index lives.
        index_name: Index under ``home/indexes``.
        index: An already-open index (tests); the caller keeps ownership.
    """

    name = "wikipedia"

    def __init__(self, settings: Settings, index_name: str,
                 index: HybridIndex | None = None) -> None:
        self.index_name = index_name
        self._index = LazyIndex("search-agent", settings, index_name, index)

    def describe(self) -> Mapping[str, Any]:
        """The index's name and content digest: a rebuilt index starts a new run."""
        return {"backend": self.name, "index": self.index_name,
                "index_content": self._index.content_digest()}

    async def search(self, query: str, k: int, *, exclude: Exclusion = NO_EXCLUSION) -> list[Doc]:
        """Top ``k`` passages for ``query``, none from an excluded article."""
        index = await self._index.get()
        fetch = k * OVERFETCH
        while True:
            hits = await asyncio.to_thread(index.search, query, fetch)
            docs = [Doc(title=h.passage.title, text=h.passage.text, id=h.passage.id,
                        section=" › ".join(h.passage.section_path), score=float(h.score))
                    for h in hits]
            kept = [d for d in docs if not exclude.excludes(d)]
            if len(kept) >= k or len(hits) < fetch or fetch >= k * 64:
                return kept[:k]
            fetch *= 4

    async def aclose(self) -> None:
        """Close the index if this backend opened it."""
        self._index.close()


@register_search_backend("wikipedia")
def _wikipedia(settings: Settings, options: Mapping[str, Any]) -> SearchBackend:
    return WikipediaIndexBackend(settings, str(options.get("index") or "main"))


@register_search_backend("searxng")
def _searxng(settings: Settings, options: Mapping[str, Any]) -> SearchBackend:
    return SearxngBackend(str(options.get("searxng_url") or settings.searxng_url or ""),
                          page_words=int(options.get("page_words") or PAGE_WORDS))


# ----------------------------------------------------------------------------- the agent


_QUERY_LABEL = re.compile(r"^(?:(?:web\s+|search\s+)?query|search)\s*[:\-–]\s*", re.IGNORECASE)


def clean_query(text: str, max_words: int) -> str:
    """The query in a model's reply: first non-empty line, no label or quotes, ≤ max words."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = _QUERY_LABEL.sub("", line.replace("**", "").replace("__", "").strip("*#> ").strip())
    line = line.strip().strip("\"'`“”‘’").strip()
    return " ".join(line.split()[:max_words])


def clip_words(text: str, max_words: int) -> str:
    """``text`` cut to ``max_words`` words (whitespace normalised)."""
    words = text.split()
    return " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")


@dataclass(frozen=True)
class Research:
    """Steps 1-3 for one subject: the query, the documents and their summaries."""

    query: str
    query_raw: str
    query_fallback: bool
    exclusion: Exclusion
    docs: tuple[Doc, ...]
    summaries: tuple[str, ...]
    usage: Usage
    cache_hit: bool
    skipped: tuple[Skipped, ...] = ()
    notes: tuple[str, ...] = ()


def _add(a: Usage, b: Usage) -> Usage:
    return Usage(prompt_tokens=a.prompt_tokens + b.prompt_tokens,
                 completion_tokens=a.completion_tokens + b.completion_tokens,
                 cached_prompt_tokens=a.cached_prompt_tokens + b.cached_prompt_tokens)


def context_messages(messages: Sequence[Message], research: Research) -> tuple[Message, ...]:
    """``messages`` with the numbered summaries in front of the last user message.

    Without documents the messages are unchanged: an empty "background" block would be a
    different prompt, not an absence of evidence.
    """
    if not research.docs:
        return tuple(messages)
    summaries = [
        {"number": i, "title": d.title + (f" › {d.section}" if d.section else ""), "text": s}
        for i, (d, s) in enumerate(zip(research.docs, research.summaries, strict=True), 1)
    ]
    out = list(messages)
    last_user = max((i for i, m in enumerate(out) if m.role == "user"), default=None)
    request = out[last_user].content if last_user is not None else ""
    content = render_prompt(f"{PROMPTS}/context.j2", query=research.query,
                            summaries=summaries, request=request)
    if last_user is None:
        out.append(Message.user(content))
    else:
        out[last_user] = Message.user(content)
    return tuple(out)


class SearchAgent:
    """Query, search, summarise, classify; see the module docstring.

    Args:
        llm: The model for every step.
        backend: Where documents come from.
        k: Documents per search.
        control: Show the control partner's summaries instead of the sample's own.
        query_words: Word limit of the query.
        summary_words: Word limit of each summary.
    """

    name = "search-agent"

    def __init__(self, llm: LLM, backend: SearchBackend, *, k: int = 5, control: bool = False,
                 query_words: int = 15, summary_words: int = 200) -> None:
        for option, value in (("k", k), ("query_words", query_words),
                              ("summary_words", summary_words)):
            if value < 1:
                raise SystemSetupError(
                    f"system 'search-agent': {option} must be at least 1, got {value}",
                    hint=f"pass e.g. --option {option}={DEFAULTS[option]}.")
        self.llm = llm
        self.backend = backend
        self.k = k
        self.control = control
        self.query_words = query_words
        self.summary_words = summary_words
        self._research: dict[str, Research] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def describe(self) -> Mapping[str, Any]:
        """Backend, k, control and the word limits: everything that shapes the context."""
        return {**self.backend.describe(), "k": self.k, "control": self.control,
                "query_words": self.query_words, "summary_words": self.summary_words}

    async def research(self, key: str, subject: str, exclusion: Exclusion
                       ) -> tuple[Research, bool]:
        """Steps 1-3 for ``subject``, done once per ``key``.

        Returns:
            The research and whether this call did it (``False``: reused).
        """
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            done = self._research.get(key)
            if done is not None:
                return done, False
            done = await self._do_research(subject, exclusion)
            self._research[key] = done
            return done, True

    async def _do_research(self, subject: str, exclusion: Exclusion) -> Research:
        asked = await self.llm.chat(
            [Message.user(render_prompt(f"{PROMPTS}/query.j2", subject=subject,
                                        max_words=self.query_words))],
            max_tokens=QUERY_TOKENS, temperature=0.0, tag=f"eval:{self.name}:query")
        query = clean_query(asked.text, self.query_words)
        fallback = not query
        if fallback:
            query = clip_words(subject, self.query_words).removesuffix(" …")
        found = await search_with_report(self.backend, query, self.k, exclusion)
        docs = found.docs
        summary_tokens = self.summary_words * 3 // 2
        results = await asyncio.gather(*(
            self.llm.chat(
                [Message.user(render_prompt(
                    # A web page gets the paper's layout (page text first, then the item);
                    # an index passage keeps the shorter prompt written for passages.
                    f"{PROMPTS}/{'summarize_page' if d.url else 'summarize'}.j2",
                    subject=subject, query=query, url=d.url or "",
                    title=d.title + (f" › {d.section}" if d.section else ""), text=d.text,
                    max_words=self.summary_words))],
                max_tokens=summary_tokens, temperature=0.0, tag=f"eval:{self.name}:summary")
            for d in docs))
        usage = asked.usage
        for r in results:
            usage = _add(usage, r.usage)
        return Research(
            query=query, query_raw=asked.text, query_fallback=fallback, exclusion=exclusion,
            docs=docs, summaries=tuple(clip_words(r.text, self.summary_words) for r in results),
            usage=usage, cache_hit=asked.cache_hit and all(r.cache_hit for r in results),
            skipped=found.skipped, notes=found.notes,
        )

    async def respond(self, task: Task) -> Output:
        """Research (own or the control partner's, shared across templates), then classify.

        Raises:
            FreshwikiError: a control run on a sample without a control partner.
        """
        started = time.perf_counter()
        metadata = task.sample.metadata
        if self.control:
            partner = metadata.get("control")
            if not isinstance(partner, Mapping) or not partner.get("subject"):
                raise FreshwikiError(
                    f"sample {task.sample.id} has no control partner",
                    hint="the control needs a benchmark that pairs samples (hellofresh-*, "
                    "with at least two samples).")
            key, subject = str(partner["id"]), str(partner["subject"])
            exclusion = Exclusion.of_source(partner.get("source"))
        else:
            key, subject = task.sample.id, task.query
            exclusion = Exclusion.of_source(metadata.get("source"))
        research, fresh = await self.research(key, subject, exclusion)
        result = await self.llm.chat(
            context_messages(task.messages, research), max_tokens=task.max_tokens,
            temperature=0.0, tag=f"eval:{self.name}")
        usage = _add(result.usage, research.usage) if fresh else result.usage
        return Output(
            text=result.text,
            usage=usage,
            latency_s=time.perf_counter() - started,
            cache_hit=result.cache_hit and (research.cache_hit or not fresh),
            model=result.model,
            trace={
                "control": self.control,
                "research_of": key,
                "research_reused": not fresh,
                "query": research.query,
                "query_raw": research.query_raw,
                "query_fallback": research.query_fallback,
                "exclude": research.exclusion.to_json(),
                "docs": [{"rank": i, "title": d.title, "section": d.section, "id": d.id,
                          "url": d.url, "score": d.score}
                         for i, d in enumerate(research.docs, 1)],
                "summaries": list(research.summaries),
                "skipped": [{"url": s.url, "reason": s.reason} for s in research.skipped],
                "search_notes": list(research.notes),
                "finish_reason": result.finish_reason,
                "refused": result.refused,
            },
        )

    async def aclose(self) -> None:
        """Close the backend."""
        await self.backend.aclose()


def search_agent_system(llm: LLM, settings: Settings, options: Mapping[str, Any]) -> System:
    """``search-agent``: search for a subject, summarise what was found, then answer."""
    # Without --option index=NAME: the user's `main` index when built, else the default
    # corpus (resolved now, so the run records which one it searched).
    backend_name = str(options.get("backend", DEFAULTS["backend"]))
    resolved = {"index": resolve_index_name(settings)} if backend_name == "wikipedia" else {}
    values = read_options("search-agent", {**resolved, **options}, DEFAULTS)
    backend = load_search_backend(values["backend"], settings, {
        "index": values["index"], "searxng_url": values["searxng_url"],
        "page_words": values["page_words"]})
    return SearchAgent(llm, backend, k=values["k"], control=values["control"],
                       query_words=values["query_words"], summary_words=values["summary_words"])
