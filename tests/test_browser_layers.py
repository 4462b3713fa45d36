"""The layers beside Conv2d's defaults on the page (issue 24), in Debian's Chromium, as a
student edits them: the transposed layer's lesson shows its layer, output padding and
channel captions in the setup, an edit of output_padding re-traces to the size the rule
gives, one the layer cannot take is refused naming the field (the last good trace
stays), the layer switches to Conv2d and back with the shapes kept, and a reload keeps
it all; the padding mode menu and the flip checkbox drive their traces."""

from __future__ import annotations

import pytest
from test_browser_helpers import choose_preset, open_setup, require_chromium, type_setup, wait_shape, wait_until

pytestmark = pytest.mark.browser

require_chromium()

STATE = """() => {
  const f = document.getElementById('setup-form').elements;
  const d = window.convscope.document();
  return {layer: f.layer.value, op: [f.op_h.value, f.op_w.value], opShown: !f.op_h.closest('label').hidden,
    activationOff: f.activation.disabled, C: f.C.closest('label').querySelector('.hint').textContent,
    F: f.F.closest('label').querySelector('.hint').textContent,
    y: d.tensors.y ? d.tensors.y.shape : null, out: d.tensors.out ? d.tensors.out.shape : null,
    x: d.tensors.x.shape, w: d.tensors.w.shape, tensors: Object.keys(d.tensors)};
}"""


def test_a_student_edits_the_transposed_layer_through_the_setup(open_page):
    page = open_page("/").page
    choose_preset(page, "gan_upsample")
    open_setup(page)
    state = page.evaluate(STATE)
    assert (state["layer"], state["op"], state["opShown"], state["activationOff"]) == (
        "conv_transpose2d",
        ["1", "1"],
        True,
        True,
    )
    assert (state["C"], state["F"], state["y"]) == ("in channels", "out channels", [1, 1, 6, 6])
    forms = page.eval_on_selector_all("#setup-form select[name=padding_form] option", "(os) => os.map((o) => o.value)")
    assert forms == ["int", "pair"]  # (its padding crops rows and columns: no four sides, no "same")
    # output_padding 0 on the rows: H_out = (3−1)·2 − 2·1 + 1·(3−1) + 0 + 1 = 5
    type_setup(page, "op_h", "0")
    wait_shape(page, "y", [1, 1, 5, 6])
    # 2 is not below the stride 2: refused, naming the field, and the last good trace stays
    type_setup(page, "op_w", "2")
    wait_until(page, "!document.querySelector('[data-error-for=\"output_padding\"]').hidden", 20)
    error = page.inner_text('[data-error-for="output_padding"]')
    assert "output_padding" in error and "stride 2" in error, error
    assert page.evaluate(STATE)["y"] == [1, 1, 5, 6]
    type_setup(page, "op_w", "1")
    wait_shape(page, "y", [1, 1, 5, 6])
    # to Conv2d: C and F kept (w rearranged as Conv2d's (F, C, KH, KW)), the controls back
    page.select_option('#setup-form select[name="layer"]', "conv2d")
    wait_shape(page, "out", [1, 1, 2, 2])
    state = page.evaluate(STATE)
    assert (state["w"], state["opShown"], state["activationOff"], state["F"]) == ([1, 2, 3, 3], False, False, "filters")
    page.select_option('#setup-form select[name="layer"]', "conv_transpose2d")
    wait_shape(page, "y", [1, 1, 5, 5])
    assert page.evaluate(STATE)["w"] == [2, 1, 3, 3]
    # a reload keeps the layer and what was typed
    page.reload()
    wait_until(page, "window.convscope && window.convscope.complete", 20)
    open_setup(page)
    state = page.evaluate(STATE)
    assert (state["layer"], state["y"]) == ("conv_transpose2d", [1, 1, 5, 5])


def test_the_padding_mode_menu_and_the_flip_checkbox_drive_their_traces(open_page):
    page = open_page("/").page
    choose_preset(page, "reflect_edge")
    open_setup(page)
    assert page.input_value('#setup-form select[name="padding_mode"]') == "reflect"
    assert "fold" in page.evaluate("window.convscope.document().phases.map((p) => p.name)")
    page.select_option('#setup-form select[name="padding_mode"]', "zeros")
    wait_until(
        page, "window.convscope.complete && window.convscope.document().phases.some((p) => p.name === 'crop')", 20
    )
    choose_preset(page, "flip")
    assert page.is_checked('#setup-form input[name="flip"]')
    assert "wf" in page.evaluate(STATE)["tensors"]
    page.uncheck('#setup-form input[name="flip"]')
    wait_until(page, "window.convscope.complete && !('wf' in window.convscope.document().tensors)", 20)
