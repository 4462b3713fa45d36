"""Replies sent in bounded pieces, each by a deadline that holds the reader to a rate.

A reply goes out in ``PIECE_BYTES`` (256 KB) pieces, each handed to the server only
when the previous one has left (uvicorn waits for the socket to drain), so a slow
reader never makes the server copy a whole reply into its socket buffer.

Every reply has a whole-response deadline that grows with what it has sent: the piece
that brings the total to ``n`` bytes must be handed over within ``grace + n /
min_rate`` seconds of the start (``Pace``). A reader slower than that is cut off: the
connection is aborted (through the ``convscope.abort`` extension that
``convscope.http.protocol`` puts in the scope; elsewhere the reply raises and the server closes
it). Builds never wait for readers (``convscope.traces.shared_builds``), so this bounds how long a
reader holds a reply's bytes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from ..traces.shared_builds import SharedBuild, SharedBuilds
from .disconnect import ClientGone, run_until_disconnect

__all__ = ["ABORT_EXTENSION", "PIECE_BYTES", "BuildStreamResponse", "DocumentResponse", "Pace", "SlowReader"]

PIECE_BYTES = 256 * 1024
ABORT_EXTENSION = "convscope.abort"


class SlowReader(Exception):
    """The client read slower than the minimum rate."""


@dataclass(frozen=True)
class Pace:
    """The minimum rate a reader must keep: ``grace`` seconds, then ``min_rate`` bytes/s."""

    grace: float
    min_rate: float

    def deadline(self, start: float, sent: int) -> float:
        """The loop time by which a reply that has sent ``sent`` bytes must have sent them."""
        return start + self.grace + sent / self.min_rate


class _PacedSender:
    def __init__(self, scope: Scope, send: Send, pace: Pace | None):
        self.scope, self.send, self.pace = scope, send, pace
        self.start = asyncio.get_running_loop().time()
        self.sent = 0

    async def __call__(self, message: Message) -> None:
        self.sent += len(message.get("body", b""))
        if self.pace is None:
            await self.send(message)
            return
        try:
            async with asyncio.timeout_at(self.pace.deadline(self.start, self.sent)):
                await self.send(message)
        except TimeoutError:
            abort = self.scope.get("extensions", {}).get(ABORT_EXTENSION, {}).get("abort")
            if abort is not None:
                abort()  # the server sees a disconnect; nothing is logged as an error
            raise SlowReader(f"the client read {self.sent} bytes slower than {self.pace.min_rate:g} bytes/s") from None

    async def pieces(self, blocks: AsyncIterator[bytes] | list[bytes], head_only: bool) -> None:
        """Each block in pieces of at most PIECE_BYTES, then the end of the body."""
        if not head_only:
            if isinstance(blocks, list):
                for block in blocks:
                    await self._block(block)
            else:
                async for block in blocks:
                    await self._block(block)
        await self({"type": "http.response.body", "body": b"", "more_body": False})

    async def _block(self, block: bytes) -> None:
        view = memoryview(block)
        for start in range(0, len(view), PIECE_BYTES):
            await self(
                {"type": "http.response.body", "body": bytes(view[start : start + PIECE_BYTES]), "more_body": True}
            )


async def _send(
    response: Response,
    scope: Scope,
    receive: Receive,
    send: Send,
    pace: Pace | None,
    blocks: AsyncIterator[bytes] | list[bytes],
) -> None:
    """Send the reply; stop at once when the client hangs up (uvicorn's ``send`` would
    go on taking pieces for nobody) or reads too slowly."""
    try:
        await run_until_disconnect(receive, _send_all(response, scope, send, pace, blocks))
    except ClientGone:
        pass


async def _send_all(
    response: Response, scope: Scope, send: Send, pace: Pace | None, blocks: AsyncIterator[bytes] | list[bytes]
) -> None:
    paced = _PacedSender(scope, send, pace)
    await paced({"type": "http.response.start", "status": response.status_code, "headers": response.raw_headers})
    try:
        await paced.pieces(blocks, head_only=scope.get("method") == "HEAD")
    except (SlowReader, OSError):
        if ABORT_EXTENSION in scope.get("extensions", {}):
            return  # aborted: the server has seen the client go
        raise


class DocumentResponse(Response):
    """Bytes already made (a document, a cached stream), sent in paced pieces;
    ``after()`` is called when the reply ends, however it ends (a shared build's reader
    leaves it then, so its bytes stay reserved while they are being sent)."""

    media_type = "application/json"

    def __init__(self, content: bytes, pace: Pace | None = None, after: Callable[[], None] | None = None, **kwargs):
        self.pace, self.after = pace, after
        super().__init__(content, **kwargs)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await _send(self, scope, receive, send, self.pace, [self.body] if self.body else [])
        finally:
            if self.after is not None:
                self.after()


class BuildStreamResponse(Response):
    """The blocks of a shared build as it makes them (no content-length), paced; the
    reader leaves the build when the reply ends, however it ends."""

    def __init__(self, builds: SharedBuilds, build: SharedBuild, pace: Pace | None = None, **kwargs):
        self.builds, self.build, self.pace = builds, build, pace
        self._left = False
        super().__init__(None, **kwargs)

    def init_headers(self, headers=None) -> None:  # no content-length: the body is streamed
        super().init_headers(headers)
        self.raw_headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]

    def leave(self) -> None:
        if not self._left:
            self._left = True
            self.builds.leave(self.build)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await _send(self, scope, receive, send, self.pace, self.build.read())
        finally:
            self.leave()
