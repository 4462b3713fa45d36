"""PyTorch's Conv1d in the page's setup form, in Debian's Chromium, as a student edits
it: the causal lesson shows its layer, its causal padding and a sequence's captions (L,
K) with the rows' controls (H, KH, stride h, dilation h) and output padding hidden, the
layout menu a sequence's; an edit of the length, the layout and the padding re-traces
to the shapes the rules give; a refused stride marks its control and keeps the last
good trace; the layer switches to Conv2d (one row, NCHW) and back with the sizes kept;
a reload keeps it all."""

from __future__ import annotations

import re

import pytest
from test_browser_helpers import open_setup, require_chromium, select_setup, type_setup, wait_until

pytestmark = pytest.mark.browser

require_chromium()

STATE = """() => {
  const form = document.getElementById('setup-form');
  const f = form.elements;
  const shown = (name) => !f[name].closest('label').hidden;
  const caption = (name) => f[name].closest('label').firstElementChild.textContent;
  const d = window.convscope.document();
  return {layer: f.layer.value, layout: f.layout.value, padding: f.padding_form.value,
    layouts: Array.from(f.layout.options).filter((o) => !o.hidden && !o.disabled).map((o) => o.value),
    paddings: Array.from(f.padding_form.options, (o) => o.value),
    L: [caption('W'), f.W.value], K: [caption('KW'), f.KW.value],
    stride: caption('stride_w'),
    shown: ['H', 'KH', 'stride_h', 'dilation_h', 'op_h', 'W', 'KW', 'stride_w', 'activation'].filter(shown),
    disabled: ['layout', 'activation', 'granularity', 'padding_mode', 'flip', 'view'].filter((n) => f[n].disabled),
    x: d.tensors.x.shape, out: d.tensors.out ? d.tensors.out.shape : null, layoutOfTrace: d.spec.layout};
}"""


def _shapes_are(page, x: list[int], out: list[int]) -> None:
    def js(shape: list[int]) -> str:
        return repr(str(shape).replace(" ", ""))

    wait_until(
        page,
        "window.convscope.complete"
        f" && JSON.stringify(window.convscope.document().tensors.x.shape) === {js(x)}"
        f" && JSON.stringify(window.convscope.document().tensors.out?.shape) === {js(out)}",
        20,
    )


def test_a_student_edits_a_conv1d_through_the_setup(open_page):
    page = open_page("/#s=0&l=causal_audio").page
    open_setup(page)
    state = page.evaluate(STATE)
    assert (state["layer"], state["layout"], state["padding"]) == ("conv1d", "NCL", "causal")
    assert state["layouts"] == ["NCL", "NLC"]
    assert "causal" in state["paddings"] and "four" not in state["paddings"], state["paddings"]
    assert (state["L"], state["K"], state["stride"]) == (["L", "12"], ["K", "3"], "stride")
    assert state["shown"] == ["W", "KW", "stride_w", "activation"], state["shown"]
    assert state["disabled"] == [], state["disabled"]
    assert (state["x"], state["out"]) == ([1, 1, 12], [1, 1, 12])

    # a shorter sequence: causal padding keeps the output as long as the input
    type_setup(page, "W", "10")
    _shapes_are(page, [1, 1, 10], [1, 1, 10])
    # NLC: the length before the channels
    select_setup(page, "layout", "NLC")
    _shapes_are(page, [1, 10, 1], [1, 10, 1])
    # one number: L_out = L + 2p − K + 1, 8 for p = 0 and 12 for p = 2
    select_setup(page, "padding_form", "int")
    _shapes_are(page, [1, 10, 1], [1, 8, 1])
    type_setup(page, "pad0", "2")
    _shapes_are(page, [1, 10, 1], [1, 12, 1])

    # 1.5 is refused in the form, by the stride's name; 0 by the server: the control
    # marked, the last good trace kept
    type_setup(page, "stride_w", "1.5")
    wait_until(page, "!document.querySelector('[data-error-for=\"stride\"]').hidden", 20)
    assert page.inner_text('[data-error-for="stride"]').startswith("stride must be a whole number; got 1.5")
    type_setup(page, "stride_w", "0")
    wait_until(page, "document.querySelector('[data-error-for=\"stride\"]').textContent.includes('at least 1')", 20)
    assert page.get_attribute('#setup-form input[name="stride_w"]', "aria-invalid") == "true"
    assert page.evaluate(STATE)["out"] == [1, 12, 1]
    type_setup(page, "stride_w", "1")
    wait_until(page, "document.querySelector('[data-error-for=\"stride\"]').hidden", 20)

    # to Conv2d from NCL: one row of an NCHW image, the rows' controls back
    select_setup(page, "layout", "NCL")
    _shapes_are(page, [1, 1, 10], [1, 1, 12])
    select_setup(page, "layer", "conv2d")
    # (an int padding pads the rows too: H_out = 1 + 2·2 − 1 + 1)
    _shapes_are(page, [1, 1, 1, 10], [1, 1, 5, 12])
    state = page.evaluate(STATE)
    assert (state["layout"], state["layoutOfTrace"], state["layouts"]) == ("NCHW", "NCHW", ["NCHW", "NHWC"])
    assert (state["L"], state["K"], page.input_value('#setup-form input[name="H"]')) == (["W", "10"], ["KW", "3"], "1")
    assert state["shown"] == ["H", "KH", "stride_h", "dilation_h", "W", "KW", "stride_w", "activation"]
    # and back: a sequence again, the typed x and w kept
    select_setup(page, "layer", "conv1d")
    _shapes_are(page, [1, 1, 10], [1, 1, 12])
    state = page.evaluate(STATE)
    assert (state["layer"], state["layout"], state["L"], state["K"]) == ("conv1d", "NCL", ["L", "10"], ["K", "3"])
    x = page.evaluate("window.convscope.document().tensors.x.data")
    assert x == [0, 0, 4, 0, 0, 0, 1, 2, 3, 2], x

    # a reload keeps the Conv1d setup
    page.reload()
    wait_until(page, "window.convscope && window.convscope.complete", 20)
    open_setup(page)
    state = page.evaluate(STATE)
    assert (state["layer"], state["layout"], state["padding"], state["L"]) == ("conv1d", "NCL", "int", ["L", "10"])
    assert (state["x"], state["out"]) == ([1, 1, 10], [1, 1, 12])
    assert state["shown"] == ["W", "KW", "stride_w", "activation"]


