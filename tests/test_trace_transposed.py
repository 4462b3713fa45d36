"""The transposed view: dz dilated by the stride, the rotated kernel, the gather per dxp
cell, the seed-001 mistake (a rotated-kernel backward ignoring the stride) shown wrong,
and a property over random specs (replay == core == PyTorch)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import TORCH_ACTIVATIONS, torch_layer
from strategies import conv_cases, examples
from test_trace_rules import every_geometry_config, make_config
from trace_checks import assert_close, box_slices, check_replay_matches_torch, nhwc_config, tensor

from convcore.layout import NCHW_TO_NHWC, OIHW_TO_HWIO
from convcore.trace import TraceConfigError, build_trace, count_events, replay


def events(doc, phase):
    return [e for e in doc["events"] if e["phase"] == phase]


def read(doc, box):
    return tensor(doc, box["tensor"])[box_slices(box)]


def full_correlation_ignoring_stride(dz, w):
    """Seed 001's rotated-kernel backward, one image and channel: the full correlation of
    the *undilated* dz (Ho, Wo) with the 180°-rotated w (K, K) -> (Ho + K − 1, Wo + K − 1)."""
    k = w.shape[0]
    rot = w[::-1, ::-1]
    padded = np.pad(dz, k - 1)
    ho, wo = dz.shape
    return np.array(
        [[np.sum(padded[y : y + k, x : x + k] * rot) for x in range(wo + k - 1)] for y in range(ho + k - 1)]
    )


def test_seed001_stride2_needs_zeros_between_dz_cells():
    """Seed 001's layer (NHWC, HWIO, padding 'same') with stride 2: the traced dz_dilated
    has one zero between cells, the gather gives torch's dX, and the seed's variant that
    rotates the kernel but skips the dilation does not."""
    rng = np.random.default_rng(31)
    x = rng.normal(size=(1, 6, 6, 1))  # NHWC
    w = rng.normal(size=(3, 3, 1, 1))  # HWIO
    config = {
        "view": "transposed",
        "layout": "NHWC",
        "x": x.tolist(),
        "w": w.tolist(),
        "stride": 2,
        "padding": "same",
        "dout": rng.normal(size=(1, 3, 3, 1)).tolist(),
    }
    doc = build_trace(config)
    assert doc["spec"]["padding"] == [0, 1, 0, 1]  # TensorFlow's same: the odd pixel bottom/right
    dz = tensor(doc, "dout")[0, :, :, 0]  # the identity: dz is dout
    dzd = tensor(doc, "dz_dilated")[0, :, :, 0]
    assert dzd.shape == (7 + 2, 7 + 2)  # Hp + extent − 1
    assert np.array_equal(dzd[2:7:2, 2:7:2], dz)  # eh − 1 = 2 zero rows above, then every 2nd row
    mask = np.zeros_like(dzd, dtype=bool)
    mask[2:7:2, 2:7:2] = True
    assert np.all(dzd[~mask] == 0) and np.all(dz != 0)
    first = events(doc, "dilate dz")[0]
    assert "1 zero between cells (stride 2)" in first["text"]
    assert first["writes"][0]["step"] == [1, 1, 2, 1]  # NHWC: n, h, w, c; the row's cells 2 apart
    # the gather equals torch
    state = replay(doc)
    x_nchw, w_oihw = x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1)
    dout = np.asarray(config["dout"]).transpose(0, 3, 1, 2)
    expected = torch_layer(x_nchw, w_oihw, None, dout, stride=2, padding=(0, 1, 0, 1))
    dx, dw = expected.dx, expected.dw
    assert_close(state["dx"].transpose(0, 3, 1, 2), dx, "dx", rtol=1e-10)
    assert_close(state["dw"].transpose(3, 2, 0, 1), dw, "dw", rtol=1e-10)
    # the seed's mistake: without the zeros the map has the wrong size (5×5 for a 7×7 dxp)
    # and, cropped to its top-left 6×6 corner, the wrong numbers
    wrong = full_correlation_ignoring_stride(dz, w[:, :, 0, 0])
    assert wrong.shape == (5, 5) != state["dxp"].shape[1:3]  # 'same' pads here: dxp is its own tensor
    assert not np.allclose(np.pad(wrong, ((0, 1), (0, 1)))[:6, :6], dx[0, 0])
    # the same full correlation of the *dilated* dz is the right answer
    assert_close(
        full_correlation_ignoring_stride(dzd[2:7, 2:7], w[:, :, 0, 0]),
        state["dxp"][0, :, :, 0],
        "full correlation of the dilated dz",
    )


def test_every_event_does_the_arithmetic_it_names():
    """Gather: dxp cell = Σ dz_dilated box · w_rot box (from the header); dW cell =
    Σ xp box · dz box; dilate and rotate copy what they say."""
    config = every_geometry_config("transposed", seed=32)
    doc = build_trace(config)
    for e in doc["events"]:
        phase, reads, (wr,) = e["phase"], e["reads"], e["writes"]
        if phase in ("dx", "dw"):
            a, b = (read(doc, r) for r in reads)
            expected = a.ravel() @ b.ravel()  # both boxes flatten in (f or n, row, column) order
            assert wr["delta"][0] == pytest.approx(expected, rel=1e-12, abs=1e-12), e["text"]
        elif phase == "dilate dz":
            assert np.array_equal(wr["delta"], read(doc, reads[0]).ravel())
        elif phase == "rotate w":
            assert np.array_equal(np.reshape(wr["delta"], (1, 2, 2, 3)), read(doc, reads[0])[:, :, ::-1, ::-1])
    # the dx gather reads the filters of the channel's group only, taps dilation apart
    for e in events(doc, "dx"):
        c, g = e["loop"]["c"], e["loop"]["c"] // 2
        dzd, w_rot = e["reads"]
        assert dzd["start"][1] == w_rot["start"][0] == 2 * g and dzd["stop"][1] == w_rot["stop"][0] == 2 * g + 2
        assert w_rot["start"][1] == c - 2 * g and dzd["step"] == [1, 1, 1, 2]
    # dW reads the rows of xp stride apart, the columns stride apart (tap dilation apart)
    e = events(doc, "dw")[5]  # f 0, c 0, k 1, l 2
    assert e["loop"] == {"f": 0, "c": 0, "k": 1, "l": 2}
    assert e["reads"][0]["start"] == [0, 0, 1, 4] and e["reads"][0]["step"] == [1, 1, 2, 1]


def test_floor_truncated_cells_have_events_that_receive_nothing():
    # H = 6, extent 3, stride 2, no padding: windows start at rows 0 and 2; row 5 is never read
    config = make_config((1, 1, 6, 6), (1, 1, 3, 3), stride=2, view="transposed", seed=33)
    doc = build_trace(config)
    gathers = events(doc, "dx")
    assert len(gathers) == 36  # every cell of dxp has its event
    edge = [e for e in gathers if e["loop"]["y"] == 5 or e["loop"]["x"] == 5]
    assert len(edge) == 11
    for e in edge:
        assert e["writes"][0]["delta"] == [0.0] and "floor truncation" in e["text"]
        assert np.all(read(doc, e["reads"][0]) == 0)
    assert np.all(replay(doc)["dx"][0, 0, 5, :] == 0)  # no padding: the gathers write dx itself
    inner = [e for e in gathers if e["loop"]["y"] < 5 and e["loop"]["x"] < 5]
    assert all("floor truncation" not in e["text"] for e in inner)
    # dz_dilated: 2 rows above, dz rows 2 apart, then 2 + 1 (the unreached row) below
    assert tensor(doc, "dz_dilated").shape == (1, 1, 8, 8)
    assert "plus 1 row(s) and 1 column(s) no window reaches" in events(doc, "dilate dz")[0]["text"]


def test_phases_counts_and_settings_that_do_not_apply():
    config = make_config(
        (2, 3, 5, 4), (2, 3, 2, 2), padding=[0, 1, 1, 0], view="transposed", seed=34, activation="relu"
    )
    doc = build_trace(config)
    got = [(p["name"], p["stop"] - p["start"]) for p in doc["phases"]]
    assert got == [
        ("pad", 1),
        ("forward", 2 * 2 * 5 * 4),
        ("activation", 2 * 2 * 5),
        ("activation grad", 2 * 2 * 5),
        ("db", 2),
        ("dw", 2 * 3 * 2 * 2),
        ("dilate dz", 2 * 2 * 5),
        ("rotate w", 2),
        ("dx", 2 * 3 * 6 * 5),
        ("crop", 1),
    ]
    assert count_events(config) == sum(n for _, n in got)
    assert build_trace(dict(config, backward="separate"))["events"] == doc["events"]
    assert "dz_dilated" not in build_trace(dict(config, phases="forward"))["tensors"]
    with pytest.raises(TraceConfigError) as err:
        build_trace(dict(config, granularity="mac"))
    assert err.value.field == "granularity" and "'window'" in str(err.value) and "transposed" in str(err.value)


def test_nhwc_axes_of_the_new_tensors():
    config = make_config((1, 2, 4, 4), (3, 2, 2, 2), stride=2, view="transposed", seed=35)
    a, b = build_trace(config), build_trace(nhwc_config(config))
    assert b["tensors"]["dz_dilated"]["axes"] == ["n", "h", "w", "f"]
    assert b["tensors"]["w_rot"]["axes"] == ["kh", "kw", "c", "f"]
    assert np.array_equal(tensor(b, "dz_dilated"), tensor(a, "dz_dilated").transpose(NCHW_TO_NHWC))
    assert np.array_equal(tensor(b, "w_rot"), tensor(a, "w_rot").transpose(OIHW_TO_HWIO))


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    conv_cases(max_n=2, max_cf=3, max_hw=6, max_k=3, max_stride=3, max_dilation=2),
    st.sampled_from(sorted(TORCH_ACTIVATIONS)),
    st.booleans(),
)
def test_replayed_transposed_trace_matches_core_and_torch(case, activation, nhwc):
    check_replay_matches_torch(case, activation, nhwc, view="transposed")
