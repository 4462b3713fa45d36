"""Fair shares: what one client address may hold and ask for at once, in one worker.

A shared classroom server must survive its students: one script (or one student's
reload loop) must not take what the others need. Per client address (the peer's, or
the one a trusted proxy names: uvicorn's ``--forwarded-allow-ips``):

- **replies in flight**: traces, streams, lesson files and ``/api/conv`` requests being
  built or sent (``client_max_replies``);
- **follow subscriptions**: open Server-Sent Event streams (``client_max_follows``);
- **API requests**: a token bucket of ``client_requests_per_second`` with a burst of
  ``client_burst`` (the page's own files are not counted: they are cheap and cached);
- **follow sessions opened** (``follow_opens_per_minute``) and **join-code lookups**
  (``joins_per_minute``), slower buckets: a join code cannot be enumerated.

Past a share, a 429 in the service's error shape with ``Retry-After``, naming the share
and its numbers. The counts live in this worker (each worker of ``--workers N`` has its
own, so a client's share is per worker). Idle clients are forgotten.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Receive, Scope, Send

from ..settings import Settings
from .encoding import encode_json
from .errors import error_body

__all__ = ["ClientShares", "FairShare", "TokenBucket"]

_REPLIES = re.compile(r"^/api/(trace|trace/stream|lesson|conv)$")
_FOLLOW_EVENTS = re.compile(r"^/api/follow/sessions/[^/]+/events$")
_FOLLOW_OPEN = "/api/follow/sessions"
_JOIN = re.compile(r"^/api/follow/join/")
FORGET_AFTER = 600.0  # seconds without a request before an idle client is forgotten
MAX_CLIENTS = 100_000  # addresses remembered at once; past it the idle are forgotten first


@dataclass
class TokenBucket:
    """``rate`` tokens a second up to ``burst``; ``take`` says how long until one is
    there (0: taken now)."""

    rate: float
    burst: float
    tokens: float = -1.0
    at: float = 0.0

    def take(self, now: float) -> float:
        if self.tokens < 0:
            self.tokens, self.at = self.burst, now
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate


@dataclass
class _Client:
    requests: TokenBucket
    opens: TokenBucket
    joins: TokenBucket
    replies: int = 0
    follows: int = 0
    seen: float = field(default=0.0)


class ClientShares:
    """The shares of every client address seen recently (one worker's)."""

    def __init__(self, settings: Settings, clock: Callable[[], float] = time.monotonic):
        self.settings = settings
        self.clock = clock
        self._clients: dict[str, _Client] = {}
        self._swept = 0.0

    def client(self, address: str) -> _Client:
        now = self.clock()
        found = self._clients.get(address)
        if found is None:
            if len(self._clients) >= MAX_CLIENTS or now - self._swept > FORGET_AFTER:
                self._sweep(now)
            s = self.settings
            found = self._clients[address] = _Client(
                TokenBucket(s.client_requests_per_second, s.client_burst),
                TokenBucket(s.follow_opens_per_minute / 60, s.follow_opens_per_minute),
                TokenBucket(s.joins_per_minute / 60, max(1, s.joins_per_minute // 3)),
            )
        found.seen = now
        return found

    def _sweep(self, now: float) -> None:
        self._swept = now
        idle = [a for a, c in self._clients.items() if not c.replies and not c.follows and now - c.seen > FORGET_AFTER]
        for address in idle:
            del self._clients[address]
        if len(self._clients) >= MAX_CLIENTS:  # a flood of addresses: forget the idle of any age
            for address in [a for a, c in self._clients.items() if not c.replies and not c.follows]:
                del self._clients[address]

    def stats(self) -> dict[str, int]:
        return {
            "clients": len(self._clients),
            "client_replies": sum(c.replies for c in self._clients.values()),
            "client_follows": sum(c.follows for c in self._clients.values()),
        }


def _refusal(what: str, retry: float) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    seconds = max(1, math.ceil(retry))
    body = encode_json(error_body(["request"], f"{what}; try again in {seconds} s", "too_many_requests"))
    return body, [
        (b"content-type", b"application/json"),
        (b"retry-after", str(seconds).encode()),
        (b"content-length", str(len(body)).encode()),
    ]


class FairShare:
    """ASGI middleware holding each client address to its shares (see the module)."""

    def __init__(self, app: ASGIApp, shares: ClientShares):
        self.app = app
        self.shares = shares

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith("/api/"):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        address = client[0] if client else "unknown"
        me = self.shares.client(address)
        s = self.shares.settings
        now = self.shares.clock()
        method = scope.get("method", "GET")
        kind = None
        refusal = None
        wait = me.requests.take(now)
        if wait:
            refusal = (
                f"too many requests from {address}: this server answers {s.client_requests_per_second:g} "
                f"API requests a second from one address (bursts of {s.client_burst})",
                wait,
            )
        elif method == "POST" and _REPLIES.match(path):
            if me.replies >= s.client_max_replies:
                refusal = (
                    f"{address} has {me.replies} traces being built or read, the most one address may have "
                    f"at once (CONVSCOPE_CLIENT_MAX_REPLIES={s.client_max_replies})",
                    1,
                )
            kind = "replies"
        elif method == "GET" and _FOLLOW_EVENTS.match(path):
            if me.follows >= s.client_max_follows:
                refusal = (
                    f"{address} follows {me.follows} class sessions already, the most one address may "
                    f"(CONVSCOPE_CLIENT_MAX_FOLLOWS={s.client_max_follows})",
                    5,
                )
            kind = "follows"
        elif method == "POST" and path == _FOLLOW_OPEN:
            wait = me.opens.take(now)
            if wait:
                refusal = (
                    f"{address} opened class sessions too often: {s.follow_opens_per_minute} a minute at most",
                    wait,
                )
        elif method == "GET" and _JOIN.match(path):
            wait = me.joins.take(now)
            if wait:
                refusal = (f"too many join codes tried from {address}: {s.joins_per_minute} a minute at most", wait)
        if refusal is not None:
            body, headers = _refusal(*refusal)
            await send({"type": "http.response.start", "status": 429, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        if kind is None:
            await self.app(scope, receive, send)
            return
        setattr(me, kind, getattr(me, kind) + 1)
        try:
            await self.app(scope, receive, send)
        finally:
            setattr(me, kind, getattr(me, kind) - 1)
            me.seen = self.shares.clock()
