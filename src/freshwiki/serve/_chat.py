"""``/v1/chat/completions``: grounded chat behind OpenAI's wire format, plus stored conversations.

Any OpenAI client (``openai.OpenAI(base_url="http://127.0.0.1:8765/v1")``) can chat with the
corpus unchanged; what OpenAI's shape has no room for travels in one extension field,
``freshwiki``, on the completion (or on the last streamed chunk)::

    {"conversation_id": "3f2a...", "turn": 1, "text": "...[1]...", "grounded": true,
     "citations": [{"number": 1, "evidence": {...}}], "trace": {...}, "attribution": "..."}

Request fields beyond OpenAI's: ``conversation_id`` (continue a stored conversation: its stored
history plus the request's last message, which must be the user's; earlier request messages are
then ignored, the store being the truth) and ``today`` (ISO date the pipeline treats as now,
for reproducible answers). ``model`` is accepted and ignored: the server answers with the model
it was started with and names it in the response. System messages are dropped: the pipeline's
own instructions are what keep it grounded, so a client cannot talk it out of citing.

Errors never carry a stack trace; they use OpenAI's error body
(``{"error": {"message", "type", "code", "hint"}}``) so clients raise their usual exceptions:
422 for a malformed request or an empty message, 413 for a message over
:data:`~freshwiki.chat.conversations.MAX_MESSAGE_CHARS` or a history over
:data:`MAX_HISTORY_MESSAGES`, 404 for an unknown conversation, 503 when the LLM is down or
fails (or the server runs without chat). A failure after streaming began arrives as a final
``data: {"error": ...}`` event, which OpenAI's clients raise as an ``APIError``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from freshwiki.chat import ChatEngine, ChatMessage, Reply
from freshwiki.chat.conversations import (
    ConversationError,
    ConversationStore,
    MessageError,
    check_message,
)
from freshwiki.chat.session import ChatSession, SessionTurn
from freshwiki.errors import FreshwikiError
from freshwiki.llm import LLMError
from freshwiki.serve._search import ATTRIBUTION

MAX_HISTORY_MESSAGES = 200
"""Most messages one request may carry (413 beyond): the pipeline reads the whole history."""
RETRY_AFTER_S = 5
"""Seconds a client refused for a full chat queue is told to wait (``Retry-After``)."""
KEEP_ALIVE_S = 30
"""Seconds the server keeps an idle connection open: longer than :data:`RETRY_AFTER_S`.
Measured (``experiments/reliability.py``, 50 sessions): with uvicorn's default of 5 s, a
client that waited the 5 s it was told and reused its connection met the server closing it
at that moment and got a connection error instead of an answer."""
MAX_ASSISTANT_CHARS = 32_000
"""An earlier reply sent back in the history: ours are far shorter; more is not a reply."""

_log = logging.getLogger(__name__)


class ChatAPIError(Exception):
    """An error answer of the chat routes: status, message, hint, OpenAI error type."""

    def __init__(self, status: int, message: str, *, hint: str | None = None,
                 kind: str = "invalid_request_error", retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.hint = hint
        self.kind = kind
        self.retry_after = retry_after

    def body(self) -> dict[str, Any]:
        """OpenAI's error body, with freshwiki's hint beside the message."""
        return {"error": {"message": self.message, "type": self.kind, "code": self.status,
                          "hint": self.hint}}


def _engine_failure(exc: FreshwikiError) -> ChatAPIError:
    """503: the answer could not be made now (LLM down or failing), not the request's fault."""
    what = "the language model failed" if isinstance(exc, LLMError) else "the chat failed"
    return ChatAPIError(503, f"{what}: {exc.message}", hint=exc.hint,
                        kind="service_unavailable")


def _message_failure(exc: MessageError) -> ChatAPIError:
    return ChatAPIError(413 if exc.kind == "too_long" else 422, exc.message, hint=exc.hint)


class _RequestMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatCompletionRequest(BaseModel):
    """Body of ``POST /v1/chat/completions``: OpenAI's fields we use plus two extensions."""

    model_config = ConfigDict(extra="allow")  # temperature, max_tokens, ...: accepted, unused

    model: str = Field(default="", max_length=200)
    messages: list[_RequestMessage] = Field(min_length=1)
    stream: bool = False
    conversation_id: str | None = Field(default=None, max_length=64)
    today: dt.date | None = None


def _text(message: _RequestMessage, position: int) -> str:
    """A message's text: a string, or OpenAI's list of ``{"type": "text"}`` parts joined."""
    content = message.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if part.get("type") != "text" or not isinstance(part.get("text"), str):
            raise ChatAPIError(422, f"messages[{position}] has a {part.get('type')!r} part; "
                               "only text is supported")
        parts.append(part["text"])
    return "".join(parts)


