"""The Redis broker: follow sessions shared by every worker and host of one class.

Install with ``pip install 'convscope[redis]'`` and set ``CONVSCOPE_FOLLOW_REDIS_URL``
(``convscope serve --workers 2 --redis-url redis://127.0.0.1:6379/0``). Redis holds
each session (join code, driver, state number, state) under keys that expire when the
session is idle, and carries each published state by pub/sub. Every change is one Lua
script, so two workers never interleave a check and a write. Each worker keeps one
pub/sub connection and fans a session's states out to its own subscribers
(``channel.Channel``): 300 students cost one Redis message per state per worker.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from .broker import (
    Answered,
    BrokerDown,
    CodeTaken,
    NoSession,
    QuestionClosed,
    StaleDriver,
    Tally,
    TooManyAnswers,
    TooManySessions,
    check_interval,
    state_message,
)
from .channel import Channel, Message, follow
from .session import Credentials

__all__ = ["RedisBroker", "PREFIX"]

PREFIX = "convscope:follow:"
REDIS_CONNECTIONS = 32  # per worker, besides its pub/sub connection
CONTROL = PREFIX + "control"  # always subscribed: the reader never waits on no channel
log = logging.getLogger("convscope.follow")


def _lua(script: str) -> str:
    """A script with the keys' prefix written in where it says %(prefix)s (Lua has braces
    of its own, so no str.format)."""
    return script.replace("%(prefix)s", PREFIX)


# KEYS: session hash, live set. ARGV: id, ttl in ms. Refreshes a session's expiry.
_TOUCH = _lua("""
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function touch(session_key, live_key, id, ttl)
  local code = redis.call('HGET', session_key, 'code')
  redis.call('PEXPIRE', session_key, ttl)
  redis.call('PEXPIRE', '%(prefix)sc:' .. code, ttl)
  redis.call('ZADD', live_key, now_ms() + tonumber(ttl), id)
end
""")

# KEYS: live set, session hash, code key. ARGV: id, code, ttl ms, limit, seq, state.
_CREATE = (
    _TOUCH
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms())
local open = redis.call('ZCARD', KEYS[1])
if open >= tonumber(ARGV[4]) then return {-1, open} end
if redis.call('EXISTS', KEYS[3]) == 1 then return {-2, open} end
redis.call('HSET', KEYS[2], 'code', ARGV[2], 'driver', 1, 'seq', ARGV[5], 'state', ARGV[6])
redis.call('SET', KEYS[3], ARGV[1])
touch(KEYS[2], KEYS[1], ARGV[1], ARGV[3])
return {1, open + 1}
"""
)

# KEYS: session hash, live set. ARGV: id, ttl ms, driver, state. Returns {seq} or {-1}/{-2, driver}.
_PUBLISH = _TOUCH + _lua(
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1, 0} end
local driver = tonumber(redis.call('HGET', KEYS[1], 'driver'))
if driver ~= tonumber(ARGV[3]) then return {-2, driver} end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('HSET', KEYS[1], 'state', ARGV[4])
touch(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
redis.call('PUBLISH', '%(prefix)sch:' .. ARGV[1],
  '{"seq":' .. seq .. ',"driver":' .. driver .. ',"state":' .. ARGV[4] .. '}')
return {seq, driver}
"""
)

# KEYS: session hash, live set. ARGV: id, ttl ms. Returns the new driver or -1.
_TAKE_OVER = (
    _TOUCH
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local driver = redis.call('HINCRBY', KEYS[1], 'driver', 1)
touch(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
return driver
"""
)

# KEYS: session hash, live set. ARGV: id. Returns 1, or -1 for no session.
_END = _lua("""
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local code = redis.call('HGET', KEYS[1], 'code')
redis.call('DEL', KEYS[1], '%(prefix)sc:' .. code)
redis.call('DEL', '%(prefix)sq:' .. ARGV[1], '%(prefix)sqv:' .. ARGV[1], '%(prefix)sqa:' .. ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('PUBLISH', '%(prefix)sch:' .. ARGV[1], 'end')
return 1
""")


# A session's class question: KEYS q (hash: number, text, open), qv (the pages that
# answered), qa (hash: answer key -> pages), each expiring with the session.

