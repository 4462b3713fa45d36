"""Hovering a cell shows its links across the current phase without moving the step
(Debian's Chromium): in the d2l lesson's forward phase the centre of x feeds all four
outputs and out[0] reads its 2x2 window and the kernel; the rest of the stage dims."""

from __future__ import annotations

import pytest
from test_browser_helpers import require_chromium, wait_until

pytestmark = pytest.mark.browser

require_chromium()


def _lit(page) -> dict[str, set[tuple[str, int]]]:
    found = page.evaluate(
        """() => Object.fromEntries(['link-from', 'link-to', 'link-self'].map((k) =>
             [k, Array.from(document.querySelectorAll('#stage .cell.' + k), (c) => [c.dataset.tensor, Number(c.dataset.idx)])]))"""
    )
    return {k: {(t, i) for t, i in v} for k, v in found.items()}


def test_hovering_a_cell_lights_what_it_reads_and_feeds_in_the_phase(open_page):
    page = open_page("/#s=1&l=d2l", viewport=(1366, 768)).page
    wait_until(page, "window.convscope.step === 1")
    page.hover('#stage .cell[data-tensor="x"][data-idx="4"]')
    wait_until(page, "document.getElementById('stage').classList.contains('linking')")
    lit = _lit(page)
    assert lit["link-to"] == {("out", i) for i in range(4)}
    assert lit["link-self"] == {("x", 4)}
    assert "feeds 4 of out" in page.get_attribute('#stage .cell[data-tensor="x"][data-idx="4"]', "title")
    opacity = page.evaluate(
        'getComputedStyle(document.querySelector(\'#stage .cell[data-tensor="w"][data-idx="0"]\')).opacity'
    )
    assert float(opacity) < 0.5  # (w does not take part in x[4]'s links: dimmed)
    assert page.evaluate("window.convscope.step") == 1  # hovering does not move the step
    page.hover('#stage .cell[data-tensor="out"][data-idx="0"]')
    wait_until(
        page,
        "document.querySelector('#stage .cell[data-tensor=\"out\"][data-idx=\"0\"]').classList.contains('link-self')",
    )
    lit = _lit(page)
    assert lit["link-from"] == {("x", i) for i in (0, 1, 3, 4)} | {("w", i) for i in range(4)}
    assert lit["link-to"] == set()
    page.mouse.move(2, 2)  # off the stage: everything back
    wait_until(page, "!document.getElementById('stage').classList.contains('linking')")
    assert _lit(page) == {"link-from": set(), "link-to": set(), "link-self": set()}
    assert page.get_attribute('#stage .cell[data-tensor="x"][data-idx="4"]', "title") in (None, "")


def test_lines_join_the_window_read_to_the_cell_written_and_leave_while_playing_fast(open_page):
    # (reduced motion: no flash scaling the written cell while its rectangle is read)
    page = open_page("/#s=2&l=d2l", viewport=(1366, 768), reduced_motion="reduce").page
    wait_until(page, "document.querySelectorAll('.stage-lines line').length === 2")
    read_lines = """() => Array.from(document.querySelectorAll('.stage-lines line'), (l) => {
             const svg = l.ownerSVGElement.getBoundingClientRect();
             const stage = document.getElementById('stage');
             return {from: l.dataset.from, to: l.dataset.to,
                     x1: +l.getAttribute('x1') + svg.left - stage.scrollLeft, y1: +l.getAttribute('y1') + svg.top - stage.scrollTop,
                     x2: +l.getAttribute('x2') + svg.left - stage.scrollLeft, y2: +l.getAttribute('y2') + svg.top - stage.scrollTop}; })"""
    # the lines follow a new arrangement of the stage (the page settling as it loads) at
    # the next frame: read them once they stand still for two frames
    lines = page.evaluate(read_lines)
    for _ in range(60):
        page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        again = page.evaluate(read_lines)
        if again == lines:
            break
        lines = again
    assert sorted((l["from"], l["to"]) for l in lines) == [("w", "out"), ("x", "out")]

    def box(selector):
        return page.evaluate(
            """(sel) => { const rs = Array.from(document.querySelectorAll(sel), (c) => c.getBoundingClientRect());
                          return [Math.min(...rs.map((r) => r.left)), Math.min(...rs.map((r) => r.top)),
                                  Math.max(...rs.map((r) => r.right)), Math.max(...rs.map((r) => r.bottom))]; }""",
            selector,
        )

    def on_edge(x, y, b):
        return b[0] - 1.5 <= x <= b[2] + 1.5 and b[1] - 1.5 <= y <= b[3] + 1.5

    written = box('#stage .cell.wr[data-tensor="out"]')
    for line in lines:
        read = box(f'#stage .cell.rd[data-tensor="{line["from"]}"]')
        assert on_edge(line["x1"], line["y1"], read), (line, read)  # starts at the read window
        assert on_edge(line["x2"], line["y2"], written), (line, written)  # ends at the written cell
    # playing faster than 2 steps a second (the d2l lesson lasts 1.6 s at 5): no lines
    page.evaluate("window.convscope.setSpeedIndex(4)")  # 5 steps a second
    page.keyboard.press("Home")
    page.keyboard.press("Space")
    wait_until(page, "window.convscope.playing && document.querySelectorAll('.stage-lines line').length === 0")


