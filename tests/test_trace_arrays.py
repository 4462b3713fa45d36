"""``build_trace`` / ``iter_trace`` with ``arrays=True`` (the service's route): the
bulk delta and value rows are float64 arrays, and the service's encoder writes them
as byte for byte the JSON of the plain-data trace."""

from __future__ import annotations

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import conv_cases, examples
from test_trace_rules import RULE_CONFIGS
from trace_checks import assert_close, tensor

from convcore.trace import build_trace, iter_trace, replay
from convscope.http.encoding import encode_json


def array_rows(events) -> int:
    return sum(
        isinstance(wr["delta"], np.ndarray) + isinstance(wr["value"], np.ndarray)
        for ev in events
        for wr in ev["writes"]
    )


def assert_same_json(config: dict) -> dict:
    """The arrays trace encodes to the plain trace's bytes, whole and as stream lines;
    returns the arrays document."""
    plain = build_trace(config)
    arrays = build_trace(config, arrays=True)
    assert encode_json(arrays) == orjson.dumps(plain)
    lines = iter_trace(config, arrays=True)
    for k, (a, p) in enumerate(zip(lines, iter_trace(config), strict=True)):
        assert encode_json(a) == orjson.dumps(p), f"stream line {k}"
    return arrays


@pytest.mark.parametrize("config", RULE_CONFIGS)
def test_arrays_trace_encodes_to_the_plain_traces_bytes(config):
    doc = assert_same_json(config)
    # the shared phases (pad, activation, crop, and fold and flip) make their rows in bulk
    # in every view, and
    # so does the direct view's window backward
    spec, phases = doc["spec"], {p["name"] for p in doc["phases"]}
    bulk = phases & {"pad", "activation", "activation grad", "crop", "fold", "flip", "flip back"} or (
        spec["view"],
        spec["granularity"],
        spec["phases"] != "forward",
    ) == ("direct", "window", True)
    assert (array_rows(doc["events"]) > 0) == bool(bulk)
    for name, arr in replay(doc).items():  # replay takes arrays as it takes lists
        assert_close(arr, tensor(doc, name), name)


def test_direct_window_backward_rows_are_arrays():
    config = next(p.values[0] for p in RULE_CONFIGS if p.id == "direct-window-fused")
    events = [ev for ev in build_trace(config, arrays=True)["events"] if ev["phase"] == "backward"]
    dw = [wr for ev in events for wr in ev["writes"] if wr["tensor"] in ("dw", "dxp")]
    assert dw and all(isinstance(wr["delta"], np.ndarray) and wr["delta"].dtype == np.float64 for wr in dw)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    conv_cases(max_n=2, max_cf=3, max_hw=6, max_k=3, max_stride=2, max_dilation=2),
    st.sampled_from(["normal", "small integers"]),
    st.sampled_from(["direct", "im2col", "transposed"]),
    st.sampled_from(["window", "mac"]),
    st.sampled_from(["fused", "separate"]),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_arrays_json_is_the_plain_json_over_random_specs(case, data, view, granularity, backward, nhwc, seed):
    """With small integers (rows repeat, so equal rows are shared) and −0 in x and dout
    (0 + −0 is +0: delta and value rows differ in sign only)."""
    x, w, b, dout = case.arrays()
    if data == "small integers":
        x, w, dout = np.round(x), np.round(w), np.round(dout)
    rng = np.random.default_rng(seed)
    for arr in (x, dout):
        arr[(arr == 0) & (rng.random(arr.shape) < 0.5)] = -0.0
        arr[rng.random(arr.shape) < 0.1] = -0.0
    config = {"x": x.tolist(), "w": w.tolist(), "dout": dout.tolist(), "view": view, **case.kwargs()}
    if view == "direct":
        config.update(granularity=granularity, backward=backward)
    if b is not None:
        config["b"] = b.tolist()
    if nhwc:
        config.update(
            layout="NHWC",
            x=np.transpose(x, (0, 2, 3, 1)).tolist(),
            w=np.transpose(w, (2, 3, 1, 0)).tolist(),
            dout=np.transpose(dout, (0, 2, 3, 1)).tolist(),
        )
    assert_same_json(config)


@pytest.mark.parametrize("copies", ["one", "each"])
@pytest.mark.parametrize("arrays", [False, True])
def test_a_minus_zero_delta_leaves_plus_zero_as_the_value(arrays, copies):
    # 0 + (−0) is +0: the rows of x and of dz (dout·sigmoid′(z), −0 where dout is) hold
    # −0, so the pad and activation grad writes have delta −0 where their value is +0
    x = [[[[1.0, -0.0, 2.0], [0.0, -0.0, -3.0]]]]
    dout = [[[[-0.0, 1.0, -0.0], [1.0, -0.0, 2.0], [0.0, -0.0, -3.0]]]]  # (1, 1, 3, 3): one padding row on top
    doc = build_trace(
        {"x": x, "w": [[[[1.0]]]], "dout": dout, "padding": [1, 0, 0, 0], "activation": "sigmoid", "copies": copies},
        arrays=arrays,
    )
    for phase, rows in (("pad", 2 if copies == "each" else 1), ("activation grad", 3)):
        writes = [wr for ev in doc["events"] if ev["phase"] == phase for wr in ev["writes"]]
        assert len(writes) == rows
        for wr in writes:
            delta, value = np.asarray(wr["delta"]), np.asarray(wr["value"])
            np.testing.assert_array_equal(delta, value)
            assert np.signbit(delta[delta == 0]).any() and not np.signbit(value[value == 0]).any(), (phase, wr)