def test_a_phone_close_up_of_a_sequence_says_which_positions_it_shows(open_page):
    """On a phone the stage shows the cells around a step; a sequence's figures have no
    rows, so their captions count positions (not "cols" of a one-row grid)."""
    page = open_page("/#s=0&l=causal_audio", viewport=(390, 844), is_mobile=True, has_touch=True).page
    page.evaluate("window.convscope.seek(5)")
    notes = wait_until(
        page,
        "(() => { const n = Array.from(document.querySelectorAll('#stage figure.cropped .tcrop'), e => e.textContent);"
        " return window.convscope.shownStep === 5 && n.length ? n : null; })()",
    )
    assert all(re.fullmatch(r"positions? \d+(–\d+)? of \d+", n) for n in notes), notes


def test_a_stride_refused_in_a_conv2d_and_mended_in_a_conv1d_is_shown_again(open_page):
    """stride h refused in a Conv2d ("e3", which its number field cannot read); the layer
    switched to Conv1d, whose one stride control is then edited, which clears the
    stride's problem; back to Conv2d: stride h shows the setup's stride again, unmarked,
    not the old text without a message beside it."""
    page = open_page("/#s=0&l=d2l").page
    open_setup(page)
    field = page.locator('#setup-form input[name="stride_h"]')
    field.select_text()
    field.press_sequentially("e3")
    field.blur()
    wait_until(page, "!document.querySelector('[data-error-for=\"stride\"]').hidden", 10)
    select_setup(page, "layer", "conv1d")
    wait_until(page, "window.convscope.complete && window.convscope.document().tensors.x.shape.length === 3", 20)
    type_setup(page, "stride_w", "2")
    wait_until(page, "window.convscope.complete && document.querySelector('[data-error-for=\"stride\"]').hidden", 20)
    select_setup(page, "layer", "conv2d")
    wait_until(page, "window.convscope.complete && window.convscope.document().tensors.x.shape.length === 4", 20)
    got = page.evaluate(
        "(() => { const f = document.querySelector('#setup-form input[name=\"stride_h\"]');"
        " return {value: f.value, unread: f.validity.badInput, marked: f.getAttribute('aria-invalid'),"
        " said: !document.querySelector('[data-error-for=\"stride\"]').hidden}; })()"
    )
    assert re.fullmatch(r"\d+", got["value"]) and not got["unread"] and not got["marked"] and not got["said"], got
