"""This worker is stopping: ``convscope.http.protocol`` says so when uvicorn begins a graceful
shutdown, and the replies that would otherwise last until they are cut off (follow
mode's event streams) end first, telling their readers why."""

from __future__ import annotations

import asyncio

__all__ = ["stop", "stopping"]

_event: asyncio.Event | None = None


def stopping() -> asyncio.Event:
    """Set once this worker begins to stop (made on the serving loop, on first use)."""
    global _event
    if _event is None:
        _event = asyncio.Event()
    return _event


def stop() -> None:
    stopping().set()
