"""The example notebook (docs/example.ipynb) runs in a real kernel (nbclient +
ipykernel), and the player its ``show()`` cell displays plays in Chromium with no
server: the iframe srcdoc page shows the trace, steps with the keys, makes no request."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from test_browser_helpers import CHROMIUM, CHROMIUM_ARGS, assert_stage_matches, chromium_missing_reason, wait_until

from convcore.trace import build_trace
from convscope import show
from convscope.traces.presets import PRESETS

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "docs" / "example.ipynb"

_missing = chromium_missing_reason()
try:
    import nbclient  # noqa: F401
    import nbformat
except ImportError as exc:  # the test extra has them
    _missing = _missing or f"{exc.name} is not installed (pip install -e '.[test]')"
if _missing:
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"the notebook test cannot run in CI: {_missing}")
    pytest.skip(_missing, allow_module_level=True)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    folder = tmp_path_factory.mktemp("nb")
    env_path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    os.environ["PYTHONPATH"] = env_path  # the kernel imports this checkout's convscope
    NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    return nb, folder


def _html_outputs(cell) -> list[str]:
    return [
        o["data"]["text/html"]
        for o in cell.get("outputs", [])
        if o.get("output_type") in ("display_data", "execute_result") and "text/html" in o.get("data", {})
    ]


def test_the_notebook_runs_and_shows_the_players(executed):
    nb, _ = executed
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []
    # nothing printed to stderr (IPython warned about HTML that starts with an iframe)
    stderr = [
        o["text"]
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "stream" and o.get("name") == "stderr"
    ]
    assert stderr == []
    players = [h for c in nb.cells if c.cell_type == "code" for h in _html_outputs(c)]
    assert len(players) == 2 and all(h.startswith("<div><iframe srcdoc=") for h in players)
    # each player is its lesson file gzipped: well under half of the file it unpacks to
    for cell in (c for c in nb.cells if c.cell_type == "code" and "show(" in c.source):
        (player,) = _html_outputs(cell)
        assert "DecompressionStream" in player
    cs231n = show(preset="cs231n", display=False)
    assert len(cs231n.iframe()) < 0.45 * len(cs231n.html)
    # the show() that ends a cell displays the player once, and its repr says what it is
    last = nb.cells[-1].outputs
    assert sum("text/html" in o.get("data", {}) for o in last) == 1
    assert "ConvScope lesson" in last[-1]["data"]["text/plain"]


def test_the_shown_player_plays_in_chromium(executed):
    from playwright.sync_api import sync_playwright

    nb, folder = executed
    shown = next(c for c in nb.cells if c.cell_type == "code" and "lesson = show(" in c.source)
    (player,) = _html_outputs(shown)
    page_file = folder / "output.html"
    page_file.write_text(
        f"<!doctype html><meta charset='utf-8'><title>notebook output</title>{player}", encoding="utf-8"
    )
    # the same config as the notebook's, built here: x, w, b and dout from its seed
    rng = np.random.default_rng(0)
    x, w = rng.integers(-2, 3, size=(1, 2, 5, 5)), rng.integers(-1, 2, size=(2, 2, 3, 3))
    dout = rng.integers(-2, 3, size=(1, 2, 3, 3))
    doc = build_trace(
        {"x": x.tolist(), "w": w.tolist(), "b": [1, -1], "dout": dout.tolist(), "stride": 2, "padding": 1}
    )
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        requests, errors = [], []
        context.route(
            "**/*",
            lambda route: (
                route.continue_()
                if route.request.url == page_file.as_uri()
                else (requests.append(route.request.url), route.abort())
            ),
        )
        page = context.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(page_file.as_uri())
        wait_until(page, "window.frames.length === 1")
        frame = page.frames[1]
        # (a srcdoc frame has no address to ask for ?debug: the page is read as a person sees it)
        counter = "document.getElementById('step-counter').textContent"
        wait_until(frame, "document.getElementById('badge').dataset.state === 'ok'")
        assert frame.evaluate(counter) == f"step 1 / {len(doc['events'])}"
        assert_stage_matches(frame, doc, 0)
        frame.locator("#stage").click(position={"x": 5, "y": 5})
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        wait_until(frame, f"{counter} === 'step 3 / {len(doc['events'])}'")
        assert_stage_matches(frame, doc, 2)
        frame.select_option("#speed", index=frame.evaluate("document.getElementById('speed').options.length") - 1)
        frame.locator("#stage").click(position={"x": 5, "y": 5})  # Space on a button presses it
        page.keyboard.press(" ")
        last = len(doc["events"]) - 1
        wait_until(
            frame,
            f"{counter} === 'step {last + 1} / {last + 1}' && document.getElementById('btn-play').getAttribute('aria-label') === 'Play'",
            15,
        )
        assert_stage_matches(frame, doc, last)
        page.screenshot(path=str(folder / "notebook-player.png"))
        browser.close()
    assert requests == [] and errors == []


def test_a_player_shown_with_code_opens_with_the_code_beside_the_step(tmp_path):
    """``show(..., code=True)``: the inline player opens with the code panel, the first
    step's line current, and steps with the keys as the page does."""
    from playwright.sync_api import sync_playwright

    lesson = show(preset="cs231n", code=True, display=False)
    doc = build_trace(PRESETS["cs231n"].config)
    page_file = tmp_path / "output.html"
    page_file.write_text(f"<!doctype html><meta charset='utf-8'><title>notebook output</title>{lesson.iframe()}")
    current = "document.querySelector('#code .code-line.current')?.dataset.line"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        page.goto(page_file.as_uri())
        wait_until(page, "window.frames.length === 1")
        frame = page.frames[1]
        wait_until(frame, "document.getElementById('badge').dataset.state === 'ok'")
        assert frame.is_visible("#code") and frame.locator("#code .code-line").count() == len(doc["code"]["lines"])
        wait_until(frame, f"{current} === '{doc['events'][0]['line']}'")
        frame.locator("#stage").click(position={"x": 5, "y": 5})
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        wait_until(frame, f"{current} === '{doc['events'][3]['line']}'")
        browser.close()
