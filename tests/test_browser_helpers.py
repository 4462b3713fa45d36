"""Helpers (no tests) for the browser tests and bench/page.py: a real uvicorn server in a
thread, Debian's Chromium through Playwright, and an independent replay of a trace
document (NumPy slicing over the event boxes) to check what the page shows.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from live_server import held_socket

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


def require_chromium() -> None:
    """Skip the calling test module when Chromium cannot run here; under CI=true, fail
    instead (browser tests must run in CI, never skip). Call at module level."""
    missing = chromium_missing_reason()
    if not missing:
        return
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"browser tests cannot run in CI: {missing}")
    pytest.skip(missing, allow_module_level=True)


# the teacher token of every test server (convscope serve makes a random one): a
# teacher's page opens "/?teacher=<it>", an API client sends TEACHER_HEADERS
TEACHER_TOKEN = "teacher-token-of-the-tests"
TEACHER_HEADERS = {"Authorization": f"Bearer {TEACHER_TOKEN}"}


@contextmanager
def live_server(static_dir: Path | None = None, **settings: Any) -> Iterator[str]:
    """The real app (create_app with default settings, the tests' teacher token and
    ``settings``, and the checkout's static/, or ``static_dir``) under uvicorn in a
    thread on a free loopback port; yields its base URL."""
    import uvicorn

    from convscope.app import create_app
    from convscope.settings import Settings

    sock = held_socket()
    port = sock.getsockname()[1]
    app = create_app(Settings(**{"teacher_token": TEACHER_TOKEN, **settings}), static_dir=static_dir)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
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
        sock.close()


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


def debug_url(url: str) -> str:
    """``url`` with ``?debug``: the page then loads js/io/debug.js, whose ``window.convscope``
    handle the tests read (a page opened without it has no such handle)."""
    head, hash_, tail = url.partition("#")
    if re.search(r"[?&]debug\b", head):
        return url
    return f"{head}{'&' if '?' in head else '?'}debug{hash_}{tail}"


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


def event_cells(ev: dict) -> int:
    """Distinct cells of a trace event's boxes (a cell read and written counts once per tensor)."""
    seen: set = set()
    for b in ev["reads"] + ev["writes"]:
        ranges = [range(a, z, s) for a, z, s in zip(b["start"], b["stop"], b["step"])]
        idx = [()]
        for r in ranges:
            idx = [i + (v,) for i in idx for v in r]
        seen.update((b["tensor"], i) for i in idx)
    return len(seen)


def shown_number(text: str) -> float | None:
    """The number a cell shows ("−2" -> -2.0, "" -> None)."""
    text = text.strip().replace("−", "-")
    return float(text) if text else None


def reveal(page, tensor: str) -> None:
    """Scroll ``tensor``'s figure into view and let four frames pass: slices far out of
    view are not drawn (content-visibility), as for a person who has not scrolled there."""
    page.evaluate(
        """(name) => new Promise((done) => {
             const fig = document.querySelector(`figure.tensor[data-tensor="${name}"]`);
             if (!fig) return done(false);
             const r = fig.getBoundingClientRect();
             const s = document.getElementById('stage').getBoundingClientRect();
             const top = Math.max(0, s.top), bottom = Math.min(window.innerHeight, s.bottom);
             if (r.top >= top && r.bottom <= bottom) return done(true); // in view: drawn already
             fig.scrollIntoView({block: 'nearest'});
             // a revealed slice reports itself after the next rendering; the page redraws
             // at the frame after that
             let frames = 4;
             const tick = () => (--frames ? requestAnimationFrame(tick) : done(true));
             requestAnimationFrame(tick);
           })""",
        tensor,
    )


def cell_texts(page, tensor: str) -> dict[int, str]:
    """{flat index: text} of every drawn cell of ``tensor``."""
    pairs = page.evaluate(
        """(name) => Array.from(document.querySelectorAll(`.cell[data-tensor="${name}"]`),
                 (c) => [Number(c.dataset.idx), c.textContent])""",
        tensor,
    )
    return {int(i): t for i, t in pairs}


class PageWatch:
    """A page plus what it did: every request URL and every console error."""

    def __init__(self, page, base_url):
        self.page = page
        self.base_url = base_url
        self.requests: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def check(self, allowed_errors: tuple[str, ...] = ()):
        foreign = [
            u for u in self.requests if not (u.startswith(self.base_url + "/") or u.startswith(("data:", "blob:")))
        ]
        assert not foreign, f"requests left for another host: {foreign}"
        errors = [e for e in self.errors if not any(a in e for a in allowed_errors)]
        assert not errors, f"console errors: {errors}"


# the origin's storage a kept context starts each test without (its HTTP and code caches stay)
CLEARED_STORAGE = "cookies,local_storage,indexeddb,cache_storage,service_workers,file_systems,websql"


class KeptContexts:
    """The browser contexts of one test module, kept from test to test: a page in a new
    context costs Chromium about two CPU-seconds to load, one in a kept context about one
    (its HTTP and code caches are warm). A test's k-th page with some options is opened
    in the k-th context kept with those options, so a test's pages never share storage;
    the server's origin's storage and the cookies are cleared before a kept context is
    used again, and a context a test closed is replaced."""

    def __init__(self, browser, base_url: str):
        self.browser, self.base_url = browser, base_url
        self.kept: dict[str, list[Any]] = {}
        self.handed: dict[str, int] = {}  # pages handed out this test, by options
        self.closed: set[Any] = set()  # (the contexts themselves: an id could be reused)

    def page(self, k: int | None, options: dict[str, Any]):
        """A blank page in the k-th context kept with ``options``; k None: the next one
        this test has not had a page of."""
        key = repr(sorted(options.items()))
        if k is None:
            k = self.handed[key] = self.handed.get(key, -1) + 1
        kept = self.kept.setdefault(key, [])
        kept += [None] * (k + 1 - len(kept))
        context = kept[k]
        if context is None or context in self.closed:
            context = kept[k] = self.browser.new_context(**options)
            context.on("close", lambda closed: self.closed.add(closed))
            return context.new_page()
        for old in context.pages:  # (the last test's, were any left open)
            old.close()
        context.clear_cookies()
        page = context.new_page()
        session = context.new_cdp_session(page)
        session.send("Storage.clearDataForOrigin", {"origin": self.base_url, "storageTypes": CLEARED_STORAGE})
        session.detach()
        return page

    def end_test(self) -> None:
        """Close every page of the kept contexts (their storage is cleared on next use)."""
        self.handed = {}
        for contexts in self.kept.values():
            for context in contexts:
                if context is not None and context not in self.closed:
                    for page in context.pages:
                        page.close()

    def close(self) -> None:
        for contexts in self.kept.values():
            for context in contexts:
                if context is not None and context not in self.closed:
                    context.close()
        self.kept = {}


@contextmanager
def page_opener(browser, base_url: str, contexts: KeptContexts | None = None):
    """Yields opener(path, viewport, **context_args) -> PageWatch of a page that has loaded
    its lesson; at the end, checks every page's requests and console, closes them. With
    ``contexts``, the pages open in its kept contexts; without, each in a new context."""
    watches = []

    def opener(path: str = "/", viewport=(1600, 1000), **context_args):
        size = {"width": viewport[0], "height": viewport[1]}
        options = {"accept_downloads": True, **context_args}
        if contexts is None:
            context = browser.new_context(viewport=size, **options)
            page = context.new_page()
        else:
            page = contexts.page(None, options)
            page.set_viewport_size(size)
            context = None
        watch = PageWatch(page, base_url)
        watches.append((watch, context))
        page.goto(debug_url(base_url + path))
        wait_complete(page)
        return watch

    try:
        yield opener
        for watch, _ in watches:
            # 422 answers are expected where a test sends bad input; Chromium logs them as
            # failed resources
            watch.check(allowed_errors=("status of 422",))
    finally:
        for _, context in watches:
            if context is not None:
                context.close()
        if contexts is not None:
            contexts.end_test()


def server_document(base_url: str, config: dict) -> dict:
    r = httpx.post(base_url + "/api/trace", json=config, timeout=30)
    r.raise_for_status()
    return r.json()


def step_of(page) -> int:
    return page.evaluate("window.convscope.step")


def assert_stage_matches(page, doc: dict, step: int) -> None:
    """Every drawn cell of every tensor shows the trace's value at ``step`` (written
    tensors: the replay of events 0..step; cells no event has written yet are empty)."""
    values, counts = replay(doc, step)
    pads = set(
        map(
            tuple,
            page.evaluate(
                "Array.from(document.querySelectorAll('.cell.fixed-zero'), (c) => [c.dataset.tensor, Number(c.dataset.idx)])"
            ),
        )
    )
    # a folded figure (not used in this phase) shows only its caption and catches up
    # when unfolded: the shown ones are checked first, then all of them unfolded
    folded = set(
        page.evaluate("Array.from(document.querySelectorAll('figure.tensor.off-phase'), (f) => f.dataset.tensor)")
    )
    _assert_cells(page, doc, step, values, counts, pads, [n for n in doc["tensors"] if n not in folded])
    if folded and not page.evaluate("document.body.classList.contains('projector')"):
        page.click("#all-tensors")
        wait_until(page, "document.querySelectorAll('figure.tensor.off-phase').length === 0")
        _assert_cells(page, doc, step, values, counts, pads, sorted(folded))
        page.click("#all-tensors")
        wait_until(page, f"document.querySelectorAll('figure.tensor.off-phase').length === {len(folded)}")


def cell_problems(
    doc: dict, step: int, values: dict, counts: dict, pads: set, name: str, texts: dict[int, str]
) -> list[str]:
    """What the drawn cells of ``name`` show that the trace does not say at ``step``."""
    t = doc["tensors"][name]
    flat_values = (values[name] if name in values else np.asarray(t["data"]).reshape(t["shape"])).ravel()
    flat_counts = counts[name].ravel() if name in counts else None
    problems = []
    for idx, text in texts.items():
        shown = shown_number(text)
        if flat_counts is not None and flat_counts[idx] == 0 and (name, idx) not in pads:
            if shown is not None:
                problems.append(f"{name}[{idx}] at step {step}: shows {text!r} before any write")
            continue
        want = float(flat_values[idx])
        if shown is None or abs(shown - want) > 5e-3 * max(1.0, abs(want)):
            problems.append(f"{name}[{idx}] at step {step}: shows {text!r}, trace says {want}")
    return problems


def _assert_cells(page, doc: dict, step: int, values: dict, counts: dict, pads: set, names: list[str]) -> None:
    """Every drawn cell of ``names`` shows the trace's value at ``step``. The page draws
    at animation frames (a trace's figures in the frame after it completes, a slice
    scrolled into view at the frame after it reports itself visible), so no cells or a
    mismatch are read again at the next frames, for at most 5 s, before they count: a
    page that never draws them, or never shows the right value, still fails."""
    for name in names:
        reveal(page, name)
        deadline = time.monotonic() + 5
        while True:
            texts = cell_texts(page, name)
            problems = (
                cell_problems(doc, step, values, counts, pads, name, texts) if texts else [f"no cells drawn for {name}"]
            )
            if not problems or time.monotonic() > deadline:
                break
            page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
            if not texts:
                reveal(page, name)
        assert not problems, "\n".join(problems[:10])


def assert_equation_matches(page, doc: dict, step: int) -> None:
    ev = doc["events"][step]
    assert page.inner_text("#eq-text") == ev["text"]
    assert page.inner_text("#eq-phase").lower() == ev["phase"].lower()
    written = page.inner_text("#eq-writes")
    w = ev["writes"][0]
    assert f"= {_fmt(w['value'][0])}" in written.replace("−", "-"), written


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.6g}"


