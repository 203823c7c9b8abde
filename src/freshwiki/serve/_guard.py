"""What every request must satisfy before a route sees it: the server's front door.

The server runs on the user's own machine, and any web page the user opens can send it
requests: a ``text/plain`` POST needs no CORS preflight, so a page on another site could make
the local model work and fill the conversation store, and a DNS-rebinding page reaches
127.0.0.1 under its own host name. So, in order:

1. **Host** must be a name this server answers to (localhost, 127.0.0.1, ::1, the address
   it was started on, and names added with ``FRESHWIKI_ALLOWED_HOSTS``): 400 otherwise.
2. **Origin**, when a browser sends one, must be one of those hosts (any port) or an origin
   listed in ``FRESHWIKI_ALLOWED_ORIGINS``: 403 otherwise. The chat page itself is served
   from an allowed host, so it keeps working.
3. **API key**, when ``FRESHWIKI_API_KEY`` is set (required to listen on a non-loopback
   address): ``Authorization: Bearer KEY`` on everything but ``/healthz``, compared in
   constant time: 401 otherwise.
4. **JSON bodies only** on ``/v1/`` writes: ``Content-Type: application/json``, else 415.
5. **Body size** (``FRESHWIKI_MAX_BODY_BYTES``, 1 MB by default): a declared length over it
   is refused before reading (413), and a chunked body is counted as it arrives.

Refusals use the chat API's error shape (``{"error": {"message", "type", "code", "hint"}}``).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
OPEN_PATHS = frozenset({"/healthz"})
"""Paths that answer without the API key (a load balancer's liveness probe)."""
WRITES = frozenset({"POST", "PUT", "PATCH"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or address) only reaches this machine."""
    if host.strip("[]") in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def hostname(value: str) -> str:
    """The host of a ``Host`` header or origin netloc, without port or IPv6 brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value[1:]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class RequestGuard:
    """ASGI middleware applying the checks of the module docstring.

    Args:
        app: The application behind the guard.
        hosts: Host names (no ports) requests may be addressed to.
        origins: Full origins (``scheme://host[:port]``) allowed besides those of ``hosts``.
        api_key: The bearer token every request but ``/healthz`` must carry (``None``: none).
        max_body_bytes: The largest request body accepted.
    """

    def __init__(self, app: ASGIApp, *, hosts: Iterable[str], origins: Iterable[str] = (),
                 api_key: str | None = None, max_body_bytes: int = 1_000_000) -> None:
        self.app = app
        self.hosts = frozenset(h.strip("[]").lower() for h in hosts if h)
        self.origins = frozenset(o.rstrip("/").lower() for o in origins if o)
        self.api_key = api_key or None
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await _send_error(send, *refusal)
            return
        if scope["method"] not in WRITES:
            await self.app(scope, receive, send)
            return
        # Read the body first (it is at most max_body_bytes), counting as it arrives: a
        # chunked body has no length to check up front, and an error raised while a route
        # reads it would come back as FastAPI's 400, not as 413.
        chunks: list[bytes] = []
        received = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            received += len(chunks[-1])
            if received > self.max_body_bytes:
                await _send_error(send, *self._too_large())
                return
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _too_large(self) -> tuple[int, str, str]:
        return (413, f"the request body is over the limit of {self.max_body_bytes:,} bytes",
                "send less (chat: continue with conversation_id instead of the whole history), "
                "or raise FRESHWIKI_MAX_BODY_BYTES.")

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str, str] | None:
        host = hostname(headers.get("host", ""))
        if host not in self.hosts:
            return (400, f"this server does not answer to host {host or '(none)'!r}",
                    "address it as 127.0.0.1 or localhost, or add the name to "
                    "FRESHWIKI_ALLOWED_HOSTS.")
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            return (403, f"requests from origin {origin!r} are not allowed",
                    "web pages of other sites may not use this server; add the origin to "
                    "FRESHWIKI_ALLOWED_ORIGINS if you trust it.")
        path = scope.get("path", "")
        if self.api_key is not None and path not in OPEN_PATHS:
            given = headers.get("authorization", "")
            scheme, _, token = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                    token.strip().encode(), self.api_key.encode()):
                return (401, "a valid API key is required",
                        "send the header 'Authorization: Bearer <FRESHWIKI_API_KEY>'.")
        if scope["method"] in WRITES:
            kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if path.startswith("/v1/") and kind != "application/json":
                return (415, f"the body must be JSON (Content-Type: application/json), "
                             f"not {kind or 'unspecified'!r}",
                        "send the request with the header 'Content-Type: application/json'.")
            declared = headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_body_bytes:
                return self._too_large()
        return None

    def _origin_allowed(self, origin: str) -> bool:
        origin = origin.rstrip("/").lower()
        if origin in self.origins:
            return True
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and hostname(parts.netloc) in self.hosts


async def _send_error(send: Send, status: int, message: str, hint: str) -> None:
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error",
                                 "code": status, "hint": hint}}).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="freshwiki"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
