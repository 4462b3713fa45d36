"""The code panel on the page (issue 22), in Debian's Chromium: the listing the trace's
header carries, one element per line (data-line), the line each event runs marked
`current`, the loop variables the event names; the key C and the address's k=1; a click
on a line goes to the next step that runs it; projector mode's strip leaves the stage's
fit as it was; a phone's strip leaves the step's cells on the first screen; a mistake
lesson strikes exactly its mistaken lines and shows the one it diverges on. What is
expected comes from the server's trace documents, not from the page."""

from __future__ import annotations

import httpx
import pytest
from test_browser_fit import _check_screen
from test_browser_helpers import (
    IM2COL,
    choose_preset,
    event_cells,
    lesson_path,
    require_chromium,
    server_document,
    wait_complete,
    wait_until,
)

from convcore.mistakes.lessons import mistake_lessons

pytestmark = pytest.mark.browser

require_chromium()

MISTAKES = {m["id"]: m for m in mistake_lessons()}

PANEL_JS = """() => {
  const cur = document.querySelector('#code .code-line.current');
  const r = cur ? cur.getBoundingClientRect() : null;
  const panel = document.getElementById('code').getBoundingClientRect();
  return {step: window.convscope.step, current: cur ? Number(cur.dataset.line) : null,
          inPanel: Boolean(r) && r.top >= panel.top - 1 && r.bottom <= panel.bottom + 1 && r.height > 0,
          vars: document.getElementById('code-vars').textContent,
          lines: Array.from(document.querySelectorAll('#code .code-line'), (l) => [Number(l.dataset.line), l.querySelector('.src').textContent]),
          changed: Array.from(document.querySelectorAll('#code .code-line.changed'), (l) => Number(l.dataset.line))};
}"""


def _config(base_url: str, lesson: str) -> dict:
    return httpx.get(f"{base_url}/api/presets/{lesson}").json()["config"]


def _steps(doc: dict) -> list[int]:
    out = []
    for p in doc["phases"]:
        if p["stop"] > p["start"]:
            out += sorted({p["start"], (p["start"] + p["stop"] - 1) // 2, p["stop"] - 1})
    return out


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)], ids=["1366x768", "1920x1080"])
@pytest.mark.parametrize("lesson", ["cs231n", "d2l", "nhwc_relu"])
def test_the_panel_marks_each_events_line_and_names_its_loop(open_page, base_url, lesson, size):
    page = open_page(f"/#s=0&l={lesson}&k=1", viewport=size).page
    doc = server_document(base_url, _config(base_url, lesson))
    code = doc["code"]
    wait_until(page, "document.querySelectorAll('#code .code-line').length > 0")
    got = page.evaluate(PANEL_JS)
    # the listing whole, a line an element, numbered from 1
    assert [n for n, _ in got["lines"]] == list(range(1, len(code["lines"]) + 1))
    assert [text.rstrip() for _, text in got["lines"]] == [line.rstrip() for line in code["lines"]]
    for step in _steps(doc):
        ev = doc["events"][step]
        page.evaluate(f"window.convscope.seek({step})")
        wait_until(page, f"window.convscope.step === {step}")
        got = page.evaluate(
            f"async () => await new Promise((done) => requestAnimationFrame(() => done(({PANEL_JS})())))"
        )
        assert got["current"] == ev["line"], (step, ev["phase"], got["current"], ev["line"])
        assert got["inPanel"], f"step {step}: the current line is scrolled out of the panel"
        for k, v in ev["loop"].items():
            assert f"{k}={v}" in got["vars"], (step, ev["loop"], got["vars"])


@pytest.mark.parametrize("view", ["im2col", "transposed"])
def test_the_other_views_mark_their_listings_lines(open_page, base_url, view):
    """The im2col view's columns, product and col2im, the transposed view's dilation,
    rotation and gather: each step's line marked as the event says."""
    config = {**IM2COL, "view": view}
    page = open_page(lesson_path(config) + "&k=1", viewport=(1920, 1080)).page
    doc = server_document(base_url, config)
    assert doc["code"] and doc["code"]["convention"] == "cs231n"
    wait_until(page, "document.querySelectorAll('#code .code-line').length > 0")
    for step in _steps(doc):
        page.evaluate(f"window.convscope.seek({step})")
        got = page.evaluate(
            f"async () => await new Promise((done) => requestAnimationFrame(() => done(({PANEL_JS})())))"
        )
        assert got["current"] == doc["events"][step]["line"], (view, step, doc["events"][step]["phase"], got["current"])


