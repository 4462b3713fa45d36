"""The trace engine's building blocks: bulk running sums and number text."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import examples

from convcore.fill import format_number
from convcore.trace import build_trace
from convcore.trace.events import running_rows, running_sums
from convcore.trace.format import box_text, cell, cell_names, factor, number, number_list
from convcore.trace.loops import ordered, ordered_chunks

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.integers(1, 40).flatmap(
        lambda size: st.tuples(
            hnp.arrays(np.float64, size, elements=finite.filter(lambda v: abs(v) < 1e300)),
            st.lists(st.tuples(st.integers(0, size - 1), finite.filter(lambda v: abs(v) < 1e300)), max_size=120),
        )
    )
)
def test_running_sums_are_bit_identical_to_one_add_at_a_time(case):
    state, adds = case
    expected_state = state.copy()
    expected = []
    for index, delta in adds:
        expected_state[index] = expected_state[index] + delta
        expected.append(expected_state[index])
    targets = np.array([a for a, _ in adds], dtype=np.int64)
    deltas = np.array([d for _, d in adds], dtype=np.float64)
    values = running_sums(state, targets, deltas)
    assert values.tobytes() == np.array(expected, dtype=np.float64).tobytes()
    assert state.tobytes() == expected_state.tobytes()


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(
        st.one_of(
            finite, st.integers(-(10**16), 10**16).map(float), st.sampled_from([0.0, -0.0, 1e15, -1e6, 999999.0])
        ),
        max_size=50,
    )
)
def test_number_list_equals_the_one_number_format(values):
    assert number_list(values) == [format_number(v) for v in values] == [number(v) for v in values]


def test_number_and_factor_text():
    assert [number(v) for v in (4.0, -2.0, 0.5, -0.0, 1e-05, 123456789.0)] == [
        "4",
        "−2",
        "0.5",
        "0",
        "1e−05",
        "123456789",
    ]
    assert [factor(v) for v in (3.0, -1.0, -0.25)] == ["3", "(−1)", "(−0.25)"]


def test_box_text_slices_and_trailing_whole_axes():
    shape = (2, 3, 8, 8)
    assert box_text("xp", (0, 0, 0, 4), (1, 3, 3, 7), (1, 1, 1, 1), shape) == "xp[0,0:3,0:3,4:7]"
    assert box_text("xp", (0, 0, 0, 4), (1, 3, 5, 9), (1, 1, 2, 2), shape) == "xp[0,0:3,0:5:2,4:9:2]"
    assert box_text("w", (1, 0, 0, 0), (2, 3, 8, 8), (1, 1, 1, 1), shape) == "w[1]"
    assert box_text("w", (0, 0, 0, 0), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1)) == "w[0,0,0,0]"
    assert box_text("dz", (0, 0, 0, 0), (2, 3, 8, 8), (1, 1, 1, 1), shape) == "dz"
    assert box_text("dz", (0, 1, 0, 0), (2, 2, 8, 8), (1, 1, 1, 1), shape) == "dz[0:2,1]"


def test_loop_orders_in_chunks_match_nested_loops():
    sizes = {"n": 2, "f": 3, "i": 2, "j": 4}
    nested = [(n, f, i, j) for j in range(4) for n in range(2) for i in range(2) for f in range(3)]
    assert list(ordered("jnif", "nfij", sizes)) == nested
    chunks = list(ordered_chunks("jnif", "nfij", sizes, chunk=5))
    assert [len(c[0]) for c in chunks] == [5] * 9 + [3]
    flat = [t for c in chunks for t in zip(*(a.tolist() for a in c))]
    assert flat == nested


@settings(max_examples=examples(100), deadline=None)
@given(
    st.integers(1, 5).flatmap(
        lambda rows: st.tuples(
            hnp.arrays(np.float64, (rows, 3), elements=finite.filter(lambda v: abs(v) < 1e300)),
            st.lists(
                st.tuples(
                    st.integers(0, rows - 1), st.lists(finite.filter(lambda v: abs(v) < 1e300), min_size=3, max_size=3)
                ),
                max_size=40,
            ),
        )
    )
)
def test_running_rows_are_bit_identical_to_one_row_add_at_a_time(case):
    state, adds = case
    expected_state = state.copy()
    expected = []
    for row, delta in adds:
        expected_state[row] = expected_state[row] + np.array(delta)
        expected.append(expected_state[row].copy())
    rows = np.array([r for r, _ in adds], dtype=np.int64)
    deltas = np.array([d for _, d in adds], dtype=np.float64).reshape(len(adds), 3)
    values = running_rows(state, rows, deltas)
    assert values.tobytes() == np.array(expected, dtype=np.float64).reshape(len(adds), 3).tobytes()
    assert state.tobytes() == expected_state.tobytes()


def test_cell_names_match_cell():
    index = np.indices((2, 3, 4)).reshape(3, -1).T
    assert cell_names("dz", index) == [cell("dz", row) for row in index.tolist()]


@pytest.mark.parametrize(
    "settings_",
    [
        {"x": (1, 2, 4, 4), "w": (2, 2, 4, 4)},  # windows cover h and w whole
        {"x": (1, 2, 4, 4), "w": (2, 2, 4, 4), "layout": "NHWC"},
        {"x": (2, 4, 7, 6), "w": (4, 2, 3, 2), "groups": 2, "dilation": [2, 1], "stride": [1, 2], "padding": 1},
        {"x": (1, 3, 5, 5), "w": (2, 3, 1, 3), "layout": "NHWC"},  # KH = 1: one row per window
        {"x": (1, 1, 5, 5), "w": (1, 1, 1, 1)},  # single-cell windows
        {"x": (1, 3, 5, 5), "w": (3, 1, 5, 2), "groups": 3, "padding": [0, 0, 1, 1]},
    ],
)
def test_window_texts_are_box_text_of_their_boxes(settings_):
    """The direct view formats its window texts in bulk; each must be what box_text
    prints for the window's Box."""
    settings_ = dict(settings_)
    x_shape, w_shape = settings_.pop("x"), settings_.pop("w")
    nhwc = settings_.get("layout") == "NHWC"
    x = np.arange(np.prod(x_shape), dtype=float).reshape(x_shape)
    w = np.ones(w_shape)
    config = dict(
        settings_,
        x=(x.transpose(0, 2, 3, 1) if nhwc else x).tolist(),
        w=(w.transpose(2, 3, 1, 0) if nhwc else w).tolist(),
        backward="separate",
    )
    doc = build_trace(config)
    xp = doc["aliases"].get("xp", "xp")  # x itself without padding
    xp_shape = doc["tensors"][xp]["shape"]
    checked = 0
    for e in doc["events"]:
        if e["phase"] in ("dw", "dx"):
            box = e["reads"][1] if e["phase"] == "dw" else e["writes"][0]
            text = box_text(xp, box["start"], box["stop"], box["step"], xp_shape)
            said = e["text"].split(" += ")[1 if e["phase"] == "dw" else 0].split(": ")[-1]
            assert said.endswith(text), (said, text)
            checked += 1
    assert checked == 2 * len([e for e in doc["events"] if e["phase"] == "dw"]) > 0


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.integers(1, 4), min_size=4, max_size=4), st.integers(0, 3), st.data())
def test_row_slices_are_box_slices_of_each_row(shape, axis, data):
    from convcore.trace.format import box_slices, row_slices

    start = [data.draw(st.integers(0, s - 1)) for s in shape]
    stop = [data.draw(st.integers(a + 1, s)) for a, s in zip(start, shape)]
    step = [1, 1, 1, 1]
    starts, stops = [], []
    for r in range(shape[axis]):  # every row of the tensor on that axis
        starts.append(start[:axis] + [r] + start[axis + 1 :])
        stops.append(stop[:axis] + [r + 1] + stop[axis + 1 :])
    assert row_slices(starts, stops, step, shape, axis) == [
        box_slices(a, b, step, shape) for a, b in zip(starts, stops)
    ]
