"""The conversation store: turns kept whole, resumable, rebuilt exactly, mined for training."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from freshwiki.chat import ChatMessage
from freshwiki.chat.conversations import (
    MAX_MESSAGE_CHARS,
    ConversationError,
    ConversationStore,
    MessageError,
    check_message,
    conversations_path,
    reply_from_dict,
)
from freshwiki.config import Settings
from tests.serve.scripted_engine import FALLBACK, make_reply


@pytest.fixture
def store(settings: Settings) -> ConversationStore:
    return ConversationStore.open(settings)


def test_a_turn_creates_the_conversation_under_home(
    store: ConversationStore, settings: Settings
) -> None:
    reply = make_reply("What is Clasmatocolea fasciculata?", FALLBACK)
    cid, turn = store.save_turn(reply, user="What is Clasmatocolea fasciculata?", model="m:x")
    assert turn == 1 and len(cid) == 12
    assert conversations_path(settings) == settings.home / "chat" / "conversations.sqlite"
    conversation = store.get(cid)
    assert conversation.title == "What is Clasmatocolea fasciculata?"
    assert conversation.model == "m:x"
    assert [(m.index, m.role) for m in conversation.messages] == [(0, "user"), (1, "assistant")]
    assert conversation.messages[1].content == reply.text
    assert conversation.history == [ChatMessage("user", "What is Clasmatocolea fasciculata?"),
                                    ChatMessage("assistant", reply.text)]
    journal = sqlite3.connect(store.path).execute("PRAGMA journal_mode").fetchone()[0]
    assert journal == "wal"


def test_turns_append_and_survive_reopening(settings: Settings) -> None:
    with ConversationStore.open(settings) as store:
        cid, _ = store.save_turn(make_reply("q1", FALLBACK), user="q1")
        assert store.save_turn(make_reply("q2", FALLBACK[:1]), user="q2",
                               conversation_id=cid) == (cid, 2)
    with ConversationStore.open(settings) as again:
        conversation = again.get(cid)
    assert [m.content for m in conversation.messages if m.role == "user"] == ["q1", "q2"]
    assert conversation.turns == 2
    last = conversation.last_reply()
    assert last is not None and len(last.citations) == 1


def test_earlier_messages_of_a_new_conversation_come_first(store: ConversationStore) -> None:
    earlier = [ChatMessage("user", "hello " * 30), ChatMessage("assistant", "hi")]
    cid, turn = store.save_turn(make_reply("q", FALLBACK), user="q", earlier=earlier)
    conversation = store.get(cid)
    assert turn == 2
    assert [m.content for m in conversation.messages][:3] == ["hello " * 30, "hi", "q"]
    assert conversation.messages[1].reply is None and conversation.messages[3].reply is not None
    assert conversation.title.endswith("…") and len(conversation.title) == 80


def test_unknown_ids_are_errors_with_a_hint(store: ConversationStore) -> None:
    with pytest.raises(ConversationError, match="no conversation 'nope'") as caught:
        store.get("nope")
    assert caught.value.hint and "freshwiki chat list" in caught.value.hint
    with pytest.raises(ConversationError, match="no conversation"):
        store.save_turn(make_reply("q", FALLBACK), user="q", conversation_id="nope")
    assert store.summaries() == []  # the failed save left nothing behind


def test_resolve_takes_a_unique_prefix_and_clashing_ids_are_redrawn(
    store: ConversationStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn = iter(["abc000000001", "abc000000001", "abc000000002", "def000000003"])
    monkeypatch.setattr("freshwiki.chat.conversations.secrets.token_hex", lambda n: next(drawn))
    ids = [store.save_turn(make_reply("q", FALLBACK), user=f"q{i}")[0] for i in range(3)]
    assert ids == ["abc000000001", "abc000000002", "def000000003"]
    assert store.resolve("abc000000002") == "abc000000002"
    assert store.resolve("D") == "def000000003"
    with pytest.raises(ConversationError, match="ambiguous"):
        store.resolve("abc")
    with pytest.raises(ConversationError, match="no conversation"):
        store.resolve("zz")
    with pytest.raises(ConversationError, match="no conversation"):
        store.resolve("%")
    with pytest.raises(ConversationError, match="no conversation id given"):
        store.resolve(" ")


def test_the_stored_reply_rebuilds_exactly(store: ConversationStore) -> None:
    reply = make_reply("q", FALLBACK)
    cid, _ = store.save_turn(reply, user="q")
    stored = store.get(cid).messages[1].reply
    assert stored is not None
    assert reply_from_dict(stored) == reply
    assert reply_from_dict(stored).trace.cache_hits == 1


def test_summaries_put_the_latest_continued_first(store: ConversationStore) -> None:
    old, _ = store.save_turn(make_reply("q", FALLBACK), user="old")
    new, _ = store.save_turn(make_reply("q", FALLBACK), user="new")
    assert [s.id for s in store.summaries()] == [new, old]
    store.save_turn(make_reply("q", FALLBACK), user="again", conversation_id=old)
    summaries = store.summaries()
    assert [s.messages for s in summaries if s.id == old] == [4]
    assert len(store.summaries(limit=1)) == 1


def test_stage_examples_are_chat_format_training_lines(store: ConversationStore) -> None:
    first, _ = store.save_turn(make_reply("q1", FALLBACK), user="q1", model="teacher")
    store.save_turn(make_reply("q2", FALLBACK), user="q2", conversation_id=first)
    other, _ = store.save_turn(make_reply("q3", FALLBACK), user="q3",
                               earlier=[ChatMessage("user", "a"), ChatMessage("assistant", "b")])
    examples = list(store.stage_examples())
    assert [(e.conversation_id, e.turn, e.record.stage) for e in examples] == [
        (first, 1, "query"), (first, 1, "draft+claims"), (first, 2, "query"),
        (first, 2, "draft+claims"), (other, 2, "query"), (other, 2, "draft+claims")]
    line = examples[0].as_training_line()
    assert line["messages"] == [
        {"role": "system", "content": "Write search queries."},
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": '{"queries": ["q1"]}'}]
    assert (line["stage"], line["conversation_id"], line["turn"], line["model"]) == (
        "query", first, 1, "teacher")
    assert len(list(store.stage_examples(other))) == 2


def test_concurrent_turns_get_distinct_numbers(store: ConversationStore) -> None:
    cid, _ = store.save_turn(make_reply("q", FALLBACK), user="q")
    turns: list[int] = []

    def save() -> None:
        for _ in range(5):
            turns.append(store.save_turn(make_reply("q", FALLBACK), user="q",
                                         conversation_id=cid)[1])

    threads = [threading.Thread(target=save) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(turns) == list(range(2, 22))
    assert [m.index for m in store.get(cid).messages] == list(range(42))


def test_check_message_refuses_empty_and_oversized_text() -> None:
    assert check_message("x" * MAX_MESSAGE_CHARS) == "x" * MAX_MESSAGE_CHARS
    with pytest.raises(MessageError, match="empty") as empty:
        check_message(" \n\t")
    assert empty.value.kind == "empty"
    with pytest.raises(MessageError, match="8,001 characters; the limit is 8,000") as long:
        check_message("x" * (MAX_MESSAGE_CHARS + 1))
    assert long.value.kind == "too_long" and long.value.hint


def test_a_second_process_sees_turns_while_the_first_is_open(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with ConversationStore(path) as writer, ConversationStore(path) as reader:
        cid, _ = writer.save_turn(make_reply("q", FALLBACK), user="q")
        assert reader.get(cid).turns == 1
