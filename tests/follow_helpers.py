"""Helpers (no tests) for follow mode's tests and bench/follow.py: a real uvicorn in a
subprocess (one or more workers), a throwaway redis-server on a loopback port, and a
bounded load of SSE subscribers (httpx) that measures each teacher step's delay."""

from __future__ import annotations

import asyncio
import os
import queue
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from live_server import BANNER, free_port, held_socket, read_banner_port, uvicorn_on
from test_browser_helpers import TEACHER_HEADERS, TEACHER_TOKEN

ROOT = Path(__file__).resolve().parent.parent
SERVER_LOGS: dict[str, Callable[[], str]] = {}  # base URL -> the server log's last lines
SERVER_PIDS: dict[str, int] = {}  # base URL -> the uvicorn process id
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def redis_missing_reason() -> str | None:
    if not Path(REDIS_SERVER).is_file():
        return "redis-server not found (apt-get install redis-server)"
    try:
        import redis  # noqa: F401
    except ImportError:
        return "the redis package is not installed (pip install 'convscope[redis]')"
    return None


class RedisProcess:
    """A redis-server of its own on a free loopback port and folder; ``persist``: every
    write is in its append-only file at once (a SIGKILL loses nothing), and ``start``
    after ``kill`` brings the same data back on the same port."""

    def __init__(self, folder: str, persist: bool = False):
        self.port = free_port()
        self.folder = folder
        self.persist = persist
        self.process: subprocess.Popen | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        keep = (
            ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
            if self.persist
            else ["--save", "", "--appendonly", "no"]
        )
        self.process = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", *keep, "--dir", self.folder],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.kill()
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL, as a crash or an out-of-memory killer would."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@contextmanager
def redis_process(persist: bool = False) -> Iterator[RedisProcess]:
    with tempfile.TemporaryDirectory() as folder:
        for attempt in range(3):  # (its port chosen free may be taken before it binds: live_server's note)
            redis = RedisProcess(folder, persist)
            try:
                redis.start()
                break
            except RuntimeError:
                if attempt == 2:
                    raise
        try:
            yield redis
        finally:
            redis.stop()


@contextmanager
def redis_server() -> Iterator[str]:
    """A redis-server of its own on a free loopback port, no persistence; its URL."""
    with redis_process() as redis:
        yield redis.url


@contextmanager
def uvicorn_process(workers: int = 1, **settings: str) -> Iterator[str]:
    """``uvicorn convscope.app:create_app_from_env --factory --workers N`` in a subprocess
    (on a socket this holds: live_server's note), with CONVSCOPE_<NAME> set from
    ``settings``; its base URL once /api/health answers."""
    with held_socket() as sock:
        options = ["--workers", str(workers), "--log-level", "warning", "--timeout-graceful-shutdown", "2"]
        command = uvicorn_on(sock, *options)
        with server_process(command, workers, settings, sock) as base:
            yield base


@contextmanager
def convscope_serve(*options: str, workers: int = 1, **settings: str) -> Iterator[str]:
    """``convscope serve --port 0 --workers N [options]`` in a subprocess (the command a
    teacher types), with CONVSCOPE_<NAME> set from ``settings``; its base URL once it
    answers."""
    command = [
        sys.executable,
        "-m",
        "convscope.cli",
        "serve",
        "--port",
        "0",
        "--workers",
        str(workers),
        "--log-level",
        "warning",
        *options,
    ]
    with server_process(command, workers, settings) as base:
        yield base


