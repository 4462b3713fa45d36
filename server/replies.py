"""Responses that hold a build slot while they send, and send in bounded pieces.

A document goes out in ``PIECE_BYTES`` (256 KB) pieces, each handed to the server only when the
previous one has left (uvicorn waits for the socket to drain), so a slow reader never
makes the server copy a whole document into its socket buffer. Both responses give
their slot (``server.gate.Slot``) back when they end, however they end: sent, client
gone, or never started.
"""

from __future__ import annotations

from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from .gate import Slot

__all__ = ["PIECE_BYTES", "DocumentResponse", "SlotStreamingResponse"]

PIECE_BYTES = 256 * 1024


class DocumentResponse(Response):
    """An encoded JSON document, sent in pieces; releases ``slot`` (if any) at the end."""

    media_type = "application/json"

    def __init__(self, content: bytes, slot: Slot | None = None, **kwargs):
        self.slot = slot
        super().__init__(content, **kwargs)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            body = memoryview(self.body)
            if scope.get("method") == "HEAD" or not body:
                await send({"type": "http.response.body", "body": b""})
                return
            for start in range(0, len(body), PIECE_BYTES):
                piece = bytes(body[start : start + PIECE_BYTES])
                await send({"type": "http.response.body", "body": piece,
                            "more_body": start + PIECE_BYTES < len(body)})
        finally:
            if self.slot is not None:
                self.slot.release()


class SlotStreamingResponse(StreamingResponse):
    """A StreamingResponse that releases ``slot`` when it ends."""

    def __init__(self, content, slot: Slot, **kwargs):
        self.slot = slot
        super().__init__(content, **kwargs)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.slot.release()
            close = getattr(self.body_iterator, "aclose", None)
            if close is not None:
                await close()  # a stream that never started still closes its trace generator
