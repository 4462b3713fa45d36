"""Every step fits every classroom screen (Debian's Chromium): for every lesson at
1024×768, 1280×720, 1366×768, 1920×1080, 3840×2160 and in projector mode at 1024×768,
1280×720, 1280×800 (projectors' XGA and WXGA) and 1920×1080, at the
first, a middle and the last step of every phase, every cell the step reads or writes
(classes rd / wr) lies inside the viewport and inside every box that clips it, their
number is the number of cells in the event's boxes (counted here from the server's
trace document), and their text is large enough to read; no tag of what a step added
covers a written cell's digits, and no caption is cut while the stage has the width to
show it. Eleven custom setups up to 256
input and 108 weight cells do the same at 1366×768, and five of them in projector mode
at 1280×720. Steps are jumped to through the page's handle. (One exception: a pad or crop
in one step of a custom setup may leave up to half of its whole-tensor copy to scroll.)

A page load costs Chromium about two CPU-seconds on this machine in a new context (one in
a kept context: test_browser_helpers.KeptContexts), most of these checks' time, so a
lesson's screens share one loaded page per mode (normal or projector, the setup drawer
open at start or not), resized to each screen in turn: the stage is a function of the
viewport. That a page resized to a screen draws what a page loaded at
that screen draws is checked at every screen for two lessons (the last test here)."""

from __future__ import annotations

from functools import cache

import pytest
from test_browser_helpers import debug_url, event_cells, require_chromium, server_document, wait_complete

pytestmark = pytest.mark.browser

require_chromium()


LESSONS = ["cs231n", "d2l", "edge", "stride2", "dilation2", "depthwise", "same_even", "nhwc_relu", "batch2"]
# the lessons of the layers beside Conv2d (issue 24): a padding mode, the flip, the
# transposed layer, a causal Conv1d
LESSONS += ["reflect_edge", "flip", "gan_upsample", "causal_audio"]
# (width, height, projector, smallest cell text in px)
SCREENS = [
    (1024, 768, False, 16),
    (1280, 720, False, 16),
    (1366, 768, False, 16),
    (1920, 1080, False, 16),
    (1024, 768, True, 20),  # projector mode at what lecture halls run: XGA, WXGA
    (1280, 720, True, 20),
    (1280, 800, True, 20),
    (1920, 1080, True, 24),
    (3840, 2160, False, 16),
]

