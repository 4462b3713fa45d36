"""The page in Debian's Chromium (Playwright), served by a real uvicorn process.

What the page shows is checked against the server's own trace document, replayed here
independently (NumPy over the event boxes). Every test also asserts that no request left
for another host and that the console stayed free of errors.
"""

from __future__ import annotations

import json
import re

import pytest
from test_browser_helpers import (
    assert_equation_matches,
    assert_stage_matches,
    cell_texts,
    choose_preset,
    debug_url,
    event_cells,
    lesson_path,
    require_chromium,
    server_document,
    shown_number,
    step_of,
    wait_complete,
    wait_until,
)

pytestmark = pytest.mark.browser

require_chromium()

# the fixtures every browser test uses: a live server, Chromium, a page opener


# Every visible element with text of its own: its font size (< 24 px listed in "small")
# and its contrast against the first opaque background behind it (< 7:1 in "low").
TEXT_REPORT_JS = """() => {
        const lum = (rgb) => {
          const [r, g, b] = rgb.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
          return 0.2126 * r + 0.7152 * g + 0.0722 * b;
        };
        const parse = (c) => { const m = c.match(/[\\d.]+/g); return m ? m.map(Number) : [0, 0, 0, 0]; };
        const bgOf = (el) => {
          for (let e = el; e; e = e.parentElement) {
            const c = parse(getComputedStyle(e).backgroundColor);
            if (c.length < 4 || c[3] > 0.5) return c.slice(0, 3);
          }
          return [0, 0, 0];
        };
        const small = [], low = [];
        for (const el of document.querySelectorAll('body *')) {
          const own = Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.nodeValue.trim());
          if (!own) continue;
          const r = el.getBoundingClientRect();
          if (!r.width || !r.height || el.closest('[hidden], dialog:not([open]), .visually-hidden')) continue;
          const st = getComputedStyle(el);
          if (st.visibility === 'hidden' || st.display === 'none') continue;
          const size = parseFloat(st.fontSize);
          if (size < 24) small.push(`${el.tagName}.${el.className}: ${size}px "${el.textContent.trim().slice(0, 20)}"`);
          const fg = lum(parse(st.color).slice(0, 3)), bg = lum(bgOf(el));
          const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
          if (ratio < 7) low.push(`${el.tagName}.${el.className}: ${ratio.toFixed(2)} "${el.textContent.trim().slice(0, 20)}"`);
        }
        return {small, low, width: document.documentElement.scrollWidth};
      }"""


def test_a_cells_accessible_name_says_its_tensor_index_value_and_part_in_the_step(open_page, base_url):
    """A screen reader hears "out[0,0,1,0] = 37, written by this step, +37", not "37";
    the name follows the step (read cells say so, and the marks go with the step)."""
    page = open_page().page
    doc = server_document(base_url, page.evaluate("window.convscope.config"))
    z_event = next(
        k
        for k, e in enumerate(doc["events"])
        if any(x["tensor"] == "out" and x["start"] == [0, 0, 1, 0] for x in e["writes"])
    )
    page.evaluate(f"window.convscope.seek({z_event})")
    out = page.get_by_role("listitem", name="out[0,0,1,0] = 37, written by this step, +37", exact=True)
    assert out.count() == 1 and out.get_attribute("data-idx") == "2"
    reads = page.evaluate("[...document.querySelectorAll('.cell.rd')].map(c => c.getAttribute('aria-label'))")
    assert all(r.endswith(", read by this step") for r in reads), reads
    assert sum(r.startswith("x[0,0,") for r in reads) == 4 and sum(r.startswith("w[0,0,") for r in reads) == 4
    assert page.get_by_role("list", name="out").count() == 1
    page.evaluate(f"window.convscope.seek({z_event + 1})")
    assert page.locator('.cell[data-tensor="out"][data-idx="2"]').get_attribute("aria-label") == "out[0,0,1,0] = 37"
    page.evaluate("window.convscope.seek(0)")  # before the first write of out[0,0,1,0]: nothing yet
    assert (
        page.locator('.cell[data-tensor="out"][data-idx="2"]').get_attribute("aria-label")
        == "out[0,0,1,0] = not written yet"
    )


