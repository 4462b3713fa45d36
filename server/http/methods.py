"""The two methods HTTP asks of every resource that Starlette's router leaves out for
FastAPI's routes: OPTIONS answers with the route's real ``Allow``, and HEAD works
wherever GET does. A method a route does not take is the router's own 405 (its
``Allow`` completed by ``allow_header`` in errors.py).

The methods come from the app's own routes (Starlette's ``route.matches`` tried with
each method), so a new route needs nothing here. A CORS preflight (an OPTIONS with
``Access-Control-Request-Method``) is left to the CORS middleware when there is one.
Paths no route matches are the page's files (``app.frontend`` in app.py: GET and HEAD).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from starlette.datastructures import Headers
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["MethodRules", "allow_header"]

_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def allow_header(methods: set[str]) -> str:
    """The ``Allow`` of a resource whose routes take ``methods``: with OPTIONS, and HEAD
    beside GET, in the usual order."""
    methods = set(methods) | {"OPTIONS"}
    if "GET" in methods:
        methods.add("HEAD")
    return ", ".join(sorted(methods, key=lambda m: _ORDER.index(m) if m in _ORDER else len(_ORDER)))


class MethodRules:
    """ASGI middleware over the FastAPI app ``router_app`` (whose routes it reads)."""

    CACHE_PATHS = 1024  # paths whose methods are remembered (matching costs ~0.5 ms a method)

    def __init__(self, app: ASGIApp, router_app: Any, cors: bool = False) -> None:
        self.app = app
        self.router_app = router_app
        self.cors = cors
        self._known: OrderedDict[str, frozenset[str] | None] = OrderedDict()

    def _match(self, scope: Scope) -> frozenset[str] | None:
        methods: set[str] = set()
        for route in self.router_app.router.routes:
            for method in _ORDER[:-1]:
                if route.matches({**scope, "method": method})[0] == Match.FULL:
                    methods.add(method)
        return frozenset(methods) or None

    def _allowed(self, scope: Scope) -> frozenset[str] | None:
        """Methods of the routes whose path matches (Starlette's own ``matches``); None
        when none does (a page file, or nothing). Remembered per path."""
        path = scope["path"]
        if path in self._known:
            self._known.move_to_end(path)
            return self._known[path]
        allowed = self._known[path] = self._match(scope)
        if len(self._known) > self.CACHE_PATHS:
            self._known.popitem(last=False)
        return allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        allowed = self._allowed(scope)
        if method == "OPTIONS":
            if self.cors and "access-control-request-method" in Headers(scope=scope):
                await self.app(scope, receive, send)
                return
            allow = allow_header(allowed if allowed is not None else {"GET"})
            await send(
                {
                    "type": "http.response.start",
                    "status": 204,
                    "headers": [(b"allow", allow.encode()), (b"content-length", b"0")],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        if method == "HEAD" and allowed is not None and "GET" in allowed:
            await self.app({**scope, "method": "GET"}, receive, _without_body(send))
            return
        await self.app(scope, receive, send)


def _without_body(send: Send) -> Send:
    """A send that passes the start (with its headers, Content-Length included) and
    empties every body message: HEAD answers as GET would, without the body."""

    async def head_send(message: Message) -> None:
        if message["type"] == "http.response.body":
            message = {**message, "body": b""}
        await send(message)

    return head_send
