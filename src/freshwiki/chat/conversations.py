"""Conversations that outlive a process: one SQLite file shared by the REPL, the API and export.

Every chat interface stores what was said and, for each assistant turn, the whole
:class:`~freshwiki.chat.Reply` (citations and trace) as JSON, so a conversation can be resumed
(``freshwiki chat --resume ID``, the API's ``conversation_id``), inspected later (``/trace``
after a resume, ``GET /v1/conversations/ID``), and mined for distillation data
(``freshwiki chat export-traces``: every stage's prompt and output).

A turn is stored only once its reply exists, user message and reply in one transaction: a turn
that failed (the LLM was down) leaves nothing behind, so retrying it never duplicates the
question, and a conversation is created with its first successful turn, so opening a REPL and
quitting leaves no empty conversation.

The file lives at ``settings.home / "chat" / "conversations.sqlite"`` in WAL mode, so a running
server and a REPL can use it at once; one connection per store, shared across threads under a
lock (FastAPI runs routes on several threads).
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, cast

from freshwiki.chat._types import (
    ChatMessage,
    Citation,
    ClaimCheck,
    Conflict,
    CriterionFeedback,
    Evidence,
    Fact,
    Refinement,
    Reply,
    Role,
    SearchQuery,
    StageRecord,
    TurnTrace,
)
from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    from freshwiki.config import Settings

MAX_MESSAGE_CHARS = 8_000
"""Longest user message any chat interface accepts (the API answers 413, the REPL refuses).

The default local model has a 4,096-token context that must also hold the instructions and the
retrieved passages; 8,000 characters (~2,000 tokens) is the most a question can take while
leaving them room. A fixed constant rather than a setting, so every interface and every client
agrees on it.
"""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id      TEXT PRIMARY KEY,
    created TEXT NOT NULL,
    title   TEXT NOT NULL DEFAULT '',
    model   TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS messages (
    conversation TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    idx          INTEGER NOT NULL,
    role         TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content      TEXT NOT NULL,
    reply        TEXT,
    created      TEXT NOT NULL,
    PRIMARY KEY (conversation, idx)
);
"""

_TITLE_CHARS = 80


class ConversationError(FreshwikiError):
    """A conversation id that names nothing, or names more than one conversation."""


class MessageError(FreshwikiError):
    """A user message no chat interface takes: empty, or longer than :data:`MAX_MESSAGE_CHARS`.

    Attributes:
        kind: ``empty`` or ``too_long``, so the API can answer 422 or 413.
    """

    def __init__(self, message: str, *, kind: Literal["empty", "too_long"], hint: str) -> None:
        super().__init__(message, hint=hint)
        self.kind = kind


def check_message(text: str) -> str:
    """The message, if a chat interface should answer it; else a :class:`MessageError`.

    Checked before any retrieval or LLM call, so a pasted book fails in a millisecond with a
    reason instead of overflowing the model's context minutes later.
    """
    if not text.strip():
        raise MessageError("the message is empty", kind="empty",
                           hint="write a question or a statement to chat about.")
    if len(text) > MAX_MESSAGE_CHARS:
        raise MessageError(
            f"the message has {len(text):,} characters; the limit is {MAX_MESSAGE_CHARS:,}",
            kind="too_long",
            hint="shorten it: the model's context must also hold the retrieved passages.")
    return text


def conversations_path(settings: Settings) -> Path:
    """Where the conversation store of ``settings.home`` lives."""
    return settings.home / "chat" / "conversations.sqlite"


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class StoredMessage:
    """One stored message.

    Attributes:
        index: Position in the conversation, from 0.
        role: ``user`` or ``assistant``.
        content: The text (assistant text keeps its ``[n]`` markers).
        created: ISO 8601 UTC time it was stored.
        reply: ``Reply.as_dict()`` for assistant turns this toolkit produced; ``None`` for user
            messages and for earlier turns a client sent without a stored reply.
    """

    index: int
    role: Role
    content: str
    created: str
    reply: dict[str, Any] | None = None

    def as_chat_message(self) -> ChatMessage:
        """The message as the engine's history takes it."""
        return ChatMessage(self.role, self.content)

    def as_dict(self) -> dict[str, Any]:
        """JSON form for the API (the reply under ``freshwiki``, as in a completion)."""
        data: dict[str, Any] = {"index": self.index, "role": self.role,
                                "content": self.content, "created": self.created}
        if self.reply is not None:
            data["freshwiki"] = self.reply
        return data


