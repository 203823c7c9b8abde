"""The search agent: query, search (with exclusion), summaries, classification; the control."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from freshwiki.benchmarks import Sample, Task, load_benchmark
from freshwiki.benchmarks.hellofresh import OUR_TEMPLATES, HelloFresh
from freshwiki.changes.edits import Edit, LabelledEdit, build_balanced, write_balanced
from freshwiki.config import Settings
from freshwiki.errors import FreshwikiError
from freshwiki.llm import LLM, Message
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.retrieval import HybridIndex
from freshwiki.systems import SystemSetupError, load_system
from freshwiki.systems.search_agent import (
    NO_EXCLUSION,
    Doc,
    Exclusion,
    SearchAgent,
    WikipediaIndexBackend,
    clean_query,
    clip_words,
    load_search_backend,
    register_search_backend,
)

TITLES = ("Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta", "Eta")
LONG_QUERY = ('Query: "one two three four five six seven eight nine ten eleven twelve thirteen '
              'fourteen fifteen sixteen seventeen"')
FIFTEEN = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"


class FakeBackend:
    """Seven documents, titled by TITLES, whatever the query; records every call."""

    name = "fake"

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, Exclusion]] = []
        self.closed = False

    def describe(self) -> Mapping[str, Any]:
        return {"backend": "fake"}

    async def search(self, query: str, k: int, *, exclude: Exclusion = NO_EXCLUSION) -> list[Doc]:
        self.calls.append((query, k, exclude))
        docs = [Doc(title=t, text=f"{t} text", url=f"https://{t.lower()}.org/page", id=t)
                for t in TITLES]
        return [d for d in docs if not exclude.excludes(d)][:k]

    async def aclose(self) -> None:
        self.closed = True


def responder(query_reply: str = LONG_QUERY, answer: str = "Yes") -> Any:
    """Answers each kind of prompt the agent sends, by what the prompt asks."""

    def reply(messages: Sequence[Message]) -> str:
        prompt = messages[-1].content
        if "Write one search query" in prompt:
            return query_reply
        if "Summarise what this document says" in prompt:  # an index passage
            title = prompt.split("Title: ", 1)[1].split("\n", 1)[0]
            return f"About {title}: " + " ".join(["word"] * 250)
        if prompt.startswith("WEB PAGE ("):  # a document with a URL
            title = prompt.removeprefix("WEB PAGE (").split(", ", 1)[0]
            return f"About {title}: " + " ".join(["word"] * 250)
        return answer

    return reply


def task(sample_id: str = "s1", template: str = "p1", **metadata: Any) -> Task:
    sample = Sample(id=sample_id, input="The note text.", metadata=metadata)
    return Task(sample=sample, template=template,
                messages=(Message.user(f"Is the note helpful? ({template}) Yes or No."),),
                query="The note text to check.", max_tokens=10)


def agent(backend: FakeBackend, llm_backend: ScriptedBackend, **kw: Any) -> SearchAgent:
    return SearchAgent(LLM(llm_backend), backend, **kw)


async def test_query_search_summaries_then_classification_with_them_in_context() -> None:
    llm = ScriptedBackend([responder()] * 10)
    search = FakeBackend()
    out = await agent(search, llm).respond(task())

    [(query, k, exclude)] = search.calls
    assert query == FIFTEEN and k == 5  # label and quotes stripped, cut to 15 words
    assert exclude == Exclusion()  # the sample names no source
    assert len(llm.requests) == 1 + 5 + 1
    assert "The note text to check." in llm.requests[0].messages[0].content
    assert llm.requests[0].params.temperature == 0.0
    summary_prompts = [r.messages[0].content for r in llm.requests[1:6]]
    # The fake's documents have URLs: each is summarised as a web page, within 200 words.
    assert sorted(p.removeprefix("WEB PAGE (").split(", ")[0] for p in summary_prompts) == sorted(
        TITLES[:5])
    assert all(f'"{FIFTEEN}"' in p and "no more than 200 words" in p for p in summary_prompts)
    assert all("The note text to check." in p for p in summary_prompts)

    final = llm.requests[-1]
    assert final.params.max_tokens == 10 and final.params.temperature == 0.0
    [message] = final.messages
    content = message.content
    assert content.startswith(f'Background found by searching for "{FIFTEEN}"')
    assert content.endswith("Is the note helpful? (p1) Yes or No.")
    positions = [content.index(f"[{i}] {t}: About {t}:") for i, t in enumerate(TITLES[:5], 1)]
    assert positions == sorted(positions)
    assert "[6]" not in content

    assert out.text == "Yes"
    assert out.trace["query"] == FIFTEEN and out.trace["query_raw"] == LONG_QUERY
    assert [d["title"] for d in out.trace["docs"]] == list(TITLES[:5])
    assert out.trace["docs"][0]["url"] == "https://alpha.org/page"
    summaries = out.trace["summaries"]
    assert len(summaries) == 5 and summaries[0].startswith("About Alpha: word")
    assert all(len(s.removesuffix(" …").split()) == 200 for s in summaries)  # clipped
    assert out.trace["control"] is False and out.trace["research_reused"] is False
    # Scripted usage counts words: the output carries every call's tokens.
    assert out.usage.prompt_tokens == sum(
        len(" ".join(m.content for m in r.messages).split()) for r in llm.requests)


def edit_tasks(folder: Path, settings: Settings, templates: Sequence[str]) -> list[Task]:
    """One constructed edit asked with each of ``templates`` by the real HelloFresh benchmark."""
    when = dt.datetime(2024, 3, 4, 12, tzinfo=dt.UTC)
    edits = [LabelledEdit(
        edit=Edit(page_id=page, title=title, revision_id=page * 100 + 1, parent_id=page * 100,
                  timestamp=when, comment=None, user_type="registered", user="U",
                  section_path=("History",), paragraph_before="The town was founded in 1850.",
                  paragraph_after="The town was founded in 1850 by settlers.",
                  deleted_text="", added_text="by settlers", kind="replace",
                  chars_changed=20, article_paragraphs=10),
        label=label, later_edits_required=3, decided_at=page * 100 + 5,  # type: ignore[arg-type]
    ) for page, title, label in ((1, "Alpha", "accepted"), (2, "Beta", "rejected"))]
    path = folder / "edits.jsonl"
    write_balanced(build_balanced(edits, period="week", seed=0), path, period="week", seed=0)
    bench = load_benchmark("hellofresh-edits", settings, {"path": str(path)})
    sample = next(bench.samples())
    return [bench.render(sample, t) for t in templates]


@pytest.mark.parametrize("templates", [HelloFresh.default_templates, OUR_TEMPLATES],
                         ids=["paper-default", "ours-by-name"])
async def test_the_five_templates_share_one_research(
    templates: tuple[str, ...], tmp_path: Path, settings: Settings,
) -> None:
    tasks = edit_tasks(tmp_path, settings, templates)
    assert len({t.messages[0].content for t in tasks}) == 5  # five different phrasings
    llm = ScriptedBackend([responder()] * 20)
    search = FakeBackend()
    system = agent(search, llm)
    outs = [await system.respond(t) for t in tasks]
    assert len(search.calls) == 1
    assert len(llm.requests) == 1 + 5 + 5
    assert "Wikipedia article: Alpha" in llm.requests[0].messages[0].content  # the query's
    assert [o.trace["research_reused"] for o in outs] == [False, True, True, True, True]
    assert all(o.trace["summaries"] == outs[0].trace["summaries"] for o in outs)
    assert outs[1].usage.prompt_tokens < outs[0].usage.prompt_tokens  # research paid once
    # Each phrasing is asked once, after the same background, with its own prompt unchanged.
    finals = [r.messages[-1].content for r in llm.requests[6:]]
    background = finals[0].split("\n---\n", 1)[0]
    assert background.startswith('Background found by searching for "')
    for final, t in zip(finals, tasks, strict=True):
        assert final == f"{background}\n---\n\n{t.messages[0].content}"


async def test_the_source_is_excluded_by_title_and_site() -> None:
    llm = ScriptedBackend([responder()] * 10)
    search = FakeBackend()
    source = {"title": "beta", "sites": ["gamma.org", "https://delta.org/page"]}
    out = await agent(search, llm).respond(task(source=source))
    [(_, _, exclude)] = search.calls
    assert exclude.titles == ("beta",)
    assert [d["title"] for d in out.trace["docs"]] == ["Alpha", "Epsilon", "Zeta", "Eta"]
    assert out.trace["exclude"] == {"titles": ["beta"],
                                    "sites": ["gamma.org", "https://delta.org/page"]}


def test_exclusion_rules() -> None:
    ex = Exclusion(titles=("Scott Newman (actor)",),
                   sites=("x.com", "https://en.wikipedia.org/wiki/Pear"))
    assert ex.excludes_title("scott_newman (Actor)")
    assert not ex.excludes_title("Scott Newman")
    assert ex.excludes_url("https://x.com/u/status/1")
    assert ex.excludes_url("https://mobile.x.com/a")
    assert not ex.excludes_url("https://notx.com/a")
    assert ex.excludes_url("https://en.wikipedia.org/wiki/Pear")
    assert ex.excludes_url("http://en.wikipedia.org/wiki/Pear#History")
    assert not ex.excludes_url("https://en.wikipedia.org/wiki/Apple")
    assert not ex.excludes_url(None)
    assert Exclusion.of_source(None) == Exclusion()
    assert Exclusion.of_source({"title": None, "sites": ["x.com"]}) == Exclusion(sites=("x.com",))


async def test_control_shows_the_partners_research() -> None:
    llm = ScriptedBackend([responder()] * 10)
    search = FakeBackend()
    control = {"id": "other", "subject": "An unrelated edit about cheese.",
               "source": {"title": "Alpha", "sites": []}}
    out = await agent(search, llm, control=True).respond(
        task(control=control, source={"title": "Gamma", "sites": []}))
    assert "An unrelated edit about cheese." in llm.requests[0].messages[0].content
    assert "The note text to check." not in llm.requests[0].messages[0].content
    [(_, _, exclude)] = search.calls
    assert exclude.titles == ("Alpha",)  # the partner's source, as its own search had it
    assert [d["title"] for d in out.trace["docs"]] == ["Beta", "Gamma", "Delta", "Epsilon",
                                                        "Zeta"]
    assert out.trace["control"] is True and out.trace["research_of"] == "other"
    final = llm.requests[-1].messages[-1].content
    assert final.endswith("Is the note helpful? (p1) Yes or No.")  # own question, other context


async def test_control_without_a_partner_fails_that_task() -> None:
    system = agent(FakeBackend(), ScriptedBackend([]), control=True)
    with pytest.raises(FreshwikiError, match="no control partner"):
        await system.respond(task(control=None))


async def test_an_empty_query_falls_back_to_the_subject() -> None:
    llm = ScriptedBackend([responder(query_reply="\n  \n")] * 10)
    search = FakeBackend()
    out = await agent(search, llm, query_words=3).respond(task())
    assert search.calls[0][0] == "The note text"
    assert out.trace["query_fallback"] is True


async def test_no_documents_leave_the_question_unchanged() -> None:
    class Empty(FakeBackend):
        async def search(self, query: str, k: int, *,
                         exclude: Exclusion = NO_EXCLUSION) -> list[Doc]:
            return []

    llm = ScriptedBackend([responder()] * 3)
    out = await agent(Empty(), llm).respond(task())
    assert len(llm.requests) == 2
    assert llm.requests[-1].messages == task().messages
    assert out.trace["docs"] == [] and out.trace["summaries"] == []


@pytest.mark.parametrize(("reply", "expected"), [
    ("pear cultivation history", "pear cultivation history"),
    ('"pear cultivation"\nbecause ...', "pear cultivation"),
    ("Search query: `pear`", "pear"),
    ("**Query:** pear trees", "pear trees"),
    ("a b c d e f", "a b c"),
])
def test_clean_query(reply: str, expected: str) -> None:
    assert clean_query(reply, 3 if expected == "a b c" else 15) == expected


def test_clip_words() -> None:
    assert clip_words("a  b\nc", 5) == "a b c"
    assert clip_words("a b c d", 2) == "a b …"


async def test_wikipedia_backend_drops_the_source_article(
    settings: Settings, mini_index: HybridIndex,
) -> None:
    backend = WikipediaIndexBackend(settings, "mini", index=mini_index)
    free = await backend.search("Taya Kyle born", 3)
    assert free[0].title == "Taya Kyle" and len(free) == 3
    kept = await backend.search("Taya Kyle born", 3, exclude=Exclusion(titles=("taya kyle",)))
    assert len(kept) == 3 and all(d.title != "Taya Kyle" for d in kept)
    expected = [h.passage.title for h in mini_index.search("Taya Kyle born", 20)
                if h.passage.title != "Taya Kyle"][:3]
    assert [d.title for d in kept] == expected
    await backend.aclose()
    assert len(mini_index) > 0  # a given index belongs to the caller


def test_backends_are_found_by_name(settings: Settings) -> None:
    with pytest.raises(SystemSetupError) as info:
        load_search_backend("nope", settings)
    assert "wikipedia" in (info.value.hint or "")

    @register_search_backend("test-web")
    def _web(settings: Settings, options: Mapping[str, Any]) -> FakeBackend:
        return FakeBackend()

    system = load_system("search-agent", LLM(ScriptedBackend([])), settings,
                         {"backend": "test-web", "control": True, "k": 3})
    assert system.describe() == {"backend": "fake", "k": 3, "control": True,
                                 "query_words": 15, "summary_words": 200}
    wiki = load_system("search-agent", LLM(ScriptedBackend([])), settings, {"index": "x"})
    assert wiki.describe()["backend"] == "wikipedia" and wiki.describe()["index"] == "x"
    with pytest.raises(SystemSetupError, match="k must be at least 1"):
        load_system("search-agent", LLM(ScriptedBackend([])), settings, {"k": 0})
