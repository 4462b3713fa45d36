"""Security headers on every response, and the request body size limit.

Both are plain ASGI middleware (not BaseHTTPMiddleware), so streamed responses pass
through untouched and a client's disconnect still reaches the stream.
"""

from __future__ import annotations

import asyncio

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .encoding import encode_json
from .errors import error_body

__all__ = ["BodySizeLimit", "CONTENT_SECURITY_POLICY", "SecurityHeaders"]

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
                present = {name for name, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in present]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class _BodyTooLarge(HTTPException):
    def __init__(self, size: int, limit: int, exact: bool):
        how = "has" if exact else "has more than"
        super().__init__(
            status_code=413,
            detail=error_body(["body"], f"the request body {how} {size} bytes, the limit is {limit}", "too_large")["detail"],
        )


class _BodyTimeout(HTTPException):
    def __init__(self, received: int, timeout: float):
        super().__init__(
            status_code=408,
            detail=error_body(
                ["body"],
                f"the request body stopped arriving: nothing came for {timeout:g} s after {received} bytes",
                "timeout",
            )["detail"],
        )


class BodySizeLimit:
    """Refuses request bodies over ``limit`` bytes with a 413 naming both numbers, and
    bodies that stall for ``timeout`` seconds with a 408.

    A declared Content-Length over the limit is refused before the body is read; a
    chunked body is counted as it arrives and refused once it passes the limit. The
    timeout applies only while the body is arriving (afterwards the app waits on
    ``receive`` for the client's disconnect during a stream, which may take long).
    """

    def __init__(self, app: ASGIApp, limit: int, timeout: float = 15.0) -> None:
        self.app = app
        self.limit = limit
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            body = encode_json(
                error_body(["body"], f"the request body has {int(declared)} bytes, the limit is {self.limit}", "too_large")
            )
            await send(
                {
                    "type": "http.response.start",
                    "status": 413,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"connection", b"close"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        received = 0
        body_done = False
        limit, timeout = self.limit, self.timeout

        async def counting_receive() -> Message:
            nonlocal received, body_done
            if body_done:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), timeout)
            except asyncio.TimeoutError:
                raise _BodyTimeout(received, timeout) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise _BodyTooLarge(limit, limit, exact=False)
                body_done = not message.get("more_body", False)
            else:
                body_done = True
            return message

        await self.app(scope, counting_receive, send)
