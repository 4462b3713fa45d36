"""The direct view: the worked example of design.md, step text, loop orders, phases,
NHWC, floor truncation, replay from a stream."""

from __future__ import annotations

import itertools
import json

import numpy as np
import orjson
import pytest
from trace_checks import nhwc_config, tensor

from convcore.fill import format_number as fmt_number
from convcore.trace import TraceReplayError, build_trace, count_events, iter_trace, replay

D2L = {"x": [[[[0, 1, 2], [3, 4, 5], [6, 7, 8]]]], "w": [[[[0, 1], [2, 3]]]]}


def events(doc, phase):
    return [e for e in doc["events"] if e["phase"] == phase]


def test_worked_example_forward_event_exactly():
    # no padding, the identity: the windows read x and write out (xp is x, z is out)
    doc = build_trace(D2L)
    assert [(p["name"], p["stop"] - p["start"]) for p in doc["phases"]] == [("forward", 4), ("backward", 4)]
    assert doc["aliases"] == {"xp": "x", "dxp": "dx", "z": "out", "dz": "dout"}
    assert tensor(doc, "out").ravel().tolist() == [19, 25, 37, 43]
    fwd = events(doc, "forward")
    assert [e["text"] for e in fwd] == [
        "out[0,0,0,0] = 0·0 + 1·1 + 3·2 + 4·3 = 19",
        "out[0,0,0,1] = 1·0 + 2·1 + 4·2 + 5·3 = 25",
        "out[0,0,1,0] = 3·0 + 4·1 + 6·2 + 7·3 = 37",
        "out[0,0,1,1] = 4·0 + 5·1 + 7·2 + 8·3 = 43",
    ]
    assert fwd[2] == {
        "phase": "forward",
        "loop": {"n": 0, "f": 0, "i": 1, "j": 0},
        "reads": [
            {"tensor": "x", "start": [0, 0, 1, 0], "stop": [1, 1, 3, 2], "step": [1, 1, 1, 1]},
            {"tensor": "w", "start": [0, 0, 0, 0], "stop": [1, 1, 2, 2], "step": [1, 1, 1, 1]},
        ],
        "writes": [
            {
                "tensor": "out",
                "start": [0, 0, 1, 0],
                "stop": [1, 1, 2, 1],
                "step": [1, 1, 1, 1],
                "delta": [37],
                "value": [37],
            }
        ],
        "text": "out[0,0,1,0] = 3·0 + 4·1 + 6·2 + 7·3 = 37",
        "line": 19,  # out[n, f, i, j] = np.sum(window * w[f]) + b[f] in CS231n's listing
        "lines": [19],
    }


def test_worked_example_fused_backward_event():
    doc = build_trace(D2L)
    back = events(doc, "backward")
    assert [e["loop"] for e in back] == [{"n": 0, "f": 0, "i": i, "j": j} for i in (0, 1) for j in (0, 1)]
    e = back[2]  # output (0, 0, 1, 0), dout = ones
    assert e["reads"] == [  # dz is dout (the identity), xp is x (no padding)
        {"tensor": "dout", "start": [0, 0, 1, 0], "stop": [1, 1, 2, 1], "step": [1, 1, 1, 1]},
        {"tensor": "x", "start": [0, 0, 1, 0], "stop": [1, 1, 3, 2], "step": [1, 1, 1, 1]},
        {"tensor": "w", "start": [0, 0, 0, 0], "stop": [1, 1, 2, 2], "step": [1, 1, 1, 1]},
    ]
    dw, dx = e["writes"]
    assert dw["tensor"] == "dw" and dw["delta"] == [3, 4, 6, 7]
    assert dw["value"] == [0 + 1 + 3, 1 + 2 + 4, 3 + 4 + 6, 4 + 5 + 7]  # running: windows 0, 1, 2
    assert dx["tensor"] == "dx" and dx["start"] == [0, 0, 1, 0] and dx["delta"] == [0, 1, 2, 3]
    assert e["text"] == "dout[0,0,1,0] = 1: dw[0] += 1·x[0,0,1:3,0:2]; dx[0,0,1:3,0:2] += 1·w[0]"
    assert tensor(doc, "dw").ravel().tolist() == [8, 12, 20, 24]
    # the listing's dw and dxp lines (no bias: no db write), g = dout[n, f, i, j] = 1
    assert (e["line"], e["lines"], e["scalars"]) == (39, [38, 39], {"g": 1})
    assert doc["code"]["lines"][38].strip().startswith("dxp[n, :, i * s : i * s + HH, j * s : j * s + WW] += g")


