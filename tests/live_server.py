"""A real ``convscope serve`` process for the tests that need sockets, not an ASGI client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["ONE_ADDRESS_CROWD", "ROOT", "free_port", "start_server", "stop_server"]

# A crowd from one address (a load test's subscribers, a schema fuzzer): the per-address
# shares of server/fair_share.py and the connection cap raised, so that such a test
# measures delivery or answers, not fairness (tests/test_server_fair.py tests those).
# Settings names; values as the environment gives them.
ONE_ADDRESS_CROWD = {"client_max_follows": "2000", "client_max_connections": "4000", "client_burst": "100000",
                     "client_requests_per_second": "100000", "client_max_replies": "1000",
                     "joins_per_minute": "100000", "follow_opens_per_minute": "100000"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(*args: str, python: str = sys.executable, **env_extra: str):
    """(process, url, port) of a server started with ``convscope serve ARGS`` and the
    CONVSCOPE_* variables given (nothing else of the caller's CONVSCOPE_* environment),
    once ``/api/health`` answers."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVSCOPE_")}
    env.update(env_extra)
    process = subprocess.Popen(
        [python, "-m", "server", "serve", "--port", str(port), "--log-level", "warning", *args],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(url + "api/health", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"the server did not start: {process.stdout.read()}")
        time.sleep(0.1)
    return process, url, port


def stop_server(process: subprocess.Popen) -> str:
    """Stop it (SIGTERM, then SIGKILL after 10 s); what it printed."""
    process.terminate()
    try:
        out, _ = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
    return out or ""