@dataclass(frozen=True)
class Conversation:
    """A stored conversation with its messages in order.

    Attributes:
        id: Its id (12 hex characters).
        created: ISO 8601 UTC time of its first turn.
        title: The start of its first user message.
        model: The model spec that answered it (for distillation data: the teacher).
        messages: Every message, oldest first.
    """

    id: str
    created: str
    title: str
    model: str
    messages: tuple[StoredMessage, ...]

    @property
    def history(self) -> list[ChatMessage]:
        """The messages as the engine takes them, to continue the conversation."""
        return [m.as_chat_message() for m in self.messages]

    @property
    def turns(self) -> int:
        """Assistant replies so far."""
        return sum(m.role == "assistant" for m in self.messages)

    def last_reply(self) -> Reply | None:
        """The most recent stored reply, rebuilt (for ``/trace`` after a resume)."""
        for message in reversed(self.messages):
            if message.reply is not None:
                return reply_from_dict(message.reply)
        return None

    def as_dict(self) -> dict[str, Any]:
        """JSON form for ``GET /v1/conversations/ID``."""
        return {"id": self.id, "created": self.created, "title": self.title,
                "model": self.model, "messages": [m.as_dict() for m in self.messages]}


@dataclass(frozen=True)
class ConversationSummary:
    """A line of ``freshwiki chat list`` and ``GET /v1/conversations``."""

    id: str
    created: str
    updated: str
    title: str
    model: str
    messages: int


@dataclass(frozen=True)
class StageExample:
    """One LLM call of one stored turn, for distillation.

    Attributes:
        conversation_id: The conversation it comes from.
        turn: The reply it helped make, counted from 1 within the conversation.
        model: The model spec that produced it (the teacher).
        record: The call: instruction, input and output.
    """

    conversation_id: str
    turn: int
    model: str
    record: StageRecord

    def as_training_line(self) -> dict[str, Any]:
        """Chat-format fine-tuning example: system = instruction, user = input, assistant = output.

        This is the shape OpenAI-style and TRL/axolotl "messages" fine-tuning datasets take, so
        the file feeds a smaller model's training directly (WikiChat's distillation recipe: one
        student learns every stage from the teacher's calls).
        """
        r = self.record
        return {
            "messages": [{"role": "system", "content": r.instruction},
                         {"role": "user", "content": r.input},
                         {"role": "assistant", "content": r.output}],
            "stage": r.stage,
            "conversation_id": self.conversation_id,
            "turn": self.turn,
            "model": self.model,
        }


