"""The stage paints only the slices in view (static/js/stage/stage.js, stage/measure.js's
markOffView) and the others when they come into view. What is on the screen must still
be the trace's step, in the very frame it is drawn: after jumps within and across
phases, after the follow's own scroll, after scrolls of the stage, its columns, a
figure's sideways scroll or the page, after the figures are arranged anew or the window
changes size, and after playing at top speed. Every cell whose
box shows (inside the viewport and every box that clips it) is read inside the first
animation frame after the action, before that frame is painted, and compared with the
replay of the server's trace document (test_browser_helpers.replay)."""

from __future__ import annotations

import random

import pytest
from test_browser_helpers import (
    cell_problems,
    debug_url,
    lesson_path,
    replay,
    require_chromium,
    server_document,
    wait_complete,
)

pytestmark = pytest.mark.browser

require_chromium()


# the page benchmark's trace (bench/page.py): 11 280 cells, too many to show whole, so
# slices stand out of view in every phase at these sizes
BIG = {
    "x": {"fill": "randint", "shape": [2, 3, 16, 16], "low": -2, "high": 2, "seed": 0},
    "w": {"fill": "randint", "shape": [4, 3, 3, 3], "low": -1, "high": 1, "seed": 1},
    "b": {"fill": "randint", "shape": [4], "low": -1, "high": 1, "seed": 2},
    "padding": 1,
}

# The cells on screen: per slice (its clip is its ancestors' overflow boxes and the
# viewport), then per cell of a slice that shows. Read in the frame's animation
# callbacks, after the page's own (its redraw, the follow), before the frame is painted.
SHOWN_JS = """() => {
  const vw = window.innerWidth, vh = window.innerHeight;
  const out = [];
  for (const slice of document.querySelectorAll('#stage .slice')) {
    let box = {left: 0, top: 0, right: vw, bottom: vh};
    for (let e = slice.parentElement; e && e !== document.documentElement; e = e.parentElement) {
      const st = getComputedStyle(e);
      if (st.display === 'none') { box = null; break; }
      if (st.overflowX !== 'visible' || st.overflowY !== 'visible') {
        const b = e.getBoundingClientRect();
        box = {left: Math.max(box.left, b.left + e.clientLeft), top: Math.max(box.top, b.top + e.clientTop),
               right: Math.min(box.right, b.left + e.clientLeft + e.clientWidth), bottom: Math.min(box.bottom, b.top + e.clientTop + e.clientHeight)};
      }
    }
    if (!box) continue;
    const s = slice.getBoundingClientRect();
    if (s.bottom <= box.top || s.top >= box.bottom || s.right <= box.left || s.left >= box.right) continue;
    for (const c of slice.querySelectorAll('.cell')) {
      const r = c.getBoundingClientRect();
      if (r.bottom <= box.top || r.top >= box.bottom || r.right <= box.left || r.left >= box.right) continue;
      out.push([c.dataset.tensor, Number(c.dataset.idx), c.textContent]);
    }
  }
  return out;
}"""

# every element that scrolls the stage's content: the stage, its columns, each figure's
# slices sideways, and the page
SCROLLERS_JS = """() => {
  const all = [document.getElementById('stage'), ...document.querySelectorAll('#stage .flow-col, #stage .bands')];
  const out = all.map((e, i) => [i, e.scrollHeight - e.clientHeight, e.scrollWidth - e.clientWidth]).filter(([, y, x]) => y > 1 || x > 1);
  const page = document.scrollingElement;
  if (page.scrollHeight - page.clientHeight > 1) out.push([-1, page.scrollHeight - page.clientHeight, 0]);
  return out;
}"""

SCROLL_JS = """([i, top, left]) => {
  const all = [document.getElementById('stage'), ...document.querySelectorAll('#stage .flow-col, #stage .bands')];
  const e = i < 0 ? document.scrollingElement : all[i];
  e.scrollTop = top;
  e.scrollLeft = left;
}"""


def _check(page, doc: dict, pads: set, what: str, js: str) -> int:
    """Run ``js`` (it acts), then read the cells on screen in the next frame and compare
    them with the trace at the step the page shows; returns how many were compared."""
    step, shown = page.evaluate(
        f"""async () => {{ {js}; return await new Promise((done) => requestAnimationFrame(() =>
              done([window.convscope.step, ({SHOWN_JS})()]))); }}"""
    )
    values, counts = replay(doc, step)
    texts: dict[str, dict[int, str]] = {}
    for name, idx, text in shown:
        texts.setdefault(name, {})[idx] = text
    wrong = [p for name, t in texts.items() for p in cell_problems(doc, step, values, counts, pads, name, t)]
    assert not wrong, f"after {what}, {len(wrong)} of {len(shown)} cells on screen are stale:\n" + "\n".join(wrong[:8])
    return len(shown)


@pytest.mark.parametrize(
    "width,height", [(1366, 768), (1920, 1080), (390, 844)], ids=["1366x768", "1920x1080", "phone"]
)
def test_what_is_on_screen_is_the_step_in_the_frame_it_is_drawn(browser, base_url, width, height):
    doc = server_document(base_url, BIG)
    total = len(doc["events"])
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        page.goto(debug_url(base_url + lesson_path(BIG)))
        wait_complete(page, timeout=60)
        pads = set(
            map(
                tuple,
                page.evaluate(
                    "Array.from(document.querySelectorAll('.cell.fixed-zero'), (c) => [c.dataset.tensor, Number(c.dataset.idx)])"
                ),
            )
        )
        rng = random.Random(width)
        compared = 0
        phases = {p["name"]: p for p in doc["phases"]}
        # a jump into each phase first, then random jumps, scrolls and short plays
        actions = [("jump", phases[n]["start"] + 5) for n in phases] + [
            (rng.choice(["jump", "scroll", "scroll", "near", "play", "all", "resize"]), rng.randrange(total))
            for _ in range(40)
        ]
        for kind, step in actions:
            if kind == "jump":
                compared += _check(page, doc, pads, f"a jump to step {step}", f"window.convscope.seek({step})")
            elif kind == "near":
                compared += _check(
                    page, doc, pads, f"a step forward from {step}", "window.convscope.seek(window.convscope.step + 1)"
                )
            elif kind == "play":
                page.evaluate("window.convscope.setSpeedIndex(99)")
                page.evaluate("window.convscope.play()")
                page.wait_for_timeout(250)
                compared += _check(page, doc, pads, "playing at top speed, then pausing", "window.convscope.pause()")
            elif kind == "all":
                # every figure unfolds (or folds again): the stage is arranged anew
                compared += _check(
                    page, doc, pads, "All tensors toggled", "document.getElementById('all-tensors').click()"
                )
            elif kind == "resize":
                # a window made smaller and back: the stage's size changes under the figures
                for w, h in [(width - 137, height - 61), (width, height)]:
                    page.set_viewport_size({"width": w, "height": h})
                    compared += _check(page, doc, pads, f"a resize to {w}x{h}", "void 0")
            else:
                scrollers = page.evaluate(SCROLLERS_JS)
                if not scrollers:
                    continue
                i, dy, dx = rng.choice(scrollers)
                top, left = rng.randrange(dy + 1) if dy > 0 else 0, rng.randrange(dx + 1) if dx > 0 else 0
                compared += _check(
                    page, doc, pads, f"scrolling #{i} to ({left}, {top})", f"({SCROLL_JS})([{i}, {top}, {left}])"
                )
        # (a page that shows nothing would pass the comparisons)
        assert compared > 40 * 50, f"only {compared} cells were on screen in {len(actions)} actions"
    finally:
        context.close()
