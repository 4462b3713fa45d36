"""The header's drawing facts (convcore/trace/drawing.py) against the trace itself: the
cells marked "never read" are exactly those no forward window reads, their gradient
cells ("never reached") exactly those no backward window writes, padding is exactly
where the padded input does not hold x, inserted zeros are exactly the cells of
dz_dilated that hold no dz value and that no event writes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from strategies import conv_cases, examples

from convcore.trace import build_trace


def _grid(marks: list[str]) -> np.ndarray:
    return np.array([list(r) for r in marks])


def _marks(doc: dict, name: str) -> np.ndarray:
    """The marks of ``name`` (through the header's aliases: xp is x without padding), all
    "." when the header gives none."""
    t = doc["tensors"][doc["aliases"].get(name, name)]
    return _grid(t["marks"]) if "marks" in t else np.full(t["shape"][2:], ".")


def _config(case, view: str) -> dict:
    x, w, b, dout = case.arrays()
    return {
        "x": x.tolist(),
        "w": w.tolist(),
        "b": None if b is None else b.tolist(),
        "dout": dout.tolist(),
        "view": view,
        **case.kwargs(),
    }


def _read_cells(doc: dict, tensor: str, phase: str) -> np.ndarray:
    """(rows, cols) bool: the grid cells of ``tensor`` some ``phase`` event reads."""
    shape = doc["tensors"][tensor]["shape"]
    seen = np.zeros(shape, dtype=bool)
    for ev in doc["events"]:
        if ev["phase"] != phase:
            continue
        for r in ev["reads"]:
            if r["tensor"] == tensor:
                seen[tuple(slice(a, b, s) for a, b, s in zip(r["start"], r["stop"], r["step"]))] = True
    return seen.any(axis=(0, 1))


@settings(max_examples=examples(25), deadline=None)
@given(conv_cases(max_n=2, max_cf=2, max_hw=7, max_k=3))
def test_marks_of_the_padded_input_say_what_the_trace_does(case):
    doc = build_trace(_config(case, "transposed"))
    t = doc["tensors"]
    xp_name, dxp_name = doc["aliases"].get("xp", "xp"), doc["aliases"].get("dxp", "dxp")
    xp_marks, dxp_marks = _marks(doc, "xp"), _marks(doc, "dxp")
    assert xp_marks.shape == tuple(t[xp_name]["shape"][2:])
    xp = np.asarray(t[xp_name]["data"]).reshape(t[xp_name]["shape"])
    x = np.asarray(t["x"]["data"]).reshape(t["x"]["shape"])
    # padding: exactly the cells that are not x's (x is random normal, never 0)
    inner = xp_marks != "p"
    rows, cols = np.nonzero(inner.any(axis=1))[0], np.nonzero(inner.any(axis=0))[0]
    np.testing.assert_array_equal(xp[:, :, rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1], x)
    assert inner.sum() == x.shape[2] * x.shape[3]
    assert np.all(xp[:, :, ~inner] == 0)
    # never read: exactly the non-padding cells no forward window reads
    read = _read_cells(doc, xp_name, "forward")
    np.testing.assert_array_equal(xp_marks == "u", ~read & inner)
    # dxp: the same cells, padding marked as receiving gradient; unread cells are never
    # reached by a window ("n") and get no gradient
    np.testing.assert_array_equal(dxp_marks == "g", ~inner)
    np.testing.assert_array_equal(dxp_marks == "n", xp_marks == "u")
    assert not (dxp_marks == "u").any() and not (xp_marks == "n").any()
    dxp = np.asarray(t[dxp_name]["data"]).reshape(t[dxp_name]["shape"])
    assert np.all(dxp[:, :, dxp_marks == "n"] == 0)
    # x and dx carry the interior's marks when some cell is never read (dx keeps the n)
    interior = (slice(rows[0], rows[-1] + 1), slice(cols[0], cols[-1] + 1))
    if (xp_marks == "u").any():
        np.testing.assert_array_equal(_grid(t["x"]["marks"]), xp_marks[interior])
        np.testing.assert_array_equal(_grid(t["dx"]["marks"]), dxp_marks[interior])
    else:
        assert "marks" not in t["x"] and "marks" not in t["dx"]


@settings(max_examples=examples(25), deadline=None)
@given(conv_cases(max_n=2, max_cf=2, max_hw=7, max_k=3))
def test_cells_marked_never_reached_are_the_cells_no_backward_window_writes(case):
    """Direct view: the n cells of dxp (of dx without padding) are exactly the cells of
    the padded input's interior no backward window writes, from the first step on."""
    doc = build_trace(_config(case, "direct"))
    dxp_name = doc["aliases"].get("dxp", "dxp")
    written = np.zeros(doc["tensors"][dxp_name]["shape"], dtype=bool)
    for ev in doc["events"]:
        for w in ev["writes"]:
            if w["tensor"] == dxp_name and ev["phase"] != "crop":
                written[tuple(slice(a, b, s) for a, b, s in zip(w["start"], w["stop"], w["step"]))] = True
    marks = _marks(doc, "dxp")
    np.testing.assert_array_equal(marks == "n", ~written.any(axis=(0, 1)) & (marks != "g"))


@settings(max_examples=examples(25), deadline=None)
@given(conv_cases(max_n=2, max_cf=2, max_hw=7, max_k=3))
def test_inserted_zeros_are_the_cells_of_dz_dilated_without_a_dz_value(case):
    doc = build_trace(_config(case, "transposed"))
    t = doc["tensors"]["dz_dilated"]
    marks = _grid(t["marks"])
    data = np.asarray(t["data"]).reshape(t["shape"])
    dz_name = doc["aliases"].get("dz", "dz")  # dout with the identity
    dz = np.asarray(doc["tensors"][dz_name]["data"]).reshape(doc["tensors"][dz_name]["shape"])
    # the dz values, in order, sit exactly on the ordinary cells
    np.testing.assert_array_equal(data[:, :, marks == "."], dz.reshape(dz.shape[0], dz.shape[1], -1))
    assert np.all(data[:, :, marks == "z"] == 0)
    written = np.zeros(t["shape"], dtype=bool)
    for ev in doc["events"]:
        for w in ev["writes"]:
            if w["tensor"] == "dz_dilated":
                written[tuple(slice(a, b, s) for a, b, s in zip(w["start"], w["stop"], w["step"]))] = True
    assert not written[:, :, marks == "z"].any()


def test_every_tensor_has_a_title_a_group_and_a_distinct_order():
    for view in ("direct", "im2col", "transposed"):
        doc = build_trace({"b": [0.5], "view": view, "padding": 1, "activation": "relu"})
        tensors = doc["tensors"]
        assert all(t["title"] and t["group"] in ("inputs", "forward", "backward") for t in tensors.values())
        orders = [t["order"] for t in tensors.values()]
        assert len(set(orders)) == len(orders)
        assert tensors["x"]["order"] < tensors["z"]["order"] < tensors["dz"]["order"] < tensors["dx"]["order"]


def test_slice_axes_put_one_filters_channels_together_in_both_layouts():
    """Drawn slice by slice in ``slice_axes`` order (else axis order), the slices of one
    filter of w and dw are consecutive in NHWC as in NCHW, and so are one image's
    channels of x: a step's filter is one run of slices on the page."""
    import itertools

    for layout, view in itertools.product(("NCHW", "NHWC"), ("direct", "im2col", "transposed")):
        x = np.arange(2 * 3 * 4 * 4, dtype=float).reshape(2, 3, 4, 4) % 5
        w = np.arange(2 * 3 * 3 * 3, dtype=float).reshape(2, 3, 3, 3) % 3 - 1
        if layout == "NHWC":
            x, w = x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0)
        doc = build_trace({"x": x.tolist(), "w": w.tolist(), "layout": layout, "view": view, "padding": 1})
        for name, t in doc["tensors"].items():
            free = [a for a in t["axes"] if a not in t["grid"]]
            order = t.get("slice_axes", free)
            assert sorted(order) == sorted(free), (layout, name, order)
            is_filter = "kh" in t["axes"]  # w, dw, the transposed view's w_rot
            assert ("slice_axes" in t) == (layout == "NHWC" and is_filter), (layout, view, name, t.get("slice_axes"))
            if len(order) == 2:
                # the outer slice axis is the filter (or the image), the inner one the channel
                assert order == (["f", "c"] if is_filter else ["n", "c"] if "c" in order else ["n", "f"]), (
                    layout,
                    name,
                    order,
                )
