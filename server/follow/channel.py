"""One worker's fan-out of a session's states to the subscribers it serves.

A channel keeps the last few states (``HISTORY``) and wakes its waiters when a new one
arrives; 300 subscribers of one session cost one event each. A connected subscriber
gets every state in order, so a student sees each step the teacher showed; one that
fell more than ``HISTORY`` states behind, and one that (re)connects, jumps to the
latest state: follow mode carries a state, and a late student wants the current one.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from functools import cached_property

from fastapi.sse import format_sse_event

__all__ = ["Channel", "KEEPALIVE", "Message", "follow"]


@dataclass(frozen=True)
class Message:
    """A session's state number ``seq`` (1, 2, ...) and its JSON text ``data``
    (``{"seq": .., "driver": .., "state": {..}}``); ``end`` marks a session that ended
    (``data`` then says why)."""

    seq: int
    data: str
    end: bool = False

    @cached_property
    def wire(self) -> bytes:
        """The message as one Server-Sent Event, encoded once for all subscribers."""
        if self.end:
            return format_sse_event(event="end", data_str=self.data)
        return format_sse_event(event="state", id=str(self.seq), data_str=self.data)


HISTORY = 32  # states a channel keeps for subscribers that are a little behind
KEEPALIVE = Message(seq=-1, data="")  # yielded by follow() when nothing happened for a while


class Channel:
    def __init__(self) -> None:
        self.latest: Message | None = None
        self.recent: deque[Message] = deque(maxlen=HISTORY)  # ascending seq, ends with latest
        self.ended = False
        self.subscribers = 0
        self._changed = asyncio.Event()

    def post(self, message: Message) -> None:
        """Keep ``message`` if it is newer than the latest, and wake every waiter."""
        if message.end:
            self.ended = True
        elif self.latest is not None and message.seq <= self.latest.seq:
            return
        else:
            self.latest = message
            self.recent.append(message)
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def after(self, seq: int) -> list[Message]:
        """The states after ``seq`` in order, or only the latest if some were dropped."""
        latest = self.latest
        if latest is None or latest.seq <= seq:
            return []
        kept = [m for m in self.recent if m.seq > seq]
        return kept if kept[0].seq == seq + 1 else [latest]

    async def wait(self, timeout: float) -> None:
        """Until the next post, or ``timeout`` seconds."""
        changed = self._changed
        try:
            async with asyncio.timeout(timeout):  # no task per waiter, unlike wait_for
                await changed.wait()
        except TimeoutError:
            pass


async def follow(
    channel: Channel,
    last_seq: int,
    alive: Callable[[], Awaitable[bool]],
    check_every: float,
) -> AsyncIterator[Message]:
    """The messages a subscriber that has seen ``last_seq`` must get: the latest state
    at once if it is newer (a reconnect resyncs), then every newer state in order
    (``Channel.after``), then an end
    message when the session ends or ``alive()`` says it expired (asked every
    ``check_every`` seconds without news; KEEPALIVE when it is still alive)."""
    channel.subscribers += 1
    try:
        latest = channel.latest
        if latest is not None and latest.seq > last_seq:
            last_seq = latest.seq
            yield latest
        while True:
            news = channel.after(last_seq)
            if news:
                for message in news:
                    last_seq = message.seq
                    yield message
                continue
            if channel.ended:
                yield Message(seq=last_seq, data='{"reason":"ended"}', end=True)
                return
            before = channel.latest
            await channel.wait(check_every)
            if channel.latest is before and not channel.ended:
                if not await alive():
                    yield Message(seq=last_seq, data='{"reason":"expired"}', end=True)
                    return
                yield KEEPALIVE
    finally:
        channel.subscribers -= 1
