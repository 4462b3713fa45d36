"""Service benchmark on loopback, all figures measured in one run.

1. Latency: 100 and 300 concurrent clients POST the CS231n preset to /api/trace, with
   the document cache on (the default) and off, with 1 and 2 workers, for this server
   (``convscope serve``) side by side with an older checkout (``--against DIR``: its
   own uvicorn app factory, its own PYTHONPATH). Prints p50/p99 and the non-200 count
   (503 = the worker's build slots stayed taken). Target: p99 <= 100 ms, 0 errors
   with the cache on.
2. Streaming: time to the first NDJSON line / total time, for the largest trace the
   default limits allow (19 420 events, mac granularity). Target <= 5 %.
3. Encoder: bytes and time of orjson against FastAPI's default path (validate the
   return value with the response model, then dump it with pydantic-core) and against
   the standard library's json (JSONResponse), on that same trace; alternating,
   median of repeats.
4. The worst allowed requests (tests/test_server_hostile.py's WORST, each the largest
   of its kind the default limits allow) and the request of issue 11: reply bytes,
   time and the worker's peak RSS, on both servers.
5. Cold start: time to the first event line of CS231n's trace, the document cache
   off, a new connection per request (as a page's Apply), on both servers. Target
   (issue 29) <= 20 ms.
6. The page's files over six kept-alive connections (a browser's per-host limit),
   each server started by its own ``convscope serve``: time to fetch them all and the
   median request.

Run: .venv/bin/python bench/server.py [--against /tmp/old-server] [--requests 10]
(e.g. ``git archive 860303d | tar -x -C /tmp/old-server``). The load generator shares
the machine's cores with the server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from live_server import ONE_ADDRESS_CROWD, free_port  # noqa: E402

from convscope.traces.presets import PRESETS  # noqa: E402

LARGEST = {
    "x": {"fill": "randint", "shape": [1, 3, 10, 10], "low": -3, "high": 3, "seed": 1},
    "w": {"fill": "randint", "shape": [8, 3, 2, 2], "low": -2, "high": 2, "seed": 2},
    "dout": {"fill": "randint", "shape": [1, 8, 10, 10], "low": -2, "high": 2, "seed": 3},
    "padding": "same",
    "granularity": "mac",
}


def _package_of(root: Path) -> tuple[str, str]:
    """The name an older checkout's service imports as, and the PYTHONPATH for it: its
    ``server/`` folder as ``server`` before the package was named ``convscope``; after,
    as ``convscope`` through a shim package in a temporary folder (this venv's
    ``convscope`` is this checkout's)."""
    init = (root / "server" / "__init__.py").read_text(encoding="utf-8")
    if "package `convscope`" not in init:
        return "server", str(root)
    shim = Path(tempfile.mkdtemp(prefix="convscope-shim-")) / "convscope"
    shim.mkdir()
    (shim / "__init__.py").write_text(
        f"__path__ = [{str(root / 'server')!r}]\n__file__ = {str(root / 'server' / '__init__.py')!r}\n"
        "exec(compile(open(__file__, encoding='utf-8').read(), __file__, 'exec'))\n",
        encoding="utf-8",
    )
    return "convscope", os.pathsep.join([str(shim.parent), str(root)])


class Server:
    """ConvScope on a free loopback port: this checkout's ``convscope serve`` or, with
    ``root``, an older checkout's app under plain uvicorn (its own PYTHONPATH)."""

    def __init__(self, root: Path | None = None, workers: int = 1, serve: bool = False, **env: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        clean = {k: v for k, v in os.environ.items() if not k.startswith("CONVSCOPE_") and k != "PYTHONPATH"}
        # the load comes from one address: its per-address shares are raised, so that this
        # measures the service, not fairness (bench/classroom.py and tests/test_server_fair.py)
        clean.update({f"CONVSCOPE_{k.upper()}": v for k, v in ONE_ADDRESS_CROWD.items()})
        options = ["--port", str(self.port), "--workers", str(workers), "--log-level", "warning"]
        if root is None:
            command, cwd = [sys.executable, "-m", "convscope", "serve", *options], ROOT
        else:
            package, path = _package_of(root)
            cwd = root
            if serve:  # the older checkout's own `convscope serve` (its socket, its protocol)
                command = [sys.executable, "-m", package, "serve", *options]
            else:  # (its app factory's old name, under plain uvicorn)
                command = [sys.executable, "-m", "uvicorn", f"{package}.app:create_app_from_env", "--factory"]
                command += ["--host", "127.0.0.1", *options]
        self.process = subprocess.Popen(
            command,
            cwd=cwd,
            env={**clean, "PYTHONPATH": str(cwd) if root is None else path, **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(self.url + "api/health", timeout=1)
                return
            except httpx.TransportError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError("server did not start") from None
                time.sleep(0.1)

    def rss(self) -> int:
        """Resident memory of the server and its workers, bytes."""
        import psutil

        root = psutil.Process(self.process.pid)
        return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


async def _client(port: int, request: bytes, count: int, latencies: list[float]) -> int:
    """One keep-alive HTTP/1.1 connection sending ``count`` requests; returns errors."""
    errors = 0
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for _ in range(count):
            start = time.perf_counter()
            try:
                writer.write(request)
                await writer.drain()
                head = await reader.readuntil(b"\r\n\r\n")
                status = int(head.split(b" ", 2)[1])
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                errors += status != 200
                if b"connection: close" in head.lower():
                    writer.close()
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except (OSError, ValueError, StopIteration, asyncio.IncompleteReadError):
                errors += 1
                break
            finally:
                latencies.append(time.perf_counter() - start)
    finally:
        writer.close()
    return errors


async def load(port: int, body: dict, clients: int, requests: int) -> tuple[list[float], int]:
    """``clients`` concurrent connections, ``requests`` each, POST /api/trace.

    A minimal HTTP/1.1 client (keep-alive, Content-Length framing): httpx's per-request
    CPU cost, on the same two cores as the server, dominated the first measurements
    (124 requests/s), so it would have measured the client, not the service.
    """
    payload = json.dumps(body).encode()
    request = (
        f"POST /api/trace HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    ).encode() + payload
    await _client(port, request, 3, [])  # warm up
    latencies: list[float] = []
    errors = await asyncio.gather(*(_client(port, request, requests, latencies) for _ in range(clients)))
    return latencies, sum(errors)


def latency_section(requests: int, against: Path | None) -> None:
    body = PRESETS["cs231n"].config
    print(f"1. /api/trace, CS231n preset, {requests} requests per client (300 clients: {max(1, requests // 3)})")
    servers = [("this", None)] + ([(f"old {against.name}", against)] if against else [])
    for clients in (100, 300):
        count = requests if clients == 100 else max(1, requests // 3)
        for workers in (1, 2):
            for label, env in (("cache on", {}), ("cache off", {"CONVSCOPE_CACHE_ENTRIES": "0"})):
                for name, root in servers:
                    server = Server(root, workers, **env)
                    try:
                        start = time.perf_counter()
                        latencies, errors = asyncio.run(load(server.port, body, clients, count))
                        wall = time.perf_counter() - start
                    finally:
                        server.stop()
                    ms = [v * 1000 for v in latencies]
                    print(
                        f"   {clients:3d} clients {workers} worker{'s' if workers > 1 else ' '} {label:9s} {name:14s} "
                        f"p50 {percentile(ms, 50):7.1f} ms  p99 {percentile(ms, 99):7.1f} ms  non-200 {errors:4d}  "
                        f"({len(ms) / wall:.0f} requests/s)",
                        flush=True,
                    )


def worst_section(against: Path | None) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_server_hostile import ISSUE, WORST

    cases = {**WORST, "issue 11 (187 bytes)": ISSUE}
    print("4. the worst allowed requests, POST /api/trace, one worker: reply bytes, time, peak RSS of the worker")
    servers = [("this", None)] + ([(f"old {against.name}", against)] if against else [])
    for name, root in servers:
        server = Server(root, 1)
        try:
            base = server.rss()
            print(f"   {name}: idle RSS {base / 2**20:.0f} MB")
            for case, body in cases.items():
                peak = [server.rss()]
                done = threading.Event()

                def sample(done=done, peak=peak, server=server):
                    while not done.is_set():
                        peak[0] = max(peak[0], server.rss())
                        time.sleep(0.01)

                sampler = threading.Thread(target=sample)
                sampler.start()
                start = time.perf_counter()
                response = httpx.post(server.url + "api/trace", json=body, timeout=300)
                took = time.perf_counter() - start
                done.set()
                sampler.join()
                what = (
                    f"{len(response.content):>11,d} bytes"
                    if response.status_code == 200
                    else f"{response.status_code} {response.json()['detail'][0]['msg'][:60]}"
                )
                print(
                    f"     {case:22s} {what:70s} {took * 1000:7.0f} ms  peak RSS {peak[0] / 2**20:6.0f} MB", flush=True
                )
        finally:
            server.stop()


def stream_section(repeats: int) -> None:
    server = Server()
    try:
        ratios, firsts, totals, sizes = [], [], [], []
        with httpx.Client(timeout=120) as client:
            client.post(server.url + "api/trace/stream", json=LARGEST)  # warm up
            for _ in range(repeats):
                start = time.perf_counter()
                first = None
                size = 0
                with client.stream("POST", server.url + "api/trace/stream", json=LARGEST) as response:
                    assert response.status_code == 200, response.read()[:300]
                    for line in response.iter_lines():
                        if first is None:
                            first = time.perf_counter() - start
                            events = json.loads(line)["total_events"]
                        size += len(line) + 1
                total = time.perf_counter() - start
                ratios.append(first / total)
                firsts.append(first)
                totals.append(total)
                sizes.append(size)
    finally:
        server.stop()
    print(f"2. /api/trace/stream, largest trace the default limits allow ({events} events, {sizes[0] / 1e6:.1f} MB)")
    print(
        f"   first line {statistics.median(firsts) * 1000:.1f} ms, total {statistics.median(totals) * 1000:.0f} ms, "
        f"first/total {statistics.median(ratios) * 100:.2f} % (median of {repeats})"
    )


def cold_section(repeats: int, against: Path | None) -> None:
    """Time to the first event of CS231n's trace on the wire, uncached (the document
    cache off), each request on a new connection as a page's Apply after a while: the
    header line, then the first event line. Side by side with ``against`` when given,
    alternating. Target (issue 29): first event <= 20 ms."""
    servers = [("this server", Server(CONVSCOPE_CACHE_ENTRIES="0"))]
    if against is not None:
        servers.append((str(against), Server(against, CONVSCOPE_CACHE_ENTRIES="0")))
    try:
        body = httpx.get(servers[0][1].url + "api/presets/cs231n").json()["config"]
        firsts: dict[str, list[float]] = {name: [] for name, _ in servers}
        for _ in range(repeats):
            for name, server in servers:
                with httpx.Client(timeout=30) as client:  # (a new connection each time)
                    start = time.perf_counter()
                    with client.stream("POST", server.url + "api/trace/stream", json=body) as response:
                        assert response.status_code == 200, response.read()[:300]
                        lines = response.iter_lines()
                        next(lines)  # the header
                        assert json.loads(next(lines))["type"] == "event"
                        firsts[name].append(time.perf_counter() - start)
                        for _ in lines:
                            pass
    finally:
        for _, server in servers:
            server.stop()
    print(
        f"5. /api/trace/stream, CS231n preset, cache off, a new connection each: time to the first event line (median of {repeats})"
    )
    for name, times in firsts.items():
        print(
            f"   {name:<12} {statistics.median(times) * 1000:6.1f} ms (min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f})  target <= 20 ms"
        )


async def _fetch_files(port: int, paths: list[str], connections: int) -> list[float]:
    """GET every path over ``connections`` kept-alive connections, each taking the next
    path when its last reply is in (as a browser loads a page's files); per-request
    seconds."""
    queue = list(paths)
    latencies: list[float] = []

    async def one_connection() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while queue:
                path = queue.pop(0)
                start = time.perf_counter()
                writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
                await writer.drain()
                head = await reader.readuntil(b"\r\n\r\n")
                assert head.startswith(b"HTTP/1.1 200"), (path, head[:60])
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                latencies.append(time.perf_counter() - start)
        finally:
            writer.close()

    await asyncio.gather(*(one_connection() for _ in range(connections)))
    return latencies


def files_section(repeats: int, against: Path | None) -> None:
    """The page's files (index.html, style.css, every module under js/) fetched over six
    kept-alive connections, a browser's limit per host, from each server's own
    ``convscope serve`` (its listening socket and protocol), alternating: the time to
    fetch them all and the median request. A reply that waits for the client's delayed
    ACK (Nagle's algorithm left on) costs 40 ms per request after a connection's first."""
    static = ROOT / "static"
    paths = ["/", "/style.css"] + sorted(
        "/" + p.relative_to(static).as_posix() for p in (static / "js").rglob("*.js") if p.is_file()
    )
    servers = [("this server", Server())]
    if against is not None:
        servers.append((str(against), Server(against, serve=True)))
    totals: dict[str, list[float]] = {name: [] for name, _ in servers}
    each: dict[str, list[float]] = {name: [] for name, _ in servers}
    loads: dict[str, list[float]] = {name: [] for name, _ in servers}
    try:
        for _ in range(repeats):
            for name, server in servers:
                start = time.perf_counter()
                each[name] += asyncio.run(_fetch_files(server.port, paths, 6))
                totals[name].append(time.perf_counter() - start)
        _page_loads(servers, repeats, loads)
    finally:
        for _, server in servers:
            server.stop()
    print(
        f"6. the page's {len(paths)} files over 6 kept-alive connections, each server's `serve` (median of {repeats})"
    )
    for name in totals:
        print(
            f"   {name:<12} all {statistics.median(totals[name]) * 1000:7.1f} ms"
            f"   a request: median {statistics.median(each[name]) * 1000:5.1f} ms, p90 {percentile(each[name], 90) * 1000:5.1f} ms"
        )
    print(
        f"   headless Chromium, a new context each: the address typed to CS231n's trace complete (median of {repeats})"
    )
    for name in loads:
        print(f"   {name:<12} {statistics.median(loads[name]) * 1000:7.1f} ms (min {min(loads[name]) * 1000:.1f})")


def _page_loads(servers: list, repeats: int, loads: dict[str, list[float]]) -> None:
    """Each server's page opened in a fresh browser context (an empty cache, as a
    student's first visit), alternating, timed to its trace complete."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            for _ in range(repeats):
                for name, server in servers:
                    context = browser.new_context(viewport={"width": 1366, "height": 768})
                    page = context.new_page()
                    start = time.perf_counter()
                    page.goto(server.url + "?debug#s=0&l=cs231n")
                    while not page.evaluate("Boolean(window.convscope && window.convscope.complete)"):
                        time.sleep(0.005)
                    loads[name].append(time.perf_counter() - start)
                    context.close()
        finally:
            browser.close()


def encoder_section(repeats: int) -> None:
    import orjson

    from convcore.trace import build_trace
    from convscope.api.schemas import TraceDocument

    doc = build_trace(LARGEST)

    def fastapi_default() -> bytes:  # what FastAPI does with response_model=TraceDocument
        return TraceDocument.model_validate(doc).model_dump_json(by_alias=True).encode()

    def stdlib_json() -> bytes:  # JSONResponse
        return json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()

    def with_orjson() -> bytes:
        return orjson.dumps(doc, option=orjson.OPT_SERIALIZE_NUMPY)

    contenders = {
        "orjson (chosen)": with_orjson,
        "FastAPI default (pydantic)": fastapi_default,
        "json (JSONResponse)": stdlib_json,
    }
    times: dict[str, list[float]] = {name: [] for name in contenders}
    sizes: dict[str, int] = {}
    for _ in range(repeats):
        for name, encode in contenders.items():  # alternating
            start = time.perf_counter()
            body = encode()
            times[name].append(time.perf_counter() - start)
            sizes[name] = len(body)
    chosen = statistics.median(times["orjson (chosen)"])
    print(f"3. encoding the same trace document ({doc['total_events']} events), median of {repeats}")
    for name in contenders:
        t = statistics.median(times[name])
        print(f"   {name:27s} {sizes[name] / 1e6:6.2f} MB  {t * 1000:7.1f} ms  {t / chosen:5.1f}x orjson's time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10, help="requests per client (100 clients; 300: a third)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--against", type=Path, help="an older checkout to run side by side (its own app)")
    sections = ["latency", "stream", "encoder", "worst", "cold", "files"]
    parser.add_argument("--only", choices=sections, action="append")
    args = parser.parse_args()
    run = set(args.only or sections)
    if "latency" in run:
        latency_section(args.requests, args.against)
    if "stream" in run:
        stream_section(args.repeats)
    if "encoder" in run:
        encoder_section(args.repeats)
    if "worst" in run:
        worst_section(args.against)
    if "cold" in run:
        cold_section(max(args.repeats, 15), args.against)
    if "files" in run:
        files_section(max(args.repeats, 9), args.against)


if __name__ == "__main__":
    main()
