"""ConvTranspose2d as a traced layer (``"layer": "conv_transpose2d"``): the steps replay
to PyTorch's ``F.conv_transpose2d`` and its autograd on 300 hypothesis specs (every
parameter the layer takes, output_padding below the stride), obey the trace rules that
apply to any layer (only inputs unwritten, values are the running state, exact counts,
lazy), and say what a reader needs: each input cell's stamp, the output-size rule where
the crop decides the shape, the overlap count, the refusals naming their field."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from layer_cases import transpose_cases
from layer_oracle import PROPERTY, assert_all_close, torch_grads
from oracle import require_torch
from trace_checks import check_rule3_value_is_running_state, check_rule5_counts

from convcore.trace import build_trace, count_events, replay, resolve_config
from convcore.trace.config import TraceConfigError
from convcore.trace.cost import BYTES_FACTOR, trace_cost
from convscope.http.encoding import encode_json

pytestmark = pytest.mark.oracle


def _config(case, **settings) -> dict:
    x, w, b, dout = case.arrays()
    config = {"layer": "conv_transpose2d", "x": x.tolist(), "w": w.tolist(), "dout": dout.tolist()}
    config |= {k: v for k, v in case.args.items()} | settings
    if b is not None:
        config["b"] = b.tolist()
    return config


def _traceable(case) -> bool:
    """The trace takes output_padding below the stride (the core also below the dilation)."""
    op, stride = case.args.get("output_padding", 0), case.args.get("stride", 1)
    return all(o < s for o, s in zip(np.broadcast_to(op, 2), np.broadcast_to(stride, 2)))


@PROPERTY
@given(
    case=transpose_cases(max_hw=4, max_k=3),
    copies=st.sampled_from(["one", "each"]),
    order=st.permutations("nfij"),
    view=st.sampled_from(["direct", "transposed"]),
)
def test_replayed_transposed_trace_matches_torch(case, copies, order, view):
    """Either view: the stamps (direct) or their gather, x dilated under the turned kernel."""
    assume(_traceable(case))
    F = require_torch().nn.functional
    config = _config(case, copies=copies, loop_order="".join(order), view=view)
    doc = build_trace(config)
    state = replay(doc)
    for name, t in doc["tensors"].items():  # every tensor replays to the header's numbers
        np.testing.assert_allclose(np.ravel(state[name]), t["data"], rtol=1e-12, atol=1e-12, err_msg=name)
    x, w, b, dout = case.arrays()
    db = state["db"] if b is not None else dout.sum(axis=(0, 2, 3))
    ours = (state["y"], state["dx"], state["dw"], db)
    assert_all_close(ours, torch_grads(lambda xt, wt, bt: F.conv_transpose2d(xt, wt, bt, **case.args), x, w, b, dout))
    rc = resolve_config(config)
    assert count_events(config) == len(doc["events"])
    cost = trace_cost(rc)
    assert cost.events == len(doc["events"])
    assert cost.cells_written == sum(len(wr["delta"]) for ev in doc["events"] for wr in ev["writes"])
    assert len(encode_json(doc)) <= cost.bytes <= BYTES_FACTOR * len(encode_json(doc))


@PROPERTY
@given(case=transpose_cases(max_hw=4, max_k=3), phases=st.sampled_from(["forward", "backward", "both"]))
def test_only_inputs_are_unwritten_and_values_are_the_running_state(case, phases):
    assume(_traceable(case))
    config = _config(case, phases=phases)
    doc = build_trace(config)
    written = {wr["tensor"] for ev in doc["events"] for wr in ev["writes"]}
    named = {box["tensor"] for ev in doc["events"] for box in ev["reads"] + ev["writes"]}
    roles = {name: t["role"] for name, t in doc["tensors"].items()}
    assert written == {name for name, role in roles.items() if role != "input"}
    assert named <= set(roles)
    assert ("y" in written) == (phases != "backward") and ("dx" in written) == (phases != "forward")
    check_rule3_value_is_running_state(config)
    check_rule5_counts(config)


GAN = {
    "layer": "conv_transpose2d",
    "x": [[[[1, 0, 2], [0, -1, 0], [3, 0, 1]]]],
    "w": [[[[1, 2, 1], [0, 1, 0], [1, 0, -1]]]],
    "b": [0.5],
    "stride": 2,
    "padding": 1,
    "output_padding": 1,
    "dout": {"fill": "randint", "low": -2, "high": 2, "seed": 4},
}


def test_each_input_cell_stamps_x_times_w_onto_its_window():
    doc = build_trace(GAN)
    stamps = [ev for ev in doc["events"] if ev["phase"] == "stamp"]
    assert len(stamps) == 9
    third = stamps[2]  # x[0,0,0,2] = 2 stamps 2·w[0] at rows 0:3, columns 4:7 of yp
    assert third["text"] == "x[0,0,0,2] = 2: yp[0,0,0:3,4:7] += 2·w[0]"
    assert [r["tensor"] for r in third["reads"]] == ["x", "w"]
    (write,) = third["writes"]
    assert write["tensor"] == "yp" and write["delta"] == [2, 4, 2, 0, 2, 0, 2, 0, -2]
    assert stamps[1]["text"] == "x[0,0,0,1] = 0: a zero stamps nothing"


def test_the_crop_says_the_output_size_rule_and_the_stamps_overlap_in_a_checkerboard():
    doc = build_trace(GAN)
    (crop,) = [ev for ev in doc["events"] if ev["phase"] == "crop"]
    numbers = "H_out = W_out = (3−1)·2 − 2·1 + 1·(3−1) + 1 + 1 = 6"
    assert crop["text"].endswith(f"; padding trims the border: {numbers}")
    rule = "H_out = (H−1)·stride − 2·padding + dilation·(KH−1) + output_padding + 1 (W_out alike): "
    assert doc["spec"]["output_size"] == rule + numbers
    assert doc["tensors"]["y"]["shape"] == [1, 1, 6, 6] and doc["spec"]["output_padding"] == [1, 1]
    overlaps = np.reshape(doc["tensors"]["overlaps"]["data"], doc["tensors"]["overlaps"]["shape"])
    assert overlaps[:3, :3].tolist() == [[1, 1, 2], [1, 1, 2], [2, 2, 4]]  # stride 2 < kernel 3
    assert overlaps[-1].tolist() == [0] * 8  # the output_padding row: no stamp, cropped here
    assert doc["tensors"]["overlaps"]["role"] == "input" and doc["tensors"]["yp"]["marks"][0] == "k" * 8


def test_every_tensor_is_labelled_as_the_layers_input_output_or_gradient():
    t = build_trace(GAN)["tensors"]
    assert t["x"]["title"] == "layer input x" and t["y"]["title"] == "layer output y"
    assert t["dy"]["title"] == "upstream gradient dy" and t["dx"]["title"] == "input gradient dx"
    assert [t[n]["role"] for n in ("x", "w", "b", "yp", "y", "dy", "dyp", "db", "dw", "dx")] == [
        "input",
        "input",
        "input",
        "intermediate",
        "result",
        "input",
        "intermediate",
        "result",
        "result",
        "result",
    ]
    assert t["dx"]["gradient_of"] == "x" and "cropped_from" not in t["y"]  # y = the crop + b
    assert build_trace({**GAN, "b": None})["tensors"]["y"]["cropped_from"] == "yp"


def test_without_padding_the_stamps_are_the_output():
    doc = build_trace({**GAN, "padding": 0, "output_padding": 0})
    assert "yp" not in doc["tensors"] and "dyp" not in doc["tensors"]
    assert [p["name"] for p in doc["phases"]] == ["stamp", "bias", "db", "dw", "dx"]
    assert {wr["tensor"] for ev in doc["events"] if ev["phase"] == "stamp" for wr in ev["writes"]} == {"y"}


@pytest.mark.parametrize(
    "setting, field, words",
    [
        ({"output_padding": 2}, "output_padding", ["smaller than the stride or the dilation", "output_padding 2"]),
        ({"stride": 1, "dilation": 2, "output_padding": 1}, "output_padding", ["smaller than the stride", "stride 1"]),
        ({"activation": "relu"}, "activation", ["'identity'", "'relu'"]),
        ({"layout": "NHWC"}, "layout", ["'NCHW'"]),
        ({"granularity": "mac"}, "granularity", ["'window'"]),
        ({"view": "im2col"}, "view", ["'direct' or 'transposed'", "'im2col'"]),
        ({"padding_mode": "reflect"}, "padding_mode", ["'zeros'"]),
        ({"b": [1, 2]}, "b", ["(1,)", "C_out"]),
        ({"w": [[[[1]]], [[[1]]]]}, "w", ["C_in = 1", "(C_in, C_out/groups, KH, KW)"]),
        ({"code": "torch"}, "code", ["conv_transpose2d"]),
        ({"layer": "conv3d"}, "layer", ["'conv2d', 'conv_transpose2d'"]),
    ],
)
def test_what_the_trace_cannot_take_is_refused_naming_the_field(setting, field, words):
    with pytest.raises(TraceConfigError) as exc:
        resolve_config({**GAN, **setting})
    assert exc.value.field == field
    for word in words:
        assert word in str(exc.value), str(exc.value)


def test_output_padding_belongs_to_the_transposed_layer():
    with pytest.raises(TraceConfigError) as exc:
        resolve_config({"output_padding": 1})
    assert exc.value.field == "output_padding" and "conv_transpose2d" in str(exc.value)


def test_every_loop_letter_is_named_in_the_layers_words():
    doc = build_trace(GAN)
    used = {letter for ev in doc["events"] for letter in ev["loop"]}
    assert set(doc["loop_names"]) == used
    assert doc["loop_names"]["f"].startswith("input channel") and doc["loop_names"]["c"] == "output channel"


def test_the_gather_view_slides_the_turned_kernel_over_x_dilated_to_the_same_stamps():
    stamped, gathered = build_trace(GAN), build_trace({**GAN, "view": "transposed"})
    names = [p["name"] for p in gathered["phases"]]
    assert names[:3] == ["dilate x", "rotate w", "gather"] and "stamp" not in names
    assert gathered["tensors"]["yp"]["data"] == stamped["tensors"]["yp"]["data"]
    assert gathered["tensors"]["x_dilated"]["marks"][0] == "z" * 10  # inserted zeros, framed
    gathers = [ev for ev in gathered["events"] if ev["phase"] == "gather"]
    assert len(gathers) == 64  # one per cell of yp (8×8)
    assert gathers[10]["text"].startswith("yp[0,0,1,2] = Σ x_dilated[0,0,1:4,2:5]·w_rot[0] = ")
    (dilate,) = [ev for ev in gathered["events"] if ev["phase"] == "dilate x"][:1]
    assert "1 zero between cells (stride 2)" in dilate["text"] and "meet x cells" in dilate["text"]