def test_shared_phases_text_and_boxes():
    doc = build_trace(dict(D2L, padding=1, activation="relu", copies="each"))
    pad = events(doc, "pad")
    assert len(pad) == 3
    assert pad[0]["text"] == "xp[0,0,1,1:4] = x[0,0,0] = [0, 1, 2]; padding (top 1, bottom 1, left 1, right 1) stays 0"
    assert pad[1]["writes"][0]["start"] == [0, 0, 2, 1] and pad[1]["writes"][0]["stop"] == [1, 1, 3, 4]
    act = events(doc, "activation")
    assert len(act) == 4 and act[0]["text"].startswith("out[0,0,0] = relu(z[0,0,0]) = [")
    grad = events(doc, "activation grad")
    assert grad[0]["text"].startswith("dz[0,0,0] = dout[0,0,0]·relu′(z[0,0,0]) = [")
    crop = events(doc, "crop")
    assert [c["text"].split(" = ")[:2] for c in crop] == [
        ["dx[0,0,0]", "dxp[0,0,1,1:4]"],
        ["dx[0,0,1]", "dxp[0,0,2,1:4]"],
        ["dx[0,0,2]", "dxp[0,0,3,1:4]"],
    ]
    assert crop[0]["text"].endswith(
        "; the gradient landing on the padding (top 1, bottom 1, left 1, right 1) is discarded"
    )
    assert all(c["text"].endswith("; the padding's gradient is discarded") for c in crop[1:])


def test_copies_in_one_step_write_the_whole_interior():
    x = np.arange(2 * 2 * 3 * 3, dtype=float).reshape(2, 2, 3, 3) - 10
    doc = build_trace({"x": x.tolist(), "w": [[[[1.0]]] * 2] * 1, "padding": [1, 0, 2, 1]})
    (pad,) = events(doc, "pad")
    assert pad["loop"] == {} and pad["reads"] == [
        {"tensor": "x", "start": [0, 0, 0, 0], "stop": [2, 2, 3, 3], "step": [1, 1, 1, 1]}
    ]
    (write,) = pad["writes"]
    assert (write["tensor"], write["start"], write["stop"]) == ("xp", [0, 0, 1, 2], [2, 2, 4, 5])
    assert write["delta"] == write["value"] == x.ravel().tolist()
    assert pad["text"] == "xp[0:2,0:2,1:4,2:5] = x; padding (top 1, bottom 0, left 2, right 1) stays 0"
    (crop,) = events(doc, "crop")
    assert crop["text"].startswith("dx = dxp[0:2,0:2,1:4,2:5]; the gradient landing on the padding")
    assert crop["writes"][0]["value"] == tensor(doc, "dx").ravel().tolist()
    assert "c" not in doc["loop_names"] and "h" not in doc["loop_names"]
    each = build_trace({"x": x.tolist(), "w": [[[[1.0]]] * 2] * 1, "padding": [1, 0, 2, 1], "copies": "each"})
    assert len(events(each, "pad")) == len(events(each, "crop")) == 2 * 2 * 3
    assert {"c", "h"} <= set(each["loop_names"])
    np.testing.assert_array_equal(tensor(each, "dx"), tensor(doc, "dx"))