def _history(body: ChatCompletionRequest) -> list[ChatMessage]:
    """The request's conversation as the engine takes it (system messages dropped)."""
    history: list[ChatMessage] = []
    for position, message in enumerate(body.messages):
        if message.role in ("system", "developer"):
            continue
        if message.role not in ("user", "assistant"):
            raise ChatAPIError(422, f"messages[{position}] has role {message.role!r}; "
                               "only system, user and assistant messages are supported")
        text = _text(message, position)
        if message.role == "assistant" and len(text) > MAX_ASSISTANT_CHARS:
            raise ChatAPIError(422, f"messages[{position}] (assistant) has {len(text):,} "
                               f"characters; the limit is {MAX_ASSISTANT_CHARS:,}",
                               hint="send earlier replies as the server returned them, or "
                               "continue with conversation_id.")
        history.append(ChatMessage(message.role, text))  # type: ignore[arg-type]
    if not history or history[-1].role != "user":
        raise ChatAPIError(422, "the last message must be the user's: there is nothing to answer")
    if len(history) > MAX_HISTORY_MESSAGES:
        raise ChatAPIError(413, f"{len(history)} messages; the limit is {MAX_HISTORY_MESSAGES}",
                           hint="continue with conversation_id, or start a new conversation.")
    for said in history:
        if said.role == "user":
            try:
                check_message(said.content)
            except MessageError as exc:
                raise _message_failure(exc) from exc
    return history


@dataclass(frozen=True)
class _Turn:
    """What one request asks: the history to answer and where to store the answer."""

    history: list[ChatMessage]
    conversation_id: str | None
    today: str | None

    @property
    def user(self) -> str:
        return self.history[-1].content


class ChatService:
    """The engine, the conversation store and the name the server answers as.

    Args:
        engine: The grounded chat; ``None`` serves every chat request a 503.
        store: Where turns are kept.
        model_name: Echoed as ``model`` in responses and stored with each conversation.
    """

    def __init__(self, engine: ChatEngine | None, store: ConversationStore,
                 model_name: str, *, queue: int = 4) -> None:
        self.engine = engine
        self.store = store
        self.model_name = model_name
        self.queue = max(1, queue)
        self.active = 0

    def admit(self) -> None:
        """Take one more turn, or refuse with 503 when ``queue`` turns are already under way.

        A local model answers one turn at a time, so extra turns only wait, each holding a
        connection; beyond the queue a client is told to come back rather than kept waiting.
        """
        if self.active >= self.queue:
            raise ChatAPIError(503, f"{self.active} chat turns are already under way; the "
                               f"server takes {self.queue} at once",
                               hint="retry in a few seconds, or raise FRESHWIKI_CHAT_QUEUE.",
                               kind="service_unavailable", retry_after=RETRY_AFTER_S)
        self.active += 1

    def release(self) -> None:
        """One admitted turn is over (answered, failed or abandoned)."""
        self.active = max(0, self.active - 1)

    async def released(self, events: AsyncIterator[str]) -> AsyncIterator[str]:
        """``events``, releasing the turn when the stream ends or the client goes away."""
        try:
            async for event in events:
                yield event
        finally:
            self.release()

    def _engine(self) -> ChatEngine:
        if self.engine is None:
            raise ChatAPIError(503, "chat is not enabled on this server",
                               hint="start it with `freshwiki serve` (without --no-chat).",
                               kind="service_unavailable")
        return self.engine

    def prepare(self, body: ChatCompletionRequest) -> _Turn:
        """Validate the request and resolve its history (stored history first, if any)."""
        history = _history(body)
        today = body.today.isoformat() if body.today else None
        if body.conversation_id is None:
            return _Turn(history, None, today)
        try:
            stored = self.store.get(body.conversation_id)
        except ConversationError as exc:
            raise ChatAPIError(404, exc.message, hint=exc.hint) from exc
        return _Turn([*stored.history, history[-1]], stored.id, today)

    def _session(self, turn: _Turn) -> ChatSession:
        """The conversation the request continues, or a new one with its earlier messages."""
        engine = self._engine()
        if turn.conversation_id is not None:
            return ChatSession(engine, self.store, model=self.model_name,
                               conversation_id=turn.conversation_id)
        return ChatSession(engine, self.store, model=self.model_name,
                           history=turn.history[:-1])

    def _extension(self, reply: Reply, conversation_id: str, number: int) -> dict[str, Any]:
        data = reply.as_dict()
        return {"conversation_id": conversation_id, "turn": number, "text": data["text"],
                "grounded": data["grounded"], "citations": data["citations"],
                "trace": data["trace"], "attribution": ATTRIBUTION}

    @staticmethod
    def _usage(reply: Reply) -> dict[str, int]:
        prompt, completion = reply.trace.prompt_tokens, reply.trace.completion_tokens
        return {"prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion}

    async def complete(self, turn: _Turn) -> dict[str, Any]:
        """Answer in one JSON body (``stream: false``)."""
        session = self._session(turn)
        try:
            done = await session.answer(turn.user, today=turn.today)
        except FreshwikiError as exc:
            raise _engine_failure(exc) from exc
        reply = done.reply
        assert done.conversation_id is not None
        return {
            "id": _completion_id(), "object": "chat.completion", "created": int(time.time()),
            "model": self.model_name,
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": reply.text}}],
            "usage": self._usage(reply),
            "freshwiki": self._extension(reply, done.conversation_id, done.number),
        }

    async def stream(self, turn: _Turn) -> AsyncIterator[str]:
        """Answer as SSE chunks; the first delta is awaited before this returns.

        Waiting for the first delta before the 200 goes out is what lets an LLM that is down
        answer 503 like the non-streaming form, instead of a 200 stream that dies at once.
        The deltas are the reply's released text in word-sized pieces: each sentence arrives
        once it has passed its check.
        """
        session = self._session(turn)
        try:
            running = session.stream(turn.user, today=turn.today)
            deltas = aiter(running)
            first: str | None = await anext(deltas)
        except StopAsyncIteration:
            first = None
        except FreshwikiError as exc:
            raise _engine_failure(exc) from exc
        return self._events(running, deltas, first)

    async def _events(self, running: SessionTurn, deltas: AsyncIterator[str],
                      first: str | None) -> AsyncIterator[str]:
        ident, created = _completion_id(), int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None, **extra: Any) -> str:
            data = {"id": ident, "object": "chat.completion.chunk", "created": created,
                    "model": self.model_name,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish,
                                 "logprobs": None}], **extra}
            return _sse(data)

        yield chunk({"role": "assistant", "content": first or ""}, None)
        try:
            async for delta in deltas:
                if delta:
                    yield chunk({"content": delta}, None)
            reply: Reply = running.reply
        except FreshwikiError as exc:
            yield _sse(_engine_failure(exc).body())
            return
        except Exception as exc:  # the 200 is out: say so in the stream, log the trace here
            _log.exception("chat stream failed")
            yield _sse(ChatAPIError(500, f"internal error ({type(exc).__name__}); see the "
                                    "server log", kind="server_error").body())
            return
        assert running.conversation_id is not None
        yield chunk({}, "stop", usage=self._usage(reply),
                    freshwiki=self._extension(reply, running.conversation_id, running.number))
        yield "data: [DONE]\n\n"


