"""Helpers (no tests) for follow mode's tests and bench/follow.py: a real uvicorn in a
subprocess (one or more workers), a throwaway redis-server on a loopback port, and a
bounded load of SSE subscribers (httpx) that measures each teacher step's delay."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import httpx

from test_browser_helpers import free_port

ROOT = Path(__file__).resolve().parent.parent
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def redis_missing_reason() -> str | None:
    if not Path(REDIS_SERVER).is_file():
        return "redis-server not found (apt-get install redis-server)"
    try:
        import redis  # noqa: F401
    except ImportError:
        return "the redis package is not installed (pip install 'convscope[redis]')"
    return None


@contextmanager
def redis_server() -> Iterator[str]:
    """A redis-server of its own on a free loopback port, no persistence; its URL."""
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        process = subprocess.Popen(
            [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", folder],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                        s.sendall(b"PING\r\n")
                        if s.recv(16).startswith(b"+PONG"):
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("redis-server did not start")
                time.sleep(0.05)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            process.terminate()
            process.wait(timeout=10)


@contextmanager
def uvicorn_process(workers: int = 1, **settings: str) -> Iterator[str]:
    """``uvicorn server.app:create_app_from_env --factory --workers N`` in a subprocess,
    with CONVSCOPE_<NAME> set from ``settings``; its base URL once /api/health answers."""
    port = free_port()
    env = {**os.environ, **{f"CONVSCOPE_{k.upper()}": str(v) for k, v in settings.items()}}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    # the log goes to a file: a pipe nobody reads would fill and stall the workers
    log = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "server.app:create_app_from_env", "--factory", "--host", "127.0.0.1",
         "--port", str(port), "--workers", str(workers), "--log-level", "warning", "--timeout-graceful-shutdown", "2"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"

    def tail() -> str:
        log.seek(0)
        return log.read()[-3000:]

    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(base + "/api/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None:
                raise RuntimeError(f"uvicorn exited: {tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not answer within 30 s: {tail()}")
            time.sleep(0.1)
        if workers > 1:
            time.sleep(1.0)  # every worker has bound and serves before the load starts
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


async def read_events(response: httpx.Response):
    """The SSE events of a streamed response as dicts {event, id, data, retry}."""
    event: dict[str, str] = {}
    async for line in response.aiter_lines():
        if not line:
            if "data" in event or "event" in event:
                yield event
            event = {}
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            event[name] = value[1:] if value.startswith(" ") else value


@dataclass
class FollowRun:
    """What a load of subscribers saw: per subscriber the state numbers received, and
    each delivery's delay (seconds from the teacher's PUT being sent)."""

    subscribers: int
    steps: list[int]
    received: list[list[int]] = field(default_factory=list)
    delays: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def missing(self) -> int:
        want = set(self.steps)
        return sum(len(want - set(got)) for got in self.received)

    def percentile(self, q: float) -> float:
        ordered = sorted(self.delays)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def follow_load(base: str, subscribers: int, steps: int, interval: float, timeout: float = 60.0) -> FollowRun:
    """Open a session, connect ``subscribers`` SSE clients, wait until each has the first
    state, publish ``steps`` more states ``interval`` seconds apart, and collect what
    arrived (bounded by ``timeout`` seconds in all)."""
    limits = httpx.Limits(max_connections=subscribers + 8, max_keepalive_connections=subscribers + 8)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=httpx.Timeout(timeout)) as client:
        created = (await client.post("/api/follow/sessions", json={"state": {"step": 0}})).json()
        session, secret = created["session"], created["secret"]
        last = steps + 1  # state 1 is the first one, then 2 .. steps + 1
        run = FollowRun(subscribers=subscribers, steps=list(range(2, last + 1)))
        sent_at: dict[int, float] = {}
        arrivals: list[tuple[int, float]] = []
        connected = 0
        all_connected = asyncio.Event()

        async def subscriber(index: int) -> None:
            nonlocal connected
            got: list[int] = []
            run.received.append(got)
            try:
                async with client.stream("GET", created["events_path"]) as response:
                    async for event in read_events(response):
                        if event.get("event") != "state":
                            continue
                        seq = int(event["id"])
                        got.append(seq)
                        if seq == 1:
                            connected += 1
                            if connected == subscribers:
                                all_connected.set()
                        else:
                            arrivals.append((seq, time.perf_counter()))
                        if seq >= last:
                            return
            except httpx.HTTPError as exc:
                run.errors.append(f"subscriber {index}: {exc!r}")

        async def teacher() -> None:
            await all_connected.wait()
            for seq in range(2, last + 1):
                sent_at[seq] = time.perf_counter()
                r = await client.put(f"/api/follow/sessions/{session}/state", json={"secret": secret, "driver": 1, "state": {"step": seq}})
                if r.status_code != 200 or r.json()["seq"] != seq:
                    run.errors.append(f"publish {seq}: {r.status_code} {r.text}")
                await asyncio.sleep(interval)

        tasks = [asyncio.create_task(subscriber(i)) for i in range(subscribers)]
        tasks.append(asyncio.create_task(teacher()))
        done, pending = await asyncio.wait(tasks, timeout=timeout)
        for task in pending:
            task.cancel()
        if pending:
            run.errors.append(f"{len(pending)} tasks still running after {timeout} s ({connected} of {subscribers} subscribers connected)")
            await asyncio.gather(*pending, return_exceptions=True)
        run.delays = [at - sent_at[seq] for seq, at in arrivals if seq in sent_at]
        await client.post(f"/api/follow/sessions/{session}/end", json={"secret": secret})
        return run
