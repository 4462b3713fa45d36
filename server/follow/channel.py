"""One worker's fan-out of a session's latest state to the subscribers it serves.

Follow mode carries a state, not a log: a subscriber that falls behind gets the latest
state, not every state in between. So a channel keeps only its latest message and wakes
its waiters when it changes; 300 subscribers of one session cost one event each.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import AsyncIterator, Awaitable, Callable

__all__ = ["Channel", "Message", "follow"]


@dataclass(frozen=True)
class Message:
    """A session's state number ``seq`` (1, 2, ...) and its JSON text ``data``
    (``{"seq": .., "state": {..}}``); ``end`` marks a session that ended."""

    seq: int
    data: str
    end: bool = False


class Channel:
    def __init__(self) -> None:
        self.latest: Message | None = None
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
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def wait(self, timeout: float) -> None:
        """Until the next post, or ``timeout`` seconds."""
        changed = self._changed
        try:
            await asyncio.wait_for(changed.wait(), timeout)
        except TimeoutError:
            pass


async def follow(
    channel: Channel,
    last_seq: int,
    alive: Callable[[], Awaitable[bool]],
    check_every: float,
) -> AsyncIterator[Message]:
    """The messages a subscriber that has seen ``last_seq`` must get: the latest state
    at once if it is newer (a reconnect resyncs), then each newer state, then an end
    message when the session ends or ``alive()`` says it expired (asked every
    ``check_every`` seconds without news)."""
    channel.subscribers += 1
    try:
        while True:
            latest = channel.latest
            if latest is not None and latest.seq > last_seq:
                last_seq = latest.seq
                yield latest
                continue
            if channel.ended:
                yield Message(seq=last_seq, data='{"reason":"ended"}', end=True)
                return
            before = channel.latest
            await channel.wait(check_every)
            if channel.latest is before and not channel.ended and not await alive():
                yield Message(seq=last_seq, data='{"reason":"expired"}', end=True)
                return
    finally:
        channel.subscribers -= 1
