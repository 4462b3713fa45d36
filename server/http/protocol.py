"""uvicorn's h11 protocol with the two deadlines uvicorn does not have.

- **Whole request** (``request_timeout``): from the moment a connection opens (or its
  previous reply ends) the client has that long to send its request line, headers and
  body. Past it, a request that is not all in gets a 408 in the service's error shape
  (when no reply has started) and the connection is closed. uvicorn's own timeouts are
  per pause (keep-alive) or absent (unfinished headers are never timed out).
- **Idle reader** (``idle_timeout``): when the socket's send buffer stays full (the
  client does not read) for that long, the connection is aborted: its buffered reply is
  dropped, the app sees a disconnect, and its stream stops.

- **Connection caps**: past ``max_connections`` open connections in this worker (by
  default the descriptor limit less 64), or ``client_max_connections`` from one client
  address, a new connection gets a raw 503 at once and is closed; the connections
  already open go on (the page and ``/api/health`` stay reachable for them).

It also offers the app a way to cut a reader off: the ASGI extension
``convscope.abort`` (``{"abort": callable}`` in the scope's ``extensions``), which
``convscope.http.replies`` calls when a reader falls below the minimum rate.

``convscope serve`` runs uvicorn with ``http=DeadlineH11Protocol``; the timeouts come
from the CONVSCOPE_* settings (every worker reads the same).
"""

from __future__ import annotations

import asyncio
import socket
import struct
from typing import TYPE_CHECKING, Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from .encoding import encode_json
from .errors import error_body
from .replies import ABORT_EXTENSION
from .security import SECURITY_HEADERS
from .stopping import stop

if TYPE_CHECKING:
    from ..settings import Settings

__all__ = [
    "DeadlineH11Protocol",
    "connection_cap",
    "descriptor_limit",
    "full_reply",
    "raise_descriptor_limit",
    "timeout_reply",
]


def _raw_reply(status: bytes, body: bytes, extra: list[tuple[bytes, bytes]] = []) -> bytes:  # noqa: B006 (read only)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *extra,
        *SECURITY_HEADERS,
    ]
    head = b"HTTP/1.1 " + status + b"\r\n" + b"".join(k + b": " + v + b"\r\n" for k, v in headers)
    return head + b"\r\n" + body


def timeout_reply(timeout: float) -> bytes:
    """The raw 408 reply (status line, headers, body) of a request not in after ``timeout`` s."""
    return _raw_reply(
        b"408 Request Timeout",
        encode_json(
            error_body(
                ["request"],
                f"the request did not arrive in time: headers and body must be in within {timeout:g} s",
                "timeout",
            )
        ),
    )


def full_reply(why: str) -> bytes:
    """The raw 503 of a connection over a cap: sent at once, before any request is read."""
    return _raw_reply(
        b"503 Service Unavailable", encode_json(error_body(["connection"], why, "busy")), [(b"retry-after", b"5")]
    )


def connection_cap(settings: Settings) -> int:
    """The open connections one worker accepts: ``max_connections``, or (0) the
    descriptor limit less 64 for files, threads and Redis."""
    if settings.max_connections:
        return settings.max_connections
    return max(16, descriptor_limit() - 64)


def descriptor_limit() -> int:
    try:
        import resource

        return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):  # not on this platform
        return 1024


def raise_descriptor_limit() -> tuple[int, int]:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit where allowed;
    (before, after). Workers started later inherit it."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        if want > soft:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        return soft, resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        limit = descriptor_limit()
        return limit, limit


class DeadlineH11Protocol(H11Protocol):
    """H11Protocol plus a whole-request deadline, an idle-reader deadline and caps on
    open connections (in all, and per client address)."""

    request_timeout: float | None = None  # seconds; None: from Settings.from_env()
    idle_timeout: float | None = None
    max_connections: int = 0
    client_max_connections: int = 0
    # this worker's open connections (one event loop per worker process)
    open_connections: int = 0
    open_by_client: dict[str, int] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if type(self).request_timeout is None or type(self).idle_timeout is None:
            from ..settings import Settings

            settings = Settings.from_env()
            type(self).request_timeout = settings.request_timeout
            type(self).idle_timeout = settings.idle_timeout
            type(self).max_connections = connection_cap(settings)
            type(self).client_max_connections = settings.client_max_connections
        self._request_deadline: asyncio.TimerHandle | None = None
        self._reader_deadline: asyncio.TimerHandle | None = None
        self._peer: str | None = None  # counted in open_by_client

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
        cls = type(self)
        peer = transport.get_extra_info("peername")
        host = str(peer[0]) if peer else "unknown"
        held = cls.open_by_client.get(host, 0)
        if cls.max_connections and cls.open_connections >= cls.max_connections:
            self._refuse(
                f"the server has {cls.open_connections} connections open, the most it takes "
                f"(CONVSCOPE_MAX_CONNECTIONS={cls.max_connections}); try again in 5 s"
            )
            return
        if cls.client_max_connections and held >= cls.client_max_connections:
            self._refuse(
                f"{host} has {held} connections open, the most one address may have "
                f"(CONVSCOPE_CLIENT_MAX_CONNECTIONS={cls.client_max_connections}); close some"
            )
            return
        self._peer = host
        cls.open_connections += 1
        cls.open_by_client[host] = held + 1
        self._arm_request_deadline()

    def _refuse(self, why: str) -> None:
        """Over a cap: a fast 503, and the connection closes (nothing is read)."""
        self.transport.write(full_reply(why))
        self.transport.close()

    def handle_events(self) -> None:
        cycle = self.cycle
        super().handle_events()
        if self.cycle is not None and self.cycle is not cycle:  # a new request: its app task has not run yet
            self.cycle.scope.setdefault("extensions", {})[ABORT_EXTENSION] = {"abort": self._abort_reply}
        if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE) and self._request_deadline is not None:
            self._cancel_request_deadline()  # the whole request is in

    def _abort_reply(self) -> None:
        """A reply's reader is too slow (``convscope.http.replies``): drop the connection and
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

    def shutdown(self) -> None:
        """uvicorn stops gracefully: long replies end now, saying why (convscope.http.stopping)."""
        stop()
        super().shutdown()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._peer is not None:
            cls = type(self)
            cls.open_connections -= 1
            left = cls.open_by_client.get(self._peer, 1) - 1
            if left > 0:
                cls.open_by_client[self._peer] = left
            else:
                cls.open_by_client.pop(self._peer, None)
            self._peer = None
        self._cancel_request_deadline()
        if self._reader_deadline is not None:
            self._reader_deadline.cancel()
            self._reader_deadline = None
        super().connection_lost(exc)
