"""The broker interface and the in-process broker.

A broker keeps the sessions (join code, current driver, latest state) and carries each
published state to every subscriber. ``MemoryBroker`` does it inside one process: right
for ``convscope serve`` with one worker. With several workers or hosts every process
must see every session: ``RedisBroker`` (``redis_broker``), chosen by
``CONVSCOPE_FOLLOW_REDIS_URL``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Protocol

from .channel import Channel, Message, follow
from .session import Credentials

__all__ = [
    "Answered",
    "BrokerDown",
    "Broker",
    "CodeTaken",
    "MemoryBroker",
    "NoSession",
    "QuestionClosed",
    "StaleDriver",
    "Tally",
    "TooManyAnswers",
    "TooManySessions",
    "check_interval",
    "state_message",
]


class BrokerDown(Exception):
    """The sessions' store (Redis) does not answer: the request can be tried again."""


class NoSession(LookupError):
    """No session with that id or join code (never made, ended, or expired)."""


class StaleDriver(Exception):
    """The page publishing is no longer the driver: another page took over with the secret."""

    def __init__(self, current: int):
        super().__init__(current)
        self.current = current


class CodeTaken(Exception):
    """Another open session has that join code (1 in 10^8 per open session): draw again."""


class TooManySessions(Exception):
    """The server holds as many sessions as its limit allows."""

    def __init__(self, open_sessions: int, limit: int):
        super().__init__(open_sessions, limit)
        self.open_sessions = open_sessions
        self.limit = limit


class QuestionClosed(Exception):
    """The class question asked is not open: the teacher closed it, or asked another
    since (``current``: the question open now, 0 for none)."""

    def __init__(self, question: int, current: int, open_now: bool):
        super().__init__(question, current, open_now)
        self.question = question
        self.current = current
        self.open_now = open_now


class Answered(Exception):
    """This page has answered this question already."""


class TooManyAnswers(Exception):
    """The question has as many answers as the server takes for one question."""

    def __init__(self, limit: int):
        super().__init__(limit)
        self.limit = limit


@dataclass(frozen=True)
class Tally:
    """A class question's state: its number, whether it is open, the question (JSON
    text, with its answer), and how many pages gave each answer (by its JSON key)."""

    question: int
    open: bool
    text: str
    counts: dict[str, int]

    @property
    def answered(self) -> int:
        return sum(self.counts.values())


def state_message(seq: int, driver: int, state_text: str) -> Message:
    """The message subscribers get for state number ``seq`` (``state_text`` is JSON)."""
    return Message(seq=seq, data=f'{{"seq":{seq},"driver":{driver},"state":{state_text}}}')


def check_interval(idle_seconds: float) -> float:
    """Seconds a quiet subscriber waits before asking whether its session expired."""
    return max(0.2, min(15.0, idle_seconds / 4))


class Broker(Protocol):
    idle_seconds: float

    async def create(self, credentials: Credentials, state_text: str | None) -> None:
        """Open a session (TooManySessions at the limit, CodeTaken)."""

    async def resolve(self, code: str) -> str:
        """The session id of a join code (NoSession)."""

    async def publish(self, session: str, driver: int, state_text: str) -> int:
        """Make ``state_text`` the session's state; its number (NoSession, StaleDriver)."""

    async def take_over(self, session: str) -> int:
        """A new driver number for the session; the old driver's publishes are refused."""

    async def end(self, session: str) -> None:
        """Close the session; its subscribers get an end message (NoSession)."""

    async def exists(self, session: str) -> bool: ...

    async def count(self) -> int: ...

    async def ask(self, session: str, driver: int, question_text: str) -> int:
        """Open a class question (the one before it closes); its number (NoSession,
        StaleDriver)."""

    async def answer(self, session: str, question: int, voter: str, key: str, limit: int) -> int:
        """Count one page's answer (``key``: its JSON) to the open question ``question``;
        the answers so far (NoSession, QuestionClosed, Answered, TooManyAnswers)."""

    async def tally(self, session: str, question: int) -> Tally:
        """The question's answers so far (NoSession, QuestionClosed when it is not the
        session's latest)."""

    async def close_question(self, session: str, driver: int, question: int) -> Tally:
        """Take no more answers to ``question``; its tally (NoSession, StaleDriver,
        QuestionClosed when it is not the session's latest)."""

    async def followers(self, session: str) -> int:
        """How many event streams follow the session now (every worker's)."""

    def subscribe(self, session: str, last_seq: int) -> AsyncIterator[Message]:
        """The session's states newer than ``last_seq``, then its end."""

    async def close(self) -> None: ...


@dataclass
class _Asked:
    """A session's latest class question."""

    number: int
    text: str
    open: bool = True
    voters: set[str] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class _Session:
    code: str
    touched: float
    published: bool = False  # a state was published after the opening one
    driver: int = 1
    seq: int = 0
    channel: Channel = field(default_factory=Channel)
    asked: _Asked | None = None


