"""Follow mode's pure parts and in-process broker, without a server: the secret's hash,
join codes, bounded states, in-order delivery with a jump to the latest for a
subscriber that fell far behind, resync on (re)connect, driver take-over, idle expiry
with a fake clock, and the bound on open sessions."""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest

from convscope.follow.broker import MemoryBroker, NoSession, StaleDriver, TooManySessions
from convscope.follow.channel import HISTORY, KEEPALIVE, Channel, Message, follow
from convscope.follow.session import (
    CODE_ALPHABET,
    StateError,
    encode_state,
    new_credentials,
    normal_code,
    secret_matches,
    session_id_of,
)


def test_the_session_id_is_the_secrets_hash_and_only_the_secret_matches():
    c = new_credentials()
    assert c.session == hashlib.sha256(c.secret.encode()).hexdigest()[:32] == session_id_of(c.secret)
    assert secret_matches(c.secret, c.session)
    assert not secret_matches(c.secret[:-1], c.session) and not secret_matches(c.session, c.session)
    assert len({new_credentials().secret for _ in range(50)}) == 50
    assert set(c.code) <= set(CODE_ALPHABET) and not set("01OIL") & set(CODE_ALPHABET)
    assert normal_code(" ab3-k9q ") == "AB3K9Q"


def test_states_are_bounded_and_finite():
    assert encode_state({"step": 3, "view": {"projector": True}}, 100) == '{"step":3,"view":{"projector":true}}'
    with pytest.raises(StateError) as big:
        encode_state({"x": "é" * 60}, 100)  # {"x":"…"}: 8 + 120 bytes of UTF-8, 68 characters
    assert big.value.too_large and "128 bytes" in str(big.value) and "at most 100" in str(big.value)
    with pytest.raises(StateError) as nan:
        encode_state({"a": [1, {"b": float("nan")}]}, 1000)
    assert not nan.value.too_large and "nan" in str(nan.value)


async def _take(messages, n: int, timeout: float = 2.0) -> list[Message]:
    out = []

    async def run():
        async for m in messages:
            if m is not KEEPALIVE:
                out.append(m)
            if len(out) == n:
                return

    await asyncio.wait_for(run(), timeout)
    return out


async def _alive() -> bool:
    return True


def test_a_connected_subscriber_gets_every_state_in_order_and_a_late_one_the_latest():
    async def scenario():
        ch = Channel()
        ch.post(Message(1, "a"))
        live = follow(ch, 0, _alive, 5)
        assert [m.seq for m in await _take(live, 1)] == [1]
        for seq in (2, 3, 4):
            ch.post(Message(seq, "x"))
        ch.post(Message(3, "old"))  # an older state (another worker's echo) is ignored
        assert [m.seq for m in await _take(live, 3)] == [2, 3, 4]
        for seq in range(5, 5 + HISTORY + 10):  # more than the channel keeps
            ch.post(Message(seq, "x"))
        assert [m.seq for m in await _take(live, 1)] == [4 + HISTORY + 10]
        # a (re)connect resyncs to the latest state at once, whatever it had seen
        assert [m.seq for m in await _take(follow(ch, 7, _alive, 5), 1)] == [4 + HISTORY + 10]
        up_to_date = follow(ch, 4 + HISTORY + 10, _alive, 5)
        waiting = asyncio.ensure_future(_take(up_to_date, 1))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        ch.post(Message(100, "next"))
        assert [m.seq for m in await waiting] == [100]
        ch.post(Message(0, '{"reason":"ended"}', end=True))
        nxt, end = await _take(live, 2)
        assert nxt.seq == 100 and end.end and b"event: end" in end.wire

    asyncio.run(scenario())


def test_a_quiet_subscriber_gets_keepalives_then_the_end_when_the_session_expired():
    async def scenario():
        ch = Channel()
        alive = [True]

        async def check() -> bool:
            return alive[0]

        quiet = follow(ch, 0, check, 0.02)
        assert await asyncio.wait_for(quiet.__anext__(), 1) is KEEPALIVE
        alive[0] = False
        end = await asyncio.wait_for(quiet.__anext__(), 1)
        assert end.end and json.loads(end.data) == {"reason": "expired"}
        assert ch.subscribers == 1  # the generator is still open; closing it releases
        await quiet.aclose()
        assert ch.subscribers == 0

    asyncio.run(scenario())


