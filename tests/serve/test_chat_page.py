"""The chat page in real headless Chromium (Debian's) against a real server with a scripted engine.

A person's path: type a question, watch the reply stream in, follow a citation into the
evidence panel, ask a follow-up in the same conversation, reload and find it again; and see
a clear message when the LLM is down.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from freshwiki.serve import ATTRIBUTION
from tests.serve.conftest import LiveServer
from tests.serve.scripted_engine import llm_down

QUESTION = "a liverwort species found in South Africa"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.fail("no Debian chromium for the browser tests: `apt-get install chromium`")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, headless=True,
                                              args=["--no-sandbox", "--disable-gpu"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser, live: LiveServer) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(30_000)
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.goto(f"{live.base}/")
    yield opened
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


def send(page: Page, text: str) -> None:
    page.locator("#message").fill(text)
    page.locator("#message").press("Enter")


def test_a_reply_streams_in_with_citations_and_an_evidence_panel(
    page: Page, live: LiveServer, tmp_path: Path
) -> None:
    expect(page.locator("footer")).to_contain_text(ATTRIBUTION)
    live.engine.gate = threading.Event()
    send(page, QUESTION)
    assert live.engine.held.wait(30), "the engine never started streaming"

    # Half the reply is out and the engine is held: the page shows it, still writing.
    first = page.locator("article.turn").first
    reply_text = first.locator(".msg.assistant .text")
    expect(reply_text).to_contain_text("Clasmatocolea fasciculata is what")
    expect(reply_text).to_have_class("text pending")
    expect(first.locator("details.evidence")).to_have_count(0)
    expect(page.locator("#send")).to_be_disabled()
    page.screenshot(path=str(tmp_path / "streaming.png"))

    live.engine.gate.set()
    panel = first.locator("details.evidence")
    expect(panel).to_be_visible()
    expect(reply_text).to_have_class("text")
    expect(reply_text).to_contain_text("[2].")
    citation = first.locator("a.cite").first
    expect(citation).to_have_text("[1]")

    citation.click()
    highlighted = panel.locator("ol.sources li.highlight")
    expect(highlighted).to_have_count(1)
    expect(highlighted).to_contain_text("Clasmatocolea fasciculata")
    expect(highlighted).to_contain_text("liverwort")
    expect(panel.locator(".verdict.SUPPORTS")).to_have_count(1)
    expect(panel.locator(".verdict.REFUTES")).to_have_count(1)
    expect(panel.locator("ul.claims")).to_contain_text("The corpus describes Clasmatocolea")
    expect(panel.locator("ul.conflicts")).to_contain_text("what it is")
    expect(panel.locator(".attribution")).to_have_text(ATTRIBUTION)
    expect(panel.locator(".meta")).to_contain_text("2 LLM calls")
    page.screenshot(path=str(tmp_path / "evidence.png"), full_page=True)

    conversation_id = page.locator("#conversation-id").inner_text()
    assert live.store.get(conversation_id).turns == 1
    assert f"c={conversation_id}" in page.url

    send(page, "and who was Cecil Lowell?")
    expect(page.locator("details.evidence")).to_have_count(2)
    assert [m.role for m in live.engine.histories[-1]] == ["user", "assistant", "user"]
    assert page.locator("#conversation-id").inner_text() == conversation_id

    page.reload()  # ?c=ID reopens the stored conversation, evidence and all
    expect(page.locator("article.turn")).to_have_count(2)
    expect(page.locator("details.evidence")).to_have_count(2)
    expect(page.locator("article.turn").first.locator("a.cite").first).to_have_text("[1]")
    send(page, "one more")
    expect(page.locator("details.evidence")).to_have_count(3)
    assert live.store.get(conversation_id).turns == 3

    page.locator("#new-conversation").click()
    expect(page.locator("article.turn")).to_have_count(0)
    assert "c=" not in page.url


def test_the_llm_being_down_shows_a_message_and_the_page_recovers(
    page: Page, live: LiveServer
) -> None:
    live.engine.failure = llm_down()
    send(page, QUESTION)
    error = page.locator(".msg.error")
    expect(error).to_contain_text("the language model failed")
    expect(error).to_contain_text("connection refused")
    expect(error.locator(".hint")).to_contain_text("check that the server is running")
    expect(page.locator("#send")).to_be_enabled()

    live.engine.failure = None
    send(page, QUESTION)
    expect(page.locator("details.evidence")).to_have_count(1)


def test_empty_and_oversized_messages_are_refused_on_the_page(
    page: Page, live: LiveServer
) -> None:
    send(page, "   ")
    expect(page.locator("#status")).to_have_text("Write a message first.")
    page.locator("#message").evaluate("(box, n) => { box.removeAttribute('maxlength'); "
                                      "box.value = 'x'.repeat(n); }", 8001)
    page.locator("#message").press("Enter")
    expect(page.locator("#status")).to_contain_text("the limit is 8000")
    assert live.engine.histories == []
    expect(page.locator("article.turn")).to_have_count(0)


def test_a_link_to_an_unknown_conversation_says_so(page: Page, live: LiveServer) -> None:
    page.goto(f"{live.base}/?c=nope")
    expect(page.locator("#status")).to_contain_text("no conversation 'nope'")
    assert "c=nope" not in page.url
    send(page, QUESTION)  # and the page starts a fresh conversation
    expect(page.locator("details.evidence")).to_have_count(1)
    assert live.engine.histories[-1][0].content == QUESTION