class MemoryBroker:
    """Sessions in this process's memory. ``clock`` is monotonic seconds (for tests).
    A session no state was published to since it opened ends after
    ``unpublished_seconds``; one that was, after ``idle_seconds`` without the teacher."""

    def __init__(
        self,
        max_sessions: int,
        idle_seconds: float,
        clock: Callable[[], float] = time.monotonic,
        unpublished_seconds: float | None = None,
    ):
        self.max_sessions = max_sessions
        self.idle_seconds = idle_seconds
        self.unpublished_seconds = min(idle_seconds, unpublished_seconds or idle_seconds)
        self._clock = clock
        self._sessions: dict[str, _Session] = {}
        self._codes: dict[str, str] = {}

    def _sweep(self) -> None:
        now = self._clock()
        for session_id in [
            s
            for s, v in self._sessions.items()
            if v.touched < now - (self.idle_seconds if v.published else self.unpublished_seconds)
        ]:
            self._drop(session_id, "expired")

    def _drop(self, session_id: str, reason: str) -> None:
        entry = self._sessions.pop(session_id)
        self._codes.pop(entry.code, None)
        entry.channel.post(Message(seq=entry.seq, data=f'{{"reason":"{reason}"}}', end=True))

    def _get(self, session_id: str) -> _Session:
        self._sweep()
        entry = self._sessions.get(session_id)
        if entry is None:
            raise NoSession(session_id)
        return entry

    async def create(self, credentials: Credentials, state_text: str | None) -> None:
        self._sweep()
        if len(self._sessions) >= self.max_sessions:
            raise TooManySessions(len(self._sessions), self.max_sessions)
        if credentials.code in self._codes:
            raise CodeTaken(credentials.code)
        entry = _Session(code=credentials.code, touched=self._clock())
        self._sessions[credentials.session] = entry
        self._codes[credentials.code] = credentials.session
        if state_text is not None:
            entry.seq = 1
            entry.channel.post(state_message(1, entry.driver, state_text))

    async def resolve(self, code: str) -> str:
        self._sweep()
        if code not in self._codes:
            raise NoSession(code)
        return self._codes[code]

    async def publish(self, session: str, driver: int, state_text: str) -> int:
        entry = self._get(session)
        if driver != entry.driver:
            raise StaleDriver(entry.driver)
        entry.seq += 1
        entry.touched = self._clock()
        entry.published = True
        entry.channel.post(state_message(entry.seq, driver, state_text))
        return entry.seq

    async def take_over(self, session: str) -> int:
        entry = self._get(session)
        entry.driver += 1
        entry.touched = self._clock()
        return entry.driver

    async def end(self, session: str) -> None:
        self._get(session)
        self._drop(session, "ended")

    async def exists(self, session: str) -> bool:
        self._sweep()
        return session in self._sessions

    async def count(self) -> int:
        self._sweep()
        return len(self._sessions)

    async def followers(self, session: str) -> int:
        entry = self._sessions.get(session)
        return entry.channel.subscribers if entry is not None else 0

    def _driving(self, session: str, driver: int) -> _Session:
        entry = self._get(session)
        if driver != entry.driver:
            raise StaleDriver(entry.driver)
        entry.touched = self._clock()
        return entry

    def _asked(self, entry: _Session, question: int) -> _Asked:
        asked = entry.asked
        if asked is None or asked.number != question:
            raise QuestionClosed(question, asked.number if asked else 0, bool(asked and asked.open))
        return asked

    async def ask(self, session: str, driver: int, question_text: str) -> int:
        entry = self._driving(session, driver)
        entry.asked = _Asked(number=(entry.asked.number if entry.asked else 0) + 1, text=question_text)
        return entry.asked.number

    async def answer(self, session: str, question: int, voter: str, key: str, limit: int) -> int:
        asked = self._asked(self._get(session), question)
        if not asked.open:
            raise QuestionClosed(question, asked.number, False)
        if voter in asked.voters:
            raise Answered(voter)
        if len(asked.voters) >= limit:
            raise TooManyAnswers(limit)
        asked.voters.add(voter)
        asked.counts[key] = asked.counts.get(key, 0) + 1
        return len(asked.voters)

    async def tally(self, session: str, question: int) -> Tally:
        asked = self._asked(self._get(session), question)
        return Tally(asked.number, asked.open, asked.text, dict(asked.counts))

    async def close_question(self, session: str, driver: int, question: int) -> Tally:
        asked = self._asked(self._driving(session, driver), question)
        asked.open = False
        return Tally(asked.number, asked.open, asked.text, dict(asked.counts))

    async def subscribe(self, session: str, last_seq: int) -> AsyncIterator[Message]:
        channel = self._get(session).channel
        async for message in follow(channel, last_seq, lambda: self.exists(session), check_interval(self.idle_seconds)):
            yield message

    async def close(self) -> None:
        for session_id in list(self._sessions):
            self._drop(session_id, "ended")
