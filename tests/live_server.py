"""A real ``convscope serve`` process for the tests that need sockets, not an ASGI client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import httpx

ROOT = Path(__file__).resolve().parent.parent

__all__ = [
    "BANNER",
    "ONE_ADDRESS_CROWD",
    "ROOT",
    "Launched",
    "free_port",
    "held_socket",
    "launch",
    "read_banner_port",
    "start_server",
    "stop_server",
    "uvicorn_on",
    "wait_until_up",
]

# A crowd from one address (a load test's subscribers, a schema fuzzer): the per-address
# shares of server/http/fair_share.py and the connection cap raised, so that such a test
# measures delivery or answers, not fairness (tests/test_server_fair.py tests those).
# Settings names; values as the environment gives them.
ONE_ADDRESS_CROWD = {
    "client_max_follows": "2000",
    "client_max_connections": "4000",
    "client_burst": "100000",
    "client_requests_per_second": "100000",
    "client_max_replies": "1000",
    "joins_per_minute": "100000",
    "follow_opens_per_minute": "100000",
}


# How a server gets its port in the tests. Choosing a free port, closing it and handing
# its number to a server races every outgoing connection on the machine, which may take
# that number as its own end in between (a long suite makes thousands): the server then
# cannot bind and exits. So nothing here passes a port number to a server that binds it:
# `convscope serve --port 0` binds any free port and prints it (read_banner_port), uvicorn
# is given a socket the test holds (held_socket: `--fd`, Server.run(sockets=...)), and
# free_port is left to programs with neither (redis-server), whose start is retried.
BANNER = "ConvScope running at "  # the first line `convscope serve` prints


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def held_socket() -> socket.socket:
    """A TCP socket bound to a free loopback port and inheritable, for a server to listen
    on (``uvicorn --fd N`` with ``pass_fds``, or uvicorn.Server.run(sockets=[it]))."""
    # (IPPROTO_TCP named, as convscope serve names it: asyncio turns Nagle's algorithm off
    # only on a socket whose proto says TCP; without it each request of a kept-alive
    # connection after its first waits 40 ms for the client's delayed ACK)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.set_inheritable(True)
    return sock


def uvicorn_on(sock: socket.socket, *options: str) -> list[str]:
    """The command of uvicorn serving the app (``create_app_from_env``: its settings from
    CONVSCOPE_* variables) on ``sock``, a held_socket, with ``options``."""
    app = ["convscope.app:create_app_from_env", "--factory"]
    return [sys.executable, "-m", "uvicorn", *app, "--fd", str(sock.fileno()), *options]


def read_banner_port(line: str) -> int:
    """The port in `convscope serve`'s banner ("ConvScope running at http://HOST:PORT/")."""
    return int(line.strip().rstrip("/").rsplit(":", 1)[1])


class Launched(NamedTuple):
    process: subprocess.Popen  # its output (stdout and stderr, as text) on process.stdout
    url: str  # http://127.0.0.1:PORT/
    port: int
    printed: list[str]  # the lines it printed up to its banner, the banner last


def launch(
    command: list[str],
    *,
    cwd: Path | None = None,
    drop: tuple[str, ...] = ("CONVSCOPE_",),
    held: socket.socket | None = None,
    **env_extra: str,
) -> Launched:
    """A server ``command`` started in ``cwd`` (ROOT, read when called: bench/classroom.py
    sets it to another checkout) with the caller's environment less the
    variables whose names start with one of ``drop``, plus ``env_extra``, once
    ``/api/health`` answers. Its port is the one its banner names (``convscope serve
    --port 0``), or ``held``'s, a socket handed to it (``uvicorn --fd``; closed here once
    the server has its own copy; no banner awaited, nothing ``printed``). RuntimeError
    with what it printed, the server killed, when it does not start."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)} | env_extra
    process = subprocess.Popen(
        command,
        cwd=cwd or ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        pass_fds=[held.fileno()] if held else (),
    )
    printed = []  # (a notice such as "Follow mode is off: ..." may come before the banner)
    if held:
        port = held.getsockname()[1]
        held.close()
    else:
        while not printed or not printed[-1].startswith(BANNER):
            printed.append(process.stdout.readline())
            if not printed[-1] or len(printed) > 5:
                process.kill()
                raise RuntimeError(f"the server did not start: {''.join(printed)}{process.stdout.read()}")
        port = read_banner_port(printed[-1])
    url = f"http://127.0.0.1:{port}/"
    wait_until_up(url, process)
    return Launched(process, url, port, [line.rstrip("\n") for line in printed])


def start_server(*args: str, python: str = sys.executable, older: bool = False, **env_extra: str):
    """(process, url, port) of a server started with ``convscope serve --port 0 ARGS`` and
    the CONVSCOPE_* variables given (nothing else of the caller's CONVSCOPE_*
    environment), once ``/api/health`` answers. ``older``: a checkout from before
    ``--port 0`` and the name ``convscope`` (a benchmark's baseline): ``python -m server``
    on a free port's number."""
    program = [python, "-m", "server" if older else "convscope", "serve", "--port", str(free_port() if older else 0)]
    process, url, port, _ = launch([*program, "--log-level", "warning", *args], **env_extra)
    return process, url, port


def wait_until_up(url: str, process: subprocess.Popen, seconds: float = 30) -> httpx.Response:
    """The first 200 of ``url``'s ``/api/health``; RuntimeError with what the server
    printed when it exits first or does not answer within ``seconds`` (then it is killed)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            health = httpx.get(url + "api/health", timeout=1)
            if health.status_code == 200:
                return health
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"the server did not start: {process.stdout.read()}")
        time.sleep(0.1)


def stop_server(process: subprocess.Popen) -> str:
    """Stop it (SIGTERM, then SIGKILL after 10 s); what it printed."""
    process.terminate()
    try:
        out, _ = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
    return out or ""
