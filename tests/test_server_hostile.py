"""Hostile and clumsy clients against a real ``convscope serve`` process (uvicorn with
the service's protocol, one worker, the default limits), each bounded in time and count.

The server runs with short deadlines so that the tests are quick (request 2 s, idle
reader 3 s, queue 2 s, shutdown 2 s); every other setting is the default. The worker's
memory bound is ``RSS_BOUND`` (docs/service.md states it and how it was measured).
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import threading
import time

import httpx
import live_server
import psutil
import pytest

LIMIT_BYTES = 16_000_000
RSS_BOUND = 600 * 2**20  # bytes: one worker with the default limits (docs/service.md)

pytestmark = pytest.mark.slow


def normal(*shape, seed=1):
    return {"fill": "normal", "shape": list(shape), "seed": seed}


def dense(x: tuple[int, ...], w: tuple[int, ...], b: int, **settings) -> dict:
    """A request of normal x, w (its own seed) and b of these shapes, a dout and ``settings``."""
    return {"x": normal(*x), "w": normal(*w, seed=2), "b": normal(b), "dout": {"fill": "normal"}, **settings}


# the request of issue 11: 187 bytes that asked for a 658 MB document
ISSUE = {
    "x": normal(1, 1, 1, 4095),
    "w": normal(2, 1, 1, 2048, seed=2),
    "b": {"fill": "normal", "shape": [2]},
    "dout": {"fill": "normal"},
    "backward": "separate",
}
# the largest allowed request of each kind (bisected on the size with the default limits;
# schema 2's traces of the identity without padding have no pad, crop or activation
# phases, so the long 1-D windows grew from 536 to 540 columns; schema 3's events carry
# their line and scalars and the header the listing, so they shrank to 538 columns and
# the MAC trace to 14 x 14)
WORST = {
    "long 1-D windows": dense((1, 1, 1, 538), (2, 1, 1, 269), 2, backward="separate"),
    "mac, separate": dense((1, 2, 14, 14), (2, 2, 3, 3), 2, granularity="mac", backward="separate"),
    "many channels": dense((1, 21, 4, 4), (21, 21, 3, 3), 21, padding=1),
    "im2col": dense((1, 4, 10, 10), (4, 4, 3, 3), 4, view="im2col", padding=1),
    "transposed": dense((1, 4, 28, 28), (4, 4, 3, 3), 4, view="transposed", stride=2, padding=1),
    "sigmoid": dense((2, 4, 12, 12), (4, 4, 5, 5), 4, activation="sigmoid", padding=2),
}
# one size up from each: refused by a measure
OVER = {
    "long 1-D windows": {**WORST["long 1-D windows"], "x": normal(1, 1, 1, 542), "w": normal(2, 1, 1, 271, seed=2)},
    "mac, separate": {**WORST["mac, separate"], "x": normal(1, 2, 17, 17)},
    "issue 11": ISSUE,
    "mac, many events": {"x": normal(1, 4, 30, 30), "w": normal(4, 4, 3, 3), "granularity": "mac"},
}


SHORT_DEADLINES = {
    "CONVSCOPE_DEBUG": "1",
    "CONVSCOPE_REQUEST_TIMEOUT": "2",
    "CONVSCOPE_IDLE_TIMEOUT": "3",
    "CONVSCOPE_QUEUE_TIMEOUT": "2",
    "CONVSCOPE_SHUTDOWN_TIMEOUT": "2",
}


def start_server(**env_extra: str):
    return live_server.start_server(**{**SHORT_DEADLINES, **env_extra})


@pytest.fixture(scope="module")
def server():
    process, url, port = start_server()
    try:
        yield process, url, port
    finally:
        live_server.stop_server(process)


class Monitor:
    """Samples the server's RSS every 20 ms while it runs; ``peak`` is the largest."""

    def __init__(self, pid: int):
        self.process = psutil.Process(pid)
        self.peak = self.process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(0.02)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def cpu_seconds(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def stats(url):
    return httpx.get(url + "api/debug/stats", timeout=5).json()


def idle_within(pid: int, seconds: float, window: float = 0.5, most: float = 0.05) -> float:
    """How long until the process used at most ``most`` CPU seconds over ``window`` s."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        before = cpu_seconds(pid)
        time.sleep(window)
        if cpu_seconds(pid) - before <= most:
            return time.monotonic() - started
    raise AssertionError(f"the server was still busy {seconds} s later")


# -- what a request may cost ---------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(OVER))
def test_requests_over_a_limit_get_413_naming_the_measure(server, name):
    _, url, _ = server
    started = time.monotonic()
    for route in ("api/trace", "api/trace/stream"):
        response = httpx.post(url + route, json=OVER[name], timeout=30)
        assert response.status_code == 413, response.text[:300]
        msg = response.json()["detail"][0]["msg"]
        measure = msg.split(":")[0]
        assert measure in ("events", "bytes", "work"), msg
        assert "the limit is" in msg and any(ch.isdigit() for ch in msg), msg
    assert time.monotonic() - started < 5  # refused from the spec: nothing was built


@pytest.mark.parametrize("name", sorted(WORST))
def test_the_worst_allowed_requests_stay_under_16_mb(server, name):
    process, url, _ = server
    body = WORST[name]
    with Monitor(process.pid) as monitor:
        document = httpx.post(url + "api/trace", json=body, timeout=60)
        with httpx.stream("POST", url + "api/trace/stream", json=body, timeout=60) as stream:
            streamed = sum(len(chunk) for chunk in stream.iter_bytes())
    assert document.status_code == 200 and stream.status_code == 200
    assert len(document.content) <= LIMIT_BYTES and streamed <= LIMIT_BYTES
    assert len(document.content) > LIMIT_BYTES / 8  # a large request, not a trivial one
    assert monitor.peak < RSS_BOUND


# -- memory under concurrent and abandoned clients -------------------------------------------

BIGGEST = WORST["long 1-D windows"]


def address(k: int) -> str:
    """A loopback address of client ``k``'s own: these tests are about what many clients
    cost the server together (one address's shares are tests/test_server_fair.py's)."""
    return f"127.0.{2 + k // 250}.{2 + k % 250}"


def connect_from(k: int, port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), source_address=(address(k), 0))


def _variant(body: dict, seed: int) -> dict:
    return {**body, "x": {**body["x"], "seed": seed}}  # a different body: no cache hit


async def _streams(url: str, count: int, seed0: int) -> list[int]:
    async def one(client, k):
        try:
            async with client.stream("POST", url + "api/trace/stream", json=_variant(BIGGEST, seed0 + k)) as r:
                async for _ in r.aiter_bytes():
                    pass
                return r.status_code
        except httpx.HTTPError as exc:
            return repr(exc)

    clients = [
        httpx.AsyncClient(timeout=60, transport=httpx.AsyncHTTPTransport(local_address=address(k)))
        for k in range(count)
    ]
    try:
        return await asyncio.gather(*(one(client, k) for k, client in enumerate(clients)))
    finally:
        for client in clients:
            await client.aclose()


def test_50_concurrent_streams_of_the_worst_request_stay_within_the_bound(server):
    process, url, _ = server
    with Monitor(process.pid) as monitor:
        statuses = asyncio.run(_streams(url, 50, 1000))
    assert set(statuses) <= {200, 503}, statuses
    assert statuses.count(200) >= 2  # each of the 2 slots served one at least; the rest were told when to retry
    assert monitor.peak < RSS_BOUND, monitor.peak / 2**20
    idle_within(process.pid, 5)


def _open_and_stall(port: int, body: dict, k: int = 0) -> socket.socket:
    raw = json.dumps(body).encode()
    sock = connect_from(k, port)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.sendall(
        b"POST /api/trace/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(raw)}\r\n\r\n".encode()
        + raw
    )
    return sock


def test_20_clients_that_never_read_leave_the_worker_idle_and_within_the_bound(server):
    process, url, port = server
    with Monitor(process.pid) as monitor:
        socks = [_open_and_stall(port, _variant(BIGGEST, 2000 + k), k) for k in range(20)]
        try:
            took = idle_within(process.pid, 2.0, window=0.3, most=0.03)
            assert monitor.peak < RSS_BOUND
            assert httpx.get(url + "api/health", timeout=2).status_code == 200  # answered meanwhile
            # the readers still hold their sockets, but not the build slots: past the idle
            # deadline (3 s) the server dropped them, and a new trace is served
            time.sleep(3.5)
            again = httpx.post(url + "api/trace", json=_variant(BIGGEST, 2999), timeout=30)
            assert again.status_code == 200, again.text[:200]
        finally:
            for s in socks:
                s.close()
    print(f"idle {took:.2f} s after 20 stalled readers, peak RSS {monitor.peak / 2**20:.0f} MB")


def test_20_clients_that_disconnect_mid_build_stop_their_builds(server):
    process, url, port = server
    before = stats(url)
    with Monitor(process.pid) as monitor:
        socks = []
        for k in range(20):
            raw = json.dumps(_variant(WORST["mac, separate"], 3000 + k)).encode()
            sock = connect_from(k, port)
            path = b"/api/trace" if k % 2 else b"/api/trace/stream"
            sock.sendall(
                b"POST "
                + path
                + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(raw)}\r\n\r\n".encode()
                + raw
            )
            socks.append(sock)
        time.sleep(0.1)
        for s in socks:
            s.close()
        took = idle_within(process.pid, 2.0, window=0.3, most=0.03)
    assert monitor.peak < RSS_BOUND
    after = stats(url)
    assert after["streams_completed"] == before["streams_completed"]
    print(f"idle {took:.2f} s after 20 clients left mid-build")


# -- slow clients -------------------------------------------------------------------------------


def test_200_connections_with_unfinished_headers_are_closed_by_the_deadline(server):
    _, _, port = server
    socks = []
    for k in range(200):
        sock = connect_from(k, port)
        sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        socks.append(sock)
    started = time.monotonic()
    closed = 0
    try:
        for sock in socks:
            sock.settimeout(max(0.1, 2 + 3 - (time.monotonic() - started)))
            answer = b""
            try:
                while chunk := sock.recv(4096):
                    answer += chunk
            except (TimeoutError, ConnectionResetError):
                continue
            closed += 1
            assert answer.startswith(b"HTTP/1.1 408"), answer[:100]
    finally:
        for sock in socks:
            sock.close()
    assert closed == 200
    assert time.monotonic() - started < 5


LOAD = """
import asyncio, json, sys, time
import httpx
url, body, seconds = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3])
async def main():
    end = time.monotonic() + seconds
    async def builder(k):  # each client from a loopback address of its own
        transport = httpx.AsyncHTTPTransport(local_address=f"127.0.{2 + k // 250}.{2 + k % 250}")
        async with httpx.AsyncClient(timeout=60, transport=transport) as client:
            n = 0
            while time.monotonic() < end:
                x = {**body["x"], "seed": 10_000 * k + n}
                await client.post(url + "api/trace", json={**body, "x": x})
                n += 1
    print("started", flush=True)
    await asyncio.gather(*(builder(k) for k in range(100)))