def test_sigma_text_for_large_windows_with_bias():
    rng = np.random.default_rng(0)
    x, w = rng.integers(-2, 3, (1, 3, 5, 7)), rng.integers(-1, 2, (2, 3, 3, 3))
    doc = build_trace({"x": x.tolist(), "w": w.tolist(), "b": [1, -2]})
    e = [e for e in events(doc, "forward") if e["loop"] == {"n": 0, "f": 1, "i": 0, "j": 2}][0]
    value = tensor(doc, "out")[0, 1, 0, 2]
    expected_value = f"{int(value)}".replace("-", "−")
    partial = [int(v) for v in (x[0, :, 0:3, 2:5] * w[1]).sum(axis=(1, 2))]  # per channel
    said = " + ".join(f"(−{-v})" if v < 0 else str(v) for v in partial)
    assert sum(partial) - 2 == value
    assert e["text"] == f"out[0,1,0,2] = {said} [c = 0, 1, 2] + b[1] (−2) = {expected_value}"
    assert e["reads"][2] == {"tensor": "b", "start": [1], "stop": [2], "step": [1]}


def test_numbers_in_text_integers_without_point_and_real_minus():
    doc = build_trace(
        {"x": [[[[0.5]]]], "w": [[[[3]]]], "dout": [[[[-2]]]], "granularity": "mac", "backward": "separate"}
    )
    (dw,) = events(doc, "dw")
    assert dw["text"] == "dw[0,0,0,0] += x[0,0,0,0]·dout[0,0,0,0] = 0.5·(−2) → −1"
    (dx,) = events(doc, "dx")
    assert dx["text"] == "dx[0,0,0,0] += w[0,0,0,0]·dout[0,0,0,0] = 3·(−2) → −6"
    (fwd,) = events(doc, "forward")
    assert fwd["text"] == "out[0,0,0,0] += x[0,0,0,0]·w[0,0,0,0] = 0.5·3 → 1.5"
    for e in doc["events"]:
        assert "-" not in e["text"] and ".0 " not in e["text"] + " "


def test_mac_dw_accumulates_like_seed_004():
    """dw[f,c,k,l] += xp·dz over n, i, j: the running value after the last MAC is dw (no
    padding and the identity: xp is x, dz is dout)."""
    x = [[[[1, 2, 0], [0.5, -1, 3], [2, 2, 1]]]]
    doc = build_trace(
        {
            "x": x,
            "w": [[[[1, -1], [2, 0]]]],
            "dout": [[[[1, -2], [3, 0.5]]]],
            "granularity": "mac",
            "backward": "separate",
        }
    )
    dw = events(doc, "dw")
    to_00 = [e for e in dw if e["writes"][0]["start"] == [0, 0, 0, 0]]
    assert [e["text"] for e in to_00] == [
        "dw[0,0,0,0] += x[0,0,0,0]·dout[0,0,0,0] = 1·1 → 1",
        "dw[0,0,0,0] += x[0,0,0,1]·dout[0,0,0,1] = 2·(−2) → −3",
        "dw[0,0,0,0] += x[0,0,1,0]·dout[0,0,1,0] = 0.5·3 → −1.5",
        "dw[0,0,0,0] += x[0,0,1,1]·dout[0,0,1,1] = (−1)·0.5 → −2",
    ]
    assert tensor(doc, "dw")[0, 0, 0, 0] == -2


def test_mac_forward_bias_is_added_once_per_output():
    doc = build_trace(
        {"x": [[[[1, 2], [3, 4]]]], "w": [[[[1, 1], [1, 1]]]], "b": [-0.5], "granularity": "mac", "phases": "forward"}
    )
    fwd = events(doc, "forward")
    assert fwd[0]["text"] == "out[0,0,0,0] += x[0,0,0,0]·w[0,0,0,0] + b[0] = 1·1 + (−0.5) → 0.5"
    assert [r["tensor"] for r in fwd[0]["reads"]] == ["x", "w", "b"]
    assert [r["tensor"] for r in fwd[1]["reads"]] == ["x", "w"]
    assert fwd[-1]["writes"][0]["value"] == [9.5]


def _loops(doc, phase, letters):
    return [tuple(e["loop"][c] for c in letters) for e in events(doc, phase)]