def test_the_memory_broker_drives_takes_over_expires_and_bounds():
    async def scenario():
        now = [0.0]
        broker = MemoryBroker(max_sessions=2, idle_seconds=10, clock=lambda: now[0])
        a, b, c = new_credentials(), new_credentials(), new_credentials()
        await broker.create(a, '{"step":0}')
        await broker.create(b, None)
        with pytest.raises(TooManySessions) as full:
            await broker.create(c, None)
        assert (full.value.open_sessions, full.value.limit) == (2, 2)
        assert await broker.resolve(a.code) == a.session
        assert await broker.publish(a.session, 1, '{"step":1}') == 2
        assert await broker.take_over(a.session) == 2
        with pytest.raises(StaleDriver) as stale:
            await broker.publish(a.session, 1, '{"step":2}')
        assert stale.value.current == 2
        assert await broker.publish(a.session, 2, '{"step":2}') == 3
        (first,) = await _take(broker.subscribe(a.session, 0), 1)
        assert json.loads(first.data) == {"seq": 3, "driver": 2, "state": {"step": 2}}
        now[0] = 9.0
        await broker.publish(a.session, 2, '{"step":3}')  # a is busy, b idles
        now[0] = 15.0
        assert await broker.exists(a.session) and not await broker.exists(b.session)
        with pytest.raises(NoSession):
            await broker.resolve(b.code)
        await broker.create(c, None)  # b's place is free again
        assert await broker.count() == 2
        await broker.end(a.session)
        with pytest.raises(NoSession):
            await broker.publish(a.session, 2, "{}")

    asyncio.run(scenario())


def test_a_session_nothing_was_published_to_ends_in_minutes_not_in_the_hour():
    async def scenario():
        now = [0.0]
        broker = MemoryBroker(max_sessions=3, idle_seconds=3600, clock=lambda: now[0], unpublished_seconds=300)
        left, taught = new_credentials(), new_credentials()
        await broker.create(left, '{"step":0}')  # Class pressed, then nothing
        await broker.create(taught, '{"step":0}')
        now[0] = 200.0
        await broker.publish(taught.session, 1, '{"step":1}')
        now[0] = 301.0
        assert not await broker.exists(left.session)
        assert await broker.exists(taught.session)
        now[0] = 200.0 + 3599
        assert await broker.exists(taught.session)  # a published session has the hour
        now[0] = 200.0 + 3601
        assert not await broker.exists(taught.session)

    asyncio.run(scenario())


def test_follow_settings_come_from_the_environment_and_are_checked():
    from convscope.settings import Settings, SettingsError

    s = Settings.from_env(
        {
            "CONVSCOPE_FOLLOW_REDIS_URL": " redis://127.0.0.1:6390/0 ",
            "CONVSCOPE_FOLLOW_MAX_SESSIONS": "3",
            "CONVSCOPE_FOLLOW_IDLE_SECONDS": "90",
        }
    )
    assert (s.follow_redis_url, s.follow_max_sessions, s.follow_idle_seconds) == ("redis://127.0.0.1:6390/0", 3, 90.0)
    assert Settings.from_env(s.to_env()) == s
    # the messages name the variable, its text and the bound
    for env, words in (
        (
            {"CONVSCOPE_FOLLOW_MAX_SESSIONS": "-1"},
            "CONVSCOPE_FOLLOW_MAX_SESSIONS='-1' is not valid: Input should be greater than or equal to 0",
        ),
        (
            {"CONVSCOPE_FOLLOW_IDLE_SECONDS": "0"},
            "CONVSCOPE_FOLLOW_IDLE_SECONDS='0' is not valid: Input should be greater than 0",
        ),
    ):
        with pytest.raises(SettingsError, match=words):
            Settings.from_env(env)


def test_serve_with_workers_needs_redis_for_follow_mode(monkeypatch, capsys):
    import os

    from convscope import cli
    from convscope.cli import main

    def clean_environment() -> None:  # serve exports its settings into os.environ
        monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if not k.startswith("CONVSCOPE_")})

    seen = []
    monkeypatch.setattr(cli, "run_uvicorn", lambda config, sock: seen.append(dict(os.environ)) or 0)
    clean_environment()
    assert main(["serve", "--workers", "2"]) == 0
    assert "Follow mode is off: with several workers it needs --redis-url" in capsys.readouterr().out
    assert seen[-1]["CONVSCOPE_FOLLOW_MAX_SESSIONS"] == "0"
    clean_environment()
    assert main(["serve", "--workers", "2", "--redis-url", "redis://127.0.0.1:6390/0"]) == 0
    assert "Follow mode is off" not in capsys.readouterr().out
    assert (
        seen[-1]["CONVSCOPE_FOLLOW_REDIS_URL"] == "redis://127.0.0.1:6390/0"
        and seen[-1]["CONVSCOPE_FOLLOW_MAX_SESSIONS"] == "50"
    )
    clean_environment()
    assert main(["serve"]) == 0 and seen[-1]["CONVSCOPE_FOLLOW_MAX_SESSIONS"] == "50"  # one worker: in-process


def test_follow_mode_off_says_so(page_dir):
    from fastapi.testclient import TestClient

    from convscope.app import create_app
    from convscope.settings import Settings

    with TestClient(create_app(Settings(follow_max_sessions=0), static_dir=page_dir)) as client:
        r = client.post("/api/follow/sessions", json={})
        assert r.status_code == 503 and "follow mode is off on this server" in r.json()["detail"][0]["msg"]
        assert client.get("/api/follow").json()["max_sessions"] == 0