asyncio.run(main())
"""


@pytest.mark.alone
def test_health_answers_in_under_100_ms_while_100_clients_send_uncached_builds(server):
    _, url, _ = server
    # the 100 clients run in a process of their own, so that reading their replies does
    # not delay this process's timing of /api/health
    load = subprocess.Popen(
        [sys.executable, "-c", LOAD, url, json.dumps(WORST["sigmoid"]), "6"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert load.stdout.readline().strip() == "started"
        time.sleep(1.5)  # the slots are full and the queue is long
        times = []
        with httpx.Client(timeout=10) as client:
            for _ in range(20):
                started = time.perf_counter()
                assert client.get(url + "api/health").status_code == 200
                times.append(time.perf_counter() - started)
                time.sleep(0.1)
    finally:
        load.wait(timeout=60)
    times.sort()
    print(
        f"health under load: median {times[10] * 1000:.1f} ms, 19th {times[-2] * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms"
    )
    # 18 of 20 under 100 ms and the median far under it, on a 2-core machine shared with
    # the load itself: the slowest can meet a C call holding the GIL in a build thread
    # (docs/service.md gives the measured spread)
    assert times[-3] < 0.1 and times[10] < 0.05


# -- hosts and headers --------------------------------------------------------------------------


def test_a_foreign_host_header_gets_400(server):
    _, url, port = server
    response = httpx.get(url + "api/health", headers={"host": "evil.example"}, timeout=5)
    assert response.status_code == 400
    detail = response.json()["detail"][0]
    assert detail["loc"] == ["header", "host"] and "evil.example" in detail["msg"]
    assert "content-security-policy" in response.headers
    assert httpx.get(f"http://localhost:{port}/api/health", timeout=5).status_code == 200


def test_no_server_header(server):
    _, url, _ = server
    for response in (httpx.get(url, timeout=5), httpx.get(url + "nothing", timeout=5)):
        assert "server" not in response.headers


# -- shutdown -----------------------------------------------------------------------------------


def test_sigterm_with_a_slow_reader_exits_within_the_shutdown_bound():
    process, url, port = start_server()
    try:
        sock = _open_and_stall(port, BIGGEST)
        time.sleep(0.5)  # the reply has started and stalls on the unread socket
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
        took = time.monotonic() - started
        sock.close()
    finally:
        if process.poll() is None:
            process.kill()
    assert took < 2 + 1.5, took  # CONVSCOPE_SHUTDOWN_TIMEOUT=2, plus the exit itself