class ConversationStore:
    """Conversations in one SQLite file (WAL); see the module docstring.

    Args:
        path: The SQLite file, created with its folder on first use.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(path, timeout=30.0, check_same_thread=False,
                                     isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.executescript(_SCHEMA)

    @classmethod
    def open(cls, settings: Settings) -> ConversationStore:
        """The store of ``settings.home``."""
        return cls(conversations_path(settings))

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ConversationStore:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- writing --------------------------------------------------------------------------

    def save_turn(
        self,
        reply: Reply,
        *,
        user: str,
        conversation_id: str | None = None,
        earlier: Sequence[ChatMessage] = (),
        model: str = "",
    ) -> tuple[str, int]:
        """Store one answered turn, creating the conversation if ``conversation_id`` is None.

        Args:
            reply: The assistant's reply (stored whole, trace included).
            user: The user message it answers.
            conversation_id: The conversation to append to; ``None`` starts a new one.
            earlier: For a new conversation only: messages that came before (an API client
                may send a whole history without a stored conversation); stored first,
                without replies.
            model: The model spec answering (kept on a new conversation).

        Returns:
            The conversation id and the turn number (assistant replies so far, from 1).

        Raises:
            ConversationError: ``conversation_id`` names no conversation.
        """
        reply_json = json.dumps(reply.as_dict(), ensure_ascii=False)
        now = _now()
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                if conversation_id is None:
                    conversation_id = self._insert_conversation(
                        now, title=_title(earlier, user), model=model)
                    start = 0
                    rows: list[tuple[int, str, str, str | None]] = [
                        (i, m.role, m.content, None) for i, m in enumerate(earlier)]
                else:
                    found = self._conn.execute(
                        "SELECT COALESCE(MAX(idx) + 1, 0), "
                        "EXISTS(SELECT 1 FROM conversations WHERE id = ?) "
                        "FROM messages WHERE conversation = ?",
                        (conversation_id, conversation_id)).fetchone()
                    start, exists = int(found[0]), bool(found[1])
                    if not exists:
                        raise _unknown(conversation_id)
                    rows = []
                base = start + len(rows)
                rows += [(base, "user", user, None), (base + 1, "assistant", reply.text,
                                                       reply_json)]
                self._conn.executemany(
                    "INSERT INTO messages (conversation, idx, role, content, reply, created) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [(conversation_id, i, role, text, js, now) for i, role, text, js in rows])
                turn = self._conn.execute(
                    "SELECT COUNT(*) FROM messages WHERE conversation = ? AND role = 'assistant'",
                    (conversation_id,)).fetchone()[0]
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return conversation_id, int(turn)

    def _insert_conversation(self, now: str, *, title: str, model: str) -> str:
        while True:  # 48 random bits: a clash is rare, and then simply redrawn
            candidate = secrets.token_hex(6)
            try:
                self._conn.execute(
                    "INSERT INTO conversations (id, created, title, model) VALUES (?, ?, ?, ?)",
                    (candidate, now, title, model))
            except sqlite3.IntegrityError:
                continue
            return candidate

    # -- reading --------------------------------------------------------------------------

    def get(self, conversation_id: str) -> Conversation:
        """The conversation with exactly this id.

        Raises:
            ConversationError: No conversation has this id.
        """
        with self._lock:
            head = self._conn.execute(
                "SELECT id, created, title, model FROM conversations WHERE id = ?",
                (conversation_id,)).fetchone()
            if head is None:
                raise _unknown(conversation_id)
            rows = self._conn.execute(
                "SELECT idx, role, content, created, reply FROM messages "
                "WHERE conversation = ? ORDER BY idx", (conversation_id,)).fetchall()
        messages = tuple(
            StoredMessage(int(i), cast(Role, role), content, created,
                          json.loads(reply) if reply is not None else None)
            for i, role, content, created, reply in rows)
        return Conversation(head[0], head[1], head[2], head[3], messages)

    def resolve(self, id_or_prefix: str) -> str:
        """The full id of the one conversation whose id starts with ``id_or_prefix``.

        Lets ``--resume`` take the first few characters, as git does with commits.

        Raises:
            ConversationError: None, or several, match.
        """
        prefix = id_or_prefix.strip().lower()
        if not prefix:
            raise ConversationError("no conversation id given",
                                    hint="`freshwiki chat list` shows stored conversations.")
        pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        with self._lock:
            found = [str(r[0]) for r in self._conn.execute(
                "SELECT id FROM conversations WHERE id LIKE ? ESCAPE '\\' LIMIT 3",
                (pattern,))]
        if not found:
            raise _unknown(id_or_prefix)
        if len(found) > 1:
            raise ConversationError(
                f"conversation id {id_or_prefix!r} is ambiguous ({', '.join(found)}, ...)",
                hint="give more characters of the id.")
        return found[0]

    def summaries(self, limit: int = 50) -> list[ConversationSummary]:
        """Conversations, most recently continued first (``limit`` < 0: all)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT c.id, c.created, COALESCE(MAX(m.created), c.created), c.title, c.model, "
                "COUNT(m.idx) FROM conversations c LEFT JOIN messages m ON m.conversation = c.id "
                "GROUP BY c.id ORDER BY 3 DESC, c.rowid DESC LIMIT ?", (limit,)).fetchall()
        return [ConversationSummary(r[0], r[1], r[2], r[3], r[4], int(r[5])) for r in rows]

    def stage_examples(self, conversation_id: str | None = None) -> Iterator[StageExample]:
        """Every stored LLM call, conversation by conversation, turn by turn, stage by stage.

        Args:
            conversation_id: Only this conversation (exact id); all when ``None``.

        Raises:
            ConversationError: ``conversation_id`` names no conversation.
        """
        if conversation_id is not None:
            ids = [self.get(conversation_id).id]
        else:
            with self._lock:
                ids = [r[0] for r in self._conn.execute(
                    "SELECT id FROM conversations ORDER BY created, rowid")]
        for cid in ids:
            conversation = self.get(cid)
            turn = 0
            for message in conversation.messages:
                if message.role != "assistant":
                    continue
                turn += 1
                if message.reply is None:
                    continue
                for stage in message.reply.get("trace", {}).get("stages", []):
                    yield StageExample(cid, turn, conversation.model, _stage(stage))


