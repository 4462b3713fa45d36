"""uvicorn's h11 protocol with the two deadlines uvicorn does not have.

- **Whole request** (``request_timeout``): from the moment a connection opens (or its
  previous reply ends) the client has that long to send its request line, headers and
  body. Past it, a request that is not all in gets a 408 in the service's error shape
  (when no reply has started) and the connection is closed. uvicorn's own timeouts are
  per pause (keep-alive) or absent (unfinished headers are never timed out).
- **Idle reader** (``idle_timeout``): when the socket's send buffer stays full (the
  client does not read) for that long, the connection is aborted: its buffered reply is
  dropped, the app sees a disconnect, and its stream stops.

It also offers the app a way to cut a reader off: the ASGI extension
``convscope.abort`` (``{"abort": callable}`` in the scope's ``extensions``), which
``server.replies`` calls when a reader falls below the minimum rate.

``convscope serve`` runs uvicorn with ``http=DeadlineH11Protocol``; the timeouts come
from the CONVSCOPE_* settings (every worker reads the same).
"""

from __future__ import annotations

import asyncio
import socket
import struct
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from .encoding import encode_json
from .errors import error_body
from .replies import ABORT_EXTENSION
from .security import SECURITY_HEADERS

__all__ = ["DeadlineH11Protocol", "timeout_reply"]


def timeout_reply(timeout: float) -> bytes:
    """The raw 408 reply (status line, headers, body) of a request not in after ``timeout`` s."""
    body = encode_json(error_body(
        ["request"], f"the request did not arrive in time: headers and body must be in within {timeout:g} s",
        "timeout"))
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close"), *SECURITY_HEADERS]
    head = b"HTTP/1.1 408 Request Timeout\r\n" + b"".join(k + b": " + v + b"\r\n" for k, v in headers)
    return head + b"\r\n" + body


class DeadlineH11Protocol(H11Protocol):
    """H11Protocol plus a whole-request deadline and an idle-reader deadline."""

    request_timeout: float | None = None  # seconds; None: from Settings.from_env()
    idle_timeout: float | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if type(self).request_timeout is None or type(self).idle_timeout is None:
            from .settings import Settings

            settings = Settings.from_env()
            type(self).request_timeout = settings.request_timeout
            type(self).idle_timeout = settings.idle_timeout
        self._request_deadline: asyncio.TimerHandle | None = None
        self._reader_deadline: asyncio.TimerHandle | None = None

    # -- whole request ------------------------------------------------------------------

    def _arm_request_deadline(self) -> None:
        self._cancel_request_deadline()
        self._request_deadline = self.loop.call_later(self.request_timeout, self._request_too_slow)

    def _cancel_request_deadline(self) -> None:
        if self._request_deadline is not None:
            self._request_deadline.cancel()
            self._request_deadline = None

    def _request_too_slow(self) -> None:
        self._request_deadline = None
        if self.transport.is_closing() or self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED):
            return
        if self.cycle is None or not self.cycle.response_started:
            self.transport.write(timeout_reply(self.request_timeout))
            if self.cycle is not None:
                self.cycle.response_started = self.cycle.response_complete = True
        if self.cycle is not None:
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_request_deadline()

    def handle_events(self) -> None:
        cycle = self.cycle
        super().handle_events()
        if self.cycle is not None and self.cycle is not cycle:  # a new request: its app task has not run yet
            self.cycle.scope.setdefault("extensions", {})[ABORT_EXTENSION] = {"abort": self._abort_reply}
        if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE) and self._request_deadline is not None:
            self._cancel_request_deadline()  # the whole request is in

    def _abort_reply(self) -> None:
        """A reply's reader is too slow (``server.replies``): drop the connection and
        what it never read; the app sees a disconnect."""
        self._drop_connection()

    def _drop_connection(self) -> None:
        """Close with a reset: the kernel discards the queued reply instead of
        delivering it at the reader's pace (a plain close would)."""
        if self.transport.is_closing():
            return
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
        self.transport.abort()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_request_deadline()  # the next request on this connection

    # -- idle reader --------------------------------------------------------------------

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._reader_deadline is None:
            self._reader_deadline = self.loop.call_later(self.idle_timeout, self._reader_too_slow)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._reader_deadline is not None:
            self._reader_deadline.cancel()
            self._reader_deadline = None

    def _reader_too_slow(self) -> None:
        self._reader_deadline = None
        self._drop_connection()  # drop what the client never read; connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_request_deadline()
        if self._reader_deadline is not None:
            self._reader_deadline.cancel()
            self._reader_deadline = None
        super().connection_lost(exc)
