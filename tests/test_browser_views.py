"""The page on the im2col and transposed views, and on streams that are slow or fail.

As in test_browser.py: real uvicorn, Debian's Chromium, values checked against the
server's own trace document replayed here (NumPy over the event boxes).
"""

from __future__ import annotations

import json

import pytest
from test_browser_helpers import (
    IM2COL,
    PageWatch,
    assert_equation_matches,
    assert_stage_matches,
    cell_texts,
    debug_url,
    first_event,
    lesson_path,
    randint,
    require_chromium,
    server_document,
    shown_number,
    step_of,
    wait_until,
)

pytestmark = pytest.mark.browser

require_chromium()

# the fixtures every browser test uses: a live server, Chromium, a page opener

# tall enough that no slice is left undrawn by content-visibility
TALL = (1600, 2600)


TRANSPOSED = {
    "view": "transposed",
    "x": randint([1, 2, 5, 5], -2, 2, 13),
    "w": randint([2, 2, 3, 3], -1, 1, 14),
    "stride": 2,
    "padding": 1,
    "activation": "leaky_relu",
    "dout": randint([1, 2, 3, 3], -2, 2, 15),
}
# the largest trace the default limits allow (max_events 20000): 19734 events
BIG = {
    # (close to the default byte limit since each event names its line of code)
    "x": randint([1, 3, 10, 11], -2, 2, 0),
    "w": randint([3, 3, 3, 3], -1, 1, 1),
    "padding": 1,
    "granularity": "mac",
}


def open_lesson(open_page, base_url: str, config: dict):
    """(page, the server's trace document) of the lesson of ``config``, opened tall."""
    page = open_page(lesson_path(config), viewport=TALL).page
    return page, server_document(base_url, page.evaluate("window.convscope.config"))


def check_steps_into_phases(page, doc, offsets: dict[str, int]):
    """The stage and the equation at ``offsets[phase]`` steps into each phase, then at the
    last step, are the document's."""
    steps = [first_event(doc, phase) + offset for phase, offset in offsets.items()] + [doc["total_events"] - 1]
    for step in steps:
        page.evaluate(f"window.convscope.seek({step})")
        assert step_of(page) == step
        assert_stage_matches(page, doc, step)
        assert_equation_matches(page, doc, step)


def test_im2col_lesson_cells_and_equation_in_its_phases(open_page, base_url):
    page, doc = open_lesson(open_page, base_url, IM2COL)
    assert page.evaluate("window.convscope.total") == doc["total_events"]
    names = [p["name"] for p in doc["phases"]]
    assert {"im2col", "forward", "dcols", "col2im"} <= set(names), names
    check_steps_into_phases(page, doc, {"im2col": 3, "forward": 5, "dw": 2, "dcols": 7, "col2im": 4})
    # titles of the view's matrices
    assert "im2col columns" in page.text_content('figure[data-tensor="cols"] figcaption')
    assert "gradient of the columns" in page.text_content('figure[data-tensor="dcols"] figcaption')
    # a col2im step reads a column of dcols and adds it into a window of dxp
    k = first_event(doc, "col2im") + 4
    page.evaluate(f"window.convscope.seek({k})")
    ev = doc["events"][k]
    n_read = len([1 for r in ev["reads"] if r["tensor"] == "dcols"])
    assert n_read == 1
    assert page.locator('.cell.rd[data-tensor="dcols"]').count() == doc["tensors"]["cols"]["shape"][0]
    assert page.locator('.cell.wr[data-tensor="dxp"]').count() == len(ev["writes"][0]["value"])
    assert "overlapping windows add up" in page.inner_text("#eq-text")


def test_transposed_lesson_cells_and_equation_in_its_phases(open_page, base_url):
    page, doc = open_lesson(open_page, base_url, TRANSPOSED)
    check_steps_into_phases(page, doc, {"forward": 4, "dw": 3, "dilate dz": 1, "rotate w": 1, "dx": 17, "crop": 0})
    assert "dz dilated: stride−1 zeros between cells" in page.text_content(
        'figure[data-tensor="dz_dilated"] figcaption'
    )
    assert "w rotated 180°" in page.text_content('figure[data-tensor="w_rot"] figcaption')
    # the inserted zeros show 0 from the start, crossed-hatched, and the legend says so
    page.evaluate("window.convscope.seek(0)")
    gaps = page.locator('.cell.gap[data-tensor="dz_dilated"]')
    hp = doc["spec"]["padded_shape"][2] + doc["spec"]["kernel_extent"][0] - 1
    assert gaps.count() == doc["spec"]["x_shape"][0] * doc["spec"]["w_shape"][0] * (hp * hp - 9)
    assert {shown_number(t) for t in gaps.all_inner_texts()} == {0.0}
    assert page.locator("#legend-gap").is_visible()
    # a dx step reads a window of dz_dilated (outlined) and the rotated kernel
    k = first_event(doc, "dx") + 17
    page.evaluate(f"window.convscope.seek({k})")
    assert page.locator('[data-tensor="dz_dilated"] .box-outline').count() == doc["tensors"]["dz_dilated"]["shape"][1]
    assert page.locator('.cell.rd[data-tensor="w_rot"]').count() > 0
    assert "w_rot" in page.inner_text("#eq-text")