def _nested(sizes: dict[str, int], order: str, letters: str) -> list[tuple[int, ...]]:
    """The values of ``letters`` at each pass of loops over range(sizes[letter]) nested in
    ``order``, outermost first."""
    passes = itertools.product(*(range(sizes[letter]) for letter in order))
    return [tuple(dict(zip(order, values))[letter] for letter in letters) for values in passes]


def test_seed_004_loop_orders_are_expressible():
    config = {
        "x": {"fill": "randint", "shape": [2, 2, 4, 4], "seed": 3},
        "w": {"fill": "randint", "shape": [2, 2, 2, 2], "seed": 4},
        "b": [1, 2],
        "stride": 2,
        "padding": 1,
        "granularity": "mac",
        "backward": "separate",
        "loop_order": "nfijklc",
        "dx_loop_order": "nijklfc",
    }
    doc = build_trace(config)
    assert [p["name"] for p in doc["phases"]] == ["pad", "forward", "db", "dw", "dx", "crop"]  # the identity
    sizes = {"n": 2, "f": 2, "i": 3, "j": 3, "c": 2, "k": 2, "l": 2}
    assert _loops(doc, "dw", "nfijckl") == _nested(sizes, "nfijklc", "nfijckl")
    assert _loops(doc, "dx", "nfijckl") == _nested(sizes, "nijklfc", "nfijckl")
    assert _loops(doc, "db", "nfij") == _nested(sizes, "nfij", "nfij")
    assert doc["spec"]["loop_order"] == "nfijklc" and doc["spec"]["dx_loop_order"] == "nijklfc"


def test_window_loop_order_and_separate_phases():
    config = {
        "x": {"fill": "randint", "shape": [2, 1, 3, 3], "seed": 0},
        "w": {"fill": "randint", "shape": [2, 1, 2, 2], "seed": 1},
        "b": [0, 1],
        "loop_order": "jinf",
        "dx_loop_order": "fnij",
        "backward": "separate",
    }
    doc = build_trace(config)
    sizes = dict(n=2, f=2, i=2, j=2)
    jinf = [(n, f, i, j) for j in range(2) for i in range(2) for n in range(2) for f in range(2)]
    fnij = [(n, f, i, j) for f in range(2) for n in range(2) for i in range(2) for j in range(2)]
    assert _loops(doc, "forward", "nfij") == jinf
    assert _loops(doc, "dw", "nfij") == jinf
    assert _loops(doc, "dx", "nfij") == fnij
    db = events(doc, "db")
    assert len(db) == 2 and db[1]["reads"] == [
        {"tensor": "dout", "start": [0, 1, 0, 0], "stop": [2, 2, 2, 2], "step": [1, 1, 1, 1]}
    ]  # dz is dout (the identity)
    assert db[1]["text"].startswith("db[1] = Σ dout[0:2,1] = ")
    assert all(len(e["writes"]) == 1 and e["writes"][0]["tensor"] == "dw" for e in events(doc, "dw"))
    assert all(len(e["writes"]) == 1 and e["writes"][0]["tensor"] == "dx" for e in events(doc, "dx"))
    assert sizes  # the loops above enumerate these sizes


def test_floor_truncated_rows_are_never_written_and_stay_zero():
    # H = 6, kernel 3, stride 2: windows reach rows 0..4; row 5 of x is never read (no
    # padding: the windows write dx itself, and its marks say which cells they never reach)
    doc = build_trace(
        {
            "x": {"fill": "normal", "shape": [1, 1, 6, 6], "seed": 0},
            "w": {"fill": "normal", "shape": [1, 1, 3, 3], "seed": 1},
            "stride": 2,
        }
    )
    assert doc["spec"]["reached_hw"] == [5, 5]
    for e in events(doc, "backward"):
        (dx,) = [w for w in e["writes"] if w["tensor"] == "dx"]
        assert dx["stop"][2] <= 5 and dx["stop"][3] <= 5
    dx = replay(doc)["dx"]
    assert np.all(dx[0, 0, 5, :] == 0) and np.all(dx[0, 0, :, 5] == 0)
    assert np.any(dx[0, 0, 4, :] != 0)
    assert doc["tensors"]["dx"]["marks"] == ["....." + "n"] * 5 + ["n" * 6]


