"""One conversation through ChatSession: what the REPL and the API share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from freshwiki.chat import ChatMessage, ChatSession
from freshwiki.chat.conversations import ConversationError, ConversationStore, MessageError
from freshwiki.config import Settings
from freshwiki.llm import LLMUnavailableError
from tests.serve.scripted_engine import ScriptedEngine, llm_down


@pytest.fixture
def store(settings: Settings) -> Iterator[ConversationStore]:
    with ConversationStore.open(settings) as opened:
        yield opened


async def test_turns_are_answered_stored_and_continued(store: ConversationStore) -> None:
    engine = ScriptedEngine()
    session = ChatSession(engine, store, model="scripted:test")
    first = session.stream("What is Clasmatocolea fasciculata?")
    deltas = [d async for d in first]
    assert "".join(deltas) == first.reply.text and first.number == 1
    assert session.conversation_id == first.conversation_id is not None
    second = await session.answer("And Cecil Lowell?")
    assert second.number == 2 and second.conversation_id == first.conversation_id
    # The second turn was asked with the whole conversation so far.
    assert [m.role for m in engine.histories[-1]] == ["user", "assistant", "user"]
    stored = store.get(session.conversation_id)
    assert stored.turns == 2 and stored.model == "scripted:test"
    assert session.history == stored.history and session.last_reply == second.reply


async def test_a_resumed_session_starts_from_the_stored_history(store: ConversationStore
                                                                 ) -> None:
    engine = ScriptedEngine()
    first = await ChatSession(engine, store).answer("first question")
    assert first.conversation_id is not None
    again = ChatSession.resume(engine, store, first.conversation_id[:5])
    assert again.turns == 1 and again.last_reply is not None
    await again.answer("second question")
    assert store.get(first.conversation_id).turns == 2
    with pytest.raises(ConversationError, match="no conversation 'zz'"):
        ChatSession.resume(engine, store, "zz")


async def test_earlier_messages_of_a_new_conversation_are_stored_first(
    store: ConversationStore,
) -> None:
    earlier = [ChatMessage("user", "hi"), ChatMessage("assistant", "hello")]
    done = await ChatSession(ScriptedEngine(), store, history=earlier).answer("and then?")
    assert done.conversation_id is not None
    assert [m.content for m in store.get(done.conversation_id).messages][:3] == [
        "hi", "hello", "and then?"]


async def test_bad_messages_and_failed_turns_leave_nothing_behind(
    store: ConversationStore,
) -> None:
    engine = ScriptedEngine()
    session = ChatSession(engine, store)
    for bad, kind in (("   ", "empty"), ("x" * 20_000, "too_long")):
        with pytest.raises(MessageError) as caught:
            session.stream(bad)
        assert caught.value.kind == kind
    engine.failure, engine.fail_after = llm_down(), 2
    turn = session.stream("What is Clasmatocolea fasciculata?")
    with pytest.raises(LLMUnavailableError):
        async for _ in turn:
            pass
    assert store.summaries() == [] and session.history == []
    with pytest.raises(RuntimeError, match="not finished"):
        _ = turn.reply
    session.new()
    assert session.conversation_id is None