# KEYS: session hash, live set, q, qv, qa. ARGV: id, ttl ms, driver, text. Returns
# {number} or {-1}/{-2, driver}.
_ASK = _TOUCH + _lua(
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1, 0} end
local driver = tonumber(redis.call('HGET', KEYS[1], 'driver'))
if driver ~= tonumber(ARGV[3]) then return {-2, driver} end
local number = redis.call('HINCRBY', KEYS[3], 'number', 1)
redis.call('HSET', KEYS[3], 'text', ARGV[4], 'open', 1)
redis.call('DEL', KEYS[4], KEYS[5])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
touch(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
return {number, 0}
"""
)

# KEYS: session hash, q, qv, qa. ARGV: question, voter, key, limit, ttl ms. Returns
# {answers so far} or {-1} no session, {-2, latest, open} not open, {-3} answered, {-4} full.
_ANSWER = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1, 0, 0} end
local number = tonumber(redis.call('HGET', KEYS[2], 'number') or '0')
local open = redis.call('HGET', KEYS[2], 'open') == '1' and 1 or 0
if number ~= tonumber(ARGV[1]) or open == 0 then return {-2, number, open} end
if redis.call('SISMEMBER', KEYS[3], ARGV[2]) == 1 then return {-3, 0, 0} end
if redis.call('SCARD', KEYS[3]) >= tonumber(ARGV[4]) then return {-4, 0, 0} end
redis.call('SADD', KEYS[3], ARGV[2])
redis.call('HINCRBY', KEYS[4], ARGV[3], 1)
redis.call('PEXPIRE', KEYS[3], ARGV[5])
redis.call('PEXPIRE', KEYS[4], ARGV[5])
return {redis.call('SCARD', KEYS[3]), 0, 0}
"""

# KEYS: session hash, live set, q. ARGV: id, ttl ms, driver, question. Returns {1} or
# {-1} no session, {-2, driver} stale, {-3, latest, open} another question.
_CLOSE = _TOUCH + _lua(
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1, 0, 0} end
local driver = tonumber(redis.call('HGET', KEYS[1], 'driver'))
if driver ~= tonumber(ARGV[3]) then return {-2, driver, 0} end
local number = tonumber(redis.call('HGET', KEYS[3], 'number') or '0')
if number ~= tonumber(ARGV[4]) then
  return {-3, number, redis.call('HGET', KEYS[3], 'open') == '1' and 1 or 0}
end
redis.call('HSET', KEYS[3], 'open', 0)
touch(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
return {1, 0, 0}
"""
)

T = TypeVar("T")


def _answering(method: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Redis not answering (down, restarting, still loading its data) becomes
    BrokerDown: a 503 the page tries again, never a 500."""

    @functools.wraps(method)
    async def wrapper(self: RedisBroker, *args: Any, **kwargs: Any) -> T:
        try:
            return await method(self, *args, **kwargs)
        except self.unreachable as exc:
            raise BrokerDown(f"the class sessions' store (Redis) is not answering: {exc}") from exc

    return wrapper


class RedisBroker:
    """Sessions in Redis at ``url``; see the module's text."""

    def __init__(self, url: str, max_sessions: int, idle_seconds: float, unpublished_seconds: float | None = None):
        try:
            import redis.asyncio as redis
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise RuntimeError(
                "CONVSCOPE_FOLLOW_REDIS_URL is set but the redis package is missing: pip install 'convscope[redis]'"
            ) from exc
        self.url = url
        self.unreachable = (redis.ConnectionError, redis.TimeoutError, OSError)
        self.max_sessions = max_sessions
        self.idle_seconds = idle_seconds
        self._ttl_ms = max(1, int(idle_seconds * 1000))
        # a session no state was published to since it opened expires sooner (publish
        # and take-over refresh it with the idle TTL)
        self._opening_ttl_ms = min(self._ttl_ms, max(1, int((unpublished_seconds or idle_seconds) * 1000)))
        # a blocking pool: 300 students joining at once wait their turn for one of
        # REDIS_CONNECTIONS connections instead of failing with "Too many connections"
        pool = redis.BlockingConnectionPool.from_url(
            url, max_connections=REDIS_CONNECTIONS, timeout=20, decode_responses=True
        )
        self._pool = pool
        self._redis = redis.Redis(connection_pool=pool)
        self._scripts = {
            name: self._redis.register_script(body)
            for name, body in (
                ("create", _CREATE),
                ("publish", _PUBLISH),
                ("take_over", _TAKE_OVER),
                ("end", _END),
                ("ask", _ASK),
                ("answer", _ANSWER),
                ("close", _CLOSE),
            )
        }
        self._pubsub: Any = None
        self._reader: asyncio.Task | None = None
        self._channels: dict[str, Channel] = {}
        self._lock = asyncio.Lock()

    @staticmethod
    def _session_key(session: str) -> str:
        return f"{PREFIX}s:{session}"

    _live = PREFIX + "live"

    @_answering
    async def create(self, credentials: Credentials, state_text: str | None) -> None:
        seq = 0 if state_text is None else 1
        keys = [self._live, self._session_key(credentials.session), f"{PREFIX}c:{credentials.code}"]
        args = [
            credentials.session,
            credentials.code,
            self._opening_ttl_ms,
            self.max_sessions,
            seq,
            state_text or "null",
        ]
        status, open_sessions = await self._scripts["create"](keys=keys, args=args)
        if status == -1:
            raise TooManySessions(open_sessions, self.max_sessions)
        if status == -2:
            raise CodeTaken(credentials.code)

    @_answering
    async def resolve(self, code: str) -> str:
        session = await self._redis.get(f"{PREFIX}c:{code}")
        if session is None:
            raise NoSession(code)
        return session

    @_answering
    async def publish(self, session: str, driver: int, state_text: str) -> int:
        keys = [self._session_key(session), self._live]
        seq, current = await self._scripts["publish"](keys=keys, args=[session, self._ttl_ms, driver, state_text])
        if seq == -1:
            raise NoSession(session)
        if seq == -2:
            raise StaleDriver(current)
        return seq

    @_answering
    async def take_over(self, session: str) -> int:
        driver = await self._scripts["take_over"](
            keys=[self._session_key(session), self._live], args=[session, self._ttl_ms]
        )
        if driver == -1:
            raise NoSession(session)
        return driver

    @_answering
    async def end(self, session: str) -> None:
        if await self._scripts["end"](keys=[self._session_key(session), self._live], args=[session]) == -1:
            raise NoSession(session)

    @_answering
    async def exists(self, session: str) -> bool:
        return bool(await self._redis.exists(self._session_key(session)))

    # ---- class questions -------------------------------------------------------------

    @staticmethod
    def _question_keys(session: str) -> list[str]:
        return [f"{PREFIX}q:{session}", f"{PREFIX}qv:{session}", f"{PREFIX}qa:{session}"]

    @_answering
    async def ask(self, session: str, driver: int, question_text: str) -> int:
        keys = [self._session_key(session), self._live, *self._question_keys(session)]
        number, current = await self._scripts["ask"](keys=keys, args=[session, self._ttl_ms, driver, question_text])
        if number == -1:
            raise NoSession(session)
        if number == -2:
            raise StaleDriver(current)
        return number

    @_answering
    async def answer(self, session: str, question: int, voter: str, key: str, limit: int) -> int:
        keys = [self._session_key(session), *self._question_keys(session)]
        status, latest, open_now = await self._scripts["answer"](
            keys=keys, args=[question, voter, key, limit, self._ttl_ms]
        )
        if status == -1:
            raise NoSession(session)
        if status == -2:
            raise QuestionClosed(question, latest, bool(open_now))
        if status == -3:
            raise Answered(voter)
        if status == -4:
            raise TooManyAnswers(limit)
        return status

    async def _tally(self, session: str, question: int) -> Tally:
        q, _, qa = self._question_keys(session)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.exists(self._session_key(session))
            pipe.hmget(q, "number", "open", "text")
            pipe.hgetall(qa)
            exists, (number, open_now, text), counts = await pipe.execute()
        if not exists:
            raise NoSession(session)
        if int(number or 0) != question:
            raise QuestionClosed(question, int(number or 0), open_now == "1")
        return Tally(question, open_now == "1", text, {k: int(v) for k, v in counts.items()})

    @_answering
    async def tally(self, session: str, question: int) -> Tally:
        return await self._tally(session, question)

    @_answering
    async def close_question(self, session: str, driver: int, question: int) -> Tally:
        keys = [self._session_key(session), self._live, self._question_keys(session)[0]]
        status, latest, open_now = await self._scripts["close"](
            keys=keys, args=[session, self._ttl_ms, driver, question]
        )
        if status == -1:
            raise NoSession(session)
        if status == -2:
            raise StaleDriver(latest)
        if status == -3:
            raise QuestionClosed(question, latest, bool(open_now))
        return await self._tally(session, question)

    def _followers_key(self, session: str) -> str:
        return f"{PREFIX}n:{session}"  # a hash: worker process id -> its streams of the session

    @_answering
    async def followers(self, session: str) -> int:
        return sum(max(0, int(n)) for n in await self._redis.hvals(self._followers_key(session)))

    async def _count_follower(self, session: str, change: int) -> None:
        """This worker's streams of the session, in Redis for every worker to add up (a
        worker killed outright leaves its count until the session's keys expire)."""
        key = self._followers_key(session)
        try:
            await self._redis.hincrby(key, str(os.getpid()), change)
            await self._redis.pexpire(key, self._ttl_ms)
        except self.unreachable:
            pass  # a count is worth no error

    @_answering
    async def count(self) -> int:
        now_s, now_us = await self._redis.time()
        await self._redis.zremrangebyscore(self._live, "-inf", now_s * 1000 + now_us // 1000)
        return await self._redis.zcard(self._live)

    # ---- subscribers -------------------------------------------------------------

    async def _start_reader(self) -> None:
        if self._reader is None:
            self._pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
            await self._pubsub.subscribe(CONTROL)
            self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while True:
            try:
                item = await self._pubsub.get_message(timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis restarted: redis-py reconnects and resubscribes
                log.warning("follow: Redis pub/sub read failed (%s); retrying", exc)
                await asyncio.sleep(0.5)
                continue
            if item is None or item.get("type") != "message":
                continue
            channel = self._channels.get(item["channel"][len(PREFIX) + 3 :])
            if channel is None:
                continue
            data = item["data"]
            if data == "end":
                channel.post(Message(seq=0, data='{"reason":"ended"}', end=True))
            else:
                channel.post(Message(seq=json.loads(data)["seq"], data=data))

    async def _channel(self, session: str) -> Channel:
        async with self._lock:
            await self._start_reader()
            channel = self._channels.get(session)
            if channel is None:  # (subscribed first: a failed subscribe leaves no deaf channel)
                await self._pubsub.subscribe(f"{PREFIX}ch:{session}")
                channel = self._channels[session] = Channel()
            channel.subscribers += 1  # held until the subscriber's own count is taken
            return channel

    async def _release(self, session: str, channel: Channel) -> None:
        async with self._lock:
            if channel.subscribers == 0 and self._channels.get(session) is channel:
                del self._channels[session]
                try:
                    await self._pubsub.unsubscribe(f"{PREFIX}ch:{session}")
                except self.unreachable:
                    pass  # Redis is down: the resubscribe when it is back includes this channel; harmless

    async def subscribe(self, session: str, last_seq: int) -> AsyncIterator[Message]:
        try:
            channel = await self._channel(session)
        except self.unreachable as exc:
            raise BrokerDown(f"the class sessions' store (Redis) is not answering: {exc}") from exc
        held, counted = True, False
        try:
            # subscribed first, read second: a state published in between arrives twice,
            # and the channel keeps the newer one
            try:
                seq, driver, state = await self._redis.hmget(self._session_key(session), "seq", "driver", "state")
            except self.unreachable as exc:
                raise BrokerDown(f"the class sessions' store (Redis) is not answering: {exc}") from exc
            if seq is None:
                raise NoSession(session)
            if int(seq) > 0:
                channel.post(state_message(int(seq), int(driver), state))
            counted = True
            await self._count_follower(session, 1)
            # the hold is given back only now, with no await before follow() takes its
            # own: a channel that another subscriber's leaving saw empty meanwhile would
            # be unsubscribed under this one
            channel.subscribers -= 1
            held = False
            alive = lambda: self.exists(session)  # noqa: E731
            async for message in follow(channel, last_seq, alive, check_interval(self.idle_seconds)):
                yield message
        finally:
            if held:
                channel.subscribers -= 1
            if counted:
                await self._count_follower(session, -1)
            await self._release(session, channel)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            self._reader = None
        if self._pubsub is not None:
            await self._pubsub.aclose()
        await self._redis.aclose()
        await self._pool.disconnect()