@contextmanager
def server_process(
    command: list[str], workers: int, settings: dict[str, str], sock: socket.socket | None = None
) -> Iterator[str]:
    """Run a server command listening on 127.0.0.1, on ``sock`` (passed on as an open
    descriptor) or on the port its banner names; its base URL once /api/health answers
    (and, with several workers, a moment later: every worker serves). Its log goes to a
    file (SERVER_LOGS), its pid to SERVER_PIDS; stopped at the end."""
    settings = {"teacher_token": TEACHER_TOKEN, **settings}
    env = {**os.environ, **{f"CONVSCOPE_{k.upper()}": str(v) for k, v in settings.items()}}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    # The log goes to a file: a pipe nobody reads would fill and stall the workers. The
    # server writes through its own descriptor in append mode and this process reads
    # through another: with one shared descriptor, a seek(0) here between the server's
    # writes put its next line at the file's start, over the banner (seen in CI).
    log_dir = tempfile.TemporaryDirectory(prefix="uvicorn-")
    log_path = Path(log_dir.name) / "server.log"
    with open(log_path, "ab") as writer:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=writer,
            stderr=subprocess.STDOUT,
            pass_fds=[sock.fileno()] if sock else (),
        )

    def tail() -> str:
        return log_path.read_text(errors="replace")[-3000:]

    def banner_port() -> int | None:
        lines = log_path.read_text(errors="replace").splitlines(keepends=True)
        banners = [line for line in lines if line.startswith(BANNER) and line.endswith("\n")]
        return read_banner_port(banners[0]) if banners else None

    base = f"http://127.0.0.1:{sock.getsockname()[1]}" if sock else ""
    try:
        deadline = time.monotonic() + 30
        while not base:
            port = banner_port()
            if port is not None:
                base = f"http://127.0.0.1:{port}"
            elif process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start: {tail()}")
            else:
                time.sleep(0.05)
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
        SERVER_LOGS[base] = tail
        SERVER_PIDS[base] = process.pid
        yield base
    finally:
        SERVER_LOGS.pop(base, None)
        SERVER_PIDS.pop(base, None)
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log_dir.cleanup()