def choose_preset(page, name: str) -> None:
    page.select_option("#preset", name)
    wait_until(
        page, f"window.convscope.preset === '{name}' && window.convscope.complete && window.convscope.step === 0"
    )


def open_setup(page) -> None:
    """Open the setup drawer (a phone opens with it shut)."""
    if page.get_attribute("#toggle-setup", "aria-expanded") == "false":
        page.click("#toggle-setup")


def type_setup(page, name: str, value: str) -> None:
    """Type ``value`` into the setup form's input ``name`` and commit it, as a tab out does."""
    page.fill(f'#setup-form input[name="{name}"]', value)
    page.locator(f'#setup-form input[name="{name}"]').dispatch_event("change")


def select_setup(page, name: str, value: str) -> None:
    page.select_option(f'#setup-form select[name="{name}"]', value)


def wait_shape(page, tensor: str, shape: list[int], timeout: float = 20) -> None:
    """Until the trace is complete and its ``tensor`` has ``shape``."""
    wait_until(
        page,
        f"window.convscope.complete && JSON.stringify(window.convscope.document().tensors.{tensor}?.shape) "
        f"=== {str(shape).replace(' ', '')!r}",
        timeout,
    )


def randint(shape, low, high, seed) -> dict:
    """A seeded random-integer fill, as a trace request names one."""
    return {"fill": "randint", "shape": shape, "low": low, "high": high, "seed": seed}


