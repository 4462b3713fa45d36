"""Take the README's screenshots of the page (1920×1080 normal and projector, phone).

    .venv/bin/python docs/screenshots/take_screenshots.py

Starts the real app under uvicorn on a free loopback port and drives Debian's Chromium.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from playwright.sync_api import sync_playwright  # noqa: E402

from test_browser_helpers import CHROMIUM, CHROMIUM_ARGS, live_server, wait_complete, wait_until  # noqa: E402

OUT = Path(__file__).resolve().parent


def shoot(browser, base, name, viewport, preset, step, projector=False, **ctx):
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, **ctx)
    page = context.new_page()
    page.goto(base + "/")
    wait_complete(page)
    page.select_option("#preset", preset)
    wait_until(page, f"window.convscope.preset === '{preset}' && window.convscope.complete && window.convscope.step === 0")
    page.evaluate(f"window.convscope.seek({step})")
    if projector:
        page.keyboard.press("p")
    page.wait_for_timeout(500)
    page.screenshot(path=str(OUT / name))
    print("wrote", OUT / name)
    context.close()


def main() -> None:
    with live_server() as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        shoot(browser, base, "page-1920x1080.png", (1920, 1080), "cs231n", 24)
        shoot(browser, base, "projector-1920x1080.png", (1920, 1080), "cs231n", 24, projector=True)
        shoot(browser, base, "phone-390x844.png", (390, 844), "d2l", 5, is_mobile=True, has_touch=True, device_scale_factor=2)
        browser.close()


if __name__ == "__main__":
    main()