def test_dilated_window_box_has_step_dilation():
    doc = build_trace(
        {
            "x": {"fill": "arange", "shape": [1, 1, 7, 7]},
            "w": {"fill": "ones", "shape": [1, 1, 2, 2]},
            "stride": 2,
            "dilation": 2,
        }
    )
    e = [e for e in events(doc, "forward") if e["loop"] == {"n": 0, "f": 0, "i": 1, "j": 2}][0]
    assert e["reads"][0] == {"tensor": "x", "start": [0, 0, 2, 4], "stop": [1, 1, 5, 7], "step": [1, 1, 2, 2]}
    assert e["text"] == "out[0,0,1,2] = 18·1 + 20·1 + 32·1 + 34·1 = 104"


def test_nhwc_text_and_boxes_use_nhwc_indices():
    doc = build_trace(
        {"layout": "NHWC", "x": {"fill": "arange", "shape": [1, 3, 3, 3]}, "w": {"fill": "ones", "shape": [2, 2, 3, 3]}}
    )
    assert doc["tensors"]["x"]["axes"] == ["n", "h", "w", "c"]
    assert doc["tensors"]["w"]["axes"] == ["kh", "kw", "c", "f"]
    assert doc["spec"]["x_shape"] == [1, 3, 3, 3] and doc["spec"]["out_shape"] == [1, 2, 2, 3]
    e = [e for e in events(doc, "forward") if e["loop"] == {"n": 0, "f": 2, "i": 1, "j": 0}][0]
    # per channel c: Σ over rows 1–2, columns 0–1 of x = (h·3 + w)·3 + c is 60 + 4c
    assert e["text"] == "out[0,1,0,2] = 60 + 64 + 68 [c = 0, 1, 2] = 192"
    back = [e for e in events(doc, "backward") if e["loop"] == {"n": 0, "f": 2, "i": 1, "j": 0}][0]
    assert "+= 1·x[0,1:3,0:2]" in back["text"] and "dx[0,1:3,0:2] += 1·w[0:2,0:2,0:3,2]" in back["text"]
    assert e["reads"][1] == {"tensor": "w", "start": [0, 0, 0, 2], "stop": [2, 2, 3, 3], "step": [1, 1, 1, 1]}


def test_backward_only_trace_takes_z_and_out_from_the_header():
    config = {
        "x": {"fill": "normal", "shape": [1, 2, 4, 4], "seed": 0},
        "w": {"fill": "normal", "shape": [3, 2, 3, 3], "seed": 1},
        "b": [0.1, 0.2, 0.3],
        "dout": {"fill": "normal", "shape": [1, 3, 2, 2], "seed": 2},
        "activation": "sigmoid",
        "phases": "backward",
    }
    doc = build_trace(config)
    roles = {k: t["role"] for k, t in doc["tensors"].items()}
    assert roles == {
        "x": "input",
        "w": "input",
        "b": "input",
        "z": "input",
        "out": "input",
        "dout": "input",
        "dz": "intermediate",
        "db": "result",
        "dw": "result",
        "dx": "result",
    }
    assert doc["aliases"] == {"xp": "x", "dxp": "dx"}  # no padding
    assert [p["name"] for p in doc["phases"]] == ["activation grad", "backward"]
    state = replay(doc)
    full = build_trace(dict(config, phases="both"))
    for name in ("dx", "dw", "db", "z", "out"):
        np.testing.assert_allclose(state[name], tensor(full, name), rtol=1e-12, atol=1e-15)


def test_forward_only_trace_has_no_gradients():
    doc = build_trace(dict(D2L, phases="forward"))
    assert set(doc["tensors"]) == {"x", "w", "out"}
    assert [p["name"] for p in doc["phases"]] == ["forward"]
    doc = build_trace(dict(D2L, phases="forward", padding=1, activation="tanh"))
    assert set(doc["tensors"]) == {"x", "xp", "w", "z", "out"}
    assert [p["name"] for p in doc["phases"]] == ["pad", "forward", "activation"]


