"""Every step teaches something (issue 10), on every lesson and over random specs: no
phase only copies (no pad or crop without padding, no activation phases for the
identity), the header says which names are the same tensor, dead windows say so, the
cells no window reaches are marked from the start, every loop letter is named, and
every view still replays to PyTorch's numbers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from layer_oracle import torch_conv2d, torch_grads
from oracle import geometry, torch_layer
from strategies import TRACE_MODES, conv_cases, examples
from trace_checks import (
    case_config,
    check_only_steps_that_compute,
    check_rule1_only_inputs_unwritten,
    check_rule2_replay_matches_header_and_core,
    tensor,
    to_internal,
)

from convcore.trace import build_trace, resolve_config
from convcore.trace.format import DEAD_WINDOW
from convscope.traces.presets import PRESETS

VIEWS = ["direct", "im2col", "transposed"]
# the Conv2d lessons: every view shows them (a transposed layer's lesson has its own steps,
# tests/test_trace_transpose_layer.py)
CONV2D_LESSONS = [name for name, p in PRESETS.items() if p.config.get("layer", "conv2d") == "conv2d"]
ACTIVATIONS = ["identity", "relu", "leaky_relu", "sigmoid", "tanh"]


def lesson(name: str, **settings_) -> dict:
    return {**PRESETS[name].config, **settings_}


def torch_results(config: dict) -> dict:
    """PyTorch's z, out, dz, dx, dw, db (internal order) for ``config``'s inputs; out,
    dx, dw, db for a lesson with a padding mode or the flip (identity activation)."""
    rc = resolve_config(config)
    if rc.padding_mode != "zeros" or rc.flip:
        assert rc.activation.name == "identity", "torch_conv2d has no activation"
        out, dx, dw, db = torch_grads(torch_conv2d(rc.spec, rc.padding_mode, rc.flip), rc.x, rc.w, rc.b, rc.dout)
        return {"out": out, "dx": dx, "dw": dw, **({"db": db} if rc.b is not None else {})}
    expected = torch_layer(rc.x, rc.w, rc.b, rc.dout, **geometry(rc.spec), activation=rc.activation.name)
    return expected.results(bias=rc.b is not None)


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("name", CONV2D_LESSONS)
def test_every_lesson_has_only_steps_that_compute_and_matches_torch(name, view):
    config = lesson(name, view=view)
    # generic upstream numbers for the copy check: with d2l's dout = ones and one filter
    # im2col's dcols = w·1 would look like a copy of w (a product, not a copy phase)
    check_only_steps_that_compute(dict(config, dout={"fill": "normal", "seed": 9}))
    check_rule1_only_inputs_unwritten(config)  # aliases exactly as the contract says
    check_rule2_replay_matches_header_and_core(config, torch_results=torch_results(config))


def test_the_d2l_lesson_is_four_forward_and_four_backward_steps():
    doc = build_trace(lesson("d2l"))
    assert [(p["name"], p["stop"] - p["start"]) for p in doc["phases"]] == [("forward", 4), ("backward", 4)]
    assert doc["total_events"] == 8 == len(doc["events"])
    assert doc["aliases"] == {"xp": "x", "dxp": "dx", "z": "out", "dz": "dout"}
    assert set(doc["tensors"]) == {"x", "w", "out", "dout", "dw", "dx"}
    assert tensor(doc, "out").ravel().tolist() == [19, 25, 37, 43]
    assert doc["events"][0]["text"] == "out[0,0,0,0] = 0·0 + 1·1 + 3·2 + 4·3 = 19"


@pytest.mark.parametrize(
    "name, phases",
    [
        ("cs231n", ["pad", "forward", "backward", "crop"]),  # padding 1, the identity
        ("nhwc_relu", ["pad", "forward", "activation", "activation grad", "backward", "crop"]),
        ("stride2", ["forward", "backward"]),
        ("edge", ["forward", "backward"]),
    ],
)
def test_a_lesson_keeps_exactly_the_phases_that_teach(name, phases):
    assert [p["name"] for p in build_trace(lesson(name))["phases"]] == phases


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    conv_cases(max_n=2, max_cf=3, max_hw=6, max_k=3, max_stride=3, max_dilation=2),
    st.sampled_from(TRACE_MODES),
    st.sampled_from(ACTIVATIONS),
    st.booleans(),
    st.sampled_from(["both", "forward", "backward"]),
)
def test_no_copy_only_phase_over_random_specs(case, mode, activation, nhwc, phases):
    view, granularity, backward = mode
    config = case_config(
        case, nhwc=nhwc, view=view, granularity=granularity, backward=backward, activation=activation, phases=phases
    )
    # generic numbers (the check's condition): small integers make products look like
    # copies (a 1×1 kernel of 1 copies x; one dz cell is its db)
    rng = np.random.default_rng(len(str(config)))
    for name in ("x", "w", "dout", "b"):
        if name in config:
            config[name] = rng.standard_normal(np.shape(config[name])).tolist()
    check_only_steps_that_compute(config)
    check_rule1_only_inputs_unwritten(config)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    conv_cases(max_n=2, max_cf=3, max_hw=6, max_k=3, max_stride=3, max_dilation=2),
    st.sampled_from(TRACE_MODES),
    st.sampled_from(ACTIVATIONS),
)
def test_every_view_replays_to_torch_over_random_specs(case, mode, activation):
    view, granularity, backward = mode
    config = case_config(case, view=view, granularity=granularity, backward=backward, activation=activation)
    check_rule2_replay_matches_header_and_core(config, torch_results=torch_results(config))


@pytest.mark.parametrize("backward", ["fused", "separate"])
def test_dead_relu_windows_say_nothing_flows_back_and_write_zeros(backward):
    config = lesson("nhwc_relu", backward=backward)
    doc = build_trace(config)
    layout = doc["spec"]["layout"]
    dz = to_internal("dz", tensor(doc, "dz"), layout)
    dead = live = 0
    for ev in doc["events"]:
        if ev["phase"] not in ("backward", "dw", "dx"):
            continue
        n, f, i, j = (ev["loop"][k] for k in "nfij")
        if dz[n, f, i, j] == 0:
            dead += 1
            assert ev["text"].endswith(f" = 0: {DEAD_WINDOW}"), ev["text"]
            assert ev["text"].startswith("dz[")
            assert ev["writes"] and all(np.all(np.asarray(w["delta"]) == 0) for w in ev["writes"])
        else:
            live += 1
            assert DEAD_WINDOW not in ev["text"] and "+=" in ev["text"], ev["text"]
    assert dead > 0 and live > 0  # the lesson has both (ReLU: z ≤ 0 passes no gradient)


def test_cs231n_takes_38_steps_with_its_copies_in_one_and_66_row_by_row():
    # pad 1, forward 2·3·3, backward 18, crop 1; row by row pad and crop take N·C·H = 15 each
    phases = {p["name"]: p["stop"] - p["start"] for p in build_trace(lesson("cs231n"))["phases"]}
    assert phases == {"pad": 1, "forward": 18, "backward": 18, "crop": 1}
    each = build_trace(dict(lesson("cs231n"), copies="each"))
    assert {p["name"]: p["stop"] - p["start"] for p in each["phases"]} == dict(phases, pad=15, crop=15)
    assert each["total_events"] == 66


@pytest.mark.parametrize("copies", ["one", "each"])
def test_the_crop_says_the_gradient_on_the_padding_is_discarded(copies):
    doc = build_trace(dict(lesson("cs231n"), copies=copies))
    crop = [e for e in doc["events"] if e["phase"] == "crop"]
    assert len(crop) == (3 * 5 if copies == "each" else 1)
    for e in crop:
        assert "discarded" in e["text"], e["text"]
    assert crop[0]["text"].endswith(
        "the gradient landing on the padding (top 1, bottom 1, left 1, right 1) is discarded"
    )


def test_stride2_gaps_are_marked_never_reached_in_dx_from_the_start():
    # 5×5 input, 2×2 kernel, stride 2: the windows cover rows and columns 0–3; row 4 and
    # column 4 of dx are never reached (no padding: the backward writes dx itself)
    doc = build_trace(lesson("stride2"))
    assert "dxp" not in doc["tensors"]
    marks = doc["tensors"]["dx"]["marks"]
    assert marks == ["....n"] * 4 + ["nnnnn"]
    assert doc["tensors"]["x"]["marks"] == ["....u"] * 4 + ["uuuuu"]
    dx = tensor(doc, "dx")[0, 0]
    assert np.all(dx[4, :] == 0) and np.all(dx[:, 4] == 0)
    # with padding the cropped dx keeps the n of the dxp cells it is cropped from
    random_dout = {"fill": "randint", "low": -2, "high": 2, "seed": 12}
    padded = build_trace(lesson("stride2", padding=[0, 1, 0, 1], dout=random_dout))  # 6 rows: windows reach 0–5
    assert "n" not in "".join(padded["tensors"]["dxp"]["marks"]) and "marks" not in padded["tensors"]["dx"]
    gapped = build_trace(
        lesson("stride2", w={"fill": "ones", "shape": [1, 1, 1, 1]}, dout=random_dout, padding=[1, 0, 0, 0])
    )
    dxp, dx = gapped["tensors"]["dxp"]["marks"], gapped["tensors"]["dx"]["marks"]
    # xp rows 0 (padding), 2, 4 and columns 0, 2, 4 are reached by the 1×1 windows, stride 2
    assert dxp == ["ggggg", "nnnnn", ".n.n.", "nnnnn", ".n.n.", "nnnnn"]
    assert dx == dxp[1:]


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("name", CONV2D_LESSONS)
def test_every_loop_letter_of_the_trace_is_named_once(name, view):
    for granularity in ("window", "mac") if view == "direct" else ("window",):
        for backward in ("fused", "separate"):
            doc = build_trace(lesson(name, view=view, granularity=granularity, backward=backward))
            used = {letter for ev in doc["events"] for letter in ev["loop"]}
            assert set(doc["loop_names"]) == used, (set(doc["loop_names"]), used)
            assert doc["loop_names"]["i"] == "output row" and doc["loop_names"]["j"] == "output column"


def test_the_loop_names_of_grouped_and_unpadded_traces_say_what_c_y_x_are():
    grouped = build_trace(lesson("depthwise", granularity="mac"))
    assert "within the filter's group" in grouped["loop_names"]["c"]
    gather = build_trace(lesson("stride2", view="transposed"))
    assert gather["loop_names"]["y"] == "input row" and gather["loop_names"]["x"] == "input column"
    padded = build_trace(lesson("cs231n", view="transposed"))
    assert padded["loop_names"]["y"] == "row of the padded input"


def test_the_edge_lesson_text_describes_what_the_trace_computes_without_colours():
    preset = PRESETS["edge"]
    assert "white" not in preset.teaches and "black" not in preset.teaches
    assert "1 where the image steps down from 1 to 0, −1 where it steps up from 0 to 1" in preset.teaches
    doc = build_trace(preset.config)
    x, out = tensor(doc, "x")[0, 0], tensor(doc, "out")[0, 0]
    down, up = (x[:, :-1] == 1) & (x[:, 1:] == 0), (x[:, :-1] == 0) & (x[:, 1:] == 1)
    np.testing.assert_array_equal(out, np.where(down, 1.0, np.where(up, -1.0, 0.0)))


def test_the_server_publishes_the_never_reached_mark(api_client):
    kinds = api_client.get("/api/meta").json()["mark_kinds"]
    assert kinds["n"].startswith("never reached by a window") and kinds["u"] == "never read"