# an im2col setup small enough to see whole: stride 2, padding 1, a bias, two filters
IM2COL = {
    "view": "im2col",
    "x": randint([1, 2, 4, 4], -2, 2, 10),
    "w": randint([2, 2, 2, 2], -1, 1, 11),
    "b": [1, -1],
    "stride": 2,
    "padding": 1,
    "dout": randint([1, 2, 3, 3], -2, 2, 12),
}


def lesson_path(config: dict, step: int = 0) -> str:
    """The page's URL path for a lesson (the fragment static/js/model/url-fragment.js reads)."""
    import base64
    import json

    c = base64.urlsafe_b64encode(json.dumps(config).encode()).decode().rstrip("=")
    return f"/#s={step}&c={c}"


def first_event(doc: dict, phase: str, where=lambda ev: True) -> int:
    """Index of the first event of ``phase`` for which ``where(event)`` holds."""
    return next(k for k, ev in enumerate(doc["events"]) if ev["phase"] == phase and where(ev))


# -- pytest fixtures shared by the browser test modules (imported there) ----------------


@pytest.fixture(scope="module")
def base_url():
    """A live server of the real app on a free loopback port, for one test module."""
    with live_server() as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright, for one test module."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def kept_contexts(browser, base_url):
    """The browser contexts a test module's pages open in (KeptContexts)."""
    contexts = KeptContexts(browser, base_url)
    yield contexts
    contexts.close()


@pytest.fixture
def open_page(browser, base_url, kept_contexts):
    with page_opener(browser, base_url, kept_contexts) as opener:
        yield opener