# Jump to a step (the page's seek draws it at once), let the follow-scroll (the next
# frame), its scroll event and the drawing of what came into view (the frame after) happen,
# and two frames more; then measure every rd / wr cell: inside the viewport and inside each
# ancestor that clips its overflow, and its text size; and the name of each figure the
# step touches (checked in projector mode).
STEPS_JS = """async ([steps, FRAMES]) => {
  const results = [];
  for (const step of steps) {
  window.convscope.seek(step);
  for (let k = 0; k < FRAMES; k++) await new Promise((r) => requestAnimationFrame(r));
  const vw = window.innerWidth, vh = window.innerHeight;
  // whether element c lies inside the viewport and every ancestor box that clips it
  const inside = (c) => {
    const r = c.getBoundingClientRect();
    let box = {left: 0, top: 0, right: vw, bottom: vh};
    for (let e = c.parentElement; e && e !== document.documentElement; e = e.parentElement) {
      const st = getComputedStyle(e);
      if (st.overflowX !== 'visible' || st.overflowY !== 'visible') {
        const b = e.getBoundingClientRect();
        box = {left: Math.max(box.left, b.left + e.clientLeft), top: Math.max(box.top, b.top + e.clientTop),
               right: Math.min(box.right, b.left + e.clientLeft + e.clientWidth), bottom: Math.min(box.bottom, b.top + e.clientTop + e.clientHeight)};
      }
    }
    return !(r.width <= 0 || r.left < box.left - 1 || r.top < box.top - 1 || r.right > box.right + 1 || r.bottom > box.bottom + 1);
  };
  const cells = Array.from(document.querySelectorAll('.cell.rd, .cell.wr'));
  const out = [];
  let smallest = Infinity;
  for (const c of cells) {
    if (!inside(c)) out.push(`${c.dataset.tensor}[${c.dataset.idx}]`);
    smallest = Math.min(smallest, parseFloat(getComputedStyle(c).fontSize));
  }
  // the names of the figures shown (a folded figure is not drawn in projector mode)
  const unnamed = Array.from(document.querySelectorAll('#stage figure.tensor'))
    .filter((f) => f.getBoundingClientRect().width > 0 && f.querySelector('.cell.rd, .cell.wr'))
    .filter((f) => !inside(f.querySelector('.tname'))).map((f) => f.dataset.tensor);
  // the tag of what the step added (::after, at the cell's lower right) beside each
  // written cell's digits (their text's boxes): never over them
  const overlaps = [];
  for (const c of document.querySelectorAll('#stage .cell.wr[data-delta]')) {
    const r = c.getBoundingClientRect();
    const a = getComputedStyle(c, '::after');
    if (r.width <= 0 || a.content === 'none' || a.display === 'none') continue;
    const tag = {right: r.right - parseFloat(a.right), bottom: r.bottom - parseFloat(a.bottom)};
    tag.left = tag.right - parseFloat(a.width);
    tag.top = tag.bottom - parseFloat(a.height);
    // (a box that cannot be read is an overlap: the check never passes by default)
    if (![tag.left, tag.right, tag.top, tag.bottom].every(Number.isFinite) || tag.right - tag.left <= 0) {
      overlaps.push(`${c.dataset.tensor}[${c.dataset.idx}] (its tag's box: ${a.width} × ${a.height})`);
      continue;
    }
    const text = document.createRange();
    text.selectNodeContents(c);
    for (const d of text.getClientRects()) {
      if (d.left < tag.right && d.right > tag.left && d.top < tag.bottom && d.bottom > tag.top) {
        overlaps.push(`${c.dataset.tensor}[${c.dataset.idx}]`);
        break;
      }
    }
  }
  // a caption cut (its description's ellipsis) while the stage had the width to show it
  const flow = document.querySelector('#stage .flow');
  const cols = Array.from(flow.children).filter((e) => e.getBoundingClientRect().width > 0);
  const used = cols.length ? cols[cols.length - 1].getBoundingClientRect().right - cols[0].getBoundingClientRect().left : 0;
  const free = flow.clientWidth - used;
  const cut = [];
  if (!document.getElementById('stage').classList.contains('col-scroll')) {
    for (const d of document.querySelectorAll('#stage figure.tensor figcaption .tdesc')) {
      const missing = d.scrollWidth - d.clientWidth;
      if (d.getBoundingClientRect().width > 0 && missing > 1 && missing < free - 2) cut.push(`${d.closest('figure').dataset.tensor} (${missing} px short, ${Math.round(free)} px free)`);
    }
  }
  results.push({shown: window.convscope.shownStep, cells: cells.length, out: out.slice(0, 8), nOut: out.length, smallest, unnamed, overlaps, cut});
  }
  return results;
}"""