def test_replay_from_stream_lines_json_round_trip_and_batches():
    config = dict(D2L, b=[0.5], dout=[[[[1, -1], [2, 0.25]]]], activation="leaky_relu")
    lines = [orjson.loads(orjson.dumps(item)) for item in iter_trace(config)]
    doc = build_trace(config)
    expected = replay(doc)
    for name, arr in replay(lines).items():
        assert np.array_equal(arr, expected[name])
    header, evs, end = lines[0], lines[1:-1], lines[-1]
    batched = [
        header,
        {"type": "events", "first": 0, "events": evs[:5]},
        {"type": "events", "first": 5, "events": evs[5:]},
        end,
    ]
    for name, arr in replay(batched).items():
        assert np.array_equal(arr, expected[name])
    with pytest.raises(TraceReplayError):
        replay([header, {"type": "error", "detail": [{"loc": [], "msg": "boom"}]}])
    with pytest.raises(TraceReplayError):
        replay(evs)


def test_documents_are_strict_json_and_counts_match():
    for config in (D2L, dict(D2L, granularity="mac", backward="separate", b=[1])):
        doc = build_trace(config)
        text = json.dumps(doc, allow_nan=False, ensure_ascii=False)
        assert json.loads(text)["total_events"] == len(doc["events"]) == count_events(config)
        assert all("type" not in e for e in doc["events"])
        assert list(doc) == [
            "schema",
            "spec",
            "tensors",
            "aliases",
            "loop_names",
            "torch_setup",
            "phases",
            "code",
            "events",
            "total_events",
        ]
        assert doc["schema"] == "convscope.trace/3"


@pytest.mark.parametrize("view", ["direct", "transposed"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_multi_channel_forward_text_shows_each_channels_partial_sum(view, layout):
    """z[0,1,0,2] = (−3) + 1 + 0 [c = 0, 1, 2] + b[1] 1 = −1: the
    partial sums are the window's products summed per channel (computed here), the
    channels those of the filter's group, and they add up with the bias to z."""
    import re

    rng = np.random.default_rng(7)
    x, w = rng.integers(-2, 3, (1, 4, 5, 5)).astype(float), rng.integers(-1, 2, (4, 2, 3, 3)).astype(float)
    b = np.array([1.0, -1.0, 0.0, 2.0])
    config = {"x": x.tolist(), "w": w.tolist(), "b": b.tolist(), "groups": 2, "padding": 1, "view": view}
    if layout == "NHWC":
        config = nhwc_config(config)
    doc = build_trace(config)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    forward = [e for e in doc["events"] if e["phase"] == "forward"]
    assert len(forward) == 4 * 5 * 5
    for event in forward:
        n, f, i, j = (event["loop"][k] for k in "nfij")
        c0 = (f // 2) * 2
        partial = (xp[n, c0 : c0 + 2, i : i + 3, j : j + 3] * w[f]).sum(axis=(1, 2))
        said = " + ".join(f"({fmt_number(v)})" if v < 0 else fmt_number(v) for v in partial)
        bias = f"({fmt_number(b[f])})" if b[f] < 0 else fmt_number(b[f])
        assert re.fullmatch(
            rf"out\[[0-9,]+\] = {re.escape(said)} \[c = {c0}, {c0 + 1}\] \+ b\[{f}\] {re.escape(bias)} = [−0-9]+",
            event["text"],
        ), event["text"]
        assert partial.sum() + b[f] == event["writes"][0]["value"][0]


def test_single_channel_and_small_windows_keep_their_text():
    doc = build_trace(
        {
            "x": {"fill": "randint", "shape": [1, 1, 5, 5], "low": -2, "high": 2, "seed": 0},
            "w": {"fill": "randint", "shape": [1, 1, 4, 4], "low": -1, "high": 1, "seed": 1},
        }
    )
    assert [e["text"] for e in doc["events"] if e["phase"] == "forward"][0].startswith(
        "out[0,0,0,0] = Σ x[0,0,0:4,0:4]·w[0] = "
    )
    assert "[c =" not in "".join(e["text"] for e in doc["events"])
