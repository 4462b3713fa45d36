"""The im2col view: the matrices, every event's arithmetic, the seed-000 case done right,
and a property over random specs (replay == core == PyTorch)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import TORCH_ACTIVATIONS, torch_layer
from strategies import conv_cases, examples, randint
from test_trace_rules import every_geometry_config, make_config
from trace_checks import assert_close, box_slices, check_replay_matches_torch, tensor

from convcore.trace import TraceConfigError, build_trace, count_events, replay


def events(doc, phase):
    return [e for e in doc["events"] if e["phase"] == phase]


def read(doc, box):
    """The cells of a Box from the header's tensor, flat in row-major box order."""
    return tensor(doc, box["tensor"])[box_slices(box)].ravel()


# seed 000 with its mistakes undone: padding 0 (its crop pad:-pad is empty then),
# stride 2 (its index grids assume 1), batch 2 and 3 channels (its squeeze breaks them),
# a bias (never added in its forward)
SEED000 = dict(
    view="im2col",
    x=randint([2, 3, 7, 7], -3, 3, 0),
    w=randint([4, 3, 3, 3], -2, 2, 1),
    b=[1.0, -2.0, 0.5, 3.0],
    stride=2,
    padding=0,
    dout={"fill": "normal", "shape": [2, 4, 3, 3], "seed": 2},
)


def test_seed000_case_matches_torch():
    doc = build_trace(SEED000)
    spec = doc["spec"]
    # (H + 2p − K)//s + 1 = (7 + 0 − 3)//2 + 1 = 3, not seed 000's (H − K) + 2p/s + 1 = 5
    assert spec["out_shape"] == [2, 4, 3, 3]
    state = replay(doc)
    x, w = tensor(doc, "x"), tensor(doc, "w")
    b, dout = np.array(SEED000["b"]), tensor(doc, "dout")
    expected = torch_layer(x, w, b, dout, stride=2)
    z, dx, dw, db = expected.z, expected.dx, expected.dw, expected.db
    assert_close(state["out"], z, "out = z (the identity)", rtol=1e-10)
    assert state["dx"].shape == (2, 3, 7, 7)  # not the empty crop of pad:-pad with pad 0
    assert_close(state["dx"], dx, "dx", rtol=1e-10)
    assert_close(state["dw"], dw, "dw", rtol=1e-10)
    assert_close(state["db"], db, "db", rtol=1e-10)
    # the bias is added in the forward pass: every forward event reads b[f]
    for e in events(doc, "forward"):
        f = e["loop"]["f"]
        assert {"tensor": "b", "start": [f], "stop": [f + 1], "step": [1]} in e["reads"]
        assert f" + b[{f}]" in e["text"]
    # cols keeps both images and all channels: (C·KH·KW, N·Ho·Wo) = (27, 18)
    assert tensor(doc, "cols").shape == (27, 18)
    xp = tensor(doc, "x")  # padding 0: xp is x
    assert doc["aliases"]["xp"] == "x"
    for n in range(2):
        for i in range(3):
            for j in range(3):
                column = tensor(doc, "cols")[:, (n * 3 + i) * 3 + j]
                assert np.array_equal(column, xp[n, :, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3].ravel())


def test_phases_and_counts():
    doc = build_trace(SEED000)
    got = [(p["name"], p["stop"] - p["start"]) for p in doc["phases"]]
    P = 2 * 3 * 3
    # padding 0 and the identity: no pad, crop or activation phases
    assert got == [("im2col", P), ("forward", 4 * P), ("db", 4), ("dw", 4 * 27), ("dcols", 27 * P), ("col2im", P)]
    assert count_events(SEED000) == sum(n for _, n in got)
    backward_only = build_trace(dict(SEED000, phases="backward"))
    assert [p["name"] for p in backward_only["phases"]] == ["im2col", "db", "dw", "dcols", "col2im"]
    assert [p["name"] for p in build_trace(dict(SEED000, phases="forward"))["phases"]] == ["im2col", "forward"]
    padded = dict(SEED000, padding=1, activation="relu", dout={"fill": "normal", "seed": 2})  # 9×9 padded, out 4×4
    got = [(p["name"], p["stop"] - p["start"]) for p in build_trace(padded)["phases"]]
    P = 2 * 4 * 4
    assert got == [
        ("pad", 1),
        ("im2col", P),
        ("forward", 4 * P),
        ("activation", 2 * 4 * 4),
        ("activation grad", 2 * 4 * 4),
        ("db", 4),
        ("dw", 4 * 27),
        ("dcols", 27 * P),
        ("col2im", P),
        ("crop", 1),
    ]
    assert [p["name"] for p in build_trace(dict(padded, phases="backward"))["phases"]] == [
        "activation grad",
        "im2col",
        "db",
        "dw",
        "dcols",
        "col2im",
        "crop",
    ]