def test_key_c_opens_the_panel_the_address_keeps_it_and_a_click_goes_to_the_next_step_running_a_line(
    open_page, base_url
):
    watch = open_page("/#s=20&l=cs231n", viewport=(1366, 768))
    page = watch.page
    doc = server_document(base_url, _config(base_url, "cs231n"))
    assert page.evaluate("document.getElementById('code').hidden")
    page.locator("#stage").focus()
    page.keyboard.press("c")
    wait_until(page, "!document.getElementById('code').hidden && location.hash.includes('k=1')")
    assert page.get_attribute("#code-toggle", "aria-pressed") == "true"
    page.reload()
    wait_complete(page)
    wait_until(page, "!document.getElementById('code').hidden && document.querySelector('#code .code-line.current')")
    # a click on the current line: the next step that runs it
    step = page.evaluate("window.convscope.step")
    line = doc["events"][step]["line"]
    runs = [k for k, ev in enumerate(doc["events"]) if ev["line"] == line or line in ev.get("lines", [])]
    after = [k for k in runs if k > step] or runs
    page.click(f'#code .code-line[data-line="{line}"]')
    wait_until(page, f"window.convscope.step === {after[0]}")
    page.locator("#stage").focus()
    page.keyboard.press("C")
    wait_until(page, "document.getElementById('code').hidden && !location.hash.includes('k=1')")


def test_a_lesson_without_a_listing_leaves_no_loop_values_of_the_last_one(open_page):
    """The panel open on a Conv2d lesson, then a lesson whose layer has no listing (a
    Conv1d's, a transposed layer's): the panel says there is none, and the loop values
    of the last lesson's step do not stay above it (they did: "n=0 f=0 i=0 j=1 · c0 = 0"
    over causal_audio's steps)."""
    page = open_page("/#s=3&l=same_even&k=1", viewport=(1366, 768)).page
    wait_until(
        page, "document.querySelector('#code .code-line.current') && document.getElementById('code-vars').textContent"
    )
    for lesson in ("causal_audio", "gan_upsample"):
        choose_preset(page, lesson)
        page.evaluate("window.convscope.seek(2)")
        got = page.evaluate(
            "({vars: document.getElementById('code-vars').textContent, lines: document.querySelectorAll('#code .code-line').length,"
            " empty: !document.querySelector('#code .code-empty').hidden, open: !document.getElementById('code').hidden})"
        )
        assert got == {"vars": "", "lines": 0, "empty": True, "open": True}, (lesson, got)


@pytest.mark.parametrize("lesson", ["cs231n", "depthwise"])
def test_projector_mode_with_the_code_strip_still_fits_every_step(browser, base_url, lesson):
    """The acceptance of the lecture hall's projector mode, with the code panel on: every
    read and written cell in view at 20 px digits, each shown tensor's name in view."""
    problems = _check_screen(
        browser, base_url, f"/#s=0&l={lesson}&k=1", _config(base_url, lesson), (1280, 720, True, 20)
    )
    assert not problems, "\n".join(problems[:20])


_BETWEEN_DOCK_AND_STRIP = """() => {
  const dock = document.querySelector('.dock').getBoundingClientRect();
  const strip = document.getElementById('code').getBoundingClientRect();
  const marked = [...document.querySelectorAll('.cell.rd, .cell.wr')];
  const seen = marked.filter((c) => { const r = c.getBoundingClientRect();
    return r.width > 0 && r.top >= dock.bottom - 1 && r.bottom <= strip.top + 1 && r.right <= innerWidth + 1; });
  return {marked: marked.length, seen: seen.length, strip: strip.height, current: document.querySelector('#code .code-line.current')?.dataset.line};
}"""


