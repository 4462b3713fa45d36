"""Build slots and the reply buffer: what one worker spends on traces at once.

A build (a trace document, a stream, a lesson file) needs two things before it starts:

- a **slot** (CPU): at most ``slots`` builds run at once in one worker; a build gives
  its slot back the moment it ends, however fast its readers read;
- **bytes** of the reply buffer: a build reserves its predicted size
  (``convcore.trace.cost``, an upper bound known before any work) out of
  ``buffer_bytes``, so the replies a worker holds for slow readers never pass that
  bound; the reservation shrinks to the real size when the build ends and is given
  back when its last reader is done.

A request that cannot have both waits at most ``timeout`` seconds, then gets a 503 with
``Retry-After``. Waiters are served in arrival order, each as soon as what it asks for
is free (a small build does not wait behind a large one that does not fit yet).

Every grant is owned from the moment it is made: ``reserve`` is an async context
manager, and a waiter that is cancelled (its client left, its build was dropped) in
the same tick as its grant gives the grant back. There is no ``asyncio.wait_for``
around an acquire: on Python 3.11 it can swallow a cancellation that races a grant
(CPython bpo-42130), and every such race leaked a slot for good.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from ..http.errors import ApiError

__all__ = ["BuildGate", "Grant"]


@dataclass(eq=False)
class _Waiter:
    nbytes: int
    granted: asyncio.Future[None]


class Grant:
    """One build's slot and reserved bytes; each given back once, however often asked."""

    def __init__(self, gate: BuildGate, nbytes: int):
        self._gate = gate
        self.nbytes = nbytes
        self.has_slot = True

    def end_build(self) -> None:
        """The build has ended: its slot goes back (its bytes stay reserved)."""
        if self.has_slot:
            self.has_slot = False
            self._gate._give_back(slots=1, nbytes=0)

    def shrink(self, nbytes: int) -> None:
        """Keep only ``nbytes`` reserved (the build's real size, once known)."""
        spare = self.nbytes - max(0, nbytes)
        if spare > 0:
            self.nbytes -= spare
            self._gate._give_back(slots=0, nbytes=spare)

    def release(self) -> None:
        """Give back everything still held."""
        self.end_build()
        self.shrink(0)


class BuildGate:
    """``slots`` concurrent builds, ``buffer_bytes`` of replies held; waits of at most
    ``timeout`` seconds. Lives on one event loop (all its methods run on it)."""

    def __init__(self, slots: int, timeout: float, buffer_bytes: int):
        self.slots = slots
        self.timeout = timeout
        self.buffer_bytes = buffer_bytes
        self._free_slots = slots
        self._free_bytes = buffer_bytes
        self._waiters: deque[_Waiter] = deque()

    # -- accounting (synchronous: no await between a decision and its bookkeeping) ---------

    def _fits(self, nbytes: int) -> bool:
        return self._free_slots > 0 and nbytes <= self._free_bytes

    def _take(self, nbytes: int) -> Grant:
        self._free_slots -= 1
        self._free_bytes -= nbytes
        return Grant(self, nbytes)

    def _give_back(self, slots: int, nbytes: int) -> None:
        self._free_slots += slots
        self._free_bytes += nbytes
        self._grant_waiters()

    def _grant_waiters(self) -> None:
        for waiter in list(self._waiters):
            if self._free_slots == 0:
                break
            if waiter.granted.done():  # timed out or cancelled: no longer asking
                self._waiters.remove(waiter)
            elif waiter.nbytes <= self._free_bytes:
                self._waiters.remove(waiter)
                self._free_slots -= 1
                self._free_bytes -= waiter.nbytes
                waiter.granted.set_result(None)  # the slot and bytes are the waiter's now

    # -- asking ------------------------------------------------------------------------------

    def _too_large(self, nbytes: int) -> ApiError:
        return ApiError(
            413,
            ["request"],
            f"the reply would need {nbytes} bytes of this worker's reply buffer, which holds "
            f"{self.buffer_bytes} (CONVSCOPE_BUFFER_BYTES)",
            "too_large",
        )

    def busy(self) -> ApiError:
        retry = max(1, math.ceil(self.timeout))
        return ApiError(
            503,
            ["request"],
            f"the server is busy: {self.slots} traces are being built by this worker, or its reply buffer "
            f"({self.buffer_bytes} bytes) is held by replies being read, and neither freed within "
            f"{self.timeout:g} s; try again in {retry} s",
            "busy",
            headers={"Retry-After": str(retry)},
        )

    async def _acquire(self, nbytes: int) -> Grant:
        """A grant of one slot and ``nbytes``, or ApiError (503 after ``timeout`` s, 413
        when it could never fit). Cancellation gives back a grant made in the same tick."""
        if nbytes > self.buffer_bytes:
            raise self._too_large(nbytes)
        if not self._waiters and self._fits(nbytes):
            return self._take(nbytes)
        waiter = _Waiter(nbytes, asyncio.get_running_loop().create_future())
        self._waiters.append(waiter)
        self._grant_waiters()  # it may fit where the waiters before it do not
        timer = asyncio.get_running_loop().call_later(self.timeout, _expire, waiter.granted)
        try:
            await waiter.granted
        except TimeoutError:
            self._drop(waiter)
            raise self.busy() from None
        except BaseException:  # cancelled: a grant made meanwhile goes back at once
            if waiter.granted.done() and not waiter.granted.cancelled() and waiter.granted.exception() is None:
                self._give_back(slots=1, nbytes=nbytes)
            else:
                waiter.granted.cancel()
                self._drop(waiter)
            raise
        finally:
            timer.cancel()
        return Grant(self, nbytes)

    def _drop(self, waiter: _Waiter) -> None:
        try:
            self._waiters.remove(waiter)
        except ValueError:
            pass
        self._grant_waiters()  # a waiter that was first may have kept smaller ones waiting

    @asynccontextmanager
    async def reserve(self, nbytes: int) -> AsyncIterator[Grant]:
        """``async with gate.reserve(n) as grant``: the grant is given back when the block
        ends, however it ends; ``grant.end_build()`` gives the slot back earlier."""
        grant = await self._acquire(max(0, int(nbytes)))
        try:
            yield grant
        finally:
            grant.release()

    # -- what tests and /api/debug/stats read ----------------------------------------------

    @property
    def running(self) -> int:
        return self.slots - self._free_slots

    @property
    def waiting(self) -> int:
        return sum(1 for w in self._waiters if not w.granted.done())

    @property
    def held_bytes(self) -> int:
        return self.buffer_bytes - self._free_bytes

    def stats(self) -> dict[str, int]:
        return {
            "slots": self.slots,
            "running": self.running,
            "waiting": self.waiting,
            "buffer_bytes": self.buffer_bytes,
            "held_bytes": self.held_bytes,
        }


def _expire(granted: asyncio.Future[None]) -> None:
    if not granted.done():
        granted.set_exception(TimeoutError())
