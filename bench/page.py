"""The page's speed in headless Chromium, measured in one run against the real server.

    .venv/bin/python bench/page.py

Prints:
- frame time while playing the x (2,3,16,16), w (4,3,3,3) trace at top speed: the
  page's redraw (cursor seek + DOM updates) plus the style and layout it forces, per
  animation frame, p50/p95/max (target p95 <= 8 ms), and the rAF intervals seen;
- time to jump to a random step (seek + redraw + style/layout), p50/p95/max over 300
  random steps (target <= 16 ms);
- time from pressing Apply to the first drawn step for the CS231n preset (median of 7).
"""

from __future__ import annotations

import base64
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from playwright.sync_api import sync_playwright  # noqa: E402

from test_browser_helpers import CHROMIUM, CHROMIUM_ARGS, live_server, wait_complete, wait_until  # noqa: E402

BIG = {
    "x": {"fill": "randint", "shape": [2, 3, 16, 16], "low": -2, "high": 2, "seed": 0},
    "w": {"fill": "randint", "shape": [4, 3, 3, 3], "low": -1, "high": 1, "seed": 1},
    "b": {"fill": "randint", "shape": [4], "low": -1, "high": 1, "seed": 2},
    "padding": 1,
}


def lesson_hash(config: dict, step: int = 0) -> str:
    c = base64.urlsafe_b64encode(json.dumps(config).encode()).decode().rstrip("=")
    return f"#s={step}&c={c}"


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def summary(name: str, values: list[float], unit: str = "ms") -> str:
    return f"{name}: n={len(values)} p50={pct(values, 0.5):.2f} {unit} p95={pct(values, 0.95):.2f} {unit} max={max(values):.2f} {unit}"


def main() -> None:
    with live_server() as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.goto(base + "/" + lesson_hash(BIG))
        wait_complete(page, timeout=60)
        total = page.evaluate("window.convscope.total")
        cells = page.evaluate("document.querySelectorAll('.cell').length")
        print(f"trace x (2,3,16,16), w (4,3,3,3), padding 1: {total} events, {cells} cells drawn")

        # 1. playing at top speed
        page.evaluate("window.convscope.measureLayout(true)")
        page.evaluate("window.convscope.seek(0)")
        page.evaluate("window.convscope.setSpeedIndex(99)")
        page.evaluate("window.convscope.resetFrameTimes()")
        page.evaluate(
            """() => { window.__raf = []; let last = 0;
                 const tick = (t) => { if (last) window.__raf.push(t - last); last = t;
                                       if (window.__raf.length < 100000 && window.convscope.playing) requestAnimationFrame(tick); };
                 window.convscope.play(); requestAnimationFrame(tick); }"""
        )
        started = time.monotonic()
        while page.evaluate("window.convscope.playing") and time.monotonic() - started < 8:
            time.sleep(0.1)
        page.evaluate("window.convscope.pause()")
        frames = page.evaluate("window.convscope.frameTimes()")
        raf = page.evaluate("window.__raf")
        print(f"played {page.evaluate('window.convscope.step') + 1} steps at {page.evaluate('window.convscope.speed')} steps/s in {time.monotonic() - started:.1f} s")
        print(summary("frame time while playing (redraw + style/layout)", frames))
        print(summary("rAF interval while playing", raf))

        # 2. random jumps
        jumps = page.evaluate(
            """(total) => { let seed = 7; const out = [];
                 for (let k = 0; k < 300; k++) { seed = (seed * 1103515245 + 12345) % 2147483648;
                   const t = seed % total; const t0 = performance.now(); window.convscope.seek(t);
                   void document.body.offsetHeight; out.push(performance.now() - t0); }
                 return out; }""",
            total,
        )
        print(summary("jump to a random step (seek + redraw + style/layout)", jumps))

        # 3. Apply -> first drawn step, CS231n preset
        page.select_option("#preset", "cs231n")
        wait_until(page, "window.convscope.preset === 'cs231n' && window.convscope.complete")
        applies = []
        for _ in range(7):
            page.click("#apply")
            wait_until(page, "window.convscope.complete && window.convscope.timings().firstStepDrawnAt > 0")
            t = page.evaluate("window.convscope.timings()")
            applies.append(t["firstStepDrawnAt"] - t["runStartedAt"])
        print(f"Apply -> first drawn step, CS231n preset ({page.evaluate('window.convscope.total')} events): "
              f"median {statistics.median(applies):.1f} ms, min {min(applies):.1f} ms, max {max(applies):.1f} ms (n=7)")
        browser.close()


if __name__ == "__main__":
    main()
