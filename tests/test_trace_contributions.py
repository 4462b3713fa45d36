"""contributions(doc, tensor, index): a cell's writes, in order, sum to its value, and
there are as many as the geometry says reach it (counted here from the spec, not from
the trace)."""

from __future__ import annotations

import json
import math

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import TRACE_MODES, conv_cases, examples
from trace_checks import case_config

from convcore.layout import NCHW_TO_NHWC, OIHW_TO_HWIO
from convcore.trace import build_trace, contributions


def _taps(spec, y: int, x: int) -> int:
    """(i, j, k, l) with output (i, j) reaching padded cell (y, x) through tap (k, l)."""
    (ho, wo), (sh, sw), (dh, dw) = spec.out_hw, spec.stride, spec.dilation
    rows = sum(1 for i in range(ho) for k in range(spec.KH) if i * sh + k * dh == y)
    cols = sum(1 for j in range(wo) for l in range(spec.KW) if j * sw + l * dw == x)
    return rows * cols


def expected_count(mode: tuple[str, str, str], spec, tensor: str, cell: tuple[int, ...]) -> int:
    """How many events write the cell (internal order), from the geometry alone."""
    view, granularity, backward = mode
    positions = spec.N * math.prod(spec.out_hw)  # windows of one filter
    if tensor == "z":
        return spec.macs_per_output if granularity == "mac" else 1
    if view != "direct":  # im2col and transposed write dW and db one cell at a time
        if tensor in ("dw", "db"):
            return 1
    elif tensor == "dw" or (tensor == "db" and (backward == "fused" or granularity == "mac")):
        return positions
    elif tensor == "db":
        return 1  # the separate db phase: one sum per filter
    n, c, h, w = cell  # dx, through the crop to dxp
    top, _, left, _ = spec.padding
    taps = _taps(spec, h + top, w + left)
    if view == "transposed":
        return 1  # one gather per cell of dxp
    if view == "im2col":
        return taps  # col2im adds each column's whole window, every channel
    return taps * spec.filters_per_group  # every filter of c's group sends dz back


def _external(tensor: str, cell: tuple[int, ...], nhwc: bool) -> tuple[int, ...]:
    if not nhwc or tensor == "db":
        return cell
    perm = OIHW_TO_HWIO if tensor == "dw" else NCHW_TO_NHWC
    return tuple(cell[p] for p in perm)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    conv_cases(max_n=2, max_cf=3, max_hw=6, max_k=3, max_stride=3, max_dilation=2),
    st.sampled_from(TRACE_MODES),
    st.booleans(),
    st.data(),
)
def test_contributions_sum_to_the_cell_and_count_what_reaches_it(case, mode, nhwc, data):
    view, granularity, backward = mode
    doc = build_trace(case_config(case, nhwc=nhwc, view=view, granularity=granularity, backward=backward))
    if data.draw(st.booleans()):  # a document decoded from JSON works the same
        doc = json.loads(orjson.dumps(doc))
    spec = case.spec
    shapes = {"z": spec.out_shape, "dw": spec.w_shape, "dx": spec.x_shape}
    if case.bias:
        shapes["db"] = (spec.F,)
    for tensor, shape in shapes.items():
        cell = tuple(data.draw(st.integers(0, s - 1)) for s in shape)
        index = _external(tensor, cell, nhwc)
        found = contributions(doc, tensor, index)
        meta = doc["tensors"][doc["aliases"].get(tensor, tensor)]  # z is out with the identity
        value = meta["data"][int(np.ravel_multi_index(index, meta["shape"]))]
        total = 0.0
        for item in found:
            total += item["delta"]
            assert item["value"] == total  # the running sum, as replay makes it
        assert total == pytest.approx(value, rel=1e-12, abs=1e-12), (tensor, index)
        assert len(found) == expected_count(mode, spec, tensor, cell), (tensor, index)
        assert [item["event"] for item in found] == sorted(item["event"] for item in found)
        for item in found:
            factors = item.get("factors")
            if factors:
                bias = [f["value"] for f in factors if f["tensor"] == "b"]
                product = math.prod(f["value"] for f in factors if f["tensor"] != "b")
                assert product + sum(bias) == item["delta"]


def test_a_dx_cell_lists_each_window_as_dz_times_w():
    # CS231n-like: 1 image, 3 channels, 2 filters, 3×3, stride 1, padding 1
    rng = np.random.default_rng(0)
    x, w = rng.integers(-2, 3, (1, 3, 4, 4)).astype(float), rng.integers(-1, 2, (2, 3, 3, 3)).astype(float)
    dout = rng.integers(-2, 3, (1, 2, 4, 4)).astype(float)
    doc = build_trace({"x": x.tolist(), "w": w.tolist(), "dout": dout.tolist(), "padding": 1})
    found = contributions(doc, "dx", (0, 1, 2, 3))
    # dxp[0,1,3,4] is reached by output rows 1..3 (kernel rows 2..0) and columns 2..3
    # (the last output column is 3): 3 × 2 windows per filter, 2 filters
    assert len(found) == 12
    assert {item["phase"] for item in found} == {"backward"}
    for item in found:
        (dz, dz_at), (wv, w_at) = ((f["value"], f["index"]) for f in item["factors"])
        assert [f["tensor"] for f in item["factors"]] == ["dout", "w"]  # the identity: dz is dout
        n, f, i, j = dz_at
        assert w_at == [f, 1, 3 - i, 4 - j]  # the tap of w that lands on dxp[0,1,3,4]
        assert item["delta"] == dz * wv
    assert sum(item["delta"] for item in found) == doc["tensors"]["dx"]["data"][1 * 16 + 2 * 4 + 3]


def test_inputs_have_no_contributions_and_bad_questions_are_named():
    doc = build_trace({})
    assert contributions(doc, "x", (0, 0, 1, 1)) == []
    with pytest.raises(ValueError, match="tensor 'q' is not in the trace"):
        contributions(doc, "q", (0,))
    with pytest.raises(ValueError, match=r"index \(0, 0, 9, 0\) is outside dx, whose shape is \(1, 1, 5, 5\)"):
        contributions(doc, "dx", (0, 0, 9, 0))
    with pytest.raises(ValueError, match="4 integers"):
        contributions(doc, "z", ("a", 0, 0, 0))
    with pytest.raises(ValueError, match="trace document"):
        contributions({"header": 1}, "z", (0, 0, 0, 0))


def test_an_aliased_name_reads_the_tensor_that_stands_for_it():
    # no padding, identity: xp is x, dxp is dx, z is out, dz is dout (the header's aliases)
    doc = build_trace(
        {
            "x": {"fill": "randint", "shape": [1, 2, 4, 4], "low": -2, "high": 2, "seed": 3},
            "w": {"fill": "randint", "shape": [2, 2, 2, 2], "low": -1, "high": 1, "seed": 4},
            "dout": {"fill": "randint", "low": -2, "high": 2, "seed": 5},
        }
    )
    assert doc["aliases"] == {"xp": "x", "dxp": "dx", "z": "out", "dz": "dout"}
    assert contributions(doc, "dxp", (0, 1, 2, 1)) == contributions(doc, "dx", (0, 1, 2, 1))
    assert len(contributions(doc, "dx", (0, 1, 2, 1))) == 2 * 4  # 2 filters × the 4 windows that cover it
    assert contributions(doc, "z", (0, 1, 1, 2)) == contributions(doc, "out", (0, 1, 1, 2))
    assert contributions(doc, "xp", (0, 0, 0, 0)) == contributions(doc, "dz", (0, 0, 0, 0)) == []
