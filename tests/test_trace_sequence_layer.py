"""Conv1d as a traced layer (``"layer": "conv1d"``): the steps replay to PyTorch's
``F.conv1d`` (after ``F.pad`` in the padding's mode, the kernel flipped for a true
convolution) and its autograd on 300 hypothesis specs, in every view and granularity,
NCL and NLC, every padding form ("causal" too), each activation; they obey the trace
rules any layer obeys and the cost model bounds them; and the trace reads as a sequence:
three axes per tensor, one row per slice, no row loops, the padding said as (left,
right) and "causal"."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from layer_cases import conv1d_cases
from layer_oracle import PROPERTY, assert_all_close, torch_grads, torch_pad
from oracle import require_torch
from trace_checks import check_rule3_value_is_running_state, check_rule5_counts

from convcore.trace import build_trace, count_events, replay, resolve_config
from convcore.trace.config import TraceConfigError
from convcore.trace.cost import BYTES_FACTOR, trace_cost
from convcore.trace.sequence_layer import ROW_LETTERS
from convscope.http.encoding import encode_json

pytestmark = pytest.mark.oracle

VIEWS = [
    ("direct", "window", "nfj"),
    ("direct", "mac", "nfjcl"),
    ("im2col", "window", "fnj"),
    ("transposed", "window", "nfj"),
]
ACTIVATIONS = ["identity", "relu", "leaky_relu", "sigmoid", "tanh"]


def _sides(padding, length: int, stride: int, extent: int) -> tuple[int, int]:
    """(left, right) as the test reads conv1d's padding argument (PyTorch has no
    "causal": F.pad on the left by the kernel's extent − 1)."""
    if padding == "valid":
        return (0, 0)
    if padding == "causal":
        return (extent - 1, 0)
    if padding == "same":
        total = max((-(-length // stride) - 1) * stride + extent - length, 0)
        return (total // 2, total - total // 2)
    return (padding, padding) if isinstance(padding, int) else (padding[0], padding[-1])


def _config(case, layout: str, **settings) -> dict:
    """The case as a trace config in ``layout`` (NLC: x (N, L, C), w (K, C/g, F))."""
    x, w, b, dout = case.arrays()
    if layout == "NLC":
        x, w, dout = x.transpose(0, 2, 1), w.transpose(2, 1, 0), dout.transpose(0, 2, 1)
    config = {"layer": "conv1d", "layout": layout, "x": x.tolist(), "w": w.tolist(), "dout": dout.tolist()}
    config |= {k: list(v) if isinstance(v, tuple) else v for k, v in case.args.items()} | settings
    if b is not None:
        config["b"] = b.tolist()
    return config


def _torch_layer(case, activation: str):
    torch = require_torch()
    F = torch.nn.functional
    kw = case.args
    x, w, _, _ = case.arrays()
    stride, dilation = int(np.ravel(kw["stride"])[0]), int(np.ravel(kw["dilation"])[0])
    sides = _sides(kw["padding"], x.shape[2], stride, dilation * (w.shape[2] - 1) + 1)
    act = {
        "identity": lambda z: z,
        "relu": torch.relu,
        "leaky_relu": lambda z: F.leaky_relu(z, 0.01),
        "sigmoid": torch.sigmoid,
        "tanh": torch.tanh,
    }[activation]

    def layer(xt, wt, bt):
        kernel = torch.flip(wt, (2,)) if kw["flip"] else wt
        padded = torch_pad(xt, sides, kw["padding_mode"])
        return act(F.conv1d(padded, kernel, bt, stride, 0, dilation, kw["groups"]))

    return layer


@PROPERTY
@given(
    case=conv1d_cases(max_n=2, max_cf=3, max_length=9, max_k=4),
    view=st.sampled_from(VIEWS),
    layout=st.sampled_from(["NCL", "NLC"]),
    activation=st.sampled_from(ACTIVATIONS),
    copies=st.sampled_from(["one", "each"]),
    data=st.data(),
)
def test_replayed_sequence_trace_matches_torch(case, view, layout, activation, copies, data):
    """Forward, dX, dW and db replayed from the steps equal PyTorch's, float64; every
    tensor of the header replays to its numbers; the cost model's bounds hold."""
    name, granularity, letters = view
    order = "".join(data.draw(st.permutations(letters), label="loop_order"))
    config = _config(case, layout, view=name, granularity=granularity, loop_order=order)
    config |= {"activation": activation, "copies": copies}
    doc = build_trace(config)
    state = replay(doc)
    for tensor, t in doc["tensors"].items():
        np.testing.assert_allclose(np.ravel(state[tensor]), t["data"], rtol=1e-12, atol=1e-12, err_msg=tensor)
    x, w, b, dout = case.arrays()
    ncl = (lambda a: a.transpose(0, 2, 1)) if layout == "NLC" else (lambda a: a)
    out, dx = ncl(np.asarray(state["out"])), ncl(np.asarray(state["dx"]))
    dw = np.asarray(state["dw"]).transpose(2, 1, 0) if layout == "NLC" else state["dw"]
    db = state["db"] if b is not None else dout.sum(axis=(0, 2))
    assert_all_close((out, dx, dw, db), torch_grads(_torch_layer(case, activation), x, w, b, dout))
    rc = resolve_config(config)
    assert count_events(config) == len(doc["events"])
    cost = trace_cost(rc)
    assert cost.events == len(doc["events"])
    assert cost.cells_written == sum(len(wr["delta"]) for ev in doc["events"] for wr in ev["writes"])
    size = len(encode_json(doc))
    assert size <= cost.bytes <= BYTES_FACTOR * size


@PROPERTY
@given(
    case=conv1d_cases(max_n=2, max_cf=3, max_length=8, max_k=3),
    view=st.sampled_from(VIEWS),
    layout=st.sampled_from(["NCL", "NLC"]),
    phases=st.sampled_from(["forward", "backward", "both"]),
    backward=st.sampled_from(["fused", "separate"]),
)
def test_a_sequence_trace_obeys_the_trace_rules_and_reads_as_a_sequence(case, view, layout, phases, backward):
    """Only inputs are unwritten, values are the running state, the counts are exact;
    every Box and every tensor has three axes (a bias one), each slice is drawn as one
    row, and no loop runs over a row."""
    name, granularity, _ = view
    config = _config(case, layout, view=name, granularity=granularity, phases=phases)
    if name == "direct":
        config["backward"] = backward
    doc = build_trace(config)
    written = {wr["tensor"] for ev in doc["events"] for wr in ev["writes"]}
    roles = {t: v["role"] for t, v in doc["tensors"].items()}
    assert written == {t for t, role in roles.items() if role != "input"}
    for t in doc["tensors"].values():
        if t["axes"][0] in ("row",):  # (im2col's matrices: rows by columns)
            continue
        assert len(t["shape"]) == len(t["axes"]) == (1 if t["axes"] == ["f"] else 3)
        assert t["grid"][0] is None and "h" not in t["axes"] and "kh" not in t["axes"]
        assert all(len(row) == len(t["marks"][0]) for row in t.get("marks", [])) and len(t.get("marks", [""])) == 1
    for ev in doc["events"]:
        assert not set(ev["loop"]) & set(ROW_LETTERS), ev["loop"]
        for box in ev["reads"] + ev["writes"]:
            assert (
                len(box["start"]) == len(box["stop"]) == len(box["step"]) == len(doc["tensors"][box["tensor"]]["shape"])
            )
    assert not set(doc["loop_names"]) & set(ROW_LETTERS)
    check_rule3_value_is_running_state(config)
    check_rule5_counts(config)


CAUSAL = {
    "layer": "conv1d",
    "x": [[[1, 2, 0, -1, 3, 1]]],
    "w": [[[1, -1, 2]]],
    "b": [0.5],
    "padding": "causal",
    "dout": [[[1, 0, -1, 2, 1, -2]]],
}


def test_a_causal_filter_pads_on_the_left_only_and_each_output_reads_the_past():
    doc = build_trace(CAUSAL)
    spec = doc["spec"]
    assert spec["layer"] == "conv1d" and spec["padding"] == [2, 0] and spec["causal"] is True
    assert spec["x_shape"] == spec["out_shape"] == [1, 1, 6] and spec["layout"] == "NCL"
    (pad,) = [ev for ev in doc["events"] if ev["phase"] == "pad"]
    assert pad["text"] == "xp[0,0,2:8] = x[0] = [1, 2, 0, −1, 3, 1]; padding (left 2 only: causal) stays 0"
    assert doc["tensors"]["xp"]["marks"] == ["pp......"]
    forward = [ev for ev in doc["events"] if ev["phase"] == "forward"]
    assert forward[0]["loop"] == {"n": 0, "f": 0, "j": 0}
    assert forward[0]["text"] == "out[0,0,0] = 0·1 + 0·(−1) + 1·2 + 0.5 = 2.5"  # out 0 reads x 0 alone
    assert forward[3]["reads"][0]["start"] == [0, 0, 3] and forward[3]["reads"][0]["stop"] == [0 + 1, 1, 6]
    assert doc["loop_names"] == {"n": "image", "f": "filter", "j": "output position"}
    assert doc["torch_setup"][:2] == ["xp = F.pad(x, (2, 0))", "z = F.conv1d(xp, w, b, stride=1, dilation=1, groups=1)"]
    t = doc["tensors"]
    assert t["out"]["formula"] == "out[n,f,l] = Σ_{c,k} xp[n,c,l+k] · w[f,c,k] + b[f]"
    assert t["x"]["axes"] == ["n", "c", "l"] and t["w"]["axes"] == ["f", "c", "k"] and t["x"]["grid"] == [None, "l"]


def test_nlc_gives_the_sequence_positions_first_and_the_filters_as_kcf():
    config = {
        "layer": "conv1d",
        "layout": "NLC",
        "x": {"fill": "randint", "shape": [1, 6, 2], "low": -2, "high": 2, "seed": 0},
        "w": {"fill": "randint", "shape": [3, 2, 4], "low": -2, "high": 2, "seed": 1},
    }
    doc = build_trace(config)
    t = doc["tensors"]
    assert t["x"]["axes"] == ["n", "l", "c"] and t["w"]["axes"] == ["k", "c", "f"] and t["out"]["shape"] == [1, 4, 4]
    assert t["w"]["slice_axes"] == ["f", "c"]  # one filter's channels drawn together, as in NCL
    assert doc["spec"]["w_shape"] == [3, 2, 4] and doc["spec"]["x_shape"] == [1, 6, 2]
    assert resolve_config({"layer": "conv1d"}).layout == "NCL"
    assert build_trace({"layer": "conv1d", "layout": "NLC"})["tensors"]["x"]["shape"] == [1, 8, 1]


def test_reflect_padding_folds_the_copied_cells_gradient_back_onto_the_sequence():
    doc = build_trace({**CAUSAL, "padding": 2, "padding_mode": "reflect", "dout": None})
    (pad,) = [ev for ev in doc["events"] if ev["phase"] == "pad"]
    (fold,) = [ev for ev in doc["events"] if ev["phase"] == "fold"]
    assert pad["text"].startswith("xp = x with its positions [2, 1, 0, 1, 2, 3, 4, 5, 4, 3]: ")
    assert fold["text"].startswith("dx = dxp folded back (reflect padding): ")
    assert "(dxp's positions go onto x's positions [2, 1, 0, 1, 2, 3, 4, 5, 4, 3]) = " in fold["text"]
    assert doc["tensors"]["xp"]["marks"] == ["cc......cc"] and doc["tensors"]["dxp"]["marks"] == ["ff......ff"]


@pytest.mark.parametrize(
    ("setting", "field", "words"),
    [
        ({"layout": "NCHW"}, "layout", "one of 'NCL', 'NLC' for layer 'conv1d'"),
        ({"layout": "NCL", "layer": "conv2d"}, "layout", "one of 'NCHW', 'NHWC' for layer 'conv2d'"),
        ({"x": [[[[1, 2, 3]]]]}, "x", "(N, C, L)"),
        ({"w": [[1, 2]]}, "w", "(F, C/groups, K)"),
        ({"padding": "sideways"}, "padding", "'causal'"),
        ({"stride": [1, 2]}, "stride", "1-tuple"),
        ({"output_padding": 1}, "output_padding", "layer 'conv1d'"),
        ({"code": "torch"}, "code", "layer 'conv1d'"),
        ({"loop_order": "nfij"}, "loop_order", "'nfj'"),
        ({"dout": [[[1, 2]]]}, "dout", "(N, F, L_out)"),
        ({"padding": 6, "padding_mode": "reflect"}, "padding", "L"),
    ],
)
def test_what_a_sequence_cannot_take_is_refused_naming_the_field(setting, field, words):
    with pytest.raises(TraceConfigError) as err:
        resolve_config({**CAUSAL, **setting})
    assert err.value.field == field and words in str(err.value)