def server_cpu_seconds(base: str) -> float:
    """CPU time (user + system) used so far by the uvicorn process at ``base`` and its
    worker processes (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")

    def own(pid: int) -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick

    root = SERVER_PIDS[base]
    children = Path(f"/proc/{root}/task/{root}/children").read_text().split()
    return own(root) + sum(own(int(pid)) for pid in children)


async def read_events(response: httpx.Response):
    """The SSE events of a streamed response as dicts {event, id, data, retry} (raw
    bytes split on blank lines: cheaper than line iteration, for 300 readers)."""
    buffer = b""
    async for chunk in response.aiter_raw():
        buffer += chunk
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            event: dict[str, str] = {}
            for line in block.decode("utf-8").split("\n"):
                if not line or line.startswith(":"):
                    continue
                name, _, value = line.partition(":")
                event[name] = value[1:] if value.startswith(" ") else value
            if "data" in event or "event" in event:
                yield event


@dataclass
class FollowRun:
    """What a load of subscribers saw: per subscriber the state numbers received, and
    each delivery's delay (seconds from the teacher's PUT being sent)."""

    subscribers: int
    steps: list[int]
    received: list[list[int]] = field(default_factory=list)
    delays: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    server_cpu: float = float("nan")  # seconds the server's processes spent from first to last publish + 1 s

    def missing(self) -> int:
        want = set(self.steps)
        return sum(len(want - set(got)) for got in self.received)

    def percentile(self, q: float) -> float:
        ordered = sorted(self.delays)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def _subscribe_all(base: str, path: str, count: int, last: int, ready, timeout: float) -> tuple[list, list, list]:
    """``count`` SSE clients of ``path``; ``ready.put(count)`` once each has state 1; the
    states each received, every (seq, perf_counter) arrival after state 1, and errors."""
    limits = httpx.Limits(max_connections=count + 4, max_keepalive_connections=count + 4)
    received: list[list[int]] = []
    arrivals: list[tuple[int, float]] = []
    errors: list[str] = []
    connected = 0

    async def subscriber(client: httpx.AsyncClient, index: int) -> None:
        nonlocal connected
        got: list[int] = []
        received.append(got)
        try:
            async with client.stream("GET", path) as response:
                async for event in read_events(response):
                    if event.get("event") != "state":
                        continue
                    seq = int(event["id"])
                    got.append(seq)
                    if seq == 1:
                        connected += 1
                        if connected == count:
                            ready.put(count)
                    else:
                        arrivals.append((seq, time.perf_counter()))
                    if seq >= last:
                        return
        except httpx.HTTPError as exc:
            errors.append(f"subscriber {index}: {exc!r}")

    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=httpx.Timeout(timeout)) as client:
        tasks = [asyncio.create_task(subscriber(client, i)) for i in range(count)]
        _, pending = await asyncio.wait(tasks, timeout=timeout)
        for task in pending:
            task.cancel()
        if pending:
            errors.append(
                f"{len(pending)} subscribers still waiting after {timeout} s ({connected} of {count} had connected)"
            )
            await asyncio.gather(*pending, return_exceptions=True)
    return received, arrivals, errors


def _subscriber_process(base: str, path: str, count: int, last: int, ready, results, timeout: float) -> None:
    results.put(asyncio.run(_subscribe_all(base, path, count, last, ready, timeout)))


def follow_load(
    base: str, subscribers: int, steps: int, interval: float, timeout: float = 60.0, processes: int = 2
) -> FollowRun:
    """Open a session, connect ``subscribers`` SSE clients spread over ``processes``
    processes (as students are spread over machines: one Python loop reading 300
    streams would add its own queueing to every delay), wait until each has the first
    state, publish ``steps`` more states ``interval`` seconds apart, and collect what
    arrived. Bounded: ``timeout`` seconds for the subscribers, then they are stopped.
    Delays use time.perf_counter, one monotonic clock for every process on the machine."""
    import multiprocessing

    spawn = multiprocessing.get_context("spawn")
    with httpx.Client(base_url=base, timeout=30) as teacher:
        created = teacher.post("/api/follow/sessions", json={"state": {"step": 0}}, headers=TEACHER_HEADERS).json()
        session, secret = created["session"], created["secret"]
        last = steps + 1  # state 1 is the first one, then 2 .. steps + 1
        run = FollowRun(subscribers=subscribers, steps=list(range(2, last + 1)))
        ready, results = spawn.Queue(), spawn.Queue()
        shares = [subscribers // processes + (i < subscribers % processes) for i in range(processes)]
        workers = [
            spawn.Process(
                target=_subscriber_process,
                args=(base, created["events_path"], n, last, ready, results, timeout),
                daemon=True,
            )
            for n in shares
            if n
        ]
        for w in workers:
            w.start()
        sent_at: dict[int, float] = {}
        deadline = time.monotonic() + timeout
        try:
            for _ in workers:
                ready.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            run.errors.append(f"not every subscriber had the first state after {timeout} s")
        else:
            cpu_before = server_cpu_seconds(base) if base in SERVER_PIDS else float("nan")
            for seq in range(2, last + 1):
                sent_at[seq] = time.perf_counter()
                r = teacher.put(
                    f"/api/follow/sessions/{session}/state",
                    json={"secret": secret, "driver": 1, "state": {"step": seq}},
                )
                if r.status_code != 200 or r.json()["seq"] != seq:
                    run.errors.append(f"publish {seq}: {r.status_code} {r.text}")
                time.sleep(interval)
            time.sleep(1.0)  # the last deliveries
            if base in SERVER_PIDS:
                run.server_cpu = server_cpu_seconds(base) - cpu_before
        try:
            for _ in workers:  # each process stops by itself ``timeout`` s after it started
                received, arrivals, errors = results.get(timeout=max(0.1, deadline + 10 - time.monotonic()))
                run.received.extend(received)
                run.delays.extend(at - sent_at[seq] for seq, at in arrivals if seq in sent_at)
                run.errors.extend(errors)
        except queue.Empty:
            run.errors.append(f"a subscriber process never reported ({len(run.received)} subscribers did)")
        finally:
            for w in workers:
                w.join(timeout=5)
                if w.is_alive():
                    w.kill()
            teacher.post(f"/api/follow/sessions/{session}/end", json={"secret": secret})
        return run