@pytest.mark.parametrize("lesson", ["cs231n", "d2l"])
def test_a_phones_code_strip_leaves_the_steps_cells_on_the_first_screen(open_page, base_url, lesson):
    doc = server_document(base_url, _config(base_url, lesson))
    backward = next(p for p in doc["phases"] if p["name"] == "backward")
    forward = next(p for p in doc["phases"] if p["name"] == "forward")
    for step in (forward["start"] + 1, backward["start"] + 2):
        page = open_page(f"/#s={step}&l={lesson}&k=1", viewport=(390, 844), is_mobile=True, has_touch=True).page
        wait_until(page, f"window.convscope.step === {step} && document.querySelector('#code .code-line.current')")
        page.wait_for_timeout(300)  # (the follow-scroll, a frame after the draw)
        got = page.evaluate(_BETWEEN_DOCK_AND_STRIP)
        assert 0 < got["strip"] <= 844 * 0.15, got
        assert got["current"] == str(doc["events"][step]["line"]), got
        assert got["marked"] == event_cells(doc["events"][step]) == got["seen"], (step, got)


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_a_mistake_lesson_strikes_its_mistaken_lines_and_shows_where_it_diverges(open_page, base_url, mistake):
    entry = MISTAKES[mistake]
    doc = server_document(base_url, entry["request"])
    code = doc.get("code")
    page = open_page(f"/#s=0&l=mistake-{mistake}&k=1", viewport=(1920, 1080)).page
    assert code and code.get("changed"), f"{mistake}: its listing marks no mistaken line"
    wait_until(page, "document.querySelectorAll('#code .code-line').length > 0")
    got = page.evaluate(PANEL_JS)
    assert got["changed"] == sorted(code["changed"])
    # each mistaken line has the correct one under it (a block of lines standing for one
    # correct line, where the mistake adds code: under its last line, once)
    fixes = page.evaluate("""Array.from(document.querySelectorAll('#code .code-correct'),
        (e) => [Number(e.previousElementSibling.dataset.line), e.querySelector('.src').textContent])""")
    stands_for = dict(zip(code["changed"], code["correct_of"]))
    last = [n for n in sorted(stands_for) if stands_for.get(n + 1) != stands_for[n]]
    assert [(n, text.strip()) for n, text in fixes] == [(n, code["correct"][stands_for[n] - 1].strip()) for n in last]
    first = doc["first_divergence"]
    if first is None:
        return
    page.locator("#stage").focus()
    page.keyboard.press("d")
    wait_until(page, f"window.convscope.step === {first}")
    got = page.evaluate(f"async () => await new Promise((done) => requestAnimationFrame(() => done(({PANEL_JS})())))")
    ev = doc["events"][first]
    assert got["current"] == ev["line"]
    # the mistaken lines lit, the first in the panel's view; a step later, no longer
    lit = page.evaluate("""() => { const panel = document.querySelector('#code .code-lines').getBoundingClientRect();
        return Array.from(document.querySelectorAll('#code .code-line.diverged'), (l) => { const r = l.getBoundingClientRect();
          return [Number(l.dataset.line), r.top >= panel.top - 1 && r.bottom <= panel.bottom + 1]; }); }""")
    assert [n for n, _ in lit] == sorted(code["changed"]), (mistake, lit)
    assert lit[0][1], f"{mistake}: the first mistaken line is out of the panel's view"
    other = first + 1 if first + 1 < doc["total_events"] else first - 1
    page.evaluate(f"window.convscope.seek({other})")
    wait_until(page, f"window.convscope.step === {other} && !document.querySelector('#code .code-line.diverged')")


def test_an_animation_can_show_the_line_each_step_runs(open_page, base_url):
    """Export → Animation with "the line of code each step runs" (convscope export --code):
    each frame's code line, joined, is the line the event runs, numbered, whole."""
    page = open_page("/#s=0&l=cs231n", viewport=(1366, 768)).page
    doc = server_document(base_url, _config(base_url, "cs231n"))
    backward = next(p for p in doc["phases"] if p["name"] == "backward")
    first, last = backward["start"], backward["start"] + 3
    asked = {"from": first, "to": last, "size": {"width": 1280, "height": 720}, "fps": 2, "format": "gif", "code": True}
    page.evaluate("(a) => window.convscope.recordAnimation(a)", asked)
    frames = page.evaluate("window.convscope.recordedFrames()")
    assert [f["step"] for f in frames] == list(range(first, last + 1))
    for f in frames:
        ev = doc["events"][f["step"]]
        want = f"{ev['line']}  {doc['code']['lines'][ev['line'] - 1].strip()}"
        assert "".join(f["code"]) == want, (f["step"], f["code"], want)