def _unknown(conversation_id: str) -> ConversationError:
    return ConversationError(
        f"no conversation {conversation_id!r}",
        hint="`freshwiki chat list` (or GET /v1/conversations) shows stored conversations; "
        "is FRESHWIKI_HOME the same?")


def _title(earlier: Sequence[ChatMessage], user: str) -> str:
    first = next((m.content for m in earlier if m.role == "user"), user)
    text = " ".join(first.split())
    return text if len(text) <= _TITLE_CHARS else text[: _TITLE_CHARS - 1] + "…"


# -- rebuilding typed replies from stored JSON ---------------------------------------------


def _evidence(data: Mapping[str, Any]) -> Evidence:
    return Evidence(passage_id=str(data["passage_id"]), title=str(data["title"]),
                    section=tuple(data.get("section") or ()), text=str(data["text"]),
                    timestamp=data.get("timestamp"), score=float(data.get("score") or 0.0))


def _refinement(data: Mapping[str, Any] | None) -> Refinement | None:
    if not data:
        return None
    return Refinement(
        way=str(data.get("way", "")),
        feedback=tuple(CriterionFeedback(str(f["criterion"]), int(f["score"]),
                                         str(f.get("feedback", "")))
                       for f in data.get("feedback") or ()),
        rewritten=bool(data.get("rewritten")), note=str(data.get("note", "")),
        composed=str(data.get("composed", "")), refined=str(data.get("refined", "")))


def _stage(data: Mapping[str, Any]) -> StageRecord:
    return StageRecord(
        stage=str(data["stage"]), instruction=str(data.get("instruction", "")),
        input=str(data.get("input", "")), output=str(data.get("output", "")),
        latency_s=float(data.get("latency_s") or 0.0),
        prompt_tokens=int(data.get("prompt_tokens") or 0),
        completion_tokens=int(data.get("completion_tokens") or 0),
        cached_prompt_tokens=int(data.get("cached_prompt_tokens") or 0),
        cache_hit=bool(data.get("cache_hit")), error=str(data.get("error") or ""))


def reply_from_dict(data: Mapping[str, Any]) -> Reply:
    """Rebuild a :class:`Reply` from ``Reply.as_dict()`` (the stored JSON).

    Derived fields ``as_dict`` adds (``llm_calls``, token totals) are recomputed, not read, so
    a reply stored by an older version still rebuilds.
    """
    trace = data.get("trace") or {}

    def check(c: Mapping[str, Any]) -> ClaimCheck:
        return ClaimCheck(str(c["claim"]), c["verdict"],
                          tuple(_evidence(e) for e in c.get("evidence") or ()),
                          str(c.get("rationale", "")), str(c.get("correction", "")))

    mode = str(trace.get("mode", "checked"))
    rebuilt = TurnTrace(
        # Replies stored by earlier versions name their modes "fast" and "full".
        mode={"fast": "checked", "full": "wikichat"}.get(mode, mode),  # type: ignore[arg-type]
        today=str(trace.get("today", "")),
        queries=tuple(SearchQuery(str(q["text"]), str(q.get("time_intent", "none")),
                                  str(q.get("purpose", "answer")))
                      for q in trace.get("queries") or ()),
        passages=tuple(_evidence(p) for p in trace.get("passages") or ()),
        facts=tuple(Fact(str(f["text"]), _evidence(f["source"]))
                    for f in trace.get("facts") or ()),
        draft=trace.get("draft"),
        claims=tuple(check(c) for c in trace.get("claims") or ()),
        conflicts=tuple(Conflict(str(c["about"]), tuple(int(i) for i in c.get("facts") or ()))
                        for c in trace.get("conflicts") or ()),
        stages=tuple(_stage(s) for s in trace.get("stages") or ()),
        timings={str(k): float(v) for k, v in (trace.get("timings") or {}).items()},
        removed=tuple(str(r) for r in trace.get("removed") or ()),
        reply_checks=tuple(check(c) for c in trace.get("reply_checks") or ()),
        refinement=_refinement(trace.get("refinement")),
    )
    return Reply(
        text=str(data.get("text", "")),
        citations=tuple(Citation(int(c["number"]), _evidence(c["evidence"]))
                        for c in data.get("citations") or ()),
        trace=rebuilt,
        grounded=bool(data.get("grounded", True)),
    )
