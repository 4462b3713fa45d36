"""Security headers on every response, the Host check, and the request body's size
and encoding.

All are plain ASGI middleware (not BaseHTTPMiddleware), so streamed responses pass
through untouched and a client's disconnect still reaches the stream.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .encoding import encode_json
from .errors import error_body

__all__ = ["CONTENT_SECURITY_POLICY", "HostCheck", "RequestBody", "SECURITY_HEADERS", "SecurityHeaders", "refuse"]

# Only the page's own origin; no inline scripts; PNG export needs data: and blob: images.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: blob:",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


class SecurityHeaders:
    """Adds the security headers to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"server"]
                present = {name for name, _ in headers}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in present]
                message = {**message, "headers": [*headers, *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _refusal(
    status: int, loc: list[str], msg: str, kind: str, extra: list[tuple[bytes, bytes]] = ()
) -> tuple[dict, dict]:
    body = encode_json(error_body(loc, msg, kind))
    start = {
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra],
    }
    return start, {"type": "http.response.body", "body": body}


async def refuse(
    send: Send, status: int, loc: list[str], msg: str, kind: str, extra: list[tuple[bytes, bytes]] = ()
) -> None:
    """Send a refusal in the service's error shape (the security headers are added by
    ``SecurityHeaders``, which wraps everything)."""
    for message in _refusal(status, loc, msg, kind, extra):
        await send(message)


class HostCheck:
    """400 for a Host header naming none of ``hosts`` (DNS rebinding: a page elsewhere
    that resolves its own name to this server's address cannot call the API).

    ``hosts``: names and addresses without ports; "*" accepts any. Requests from
    Starlette's in-process TestClient (client ("testclient", 50000), which no socket
    gives) are not checked.
    """

    def __init__(self, app: ASGIApp, hosts: frozenset[str]) -> None:
        self.app = app
        self.hosts = hosts
        self.any = "*" in hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] not in ("http", "websocket")
            or self.any
            or tuple(scope.get("client") or ()) == ("testclient", 50000)
        ):
            await self.app(scope, receive, send)
            return
        host = Headers(scope=scope).get("host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if name.startswith("[") and name.endswith("]"):
            name = name[1:-1]
        if name.lower() in self.hosts:
            await self.app(scope, receive, send)
            return
        shown = host[:60] or "(none)"
        await refuse(
            send,
            400,
            ["header", "host"],
            f"the Host header {shown!r} is not a name of this server; it answers to "
            f"{', '.join(sorted(self.hosts))} (add names with CONVSCOPE_ALLOWED_HOSTS)",
            "host_not_allowed",
        )


class _BodyTooLarge(HTTPException):
    def __init__(self, size: int, limit: int, exact: bool):
        how = "has" if exact else "has more than"
        super().__init__(
            status_code=413,
            detail=error_body(["body"], f"the request body {how} {size} bytes, the limit is {limit}", "too_large")[
                "detail"
            ],
        )


class _NotUtf8(HTTPException):
    def __init__(self, what: str):
        super().__init__(
            status_code=415,
            detail=error_body(["body"], f"the body must be UTF-8 encoded JSON; it {what}", "unsupported_media_type")[
                "detail"
            ],
        )


_BOMS = (
    (b"\xef\xbb\xbf", "starts with a UTF-8 byte order mark"),
    (b"\xff\xfe", "starts with a UTF-16 byte order mark"),
    (b"\xfe\xff", "starts with a UTF-16 byte order mark"),
)


def _content_type_problem(value: str | None) -> str | None:
    """Why a POST body's Content-Type is not UTF-8 JSON, or None (no header: taken as JSON)."""
    if value is None:
        return None
    kind, _, params = value.partition(";")
    kind = kind.strip().lower()
    if kind != "application/json" and not (kind.startswith("application/") and kind.endswith("+json")):
        return f"the body must be JSON sent as Content-Type application/json; got {value[:80]!r}"
    for param in params.split(";"):
        key, _, val = param.partition("=")
        if key.strip().lower() == "charset" and val.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return f"the body must be UTF-8 encoded JSON; the Content-Type says charset {val.strip()[:40]!r}"
    return None


class RequestBody:
    """Refuses request bodies over ``limit`` bytes with a 413 naming both numbers, POST
    bodies that are not UTF-8 JSON (another Content-Type or charset, a byte order mark,
    NUL bytes as UTF-16 and UTF-32 have) with a 415 naming what came.

    A declared Content-Length over the limit is refused before the body is read; a
    chunked body is counted as it arrives and refused once it passes the limit. (The
    deadline for the whole request is the protocol's: ``convscope.http.protocol``.)
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await refuse(
                send,
                413,
                ["body"],
                f"the request body has {int(declared)} bytes, the limit is {self.limit}",
                "too_large",
                [(b"connection", b"close")],
            )
            return
        if scope["method"] == "POST":
            problem = _content_type_problem(headers.get("content-type"))
            if problem is not None:
                await refuse(send, 415, ["header", "content-type"], problem, "unsupported_media_type")
                return
        received = 0
        body_done = False
        limit = self.limit

        async def counting_receive() -> Message:
            nonlocal received, body_done
            message = await receive()
            if body_done or message["type"] != "http.request":
                body_done = True
                return message
            chunk = message.get("body", b"")
            if received == 0:
                for bom, what in _BOMS:
                    if chunk.startswith(bom):
                        raise _NotUtf8(what)
            if b"\x00" in chunk:
                raise _NotUtf8("holds NUL bytes (UTF-16 or UTF-32 text?)")
            received += len(chunk)
            if received > limit:
                raise _BodyTooLarge(limit, limit, exact=False)
            body_done = not message.get("more_body", False)
            return message

        await self.app(scope, counting_receive, send)