def test_each_figure_names_its_own_colour_scale(open_page, base_url):
    """The colours are per tensor: each caption says the value its darkest colour stands for."""
    from test_browser_helpers import server_document

    page = open_page("/#s=26&l=cs231n", viewport=(1920, 1080)).page
    doc = server_document(base_url, page.evaluate("window.convscope.config"))
    shown = dict(
        page.evaluate(
            "Array.from(document.querySelectorAll('#stage figure.tensor'), (f) => [f.dataset.tensor, f.querySelector('.tscale').textContent])"
        )
    )
    assert set(shown) == set(doc["tensors"])
    for name, text in shown.items():
        largest = max((abs(v) for v in doc["tensors"][name]["data"]), default=0) or 1
        assert text.startswith("±") and float(text[1:].replace("−", "-")) == pytest.approx(largest, rel=1e-2), (
            name,
            text,
        )
    assert "per tensor" in page.locator(".legend .scale").inner_text()


def test_the_keyboard_reaches_any_cell_and_enter_opens_its_story(open_page):
    page = open_page("/#s=1&l=d2l", viewport=(1366, 768)).page
    page.locator("#stage").focus()
    page.keyboard.press("Tab")  # the first figure's Tab stop: x[0]
    focused = "[document.activeElement.dataset.tensor, Number(document.activeElement.dataset.idx)]"
    assert page.evaluate(focused) == ["x", 0]
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    assert page.evaluate(focused) == ["x", 4]  # (row 1, column 1 of the 3x3 input)
    assert page.evaluate("window.convscope.step") == 1  # the arrows moved the cell, not the player
    page.keyboard.press("Enter")
    wait_until(page, "document.getElementById('inspector').open")
    assert page.locator("#insp-title").inner_text().startswith("x[0,0,1,1]")
    page.keyboard.press("Escape")  # the story closes, back on the cell
    wait_until(page, "!document.getElementById('inspector').open")
    assert page.evaluate(focused) == ["x", 4]
    page.keyboard.press("Escape")  # the keys go back to the player
    page.keyboard.press("ArrowRight")
    wait_until(page, "window.convscope.step === 2")
    # Tab again: the cell last visited, then the next figure's stop
    page.keyboard.press("Tab")
    assert page.evaluate(focused) == ["x", 4]
    page.keyboard.press("Tab")
    assert page.evaluate(focused)[0] == "w"
    # a click on a cell (even a Tab stop) opens its story and leaves the arrows to the player
    page.keyboard.press("Escape")
    page.click('#stage .cell[data-tensor="w"][data-idx="0"]')
    wait_until(page, "document.getElementById('inspector').open")
    page.keyboard.press("Escape")
    page.keyboard.press("ArrowRight")
    wait_until(page, "window.convscope.step === 3")
