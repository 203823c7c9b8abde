"""One conversation with the grounded chat: open or resume it, answer a turn, store it.

The terminal REPL (``freshwiki chat``) and the HTTP API (``/v1/chat/completions``) both talk
through a :class:`ChatSession`, so the rules live in one place: a message is checked before any
retrieval (:func:`~freshwiki.chat.conversations.check_message`); a turn is stored only once its
reply exists, user message and reply together (a failed turn leaves nothing behind, so a retry
never duplicates the question); a new conversation is created by its first stored turn; a
resumed one continues from its stored history.

A turn streams (:meth:`ChatSession.stream`): the deltas are the reply's released text, and
when the stream has been consumed the turn is stored and ``turn.reply``, ``turn.conversation_id``
and ``turn.number`` are set. :meth:`ChatSession.answer` is the same without streaming.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

from freshwiki.chat._types import ChatEngine, ChatMessage, Reply
from freshwiki.chat.conversations import ConversationStore, check_message


class SessionTurn:
    """One turn of a session, as it streams; stored when the stream ends.

    Attributes:
        message: The user's message.
    """

    def __init__(self, session: ChatSession, message: str, today: str | None) -> None:
        self._session = session
        self.message = message
        self._today = today
        self._reply: Reply | None = None
        self.conversation_id: str | None = None
        """The conversation the turn was stored in (set when the stream ends)."""
        self.number = 0
        """The turn's number in its conversation, from 1 (set when the stream ends)."""

    def __aiter__(self) -> AsyncIterator[str]:
        return self._deltas()

    async def _deltas(self) -> AsyncIterator[str]:
        session = self._session
        history = [*session.history, ChatMessage("user", self.message)]
        stream = session.engine.stream(history, today=self._today)
        async for delta in stream:
            yield delta
        reply = stream.reply
        self.conversation_id, self.number = await asyncio.to_thread(
            session.store.save_turn, reply, user=self.message,
            conversation_id=session.conversation_id,
            earlier=session.unsaved if session.conversation_id is None else (),
            model=session.model)
        session.conversation_id = self.conversation_id
        session.unsaved = []
        session.history = [*history, ChatMessage("assistant", reply.text)]
        session.last_reply = reply
        self._reply = reply

    @property
    def reply(self) -> Reply:
        """The finished reply.

        Raises:
            RuntimeError: the stream has not been consumed to the end.
        """
        if self._reply is None:
            raise RuntimeError("the turn is not finished: iterate over it to the end first")
        return self._reply


class ChatSession:
    """A conversation: the engine that answers it and the store that keeps it.

    Args:
        engine: Answers each turn.
        store: Where turns are kept.
        model: The model spec, stored with a new conversation (the teacher, for distillation).
        conversation_id: A stored conversation to continue (its history is loaded).
        history: Earlier messages of a conversation that is not stored yet (an API client
            may send a whole history): stored before the first turn, without replies.

    Raises:
        ConversationError: ``conversation_id`` names no stored conversation.
    """

    def __init__(self, engine: ChatEngine, store: ConversationStore, *, model: str = "",
                 conversation_id: str | None = None,
                 history: Sequence[ChatMessage] = ()) -> None:
        self.engine = engine
        self.store = store
        self.model = model
        self.conversation_id = conversation_id
        self.last_reply: Reply | None = None
        self.unsaved: list[ChatMessage] = []
        if conversation_id is not None:
            stored = store.get(conversation_id)
            self.history: list[ChatMessage] = stored.history
            self.last_reply = stored.last_reply()
        else:
            self.history = list(history)
            self.unsaved = list(history)

    @classmethod
    def resume(cls, engine: ChatEngine, store: ConversationStore, id_or_prefix: str, *,
               model: str = "") -> ChatSession:
        """Continue the stored conversation whose id starts with ``id_or_prefix``.

        Raises:
            ConversationError: none, or several, match.
        """
        return cls(engine, store, model=model,
                   conversation_id=store.resolve(id_or_prefix))

    @property
    def turns(self) -> int:
        """Assistant replies so far."""
        return sum(m.role == "assistant" for m in self.history)

    def new(self) -> None:
        """Start a new conversation (the next turn creates it)."""
        self.conversation_id, self.history, self.unsaved, self.last_reply = None, [], [], None

    def stream(self, message: str, *, today: str | None = None) -> SessionTurn:
        """Answer ``message``, streaming; stored when the stream has been consumed.

        Raises:
            MessageError: at once, for an empty message or one over the length limit.
        """
        check_message(message)
        return SessionTurn(self, message, today)

    async def answer(self, message: str, *, today: str | None = None) -> SessionTurn:
        """Answer ``message`` and store the turn; the finished turn (``.reply`` is set)."""
        turn = self.stream(message, today=today)
        async for _ in turn:
            pass
        return turn