def _completion_id() -> str:
    return "chatcmpl-" + secrets.token_hex(12)


def _sse(data: dict[str, Any]) -> str:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


router = APIRouter(tags=["chat"])


def _service(request: Request) -> ChatService:
    service: ChatService = request.app.state.chat
    return service


async def _parse(request: Request) -> ChatCompletionRequest:
    """The body, validated here rather than by FastAPI so errors use OpenAI's error shape."""
    try:
        raw = await request.json()
    except ValueError as exc:
        raise ChatAPIError(400, "the body is not JSON",
                           hint="send a JSON object with model and messages.") from exc
    except RecursionError as exc:  # json recurses per level: b"[" * 10**5 fits in the limit
        raise ChatAPIError(400, "the body is JSON nested too deeply to be a chat request",
                           hint="send a JSON object with model and messages.") from exc
    try:
        return ChatCompletionRequest.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'body'}: {err['msg']}"
            for err in exc.errors()[:5])
        raise ChatAPIError(422, f"invalid request: {problems}",
                           hint="send OpenAI's shape: {\"model\": ..., \"messages\": "
                           "[{\"role\": \"user\", \"content\": ...}]}.") from exc


@router.post("/v1/chat/completions", response_model=None)
async def chat_completions(request: Request) -> dict[str, Any] | StreamingResponse:
    """OpenAI-compatible chat, answered from the corpus with citations (see module docs)."""
    service = _service(request)
    body = await _parse(request)
    turn = service.prepare(body)
    service.admit()
    if not body.stream:
        try:
            return await service.complete(turn)
        finally:
            service.release()
    try:
        events = await service.stream(turn)
    except BaseException:
        service.release()
        raise
    return StreamingResponse(service.released(events), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.get("/v1/conversations")
def list_conversations(request: Request, limit: int = 50) -> dict[str, Any]:
    """Stored conversations, most recently continued first."""
    summaries = _service(request).store.summaries(limit=max(1, min(limit, 1000)))
    return {"object": "list", "data": [dataclasses.asdict(s) for s in summaries]}


@router.get("/v1/conversations/{conversation_id}")
def get_conversation(request: Request, conversation_id: str) -> dict[str, Any]:
    """One stored conversation: every message, and each reply's citations and trace."""
    try:
        return _service(request).store.get(conversation_id).as_dict()
    except ConversationError as exc:
        raise ChatAPIError(404, exc.message, hint=exc.hint) from exc


def install_chat(app: FastAPI, service: ChatService) -> None:
    """Add the chat routes and the handler that turns :class:`ChatAPIError` into JSON."""
    app.state.chat = service
    app.include_router(router)

    async def handle(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ChatAPIError)
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after else None
        return JSONResponse(exc.body(), status_code=exc.status, headers=headers)

    app.add_exception_handler(ChatAPIError, handle)

