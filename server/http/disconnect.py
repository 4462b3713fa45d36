"""Watching for a client that hangs up while its reply is not ready yet."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from starlette.types import Receive

__all__ = ["ClientGone", "run_until_disconnect"]

T = TypeVar("T")


class ClientGone(Exception):
    """The client disconnected before its reply was ready."""


async def _disconnected(receive: Receive) -> None:
    """Returns when the client has gone (the request body has been read already)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def run_until_disconnect(receive: Receive, work: Awaitable[T]) -> T:
    """``work``'s result, or ClientGone (``work`` cancelled) when the client leaves first.

    ``receive`` is the request's (``request.receive``). ``work`` must own nothing that its cancellation could strand: the build gate's
    grants are taken by the shared build, never by the awaitable given here.
    """
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_disconnected(receive))
    try:
        done, _ = await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        watcher.cancel()
    if task in done:
        return task.result()
    task.cancel()
    raise ClientGone()