def test_d2l_preset_values_and_equation_at_several_steps(open_page, base_url):
    w = open_page()
    page = w.page
    assert page.input_value("#preset") == "d2l"
    doc = server_document(base_url, page.evaluate("window.convscope.config"))
    assert page.evaluate("window.convscope.total") == doc["total_events"]
    # no padding, the identity: 4 forward and 4 backward steps, reading x, writing out (z is out)
    assert [p["name"] for p in doc["phases"]] == ["forward", "backward"] and doc["total_events"] == 8
    z_event = next(
        k
        for k, e in enumerate(doc["events"])
        if any(x["tensor"] == "out" and x["start"] == [0, 0, 1, 0] for x in e["writes"])
    )
    for step in (0, z_event, doc["total_events"] // 2, doc["total_events"] - 1):
        page.evaluate(f"window.convscope.seek({step})")
        assert step_of(page) == step
        assert_stage_matches(page, doc, step)
        assert_equation_matches(page, doc, step)
    page.evaluate(f"window.convscope.seek({z_event})")
    # design.md's worked example: the cell out[0,0,1,0] (= z) shows 37, written this step
    cell = page.locator('.cell[data-tensor="out"][data-idx="2"]')
    assert cell.text_content() == "37"
    assert "wr" in cell.get_attribute("class")
    # its window is read on the input itself (no padding), with an outline, and narrated
    assert page.locator('.cell.rd[data-tensor="x"]').count() == 4
    assert page.locator('[data-tensor="x"] .box-outline').count() == 1
    assert page.locator('[data-tensor="xp"], [data-tensor="z"]').count() == 0
    assert doc["events"][z_event]["text"] in page.inner_text("#narration")
    badge = page.inner_text("#badge")
    assert "replay-checked" in badge
    # the server's gradient check, shown as it reported it
    rel = doc["check"]["max_rel_error"]
    assert f"gradients verified to {'0' if rel == 0 else f'{rel:.0e}'.replace('e-0', 'e-')}" in badge, badge
    assert page.get_attribute("#badge", "data-state") == "ok"


def test_keys_and_buttons_move_the_step(open_page, base_url):
    w = open_page()
    page = w.page
    choose_preset(page, "cs231n")  # four phases (pad, forward, backward, crop): d2l has two
    total = page.evaluate("window.convscope.total")
    phases = server_document(base_url, page.evaluate("window.convscope.config"))["phases"]
    page.locator("#stage").click(position={"x": 5, "y": 5})
    assert step_of(page) == 0
    for key, want in [
        ("ArrowRight", 1),
        ("ArrowRight", 2),
        ("ArrowLeft", 1),
        ("PageDown", 2),
        ("PageUp", 1),
        ("End", total - 1),
        ("Home", 0),
    ]:
        page.keyboard.press(key)
        wait_until(page, f"window.convscope.step === {want}", 3)
    starts = [p["start"] for p in phases if p["stop"] > p["start"]]
    page.keyboard.press("]")
    wait_until(page, f"window.convscope.step === {starts[1]}", 3)
    page.keyboard.press("]")
    wait_until(page, f"window.convscope.step === {starts[2]}", 3)
    page.keyboard.press("[")
    wait_until(page, f"window.convscope.step === {starts[1]}", 3)
    page.click("#btn-next")
    assert step_of(page) == starts[1] + 1
    page.click("#btn-prev")
    page.click("#btn-prev")
    assert step_of(page) == starts[1] - 1
    page.click("#btn-last")
    assert step_of(page) == total - 1
    page.click("#btn-first")
    page.click("#btn-next-phase")
    assert step_of(page) == starts[1]
    # speed keys, and Space plays to the end at top speed
    speed0 = page.evaluate("window.convscope.speed")
    page.keyboard.press("+")
    assert page.evaluate("window.convscope.speed") > speed0
    page.keyboard.press("-")
    assert page.evaluate("window.convscope.speed") == speed0
    page.evaluate("window.convscope.setSpeedIndex(99)")
    page.locator("#stage").click(position={"x": 5, "y": 5})
    page.keyboard.press(" ")
    wait_until(page, "window.convscope.playing || window.convscope.step === window.convscope.total - 1", 3)
    wait_until(page, f"!window.convscope.playing && window.convscope.step === {total - 1}", 10)
    # key sheet
    page.keyboard.press("?")
    assert page.locator("#keys-dialog").is_visible()
    page.keyboard.press("Escape")
    assert not page.locator("#keys-dialog").is_visible()


def test_scrubber_and_phase_markers(open_page, base_url):
    w = open_page()
    page = w.page
    choose_preset(page, "cs231n")
    doc = server_document(base_url, page.evaluate("window.convscope.config"))
    nonempty = [p for p in doc["phases"] if p["stop"] > p["start"]]
    marks = page.locator(".phase-mark")
    assert marks.count() == len(nonempty)
    # each mark names its phase in full in its tooltip; its label is the name or its
    # shortened form by rule, never a cut-off stub
    for i, p in enumerate(nonempty):
        assert marks.nth(i).get_attribute("title").startswith(f"{p['name']}:")
        label = marks.nth(i).inner_text()
        assert label in _label_forms(p["name"]), (label, p["name"])
        assert marks.nth(i).evaluate("(m) => m.scrollWidth <= m.clientWidth + 0.5")
    assert page.get_attribute("#scrubber", "max") == str(doc["total_events"] - 1)
    target = doc["total_events"] * 2 // 3
    page.locator("#scrubber").fill(str(target))
    wait_until(page, f"window.convscope.step === {target}", 3)
    _after_follow(page)  # the redraw (and the follow-scroll) happen on the next frames
    assert_stage_matches(page, doc, target)
    assert_equation_matches(page, doc, target)


def _label_forms(name: str) -> list[str]:
    words = name.split()
    short = " ".join(w[:3] + "." if len(w) > 4 else w for w in words)
    return [name, short, "".join(w[0] + "." for w in words) if len(words) > 1 else "", ""]


def test_url_round_trip_reopens_the_same_lesson_at_the_same_step(open_page, base_url):
    w = open_page()
    page = w.page
    choose_preset(page, "stride2")  # 8 steps: 4 forward, 4 backward
    config = page.evaluate("window.convscope.config")
    page.evaluate("window.convscope.seek(6)")
    wait_until(page, "location.hash.startsWith('#s=6&')", 3)
    link = page.url
    page.reload()
    wait_complete(page)
    assert step_of(page) == 6
    assert page.evaluate("window.convscope.config") == config
    doc = server_document(base_url, config)
    assert_stage_matches(page, doc, 6)
    # a fresh tab from the copied link lands there too
    w2 = open_page(link.removeprefix(base_url))
    assert step_of(w2.page) == 6


def test_projector_mode_large_text_and_contrast(open_page):
    w = open_page(viewport=(1920, 1080))
    page = w.page
    page.locator("#stage").click(position={"x": 5, "y": 5})
    page.keyboard.press("ArrowRight")
    page.keyboard.press("p")
    assert page.evaluate("document.body.classList.contains('projector')")
    assert not page.locator("#setup").is_visible()
    report = page.evaluate(TEXT_REPORT_JS)
    assert not report["small"], report["small"][:10]
    assert not report["low"], report["low"][:10]
    assert report["width"] <= 1920
    page.keyboard.press("p")
    assert page.locator("#setup").is_visible()


FIT_JS = """() => {
  const vw = window.innerWidth, vh = window.innerHeight;
  const out = (r) => r.left < -1 || r.top < -1 || r.right > vw + 1 || r.bottom > vh + 1;
  const figs = Array.from(document.querySelectorAll('figure.tensor.reading, figure.tensor.writing'));
  const cells = Array.from(document.querySelectorAll('.cell.rd, .cell.wr'));
  const stage = document.getElementById('stage');
  return {
    figures: figs.map((f) => f.dataset.tensor),
    outside: figs.filter((f) => out(f.getBoundingClientRect())).map((f) => [f.dataset.tensor, f.getBoundingClientRect().toJSON()]),
    cellsOutside: cells.filter((c) => out(c.getBoundingClientRect())).length,
    cells: cells.length,
    stageScrolls: stage.scrollHeight > stage.clientHeight + 1 || stage.scrollWidth > stage.clientWidth + 1,
    page: [document.documentElement.scrollWidth, document.documentElement.scrollHeight],
    cellFont: Math.min(...Array.from(document.querySelectorAll('figure.tensor:not(.off-phase) .cell'), (c) => parseFloat(getComputedStyle(c).fontSize))),
  };
}"""


@pytest.mark.parametrize("preset", ["cs231n", "d2l"])
def test_projector_fits_the_events_tensors_on_a_1920x1080_screen(open_page, base_url, preset):
    w = open_page(viewport=(1920, 1080))
    page = w.page
    if preset != "d2l":
        choose_preset(page, preset)
    doc = server_document(base_url, page.evaluate("window.convscope.config"))
    page.locator("#stage").click(position={"x": 5, "y": 5})
    page.keyboard.press("p")
    assert page.evaluate("document.body.classList.contains('projector')")
    # the first step of every phase and the middle of the longest one
    steps = [p["start"] for p in doc["phases"] if p["stop"] > p["start"]]
    longest = max(doc["phases"], key=lambda p: p["stop"] - p["start"])
    steps.append((longest["start"] + longest["stop"]) // 2)
    for step in steps:
        page.evaluate(f"window.convscope.seek({step})")
        fit = page.evaluate(FIT_JS)
        ev = doc["events"][step]
        touched = {b["tensor"] for b in ev["reads"] + ev["writes"]}
        assert set(fit["figures"]) == touched, (step, fit["figures"], touched)
        assert not fit["outside"], f"step {step} ({ev['phase']}): outside the screen: {fit['outside']}"
        assert fit["cells"] > 0 and fit["cellsOutside"] == 0, (step, fit)
        # (the stage may scroll: the lesson's title and description take a line or two;
        # what the step reads and writes is in view, checked above)
        assert fit["page"][0] <= 1920 and fit["page"][1] <= 1080, fit["page"]
        assert fit["cellFont"] >= 24, fit["cellFont"]
        report = page.evaluate(TEXT_REPORT_JS)
        assert not report["small"], (step, report["small"][:10])
        assert not report["low"], (step, report["low"][:10])
        assert_stage_matches(page, doc, step)


def _phone_window(page) -> dict:
    """After the follow-scroll of the step (the frame after it is drawn), scroll the page
    (vertically) to the read window on xp; where it and the player are."""
    _after_follow(page)
    return page.evaluate(
        """() => {
        const o = document.querySelector('[data-tensor="xp"] .box-outline');
        // scroll the page only, vertically (scrollIntoView would scroll the stage sideways too)
        window.scrollTo(0, window.scrollY + o.getBoundingClientRect().top - window.innerHeight / 2);
        const player = document.querySelector('.player').getBoundingClientRect();
        return {outline: o.getBoundingClientRect().toJSON(), player: player.toJSON(),
                pageWidth: document.documentElement.scrollWidth, scrollX: window.scrollX,
                buttons: Array.from(document.querySelectorAll('.transport button'), (b) => b.getBoundingClientRect().toJSON())};
      }"""
    )


def test_phone_viewport_stacks_without_horizontal_scroll(open_page):
    w = open_page(viewport=(390, 844), is_mobile=True, has_touch=True)
    page = w.page
    choose_preset(page, "cs231n")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # the settings drawer starts closed on a small screen; opened, it stacks below
    assert page.evaluate("document.body.classList.contains('setup-closed')")
    page.click("#toggle-setup")
    # the page scrolls to the setup it opened, below the stage: its first field on the
    # screen, under the docked player (it used to open out of sight of the button)
    wait_until(
        page,
        "(() => { const n = document.querySelector('input[name=\"N\"]').getBoundingClientRect();"
        " const d = document.querySelector('.dock').getBoundingClientRect();"
        " return scrollY > 0 && n.top >= d.bottom - 1 && n.bottom <= innerHeight; })()",
        5,
    )
    # (both boxes at once: the page may still be scrolling)
    viewer, setup = page.evaluate(
        "['viewer', 'setup'].map((id) => { const r = document.getElementById(id).getBoundingClientRect();"
        " return {x: r.x, y: r.y, width: r.width, height: r.height}; })"
    )
    assert setup["y"] >= viewer["y"] + viewer["height"] - 1, "controls stack below the stage"
    assert setup["x"] >= 0 and setup["x"] + setup["width"] <= 390
    page.click("#btn-next")
    assert step_of(page) == 1
    # a forward step: its window on the padded input is on screen, below the player that
    # stays at the top, and the player's buttons are big enough to tap, in one row
    page.evaluate("window.convscope.seek(10)")
    where = _phone_window(page)
    o, player = where["outline"], where["player"]
    assert where["pageWidth"] <= 390 and where["scrollX"] == 0
    assert o["left"] >= 0 and o["right"] <= 390, o
    assert o["top"] >= player["bottom"] - 1 and o["bottom"] <= 844, (o, player)
    assert player["top"] >= -1 and player["height"] <= 844 / 4, player
    rows = {round(b["top"]) for b in where["buttons"]}
    assert len(rows) == 1, rows
    assert all(b["width"] >= 36 and b["height"] >= 36 and b["right"] <= 390 for b in where["buttons"]), where["buttons"]
    page.click("#btn-next")  # the player works from down here
    assert step_of(page) == 11


def test_phone_follows_the_window_across_a_grid_wider_than_the_screen(open_page):
    wide = {
        "x": {"fill": "randint", "shape": [1, 1, 4, 14], "low": -2, "high": 2, "seed": 3},
        "w": {"fill": "randint", "shape": [1, 1, 3, 3], "low": -1, "high": 1, "seed": 4},
        "padding": 1,
    }
    w = open_page(lesson_path(wide), viewport=(390, 844), is_mobile=True, has_touch=True)
    page = w.page
    # the last forward step reads the right-most window of the 16-column padded input
    doc_phases = page.evaluate("window.convscope.document().phases")
    forward = next(p for p in doc_phases if p["name"] == "forward")
    caption = "document.querySelector('figure[data-tensor=\"xp\"] .tcrop').textContent"
    bands = "document.querySelector('figure[data-tensor=\"xp\"] .bands')"
    for all_tensors in (False, True):
        if all_tensors:
            # the whole tensors: the padded input scrolls sideways inside its figure to the window
            page.click("#all-tensors")
        for step in (forward["stop"] - 1, forward["start"], forward["start"] + 7):
            page.evaluate(f"window.convscope.seek({step})")
            where = _phone_window(page)
            o = where["outline"]
            assert where["pageWidth"] <= 390 and where["scrollX"] == 0, where
            assert o["left"] >= 0 and o["right"] <= 390, (step, o)
            if not all_tensors:
                # the close-up: the window's columns and one more each side, said in the caption
                box = page.evaluate(f"window.convscope.document().events[{step}].reads.find((r) => r.tensor === 'xp')")
                c0, c1 = max(0, box["start"][3] - 1), min(15, box["stop"][3])
                assert page.evaluate(caption).endswith(f"cols {c0}–{c1} of 6×16"), (step, box, page.evaluate(caption))
        assert page.evaluate(f"{bands}.scrollWidth > {bands}.clientWidth") == all_tensors


def test_invalid_input_shows_the_servers_message_and_keeps_the_last_trace(open_page):
    w = open_page()
    page = w.page
    page.evaluate("window.convscope.seek(5)")
    before = cell_texts(page, "x")
    page.fill('input[name="stride_h"]', "0")
    page.locator('input[name="stride_h"]').blur()
    err = page.locator('[data-error-for="stride"]')
    err.wait_for(state="visible", timeout=5000)
    assert "stride must be at least 1, got 0" in err.inner_text()
    assert page.get_attribute('input[name="stride_h"]', "aria-invalid") == "true"
    assert cell_texts(page, "x") == before
    assert step_of(page) == 5
    # a kernel larger than the padded input: the server's numbers, next to the shapes
    page.fill('input[name="stride_h"]', "1")
    page.fill('input[name="KH"]', "9")
    page.locator('input[name="KH"]').blur()
    err_w = page.locator('[data-error-for="w"]')
    err_w.wait_for(state="visible", timeout=5000)
    assert re.search(r"kernel spans 9 rows", err_w.inner_text()), err_w.inner_text()
    assert err.is_hidden()


def test_editing_a_cell_and_a_generator_reruns_the_trace(open_page, base_url):
    w = open_page()
    page = w.page
    page.click('[data-editor="x"] > summary')
    first = page.locator('[data-editor="x"] input[data-idx="0"]')
    first.fill("5")
    first.press("Tab")
    wait_until(page, "window.convscope.complete && window.convscope.config.x[0][0][0][0] === 5", 10)
    # the debounced re-run may still be on its way (a second run of the same setup draws
    # its cells at the frame after it arrives): wait for the drawn cell, not the config
    wait_until(
        page,
        "window.convscope.complete && document.querySelector("
        "'.cell[data-tensor=\"x\"][data-idx=\"0\"]').innerText.trim() === '5'",
        10,
    )
    # paste a block into the second cell
    page.evaluate(
        """() => { const inp = document.querySelector('[data-editor="x"] input[data-idx="1"]');
                   const dt = new DataTransfer(); dt.setData('text', '7 8\\n9');
                   inp.dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true})); }"""
    )
    wait_until(
        page, "window.convscope.complete && JSON.stringify(window.convscope.config.x[0][0][0]) === '[5,7,8]'", 10
    )
    # the debounced re-run may still be on its way: wait for the drawn cell, not the config
    wait_until(
        page,
        "window.convscope.complete && document.querySelector("
        "'.cell[data-tensor=\"x\"][data-idx=\"3\"]').textContent.trim() === '9'",
        10,
    )
    # a generator with a seed
    page.select_option('select[name="x_fill"]', "arange")
    wait_until(page, "window.convscope.complete && window.convscope.config.x.fill === 'arange'", 10)
    wait_until(
        page, "document.querySelector('.cell[data-tensor=\"x\"][data-idx=\"2\"]').textContent.trim() === '2'", 10
    )  # arange from 0 by 1, drawn
    doc = server_document(base_url, page.evaluate("window.convscope.config"))
    assert [shown_number(t) for _, t in sorted(cell_texts(page, "x").items())] == doc["tensors"]["x"]["data"]


def test_exports_trace_json_and_stage_png(open_page, base_url):
    w = open_page()
    page = w.page
    with page.expect_download() as d:
        page.click("#export-menu > summary")
        page.click("#export-json")
    doc = json.loads(open(d.value.path(), encoding="utf-8").read())
    assert doc == server_document(base_url, page.evaluate("window.convscope.config"))
    with page.expect_download() as d:
        page.click("#export-menu > summary")
        page.click("#export-png")
    data = open(d.value.path(), "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000


# Where the current event's cells and the captions of their figures are, against the
# stage's visible box (desktop: the stage scrolls inside itself) and the window.
IN_VIEW_JS = """() => {
  const s = document.getElementById('stage').getBoundingClientRect();
  const box = {left: Math.max(0, s.left), top: Math.max(0, s.top),
               right: Math.min(window.innerWidth, s.right), bottom: Math.min(window.innerHeight, s.bottom)};
  const inside = (r) => r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
  const cells = Array.from(document.querySelectorAll('.cell.rd, .cell.wr'));
  const figs = Array.from(document.querySelectorAll('figure.tensor.reading, figure.tensor.writing'));
  return {
    cells: cells.length,
    cellsOut: cells.filter((c) => !inside(c.getBoundingClientRect())).map((c) => c.dataset.tensor + '[' + c.dataset.idx + ']'),
    figures: figs.map((f) => f.dataset.tensor),
    captionsOut: figs.filter((f) => !inside(f.querySelector('figcaption').getBoundingClientRect())).map((f) => f.dataset.tensor),
    folded: Array.from(document.querySelectorAll('figure.tensor.off-phase'), (f) => f.dataset.tensor),
    cellPx: document.querySelector('figure.tensor.writing .cell').getBoundingClientRect().width,
    page: [document.documentElement.scrollWidth, document.documentElement.scrollHeight],
  };
}"""


def _after_follow(page):
    """Let the follow-scroll (next frame) and the drawing of what came into view happen."""
    page.evaluate(
        "new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(() => done(true)))))"
    )


def test_desktop_backward_step_shows_the_window_filter_and_written_cells_with_captions(open_page, base_url):
    """A laptop/desktop screen, normal mode, CS231n at backward steps: every cell the step
    reads (the window on xp, the filter, dz) or writes (db, dw, dxp) is inside the visible
    stage, and so are the captions of their figures; the other tensors are folded."""
    w = open_page(viewport=(1920, 1080))
    page = w.page
    choose_preset(page, "cs231n")
    doc = server_document(base_url, page.evaluate("window.convscope.config"))
    backward = next(p for p in doc["phases"] if p["name"] == "backward")
    for step in (backward["start"], backward["start"] + 13, backward["stop"] - 1):
        page.evaluate(f"window.convscope.seek({step})")
        _after_follow(page)
        seen = page.evaluate(IN_VIEW_JS)
        ev = doc["events"][step]
        # the identity: dz is dout
        assert (
            set(seen["figures"])
            == {b["tensor"] for b in ev["reads"] + ev["writes"]}
            >= {"xp", "w", "dout", "dw", "dxp"}
        ), seen
        assert seen["cells"] > 0 and not seen["cellsOut"], (step, seen)
        assert not seen["captionsOut"], (step, seen)
        assert {"x", "out", "dx"} <= set(seen["folded"]), seen
        assert seen["cellPx"] >= 26, seen
        assert seen["page"] == [1920, 1080], seen
        assert_equation_matches(page, doc, step)
    # "All tensors" unfolds every figure; the step's written cells are still followed into view
    page.click("#all-tensors")
    _after_follow(page)
    assert page.evaluate("document.querySelectorAll('figure.tensor.off-phase').length") == 0
    page.evaluate(f"window.convscope.seek({backward['start'] + 14})")
    _after_follow(page)
    seen = page.evaluate(IN_VIEW_JS)
    written = page.evaluate(
        "Array.from(document.querySelectorAll('.cell.wr'), (c) => c.dataset.tensor + '[' + c.dataset.idx + ']')"
    )
    assert written and not set(written) & set(seen["cellsOut"]), seen


def test_laptop_1366x768_follows_the_step_into_view(open_page, base_url):
    """A smaller laptop: the lesson cannot fit, the stage scrolls to the step: at a
    backward step most of what it reads and writes is in view, and its written bias."""
    w = open_page(viewport=(1366, 768))
    page = w.page
    choose_preset(page, "cs231n")
    doc = server_document(base_url, page.evaluate("window.convscope.config"))
    backward = next(p for p in doc["phases"] if p["name"] == "backward")
    step = backward["start"] + 13
    page.evaluate(f"window.convscope.seek({step})")
    _after_follow(page)
    seen = page.evaluate(IN_VIEW_JS)
    assert seen["cells"] > 0 and len(seen["cellsOut"]) < seen["cells"] / 2, seen
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366


_ON_PHONE_SCREEN = """() => {
  const dock = document.querySelector('.dock').getBoundingClientRect();
  const marked = [...document.querySelectorAll('.cell.rd, .cell.wr')];
  const seen = marked.filter((c) => { const r = c.getBoundingClientRect();
    return r.width > 0 && r.top >= dock.bottom - 1 && r.bottom <= innerHeight + 1 && r.left >= 0 && r.right <= innerWidth + 1; });
  return {marked: marked.length, seen: seen.length, pageWidth: document.documentElement.scrollWidth,
          closeUp: document.getElementById('stage').classList.contains('close-up')};
}"""


@pytest.mark.parametrize("lesson", ["cs231n", "d2l"])
def test_phone_shows_the_whole_step_under_the_docked_player(open_page, base_url, lesson):
    """On a phone every cell a step reads and writes is on the first screen, below the
    docked player: a forward and a backward step (CS231n's reads and writes 110 cells over
    five tensors), on a lesson opened at the step and after each step taken. The stage
    shows the step as a close-up (js/model/step-crop.js); the count of marked cells is the
    event's, so no cell was lost to the crop."""
    page = open_page(f"/#s=0&l={lesson}", viewport=(390, 844), is_mobile=True, has_touch=True).page
    doc = server_document(base_url, page.evaluate("window.convscope.config"))
    forward = next(p for p in doc["phases"] if p["name"] == "forward")
    backward = next(p for p in doc["phases"] if p["name"] == "backward")
    middle = (backward["start"] + backward["stop"]) // 2
    for step in (forward["start"] + 1, backward["start"] + 2, middle):
        page.goto(debug_url(f"{base_url}/#s={step}&l={lesson}"))
        page.reload()
        wait_complete(page)
        _after_follow(page)
        first = page.evaluate(_ON_PHONE_SCREEN)
        page.click("#btn-next")
        # (what is on screen is the point here, not how soon: a loaded CI machine has
        # taken over 3 s to draw the step a tap asked for)
        wait_until(page, f"window.convscope.step === {step + 1}", 10)
        _after_follow(page)
        after = page.evaluate(_ON_PHONE_SCREEN)
        for where, got, at in (("first screen", first, step), ("after a step", after, step + 1)):
            assert got["pageWidth"] <= 390, (step, where, got)
            assert got["marked"] == event_cells(doc["events"][at]), (at, where, got)
            assert got["seen"] == got["marked"], (at, where, got)


_CROP_NOTES = """() => {
  const layout = window.convscope.layout();
  const widened = new Set(layout.columns.filter((c) => c.minWidth).flatMap((c) => c.names));
  return Array.from(document.querySelectorAll('#stage figure.cropped'), (f) => {
    const n = f.querySelector('.tcrop');
    return {name: f.dataset.tensor, note: n.textContent, widened: widened.has(f.dataset.tensor),
            shown: n.clientWidth, short: n.scrollWidth - n.clientWidth};
  });
}"""


@pytest.mark.parametrize("lesson", ["cs231n", "causal_audio"])
def test_a_phone_close_up_says_which_cells_it_shows_where_the_width_allows(open_page, base_url, lesson):
    """A phone's close-up of a step cuts each figure to the cells around it, and its
    caption says which (rows 0–2 · cols 0–1 of 3×3). A figure cut to a column or two is
    narrower than that note: the stage widens it for its note where that costs at most a
    fifth of the cell size (js/model/stage-layout.js layoutCloseUp), and then the note
    shows whole: at every forward step of CS231n, whose output is cut to two or three
    columns (at its fourth, 0 px of note before)."""
    page = open_page(f"/#s=0&l={lesson}", viewport=(390, 844), is_mobile=True, has_touch=True).page
    doc = server_document(base_url, page.evaluate("window.convscope.config"))
    steps = sorted(
        {
            s
            for p in doc["phases"]
            if p["stop"] > p["start"]
            for s in (p["start"], p["start"] + 3, (p["start"] + p["stop"]) // 2, p["stop"] - 1)
        }
    )
    widened = 0
    for step in steps:
        page.evaluate(f"window.convscope.seek({step})")
        _after_follow(page)
        for f in page.evaluate(_CROP_NOTES):
            if f["widened"]:
                widened += 1
                assert f["shown"] > 0 and f["short"] <= 1, (step, f)
            if lesson == "cs231n" and doc["events"][step]["phase"] == "forward" and f["name"] == "out":
                # (a forward step's out is cut to two or three columns of 3: said whole)
                assert f["widened"] and f["short"] <= 1, (step, f)
                if step == 4:
                    assert f["note"] == "rows 0–2 · cols 0–1 of 3×3", f
    assert widened >= 2, widened


def test_phone_page_is_no_wider_than_the_screen_with_a_setup_error(open_page):
    page = open_page("/#s=3&l=cs231n", viewport=(390, 844), is_mobile=True, has_touch=True).page
    page.click("#toggle-setup")
    page.fill('input[name="KH"]', "9")
    page.locator('input[name="KH"]').blur()
    page.locator('[data-error-for="w"]').wait_for(state="visible", timeout=5000)
    wait_until(page, "document.documentElement.scrollWidth <= 390", 3)


def test_phone_shows_the_step_text_with_the_window(open_page, base_url):
    """On a phone the step's text stays in the sticky block above the stage (three lines
    high, the rest scrolls inside it: never cut), on screen together with the window
    being read, which it does not cover."""
    w = open_page(viewport=(390, 844), is_mobile=True, has_touch=True)
    page = w.page
    choose_preset(page, "cs231n")
    doc = server_document(base_url, page.evaluate("window.convscope.config"))
    backward = next(p for p in doc["phases"] if p["name"] == "backward")
    for step in (30, backward["start"] + 13):
        page.evaluate(f"window.convscope.seek({step})")
        where = _phone_window(page)
        eq = page.evaluate("""() => { const t = document.getElementById('eq-text');
            const r = t.getBoundingClientRect();
            return {rect: r.toJSON(), lines: Math.round(r.height / parseFloat(getComputedStyle(t).lineHeight)),
                    text: t.textContent, dock: document.querySelector('.dock').getBoundingClientRect().toJSON()}; }""")
        o = where["outline"]
        assert eq["text"] == doc["events"][step]["text"]
        assert 0 <= eq["rect"]["top"] and eq["rect"]["bottom"] <= 844 and eq["rect"]["right"] <= 390, eq
        assert 1 <= eq["lines"] <= 3, eq
        assert o["top"] >= eq["dock"]["bottom"] - 1 and o["bottom"] <= 844, (o, eq)
        assert eq["dock"]["height"] <= 844 * 0.3, eq


@pytest.mark.parametrize("size", [(1024, 768), (1280, 720), (1280, 800)])
def test_projector_top_bar_is_whole_at_projector_resolutions(open_page, size):
    """Projector mode's one-line top bar at XGA and WXGA: every button and the badge
    inside the screen, the badge in its few words (its whole text is the tooltip)."""
    page = open_page("/#s=20&l=cs231n&p=1", viewport=size).page
    wait_until(page, "window.convscope.complete && document.getElementById('badge').dataset.short === 'checked'", 10)
    got = page.evaluate(
        """() => {
        const items = [...document.querySelectorAll('.topbar button, .topbar select, #badge')]
          .filter((e) => e.getClientRects().length)
          .map((e) => ({id: e.id || e.textContent.trim(), r: e.getBoundingClientRect().toJSON()}));
        const badge = document.getElementById('badge');
        return {items, width: innerWidth, after: getComputedStyle(badge, '::after').content,
                cut: badge.scrollWidth > badge.clientWidth + 1, title: badge.title};
      }"""
    )
    off = [i["id"] for i in got["items"] if i["r"]["left"] < 0 or i["r"]["right"] > got["width"] + 0.5]
    assert not off, (off, got["items"])
    assert got["after"] == '"checked"' and not got["cut"], got
    assert got["title"].startswith("replay-checked"), got["title"]


@pytest.mark.parametrize("projector", [False, True], ids=["laptop", "projector"])
def test_the_lesson_menu_shows_cs231ns_whole_name_at_1024x768(open_page, projector):
    """At XGA the top bar is one line: the menu's word "Lesson" is for screen readers
    only (still the menu's name), so the menu has the width of CS231n's whole name."""
    page = open_page(f"/#s=0&l=cs231n{'&p=1' if projector else ''}", viewport=(1024, 768)).page
    got = page.evaluate(
        """() => { const s = document.getElementById('preset'); const st = getComputedStyle(s);
          const c = document.createElement('canvas').getContext('2d');
          c.font = `${st.fontWeight} ${st.fontSize} ${st.fontFamily}`;
          const text = s.options[s.selectedIndex].text;
          // (its text's room: the box less its padding and the menu's arrow, about 20 px)
          return {text, need: c.measureText(text).width, room: s.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight) - 20,
                  name: s.labels[0].textContent, labelShown: s.labels[0].getBoundingClientRect().width > 1}; }"""
    )
    assert got["text"] == "CS231n's convolution demo" and got["name"] == "Lesson", got
    assert got["need"] <= got["room"] and not got["labelShown"], got


def test_the_key_sheet_opens_at_its_top_on_a_projector(open_page):
    """In projector mode at XGA the key sheet is taller than the screen: it opens at its
    title (focused, so a screen reader says what opened) with the first keys in view,
    not scrolled down to its Close button."""
    page = open_page("/#s=3&p=1&l=cs231n", viewport=(1024, 768)).page
    page.locator("#stage").focus()
    page.keyboard.press("?")
    wait_until(page, "document.getElementById('keys-dialog').open")
    sheet = page.evaluate(
        """() => { const d = document.getElementById('keys-dialog');
          const first = document.querySelector('#keys-list dt').getBoundingClientRect();
          return {scrolled: d.scrollTop, tall: d.scrollHeight > d.clientHeight, focused: document.activeElement.id,
                  firstInView: first.top >= 0 && first.bottom <= innerHeight}; }"""
    )
    assert sheet == {"scrolled": 0, "tall": True, "focused": "keys-title", "firstInView": True}, sheet
    page.keyboard.press("Escape")
    wait_until(page, "!document.getElementById('keys-dialog').open")
