"""A classroom's careless clients against this server and an older checkout, side by side.

Each scenario runs on a fresh ``convscope serve`` (one worker, debug stats on, the
default limits), first on one tree, then on the other, alternating over ``--rounds``:

1. Careless clients (issue 28): 30 clients POST the CS231n lesson to
   ``/api/trace/stream`` (and its three variants), each from a loopback address of its
   own (127.0.1.2, ...), and hang up after 0-300 ms, for
   ``--seconds`` s, the cache off. Then: how long until a trace is answered (up to 10
   s; "refused" if never) and what the first answer was.
2. Slow readers: two clients read the largest allowed trace at 256 KB/s while 20 page
   loads (uncached CS231n variants, 0.25 s apart) come in: how many got 503, and the
   slowest.
3. Cold start: 300 concurrent first loads of the CS231n stream on a fresh server: how
   many got 503, the median and slowest, and how many streams the server generated.
4. Sockets: one address (127.0.0.1) opens ``--sockets`` connections asking for a class
   session's events and holds them, while a teacher publishes 20 states 0.15 s apart to
   30 students on addresses of their own: the teacher's publish time and the students'
   delivery delay (p50, p99), and how many of the sockets the server kept.

Run: .venv/bin/python bench/classroom.py --against REV [--rounds 2] [--seconds 10]
(REV: a git revision, checked out into a temporary worktree; the servers share the
machine's two cores with the clients, so only figures of one run are compared).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import live_server  # noqa: E402
from test_server_careless import careless_crowd, cs231n, request_bytes, student_address  # noqa: E402
from test_server_hostile import BIGGEST, _variant  # noqa: E402


@contextlib.contextmanager
def serving(tree: Path, **env: str):
    live_server.ROOT = tree  # the server's code is the tree's own
    process, url, port = live_server.start_server(CONVSCOPE_DEBUG="1", older=tree != ROOT, **env)
    try:
        yield url, port
    finally:
        live_server.stop_server(process)
        live_server.ROOT = ROOT


def careless(tree: Path, seconds: float) -> str:
    base = cs231n()
    variants = [base] + [{**base, "dout": {"fill": "normal", "seed": seed}} for seed in range(1, 4)]
    bodies = [request_bytes("/api/trace/stream", body) for body in variants]
    with serving(tree, CONVSCOPE_CACHE_ENTRIES="0") as (url, port):
        made = asyncio.run(careless_crowd(port, bodies, clients=30, seconds=seconds))
        started = time.monotonic()
        first = None
        while time.monotonic() - started < 10:
            answer = httpx.post(url + "api/trace", json={**base, "dout": {"fill": "normal", "seed": 99}}, timeout=10)
            first = first or answer.status_code
            if answer.status_code == 200:
                return (
                    f"{made} careless requests; first answer {first}, a trace after {time.monotonic() - started:.2f} s"
                )
        return f"{made} careless requests; first answer {first}, refused for 10 s"


def slow_readers(tree: Path) -> str:
    with serving(tree, CONVSCOPE_CACHE_ENTRIES="0") as (url, port):

        async def reader(seed: int) -> int:
            sock_reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, limit=1 << 16, local_addr=(student_address(seed), 0)
            )
            writer.write(request_bytes("/api/trace/stream", _variant(BIGGEST, seed)))
            got, ends = 0, time.monotonic() + 12
            with contextlib.suppress(ConnectionError):
                while time.monotonic() < ends:
                    chunk = await sock_reader.read(65536)
                    if not chunk:
                        break
                    got += len(chunk)
                    await asyncio.sleep(0.25)
            writer.transport.abort()
            return got

        async def loads() -> list[tuple[int, float]]:
            await asyncio.sleep(1.0)
            out = []
            transport = httpx.AsyncHTTPTransport(local_address="127.0.0.50")
            async with httpx.AsyncClient(timeout=15, transport=transport) as client:
                for seed in range(20):
                    started = time.monotonic()
                    answer = await client.post(
                        url + "api/trace/stream", json={**cs231n(), "dout": {"fill": "normal", "seed": 700 + seed}}
                    )
                    out.append((answer.status_code, time.monotonic() - started))
                    await asyncio.sleep(0.25)
            return out

        async def main():
            return await asyncio.gather(reader(1), reader(2), loads())

        _, _, results = asyncio.run(main())
    refused = sum(status != 200 for status, _ in results)
    return f"{refused} of 20 page loads refused; slowest {max(t for _, t in results):.2f} s"


def cold_start(tree: Path) -> str:
    with serving(tree) as (url, _):
        before = httpx.get(url + "api/debug/stats").json()["streams_started"]
        body = cs231n()

        async def main() -> list[tuple[int, float]]:
            async def one(k: int):  # each student from an address of its own
                transport = httpx.AsyncHTTPTransport(local_address=student_address(k))
                async with httpx.AsyncClient(timeout=60, transport=transport) as client:
                    started = time.monotonic()
                    answer = await client.post(url + "api/trace/stream", json=body)
                    return answer.status_code, time.monotonic() - started

            return await asyncio.gather(*(one(k) for k in range(300)))

        results = asyncio.run(main())
        streams = httpx.get(url + "api/debug/stats").json()["streams_started"] - before
    refused = sum(status != 200 for status, _ in results)
    times = sorted(t for _, t in results)
    return (
        f"{refused} of 300 refused; median {statistics.median(times):.2f} s, slowest {times[-1]:.2f} s; "
        f"{streams} stream(s) generated"
    )


TOKEN = "bench-teacher-token"


async def _students_and_teacher(
    url: str, events: str, session: str, secret: str, states: int = 20
) -> tuple[list, list]:
    """30 students follow (each from its own address); the teacher publishes ``states``
    states 0.15 s apart. (publish seconds, delivery seconds)."""
    sent: dict[int, float] = {}
    delays: list[float] = []
    publishes: list[float] = []
    ready = asyncio.Event()
    connected = 0

    async def student(k: int) -> None:
        nonlocal connected
        transport = httpx.AsyncHTTPTransport(local_address=student_address(k))
        async with httpx.AsyncClient(base_url=url, timeout=60, transport=transport) as client:
            async with client.stream("GET", events) as response:
                connected += 1
                if connected == 30:
                    ready.set()
                async for line in response.aiter_lines():
                    if line.startswith("id: "):
                        seq = int(line[4:])
                        if seq in sent:
                            delays.append(time.perf_counter() - sent[seq])
                        if seq >= states + 1:
                            return

    async def teacher() -> None:
        await asyncio.wait_for(ready.wait(), 60)
        await asyncio.sleep(0.5)
        transport = httpx.AsyncHTTPTransport(local_address="127.0.0.40")
        async with httpx.AsyncClient(base_url=url, timeout=60, transport=transport) as client:
            for step in range(1, states + 1):
                sent[step + 1] = time.perf_counter()
                started = time.perf_counter()
                await client.put(
                    f"api/follow/sessions/{session}/state",
                    json={"secret": secret, "driver": 1, "state": {"step": step}},
                )
                publishes.append(time.perf_counter() - started)
                await asyncio.sleep(0.15)

    await asyncio.wait_for(asyncio.gather(teacher(), *(student(k) for k in range(30))), 180)
    return publishes, delays


def sockets(tree: Path, count: int) -> str:
    with serving(tree, CONVSCOPE_TEACHER_TOKEN=TOKEN) as (url, port):
        created = httpx.post(
            url + "api/follow/sessions",
            json={"state": {"step": 0}},
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=10,
        ).json()
        request = (
            f"GET {created['events_path']} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
        ).encode()
        held = []
        for _ in range(count):
            sock = socket.socket()
            try:
                sock.connect(("127.0.0.1", port))
                sock.sendall(request)
                held.append(sock)
            except OSError:
                sock.close()
        time.sleep(2.0)  # the server has seen them
        kept = 0
        for sock in held:  # a socket the server closed reads its 503 and then the end
            sock.setblocking(False)
            try:
                head = sock.recv(16, socket.MSG_PEEK)
                kept += head.startswith(b"HTTP/1.1 200")
            except BlockingIOError:
                kept += 1  # nothing yet: held open, waiting
            except OSError:
                pass
        try:
            publishes, delays = asyncio.run(
                _students_and_teacher(url, created["events_path"], created["session"], created["secret"])
            )
        finally:
            for sock in held:
                sock.close()

    def q(values: list[float], at: float) -> float:
        return sorted(values)[min(len(values) - 1, int(at * len(values)))] * 1000

    return (
        f"{kept} of {count} sockets held; publish p50 {q(publishes, 0.5):.1f} ms, p99 {q(publishes, 0.99):.1f} ms; "
        f"delivery p50 {q(delays, 0.5):.1f} ms, p99 {q(delays, 0.99):.1f} ms ({len(delays)} of {30 * 20})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--against", required=True, metavar="REV", help="the older git revision to run beside this tree"
    )
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--sockets", type=int, default=10_000, help="sockets of scenario 4 (default 10,000)")
    args = parser.parse_args()
    random.seed(0)
    with tempfile.TemporaryDirectory() as folder:
        old = Path(folder) / "old"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(old), args.against],
            check=True,
            capture_output=True,
        )
        try:
            trees = [("this tree", ROOT), (args.against, old)]
            for name, run in (
                ("careless clients", lambda t: careless(t, args.seconds)),
                ("two slow readers", slow_readers),
                ("cold start", cold_start),
                (f"{args.sockets} sockets from one address", lambda t: sockets(t, args.sockets)),
            ):
                print(f"{name}:", flush=True)
                for round_ in range(args.rounds):
                    for label, tree in trees if round_ % 2 == 0 else trees[::-1]:
                        print(f"  round {round_ + 1}, {label}: {run(tree)}", flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)], capture_output=True)


if __name__ == "__main__":
    main()
