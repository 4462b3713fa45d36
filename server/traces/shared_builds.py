"""Builds shared by every request that asks for the same reply at once.

A lecture hall opens one lesson within the same second: the first request starts its
build, the others join it, and all read the same blocks as they are made (300 first
loads of a preset cost one build). A build is not any one reader's: it runs in its own
task, holds its grant (``convscope.traces.build_slots``) while it makes its blocks, gives the slot back
the moment it has made the last one, and keeps its bytes reserved until its last reader
is done. When every reader has left before it ends, it is cancelled (and stops at its
next chunk).

The blocks are kept in memory whole (their size is the reservation, bounded before any
work by the trace's predicted bytes), so a slow reader holds bytes, never a slot, and a
reader that joins late reads from the first block.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Hashable

from ..http.errors import ApiError
from .build_slots import BuildGate

__all__ = ["SharedBuild", "SharedBuilds"]


def _stopped() -> ApiError:
    return ApiError(
        503,
        ["request"],
        "the build was stopped: the server is shutting down; try again",
        "busy",
        headers={"Retry-After": "1"},
    )


Produce = Callable[[], AsyncIterator[bytes]]


class SharedBuild:
    """One build's blocks, read by any number of replies."""

    def __init__(self, key: Hashable) -> None:
        self.key = key
        self.blocks: list[bytes] = []
        self.size = 0
        self.done = False
        self.error: BaseException | None = None
        self.readers = 0
        self._changed = asyncio.Event()

    def _changes(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def _next_change(self) -> None:
        await self._changed.wait()

    def _append(self, block: bytes) -> None:
        self.blocks.append(block)
        self.size += len(block)
        self._changes()

    def _finish(self, error: BaseException | None = None) -> None:
        if not self.done:
            self.done, self.error = True, error
            self._changes()

    async def started(self) -> None:
        """Returns once the first block is made; raises the build's error when it failed
        before that (a 422, a 503: the reply's status is still to be chosen)."""
        while not self.blocks and not self.done:
            await self._next_change()
        if not self.blocks and self.error is not None:
            raise self.error

    async def whole(self) -> bytes:
        """All the blocks once the build has ended; raises its error if it failed."""
        while not self.done:
            await self._next_change()
        if self.error is not None:
            raise self.error
        return b"".join(self.blocks)

    async def read(self) -> AsyncIterator[bytes]:
        """The blocks from the first, as they are made, until the build ends."""
        index = 0
        while True:
            while index < len(self.blocks):
                yield self.blocks[index]
                index += 1
            if self.done:
                return
            await self._next_change()


class SharedBuilds:
    """The builds running in one worker, by key (the route and the request body)."""

    def __init__(self, gate: BuildGate):
        self.gate = gate
        self._running: dict[Hashable, SharedBuild] = {}
        self._tasks: dict[SharedBuild, asyncio.Task[None]] = {}
        self.started = 0  # builds started (the tests count coalescing with it)
        self.joined = 0  # requests that joined a build already running

    def join(
        self, key: Hashable, nbytes: int, produce: Produce, on_done: Callable[[SharedBuild], None] | None = None
    ) -> SharedBuild:
        """The build of ``key``, started now (reserving ``nbytes``) unless it is running;
        the caller is one of its readers until it calls ``leave``."""
        build = self._running.get(key)
        if build is None:
            build = SharedBuild(key)
            self._running[key] = build
            self._tasks[build] = asyncio.get_running_loop().create_task(self._run(key, build, nbytes, produce, on_done))
            self.started += 1
        else:
            self.joined += 1
        build.readers += 1
        return build

    def leave(self, build: SharedBuild) -> None:
        """One reader is done (read all, failed, or hung up)."""
        build.readers -= 1
        if build.readers > 0:
            return
        task = self._tasks.get(build)
        if task is not None and not build.done:
            self._forget(build)  # a request that comes now starts a build of its own
            task.cancel()  # nobody reads this one any more
        build._changes()  # a finished build waits for its last reader to go

    async def _run(
        self,
        key: Hashable,
        build: SharedBuild,
        nbytes: int,
        produce: Produce,
        on_done: Callable[[SharedBuild], None] | None,
    ) -> None:
        try:
            async with self.gate.reserve(nbytes) as grant:
                try:
                    async for block in produce():
                        build._append(block)
                finally:
                    grant.end_build()
                grant.shrink(build.size)
                self._forget(build)  # from now on a request reads the cache or builds anew
                build._finish()
                if on_done is not None:
                    on_done(build)
                while build.readers > 0:
                    await build._next_change()
        except asyncio.CancelledError:  # no reader left, or the server stops
            build._finish(_stopped())
        except Exception as exc:  # a refusal (422, 503) or a bug: every reader is told
            build._finish(exc)
        finally:
            self._forget(build)
            self._tasks.pop(build, None)

    def _forget(self, build: SharedBuild) -> None:
        if self._running.get(build.key) is build:
            del self._running[build.key]

    def stats(self) -> dict[str, int]:
        return {"builds_started": self.started, "builds_joined": self.joined, "builds_running": len(self._running)}