def test_every_event_does_the_arithmetic_it_names():
    """Each product event's value is its read row times its read column (from the
    header), im2col copies the window, col2im adds the dcols column into the window."""
    config = every_geometry_config("im2col", seed=21)
    doc = build_trace(config)
    b = tensor(doc, "b")
    for e in doc["events"]:
        phase, reads, (wr,) = e["phase"], e["reads"], e["writes"]
        if phase == "im2col":
            assert wr["tensor"] == "cols" and np.array_equal(wr["delta"], read(doc, reads[0]))
        elif phase == "forward":
            cols, w = read(doc, reads[0]), read(doc, reads[1])
            expected = cols @ w + b[e["loop"]["f"]]
            assert wr["tensor"] == "out" and wr["delta"][0] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        elif phase in ("dw", "dcols"):
            expected = read(doc, reads[0]) @ read(doc, reads[1])
            assert wr["delta"][0] == pytest.approx(expected, rel=1e-12, abs=1e-12), e["text"]
        elif phase == "col2im":
            assert wr["tensor"] == "dxp" and reads[0]["tensor"] == "dcols"  # padding [1, 0, 2, 1]: dxp
            assert np.array_equal(wr["delta"], read(doc, reads[0]))
            assert wr["step"] == [1, 1, 1, 2] and wr["stop"][1] - wr["start"][1] == 4  # all channels


def test_groups_make_the_product_block_diagonal():
    """Filter f of group g reads the rows of cols of g's channels only; dcols' rows of a
    channel come from the filters of its group only."""
    config = make_config((1, 4, 4, 4), (6, 2, 2, 2), groups=2, view="im2col", seed=22)
    doc = build_trace(config)
    for e in events(doc, "forward"):
        g = e["loop"]["f"] // 3
        assert e["reads"][0]["start"][0] == 8 * g and e["reads"][0]["stop"][0] == 8 * (g + 1)
    for e in events(doc, "dcols"):
        g = e["loop"]["c"] // 2
        w_read, dz_read = e["reads"]
        assert w_read["start"][0] == dz_read["start"][1] == 3 * g
        assert w_read["stop"][0] == dz_read["stop"][1] == 3 * (g + 1)


def test_floor_truncated_rows_get_exactly_zero():
    # H = 6, extent 3, stride 2: windows start at rows 0 and 2, so row 5 is never read
    config = make_config((1, 1, 6, 6), (1, 1, 3, 3), stride=2, view="im2col", seed=23)
    doc = build_trace(config)
    for e in events(doc, "col2im"):
        assert e["writes"][0]["stop"][2] <= 5 and e["writes"][0]["stop"][3] <= 5
    dxp = replay(doc)["dx"]  # no padding: col2im writes dx itself
    assert np.all(dxp[:, :, 5, :] == 0) and np.all(dxp[:, :, :, 5] == 0)
    assert np.any(dxp[:, :, 4, :] != 0)


def test_backward_setting_does_not_change_the_trace_and_loop_order_orders_columns():
    fused = build_trace(dict(SEED000, backward="fused"))
    separate = build_trace(dict(SEED000, backward="separate"))
    assert fused["events"] == separate["events"]
    doc = build_trace(dict(SEED000, loop_order="jinf"))
    loops = [e["loop"] for e in events(doc, "im2col")]
    assert [(d["j"], d["i"], d["n"]) for d in loops] == sorted((d["j"], d["i"], d["n"]) for d in loops)
    fwd = [e["loop"] for e in events(doc, "forward")]
    assert [(d["j"], d["i"], d["n"], d["f"]) for d in fwd] == sorted((d["j"], d["i"], d["n"], d["f"]) for d in fwd)
    assert_close(replay(doc)["dx"], replay(fused)["dx"], "dx in another loop order")


def test_mac_granularity_is_refused_with_the_supported_ones():
    with pytest.raises(TraceConfigError) as err:
        build_trace(dict(SEED000, granularity="mac"))
    assert err.value.field == "granularity"
    assert "'window'" in str(err.value) and "im2col" in str(err.value) and "'mac'" in str(err.value)
    with pytest.raises(TraceConfigError) as err:
        build_trace(dict(SEED000, loop_order="nfij0"))
    assert err.value.field == "loop_order" and "'fnij'" in str(err.value)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    conv_cases(max_n=2, max_cf=3, max_hw=6, max_k=3, max_stride=3, max_dilation=2),
    st.sampled_from(sorted(TORCH_ACTIVATIONS)),
    st.permutations("fnij"),
    st.booleans(),
)
def test_replayed_im2col_trace_matches_core_and_torch(case, activation, order, nhwc):
    check_replay_matches_torch(case, activation, nhwc, view="im2col", loop_order="".join(order))
