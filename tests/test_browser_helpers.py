"""Helpers (no tests) for the browser tests and bench/page.py: a real uvicorn server in a
thread, Debian's Chromium through Playwright, and an independent replay of a trace
document (NumPy slicing over the event boxes) to check what the page shows.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import numpy as np

CHROMIUM = os.environ.get("CONVSCOPE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def chromium_missing_reason() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        return f"Chromium not found at {CHROMIUM} (install Debian's chromium package)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def live_server() -> Iterator[str]:
    """The real app (create_app with default settings and the checkout's static/) under
    uvicorn in a thread on a free loopback port; yields its base URL."""
    import uvicorn

    from server.app import create_app
    from server.settings import Settings

    port = free_port()
    config = uvicorn.Config(create_app(Settings()), host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def wait_until(page, expression: str, timeout: float = 15.0, interval: float = 0.03) -> Any:
    """Poll ``expression`` in the page until it is truthy (the page's CSP forbids eval, so
    Playwright's wait_for_function cannot be used); returns its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(expression)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for: {expression}")
        time.sleep(interval)


def wait_complete(page, timeout: float = 20.0) -> None:
    wait_until(page, "Boolean(window.convscope && window.convscope.complete)", timeout)


def replay(doc: dict, upto: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Values and write counts of every written tensor after events 0..upto, from the
    contract's rule (start at zero, add each write's delta over its box)."""
    values, counts = {}, {}
    for name, t in doc["tensors"].items():
        if t["role"] != "input":
            values[name] = np.zeros(t["shape"])
            counts[name] = np.zeros(t["shape"], dtype=int)
    for ev in doc["events"][: upto + 1]:
        for w in ev["writes"]:
            index = tuple(slice(a, b, s) for a, b, s in zip(w["start"], w["stop"], w["step"]))
            shape = values[w["tensor"]][index].shape
            values[w["tensor"]][index] += np.asarray(w["delta"]).reshape(shape)
            counts[w["tensor"]][index] += 1
    return values, counts


def shown_number(text: str) -> float | None:
    """The number a cell shows ("−2" -> -2.0, "" -> None)."""
    text = text.strip().replace("−", "-")
    return float(text) if text else None


def cell_texts(page, tensor: str) -> dict[int, str]:
    """{flat index: text} of every drawn cell of ``tensor``."""
    pairs = page.evaluate(
        """(name) => Array.from(document.querySelectorAll(`.cell[data-tensor="${name}"]`),
                 (c) => [Number(c.dataset.idx), c.textContent])""",
        tensor,
    )
    return {int(i): t for i, t in pairs}
