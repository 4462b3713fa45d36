"""Build slots: at most ``max_builds`` builds and streams run at once in one worker.

A request that computes a trace takes a slot for as long as it builds and sends (a
document is held only while its slot is); an excess request waits at most
``queue_timeout`` seconds, then gets a 503 with ``Retry-After``. A client that hangs up
while it waits, or while its document builds, gives its slot back at once and its
build stops at its next chunk (``watch_disconnect`` + a cancel flag the build reads).

The slots are an asyncio semaphore on the event loop: waiting costs no thread.
"""

from __future__ import annotations

import asyncio
import math
import threading
from typing import Awaitable, Callable, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from .errors import ApiError

__all__ = ["BuildGate", "ClientGone", "Slot", "build_until_disconnect", "run_until_disconnect"]

T = TypeVar("T")


class ClientGone(Exception):
    """The client disconnected before its reply was ready."""


class Slot:
    """One taken slot; ``release`` gives it back (once, however often it is called)."""

    def __init__(self, gate: "BuildGate"):
        self._gate = gate
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._gate._release()


class BuildGate:
    """``slots`` concurrent builds; waits of at most ``timeout`` seconds."""

    def __init__(self, slots: int, timeout: float):
        self.slots = slots
        self.timeout = timeout
        self._semaphore: asyncio.Semaphore | None = None
        self.running = 0
        self.waiting = 0

    def _sem(self) -> asyncio.Semaphore:
        if self._semaphore is None:  # made on the serving loop, on first use
            self._semaphore = asyncio.Semaphore(self.slots)
        return self._semaphore

    def _release(self) -> None:
        self.running -= 1
        self._sem().release()

    def busy(self) -> ApiError:
        retry = max(1, math.ceil(self.timeout))
        return ApiError(
            503, ["request"],
            f"the server is busy: {self.slots} traces are being built or sent by this worker and none "
            f"finished within {self.timeout:g} s; try again in {retry} s",
            "busy", headers={"Retry-After": str(retry)},
        )

    async def acquire(self, request: Request) -> Slot:
        """A slot, or ApiError 503 after ``timeout`` s, or ClientGone if the client left."""
        self.waiting += 1
        try:
            await run_until_disconnect(request, asyncio.wait_for(self._sem().acquire(), self.timeout))
        except asyncio.TimeoutError:
            raise self.busy() from None
        finally:
            self.waiting -= 1
        self.running += 1
        return Slot(self)

    def stats(self) -> dict[str, int]:
        return {"slots": self.slots, "running": self.running, "waiting": self.waiting}


async def _disconnected(request: Request) -> None:
    """Returns when the client has gone (the request body has been read already)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def run_until_disconnect(request: Request, work: Awaitable[T]) -> T:
    """``work``'s result, or ClientGone (``work`` cancelled) when the client leaves first."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_disconnected(request))
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


async def build_until_disconnect(request: Request, build: Callable[[threading.Event], T]) -> T:
    """``build(cancel)`` in a worker thread; when the client leaves, ``cancel`` is set
    (the build stops at its next chunk) and ClientGone is raised at once."""
    cancel = threading.Event()
    try:
        return await run_until_disconnect(request, run_in_threadpool(build, cancel))
    except BaseException:
        cancel.set()
        raise