def test_mac_granularity_with_a_matrix_view_shows_the_servers_message(open_page):
    w = open_page()
    page = w.page
    page.evaluate("window.convscope.seek(3)")
    before = cell_texts(page, "out")  # d2l: z is out (the identity)
    page.select_option('select[name="view"]', "im2col")
    wait_until(
        page,
        "window.convscope.complete && window.convscope.config.view === 'im2col' && document.querySelector('figure[data-tensor=\"cols\"]')",
    )
    page.select_option('select[name="granularity"]', "mac")
    err = page.locator('[data-error-for="granularity"]')
    err.wait_for(state="visible", timeout=5000)
    assert "granularity must be one of 'window' for the im2col view; got 'mac'" in err.inner_text()
    assert page.get_attribute('select[name="granularity"]', "aria-invalid") == "true"
    # the last good trace (im2col, window) stays
    assert page.locator('figure[data-tensor="cols"]').count() == 1
    page.select_option('select[name="view"]', "transposed")
    wait_until(
        page, "document.querySelector('[data-error-for=\"granularity\"]').textContent.includes('transposed view')"
    )
    page.select_option('select[name="granularity"]', "window")
    wait_until(page, "window.convscope.complete && document.querySelector('figure[data-tensor=\"w_rot\"]')")
    assert err.is_hidden()
    assert before  # the d2l lesson had drawn out before all this


def test_rendering_starts_before_the_whole_stream_has_arrived(browser, base_url):
    """A throttled network (Chromium's own emulation, the real server and stream): the
    first step is drawn, with the progress line, while most of the trace is on its way."""
    doc = server_document(base_url, BIG)
    assert doc["total_events"] > 17000
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    page = context.new_page()
    watch = PageWatch(page, base_url)
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    # ~10 MB of NDJSON at 400 kB/s: some 25 s for the whole stream
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": 400_000, "uploadThroughput": -1},
    )
    try:
        page.goto(debug_url(base_url + lesson_path(BIG)))
        wait_until(
            page,
            "window.convscope && window.convscope.shownStep === 0 && document.getElementById('eq-text').textContent.length > 20",
            20,
        )
        state = page.evaluate(
            """() => ({complete: window.convscope.complete, received: window.convscope.received,
                      total: window.convscope.total, progress: !document.getElementById('progress').hidden,
                      progressText: document.getElementById('progress-text').textContent,
                      out0: document.querySelector('.cell[data-tensor="out"][data-idx="0"]').textContent,
                      xp: document.querySelectorAll('.cell[data-tensor="xp"]').length})"""
        )
        assert state["complete"] is False and state["received"] < state["total"] // 2, state
        assert state["total"] == doc["total_events"]
        assert state["progress"] and "Streaming" in state["progressText"], state
        assert state["xp"] > 0
        assert page.inner_text("#eq-text") == doc["events"][0]["text"]
        assert page.inner_text("#badge").startswith("checking")
        # steps that have arrived can be played through while the rest streams in
        k = min(40, state["received"] - 1)
        page.evaluate(f"window.convscope.seek({k})")
        assert page.inner_text("#eq-text") == doc["events"][k]["text"]
    finally:
        cdp.send(
            "Network.emulateNetworkConditions",
            {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
        )
        context.close()
    watch.check()


def test_a_stream_that_fails_midway_restores_the_last_good_trace(open_page, base_url):
    w = open_page()
    page = w.page
    page.evaluate("window.convscope.seek(5)")
    d2l_config = page.evaluate("window.convscope.config")
    # d2l's step 5 is a backward step (4 forward, 4 backward): it reads x and writes dw and
    # dx (dxp is dx without padding); out is folded in this phase and not repainted
    before = {n: cell_texts(page, n) for n in ("x", "dw", "dx")}
    eq_before = page.inner_text("#eq-text")
    message = "the trace engine stopped at event 6: test failure"

    def cut_stream(route):
        lines = route.fetch().text().splitlines()
        assert json.loads(lines[0])["type"] == "header"
        body = lines[:7] + [json.dumps({"type": "error", "detail": [{"loc": ["body"], "msg": message}]})]
        route.fulfill(status=200, content_type="application/x-ndjson", body="\n".join(body) + "\n")

    page.route("**/api/trace/stream", cut_stream)
    page.select_option("#preset", "cs231n")
    banner = page.locator("#form-error")
    banner.wait_for(state="visible", timeout=10000)
    assert message in banner.inner_text()
    wait_until(page, "window.convscope.complete")
    # the d2l lesson is back, at its step, drawn as before, and checked
    assert step_of(page) == 5
    assert page.evaluate("window.convscope.total") == server_document(base_url, d2l_config)["total_events"]
    assert {n: cell_texts(page, n) for n in ("x", "dw", "dx")} == before
    assert page.inner_text("#eq-text") == eq_before
    assert page.evaluate("window.convscope.config") == d2l_config
    assert page.input_value("#preset") == "d2l" and page.input_value('input[name="H"]') == "3"
    wait_until(page, "location.hash.startsWith('#s=5&')", 3)
    assert page.locator('figure[data-tensor="x"] .slice').count() == 1
    assert "replay-checked" in page.inner_text("#badge")
    assert message in page.inner_text("#narration")
    assert page.locator("#progress").is_hidden()
    page.unroute("**/api/trace/stream")
    # the next run works again
    page.select_option("#preset", "stride2")
    wait_until(page, "window.convscope.preset === 'stride2' && window.convscope.complete")
    assert banner.is_hidden()