def _steps(doc: dict) -> list[int]:
    steps = []
    for p in doc["phases"]:
        if p["stop"] > p["start"]:
            steps += sorted({p["start"], (p["start"] + p["stop"] - 1) // 2, p["stop"] - 1})
    return steps


# frames each measured step waits after its seek (see STEPS_JS)
FRAMES = 4


def _open(browser, base_url, path, screen, kept=None):
    """(context, page): `path` loaded at `screen`, its trace complete; in a new context,
    or with `kept` (KeptContexts, a context number) in that kept context (context None)."""
    width, height, projector, _ = screen
    # (reduced motion: a written cell's flash grows it by a sixth for 0.4 s, past its box)
    if kept is None:
        context = browser.new_context(viewport={"width": width, "height": height}, reduced_motion="reduce")
        page = context.new_page()
    else:
        context, page = None, kept[0].page(kept[1], {"reduced_motion": "reduce"})
        page.set_viewport_size({"width": width, "height": height})
    page.goto(debug_url(f"{base_url}{path}{'&p=1' if projector else ''}"))
    wait_complete(page)
    assert page.evaluate("document.body.classList.contains('projector')") == projector
    return context, page


# A window resized: wait until the page sees the new size (for at most 120 frames), then
# for its room's observer (a frame), the redraw it asks for (the next) and the
# follow-scroll after it; the size the page has.
RESIZED_JS = """async ([width, height]) => {
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  for (let k = 0; k < 120 && (innerWidth !== width || innerHeight !== height); k++) await frame();
  for (let k = 0; k < 4; k++) await frame();
  return [innerWidth, innerHeight];
}"""


def _resize(page, screen) -> None:
    page.set_viewport_size({"width": screen[0], "height": screen[1]})
    seen = page.evaluate(RESIZED_JS, [screen[0], screen[1]])
    assert seen == [screen[0], screen[1]], f"resized to {screen[:2]}, the page has {seen}"


# A page opens its setup drawer at start on a window this wide or wider (without a kept
# choice: static/js/io/setup-memory.js); the check of resized pages below compares it.
SETUP_OPEN_FROM = 1440


class SharedPages:
    """One loaded page per mode (normal or projector, the setup drawer open at start or
    not) of the address the tests ask for, resized to each test's screen; a new address
    closes the pages of the last. Each in a new context, or with `kept` (KeptContexts) in
    the kept context of its mode, numbered from `first`."""

    def __init__(self, browser, base_url, kept=None, first: int = 0):
        self.browser, self.base_url, self.kept, self.first = browser, base_url, kept, first
        self.path, self.open = None, {}

    def at(self, path: str, screen):
        if path != self.path:
            self.close()
            self.path = path
        mode = (screen[2], screen[0] >= SETUP_OPEN_FROM)
        if mode not in self.open:
            kept = None if self.kept is None else (self.kept, self.first + 2 * mode[0] + mode[1])
            self.open[mode] = _open(self.browser, self.base_url, path, screen, kept)
        else:
            _resize(self.open[mode][1], screen)
        return self.open[mode][1]

    def close(self) -> None:
        for context, page in self.open.values():
            (page if context is None else context).close()
        self.open = {}


@pytest.fixture(scope="module")
def shared_pages(browser, base_url, kept_contexts):
    pages = SharedPages(browser, base_url, kept_contexts)
    yield pages
    pages.close()


def _problems(page, doc: dict, screen) -> list[str]:
    """Every phase's first, middle and last step of `doc` measured on `page`, drawn at `screen`."""
    width, height, projector, min_px = screen
    steps = _steps(doc)
    problems = []
    for step, got in zip(steps, page.evaluate(STEPS_JS, [steps, FRAMES])):
        ev = doc["events"][step]
        want = event_cells(ev)
        where = f"{width}x{height}{' projector' if projector else ''} step {step} ({ev['phase']})"
        if got["shown"] != step:
            problems.append(f"{where}: shows step {got['shown']}")
        if got["cells"] != want:
            problems.append(f"{where}: {got['cells']} rd/wr cells drawn, the event's boxes hold {want}")
        # a pad or crop in one step (copies "one") copies a whole tensor: more cells than
        # a laptop shows at legible sizes for the larger setups; it may scroll, but
        # starts in view with at least half of the copy on screen
        whole_copy = ev["phase"] in ("pad", "crop") and not ev["loop"]
        if got["nOut"] > (got["cells"] // 2 if whole_copy else 0):
            problems.append(f"{where}: {got['nOut']} of {got['cells']} cells off screen, e.g. {got['out']}")
        if projector and got["unnamed"]:
            problems.append(f"{where}: the names of {got['unnamed']} are off screen")
        if got["cells"] and got["smallest"] < min_px:
            problems.append(f"{where}: cell text {got['smallest']} px < {min_px} px")
        if got["overlaps"]:
            problems.append(f"{where}: the tag of what was added covers the digits of {got['overlaps'][:6]}")
        if got["cut"]:
            problems.append(f"{where}: captions cut while the stage has room: {got['cut']}")
    return problems


def _check_screen(browser, base_url, path, config, screen) -> list[str]:
    """One page load at `screen`; every phase's first, middle and last step measured."""
    doc = server_document(base_url, config)
    context, page = _open(browser, base_url, path, screen)
    try:
        return _problems(page, doc, screen)
    finally:
        context.close()


def _screen_id(screen) -> str:
    return f"{screen[0]}x{screen[1]}{'-projector' if screen[2] else ''}"


@pytest.mark.parametrize("screen", SCREENS, ids=_screen_id)
@pytest.mark.parametrize("lesson", LESSONS)
def test_every_step_of_every_lesson_fits_the_screen(shared_pages, base_url, lesson, screen):
    page = shared_pages.at(f"/#s=0&l={lesson}", screen)
    problems = _problems(page, _lesson_document(base_url, lesson), screen)
    assert not problems, "\n".join(problems[:20])


@cache
def _lesson_document(base_url: str, lesson: str) -> dict:
    import httpx

    config = httpx.get(f"{base_url}/api/presets/{lesson}").json()["config"]
    return server_document(base_url, config)


def _randint(shape, seed, low=-2, high=2):
    return {"fill": "randint", "shape": shape, "low": low, "high": high, "seed": seed}


# eleven custom setups of up to 256 input cells and 108 weight cells
CUSTOM = {
    "16x16-k3": {"x": _randint([1, 1, 16, 16], 1), "w": _randint([1, 1, 3, 3], 2, -1, 1)},
    "4ch-8x8-108w-pad1": {"x": _randint([1, 4, 8, 8], 3), "w": _randint([3, 4, 3, 3], 4, -1, 1), "padding": 1},
    "batch2-stride2": {"x": _randint([2, 2, 8, 8], 5), "w": _randint([3, 2, 3, 3], 6, -1, 1), "stride": 2},
    "dilation2-k5": {
        "x": _randint([1, 1, 16, 16], 7),
        "w": _randint([1, 1, 5, 5], 8, -1, 1),
        "dilation": 2,
        "padding": 2,
    },
    "3ch-9x9-108w-bias": {
        "x": _randint([1, 3, 9, 9], 9),
        "w": _randint([4, 3, 3, 3], 10, -1, 1),
        "b": [1, 0, -1, 2],
        "stride": 2,
        "padding": 1,
        "dout": _randint([1, 4, 5, 5], 11),
    },
    "depthwise-4": {"x": _randint([1, 4, 8, 8], 12), "w": _randint([4, 1, 3, 3], 13, -1, 1), "groups": 4, "padding": 1},
    "12x12-k4-stride3-same": {
        "x": _randint([1, 1, 12, 12], 14),
        "w": _randint([2, 1, 4, 4], 15, -1, 1),
        "stride": 3,
        "padding": "same",
    },
    "nhwc-8x8x4": {
        "layout": "NHWC",
        "x": _randint([1, 8, 8, 4], 16),
        "w": _randint([3, 3, 4, 3], 17, -1, 1),
        "padding": 1,
    },
    "2ch-7x7-stride2-bias": {
        "x": _randint([1, 2, 7, 7], 22),
        "w": _randint([3, 2, 3, 3], 23, -1, 1),
        "b": [1, -1, 0],
        "stride": 2,
        "padding": 1,
    },
    "im2col-2ch": {"view": "im2col", "x": _randint([1, 2, 6, 6], 18), "w": _randint([2, 2, 3, 3], 19, -1, 1)},
    "transposed-stride2": {
        "view": "transposed",
        "x": _randint([1, 1, 8, 8], 20),
        "w": _randint([1, 1, 3, 3], 21, -1, 1),
        "stride": 2,
        "padding": 1,
    },
}


@pytest.mark.parametrize("name", list(CUSTOM))
def test_custom_setups_fit_a_1366x768_laptop(browser, base_url, name):
    from test_browser_helpers import lesson_path

    config = CUSTOM[name]
    problems = _check_screen(browser, base_url, lesson_path(config), config, (1366, 768, False, 14))
    assert not problems, "\n".join(problems[:20])


# five in projector mode on a WXGA projector (20 px digits): one channel of 16×16, a
# batch of two, two channels with a bias, a 4×4 kernel at stride 3 with "same", the
# transposed view. (Four channels of 8×8, padded, do not fit a step at 20 px on 1280×720:
# that needs the step's slices alone on the stage, issue 21's per-step folding.)
PROJECTED = ["16x16-k3", "batch2-stride2", "2ch-7x7-stride2-bias", "12x12-k4-stride3-same", "transposed-stride2"]


@pytest.mark.parametrize("name", PROJECTED)
def test_custom_setups_fit_a_1280x720_projector(browser, base_url, name):
    from test_browser_helpers import lesson_path

    config = CUSTOM[name]
    problems = _check_screen(browser, base_url, lesson_path(config), config, (1280, 720, True, 20))
    assert not problems, "\n".join(problems[:20])


# What a step draws, for the comparison below: the stage layout the page computed, each
# figure's size and each read or written cell's size and text size (not where they are
# scrolled to: the follow-scroll moves only as far as a step needs from the last one).
DRAWN_JS = """async ([step, FRAMES]) => {
  window.convscope.seek(step);
  for (let k = 0; k < FRAMES; k++) await new Promise((r) => requestAnimationFrame(r));
  const size = (e) => { const r = e.getBoundingClientRect(); return [Math.round(r.width), Math.round(r.height)]; };
  return {
    body: document.body.className,
    layout: window.convscope.layout(),
    figures: Array.from(document.querySelectorAll('#stage figure.tensor'), (f) => [f.dataset.tensor, ...size(f)]).sort(),
    cells: Array.from(document.querySelectorAll('#stage .cell.rd, #stage .cell.wr'),
      (c) => [c.dataset.tensor, c.dataset.idx, ...size(c), getComputedStyle(c).fontSize]),
  };
}"""


# (the stage measures its captions' widths per character of whichever figure is shown
# when it measures, in whole px: a page that measured at another step may give a column
# a few px more or less; all else is drawn the same)
WIDTH_SLACK = 4


def _near(a, b) -> bool:
    return a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) <= WIDTH_SLACK)


def _same(got: dict, want: dict) -> list[str]:
    """The parts of `got` and `want` (DRAWN_JS) that differ: widths by more than the slack
    (a column widened for its caption shows in its figures' widths)."""
    differ = [part for part in ("body", "cells") if got[part] != want[part]]
    g, w = got["layout"], want["layout"]
    if (g is None) != (w is None) or (
        g
        and (
            {k: v for k, v in g.items() if k not in ("width", "columns")}
            != {k: v for k, v in w.items() if k not in ("width", "columns")}
            or not _near(g.get("width"), w.get("width"))
            or [(c["names"], c["perLine"]) for c in g["columns"]] != [(c["names"], c["perLine"]) for c in w["columns"]]
        )
    ):
        differ.append("layout")
    if [(n, h) for n, _, h in got["figures"]] != [(n, h) for n, _, h in want["figures"]] or not all(
        _near(a[1], b[1]) for a, b in zip(got["figures"], want["figures"])
    ):
        differ.append("figures")
    return differ


@pytest.mark.parametrize("lesson", ["cs231n", "gan_upsample"])
def test_a_page_resized_to_a_screen_draws_what_a_page_loaded_at_it_draws(browser, base_url, kept_contexts, lesson):
    """The fit checks above resize one page per mode through the screens; here the same
    pages go through the screens in the same order, each screen is also loaded fresh, and
    a forward and a backward step drawn on both are the same. (Kept contexts of their own:
    4 to 7 for the resized pages, 8 for the loaded ones; the fit checks' are 0 to 3.)"""
    doc = _lesson_document(base_url, lesson)
    # (the middle step of the first and of the last phase of more than one step: a
    # forward step and a backward one)
    phases = [p for p in doc["phases"] if p["stop"] - p["start"] > 1]
    steps = [(p["start"] + p["stop"]) // 2 for p in (phases[0], phases[-1])]
    resized = SharedPages(browser, base_url, kept_contexts, first=4)
    problems = []
    try:
        for screen in SCREENS:
            page = resized.at(f"/#s=0&l={lesson}", screen)
            _, loaded = _open(browser, base_url, f"/#s=0&l={lesson}", screen, (kept_contexts, 8))
            try:
                for step in steps:
                    want = loaded.evaluate(DRAWN_JS, [step, FRAMES])
                    got = page.evaluate(DRAWN_JS, [step, FRAMES])
                    problems += [
                        f"{_screen_id(screen)} step {step}: {part} resized {got[part]!r:.300}, loaded {want[part]!r:.300}"
                        for part in _same(got, want)
                    ]
            finally:
                loaded.close()
    finally:
        resized.close()
    assert not problems, "\n".join(problems[:12])
